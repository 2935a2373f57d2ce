"""Altair specs of the widget's robustness view: a sweep's decision per pair and setting
(:func:`flips_chart`) and the most influential data sets of the highlighted pair
(:func:`influence_chart`), linked by the highlight parameter (:func:`robustness_chart`)."""

from __future__ import annotations

from collections.abc import Mapping

from ...core.palette import INFLUENCE_EFFECT_COLORS, NEUTRAL_COLORS, SWEEP_DECISION_COLORS
from .encodings import (
    FOCUS,
    LABEL_AXIS,
    PAIR_PARAM,
    Data,
    alt,
    chart_data,
    highlight_opacity,
    highlight_params,
    pair_axis,
)
from .frames_decisions import FLIPS_ALL_PAIRS

__all__ = ["flips_chart", "influence_chart", "robustness_chart"]

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
            color=alt.Color(
                "kind:N",
                scale=alt.Scale(domain=list(colors), range=list(colors.values())),
                legend=alt.Legend(title="decision (a = first of the pair)", orient="bottom"),
            ),
            opacity=highlight_opacity(0.35),
            tooltip=[
                alt.Tooltip("label:N", title="pair"),
                alt.Tooltip("setting:N"),
                alt.Tooltip("decision:N"),
                alt.Tooltip("mean:Q", format=".3f"),
                alt.Tooltip("above_50:Q", format=".3f", title="above.50"),
                alt.Tooltip("in_rope:Q", format=".3f", title="in.rope"),
                alt.Tooltip("error:N"),
            ],
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
        color=alt.Color(
            "effect:N",
            scale=alt.Scale(domain=list(colors), range=list(colors.values())),
            legend=alt.Legend(title=None, orient="bottom"),
        ),
        tooltip=[
            alt.Tooltip("dataset:N"),
            alt.Tooltip("delta_mean:Q", format="+.3f", title="change in mean"),
            alt.Tooltip("mean_loo:Q", format=".3f", title="mean without it"),
            alt.Tooltip("decision_loo:N", title="decision without it"),
            alt.Tooltip("pareto_k:Q", format=".2f", title="Pareto k"),
            alt.Tooltip("method:N"),
        ],
    )
    # the note row (no pair, or none computed yet) keeps the x scale finite and says why
    note = base.mark_text(align="left", color=NEUTRAL_COLORS["text"], fontSize=11).encode(
        x=alt.X("delta_mean:Q"), text="note:N"
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


def robustness_chart(data: Mapping[str, Data], *, selected_pair: str = "", focus: str = ""):
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
