"""Altair specs of the posterior predictive check: the widget's panels (:func:`ppc_chart`)
and a report's static figure of the worst-fitting pairs (:func:`static_ppc_chart`)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..core.palette import NEUTRAL_COLORS
from .encodings import FOCUS_PARAM, PAIR_PARAM, Data, alt, at_rest, chart_data, highlight_opacity

__all__ = ["PPC_MAX_PAIRS", "ppc_chart", "static_ppc_chart"]

#: PPC panels drawn before an algorithm is chosen (7 algorithms have 21 pairs).
PPC_MAX_PAIRS = 21


def ppc_chart(
    ppc: Data,
    *,
    columns: int = 5,
    width: int = 110,
    height: int = 60,
    max_pairs: int = PPC_MAX_PAIRS,
) -> alt.FacetChart:
    """Posterior predictive check (paper Figure 2): replicated counts per pair.

    Bars are the number of posterior draws giving each replicated count; the black rule is
    the observed count. Under Davidson there is a second panel per pair for the ties.
    Pairs run worst fit first (``ppc_frame``'s ``pair_order``): with more than ``max_pairs``
    pairs only the worst ones are drawn (plus the clicked pair) until an algorithm is chosen,
    as 120 panels would take seconds to lay out.
    """
    shown = (
        f"{FOCUS_PARAM} != '' ? (datum.alg_a == {FOCUS_PARAM} || datum.alg_b == {FOCUS_PARAM})"
        f" : (datum.pair_order < {max_pairs} || datum.key == {PAIR_PARAM})"
    )
    # Every position is precomputed per panel on [0, 1] (ppc_frame's x0/x1/h/obs_x), so the
    # scales have fixed domains: no per-panel extent for Vega to compute. A panel hidden by
    # the focus or a refit then empties without "Infinite extent" warnings, and the bars are
    # x/x2 spans (Vega-Lite's 1 px bin spacing left ~100 one-count bins 0 px wide).
    unit = alt.Scale(domain=[0, 1], nice=False, zero=False)
    base = alt.Chart()
    tooltip = [
        alt.Tooltip("panel:N", title="quantity"),
        alt.Tooltip("value:Q", title="replicated"),
        alt.Tooltip("count:Q", title="draws"),
        alt.Tooltip("observed:Q"),
        alt.Tooltip("ppp:Q", format=".3f", title="predictive p"),
    ]
    bars = base.mark_bar(color=NEUTRAL_COLORS["bar"]).encode(
        x=alt.X("x0:Q", scale=unit, axis=None),
        x2=alt.X2("x1:Q"),
        y=alt.Y("h:Q", scale=unit, axis=None, stack=None),
        y2=alt.Y2Datum(0),  # with x/x2 spans Vega-Lite would otherwise draw thin ticks at h
        opacity=highlight_opacity(0.25),
        tooltip=tooltip,
    )
    observed = base.mark_rule(color=NEUTRAL_COLORS["observed"], strokeWidth=2).encode(
        x=alt.X("max(obs_x):Q", scale=unit),
        tooltip=[
            alt.Tooltip("panel:N", title="quantity"),
            alt.Tooltip("max(observed):Q", title="observed"),
        ],
    )
    # the panel's count range, as its x axis would give it: lowest left, highest right
    ends = base.mark_text(fontSize=9, baseline="top", dy=2, color="#636363").encode(
        y=alt.YDatum(0, scale=unit)
    )
    low = ends.mark_text(fontSize=9, baseline="top", dy=2, color="#636363", align="left").encode(
        x=alt.XDatum(0), text=alt.Text("min(range_low):Q")
    )
    high = ends.mark_text(fontSize=9, baseline="top", dy=2, color="#636363", align="right").encode(
        x=alt.XDatum(1), text=alt.Text("max(range_high):Q")
    )
    layers = alt.layer(bars, observed, low, high, data=chart_data(ppc), width=width, height=height)
    return layers.facet(
        facet=alt.Facet(
            "panel:N",
            title=None,
            header=alt.Header(labelFontSize=10),
            sort=alt.EncodingSortField("panel_order", op="min"),
        ),
        columns=columns,
        # filtered before faceting, so that hidden pairs get no (empty) panel at all
        transform=[alt.FilterTransform(filter=shown)],
        title=alt.TitleParams(
            "Posterior predictive check",
            subtitle=[
                "bars: draws per replicated count (own scale per panel, count range below);"
                " black: observed count",
                f"worst-fitting pairs first (smallest predictive p); the {max_pairs} worst"
                " unless an algorithm is chosen",
            ],
            anchor="start",
        ),
    )


def static_ppc_chart(worst: pd.DataFrame, label: str) -> Any:
    """The PPC panels of :func:`~bbt_widget.charts.worst_ppc_frame`'s pairs, worst
    first, for a report: the widget's :func:`ppc_chart` with a title for static output
    (nothing to click or choose) and its highlight parameters defined at rest.

    Parameters
    ----------
    worst
        :func:`bbt_widget.charts.worst_ppc_frame`.
    label
        Which pairs these are (:func:`bbt_widget.charts.worst_pairs_label`), for the title.
    """
    n_pairs = int(worst["pair_order"].max()) + 1 if len(worst) else 0
    chart = at_rest(ppc_chart(worst, max_pairs=n_pairs))
    # set on the new chart, not by .properties(), which would copy it whole again
    chart.title = alt.TitleParams(
        f"Posterior predictive check: {label}",
        subtitle=(
            "bars: draws per replicated count (own scale per panel, count range below); "
            "black: observed count"
        ),
        anchor="start",
    )
    return chart
