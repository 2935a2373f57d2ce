"""Pairwise Wilcoxon signed-rank tests with Holm or Hochberg adjustment (paper Sec. 7.2).

The paper's Table 14 was made with R's ``pairwise.wilcox.test(paired = TRUE,
p.adjust.method = "hochberg")`` on the per-data-set means, so each test here behaves like
R's ``wilcox.test(x, y, paired = TRUE)`` with its defaults:

* zero differences are dropped (Wilcoxon's method);
* the exact null distribution is used when fewer than 50 non-zero differences remain and
  there are neither zeros nor tied absolute differences;
* otherwise the normal approximation with the tie-corrected variance and a continuity
  correction.

scipy's ``wilcoxon`` computes both forms; this module only chooses between them as R does
(scipy's own ``method="auto"`` chooses differently and omits the continuity correction).
Algorithms are ordered by the median of their per-data-set means (the paper's Table 14a).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats

from ..core.data import TidyResults, as_tidy
from ..core.posterior import ordered_pairs
from ..core.tidy import Unpack
from ..core.wintable import snap_ties
from ._common import (
    Means,
    TableSummary,
    check_alpha,
    check_choice,
    check_control,
    control_pairs,
    dataset_means,
    noise_level,
    pair_frame,
)

if TYPE_CHECKING:  # typing.Unpack is Python 3.11; the checker knows it on 3.10 too
    from ..core.tidy import LayoutKeywords

#: R's wilcox.test uses the exact distribution below this many non-zero differences.
EXACT_BELOW = 50
ADJUSTMENTS = ("holm", "hochberg")


@dataclass(frozen=True)
class WilcoxonResult(TableSummary):
    """Pairwise Wilcoxon signed-rank tests with adjusted p-values.

    Attributes
    ----------
    table
        One row per pair, ordered by median (``"a > b"``: a has the higher median):
        ``pair, alg_a, alg_b``; ``n`` (data sets where both have a result); ``r_plus`` and
        ``r_minus`` (rank sums of the differences in favour of a and of b; R's ``V`` is
        ``r_plus``); ``statistic`` (``min(r_plus, r_minus)``, scipy's); ``pvalue``
        (two-sided, unadjusted); ``p_holm`` and ``p_hochberg`` (adjusted over the pairs
        tested: all of them, or the ``k - 1`` with the control);
        ``method`` (``"exact"`` or ``"normal"``); ``significant`` (the ``adjust``-ed p
        ``<= alpha``) and ``decision`` (``"a better"``/``"b better"`` by the larger rank
        sum when significant, else ``"no claim"``).
    medians
        Median of the per-data-set means per algorithm, best first (paper Table 14a).
    alpha
        Significance level.
    adjust
        The adjustment behind ``significant``: ``"holm"`` or ``"hochberg"``.
    control
        The algorithm every test compares with (only its ``k - 1`` pairs are in
        ``table``), or ``None`` (every pair).
    """

    table: pd.DataFrame
    medians: pd.Series
    alpha: float
    adjust: str
    control: str | None = None


def wilcoxon_holm(
    data: pd.DataFrame | TidyResults,
    *,
    alpha: float = 0.05,
    adjust: str = "holm",
    control: str | None = None,
    **layout: Unpack[LayoutKeywords],
) -> WilcoxonResult:
    """Wilcoxon signed-rank test for every pair, p-values adjusted by Holm and Hochberg;
    with a ``control``, for the control against each other algorithm only.

    Each pair uses the data sets where both algorithms have a result.

    Parameters
    ----------
    data
        Results in any layout :func:`bbt_widget.win_table` accepts.
    alpha
        Significance level for ``significant``.
    adjust
        ``"holm"`` (default; valid under any dependence between the tests) or
        ``"hochberg"`` (the paper's Table 14; more powerful, assumes independent or
        positively dependent tests). Both adjusted columns are always reported.
    control
        An algorithm to compare with each other one only: ``k - 1`` tests, adjusted over
        those ``k - 1`` (the practice when a paper proposes one method). ``None``: every
        pair, adjusted over ``k (k - 1) / 2``.
    **layout
        How to read the results: :class:`~bbt_widget.core.tidy.LayoutKeywords` (``sd`` is
        accepted and not used).

    Returns
    -------
    WilcoxonResult
        The per-pair ``table`` and the ``medians`` that order it.

    Raises
    ------
    ValueError
        ``control`` is not one of the algorithms.
    """
    alpha = check_alpha(alpha)
    adjust = check_choice(adjust, "adjust", ADJUSTMENTS)
    means = dataset_means(as_tidy(data, **layout))
    control = check_control(control, means.algorithms)
    return wilcoxon_from_means(means, alpha, adjust, control)


def wilcoxon_from_means(
    means: Means, alpha: float, adjust: str, control: str | None = None
) -> WilcoxonResult:
    medians = means.medians()
    names = list(medians.index)
    cols = [means.algorithms.index(a) for a in names]
    values = means.values[:, cols]
    pairs = control_pairs(ordered_pairs(list(range(len(names)))), names, control)
    rows = [
        signed_rank_test(values[:, i] - values[:, j], noise_level(values[:, [i, j]]))
        for i, j in pairs
    ]
    table = pd.concat([pair_frame(names, pairs), pd.DataFrame(rows)], axis=1)
    p = table["pvalue"].to_numpy()
    table["p_holm"] = holm(p)
    table["p_hochberg"] = hochberg(p)
    significant = table[f"p_{adjust}"].to_numpy() <= alpha  # NaN compares False
    table["significant"] = significant
    a_side = table["r_plus"] > table["r_minus"]
    table["decision"] = np.select(
        [significant & a_side, significant], ["a better", "b better"], default="no claim"
    )
    return WilcoxonResult(table=table, medians=medians, alpha=alpha, adjust=adjust, control=control)


def signed_rank_test(diff: np.ndarray, tol: float = 0.0) -> dict[str, object]:
    """R's ``wilcox.test(paired = TRUE)`` on the differences a - b (NaN = missing pair).

    Absolute differences within ``tol`` of each other are tied (two data sets with the same
    true difference, e.g. one test case out of 100, must rank alike whichever way the
    scores were rounded or oriented). No common data set gives a NaN p-value (left out of
    the adjustments); only zero differences give p = 1 (the two algorithms tied everywhere:
    no evidence either way).
    """
    d = diff[np.isfinite(diff)]
    if tol > 0 and d.size:
        d = np.sign(d) * snap_ties(np.abs(d)[None, :], rel_tol=0.0, abs_tol=tol)[0]
    nonzero = d[d != 0]
    n = int(nonzero.size)
    out: dict[str, object] = {"n": int(d.size), "r_plus": 0.0, "r_minus": 0.0, "statistic": 0.0}
    if n == 0:
        out.update(pvalue=np.nan if d.size == 0 else 1.0, method="none")
        return out
    ranks = stats.rankdata(np.abs(nonzero))
    r_plus = float(ranks[nonzero > 0].sum())
    r_minus = float(ranks[nonzero < 0].sum())
    ties = np.unique(ranks).size != n
    if n < EXACT_BELOW and not ties and n == d.size:
        res = stats.wilcoxon(nonzero, method="exact")
        method = "exact"
    else:
        res = stats.wilcoxon(nonzero, zero_method="wilcox", correction=True, method="approx")
        method = "normal"
    out.update(
        r_plus=r_plus,
        r_minus=r_minus,
        statistic=min(r_plus, r_minus),
        pvalue=float(min(res.pvalue, 1.0)),
        method=method,
    )
    return out


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (R's ``p.adjust(method = "holm")``); NaN kept."""
    return _adjust(np.asarray(p, dtype=float), step_down=True)


def hochberg(p: np.ndarray) -> np.ndarray:
    """Hochberg's step-up adjusted p-values (R's ``p.adjust(method = "hochberg")``)."""
    return _adjust(np.asarray(p, dtype=float), step_down=False)


def _adjust(p: np.ndarray, step_down: bool) -> np.ndarray:
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = ok.size
    if m == 0:
        return out
    order = np.argsort(p[ok], kind="stable")
    sorted_p = p[ok][order]
    factor = m - np.arange(m)  # m, m-1, ..., 1 for the smallest .. largest p
    scaled = factor * sorted_p
    if step_down:  # Holm: running max from the smallest p upwards
        adj = np.maximum.accumulate(scaled)
    else:  # Hochberg: running min from the largest p downwards
        adj = np.minimum.accumulate(scaled[::-1])[::-1]
    out[ok[order]] = np.minimum(adj, 1.0)
    return out
