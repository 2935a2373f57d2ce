"""Altair specs of a fit's headline views, for 5 or 50 algorithms: the ranking and the pair x
pair decision matrix under both interpretations (frames: :mod:`.frames_decisions`).

Made for reports and the widget's summary: each cell of the decision matrix says its pair's
numbers in words and carries the pair's key, so the widget highlights the pair clicked.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..core.options import INTERPRETATIONS
from ..core.palette import MATRIX_DECISION_COLORS, NEUTRAL_COLORS
from .encodings import (
    alt,
    flipped_param,
    highlight_params,
    independent_x,
    inline_rows,
    pair_outline,
    pair_tooltip,
)

__all__ = ["LONG_CHART_ROWS", "decision_matrix_chart", "ranking_chart", "with_top_axis"]

#: Charts with more rows than this get their x axis at the top as well as at the bottom.
LONG_CHART_ROWS = 25

_ROW_STEP = 16
#: Smallest cell (px) of a decision matrix, whose labels are then 9 px: smaller ones (5 px
#: cells at 50 algorithms) left labels no one could read. Past _READABLE_ALGORITHMS a
#: matrix of such cells would be wider than any screen, and its cells shrink to 5 px.
_MIN_CELL = 10
_READABLE_ALGORITHMS = 100
#: Width of one character of a 12 px header label, a generous average (for spacing).
_HEADER_CHAR_PX = 7


def with_top_axis(
    chart: Any, *, domain: Sequence[float], title: str | None = None, fmt: str | None = None
) -> Any:
    """``chart`` with a second x axis at the top (same scale), for charts too long to read
    against their bottom axis alone.

    Parameters
    ----------
    chart
        A single-view or layered Altair chart with a quantitative x scale on ``domain``.
    domain
        The x scale's domain (the top axis is drawn on the same one).
    title
        Title of the top axis (``None``: none).
    fmt
        d3 format of its labels (e.g. ``"%"``), as on the bottom axis.
    """
    anchor = (
        alt.Chart(inline_rows(pd.DataFrame({"x": [float(domain[0])]})))
        .mark_point(opacity=0)
        .encode(
            x=alt.X(
                "x:Q",
                scale=alt.Scale(domain=list(domain)),
                axis=alt.Axis(orient="top", title=title, format=fmt or alt.Undefined),
            )
        )
    )
    return alt.layer(chart, anchor, resolve=independent_x())


def _algorithm_axis(n: int, *, labels: bool = True) -> alt.Y:
    return alt.Y(
        "algorithm:N",
        sort=alt.EncodingSortField("order", op="min"),
        title=None,
        axis=alt.Axis(labels=labels, ticks=labels, domain=labels),
    )


def _long(panel: Any, n: int, domain: Sequence[float]) -> Any:
    return with_top_axis(panel, domain=domain) if n > LONG_CHART_ROWS else panel


def ranking_chart(ranking: pd.DataFrame, *, hdi: float, width: int = 220) -> alt.HConcatChart:
    """Ranking, best at the top: mean ability (sum-to-zero) with its HDI, P(best) and the
    expected rank, side by side on one algorithm axis.

    Parameters
    ----------
    ranking
        ``BBTResult.ranking()``: abilities centred per draw (sum-to-zero, paper Sec. 4),
        best first.
    hdi
        HDI mass (for the title).
    width
        Width of the ability panel; the two others are narrower.
    """
    frame = ranking.reset_index(drop=True).copy()
    frame["order"] = np.arange(len(frame))
    n = len(frame)
    height = alt.Step(_ROW_STEP)
    lo = float(min(frame["low"].min(), 0.0))
    hi = float(max(frame["high"].max(), 0.0))
    pad = 0.05 * (hi - lo or 1.0)
    ability_domain = [lo - pad, hi + pad]
    base = alt.Chart(inline_rows(frame))
    # every mark of a row says the row in words
    tooltip = [
        alt.Tooltip("algorithm:N"),
        alt.Tooltip("mean_beta:Q", format=".3f", title="mean ability (sum-to-zero)"),
        alt.Tooltip("low:Q", format=".3f", title=f"{hdi:.0%} HDI from"),
        alt.Tooltip("high:Q", format=".3f", title=f"{hdi:.0%} HDI to"),
        alt.Tooltip("p_best:Q", format=".3f", title="probability of being the best"),
        alt.Tooltip("expected_rank:Q", format=".2f", title="expected rank (1 = best)"),
    ]
    ability_x = alt.X(
        "low:Q",
        scale=alt.Scale(domain=ability_domain, nice=False),
        title=f"ability − mean ability, {hdi:.0%} HDI",
    )
    # properties given as each chart is made: a .properties() call copies the chart again
    ability = alt.layer(
        alt.Chart().mark_rule(color="#636363", strokeDash=[3, 3]).encode(x=alt.XDatum(0)),
        base.mark_rule(strokeWidth=3, color=NEUTRAL_COLORS["interval"]).encode(
            x=ability_x, x2=alt.X2("high:Q"), y=_algorithm_axis(n), tooltip=tooltip
        ),
        base.mark_point(filled=True, size=50, color=NEUTRAL_COLORS["estimate"]).encode(
            x=alt.X("mean_beta:Q"), y=_algorithm_axis(n), tooltip=tooltip
        ),
        width=width,
        height=height,
    )
    hidden = _algorithm_axis(n, labels=False)  # the two panels beside it share it
    best = base.mark_bar(color=NEUTRAL_COLORS["bar"]).encode(
        x=alt.X("p_best:Q", scale=alt.Scale(domain=[0, 1]), title="P(best)"),
        y=hidden,
        tooltip=tooltip,
    )
    best.width, best.height = 110, height
    rank = base.mark_point(filled=True, size=50, color=NEUTRAL_COLORS["estimate"]).encode(
        x=alt.X(
            "expected_rank:Q",
            scale=alt.Scale(domain=[1, max(n, 2)], nice=False),
            title="expected rank (1 = best)",
            axis=alt.Axis(tickMinStep=1, format="d"),
        ),
        y=hidden,
        tooltip=tooltip,
    )
    rank.width, rank.height = 130, height
    return alt.hconcat(
        _long(ability, n, ability_domain),
        _long(best, n, [0, 1]),
        _long(rank, n, [1, max(n, 2)]),
        spacing=8,
        title=alt.TitleParams(
            "Ranking: ability (sum-to-zero), P(best), expected rank",
            subtitle=f"dot: posterior mean; bar: {hdi:.0%} HDI; dashed: the average algorithm",
            anchor="start",
        ),
    )


def _interpretation_label(counts: pd.DataFrame) -> dict[str, str]:
    return {
        r.interpretation: (
            f"{r.interpretation} ({'Sec. 9.2' if r.interpretation == 'weak' else 'Sec. 9.3'}): "
            f"{r.better} better, {r.equivalent} equivalent"
        )
        for r in counts.itertuples(index=False)
    }


def decision_matrix_chart(
    decisions: pd.DataFrame, counts: pd.DataFrame, *, size: int = 300, clickable: bool = True
) -> alt.FacetChart:
    """Pair x pair decisions, weak and strong side by side: cell (row, column) says whether
    the row algorithm is claimed better, worse, equivalent or neither.

    Parameters
    ----------
    decisions
        :func:`bbt_widget.charts.decision_frame`.
    counts
        :func:`bbt_widget.charts.claim_counts` of the same summary (for the panel headers).
    size
        Target side of each matrix in pixels; cells are 10 to 18 px (labels 9 to 11 px),
        5 px past 100 algorithms.
    clickable
        Whether the subtitle says a click highlights a pair (the widget); a static report's
        chart cannot be clicked.
    """
    n = int(max(decisions["row_order"].max(), decisions["col_order"].max()) + 1)
    smallest = _MIN_CELL if n <= _READABLE_ALGORITHMS else 5
    cell = int(min(18, max(smallest, size // max(n, 1))))
    frame = decisions.copy()
    frame["panel"] = frame["interpretation"].map(_interpretation_label(counts))
    font = 11 if cell >= 12 else 9 if cell >= _MIN_CELL else 8
    matrix = (
        alt.Chart(width=alt.Step(cell), height=alt.Step(cell))
        .mark_rect()
        .encode(
            # the highlighted pair outlined (parameter sel_pair, set by a click on a cell or
            # on any linked view), both its cells
            **pair_outline(),
            tooltip=pair_tooltip(),
            x=alt.X(
                "col:N",
                sort=alt.EncodingSortField("col_order", op="min"),
                title="column",
                axis=alt.Axis(orient="top", labelAngle=-90, labelFontSize=font),
            ),
            y=alt.Y(
                "row:N",
                sort=alt.EncodingSortField("row_order", op="min"),
                title="row",
                axis=alt.Axis(labelFontSize=font),
            ),
            color=alt.Color(
                "decision:N",
                scale=alt.Scale(
                    domain=list(MATRIX_DECISION_COLORS), range=list(MATRIX_DECISION_COLORS.values())
                ),
                legend=alt.Legend(title="decision (row vs column)", orient="top"),
            ),
        )
    )
    order = [
        _interpretation_label(counts)[i]
        for i in INTERPRETATIONS
        if i in set(frame["interpretation"])
    ]
    # Each header on two lines ("weak (Sec. 9.2)" / "3 better, 1 equivalent"), and the
    # panels at least a header apart: with few algorithms a matrix is narrower than its
    # header, and side by side the headers would print over each other.
    longest = max((len(part) for label in order for part in label.split(": ")), default=0)
    # matrices larger than ``size`` (readable cells for many algorithms) one above the other,
    # each with its own column labels: side by side they would not fit a page
    stacked = n * cell > size
    spacing = 20 if stacked else max(20, _HEADER_CHAR_PX * longest - n * cell + 10)
    header = alt.Header(labelFontSize=12, labelExpr="split(datum.label, ': ')")
    panels: Any = alt.Column("panel:N", sort=order, title=None, header=header)
    if stacked:
        header = alt.Header(
            labelFontSize=12,
            labelExpr="split(datum.label, ': ')",
            labelOrient="top",
            labelAngle=0,
            labelAnchor="start",
        )
        panels = alt.Row("panel:N", sort=order, title=None, header=header)
    chart = matrix.facet(
        **{"row" if stacked else "column": panels},
        data=inline_rows(frame),
        spacing=spacing,
        resolve=alt.Resolve(
            axis=alt.AxisResolveMap(x="independent") if stacked else alt.AxisResolveMap(y="shared")
        ),
        title=alt.TitleParams(
            "Decisions per pair, weak and strong interpretation",
            subtitle=(
                "rows and columns best first; read a cell as 'row vs column'"
                + ("; click a cell to highlight its pair" if clickable else "")
            ),
            anchor="start",
        ),
    )
    chart.params = [*highlight_params(), flipped_param()]
    return chart
