"""Convergence statistics of MCMC draws: rank-normalised split R-hat, bulk and tail ESS, E-BFMI.

The same computations as ArviZ 0.x (``az.rhat(method="rank")``, ``az.ess(method="bulk")``
and ``method="tail"``, ``az.bfmi``; Vehtari et al. 2021, "Rank-normalization, folding, and
localization: An improved R-hat for assessing convergence of MCMC", Bayesian Analysis 16(2),
doi:10.1214/20-BA1221), operation for operation, in numpy and the standard library alone: the
numbers agree to 1e-12 (the normal scores come from the standard library, not scipy). Every
fit checks its convergence, and importing ArviZ (which imports matplotlib, SciPy's
statistics and xarray) or even ``scipy.special`` can take longer than sampling a large
table: a fresh process's first fit would pay it. ArviZ stays for what needs its
InferenceData (``BBTResult.idata``, WAIC, LOO). ``tests/unit/test_convergence.py`` checks
the agreement.
"""

from __future__ import annotations

import functools
import statistics
from collections.abc import Callable

import numpy as np

#: Tail ESS: the smaller ESS of the indicators of these two quantiles (ArviZ's default).
TAIL_PROBS = (0.05, 0.95)
#: Fewest draws per chain for R-hat or ESS (fewer: NaN), and fewest chains for R-hat.
MIN_DRAWS = 4
MIN_CHAINS_RHAT = 2


def rhat(ary: np.ndarray) -> float:
    """Rank-normalised split R-hat of one quantity's draws, shaped (chains, draws): the larger
    of the bulk (z-scaled ranks) and the tail (folded about the median) R-hat; NaN when the
    draws hold a NaN or there are fewer than 2 chains or 4 draws."""
    ary = np.asarray(ary)
    if _not_valid(ary, MIN_CHAINS_RHAT):
        return np.nan
    split = _split_chains(ary)
    bulk = _rhat(_z_scale(split))
    tail = _rhat(_z_scale(abs(split - np.median(split))))
    return max(bulk, tail)


def ess_bulk(ary: np.ndarray) -> float:
    """Bulk effective sample size (of the z-scaled ranks of the split chains)."""
    ary = np.asarray(ary)
    if _not_valid(ary, 1):
        return np.nan
    return _ess(_z_scale(_split_chains(ary)))


def ess_mean(ary: np.ndarray) -> float:
    """Effective sample size of the draws' mean (ArviZ's ``method="mean"``: the split chains
    as they are, not ranked), which sets the Monte Carlo standard error of a posterior mean
    or of a probability estimated as the mean of an indicator."""
    ary = np.asarray(ary, dtype=float)
    if _not_valid(ary, 1):
        return np.nan
    return _ess(_split_chains(ary))


def ess_tail(ary: np.ndarray) -> float:
    """Tail effective sample size: the smaller ESS of the 5% and 95% quantile indicators."""
    ary = np.asarray(ary)
    if _not_valid(ary, 1):
        return np.nan
    low, high = (_ess(_split_chains(ary <= _quantile(ary, p))) for p in TAIL_PROBS)
    return min(low, high)


def bfmi(energy: np.ndarray) -> np.ndarray:
    """E-BFMI of each chain, from the sampler's energy shaped (chains, draws)."""
    energy = np.atleast_2d(energy)
    num = np.square(np.diff(energy, axis=1)).mean(axis=1)
    return np.asarray(num / np.var(energy, axis=1, ddof=1))


def per_element(func: Callable[[np.ndarray], float], draws: np.ndarray) -> np.ndarray:
    """``func`` of each scalar quantity of ``draws`` shaped (chains, draws, ...): an array
    shaped like one draw (ArviZ's loop over the quantity's elements)."""
    moved = np.moveaxis(np.asarray(draws), (0, 1), (-2, -1))
    out = np.empty(moved.shape[:-2])
    for index in np.ndindex(out.shape):
        out[index] = func(moved[index])
    return out


def _not_valid(ary: np.ndarray, min_chains: int) -> bool:
    """NaN draws, or fewer chains or draws than the statistic needs."""
    if np.isnan(ary).any():
        return True
    shape = ary.shape
    if len(shape) < 2:
        return min_chains > 1 or shape[0] < MIN_DRAWS
    return bool(shape[0] < min_chains or shape[1] < MIN_DRAWS)


def _split_chains(ary: np.ndarray) -> np.ndarray:
    """Each chain's first and last halves as two chains (the middle draw of an odd count
    dropped)."""
    ary = np.asarray(ary)
    if ary.ndim <= 1:
        ary = np.atleast_2d(ary)
    half = ary.shape[1] // 2
    return np.vstack((ary[:, :half], ary[:, -half:]))


def _z_scale(ary: np.ndarray) -> np.ndarray:
    """Normal scores of the pooled ranks (ties averaged; Blom's offset 3/8)."""
    ranks = _average_ranks(ary.ravel())
    # average ranks are whole or half numbers: 2 * rank - 2 indexes the table
    return _normal_scores(ranks.size)[(2 * ranks).astype(np.intp) - 2].reshape(ary.shape)


