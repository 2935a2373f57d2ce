"""The colours of the decisions and regions, the same in every chart.

A module of constants that imports nothing, so that every layer may use it: the chart specs
(:mod:`bbt_widget.charts`) and the batch-level ``chart()`` methods of
:class:`bbt_widget.SweepResult` and :class:`bbt_widget.Influence` draw one palette.
"""

from __future__ import annotations

__all__ = [
    "DECISION_COLORS",
    "HIGHLIGHT_COLORS",
    "INFLUENCE_EFFECT_COLORS",
    "MATRIX_DECISION_COLORS",
    "NEUTRAL_COLORS",
    "ROPE_REGION_COLORS",
    "SWEEP_DECISION_COLORS",
    "WIN_SHARE_RANGE",
]

#: Colour per verdict kind, the same in every chart. A claim against the pair's first (or
#: the row) algorithm is :data:`WORSE`; every chart that tells which side wins uses these two.
DECISION_COLORS: dict[str, str] = {
    "better": "#1b7837",
    "equivalent": "#5e3c99",
    "no claim": "#969696",
}

#: The other direction of a claim ("b better", "column better", "below ROPE").
WORSE = "#d6604d"

#: A pair whose algorithms never met (only the prior relates them): no decision at all.
NOT_COMPARED = "#ffffff"

#: Colour per sweep decision ("a" is the pair's first algorithm), the verdict colours above
#: plus the other direction, uncompared pairs and failed fits.
SWEEP_DECISION_COLORS: dict[str, str] = {
    "a better": DECISION_COLORS["better"],
    "b better": WORSE,
    "equivalent": DECISION_COLORS["equivalent"],
    "no claim": DECISION_COLORS["no claim"],
    "not compared": NOT_COMPARED,
    "failed": "#000000",
}

#: The decision of a decision-matrix cell (row vs column), in legend order, with its colour.
MATRIX_DECISION_COLORS: dict[str, str] = {
    "row better": DECISION_COLORS["better"],
    "column better": WORSE,
    "equivalent": DECISION_COLORS["equivalent"],
    "no claim": DECISION_COLORS["no claim"],
    "not compared": NOT_COMPARED,
}

#: Colours of what is not a decision (estimates, counts, reference lines): greys and slate
#: blues, none of them a decision's colour.
NEUTRAL_COLORS: dict[str, str] = {
    "estimate": "#253494",
    "interval": "#7f9cc0",
    "bar": "#9fb3c8",
    "observed": "#000000",
    "reference": "#636363",
    "rope band": "#bdbdbd",
    "text": "#525252",
}

#: Algorithms the reader asked to pick out (e.g. the methods a paper proposes) against the
#: rest, in critical-difference diagrams: a role, not a decision, so a blue that no decision
#: uses and the near-black of plain text.
HIGHLIGHT_COLORS: dict[str, str] = {
    "highlighted": "#0571b0",
    "other": "#252525",
}

#: Whether leaving a data set out changes a pair's decision (influence charts): a fact about
#: the analysis, not a decision, so black and light grey.
INFLUENCE_EFFECT_COLORS: dict[str, str] = {
    "decision changes": "#000000",
    "decision holds": "#d9d9d9",
}

#: Where the posterior mass of P(a > b) lies relative to the ROPE, in stacking order: the
#: colour of the decision each region argues for.
ROPE_REGION_COLORS: dict[str, str] = {
    "below ROPE": WORSE,
    "in ROPE": DECISION_COLORS["equivalent"],
    "above ROPE": DECISION_COLORS["better"],
}

#: Colour range of a win share (0 to 1): white to slate, a count rather than a decision.
WIN_SHARE_RANGE: list[str] = ["#ffffff", NEUTRAL_COLORS["interval"]]
