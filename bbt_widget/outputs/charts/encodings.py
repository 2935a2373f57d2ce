"""What every Altair spec of the package shares: the Altair import (lazy), the highlight
parameters and their expressions, the pair axis and the decision colour.

Two Vega parameters drive the highlight: ``sel_pair`` (a pair key, or ``""``) and
``sel_focus`` (an algorithm, or ``""``). The widget's front end sets them from clicks and from
the ``selected_pair``/``focus`` traits, so one click highlights a pair in every chart and
choosing an algorithm shows only its pairs.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any, TypeAlias

import pandas as pd

from ...core.palette import DECISION_COLORS


class _Lazy:
    """A module imported on first attribute access.

    Altair takes longer to import than everything else the widget needs together, yet the
    widget needs it only for the view spec -- cached on disk, see
    :func:`bbt_widget.outputs.charts.view_spec` -- and for ``w.charts``. So the first charts do not
    wait for it.
    """

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        module: ModuleType = importlib.import_module(self._name)
        return getattr(module, attr)


alt: Any = _Lazy("altair")

#: What a chart builder draws: a frame (inlined: export, ``w.charts``) or the name of a
#: dataset (the widget sends data separately, so a ROPE change only swaps data in the view).
Data: TypeAlias = pd.DataFrame | str

#: Vega parameter holding the highlighted pair key ("" = none).
PAIR_PARAM = "sel_pair"

#: Vega parameter holding the algorithm whose pairs are shown ("" = all).
FOCUS_PARAM = "sel_focus"

#: Vega parameter holding the HDI mass (for titles), so an HDI change needs no new spec.
HDI_PARAM = "hdi_mass"

#: Vega expression: the row belongs to the highlighted pair, or none is highlighted.
HIGHLIGHT = f"({PAIR_PARAM} == '' || datum.key == {PAIR_PARAM})"
#: Vega expression: the row is one of the chosen algorithm's pairs, or none is chosen.
FOCUS = f"({FOCUS_PARAM} == '' || datum.alg_a == {FOCUS_PARAM} || datum.alg_b == {FOCUS_PARAM})"

#: Axis labels longer than this many characters (code points) end in an ellipsis.
LABEL_MAX_CHARS = 40

#: Axis settings that cut long labels by code point. Vega's own ``labelLimit`` cuts by pixel
#: width in UTF-16 units, splitting an emoji's surrogate pair, and vl-convert then fails on
#: every export; the ``u`` flag makes the expression count whole code
#: points, and ``labelLimit: 0`` keeps Vega from cutting again.
LABEL_AXIS: dict[str, Any] = {
    "labelLimit": 0,
    "labelExpr": rf"replace(datum.label, /^([\s\S]{{{LABEL_MAX_CHARS}}})[\s\S]+$/u, '$1…')",
}


def highlight_params(selected_pair: str = "", focus: str = "") -> list[alt.VariableParameter]:
    """The highlight and focus parameters, for the top level of a chart whose expressions read
    them (plain parameters: ``add_params()`` would push them into every sub-chart)."""
    return [
        alt.VariableParameter(name=PAIR_PARAM, value=selected_pair),
        alt.VariableParameter(name=FOCUS_PARAM, value=focus),
    ]


def at_rest(chart: Any) -> Any:
    """A chart of :mod:`bbt_widget.outputs.charts` made static: its highlight and focus parameters
    defined with nothing selected (its expressions read them), for export."""
    chart.params = highlight_params()
    return chart


def chart_data(data: Data) -> alt.Data | pd.DataFrame:
    return alt.NamedData(name=data) if isinstance(data, str) else data


def pair_axis(title: str | None = None) -> alt.Y:
    # "label" (distinct per pair), not "pair": two pairs may share a label
    return alt.Y(
        "label:N",
        sort=alt.EncodingSortField(field="order", op="min"),
        title=title,
        axis=alt.Axis(**LABEL_AXIS),
    )


def verdict_color() -> alt.Color:
    # Every layer carries the same legend definition: Vega-Lite merges the layers' legends
    # and drops it altogether when some layers disable it.
    return alt.Color(
        "verdict:N",
        scale=alt.Scale(domain=list(DECISION_COLORS), range=list(DECISION_COLORS.values())),
        legend=alt.Legend(title="decision", orient="top"),
    )


def highlight_opacity(dim: float = 0.2) -> alt.OpacityValue:
    return alt.OpacityValue(**alt.when(HIGHLIGHT).then(alt.value(1.0)).otherwise(alt.value(dim)))
