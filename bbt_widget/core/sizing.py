"""Size guard: refuse, before sampling, a fit (or Monte Carlo draws, :func:`check_draws_memory`,
or another method's job, :func:`check_job_size`) whose draws cannot fit in this machine's
memory, and say beforehand how long and how large a long job will be (:class:`LongRunWarning`).

Memory grows with pairs x draws: every draw keeps the replicated counts and the log-likelihood
of every fitted pair (and the Davidson model the replicated ties), and the summaries keep
P(a > b) for every pair of algorithms. 500 algorithms at the default 4 x 1000 draws need about
16 GB, which would otherwise fail only after the sampling, or end in an out-of-memory kill.

The memory available is the smaller of the host's and the cgroup's (a container's limit): a
process over its cgroup's limit is killed even when the host has memory to spare.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

#: Bytes per stored value (draws are float64 / int64).
_VALUE = 8
#: Values per draw besides the per-algorithm and per-pair outputs: sigma, nu, 7 sampler columns.
_SCALARS = 10
#: Copies of the draws at the peak in the fitting process: the draws themselves (a Stan
#: engine's child process saves them in C order, read once into the final arrays) and the
#: transient ones the checks make, such as the PPC's int32 copy of ``win1_rep`` (the measured
#: peaks are on the documentation's performance page, "Size guards";
#: ``tests/stan/test_faults.py`` checks it). The Stan child's own peak is not counted.
_ENGINE_COPIES = 1.5
#: Memory of the process besides the draws (Python, numpy, pandas, ArviZ imported: ~190 MB).
_BASE = 200 * 2**20
#: A fit that needs more than this fraction of the available memory is refused.
_REFUSE = 0.9
#: The group model's values per (group, pair) row and kept draw at the peak: win1_rep and
#: log_lik, their copies while the draws are assembled, and each group's P(a > b) summaries
#: (set from the numpy engine's measured peak: the performance page, "Size guards").
_GROUP_ROW_VALUES = 5
#: Seconds of the numpy engine's Gibbs sweep per (group, pair) row and chain, an estimate
#: for the "long run" notice only (set from timings on the benchmarks' machine: the
#: performance page, "Size guards"); the group model has no independence kernel, so every
#: iteration is such a sweep.
_GIBBS_ROW_SECONDS = 3.8e-6
#: Seconds of the numpy engine's plain-model samplers per fitted pair and chain: a Pólya-Gamma
#: Gibbs sweep, and an independence Metropolis-Hastings step (three a kept draw). Measured on a
#: shared 2-core machine at 50 and 150 algorithms x 20 data sets: 2.3-2.5 us and 0.11-0.13 us.
_GIBBS_PAIR_SECONDS = 2.4e-6
_INDEPENDENCE_PAIR_SECONDS = 1.2e-7
#: What the abilities' Hamiltonian move adds to a Gibbs sweep per fitted pair and chain, from
#: :data:`_MOVES_FROM` algorithms on (measured at 20 and 50 algorithms: about a sixth of the
#: sweep's Pólya-Gamma cost).
_MOVES_PAIR_SECONDS = 4.0e-7
_MOVES_FROM = 10
#: Independence steps per kept draw, and the Gibbs sweeps that start the warm-up before it.
_INDEPENDENCE_THIN = 3
_GIBBS_START = 10
#: Seconds of the summary per pair of algorithms (every pair, fitted or not) and kept draw:
#: P(a > b) computed and sorted (measured 85-96 ns at 50 and 150 algorithms), its quantiles,
#: and the MCSE and conditional estimates of the pairs near a threshold.
_SUMMARY_PAIR_SECONDS = 2.0e-7
#: Jobs estimated to run longer than this many seconds say so (with their memory) beforehand.
LONG_RUN = 60.0
#: Where the process's cgroup (v2, or v1's ``memory/`` controller) is mounted.
CGROUP_ROOT = Path("/sys/fs/cgroup")
#: cgroup v1 writes "no limit" as a huge number (the page-rounded maximum of int64).
_V1_UNLIMITED = 2**62


class FitTooLargeError(ValueError):
    """The fit would need more memory than this machine has; the message says how to shrink it."""


class LongRunWarning(UserWarning):
    """A job estimated to run for minutes or more: its time and memory, said before it starts,
    and the options that shrink it. Filter it like any warning once expected."""


def estimate_fit_bytes(
    n_alg: int,
    n_pairs: int,
    model: str,
    chains: int,
    iter_sampling: int,
    *,
    n_groups: int = 0,
) -> int:
    """Peak memory (bytes) of a fit and its summaries, from pairs x draws.

    Parameters
    ----------
    n_alg
        Algorithms.
    n_pairs
        Fitted pairs (win-table rows that met at least once); for the group model
        (``"bbt_groups"``) its rows, one per group and pair that met in that group.
    model
        ``"bbt"``, ``"davidson"`` (which also keeps replicated ties per pair) or
        ``"bbt_groups"``.
    chains, iter_sampling
        Kept draws are ``chains * iter_sampling``.
    n_groups
        Groups of data sets (the group model only).

    Notes
    -----
    Draws: ``beta`` per algorithm; ``win1_rep`` and ``log_lik`` (and ``ties_rep``) per fitted
    pair; held 1.5 times over at the peak. Summaries: the sorted draws of P(a > b) for
    all ``n_alg * (n_alg - 1) / 2`` pairs, plus one boolean mask of that size at a time.
    Checked against the measured peak in ``tests/stan/test_faults.py``. The group model
    adds ``beta_group`` (``n_groups * n_alg`` a draw) and counts its rows at the measured
    :data:`_GROUP_ROW_VALUES` values each: 20 algorithms in 200 groups are 38,000 rows, not
    the 190 pooled pairs.
    """
    draws = chains * iter_sampling
    all_pairs = n_alg * (n_alg - 1) // 2
    summaries = draws * all_pairs * (_VALUE + 1)
    if model == "bbt_groups":
        kept = draws * (n_alg + n_groups * n_alg + _SCALARS) * _VALUE
        rows = draws * n_pairs * _GROUP_ROW_VALUES * _VALUE
        return int(_BASE + _ENGINE_COPIES * kept + rows + summaries)
    per_pair = 3 if model == "davidson" else 2
    kept = draws * (n_alg + per_pair * n_pairs + _SCALARS) * _VALUE
    return int(_BASE + _ENGINE_COPIES * kept + summaries)


def estimate_fit_seconds(
    model: str,
    engine: str,
    n_pairs: int,
    chains: int,
    iterations: int,
    *,
    n_alg: int,
    iter_sampling: int,
) -> tuple[float, float] | None:
    """Seconds a fit and its summary will take on the numpy engine, fastest and slowest
    likely; ``None`` on Stan's engines (NUTS varies too much with the data) and for
    Davidson's model.

    Parameters
    ----------
    model, engine
        The model (``"bbt"`` or ``"bbt_groups"``) and the engine that samples it.
    n_pairs
        Fitted pairs; for the group model, its (group, pair) rows.
    chains, iterations
        Chains, and warm-up plus kept draws per chain.
    n_alg, iter_sampling
        Algorithms and kept draws per chain (the plain model: its summary covers every
        pair of algorithms, and its kept draws may come from the independence kernel).

    Notes
    -----
    The group model samples by Gibbs sweeps alone (:data:`_GIBBS_ROW_SECONDS` per row and
    chain): one figure. The plain model's kernel is chosen during the warm-up: the
    independence kernel where the posterior is close to normal (the fastest), else Gibbs
    sweeps throughout (the slowest); either adds the summary, which grows with every pair of
    algorithms times the kept draws (:data:`_SUMMARY_PAIR_SECONDS`). Neither counts the
    further rounds of a fit whose diagnostics fail or of ``draws="auto"``.
    """
    if engine != "numpy":
        return None
    if model == "bbt_groups":
        seconds = _GIBBS_ROW_SECONDS * n_pairs * chains * iterations
        return seconds, seconds
    if model != "bbt":
        return None
    warmup = max(iterations - iter_sampling, 0)
    summary = _SUMMARY_PAIR_SECONDS * (n_alg * (n_alg - 1) / 2) * chains * iter_sampling
    sweep = _GIBBS_PAIR_SECONDS + (_MOVES_PAIR_SECONDS if n_alg >= _MOVES_FROM else 0.0)
    gibbs = sweep * n_pairs * chains * iterations
    start = min(_GIBBS_START, warmup)
    steps = warmup - start + _INDEPENDENCE_THIN * iter_sampling
    independence = (
        n_pairs * chains * (_GIBBS_PAIR_SECONDS * start + _INDEPENDENCE_PAIR_SECONDS * steps)
    )
    return independence + summary, gibbs + summary


def available_memory(cgroup: Path | None = None) -> int | None:
    """Bytes of memory available to new allocations: the host's (Linux ``MemAvailable``, or
    physical memory where that is unknown) or what the cgroup's limit leaves, whichever is
    smaller; ``None`` if none can be read.

    Parameters
    ----------
    cgroup
        Where the cgroup file system is mounted (default :data:`CGROUP_ROOT`).
    """
    host = _host_memory()
    room = cgroup_memory(CGROUP_ROOT if cgroup is None else cgroup)
    known = [m for m in (host, room) if m is not None]
    return min(known) if known else None


def _host_memory() -> int | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def cgroup_memory(root: Path) -> int | None:
    """Bytes the cgroup's memory limit leaves (limit - usage), or ``None`` without a limit.

    Reads cgroup v2 (``memory.max``, "max" when unlimited; ``memory.current``) or else v1
    (``memory/memory.limit_in_bytes``, ``memory/memory.usage_in_bytes``). The page cache in
    the usage is reclaimed before the kernel kills, so ``inactive_file`` of ``memory.stat``
    counts as free, as ``docker stats`` counts it.
    """
    for folder, limit_file, usage_file, stat_key in (
        (root, "memory.max", "memory.current", "inactive_file"),
        (root / "memory", "memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"),
    ):
        limit = _read_int(folder / limit_file)
        if limit is None:
            continue
        if limit >= _V1_UNLIMITED:
            return None
        usage = _read_int(folder / usage_file) or 0
        cache = _stat(folder / "memory.stat", stat_key)
        return max(limit - max(usage - cache, 0), 0)
    return None


def _read_int(path: Path) -> int | None:
    """The integer in a cgroup file; ``None`` when absent, unreadable or "max"."""
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _stat(path: Path, key: str) -> int:
    """A counter of a cgroup's ``memory.stat`` (0 when absent)."""
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


