"""The widget's settings checked where they enter: one rule for every control.

Every trait that reaches a fit, ``w.code()``, ``w.report()``, ``w.methods_text()`` or
``w.charts`` is checked when it is set, with the checks of :mod:`bbt_widget.core.validation`
and the ranges of :mod:`bbt_widget.core.options` (:data:`CHECKS`). A value that fails is
refused and the trait keeps its last good value, the one the charts show:

* from the browser, the kept value goes back to the control (ipywidgets sends a value its
  validator changed), and the reason is shown beside the control (trait ``input_errors``,
  control -> text) and in the widget's ``message``, until that setting is next set to a
  valid value; nothing raises in the kernel, where nobody would see it;
* from Python, the assignment raises :class:`SettingRefused` (a ``TraitError`` and a
  ``ValueError``) naming the control, the reason and the value kept: a script or a notebook
  cell stops at the line that set it, as traitlets does for a value of the wrong type.

Accepted values are stored as plain Python values (``float``, ``str``, ``bool``), never numpy
scalars, so what the widget writes as code is the ``repr`` of plain values. Values set
together (``with w.hold_trait_notifications():``) are checked once all are set, so both ROPE
bounds can move past each other at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from traitlets import TraitError

from ..core.options import D_MIN_RANGE, HDI_RANGE, resolve_interpretation
from ..core.validation import (
    check_algorithms,
    check_d_min,
    check_flag,
    check_hdi,
    check_hyperprior,
    check_rope,
    check_tie_threshold,
    check_ties,
)
from .messages import check_ranking_model

__all__ = ["CHECKS", "SETTING_OF", "SettingChecks", "SettingRefused", "quiet_when_unchanged"]


class SettingRefused(TraitError, ValueError):
    """A widget setting given a value it cannot take (the setting keeps its last good one)."""


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value (messages show 0.3, not np.float64(0.3))."""
    return value.item() if hasattr(value, "item") and not isinstance(value, str) else value


def _ties(w: Any, value: Any) -> str:
    ties = check_ties(value)
    if ties is None:
        raise ValueError("ties must be a tie policy; None (raw counts) has no model")
    w._groups.check_ties(ties)  # the group model has no Davidson ties
    return str(ties)


def _tie_threshold(_w: Any, value: Any) -> float:
    return check_tie_threshold(value) or 0.0


def _in_range(name: str, check: Callable[[Any], float | None], span: tuple[float, float]) -> Any:
    """The check of a number the control offers in ``span`` (inclusive): the core's ``check``
    (its TypeError for a value that is no number), then the range, named in the message."""
    low, high = span

    def checked(_w: Any, value: Any) -> float:
        try:
            number = check(value)
        except ValueError:
            number = None  # not finite, or outside what the core takes: outside the range too
        if number is None or not low <= number <= high:
            raise ValueError(f"{name} must lie in [{low}, {high}], the range of its control")
        return number

    return checked


def _local_rope(w: Any, value: Any) -> bool:
    on = check_flag(value, "local_rope")
    if on and not w.local_rope_available:
        raise ValueError(f"the local ROPE is unavailable: {w.local_rope_reason}")
    return on


def _paired(w: Any, value: Any) -> bool:
    on = check_flag(value, "paired")
    if on and not w.paired_available:
        raise ValueError(w.paired_reason or "paired mode is unavailable for these results")
    return on


def _lower_is_better(_w: Any, value: Any) -> bool:
    return check_flag(value, "lower_is_better")


def _hyperprior(_w: Any, value: Any) -> str:
    return str(check_hyperprior(value)[0])


def _prior_scale(w: Any, value: Any) -> float:
    return check_hyperprior(w.hyperprior, value)[1]


def _rope_bound(name: str) -> Callable[[Any, Any], float]:
    def check(w: Any, value: Any) -> float:
        rope = {"rope_low": w.rope_low, "rope_high": w.rope_high, name: value}
        low, high = check_rope((rope["rope_low"], rope["rope_high"]))
        return low if name == "rope_low" else high

    return check


def _algorithm_or_none(role: str) -> Callable[[Any, Any], str]:
    def check(w: Any, value: Any) -> str:
        if not isinstance(value, str):
            raise TypeError(f"{role} must be an algorithm's name or '' (none), got {value!r}")
        if value:
            check_algorithms([value], w.algorithms, role)
        return str(value)

    return check


def _interpretation(w: Any, value: Any) -> str:
    # "auto" is resolved, as the constructor resolves it: the trait holds the rule shown
    return str(resolve_interpretation(value, len(w.algorithms)).rule)


def _selected_group(w: Any, value: Any) -> str | None:
    groups = w.group_view.get("groups", [])
    if value is None or (isinstance(value, str) and value in groups):
        return None if value is None else str(value)
    if not groups:
        raise ValueError(
            "this widget's data sets are not in groups; make it with group= (e.g. "
            'BBTWidget(data, group="family"))'
        )
    known = ", ".join(repr(g) for g in groups)
    raise ValueError(f"not one of the groups ({known}); None shows all data sets (pooled)")


def _metric(w: Any, value: Any) -> str:
    metrics = list(w.metrics)
    if not metrics and value:
        raise ValueError(
            "this widget has one score column; pass score=[...] with several score columns "
            "to compare metrics"
        )
    if metrics and value not in metrics:
        raise ValueError(f"not one of the metrics ({', '.join(metrics)})")
    return str(value)


def _ranking_model(_w: Any, value: Any) -> str:
    check_ranking_model(value)
    return str(value)


