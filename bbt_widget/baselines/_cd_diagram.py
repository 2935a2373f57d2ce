"""Critical-difference diagrams as pure Altair charts (paper Figure 6; Demšar 2006, Fig. 1-2).

Layout (Demšar 2006, Fig. 1): an axis on top, best on the left; each algorithm hangs from its
position by an elbow line to its label, the better half on the left and the worse half on the
right; thick bars join algorithms that are not told apart; a bar of length CD shows the
critical difference when there is one. With a control (Fig. 2) a bar joins the control to each
algorithm not significantly different from it, and the CD interval is centred on the control.
Algorithms named in ``highlight`` are drawn in their own colour, with a legend. Every mark
reads inline data (no URL), so the spec renders offline.

:func:`scores_cd_diagram` draws Nemenyi's (or Bonferroni-Dunn's) and the Wilcoxon-Holm tests with
:func:`bbt_widget.charts.specs_cd.critical_difference_chart`, the drawing the BBT
diagram (``bbt.charts.fit_cd_diagram``) uses too.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import altair as alt
import pandas as pd

from ..charts.encodings import LABEL_MAX_CHARS
from ..charts.specs_cd import critical_difference_chart, diagram_frames
from ..core.data import TidyResults, as_tidy
from ..core.tidy import Layout, Unpack
from ..core.validation import check_count
from ._common import check_alpha, check_choice, check_control, dataset_means
from ._demsar import NemenyiResult, complete_blocks, mean_ranks, nemenyi, significance_groups
from ._wilcoxon import ADJUSTMENTS, WilcoxonResult, wilcoxon_from_means

if TYPE_CHECKING:  # typing.Unpack is Python 3.11; the checker knows it on 3.10 too
    from ..core.tidy import LayoutKeywords

#: The tests whose diagram :func:`scores_cd_diagram` draws.
TESTS = ("nemenyi", "wilcoxon")
__all__ = [
    "LABEL_MAX_CHARS",
    "TESTS",
    "critical_difference_chart",
    "diagram_frames",
    "scores_cd_diagram",
]


def scores_cd_diagram(
    data: pd.DataFrame | TidyResults | NemenyiResult,
    *,
    alpha: float | None = None,
    test: str = "nemenyi",
    adjust: str = "holm",
    control: str | None = None,
    highlight: str | Iterable[str] | None = None,
    width: int = 480,
    title: str | None = None,
    **layout: Unpack[LayoutKeywords],
) -> alt.LayerChart:
    """Draw the critical-difference diagram of Nemenyi's or the Wilcoxon-Holm tests.

    Parameters
    ----------
    data
        Results in any layout :func:`bbt_widget.win_table` accepts, or a
        :class:`NemenyiResult` already computed (then the layout keywords, ``alpha``,
        ``test`` and ``control`` must be left out).
    alpha
        Significance level (default 0.05).
    test
        ``"nemenyi"``: bars join algorithms whose mean ranks are within the critical
        difference (Demšar 2006). ``"wilcoxon"``: the same mean-rank axis, bars join the
        maximal runs of algorithms with no significant pairwise Wilcoxon test after the
        ``adjust`` correction (Benavoli et al. 2016's recommendation; no CD bar, as there is
        no single critical difference).
    adjust
        The Wilcoxon tests' adjustment, ``"holm"`` or ``"hochberg"``.
    control
        Compare this algorithm with each other one only (Bonferroni-Dunn for
        ``"nemenyi"``, ``k - 1`` adjusted Wilcoxon tests): a bar joins the control to each
        algorithm not significantly different from it.
    highlight
        Algorithms to draw in their own colour (e.g. the methods a paper proposes), with a
        legend.
    width
        Width of the rank axis in pixels (labels are drawn beside it).
    title
        Chart title; by default the test, CD, alpha, number of data sets and Friedman's p.
    **layout
        How to read the results: :class:`~bbt_widget.core.tidy.LayoutKeywords`.

    Returns
    -------
    altair.LayerChart
        A self-contained chart (data inline).

    Raises
    ------
    ValueError
        Unknown ``test`` or ``adjust``, a ``control`` or ``highlight`` that is not an
        algorithm, or data keywords next to a ready result.
    """
    asked = Layout.from_keywords(layout)
    width = check_count(width, "width")
    test = check_choice(test, "test", TESTS)
    adjust = check_choice(adjust, "adjust", ADJUSTMENTS)
    if isinstance(data, WilcoxonResult):
        raise TypeError(
            "a WilcoxonResult holds no mean ranks to place the algorithms; pass the results "
            "themselves with test='wilcoxon'"
        )
    if isinstance(data, NemenyiResult):
        given = asked.as_dict()
        extra = [k for k, v in given.items() if v is not None and k != "lower_is_better"]
        extra += ["lower_is_better"] if asked.lower_is_better else []
        extra += ["alpha"] if alpha is not None else []
        extra += ["control"] if control is not None else []
        extra += ["test"] if test != "nemenyi" else []
        if extra:
            raise ValueError(
                f"data is already a Nemenyi result, so {', '.join(extra)} cannot apply; pass "
                "the raw results instead to read them with these settings"
            )
        return _nemenyi_chart(data, highlight, width, title)
    if test == "nemenyi":
        res = nemenyi(data, **layout, alpha=0.05 if alpha is None else alpha, control=control)
        return _nemenyi_chart(res, highlight, width, title)
    alpha = check_alpha(0.05 if alpha is None else alpha)
    means = dataset_means(as_tidy(data, **layout))
    control = check_control(control, means.algorithms)
    complete, _ = complete_blocks(means, "The Wilcoxon diagram (its mean-rank axis)")
    ranks = mean_ranks(complete)
    wil = wilcoxon_from_means(means, alpha, adjust, control)
    if title is None:
        vs = f" vs {control}" if control is not None else ""
        title = (
            f"Wilcoxon-{adjust.capitalize()}{vs} (alpha = {alpha:g}); mean ranks over "
            f"{len(complete.datasets)} data sets"
        )
    returned: alt.LayerChart = critical_difference_chart(
        ranks,
        significance_groups(ranks, wil.table, control),
        axis_title="mean rank",
        control=control,
        highlight=highlight,
        width=width,
        title=title,
    )
    return returned


def _nemenyi_chart(
    res: NemenyiResult, highlight: str | Iterable[str] | None, width: int, title: str | None
) -> alt.LayerChart:
    if title is None:
        f = res.friedman
        name = "Nemenyi" if res.control is None else f"Bonferroni-Dunn vs {res.control}"
        title = (
            f"{name} CD = {res.cd:.3f} (alpha = {res.alpha:g}, {res.n_datasets} data sets; "
            f"Friedman p = {f.pvalue:.2g})"
        )
    returned: alt.LayerChart = critical_difference_chart(
        res.mean_ranks,
        res.groups(),
        axis_title="mean rank",
        cd=res.cd,
        control=res.control,
        highlight=highlight,
        width=width,
        title=title,
    )
    return returned
