"""The colours of the decisions and regions, the same in every chart.

A module of constants that imports nothing, so that every layer may use it: the chart specs
(:mod:`bbt_widget.outputs.charts`) and the batch-level ``chart()`` methods of
:class:`bbt_widget.SweepResult` and :class:`bbt_widget.Influence` draw one palette.
"""

from __future__ import annotations

__all__ = [
    "DECISION_COLORS",
    "INFLUENCE_EFFECT_COLORS",
    "MATRIX_DECISION_COLORS",
    "ROPE_REGION_COLORS",
    "SWEEP_DECISION_COLORS",
]

#: Colour per verdict kind, the same in every chart.
DECISION_COLORS: dict[str, str] = {
    "better": "#1b7837",
    "equivalent": "#5e3c99",
    "no claim": "#8c8c8c",
}

#: Colour per sweep decision ("a" is the pair's first algorithm), the verdict colours above
#: plus the other direction, uncompared pairs and failed fits.
SWEEP_DECISION_COLORS: dict[str, str] = {
    "a better": DECISION_COLORS["better"],
    "b better": "#e08214",
    "equivalent": DECISION_COLORS["equivalent"],
    "no claim": DECISION_COLORS["no claim"],
    "not compared": "#d9d9d9",
    "failed": "#f0f0f0",
}

#: The decision of a decision-matrix cell (row vs column), in legend order, with its colour.
MATRIX_DECISION_COLORS: dict[str, str] = {
    "row better": DECISION_COLORS["better"],
    "column better": "#d6604d",
    "equivalent": DECISION_COLORS["equivalent"],
    "no claim": "#d9d9d9",
    "not compared": "#ffffff",
}

#: Whether leaving a data set out changes a pair's decision (influence charts).
INFLUENCE_EFFECT_COLORS: dict[str, str] = {
    "decision changes": "#e08214",
    "decision holds": DECISION_COLORS["no claim"],
}

#: Where the posterior mass of P(a > b) lies relative to the ROPE, in stacking order.
ROPE_REGION_COLORS: dict[str, str] = {
    "below ROPE": "#d6604d",
    "in ROPE": "#bdbdbd",
    "above ROPE": "#4393c3",
}
