"""Time and memory of the hierarchical test of every pair, estimated from its shape before
it starts (its fits and results grow with the pairs).

The constants were measured on a 2-core machine (the benchmarks'); the guard refuses what
cannot fit in memory (:func:`bbt_widget.core.sizing.check_job_size`) and warns beforehand of
what will run for minutes, naming the options that shrink it.
"""

from __future__ import annotations

import os

from ..core.sizing import check_job_size

__all__ = ["check_hierarchical_pairs_size", "hierarchical_pairs_estimate"]

#: Memory of the process besides the job (Python, numpy, pandas, ArviZ imported).
_BASE = 200 * 2**20
#: Hierarchical pairs: bytes a pair keeps per kept draw (mu0, sigma0, nu and the shrinkage
#: summaries: measured 262 KB a pair at 4 x 1000 draws) and per data set (its fold
#: differences and result rows: measured 0.64 KB).
_PAIR_DRAW_BYTES = 66
_PAIR_DATASET_BYTES = 660
#: Hierarchical pairs: CPU seconds of one pair's quadrature fit at 4 x 1000 draws (the
#: shipped 16 x 132 results: 120 pairs in 223 s on two cores).
_PAIR_SECONDS = 3.7
_PAIR_DRAWS = 4000


def hierarchical_pairs_estimate(
    n_pairs: int, n_datasets: int, chains: int, iter_sampling: int, workers: int
) -> tuple[int, float]:
    """(peak bytes, seconds) of ``hierarchical_pairs`` with the quadrature sampler:
    ``n_pairs`` fits on ``workers`` cores, each keeping its draws and per-data-set rows."""
    draws = chains * iter_sampling
    per_pair = _PAIR_DRAW_BYTES * draws + _PAIR_DATASET_BYTES * n_datasets
    seconds = _PAIR_SECONDS * (draws / _PAIR_DRAWS) * n_pairs / max(workers, 1)
    return int(_BASE + per_pair * n_pairs), seconds


def check_hierarchical_pairs_size(
    n_alg: int,
    n_datasets: int,
    chains: int,
    iter_sampling: int,
    *,
    n_jobs: int | None = None,
    timed: bool = True,
    available: int | None = None,
    stacklevel: int = 3,
) -> None:
    """Refuse the hierarchical test of every pair of ``n_alg`` algorithms when its results
    would not fit in memory; warn before one that will take minutes.

    Parameters
    ----------
    n_alg, n_datasets
        Algorithms compared (every pair is fitted) and data sets.
    chains, iter_sampling
        Each fit's kept draws.
    n_jobs
        Fits at once (default: the cores).
    timed
        Whether the time is known (on the local cores; not on a Dask cluster).
    available
        Bytes available (default: the machine's).
    stacklevel
        As for ``warnings.warn`` called where this is called.

    Raises
    ------
    bbt_widget.core.sizing.FitTooLargeError
        The estimate exceeds 90% of the available memory; the message names the options.
    """
    n_pairs = n_alg * (n_alg - 1) // 2
    workers = n_jobs or os.cpu_count() or 1
    need, seconds = hierarchical_pairs_estimate(n_pairs, n_datasets, chains, iter_sampling, workers)
    check_job_size(
        need,
        seconds if timed else None,
        f"the hierarchical test of every pair of {n_alg} algorithms ({n_pairs} pairs, "
        f"{n_datasets} data sets, {chains} chains x {iter_sampling} draws"
        + (f", {workers} at once)" if timed else ")"),
        "it grows with the pairs: pass algorithms= (a subset, e.g. the strongest ones or a "
        "control and its rivals) or use fewer draws (iter_sampling); a Dask cluster "
        "(executor=) shortens the time, not the memory",
        available=available,
        stacklevel=stacklevel + 1,
    )
