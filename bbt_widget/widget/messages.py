"""What the widget says about its arguments and failures: refusals of unknown keywords and
ranking models, why paired mode is off (worded for the widget, not for ``fit`` callers), and
an exception's own message, shortened (never a traceback)."""

from __future__ import annotations

import difflib
import inspect
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .views import RANKING_MODELS

if TYPE_CHECKING:
    from traitlets import HasTraits

__all__ = [
    "DISPLAY_KWARGS",
    "FitFailed",
    "LastGoodFitWarning",
    "check_extra_kwargs",
    "check_ranking_model",
    "error_text",
    "paired_note",
]

#: Keywords handed on to ipywidgets (how the widget sits in its page); any other keyword the
#: constructor does not name is refused: traitlets would only warn, hidden, and a typo such as
#: ``dmin=0.3`` would fit without the setting the user asked for.
DISPLAY_KWARGS = ("layout", "tabbable", "tooltip")


class FitFailed(RuntimeError):
    """The fit of the widget's current settings failed (``w.wait()`` raises it): the charts
    and ``w.result`` still show the last good fit, of other settings."""


class LastGoodFitWarning(UserWarning):
    """``w.result`` or ``w.summary`` read while the fit of the current settings has failed:
    they are the last good fit's, of other settings."""


def check_extra_kwargs(widget: type[HasTraits], kwargs: Mapping[str, Any]) -> None:
    """Refuse the keywords of ``BBTWidget(...)`` that are neither its own nor ipywidgets'
    display keywords, naming the argument that was probably meant.

    Parameters
    ----------
    widget
        The widget class: its keyword-only arguments and its traits.
    kwargs
        The keywords its constructor did not name.

    Raises
    ------
    TypeError
        For the first such keyword.
    """
    for name in kwargs:
        if name in DISPLAY_KWARGS:
            continue
        params = [
            p.name
            for p in inspect.signature(widget.__init__).parameters.values()
            if p.kind is p.KEYWORD_ONLY
        ]
        if name == "local_rope":
            hint = "the local ROPE is on when d_min is given: pass d_min=0.4 (the paper's value)"
        elif name in ("rope_low", "rope_high"):
            hint = "pass rope=(low, high)"
        elif name in widget.class_trait_names():
            hint = f"{name!r} is one of the widget's traits, not an argument: use w.{name}"
        else:
            close = difflib.get_close_matches(name, params, n=1)
            hint = f"did you mean {close[0]!r}?" if close else "its arguments: " + ", ".join(params)
        raise TypeError(f"BBTWidget() got an unexpected keyword argument {name!r}; {hint}")


def check_ranking_model(value: str) -> None:
    """Raise ValueError unless ``value`` is one of ``RANKING_MODELS``."""
    if value not in RANKING_MODELS:
        raise ValueError(
            f"ranking_model must be one of {', '.join(map(repr, RANKING_MODELS))}, not {value!r}"
        )


#: Advice the core gives to callers of ``fit`` ("use paired=False ..."): wrong in the widget,
#: where the user may well have passed paired=False already and the checkbox is greyed out.
_ARGUMENT_ADVICE = re.compile(r"\s*[:;,]\s*(?:use|pass)\s+paired\s*=\s*False\b.*$", re.DOTALL)


def paired_note(problem: str) -> str:
    """Why paired mode is off, worded for the widget (one line; '' when it is available).

    The core explains the problem for ``fit(...)`` callers and ends with what argument to
    pass; the widget states the reason only.
    """
    reason = _ARGUMENT_ADVICE.sub("", problem.strip()).strip().rstrip(".")
    if not reason:
        return ""
    return f"paired mode is off: {' '.join(reason.split())}"


def error_text(error: BaseException | None, max_lines: int = 8, max_chars: int = 1500) -> str:
    """The exception's own message, shortened; never a traceback."""
    if error is None:  # pragma: no cover
        return "unknown error"
    text = str(error).strip() or type(error).__name__
    lines = text.splitlines()
    if len(lines) > max_lines:
        text = "\n".join([*lines[:max_lines], "(...)"])
    return text if len(text) <= max_chars else text[:max_chars] + " (...)"
