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

from ..core.options import DEFAULT_HDI, DEFAULT_ROPE, Rule
from ..core.palette import NEUTRAL_COLORS, ROPE_REGION_COLORS, WIN_SHARE_RANGE
from .encodings import (
    FOCUS,
    HDI_PARAM,
    HIGHLIGHT,
    Data,
    alt,
    chart_data,
    highlight_opacity,
    highlight_params,
    independent_x,
    pair_axis,
    verdict_color,
)
from .frames import build_frames, check_fit
from .specs_ppc import ppc_chart

__all__ = [
    "chart_set",
    "checks_chart",
    "coverage_chart",
    "intervals_chart",
    "linked_chart",
    "pairs_chart",
    "result_charts",
    "rope_overlap_chart",
    "win_matrix_chart",
]


def intervals_chart(
    intervals: Data, rope: Data, *, hdi: float | None = DEFAULT_HDI, width: int = 360
) -> alt.LayerChart:
    """P(a > b) per pair (paper Figures 1 and 3).

    The dot is the median, the thick bar the HDI, the thin line the full range of the draws,
    the gray band the ROPE; pairs run best > worse from the top; colour is the decision.
    The x axis spans the pairs shown and the ROPE band (not all of 0-1: HDIs a few hundredths
    wide stay readable) and is drawn at the top as well as at the bottom.
    ``hdi=None`` takes the mass for the title from the ``hdi_mass`` parameter (linked view).
    """
    base = alt.Chart(chart_data(intervals)).transform_filter(FOCUS)
    # zoomed to the data: the layers share this scale, so the ROPE band and the 0.5 rule
    # stay inside the domain; not "nice", which would run past 1
    x_scale = alt.Scale(zero=False, nice=False, padding=8)
    tooltip = [
        alt.Tooltip("pair:N"),
        alt.Tooltip("decision:N"),
        alt.Tooltip("mean:Q", format=".3f"),
        alt.Tooltip("median:Q", format=".3f"),
        alt.Tooltip("low:Q", format=".3f", title="HDI low"),
        alt.Tooltip("high:Q", format=".3f", title="HDI high"),
        alt.Tooltip("delta:Q", format=".3f"),
        alt.Tooltip("above_50:Q", format=".3f", title="probability that P(a > b) > 0.5"),
        alt.Tooltip("in_rope:Q", format=".3f", title="probability that P(a > b) is in the ROPE"),
    ]
    rope_rows = alt.Chart(chart_data(rope))
    band = (
        rope_rows.transform_filter("datum.band")
        .mark_rect(color=NEUTRAL_COLORS["rope band"], opacity=0.35)
        .encode(
            x=alt.X("low:Q", scale=x_scale, axis=None),
            x2=alt.X2("high:Q"),
            tooltip=[
                alt.Tooltip("low:Q", title="ROPE low"),
                alt.Tooltip("high:Q", title="ROPE high"),
            ],
        )
    )
    # the rule's thresholds (0.5, the ROPE's bounds, the strong rule's 0.70), the legend
    # naming the rule: the rows come with the view's data, so a rule change redraws them
    half = rope_rows.mark_rule(color=NEUTRAL_COLORS["reference"]).encode(
        x=alt.X("x:Q", scale=x_scale, axis=None),
        strokeDash=alt.StrokeDash(
            "line:N",
            scale=alt.Scale(range=[[3, 3], [6, 2], [1, 2]]),
            legend=alt.Legend(
                title="thresholds", orient="bottom", direction="vertical", labelLimit=0
            ),
        ),
        tooltip=[alt.Tooltip("line:N", title="threshold"), alt.Tooltip("x:Q", format=".2f")],
    )
    # what the three layers of the pairs share, built once (Altair copies them per layer)
    shared = {
        "y": pair_axis(),
        "color": verdict_color(),
        "opacity": highlight_opacity(),
        "tooltip": tooltip,
    }
    full = base.mark_rule(strokeWidth=1).encode(
        x=alt.X("min:Q", scale=x_scale, title="P(a > b)"), x2=alt.X2("max:Q"), **shared
    )
    thick = base.mark_rule(strokeWidth=6).encode(
        x=alt.X("low:Q", axis=None), x2=alt.X2("high:Q"), **shared
    )
    dot = base.mark_point(filled=True, size=70, stroke="white", strokeWidth=1).encode(
        x=alt.X("median:Q", axis=alt.Axis(orient="top", title=None)), **shared
    )
    # properties given to the layer as it is made: each .properties() or .resolve_*() call
    # on a layered chart copies every layer again
    return alt.layer(
        band,
        half,
        full,
        thick,
        dot,
        resolve=independent_x(),
        width=width,
        title=alt.TitleParams(
            _hdi_title(hdi),
            subtitle=(
                "gray band: ROPE; lines: the rule's thresholds; pairs best > worse; "
                "click a pair to highlight it"
            ),
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
                legend=alt.Legend(title="P(a > b) is", orient="top"),
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


def coverage_chart(coverage: Data) -> alt.LayerChart:
    """PPC coverage (paper Table 5): share of observed counts inside each HDI, beside the
    HDI's nominal mass (what a well-calibrated model would give)."""
    order = ["nominal", "wins", "ties"]
    y = alt.Y("hdi_label:N", sort=alt.EncodingSortField("hdi", op="min"), title=None)
    x = alt.X("quantity:N", title=None, sort=order, axis=alt.Axis(orient="top", labelAngle=0))
    observed = (
        alt.Chart()
        .mark_text(fontSize=12)
        .encode(
            y=y,
            x=x,
            text=alt.Text("proportion:Q", format=".2f"),
            tooltip=[
                alt.Tooltip("hdi:Q", title="HDI mass"),
                alt.Tooltip("quantity:N"),
                alt.Tooltip("proportion:Q", format=".3f", title="observed inside"),
            ],
        )
    )
    nominal = (
        alt.Chart()
        .transform_aggregate(hdi="min(hdi)", groupby=["hdi_label"])
        .transform_calculate(quantity="'nominal'")
        .mark_text(fontSize=12, color=NEUTRAL_COLORS["text"])
        .encode(
            y=y,
            x=x,
            text=alt.Text("hdi:Q", format=".2f"),
            tooltip=[alt.Tooltip("hdi:Q", format=".2f", title="nominal HDI mass")],
        )
    )
    return alt.layer(
        observed,
        nominal,
        data=chart_data(coverage),
        width=140,
        title=alt.TitleParams("PPC coverage", anchor="start"),
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
            scale=alt.Scale(domain=[0, 1], range=WIN_SHARE_RANGE),
            legend=alt.Legend(title="win share", orient="top"),
        ),
        opacity=alt.OpacityValue(**alt.when(shown).then(alt.value(1.0)).otherwise(alt.value(0.25))),
        tooltip=tooltip,
    )
    text = base.mark_text(fontSize=10).encode(
        text=alt.Text("wins:Q", format=".0f"),
        tooltip=tooltip,
    )
    return alt.layer(
        rect,
        text,
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
    hdi: float = DEFAULT_HDI,
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
    rope: tuple[float, float] = DEFAULT_ROPE,
    hdi: float = DEFAULT_HDI,
    control: str | None = None,
    interpretation: Rule = "weak",
) -> dict[str, Any]:
    """The widget's charts for a result, without a widget (scripts, reports, exports)."""
    check_fit(result, "result_charts")
    frames = build_frames(
        result, rope=rope, hdi=hdi, control=control, interpretation=interpretation
    )
    return chart_set(frames.as_dict(), hdi=hdi)


def pairs_chart(
    data: Mapping[str, Data],
    *,
    hdi: float = DEFAULT_HDI,
    selected_pair: str = "",
    focus: str = "",
) -> alt.HConcatChart:
    """The widget's pairwise view: P(a > b) intervals beside the ROPE overlap, linked by the
    highlight and focus parameters.

    Parameters
    ----------
    data
        For each name in ``intervals, overlap, rope``: a frame (inlined) or a dataset name.
    hdi, selected_pair, focus
        Initial values of the ``hdi_mass`` and highlight parameters.
    """
    chart = alt.hconcat(
        intervals_chart(data["intervals"], data["rope"], hdi=None),
        rope_overlap_chart(data["overlap"]),
    ).resolve_scale(color="independent")
    return _view(chart, hdi, selected_pair, focus)


def checks_chart(
    data: Mapping[str, Data],
    *,
    hdi: float = DEFAULT_HDI,
    selected_pair: str = "",
    focus: str = "",
) -> alt.VConcatChart:
    """The widget's model checks: posterior predictive check, PPC coverage and the win
    matrix, linked to the pairwise view by the same highlight and focus parameters.

    Parameters
    ----------
    data
        For each name in ``ppc, coverage, matrix``: a frame (inlined) or a dataset name.
    hdi, selected_pair, focus
        Initial values of the ``hdi_mass`` and highlight parameters.
    """
    chart = alt.vconcat(
        ppc_chart(data["ppc"]),
        # independent colour: the win-share legend goes with the win matrix
        alt.hconcat(
            coverage_chart(data["coverage"]), win_matrix_chart(data["matrix"]), spacing=40
        ).resolve_scale(color="independent"),
        spacing=24,
    ).resolve_scale(color="independent", opacity="independent")
    return _view(chart, hdi, selected_pair, focus)


def _view(chart: Any, hdi: float, selected_pair: str, focus: str) -> Any:
    """A view of the widget: shared configuration, parameters and autosize."""
    chart = chart.configure_view(stroke=None).configure_axis(labelFontSize=11, titleFontSize=11)
    # Plain (non-selection) parameters go straight on the top level; add_params() would push
    # them into every sub-chart.
    chart.params = _params(selected_pair, focus, hdi)
    # resize: re-run the layout on every update, so the view shrinks when "Show pairs of"
    # leaves fewer rows (Vega only ever grows a "pad" view otherwise: a blank tail).
    chart.autosize = alt.AutoSizeParams(type="pad", resize=True)
    return chart


def linked_chart(
    data: Mapping[str, Data],
    *,
    hdi: float = DEFAULT_HDI,
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
        coverage_chart(data["coverage"]), win_matrix_chart(data["matrix"]), spacing=40
    )
    chart = alt.vconcat(top, middle, bottom, spacing=24).resolve_scale(
        color="independent", opacity="independent"
    )
    return _view(chart, hdi, selected_pair, focus)
