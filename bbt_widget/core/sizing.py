"""Size guard: refuse, before sampling, a fit (or Monte Carlo draws, :func:`check_draws_memory`)
whose draws cannot fit in this machine's memory.

Memory grows with pairs x draws: every draw keeps the replicated counts and the log-likelihood
of every fitted pair (and the Davidson model the replicated ties), and the summaries keep
P(a > b) for every pair of algorithms. 500 algorithms at the default 4 x 1000 draws need about
16 GB, which used to fail only after the sampling, or end in an out-of-memory kill.
"""

from __future__ import annotations

import os
import warnings

#: Bytes per stored value (draws are float64 / int64).
_VALUE = 8
#: Values per draw besides the per-algorithm and per-pair outputs: sigma, nu, 7 sampler columns.
_SCALARS = 10
#: Copies of the draws at the peak: the engine reads them in (PyStan: a chain at a time,
#: cmdstanpy: all at once) and the checks make transient ones (measured: 1.4-1.5).
_ENGINE_COPIES = 1.5
#: Memory of the process besides the draws (Python, numpy, pandas, ArviZ imported: ~190 MB).
_BASE = 200 * 2**20
#: A fit that needs more than this fraction of the available memory is refused.
_REFUSE = 0.9


class FitTooLargeError(ValueError):
    """The fit would need more memory than this machine has; the message says how to shrink it."""


def estimate_fit_bytes(
    n_alg: int, n_pairs: int, model: str, chains: int, iter_sampling: int
) -> int:
    """Peak memory (bytes) of a fit and its summaries, from pairs x draws.

    Parameters
    ----------
    n_alg
        Algorithms.
    n_pairs
        Fitted pairs (win-table rows that met at least once).
    model
        ``"bbt"`` or ``"davidson"`` (which also keeps replicated ties per pair).
    chains, iter_sampling
        Kept draws are ``chains * iter_sampling``.

    Notes
    -----
    Draws: ``beta`` per algorithm; ``win1_rep`` and ``log_lik`` (and ``ties_rep``) per fitted
    pair; held 1.5 times over at the peak. Summaries: the sorted draws of P(a > b) for
    all ``n_alg * (n_alg - 1) / 2`` pairs, plus one boolean mask of that size at a time.
    Checked against the measured peak in ``tests/stan/test_faults.py``.
    """
    draws = chains * iter_sampling
    per_pair = 3 if model == "davidson" else 2
    kept = draws * (n_alg + per_pair * n_pairs + _SCALARS) * _VALUE
    all_pairs = n_alg * (n_alg - 1) // 2
    summaries = draws * all_pairs * (_VALUE + 1)
    return int(_BASE + _ENGINE_COPIES * kept + summaries)


def available_memory() -> int | None:
    """Bytes of memory available to new allocations (Linux ``MemAvailable``), or physical
    memory where that is unknown; ``None`` if neither can be read."""
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


def _gb(n: float) -> str:
    return f"{n / 2**30:.1f} GB"


def check_fit_size(
    n_alg: int,
    n_pairs: int,
    model: str,
    chains: int,
    iter_sampling: int,
    *,
    available: int | None = None,
) -> None:
    """Refuse a fit that would not fit in memory; warn when it would take most of it.

    Parameters
    ----------
    n_alg, n_pairs, model, chains, iter_sampling
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
    need = estimate_fit_bytes(n_alg, n_pairs, model, chains, iter_sampling)
    if need <= available / 2:
        return
    # the draws scale linearly with chains * iter_sampling: the largest count that fits
    per_draw = (need - _BASE) / (chains * iter_sampling)
    fits = int((_REFUSE * available - _BASE) / per_draw) if per_draw > 0 else 0
    message = (
        f"this fit needs about {_gb(need)} of memory ({n_alg} algorithms, {n_pairs} fitted "
        f"pairs, {chains} chains x {iter_sampling} draws), and {_gb(available)} is "
        "available. Memory grows with pairs x draws: use fewer draws (iter_sampling, "
        "--iter-sampling) or chains (--chains), "
        + (
            f"e.g. chains x iter_sampling <= {fits} (such as {min(chains, 4)} x "
            f"{max(fits // min(chains, 4), 0)}), "
            if fits > 0
            else ""
        )
        + "or compare fewer algorithms (e.g. the strongest ones, or each against a control in "
        "separate fits)."
    )
    if need > _REFUSE * available:
        raise FitTooLargeError(message)
    warnings.warn(message, UserWarning, stacklevel=3)


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
