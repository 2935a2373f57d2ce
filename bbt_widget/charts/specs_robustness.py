"""Altair specs of the robustness analyses, their one home: the widget's robustness view (a
sweep's decision per pair and setting, :func:`flips_chart`, and the most influential data sets
of the highlighted pair, :func:`influence_chart`, linked by the highlight parameter:
:func:`robustness_chart`), and the standalone charts that ``SweepResult.chart()`` and
``Influence.chart()`` return (:func:`sweep_chart`, :func:`influence_top_chart`), which share
their colours and tooltips.

The lab's results import this module inside their ``chart()`` methods: the chart package sits
below the lab in the layers (it imports only the core), and Altair loads with the first chart.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from ..core.palette import INFLUENCE_EFFECT_COLORS, NEUTRAL_COLORS, SWEEP_DECISION_COLORS
from .encodings import (
    FOCUS,
    LABEL_AXIS,
    PAIR_PARAM,
    Data,
    alt,
    chart_data,
    highlight_opacity,
    highlight_params,
    inline_rows,
    pair_axis,
)
from .frames_decisions import FLIPS_ALL_PAIRS

__all__ = [
    "flips_chart",
    "influence_chart",
    "influence_top_chart",
    "robustness_chart",
    "sweep_chart",
]

#: Vega expression: 1 once a pair is highlighted, else 0 (the influence chart's axis).
_PAIR_PICKED = {"expr": f"{PAIR_PARAM} == '' ? 0 : 1"}


#: A setting's label ("ties=add, d_min=0.2, paired=False") as a two-line header: the tie
#: policy, then the local ROPE ("d_min 0.2", or "no ROPE"); other settings follow as lines.
_SETTING_LINES = (
    "split(replace(replace(replace(replace(datum.label, /ties=/, ''), /d_min=None/, 'no ROPE'),"
    " /d_min=/, 'd_min '), /, paired=\\w+/, ''), ', ')"
)
#: Name of the flips chart's dataset in the widget's robustness view.
_FLIPS_DATA = "flips"
_BEYOND = f"beyond {FLIPS_ALL_PAIRS} pairs: those whose decision changes, and the highlighted pair"


def _color(field: str, colors: Mapping[str, str], legend: alt.Legend) -> alt.Color:
    """Colour by ``field`` with the palette's ``colors`` (value -> colour), in their order."""
    scale = alt.Scale(domain=list(colors), range=list(colors.values()))
    return alt.Color(field, scale=scale, legend=legend)


def _setting_tooltips() -> list[alt.Tooltip]:
    """A sweep cell's tooltips after the pair: the setting, the decision and its numbers."""
    return [
        alt.Tooltip("setting:N"),
        alt.Tooltip("decision:N"),
        alt.Tooltip("mean:Q", format=".3f"),
        alt.Tooltip("above_50:Q", format=".3f", title="probability that P(a > b) > 0.5"),
        alt.Tooltip("in_rope:Q", format=".3f", title="probability that P(a > b) is in the ROPE"),
        alt.Tooltip("error:N"),
    ]


def _influence_tooltips() -> list[alt.Tooltip]:
    """An influence bar's tooltips: the data set and how the pair moves without it."""
    return [
        alt.Tooltip("dataset:N"),
        alt.Tooltip("delta_mean:Q", format="+.3f", title="change in mean"),
        alt.Tooltip("mean_loo:Q", format=".3f", title="mean without it"),
        alt.Tooltip("decision_loo:N", title="decision without it"),
        alt.Tooltip("pareto_k:Q", format=".2f", title="Pareto k"),
        alt.Tooltip("method:N"),
    ]


def flips_chart(flips: Data, *, cell: int = 14) -> alt.Chart:
    """Pairs x settings of a sweep, coloured by decision (linked with the intervals chart).

    Beyond 10 algorithms only the pairs whose decision changes are drawn (``shown``), plus
    the highlighted pair whatever its decisions, so that clicking a pair anywhere shows its
    decision across settings.
    """
    shown = f"(datum.shown || datum.key == {PAIR_PARAM}) && {FOCUS}"
    colors = SWEEP_DECISION_COLORS
    return (
        alt.Chart(chart_data(flips))
        .transform_filter(shown)
        .mark_rect(stroke="white", strokeWidth=0.5)
        .encode(
            x=alt.X(
                "setting:N",
                sort=alt.EncodingSortField("setting_order", op="min"),
                title=None,
                # two-line labels grow downwards from their baseline: padded up clear of the cells
                axis=alt.Axis(
                    labelAngle=0, labelExpr=_SETTING_LINES, labelPadding=16, orient="top"
                ),
            ),
            y=pair_axis(),
            color=_color(
                "kind:N",
                colors,
                alt.Legend(title="decision (a = first of the pair)", orient="bottom"),
            ),
            opacity=highlight_opacity(0.35),
            tooltip=[alt.Tooltip("label:N", title="pair"), *_setting_tooltips()],
        )
        .properties(
            width=alt.Step(cell * 4),
            height=alt.Step(cell),
            title=alt.TitleParams(
                # the "beyond 45 pairs" part said only when true: the frame's n_pairs
                # counts the sweep's pairs
                alt.ExprRef(
                    expr=(
                        f"length(data('{_FLIPS_DATA}')) > 0 && "
                        f"data('{_FLIPS_DATA}')[0].n_pairs > {FLIPS_ALL_PAIRS} ? "
                        f"'{_BEYOND}' : 'Decisions across analysis settings'"
                    )
                ),
                subtitle="columns: tie policy over local ROPE (d_min)",
                anchor="start",
            ),
        )
    )


