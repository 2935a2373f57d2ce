"""The scores themselves beside BBT's claims: each algorithm's mean and median score over the
data sets with an interval, and for a pair its effect size on the score scale.

BBT's claims are about how often one algorithm wins (P(a > b)), not by how much: an
"equivalent" pair wins about half the time each, whatever the size of the score differences.
These tables put the size back beside the claims, as autorank reports it:

* the mean score with a percentile bootstrap interval over data sets (a fixed seed);
* the median score, and the median paired difference of a pair, with the distribution-free
  interval of a median from its order statistics (the binomial interval: no resampling, the
  same answer at every seed, and quick for the thousand pairs of 50 algorithms);
* Cliff's delta between the two algorithms' scores on their common data sets, with
  autorank's magnitude labels (Romano et al.'s thresholds 0.147, 0.33 and 0.474).

Every number is on the scores' own scale; a pair's difference and delta are oriented so that
a positive value favours its first algorithm (``a - b``, or ``b - a`` when lower is better).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ._common import Means, noise_level

#: Cliff's delta magnitudes as autorank labels them: below each bound, the label beside it
#: (Romano et al. 2006), "large" at and above the last.
CLIFFS_DELTA_BOUNDS = ((0.147, "negligible"), (0.33, "small"), (0.474, "medium"))
#: Bootstrap resamples of the mean's interval.
N_BOOTSTRAP = 2000


def magnitude(delta: float) -> str:
    """autorank's label of a Cliff's delta: ``"negligible"`` below 0.147 in absolute value,
    ``"small"`` below 0.33, ``"medium"`` below 0.474, else ``"large"`` (``""`` for NaN)."""
    if not np.isfinite(delta):
        return ""
    for bound, label in CLIFFS_DELTA_BOUNDS:
        if abs(delta) < bound:
            return label
    return "large"


def cliffs_delta(x: np.ndarray, y: np.ndarray, tol: float = 0.0) -> float:
    """Cliff's delta of ``x`` over ``y``: P(X > Y) - P(X < Y) over every pair of a value of
    ``x`` and a value of ``y``, in [-1, 1]; NaN when either is empty. Values within ``tol`` of
    each other are a tie, which counts for neither.
    """
    x = np.asarray(x, dtype=float)
    y = np.sort(np.asarray(y, dtype=float))
    if x.size == 0 or y.size == 0:
        return float("nan")
    below = np.searchsorted(y, x - tol, side="left")  # values of y smaller than each x
    above = y.size - np.searchsorted(y, x + tol, side="right")  # values of y larger
    return float((below.sum() - above.sum()) / (x.size * y.size))


@functools.lru_cache(maxsize=64)
def _half_binomial_cdf(n: int) -> np.ndarray:
    """P(X <= k) for k = 0..n, X ~ Binomial(n, 1/2), from the log pmf (the report's default
    sections import no ``scipy.stats``: its import costs a fresh process a large part of a
    second)."""
    log_pmf = np.array(
        [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) for i in range(n + 1)]
    )
    cdf = np.minimum(np.cumsum(np.exp(log_pmf - n * math.log(2.0))), 1.0)
    cdf.flags.writeable = False  # shared through the cache
    return np.asarray(cdf)


@functools.lru_cache(maxsize=256)
def _order_rank(n: int, mass: float) -> int:
    """k of the median's interval [x_(k), x_(n-k+1)] (1-based order statistics): the largest
    k with P(Binomial(n, 1/2) <= k - 1) <= (1 - mass) / 2, at least 1 (the range) when even
    the range covers less than ``mass``."""
    cdf = _half_binomial_cdf(n)
    return max(int(np.count_nonzero(cdf <= (1.0 - mass) / 2.0 + 1e-12)), 1)


def median_interval(x: np.ndarray, mass: float) -> tuple[float, float]:
    """The distribution-free interval of the median of ``x`` covering at least ``mass`` (the
    range when there are too few values for that); NaN for no values."""
    x = np.sort(np.asarray(x, dtype=float))
    if x.size == 0:
        return float("nan"), float("nan")
    k = _order_rank(int(x.size), float(mass))
    return float(x[k - 1]), float(x[x.size - k])


def median_coverage(n: int, mass: float) -> float:
    """The coverage of :func:`median_interval` with ``n`` values: at least ``mass`` when
    ``n`` allows it (the range's coverage, ``1 - 2 / 2**n``, when it does not)."""
    k = _order_rank(n, float(mass))
    return float(1.0 - 2.0 * (_half_binomial_cdf(n)[k - 1] if k >= 1 else 0.0))


def score_table(
    means: Means, *, mass: float, seed: int, n_bootstrap: int = N_BOOTSTRAP
) -> pd.DataFrame:
    """Each algorithm's scores over the data sets, on their own scale, in ``means``' order.

    Columns: ``algorithm``, ``n_datasets`` (data sets with a score), ``mean_score`` with its
    percentile bootstrap interval ``mean_low``, ``mean_high`` (``n_bootstrap`` resamples of
    the algorithm's data sets, ``numpy.random.default_rng(seed)``, the algorithms in order),
    ``median_score`` with its order-statistic interval ``median_low``, ``median_high``
    (:func:`median_interval`). The intervals cover ``mass``.
    """
    rng = np.random.default_rng(seed)
    sign = -1.0 if means.lower_is_better else 1.0
    tail = (1.0 - mass) / 2.0
    rows = []
    for k, name in enumerate(means.algorithms):
        x = sign * means.values[:, k]
        x = x[np.isfinite(x)]
        low = high = float("nan")
        if x.size:
            boot = x[rng.integers(0, x.size, size=(n_bootstrap, x.size))].mean(axis=1)
            low, high = (float(v) for v in np.quantile(boot, [tail, 1.0 - tail]))
        med_low, med_high = median_interval(x, mass)
        rows.append(
            {
                "algorithm": name,
                "n_datasets": int(x.size),
                "mean_score": float(x.mean()) if x.size else float("nan"),
                "mean_low": low,
                "mean_high": high,
                "median_score": float(np.median(x)) if x.size else float("nan"),
                "median_low": med_low,
                "median_high": med_high,
            }
        )
    return pd.DataFrame(rows)


def pair_effects(means: Means, pairs: Sequence[tuple[str, str]], *, mass: float) -> pd.DataFrame:
    """The effect size of each pair ``(a, b)`` on the data sets where both have a score.

    Columns: ``alg_a``, ``alg_b``, ``n_common`` (those data sets), ``advantage`` (the median
    over them of a's score minus b's, or b's minus a's when lower is better: positive favours
    a) with its order-statistic interval ``advantage_low``, ``advantage_high`` covering
    ``mass``, ``cliffs_delta`` (:func:`cliffs_delta` of a's scores over b's, oriented the same
    way, means equal up to floating-point noise tied) and ``magnitude`` (:func:`magnitude`).
    """
    index = {name: k for k, name in enumerate(means.algorithms)}
    rows = []
    for a, b in pairs:
        x, y = means.values[:, index[a]], means.values[:, index[b]]  # higher is better
        both = np.isfinite(x) & np.isfinite(y)
        x, y = x[both], y[both]
        diff = x - y
        low, high = median_interval(diff, mass)
        # means equal up to floating-point noise are a tie, as in the win table
        delta = cliffs_delta(x, y, noise_level(np.concatenate([x, y])))
        rows.append(
            {
                "alg_a": a,
                "alg_b": b,
                "n_common": int(both.sum()),
                "advantage": float(np.median(diff)) if diff.size else float("nan"),
                "advantage_low": low,
                "advantage_high": high,
                "cliffs_delta": delta,
                "magnitude": magnitude(delta),
            }
        )
    columns = ["alg_a", "alg_b", "n_common", "advantage", "advantage_low", "advantage_high"]
    return pd.DataFrame(rows, columns=[*columns, "cliffs_delta", "magnitude"])
