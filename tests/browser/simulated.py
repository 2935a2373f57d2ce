"""Simulated results for the widget at many algorithms, in one place: the browser scale test
and ``docs/screenshots/take_screenshots.py`` import it (from the notebook's kernel too)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def simulated_results(
    n_algorithms: int = 50, n_datasets: int = 30, n_folds: int = 3, seed: int = 3
) -> pd.DataFrame:
    """Scores of ``n_algorithms`` simulated algorithms: skill plus noise.

    Each algorithm's skill is drawn from N(0, 0.05) (sorted, so ``alg00`` is the best on
    average); each (data set, algorithm, fold) scores 0.7 + skill + N(0, 0.03) noise, so
    neighbours in the ranking are hard to tell apart and far ones easy.

    Parameters
    ----------
    n_algorithms, n_datasets, n_folds
        The shape: algorithms ``alg00``..., data sets ``d0``..., folds 0...
    seed
        Seed of numpy's default generator.

    Returns
    -------
    pandas.DataFrame
        Tidy rows: ``dataset``, ``algorithm``, ``fold``, ``score``.
    """
    rng = np.random.default_rng(seed)
    skill = np.sort(rng.normal(0, 0.05, n_algorithms))[::-1]
    rows = [
        (f"d{d}", f"alg{a:02d}", f, 0.7 + skill[a] + rng.normal(0, 0.03))
        for d in range(n_datasets)
        for a in range(n_algorithms)
        for f in range(n_folds)
    ]
    return pd.DataFrame(rows, columns=["dataset", "algorithm", "fold", "score"])
