"""What every Altair spec of the package shares: the Altair import (lazy), the highlight
parameters and their expressions, the pair axis and the decision colour.

Two Vega parameters drive the highlight: ``sel_pair`` (a pair key, or ``""``) and
``sel_focus`` (an algorithm, or ``""``). The widget's front end sets them from clicks and from
the ``selected_pair``/``focus`` traits, so one click highlights a pair in every chart and
choosing an algorithm shows only its pairs.
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType
from typing import Any, TypeAlias

import numpy as np
import pandas as pd

from ..core.palette import DECISION_COLORS
from .frames import to_records

__all__ = [
    "FOCUS",
    "FOCUS_PARAM",
    "HDI_PARAM",
    "HIGHLIGHT",
    "LABEL_AXIS",
    "LABEL_MAX_CHARS",
    "PAIR_PARAM",
    "Data",
    "alt",
    "at_rest",
    "chart_data",
    "flipped_param",
    "highlight_opacity",
    "highlight_params",
    "independent_x",
    "inline_rows",
    "pair_axis",
    "pair_outline",
    "pair_tooltip",
    "verdict_color",
]


class _Lazy:
    """A module imported on first attribute access.

    Altair takes longer to import than everything else the widget needs together, yet the
    widget needs it only for the view spec -- cached on disk, see
    :func:`bbt_widget.charts.view_spec` -- and for ``w.charts``. So the first charts do not
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
    """A chart of :mod:`bbt_widget.charts` made static: its highlight and focus parameters
    defined with nothing selected (its expressions read them), for export."""
    chart.params = highlight_params()
    return chart


def chart_data(data: Data) -> Any:
    """What a chart draws from: a dataset by name, or a frame's rows (:func:`inline_rows`)."""
    return alt.NamedData(name=data) if isinstance(data, str) else inline_rows(data)


def inline_rows(frame: pd.DataFrame) -> Any:
    """``frame`` as Altair inline data: its rows converted to JSON values once, here.

    Altair would convert a frame (a copy, checked column by column) each time a chart that
    holds it is turned into a spec, once per layer, the largest cost of building the
    report's charts; a layer that draws these rows holds them by reference, so every layer
    and copy of a chart shares one conversion. The values are those Altair's default data
    transformer gives (:func:`.frames.to_records`), and Altair gathers them into the spec's
    ``datasets`` under the same name, whatever their number: Altair's row limit (5000) is
    for frames handed to it unseen, not for these charts, which are built for their rows.
    A frame Altair would treat otherwise (another data transformer enabled, columns other
    than numbers, booleans, text and objects, names other than text) is handed over as it
    is, converted by Altair itself when it has more rows than that limit.
    """
    transformers = alt.data_transformers
    if transformers.active != "default":
        return frame
    if not _plain_columns(frame):
        limit = transformers.options.get("max_rows", _DEFAULT_MAX_ROWS)
        if limit is not None and len(frame) > limit:
            # the package's charts are built for their rows (a decision matrix of 51
            # algorithms has 5100 cells): Altair's own conversion, without its row limit
            return alt.InlineData(values=alt.utils.data.to_values(frame)["values"])
        return frame
    return _shared_inline_data()(values=to_records(frame))


#: Altair's default limit on the rows of a frame in a chart.
_DEFAULT_MAX_ROWS = 5000


def _plain_columns(frame: pd.DataFrame) -> bool:
    """Whether Altair converts each column of ``frame`` as :func:`.frames.to_records` does:
    text names, one index level, and no dates, categories or nullable numbers, which it
    converts in ways of its own."""
    columns = frame.columns
    if isinstance(frame.index, pd.MultiIndex) or isinstance(columns, pd.MultiIndex | pd.RangeIndex):
        return False
    if not len(columns) or not columns.is_unique or not all(isinstance(n, str) for n in columns):
        return False
    return all(
        (isinstance(dtype, np.dtype) and dtype.kind in "iubfO") or isinstance(dtype, pd.StringDtype)
        for dtype in frame.dtypes
    )