def _gb(n: float) -> str:
    return f"{n / 2**30:.1f} GB"


def duration(seconds: float) -> str:
    """``seconds`` as people say it: "40 s", "12 min", "61 h"."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.0f} h"


def check_fit_size(
    n_alg: int,
    n_pairs: int,
    model: str,
    chains: int,
    iter_sampling: int,
    *,
    n_groups: int = 0,
    available: int | None = None,
) -> None:
    """Refuse a fit that would not fit in memory; warn when it would take most of it.

    Parameters
    ----------
    n_alg, n_pairs, model, chains, iter_sampling, n_groups
        As for :func:`estimate_fit_bytes`.
    available
        Bytes available (default :func:`available_memory`; nothing is checked if unknown).

    Raises
    ------
    FitTooLargeError
        When the estimate exceeds 90% of the available memory; the message gives the
        estimate and the settings that reduce it.
    """
    available = available_memory() if available is None else available
    if available is None:
        return
    need = estimate_fit_bytes(n_alg, n_pairs, model, chains, iter_sampling, n_groups=n_groups)
    if need <= available / 2:
        return
    # the draws scale linearly with chains * iter_sampling: the largest count that fits
    per_draw = (need - _BASE) / (chains * iter_sampling)
    fits = int((_REFUSE * available - _BASE) / per_draw) if per_draw > 0 else 0
    grouped = model == "bbt_groups"
    shape = (
        f"{n_alg} algorithms in {n_groups} groups: {n_pairs} (group, pair) rows"
        if grouped
        else f"{n_alg} algorithms, {n_pairs} fitted pairs"
    )
    message = (
        f"this fit needs about {_gb(need)} of memory ({shape}, {chains} chains x "
        f"{iter_sampling} draws), and {_gb(available)} is available. Memory grows with "
        + ("rows" if grouped else "pairs")
        + " x draws: use fewer draws (iter_sampling, --iter-sampling) or chains (--chains), "
        + (
            f"e.g. chains x iter_sampling <= {fits} (such as {min(chains, 4)} x "
            f"{max(fits // min(chains, 4), 0)}), "
            if fits > 0
            else ""
        )
        + ("fewer groups (merge small ones in the group column), " if grouped else "")
        + "or compare fewer algorithms (e.g. the strongest ones, or each against a control in "
        "separate fits)."
    )
    if need > _REFUSE * available:
        raise FitTooLargeError(message)
    warnings.warn(message, UserWarning, stacklevel=3)


def check_job_size(
    need: int,
    seconds: float | None,
    what: str,
    shrink: str,
    *,
    available: int | None = None,
    stacklevel: int = 2,
) -> None:
    """Refuse a job whose estimated peak memory ``need`` would not fit; say beforehand how
    long and how large a long one will be.

    Parameters
    ----------
    need
        Estimated peak bytes.
    seconds
        Estimated run time (``None``: unknown); above :data:`LONG_RUN` a
        :class:`LongRunWarning` gives it and ``need`` before the job starts.
    what
        The job and its shape, for the messages (e.g. "the Mallows model of 500 algorithms").
    shrink
        The options that shrink it, for the messages.
    available
        Bytes available (default :func:`available_memory`; memory is not checked if unknown).
    stacklevel
        As for ``warnings.warn`` called where this is called.

    Raises
    ------
    FitTooLargeError
        When ``need`` exceeds 90% of the available memory.
    """
    available = available_memory() if available is None else available
    if available is not None and need > _REFUSE * available:
        raise FitTooLargeError(
            f"{what} needs about {_gb(need)} of memory, and {_gb(available)} is available; {shrink}"
        )
    warn_long_run(seconds, need, what, shrink, stacklevel=stacklevel + 1)


def warn_long_run(
    seconds: float | None,
    need: int,
    what: str,
    shrink: str,
    *,
    stacklevel: int = 2,
    fastest: float | None = None,
) -> None:
    """A :class:`LongRunWarning` with the estimated time and memory (``need`` bytes) of a job
    estimated to run longer than :data:`LONG_RUN` seconds; nothing otherwise. Arguments as
    for :func:`check_job_size`; ``fastest``, when given, the shortest time likely (the
    message then gives the range up to ``seconds``)."""
    if seconds is not None and seconds > LONG_RUN:
        span = (
            f"between {duration(fastest)} and {duration(seconds)}"
            if fastest is not None and duration(fastest) != duration(seconds)
            else f"about {duration(seconds)}"
        )
        warnings.warn(
            f"{what} will take {span} and {_gb(need)} of memory; {shrink}",
            LongRunWarning,
            stacklevel=stacklevel + 1,
        )


def check_draws_memory(
    n_samples: int, values_per_draw: int, what: str, *, available: int | None = None
) -> None:
    """Refuse ``n_samples`` Monte Carlo draws that would not fit in memory, before any is made:
    numpy's own refusal ("Unable to allocate 224 GiB") names neither the setting nor a size
    that fits.

    Parameters
    ----------
    n_samples
        The draws asked for (the ``n_samples`` argument).
    values_per_draw
        Float64 values held at once per draw, at the peak (the draws and their temporaries).
    what
        What is drawn, for the message (e.g. "the Bayesian sign test").
    available
        Bytes available (default :func:`available_memory`; nothing is checked if unknown).

    Raises
    ------
    FitTooLargeError
        When the draws need more than 90% of the available memory; the message gives the
        memory they need and the largest ``n_samples`` that fits.
    """
    available = available_memory() if available is None else available
    need = n_samples * values_per_draw * _VALUE
    if available is None or need <= _REFUSE * available:
        return
    most = int(_REFUSE * available) // (values_per_draw * _VALUE)
    raise FitTooLargeError(
        f"n_samples={n_samples}: the draws of {what} would need about {_gb(need)} of memory "
        f"({values_per_draw * _VALUE} bytes a draw), and {_gb(available)} is available; use "
        f"at most n_samples={most} (the default, 50000, gives each probability a standard "
        "error of at most 0.0023)"
    )
