"""Simulated cross-validation results from the hierarchical model (Benavoli et al. 2017, Eq. 12-13).

For tests, benchmarks and teaching: results whose true mean difference ``mu_0`` is known.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def simulate_cv_results(
    n_datasets: int = 20,
    runs: int = 10,
    folds: int = 10,
    *,
    mu0: float = 0.0,
    sigma0: float = 0.01,
    nu: float = np.inf,
    sigma: tuple[float, float] = (0.01, 0.04),
    base: float = 0.8,
    seed: int = 0,
) -> pd.DataFrame:
    """Long results of algorithms ``"a"`` and ``"b"``: columns ``dataset, run, fold,
    algorithm, score``.

    Per data set i: ``mu_i = mu0 + sigma0 * t_nu`` (normal when ``nu`` is inf), ``sigma_i ~
    unif(sigma)``, and the ``runs * folds`` differences ``b - a`` are multivariate normal
    with mean ``mu_i``, sd ``sigma_i`` and correlation ``1 / folds`` (Eq. 12). ``a`` scores
    ``base`` on every fold (only the differences matter to the tests).
    """
    rng = np.random.default_rng(seed)
    n = runs * folds
    rho = 1.0 / folds
    t = rng.standard_normal(n_datasets) if np.isinf(nu) else rng.standard_t(nu, n_datasets)
    mu = mu0 + sigma0 * t
    sd = rng.uniform(*sigma, n_datasets)
    # compound symmetry: a shared N(0, rho) term plus independent N(0, 1 - rho) noise
    shared = rng.standard_normal((n_datasets, 1)) * np.sqrt(rho)
    own = rng.standard_normal((n_datasets, n)) * np.sqrt(1 - rho)
    x = mu[:, None] + sd[:, None] * (shared + own)
    run, fold = np.divmod(np.arange(n), folds)
    frames = []
    for i in range(n_datasets):
        for alg, score in (("a", np.full(n, base)), ("b", base + x[i])):
            frames.append(
                pd.DataFrame(
                    {
                        "dataset": f"d{i:02d}",
                        "run": run,
                        "fold": fold,
                        "algorithm": alg,
                        "score": score,
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)
