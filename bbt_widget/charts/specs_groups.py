"""Altair spec of the decisions by group: the pairs x groups heatmap of a fit with data sets in
groups (``bbt.fit(..., group=...)``), one row per pair, the pooled decision then each
group's, coloured by the decision under the interpretation of the frame
(:func:`~bbt_widget.charts.frames_groups.group_cells_frame`), in the colours of every
other decision chart. The widget draws it linked with its other views (the highlighted pair,
"Show pairs of" and the group chosen in its selector, outlined).
"""

from __future__ import annotations

from typing import Any

from ..core.options import DEFAULT_HDI, DEFAULT_ROPE, Rule
from ..core.palette import NEUTRAL_COLORS, SWEEP_DECISION_COLORS
from .encodings import FOCUS, LABEL_AXIS, Data, alt, chart_data, highlight_opacity, highlight_params
from .frames import check_fit
from .frames_groups import GROUP_CELLS, GROUP_STATUS_MARKS, group_cells

__all__ = ["GROUP_PARAM", "group_decisions_chart", "group_heatmap_chart", "groups_chart"]

#: Vega parameter holding the column of the group the other views show (0: pooled).
GROUP_PARAM = "sel_group"

#: The decisions a cell can show (a group's fit has no failed runs, unlike a sweep's).
_COLORS = {k: v for k, v in SWEEP_DECISION_COLORS.items() if k != "failed"}

_MARKS = "; ".join(f"{mark} {status}" for status, mark in GROUP_STATUS_MARKS.items() if mark)


def group_heatmap_chart(cells: Data, *, cell: int = 14) -> alt.Chart:
    """Pairs (rows: the pairs whose claim changes between groups first, marked) x the pooled
    decision and each group's (columns), coloured by decision.

    ``cells`` is a :func:`group_cells_frame` (inlined) or the name of its dataset. Rows of
    pairs not of the focus algorithm (``sel_focus``) are left out; the highlighted pair
    (``sel_pair``) stands out; the column of ``sel_group`` is outlined.
    """
    title = (
        f"length(data('{GROUP_CELLS}')) > 0 ? 'Decisions by group (' + "
        f"data('{GROUP_CELLS}')[0].interpretation + ' interpretation)' : 'Decisions by group'"
        if isinstance(cells, str)
        else "'Decisions by group'"
    )
    chosen = f"datum.col == {GROUP_PARAM}"
    return (
        alt.Chart(chart_data(cells))
        .transform_filter(FOCUS)
        .mark_rect()
        .encode(
            x=alt.X(
                "column:N",
                sort=alt.EncodingSortField("col", op="min"),
                title=None,
                axis=alt.Axis(orient="top", labelAngle=-30, **LABEL_AXIS),
            ),
            y=alt.Y(
                "row:N",
                sort=alt.EncodingSortField("order", op="min"),
                title=None,
                axis=alt.Axis(**LABEL_AXIS),
            ),
            color=alt.Color(
                "kind:N",
                scale=alt.Scale(domain=list(_COLORS), range=list(_COLORS.values())),
                # every swatch outlined: "not compared" is white, and the legend would
                # otherwise take the cells' white separating stroke (a blank swatch)
                legend=alt.Legend(
                    title="decision (a = first of the pair)",
                    orient="bottom",
                    symbolStrokeColor=NEUTRAL_COLORS["reference"],
                    symbolStrokeWidth=1,
                ),
            ),
            opacity=highlight_opacity(0.35),
            stroke=alt.StrokeValue(
                **alt.when(chosen).then(alt.value("#000000")).otherwise(alt.value("#ffffff"))
            ),
            strokeWidth=alt.StrokeWidthValue(
                **alt.when(chosen).then(alt.value(2.0)).otherwise(alt.value(0.5))
            ),
            tooltip=[
                alt.Tooltip("label:N", title="pair"),
                alt.Tooltip("column:N", title="group"),
                alt.Tooltip("decision:N"),
                alt.Tooltip("mean:Q", format=".3f", title="mean P(a > b)"),
                alt.Tooltip("interval:N", title="HDI"),
                alt.Tooltip("hdi:Q", format=".2f", title="HDI mass"),
                alt.Tooltip("above_50:Q", format=".3f", title="probability that P(a > b) > 0.5"),
                alt.Tooltip(
                    "in_rope:Q", format=".3f", title="probability that P(a > b) is in the ROPE"
                ),
                alt.Tooltip("status:N", title="across groups"),
            ],
        )
        .properties(
            width=alt.Step(cell * 4),
            height=alt.Step(cell),
            title=alt.TitleParams(
                alt.ExprRef(expr=title),
                subtitle=f"rows: the pairs whose claim changes between groups first ({_MARKS})",
                anchor="start",
            ),
        )
    )


def groups_chart(
    cells: Data, *, selected_pair: str = "", focus: str = "", column: int = 0
) -> alt.Chart:
    """The widget's group view: :func:`group_heatmap_chart` with its parameters (the
    highlighted pair, the focus algorithm and the chosen group's column)."""
    chart = (
        group_heatmap_chart(cells)
        .configure_view(stroke=None)
        .configure_axis(labelFontSize=11, titleFontSize=11)
    )
    chart.params = [
        *highlight_params(selected_pair, focus),
        alt.VariableParameter(name=GROUP_PARAM, value=column),
    ]
    chart.autosize = alt.AutoSizeParams(type="pad", resize=True)
    return chart


def group_decisions_chart(
    result: Any,
    *,
    interpretation: Rule = "weak",
    rope: tuple[float, float] = DEFAULT_ROPE,
    hdi: float = DEFAULT_HDI,
) -> alt.Chart:
    """The widget's "Decisions by group" heatmap of a ``GroupedBBTResult``, data inlined, with
    nothing highlighted (for export: ``chart.save("groups.svg")``)."""
    check_fit(result, "group_decisions_chart")
    cells = group_cells(result, interpretation=interpretation, rope=rope, hdi=hdi)
    return groups_chart(cells)
