"""Altair specs of the widget's linked view: P(a > b) intervals, ROPE overlap, PPC, PPC
coverage and the win matrix, each alone with its data inlined (:func:`chart_set`, for export)
and all in one linked view (:func:`linked_chart`).

Each builder accepts either a DataFrame (data inlined: for export, ``w.charts``) or the *name*
of a dataset (for the widget, which sends data separately so that a ROPE change only swaps
data in the live view). The frames come from :mod:`.frames`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...core.palette import ROPE_REGION_COLORS
from .encodings import (
    FOCUS,
    HDI_PARAM,
    HIGHLIGHT,
    Data,
    alt,
    chart_data,
    highlight_opacity,
    highlight_params,
    pair_axis,
    verdict_color,
)
from .frames import build_frames
from .specs_ppc import ppc_chart

__all__ = [
    "chart_set",
    "coverage_chart",
    "intervals_chart",
    "linked_chart",
    "result_charts",
    "rope_overlap_chart",
    "win_matrix_chart",
]


def intervals_chart(
    intervals: Data, rope: Data, *, hdi: float | None = 0.89, width: int = 360
) -> alt.LayerChart:
    """P(a > b) per pair (paper Figures 1 and 3).

    The dot is the median, the thick bar the HDI, the thin line the full range of the draws,
    the gray band the ROPE; pairs run best > worse from the top; colour is the decision.
    ``hdi=None`` takes the mass for the title from the ``hdi_mass`` parameter (linked view).
    """
    base = alt.Chart(chart_data(intervals)).transform_filter(FOCUS)
    x_scale = alt.Scale(domain=[0, 1])
    tooltip = [
        alt.Tooltip("pair:N"),
        alt.Tooltip("decision:N"),
        alt.Tooltip("mean:Q", format=".3f"),
        alt.Tooltip("median:Q", format=".3f"),
        alt.Tooltip("low:Q", format=".3f", title="HDI low"),
        alt.Tooltip("high:Q", format=".3f", title="HDI high"),
        alt.Tooltip("delta:Q", format=".3f"),
        alt.Tooltip("above_50:Q", format=".3f", title="above.50"),
        alt.Tooltip("in_rope:Q", format=".3f", title="in.rope"),
    ]
    band = (
        alt.Chart(chart_data(rope))
        .mark_rect(color="#bdbdbd", opacity=0.35)
        .encode(
            x=alt.X("low:Q", scale=x_scale),
            x2="high:Q",
            tooltip=[
                alt.Tooltip("low:Q", title="ROPE low"),
                alt.Tooltip("high:Q", title="ROPE high"),
            ],
        )
    )
    half = alt.Chart().mark_rule(color="#636363", strokeDash=[3, 3]).encode(x=alt.datum(0.5))
    full = base.mark_rule(strokeWidth=1).encode(
        x=alt.X("min:Q", scale=x_scale, title="P(a > b)"),
        x2="max:Q",
        y=pair_axis(),
        color=verdict_color(),
        opacity=highlight_opacity(),
        tooltip=tooltip,
    )
    thick = base.mark_rule(strokeWidth=6).encode(
        x="low:Q",
        x2="high:Q",
        y=pair_axis(),
        color=verdict_color(),
        opacity=highlight_opacity(),
        tooltip=tooltip,
    )
    dot = base.mark_point(filled=True, size=70, stroke="white", strokeWidth=1).encode(
        x="median:Q",
        y=pair_axis(),
        color=verdict_color(),
        opacity=highlight_opacity(),
        tooltip=tooltip,
    )
    return alt.layer(band, half, full, thick, dot).properties(
        width=width,
        title=alt.TitleParams(
            _hdi_title(hdi),
            subtitle="gray band: ROPE; pairs best > worse; click a pair to highlight it",
            anchor="start",
        ),
    )


def _hdi_title(hdi: float | None) -> str | alt.ExprRef:
    if hdi is not None:
        return f"P(a > b): median, {hdi:.0%} HDI, full range"
    return alt.ExprRef(
        expr=f"'P(a > b): median, ' + format({HDI_PARAM}, '.0%') + ' HDI, full range'"
    )


def rope_overlap_chart(overlap: Data, *, width: int = 220) -> alt.Chart:
    """Posterior mass of each pair below / inside / above the ROPE (stacked to one)."""
    return (
        alt.Chart(chart_data(overlap))
        .transform_filter(FOCUS)
        .mark_bar()
        .encode(
            x=alt.X("mass:Q", stack="normalize", title="posterior mass", axis=alt.Axis(format="%")),
            y=pair_axis(),
            color=alt.Color(
                "region:N",
                scale=alt.Scale(
                    domain=list(ROPE_REGION_COLORS), range=list(ROPE_REGION_COLORS.values())
                ),
                legend=alt.Legend(title="P(a > b) is", orient="bottom"),
            ),
            order=alt.Order("region_order:Q"),
            opacity=highlight_opacity(),
            tooltip=[
                alt.Tooltip("pair:N"),
                alt.Tooltip("region:N"),
                alt.Tooltip("mass:Q", format=".3f"),
            ],
        )
        .properties(width=width, title=alt.TitleParams("ROPE overlap", anchor="start"))
    )


def coverage_chart(coverage: Data) -> alt.Chart:
    """PPC coverage (paper Table 5): share of observed counts inside each HDI."""
    return (
        alt.Chart(chart_data(coverage))
        .mark_text(fontSize=12)
        .encode(
            y=alt.Y("hdi_label:N", sort=alt.EncodingSortField("hdi", op="min"), title=None),
            x=alt.X(
                "quantity:N",
                title=None,
                sort=["wins", "ties"],
                axis=alt.Axis(orient="top", labelAngle=0),
            ),
            text=alt.Text("proportion:Q", format=".2f"),
            tooltip=[
                alt.Tooltip("hdi:Q", title="HDI mass"),
                alt.Tooltip("quantity:N"),
                alt.Tooltip("proportion:Q", format=".3f", title="observed inside"),
            ],
        )
        .properties(width=100, title=alt.TitleParams("PPC coverage", anchor="start"))
    )


def win_matrix_chart(matrix: Data, *, cell: int = 28) -> alt.LayerChart:
    """Win/loss/tie matrix of the fitted table: cell (row, col) counts wins of row over col."""
    base = alt.Chart(chart_data(matrix)).encode(
        x=alt.X("col:N", sort=alt.EncodingSortField("col_order", op="min"), title="loser"),
        y=alt.Y("row:N", sort=alt.EncodingSortField("row_order", op="min"), title="winner"),
    )
    shown = f"{HIGHLIGHT} && {FOCUS}"
    tooltip = [
        alt.Tooltip("row:N", title="algorithm"),
        alt.Tooltip("col:N", title="versus"),
        alt.Tooltip("wins:Q", title="wins (given to the model)"),
        alt.Tooltip("losses:Q", title="losses (given to the model)"),
        alt.Tooltip("ties:Q", title="ties (given to the model)"),
        alt.Tooltip("share:Q", format=".2f", title="win share"),
    ]
    rect = base.mark_rect(stroke="white").encode(
        color=alt.Color(
            "share:Q",
            scale=alt.Scale(scheme="blueorange", domain=[0, 1], reverse=True),
            legend=alt.Legend(title="win share", orient="right"),
        ),
        opacity=alt.when(shown).then(alt.value(1.0)).otherwise(alt.value(0.25)),
        tooltip=tooltip,
    )
    text = base.mark_text(fontSize=10).encode(
        text=alt.Text("wins:Q", format=".0f"),
        tooltip=tooltip,
    )
    return alt.layer(rect, text).properties(
        width=alt.Step(cell),
        height=alt.Step(cell),
        title=alt.TitleParams(
            "Wins (row beats column)",
            subtitle="counts given to the model, after the tie policy",
            anchor="start",
        ),
    )


def _params(selected_pair: str, focus: str, hdi: float) -> list[alt.VariableParameter]:
    return [
        *highlight_params(selected_pair, focus),
        alt.VariableParameter(name=HDI_PARAM, value=hdi),
    ]


def chart_set(
    frames: Mapping[str, Data],
    *,
    hdi: float = 0.89,
    selected_pair: str = "",
    focus: str = "",
) -> dict[str, Any]:
    """Every chart of one view by name, data inlined (for export): ``intervals``,
    ``rope_overlap``, ``ppc``, ``coverage``, ``win_matrix`` and ``linked``."""
    params = _params(selected_pair, focus, hdi)
    standalone = {
        "intervals": intervals_chart(frames["intervals"], frames["rope"], hdi=hdi),
        "rope_overlap": rope_overlap_chart(frames["overlap"]),
        "ppc": ppc_chart(frames["ppc"]),
        "coverage": coverage_chart(frames["coverage"]),
        "win_matrix": win_matrix_chart(frames["matrix"]),
    }
    for chart in standalone.values():
        # the highlight expressions read these parameters: a chart on its own (exported,
        # saved) must define them itself, at its top level like linked_chart does
        own = [] if chart.params is alt.Undefined else list(chart.params)
        chart.params = own + params
    standalone["linked"] = linked_chart(frames, hdi=hdi, selected_pair=selected_pair, focus=focus)
    return standalone


def result_charts(
    result: Any,
    *,
    rope: tuple[float, float] = (0.45, 0.55),
    hdi: float = 0.89,
    control: str | None = None,
    interpretation: str = "weak",
) -> dict[str, Any]:
    """The widget's charts for a result, without a widget (scripts, reports, exports)."""
    frames = build_frames(
        result, rope=rope, hdi=hdi, control=control, interpretation=interpretation
    )
    return chart_set(frames.as_dict(), hdi=hdi)


