"""How the widget's chart data travel to the browser: one JSON buffer per trait.

The chart data (``fit_data``, ``view_data``: columns of thousands of values at 16
algorithms) stay dicts in Python. ipywidgets walks every synced value looking for binary
parts, and the kernel then encodes the message as JSON: two passes over some 100,000 values
per fit, the walk alone about as long as the encoding. Sent as bytes, the value is one
binary buffer that ipywidgets and the kernel pass on untouched, encoded here once (the
front end decodes it once per change, ``js/src/index.js``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

import orjson

__all__ = ["chart_data_json", "json_trait", "remember_json"]

#: Attribute of a widget holding, per trait, the last value encoded and its bytes.
_MEMO = "_chart_json_memo"


def chart_data_json(value: Mapping[str, Any]) -> bytes:
    """Compact UTF-8 JSON of chart data.

    Encoded by orjson, much quicker than the standard library on the 16-algorithm fit data
    (some 90,000 values), on the widget's path from a fit to its charts (where a control
    change should cost little beyond the fit itself; ``benchmarks/results/widget.json``).
    JSON has no NaN or infinity: they go out as null, as ``to_columns`` already sends NaN. A
    string orjson refuses (a lone surrogate from a file read with ``surrogateescape``) falls
    back to the standard library, which writes it as its escape.
    """
    try:
        return orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY)
    except TypeError:  # orjson.JSONEncodeError: e.g. a lone surrogate
        # ASCII: every non-ASCII character as its escape, a lone surrogate included
        return json.dumps(_finite(value), allow_nan=False, separators=(",", ":")).encode("ascii")


def _finite(value: Any) -> Any:
    """``value`` with every non-finite float replaced by None (lists, dicts inside)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def json_trait(name: str) -> Callable[[Mapping[str, Any], Any], bytes]:
    """The ``to_json`` serializer of the chart-data trait ``name`` (see the module doc).

    A value is encoded once: sending it again (ipywidgets asks on every sync of the trait)
    returns the same bytes, and :func:`remember_json` hands over bytes encoded elsewhere
    (on the fit's worker thread).
    """

    def to_json(value: Mapping[str, Any], widget: Any) -> bytes:
        memo = widget.__dict__.setdefault(_MEMO, {})
        last = memo.get(name)
        if last is not None and last[0] is value:
            return bytes(last[1])
        encoded = chart_data_json(value)
        memo[name] = (value, encoded)  # the value itself: its id cannot be reused meanwhile
        return encoded

    return to_json


def remember_json(widget: Any, name: str, value: Mapping[str, Any], encoded: bytes) -> None:
    """Tell trait ``name``'s serializer that ``value`` encodes to ``encoded``
    (:func:`chart_data_json` of it), before ``value`` is set."""
    widget.__dict__.setdefault(_MEMO, {})[name] = (value, encoded)
