"""Time and memory of the baselines' long jobs, estimated from their shape before they start:
the Mallows model (its summaries grow with the square, their time with the cube, of the
algorithms) and the hierarchical test of every pair (its fits and results grow with the pairs).

The constants were measured on a 2-core machine (the benchmarks'); the guard refuses what
cannot fit in memory (:func:`bbt_widget.core.sizing.check_job_size`) and warns beforehand of
what will run for minutes, naming the options that shrink it.
"""

from __future__ import annotations

import os

from ..core.sizing import check_job_size

__all__ = [
    "check_hierarchical_pairs_size",
    "check_mallows_size",
    "hierarchical_pairs_estimate",
    "mallows_estimate",
]

#: Memory of the process besides the job (Python, numpy, pandas, ArviZ imported).
_BASE = 200 * 2**20
#: Mallows: bytes per kept draw and squared algorithm count at the peak, the summaries'
#: (draw, algorithm, place) arrays and their temporaries (measured: 33-35 bytes at 100-200
#: algorithms, 43 at 50 where the base weighs more).
_MALLOWS_BYTES = 34
#: Mallows: seconds of the summaries per kept draw and cubed algorithm count (the exact place
#: probabilities insert each algorithm in turn: measured 1.6-2.7e-8 at 50-200 algorithms).
_MALLOWS_SUMMARY_SECONDS = 2e-8
#: Mallows: seconds of a sampler iteration (all chains at once), fixed part and per algorithm
#: (measured: 75 us at 50-100 algorithms, 100-175 us at 200).
_MALLOWS_STEP_SECONDS = (6e-5, 4e-7)
#: Hierarchical pairs: bytes a pair keeps per kept draw (mu0, sigma0, nu and the shrinkage
#: summaries: measured 262 KB a pair at 4 x 1000 draws) and per data set (its fold
#: differences and result rows: measured 0.64 KB).
_PAIR_DRAW_BYTES = 66
_PAIR_DATASET_BYTES = 660
#: Hierarchical pairs: CPU seconds of one pair's quadrature fit at 4 x 1000 draws (the
#: shipped 16 x 132 results: 120 pairs in 223 s on two cores).
_PAIR_SECONDS = 3.7
_PAIR_DRAWS = 4000


def mallows_estimate(
    n_alg: int, chains: int, burn_in: int, draws: int, thin: int
) -> tuple[int, float]:
    """(peak bytes, seconds) of ``mallows`` on ``n_alg`` algorithms.

    ``burn_in`` and ``draws`` per chain, ``thin`` iterations per kept draw, as the model's
    arguments.
    """
    kept = chains * draws
    need = _BASE + _MALLOWS_BYTES * kept * n_alg**2
    fixed, per_alg = _MALLOWS_STEP_SECONDS
    sampler = (burn_in + draws) * thin * (fixed + per_alg * n_alg)
    return int(need), sampler + _MALLOWS_SUMMARY_SECONDS * kept * n_alg**3


def check_mallows_size(
    n_alg: int,
    chains: int,
    burn_in: int,
    draws: int,
    thin: int,
    *,
    available: int | None = None,
    stacklevel: int = 3,
) -> None:
    """Refuse a Mallows fit whose summaries would not fit in memory; warn before one that
    will take minutes (:class:`~bbt_widget.core.sizing.LongRunWarning`). Arguments as for
    :func:`mallows_estimate`; ``available`` bytes (default: the machine's); ``stacklevel`` as
    for ``warnings.warn`` called where this is called.

    Raises
    ------
    bbt_widget.core.sizing.FitTooLargeError
        The estimate exceeds 90% of the available memory; the message names the options.
    """
    need, seconds = mallows_estimate(n_alg, chains, burn_in, draws, thin)
    check_job_size(
        need,
        seconds,
        f"the Mallows model of {n_alg} algorithms ({chains} chains x {draws} draws)",
        "its memory grows with draws x algorithms^2 and its time with draws x "
        "algorithms^3: use fewer draws (iter_sampling) or chains, or rank fewer algorithms "
        "(pass only their results, e.g. the strongest ones)",
        available=available,
        stacklevel=stacklevel + 1,
    )


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