#: Trait -> its check: ``check(widget, value)`` returns the value to store (plain Python) or
#: raises TypeError / ValueError saying what the control takes.
CHECKS: dict[str, Callable[[Any, Any], Any]] = {
    "ties": _ties,
    "tie_threshold": _tie_threshold,
    "local_rope": _local_rope,
    "d_min": _in_range("d_min", check_d_min, D_MIN_RANGE),
    "paired": _paired,
    "lower_is_better": _lower_is_better,
    "hyperprior": _hyperprior,
    "prior_scale": _prior_scale,
    "rope_low": _rope_bound("rope_low"),
    "rope_high": _rope_bound("rope_high"),
    "hdi": _in_range("hdi", check_hdi, HDI_RANGE),
    "control": _algorithm_or_none("control"),
    "interpretation": _interpretation,
    "selected_group": _selected_group,
    "focus": _algorithm_or_none("focus"),
    "metric": _metric,
    "ranking_model": _ranking_model,
}
#: The setting a trait is part of: a refusal is shown, and cleared, per setting (the two
#: ROPE bounds are one setting: a valid ROPE clears the refusal of either bound).
SETTING_OF = {name: "rope" if name.startswith("rope_") else name for name in CHECKS}


class SettingChecks:
    """The validator of every trait in :data:`CHECKS` on one widget (see the module doc).

    Parameters
    ----------
    widget
        The :class:`~bbt_widget.widget.app.BBTWidget` whose traits these are, built with its
        first values (checked here too: the constructor raises :class:`SettingRefused`).
    set_problem
        ``set_problem(where, text)`` shows a refusal in the widget's ``message`` ('' clears).

    Raises
    ------
    SettingRefused
        A first value that is not valid (e.g. ``BBTWidget(..., hdi=0.3)``).
    """

    def __init__(self, widget: Any, set_problem: Callable[[str, str], None]) -> None:
        self.w = widget
        self._set_problem = set_problem
        #: The last good value of each checked trait: what a refused value leaves it at.
        self.good: dict[str, Any] = {}
        for name, check in CHECKS.items():
            value = getattr(widget, name)
            try:
                self.good[name] = check(widget, value)
            except (TypeError, ValueError) as exc:
                raise SettingRefused(f"{name}={_plain(value)!r}: {exc}") from None
        with widget.hold_trait_notifications():  # the plain values, no observer runs yet
            for name, value in self.good.items():
                if type(value) is not type(getattr(widget, name)):
                    widget.set_trait(name, value)
        # A validator, not an observer: a refused value never reaches the views, and the
        # front end gets the kept value back.
        widget._register_validator(self._validate, tuple(CHECKS))
        # None skips every validator of a trait that allows it (the group selector's "all
        # data sets"): its acceptance is seen here
        widget.observe(self._accepted, names=[n for n in CHECKS if widget.traits()[n].allow_none])

    def problems(self, names: tuple[str, ...]) -> list[str]:
        """Why the current value of each of ``names`` is not valid now (none: all are).

        Every value was checked when set; a check can fail later when what it depends on
        changed (e.g. the groups of a grouped widget)."""
        out = []
        for name in names:
            try:
                CHECKS[name](self.w, getattr(self.w, name))
            except (TypeError, ValueError) as exc:
                out.append(f"{name}: {exc}")
        return out

    def _validate(self, _widget: Any, proposal: Any) -> Any:
        w = self.w
        name, value = proposal["trait"].name, proposal["value"]
        try:
            checked = CHECKS[name](w, value)
        except (TypeError, ValueError) as exc:
            kept = self.good[name]
            text = f"{name} = {_plain(value)!r} not applied ({exc}); it stays {kept!r}"
            if name not in getattr(w, "_property_lock", {}):
                raise SettingRefused(text) from None  # from Python: the caller's line stops
            # from the browser: the kept value goes back, the reason beside the control
            self._set_problem(f"refused {SETTING_OF[name]}", text)
            w.input_errors = {**w.input_errors, name: text}
            return kept
        self._accept(name, checked)
        return checked

    def _accepted(self, change: Any) -> None:
        self._accept(change["name"], change["new"])

    def _accept(self, name: str, value: Any) -> None:
        """``value`` is ``name``'s last good value: the refusals of its setting are over."""
        w, setting = self.w, SETTING_OF[name]
        self.good[name] = value
        self._set_problem(f"refused {setting}", "")
        related = [n for n in w.input_errors if SETTING_OF.get(n) == setting]
        if related:
            w.input_errors = {k: v for k, v in w.input_errors.items() if k not in related}


def quiet_when_unchanged(
    notify_change: Callable[[Any, Any], None],
) -> Callable[[Any, Any], None]:
    """The widget's ``notify_change``: ``notify_change`` (its base class's), except for a
    checked setting whose value did not change, which runs no observer.

    A value refused from the browser is set and set back within ipywidgets' hold of the
    message, and traitlets then reports a change from the kept value to itself: the observers
    would refit or redraw the settings already shown (and start a first fit on a widget made
    with ``autostart=False``). ipywidgets' own part still runs: it sends the kept value back to
    the control, whose input holds the refused one.
    """

    def notify(widget: Any, change: Any) -> None:
        name = change.get("name")
        if change.get("type") == "change" and name in CHECKS:
            old, new = change.get("old"), change.get("new")
            if type(old) is type(new) and old == new:
                comm = widget.comm
                kernel = comm is not None and getattr(comm, "kernel", True) is not None
                if kernel and widget._should_send_property(name, new):
                    widget.send_state(key=name)
                return
        notify_change(widget, change)

    return notify