def linked_chart(
    data: Mapping[str, Data],
    *,
    hdi: float = 0.89,
    selected_pair: str = "",
    focus: str = "",
) -> alt.VConcatChart:
    """All charts in one linked view (shared highlight and focus parameters).

    Parameters
    ----------
    data
        For each name in ``intervals, overlap, rope, ppc, coverage, matrix``: a frame
        (inlined) or a dataset name.
    hdi
        HDI mass, for titles (initial value of the ``hdi_mass`` parameter).
    selected_pair, focus
        Initial values of the highlight parameters.
    """
    top = alt.hconcat(
        intervals_chart(data["intervals"], data["rope"], hdi=None),
        rope_overlap_chart(data["overlap"]),
    ).resolve_scale(color="independent")
    middle = ppc_chart(data["ppc"])
    bottom = alt.hconcat(
        win_matrix_chart(data["matrix"]), coverage_chart(data["coverage"]), spacing=40
    )
    chart = (
        alt.vconcat(top, middle, bottom, spacing=24)
        .resolve_scale(color="independent", opacity="independent")
        .configure_view(stroke=None)
        .configure_axis(labelFontSize=11, titleFontSize=11)
    )
    # Plain (non-selection) parameters go straight on the top level; add_params() would push
    # them into every sub-chart.
    chart.params = _params(selected_pair, focus, hdi)
    # resize: re-run the layout on every update, so the view shrinks when "Show pairs of"
    # leaves fewer rows (Vega only ever grows a "pad" view otherwise: a blank tail).
    chart.autosize = alt.AutoSizeParams(type="pad", resize=True)
    return chart
