"""Full refits of the grown win tables of :meth:`BBTResult.more_data`: the reference its
normal approximation is checked against (tests, the calibration study), one numpy-engine
fit per simulated future through the batch layer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..core import posterior
from ..core.more_data import Growth
from ..core.options import DEFAULT_CHAINS, DEFAULT_ITER_SAMPLING, TiePolicy
from ..core.result import BBTResult
from ..core.validation import WIN_TABLE_COLUMNS
from .batch import FitRequest, run_batch

__all__ = ["Refits", "refits"]


class Refits:
    """A :data:`~bbt_widget.core.more_data.GrownPosterior` that fits each future's grown
    counts anew (numpy engine, the fit's tie policy and prior), and summarises its draws
    with :func:`~bbt_widget.core.posterior.summarise`.

    Parameters
    ----------
    result
        The fit whose futures are refitted (its algorithms, tie policy and prior).
    chains, iter_sampling
        Each refit's sampler settings.
    seed
        Seeds the refits (``spawn_seeds(seed, futures)``, as the batch layer does).
    n_jobs
        Refits run at once (default: the number of cores).
    """

    method = "refit"

    def __init__(
        self,
        result: BBTResult,
        *,
        chains: int = DEFAULT_CHAINS // 2,
        iter_sampling: int = DEFAULT_ITER_SAMPLING,
        seed: int = 0,
        n_jobs: int | None = None,
    ) -> None:
        self.algorithms = list(result.algorithms)
        # without a policy the plain model ignores ties: as if they were dropped
        self.ties: TiePolicy = result.settings.get("ties") or "forget"
        self.hyperprior = result.settings.get("hyperprior", "lognormal")
        self.prior_scale = result.settings.get("prior_scale")
        self.chains = chains
        self.iter_sampling = iter_sampling
        self.seed = seed
        self.n_jobs = n_jobs

    def __call__(
        self, growth: Growth, pairs: Sequence[tuple[int, int]], rope: tuple[float, float]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(mean, above_50, in_rope)`` of each pair in each future, each (futures, pairs)."""
        a = self.algorithms
        names = [(a[i], a[j]) for i, j in pairs]
        requests = [
            FitRequest(
                self._table(growth, f),
                ties=self.ties,
                hyperprior=self.hyperprior,
                prior_scale=self.prior_scale,
                chains=self.chains,
                iter_sampling=self.iter_sampling,
                engine="numpy",
                meta={"pairs": names, "rope": rope},
            )
            for f in range(growth.counts.shape[0])
        ]
        outcomes = run_batch(requests, seed=self.seed, n_jobs=self.n_jobs, reduce=_pair_statistics)
        failed = [o.error for o in outcomes if not o.ok]
        if failed:
            raise RuntimeError(f"{len(failed)} refits failed, the first with: {failed[0]}")
        stacked = np.stack([o.value for o in outcomes])  # (futures, 3, pairs)
        return stacked[:, 0], stacked[:, 1], stacked[:, 2]

    def _table(self, growth: Growth, future: int) -> pd.DataFrame:
        """Future ``future``'s raw counts as a win table."""
        counts = growth.counts[future]
        table = pd.DataFrame(counts, columns=list(WIN_TABLE_COLUMNS[2:]))
        table.insert(0, "alg1", [self.algorithms[i] for i in growth.i1])
        table.insert(1, "alg2", [self.algorithms[j] for j in growth.i2])
        return table


def refits(result: BBTResult, **settings: Any) -> Refits:
    """Full refits for ``result.more_data(grown=...)`` (``settings`` as for :class:`Refits`)."""
    return Refits(result, **settings)


def _pair_statistics(result: BBTResult, request: FitRequest) -> np.ndarray:
    """``mean``, ``above_50`` and ``in_rope`` of the request's pairs, as the summary computes
    them from the draws (without its Monte Carlo screening): shape (3, pairs)."""
    index = {name: k for k, name in enumerate(result.algorithms)}
    pairs = [(index[a], index[b]) for a, b in request.meta["pairs"]]
    p = np.sort(posterior.pair_probabilities(result.beta, pairs), axis=0)
    n = len(pairs)
    table = posterior.summarise(p, [""] * n, [""] * n, [""] * n, request.meta["rope"], 0.89)
    return np.asarray(table[["mean", "above_50", "in_rope"]].to_numpy(dtype=float).T)