def influence_chart(influence: Data, *, width: int = 260) -> alt.LayerChart:
    """The most influential data sets for the highlighted pair (leave-one-data-set-out)."""
    colors = INFLUENCE_EFFECT_COLORS
    base = alt.Chart(chart_data(influence))
    # not filtered: a layer filtered down to no rows warns of an infinite extent; the note
    # row is a bar of zero length on a blank row instead
    bars = base.mark_bar().encode(
        x=alt.X(
            "delta_mean:Q",
            title="change in mean P(a > b) when left out",
            # significant digits: small changes keep distinct ticks (not "-0.00, +0.00");
            # no axis until a pair is picked (the note says to pick one)
            axis=alt.Axis(
                format="+.2~r",
                labelOpacity=_PAIR_PICKED,
                tickOpacity=_PAIR_PICKED,
                domainOpacity=_PAIR_PICKED,
                titleOpacity=_PAIR_PICKED,
                gridOpacity=_PAIR_PICKED,
            ),
            stack=None,  # a stack of no rows (only the note) would have no extent
        ),
        y=alt.Y(
            "dataset:N",
            sort=alt.EncodingSortField("order", op="min"),
            title=None,
            axis=alt.Axis(**LABEL_AXIS),
        ),
        color=_color("effect:N", colors, alt.Legend(title=None, orient="bottom")),
        tooltip=_influence_tooltips(),
    )
    # the note row (no pair, or none computed yet) keeps the x scale finite and says why
    note = base.mark_text(align="left", color=NEUTRAL_COLORS["text"], fontSize=11).encode(
        x=alt.X("delta_mean:Q"), text=alt.Text("note:N")
    )
    # "Influence on lgbm vs gbm": the pair key is JSON, '["lgbm", "gbm"]'
    pair_name = (
        f"replace(replace(replace({PAIR_PARAM}, /^\\[\"/, ''), /\"\\]$/, ''), /\", \"/, ' vs ')"
    )
    return alt.layer(bars, note).properties(
        width=width,
        title=alt.TitleParams(
            alt.ExprRef(
                expr=f"{PAIR_PARAM} == '' ? 'Influence of each data set' : "
                f"'Influence on ' + {pair_name}"
            ),
            subtitle="leave-one-data-set-out (PSIS); black: the decision changes",
            anchor="start",
        ),
    )


def robustness_chart(
    data: Mapping[str, Data], *, selected_pair: str = "", focus: str = ""
) -> alt.HConcatChart:
    """The widget's robustness view: flips chart and influence chart, linked by ``sel_pair``."""
    chart = (
        alt.hconcat(flips_chart(data["flips"]), influence_chart(data["influence"]), spacing=30)
        .resolve_scale(color="independent", opacity="independent")
        .configure_view(stroke=None)
        .configure_axis(labelFontSize=11, titleFontSize=11)
    )
    chart.params = highlight_params(selected_pair, focus)
    chart.autosize = alt.AutoSizeParams(type="pad", resize=True)
    return chart


def sweep_chart(
    cells: pd.DataFrame, *, legend: str, title: str, subtitle: str, cell: int = 14
) -> alt.Chart:
    """A sweep's heatmap: pairs (rows, in their ``order``) x settings (columns), coloured by
    ``decision``; what ``SweepResult.chart()`` returns.

    Parameters
    ----------
    cells
        One row per pair and setting: ``pair, order, setting, decision, mean, above_50,
        in_rope, error``.
    legend, title, subtitle
        The colour legend's title and the chart's title and subtitle.
    cell
        Height of a row in pixels (a column is twice as wide).
    """
    return (
        alt.Chart(inline_rows(cells))  # a cell per pair and setting: thousands at 20 algorithms
        .mark_rect(stroke="white", strokeWidth=0.5)
        .encode(
            x=alt.X("setting:N", sort=None, title=None, axis=alt.Axis(labelAngle=-45)),
            y=alt.Y(
                "pair:N",
                sort=alt.EncodingSortField(field="order", op="min"),
                title=None,
                axis=alt.Axis(labelLimit=220),
            ),
            color=_color(
                "decision:N", SWEEP_DECISION_COLORS, alt.Legend(title=legend, orient="bottom")
            ),
            tooltip=[alt.Tooltip("pair:N"), *_setting_tooltips()],
        )
        .properties(
            width=alt.Step(cell * 2),
            height=alt.Step(cell),
            title=alt.TitleParams(title, subtitle=subtitle, anchor="start"),
        )
    )


def influence_top_chart(
    top: pd.DataFrame, *, title: str, subtitle: str, width: int = 320
) -> alt.Chart:
    """Bars: how far leaving each data set out moves a pair's mean P(a > b), coloured by
    ``effect`` (whether the decision changes); what ``Influence.chart()`` returns.

    Parameters
    ----------
    top
        The data sets in drawing ``order``: ``dataset, delta_mean, mean_loo, decision_loo,
        pareto_k, method, effect, order``.
    title, subtitle
        The chart's title and subtitle.
    width
        Width in pixels.
    """
    return (
        alt.Chart(inline_rows(top))
        .mark_bar()
        .encode(
            x=alt.X("delta_mean:Q", title="change in mean P(a > b) when left out"),
            y=alt.Y("dataset:N", sort=alt.EncodingSortField(field="order", op="min"), title=None),
            color=_color(
                "effect:N", INFLUENCE_EFFECT_COLORS, alt.Legend(title=None, orient="bottom")
            ),
            tooltip=_influence_tooltips(),
        )
        .properties(width=width, title=alt.TitleParams(title, subtitle=subtitle, anchor="start"))
    )