@functools.lru_cache(maxsize=8)
def _normal_scores(n: int) -> np.ndarray:
    """The normal score of every rank ``1, 1.5, 2, ..., n`` of ``n`` pooled draws: the
    inverse normal CDF at ``(rank - 3/8) / (n + 1/4)``. The scores depend on ``n`` alone,
    so each is computed once per size of a fit rather than once per draw and quantity, and
    in the standard library (Wichura's AS241, as accurate as scipy's ``ndtri``, to 1e-15):
    importing ``scipy.special`` for them would add a large part of a second to a fresh
    process's first fit."""
    inverse = statistics.NormalDist().inv_cdf
    ranks = np.arange(2, 2 * n + 1) / 2
    scores = np.array([inverse(p) for p in (ranks - 3 / 8) / (n + 1 / 4)])
    scores.flags.writeable = False  # shared by every caller through the cache
    return scores


def _average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, tied values sharing the mean of their ranks (``rankdata``'s
    ``"average"``: every rank is a whole or half number, exact in floating point)."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.r_[True, ordered[1:] != ordered[:-1]]
    group = np.cumsum(starts) - 1
    bounds = np.r_[np.flatnonzero(starts), values.size]
    mean_rank = 0.5 * (bounds[:-1] + bounds[1:] + 1)
    ranks = np.empty(values.size)
    ranks[order] = mean_rank[group]
    return ranks


def _rhat(ary: np.ndarray) -> float:
    """Classic R-hat of (chains, draws)."""
    ary = np.asarray(ary, dtype=float)
    if np.isnan(ary).any():
        return np.nan
    n = ary.shape[1]
    chain_mean = np.mean(ary, axis=1)
    chain_var = np.var(ary, axis=1, ddof=1)
    between = n * np.var(chain_mean, axis=None, ddof=1)
    within = np.mean(chain_var)
    return float(np.sqrt((between / within + n - 1) / n))


def _quantile(ary: np.ndarray, prob: float) -> float:
    """The type-7 quantile of all the draws (R's default; ``scipy.stats.mstats.mquantiles``
    with ``alphap = betap = 1``, the formula kept so that the cut falls on the same bit)."""
    x = np.sort(np.asarray(ary, dtype=float).ravel())
    n = x.size
    aleph = n * prob + (1.0 - prob)
    k = int(np.floor(np.clip(aleph, 1, n - 1)))
    gamma = float(np.clip(aleph - k, 0, 1))
    return float((1.0 - gamma) * x[k - 1] + gamma * x[k])


def _next_fast_len(target: int) -> int:
    """The smallest 5-smooth number (2^a 3^b 5^c) >= ``target``: a fast FFT length."""
    size = max(target, 1)
    while True:
        rest = size
        for factor in (2, 3, 5):
            while rest % factor == 0:
                rest //= factor
        if rest == 1:
            return size
        size += 1


def _autocov(ary: np.ndarray) -> np.ndarray:
    """Autocovariance of each chain at every lag, by FFT (rows: chains)."""
    n = ary.shape[1]
    m = _next_fast_len(2 * n)
    ary = ary - ary.mean(1, keepdims=True)
    spectrum = np.fft.rfft(ary, n=m, axis=1)
    spectrum *= np.conjugate(spectrum)
    cov = np.fft.irfft(spectrum, n=m, axis=1)[:, :n]
    cov /= n
    return cov


def _ess(ary: np.ndarray) -> float:
    """Effective sample size of (chains, draws) by Geyer's initial monotone sequence."""
    ary = np.asarray(ary, dtype=float)
    if np.isnan(ary).any():
        return np.nan
    if (np.max(ary) - np.min(ary)) < np.finfo(float).resolution:
        return ary.size
    n_chain, n_draw = ary.shape
    acov = _autocov(ary)
    chain_mean = ary.mean(axis=1)
    mean_var = np.mean(acov[:, 0]) * n_draw / (n_draw - 1.0)
    var_plus = mean_var * (n_draw - 1.0) / n_draw
    if n_chain > 1:
        var_plus += np.var(chain_mean, axis=None, ddof=1)

    rho = np.zeros(n_draw)
    rho_even = 1.0
    rho[0] = rho_even
    rho_odd = 1.0 - (mean_var - np.mean(acov[:, 1])) / var_plus
    rho[1] = rho_odd
    # Geyer's initial positive sequence
    t = 1
    while t < (n_draw - 3) and (rho_even + rho_odd) > 0.0:
        rho_even = 1.0 - (mean_var - np.mean(acov[:, t + 1])) / var_plus
        rho_odd = 1.0 - (mean_var - np.mean(acov[:, t + 2])) / var_plus
        if (rho_even + rho_odd) >= 0:
            rho[t + 1] = rho_even
            rho[t + 2] = rho_odd
        t += 2
    max_t = t - 2
    if rho_even > 0:
        rho[max_t + 1] = rho_even
    # Geyer's initial monotone sequence
    t = 1
    while t <= max_t - 2:
        if (rho[t + 1] + rho[t + 2]) > (rho[t - 1] + rho[t]):
            rho[t + 1] = (rho[t - 1] + rho[t]) / 2.0
            rho[t + 2] = rho[t + 1]
        t += 2
    ess = n_chain * n_draw
    tau = -1.0 + 2.0 * np.sum(rho[: max_t + 1]) + np.sum(rho[max_t + 1 : max_t + 2])
    tau = max(tau, 1 / np.log10(ess))
    ess = ess / tau
    if np.isnan(rho).any():
        ess = np.nan
    return float(ess)