@functools.cache
def _shared_inline_data() -> type:
    """An Altair ``InlineData`` whose copies are itself, made when Altair is first needed.

    Altair copies a chart, deeply, at each method that returns a changed chart and
    several times over when it layers charts; a frame it keeps by reference. Rows copied
    each time would cost more than converting them, and the copies would no longer be the
    same object, which is how Altair tells that layers share their data (and moves it to
    the layer above). So these rows are kept by reference, as a frame is: nothing changes
    them once converted.
    """

    class SharedInlineData(alt.InlineData):  # type: ignore[misc]  # Altair's schema classes are untyped
        # not checked against the schema when made: rows of JSON values always pass, and
        # checking each value of every row costs more than drawing them
        _class_is_valid_at_instantiation = False

        def __deepcopy__(self, memo: Any = None) -> Any:
            return self

    SharedInlineData.__module__ = __name__
    SharedInlineData.__qualname__ = "SharedInlineData"
    return SharedInlineData


def __getattr__(name: str) -> Any:
    # the class above, found by name when a chart is unpickled
    if name == "SharedInlineData":
        return _shared_inline_data()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def pair_axis(title: str | None = None) -> alt.Y:
    # "label" (distinct per pair), not "pair": two pairs may share a label
    return alt.Y(
        "label:N",
        sort=alt.EncodingSortField(field="order", op="min"),
        title=title,
        axis=alt.Axis(**LABEL_AXIS),
    )


def independent_x() -> alt.Resolve:
    """Each layer its own x axis (``.resolve_axis(x="independent")``, given as the layered
    chart is made: the method would copy every layer again)."""
    return alt.Resolve(axis=alt.AxisResolveMap(x="independent"))


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


#: Vega expression: the row is the highlighted pair.
SELECTED = f"datum.key == {PAIR_PARAM}"


#: Vega parameter holding the keys of the pairs whose claim the last change flipped (an
#: array, set for a few seconds after the change).
FLIPPED_PARAM = "flipped_pairs"
#: Vega expression: the row is a pair whose claim the last change flipped.
FLIPPED = f"indexof({FLIPPED_PARAM}, datum.key) >= 0"
#: Colour of the outline of a pair whose claim the last change flipped.
FLIPPED_STROKE = "#f08c00"


def flipped_param() -> Any:
    """The parameter of the flipped pairs, none at first (for :func:`pair_outline`)."""
    return alt.VariableParameter(name=FLIPPED_PARAM, value=[])


def pair_outline(width: float = 0.5, color: str = "#bdbdbd") -> dict[str, Any]:
    """``stroke`` and ``strokeWidth`` that outline the highlighted pair's marks (the rows of
    a frame with ``key``) and, more thinly, those whose claim the last change flipped; the
    others drawn with ``color`` at ``width``. The chart defines :func:`highlight_params`
    and :func:`flipped_param`."""
    stroke = (
        alt.when(SELECTED)
        .then(alt.value(HIGHLIGHT_STROKE))
        .when(FLIPPED)
        .then(alt.value(FLIPPED_STROKE))
        .otherwise(alt.value(color))
    )
    stroke_width = (
        alt.when(SELECTED)
        .then(alt.value(2.5))
        .when(FLIPPED)
        .then(alt.value(2.0))
        .otherwise(alt.value(width))
    )
    return {
        "stroke": alt.StrokeValue(**stroke),
        "strokeWidth": alt.StrokeWidthValue(**stroke_width),
    }


#: Colour of the highlighted pair's outline.
HIGHLIGHT_STROKE = "#000000"


def pair_tooltip() -> list[Any]:
    """The tooltip of a pair's mark in words (the columns of
    :func:`~bbt_widget.charts.pairs.pair_words`, with ``rule_text`` and
    ``verdict_text``): never a raw column name."""
    return [
        alt.Tooltip("pair_text:N", title="pair"),
        alt.Tooltip("p_text:N", title="P(a > b) with its HDI"),
        alt.Tooltip("above_text:N", title="probability that P(a > b) > 0.5"),
        alt.Tooltip("rope_text:N", title="probability that P(a > b) is in the ROPE"),
        alt.Tooltip("rule_text:N", title="rule"),
        alt.Tooltip("verdict_text:N", title="verdict"),
    ]
