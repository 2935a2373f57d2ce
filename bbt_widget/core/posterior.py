"""Posterior draws of beta -> P(a > b), summaries, ranks and decisions (paper Sec. 5.2-5.5, 9).

Pure numpy on arrays shaped (draws, ...): the result object caches the expensive parts
(draws of P(a > b), sorted once) so that a new ROPE or HDI mass costs milliseconds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

#: Sec. 9.2: claim equivalence when in_rope >= 0.95, superiority when above_50 >= 0.95.
WEAK_THRESHOLD = 0.95
#: Sec. 9.3: claim superiority when mean P(a > b) > 0.70; equivalence when it is below the
#: ROPE's upper bound (0.55 with the paper's ROPE).
STRONG_THRESHOLD = 0.70

#: Decision of a pair whose algorithms never met, even through others (disconnected groups):
#: only the prior relates them, so neither interpretation may claim anything.
NOT_COMPARED = "not compared"
#: Each side's win seen from the other side of the pair.
_FLIPPED = {"a better": "b better", "b better": "a better"}

SUMMARY_COLUMNS = (
    "pair",
    "alg_a",
    "alg_b",
    "mean",
    "median",
    "low",
    "high",
    "delta",
    "above_50",
    "in_rope",
    "weak",
    "strong",
)


def inv_logit(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """The logistic function (into ``out`` when given, e.g. ``x`` itself), stable and
    accurate to the last bits relative to the value at any ``x``: ``1 / (1 + e)`` for
    ``x >= 0`` and ``e / (1 + e)`` below, with ``e = exp(-|x|)``. In numpy, where scipy's
    ``expit`` would cost a fresh process the import of ``scipy.special``."""
    negative = np.signbit(x)
    e = np.exp(-np.abs(x))
    out = np.add(e, 1.0, out=out)
    np.reciprocal(out, out=out)
    np.multiply(out, e, out=out, where=negative)
    return out


def normal_cdf(x: np.ndarray) -> np.ndarray:
    """The standard normal CDF per element, in numpy (relative error below 1.2e-7: the
    Chebyshev fit of ``erfc`` in Press et al., Numerical Recipes, 2nd ed., Sec. 6.2), for
    the same reason as :func:`inv_logit`."""
    z = np.abs(np.asarray(x, dtype=float)) / np.sqrt(2.0)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = 0.17087277
    for c in (-0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806, 0.09678418,
              0.37409196, 1.00002368, -1.26551223):  # fmt: skip
        poly = c + t * poly
    upper = 0.5 * t * np.exp(-z * z + poly)  # P(N > |x|)
    return np.asarray(np.where(np.asarray(x) >= 0, 1.0 - upper, upper))


def hdi_sorted(sorted_draws: np.ndarray, mass: float) -> tuple[np.ndarray, np.ndarray]:
    """Highest-density interval of each column of draws already sorted along axis 0.

    The narrowest interval holding ``floor(mass * n) + 1`` consecutive sorted draws (the
    rule ArviZ uses); ``mass == 1`` gives the full range.
    """
    n = sorted_draws.shape[0]
    if mass >= 1.0:
        return sorted_draws[0], sorted_draws[-1]
    inc = min(int(np.floor(mass * n)), n - 1)
    widths = sorted_draws[inc:] - sorted_draws[: n - inc]
    start = np.argmin(widths, axis=0)
    cols = np.arange(sorted_draws.shape[1])
    return sorted_draws[start, cols], sorted_draws[start + inc, cols]


def algorithm_order(beta: np.ndarray) -> np.ndarray:
    """Indices of the algorithms from best to worst by mean beta (the paper's ranking)."""
    # stable sort: equal means keep input order, so the ranking is deterministic
    return np.argsort(-beta.mean(axis=0), kind="stable")


def ordered_pairs(order: Sequence[int] | np.ndarray) -> list[tuple[int, int]]:
    """Pairs (better, worse) in the paper's order: best vs each worse one, then the second..."""
    return [
        (int(order[i]), int(order[j])) for i in range(len(order)) for j in range(i + 1, len(order))
    ]


def maximal_runs(names: Sequence[str], differ: Callable[[int, int], bool]) -> list[tuple[str, ...]]:
    """The maximal runs of consecutive ``names`` (in this order) with no two members that
    ``differ``: the bars of a critical-difference diagram.

    Parameters
    ----------
    names
        Items in the order of the diagram's axis (best first).
    differ
        ``differ(i, j)`` for positions ``i < j`` in ``names``: whether the two are told apart
        (a significant difference, a "better" claim).

    Returns
    -------
    list of tuple of str
        Runs of at least two names, each not contained in another, in axis order.
    """
    n = len(names)
    out: list[tuple[str, ...]] = []
    end = 0
    last_end = -1
    for start in range(n):
        # [start, end] is a sub-run of the previous start's run: nothing in it differs
        end = max(end, start)
        while end + 1 < n and not any(differ(i, end + 1) for i in range(start, end + 1)):
            end += 1
        # maximal when it reaches further than every run starting before it
        if end > start and end > last_end:
            out.append(tuple(names[start : end + 1]))
        last_end = max(last_end, end)
    return out


def pair_probabilities(
    beta: np.ndarray, pairs: Sequence[tuple[int, int]], chunk: int = 256
) -> np.ndarray:
    """Draws of P(a > b) = inv_logit(beta_a - beta_b), shape (draws, pairs).

    Under the Davidson model this is P(a beats b | no tie), the same function of beta.
    Computed a block of pairs at a time, in place: with 100 algorithms (4950 pairs x 4000
    draws) the whole-array expression would hold four 160 MB temporaries at once.
    """
    a = np.fromiter((p[0] for p in pairs), dtype=int, count=len(pairs))
    b = np.fromiter((p[1] for p in pairs), dtype=int, count=len(pairs))
    out = np.empty((beta.shape[0], len(pairs)))
    for start in range(0, len(pairs), chunk):
        block = slice(start, start + chunk)
        x = np.subtract(beta[:, a[block]], beta[:, b[block]], out=out[:, block])
        inv_logit(x, out=x)
    return out


def sorted_pair_probabilities(
    beta: np.ndarray, pairs: Sequence[tuple[int, int]], block: int = 64
) -> np.ndarray:
    """:func:`pair_probabilities` with each pair's draws sorted ascending, shape (draws,
    pairs): the same values (the logistic function is applied to the sorted differences of
    abilities, which it keeps in order), in the transpose of a (pairs, draws) array.

    Each pair's draws lie together in memory, a block of pairs at a time, so that the sort
    runs along contiguous rows (numpy's vectorised sort: several times faster than sorting
    the columns of a (draws, pairs) array, whose elements lie a row apart) and the logistic
    function's temporaries stay small.
    """
    a = np.fromiter((p[0] for p in pairs), dtype=int, count=len(pairs))
    b = np.fromiter((p[1] for p in pairs), dtype=int, count=len(pairs))
    columns = np.ascontiguousarray(beta.T)
    out = np.empty((len(pairs), beta.shape[0]))
    for start in range(0, len(pairs), block):
        rows = out[start : start + block]
        np.subtract(columns[a[start : start + block]], columns[b[start : start + block]], out=rows)
        rows.sort(axis=1)
        inv_logit(rows, out=rows)
    return np.asarray(out.T)


def weak_decision(above_50: np.ndarray, in_rope: np.ndarray) -> np.ndarray:
    """Sec. 9.2: equivalence first, then superiority, at the 0.95 threshold."""
    return np.select(
        [in_rope >= WEAK_THRESHOLD, above_50 >= WEAK_THRESHOLD, above_50 <= 1 - WEAK_THRESHOLD],
        ["equivalent", "a better", "b better"],
        default="no claim",
    )


def strong_decision(mean: np.ndarray, rope: tuple[float, float]) -> np.ndarray:
    """Sec. 9.3: mean below the ROPE's upper bound is equivalence, above 0.70 superiority."""
    low, high = rope
    return np.select(
        [(mean < high) & (mean > low), mean > STRONG_THRESHOLD, mean < 1 - STRONG_THRESHOLD],
        ["equivalent", "a better", "b better"],
        default="no claim",
    )


def flip_decision(decision: str) -> str:
    """The same decision seen from the other side of the pair ("a better" <-> "b better")."""
    return _FLIPPED.get(decision, decision)


def summarise(
    p_sorted: np.ndarray,
    labels: Sequence[str],
    alg_a: Sequence[str],
    alg_b: Sequence[str],
    rope: tuple[float, float],
    hdi: float,
    compared: np.ndarray | None = None,
) -> pd.DataFrame:
    """The summary table (paper Table 6) from sorted draws of P(a > b), shape (draws, pairs).

    ``compared`` (bool per pair, default all) marks pairs whose algorithms are linked by
    games; the others get the decision :data:`NOT_COMPARED` under both interpretations.
    """
    n = p_sorted.shape[0]
    mean = p_sorted.mean(axis=0)
    # the draws are sorted: the median is the middle row(s), no copy needed
    median = 0.5 * (p_sorted[(n - 1) // 2] + p_sorted[n // 2])
    low, high = hdi_sorted(p_sorted, hdi)
    above = n - _count_below(p_sorted, 0.5)
    in_rope = _count_below(p_sorted, rope[1], right=True) - _count_below(p_sorted, rope[0])
    above_50, in_rope = above / n, in_rope / n
    weak, strong = weak_decision(above_50, in_rope), strong_decision(mean, rope)
    if compared is not None:
        weak = np.where(compared, weak, NOT_COMPARED)
        strong = np.where(compared, strong, NOT_COMPARED)
    return pd.DataFrame(
        {
            "pair": list(labels),
            "alg_a": list(alg_a),
            "alg_b": list(alg_b),
            "mean": mean,
            "median": median,
            "low": low,
            "high": high,
            "delta": high - low,
            "above_50": above_50,
            "in_rope": in_rope,
            "weak": weak,
            "strong": strong,
        }
    )


def rope_mass(p_sorted: np.ndarray, rope: tuple[float, float]) -> tuple[np.ndarray, ...]:
    """Posterior mass of P(a > b) below, inside and above the ROPE, per pair."""
    n = p_sorted.shape[0]
    below = _count_below(p_sorted, rope[0])
    upto = _count_below(p_sorted, rope[1], right=True)
    return below / n, (upto - below) / n, (n - upto) / n


def _count_below(p_sorted: np.ndarray, x: float, right: bool = False) -> np.ndarray:
    """Per column, the number of draws < x (or <= x with ``right``)."""
    return np.asarray(((p_sorted <= x) if right else (p_sorted < x)).sum(axis=0).astype(float))


def centred(beta: np.ndarray) -> np.ndarray:
    """Abilities minus their mean in each draw: the paper's sum-to-zero convention (Sec. 4).

    Only differences of abilities are identified by the data; the common level of all betas
    moves with the prior alone, so intervals of raw betas are wider than what the data say.
    """
    return np.asarray(beta - beta.mean(axis=1, keepdims=True))


def ranking(beta: np.ndarray, algorithms: Sequence[str], hdi: float) -> pd.DataFrame:
    """Per algorithm: ability, its HDI, P(best) and expected rank (1 = best), best first.

    ``mean_beta``, ``low`` and ``high`` are of the centred abilities (:func:`centred`: beta
    minus its per-draw mean, so they sum to zero), the paper's convention; ranks and P(best)
    are the same either way.
    """
    order = algorithm_order(beta)
    beta = centred(beta)
    low, high = hdi_sorted(np.sort(beta, axis=0), hdi)
    # rank 1 = largest beta in that draw
    ranks = np.empty_like(beta, dtype=float)
    ranks[np.arange(beta.shape[0])[:, None], np.argsort(-beta, axis=1)] = np.arange(
        1, beta.shape[1] + 1
    )
    best = np.bincount(np.argmax(beta, axis=1), minlength=beta.shape[1]) / beta.shape[0]
    table = pd.DataFrame(
        {
            "algorithm": list(algorithms),
            "mean_beta": beta.mean(axis=0),
            "low": low,
            "high": high,
            "p_best": best,
            "expected_rank": ranks.mean(axis=0),
        }
    )
    return table.iloc[order].reset_index(drop=True)
