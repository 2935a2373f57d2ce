"""The widget's decisions view: the pairwise charts' data, the headline and, in the background,
the ranking chart and decision matrices, re-summarised from the draws already there when a
view control (ROPE, HDI, control algorithm, interpretation) changes or a fit arrives; no fit.

:class:`DecisionsView` is one of the section objects :class:`~bbt_widget.widget.app.BBTWidget`
composes.
"""

from __future__ import annotations

import time
from typing import Any

import pandas as pd

from ..charts.frames import (
    interval_frame,
    overlap_frame,
    rope_frame,
)
from ..charts.pairs import unsettled_keys
from ..core.options import INTERPRETATIONS
from ..core.result import BBTResult
from ..engines.base import FitCancelled
from ..outputs.headline import headline
from .claims import claim_changes, claims_of
from .in_step import InStep
from .messages import error_text
from .pair_filters import FILTER_ALGORITHMS
from .runner import Dispatcher, FitEvent, FitRunner
from .views import SUMMARY_DELAY, summary_spec, weak_rule_caveat

__all__ = ["FOCUS_ALGORITHMS", "DecisionsView"]

#: Beyond this many algorithms (below pair_filters.FILTER_ALGORITHMS) the pairwise charts
#: open on the top-ranked algorithm's pairs.
FOCUS_ALGORITHMS = 8


class DecisionsView:
    """The decisions of the fit shown, at the widget's view controls (see the module doc).

    Parameters
    ----------
    widget
        The :class:`~bbt_widget.widget.app.BBTWidget` whose view this is.
    dispatcher
        Where the summary runner hands its events (the kernel's loop).
    focus_defaulted
        Whether "Show pairs of" was set already (by the caller): then it is never set for
        the user.
    """

    def __init__(self, widget: Any, dispatcher: Dispatcher | None, *, focus_defaulted: bool):
        self.w = widget
        #: Whether "Show pairs of" was set for the user: once, at the first fit with more
        #: than FOCUS_ALGORITHMS algorithms (the top-ranked algorithm's pairs).
        self.focus_defaulted = focus_defaulted
        self.summary_runner: FitRunner[dict[str, Any]] = FitRunner(
            summary_spec,
            self.on_summary_event,
            dispatcher=dispatcher,
            cache_size=6,
            cancelled_types=(FitCancelled,),
        )
        #: The claims shown (claims.claims_of), to tell which ones the next change flips.
        self.claims: dict[str, Any] | None = None
        #: The settings each view shows, and which views are behind (trait stale_views).
        self.in_step = InStep(widget)
        self.in_step.update()  # nothing drawn yet: every view is behind

    def refresh(self, strict: bool = False) -> bool:
        """New chart data from the draws already there; no fit.

        With ``strict`` a failure to build the chart data raises (a new fit: the runner
        shows it as the widget's error); otherwise it is shown as the view's problem.
        Returns whether the views built on the full fit (summary, sweep, influence) were
        updated too: not for a preview, nor when the view's settings are invalid.
        """
        # one message: the headline, the intervals, the views marked behind and a summary
        # already built for these settings (a cache hit) arrive together
        with self.w.hold_sync():
            return self._refresh(strict)

    def _refresh(self, strict: bool) -> bool:
        w = self.w
        started = time.perf_counter()
        problem = w._controls.check_view_settings()
        w._controls.set_problem("view", problem)
        if w.interpretation in INTERPRETATIONS:
            w.caveat = weak_rule_caveat(len(w.algorithms), w.interpretation)
        preview = w._preview
        # what is shown: the full fit or its preview, or the selected group's view of it
        fitted = w._groups.shown(w._fitted if preview is None else preview)
        if problem or fitted is None:
            return False
        rope = (w.rope_low, w.rope_high)
        control = w.control or None
        try:
            summary = fitted.result.summary(rope=rope, hdi=w.hdi, control=control)
            mass = fitted.result.rope_mass(rope=rope, control=control)
            unsettled = unsettled_keys(fitted.result.unsettled(rope=rope, hdi=w.hdi))
            frames = {
                "intervals": interval_frame(summary, fitted.ranges, w.interpretation, unsettled),
                "overlap": overlap_frame(summary, mass),
                "rope": rope_frame(rope, w.interpretation),
            }
        except Exception as exc:
            if strict:
                raise
            w._controls.set_problem("view", f"could not redraw: {error_text(exc)}")
            return False
        if preview is None and w.interpretation in INTERPRETATIONS:
            self.note_changes(summary, unsettled)
        w.view_data = w._pairs.view_data(frames, fitted.result)  # the rows the filter keeps
        self.show_headline(fitted.result, summary if control is None else None)
        shown_fit = w._result_key if preview is None else w._requested_key
        self.in_step.drawn("pairs", self.in_step.wanted("pairs", shown_fit))
        w.last_view_seconds = time.perf_counter() - started
        if preview is not None:
            return False  # the summary, the exports and the views built on a fit wait for it
        w._summary = summary
        w._frames.update(frames)
        w._robustness.refresh_sweep_view()
        w._update_influence()
        w._more_data.update()  # the highlighted pair's forecast, when its section is open
        w._groups.refresh()  # the decisions by group, and the headline naming the group
        self.summary_runner.submit(
            (w._groups.view_key(w._result_key), rope, w.hdi, w.interpretation),
            {
                "result": fitted.result,
                "rope": rope,
                "hdi": w.hdi,
                "interpretation": w.interpretation,
                "highlight": w._highlight,
                # a new fit is built at once; view changes wait for a pause in the typing
                "quiet": 0.0 if strict else SUMMARY_DELAY,
            },
        )
        return True

    def note_changes(self, summary: pd.DataFrame, unsettled: set[tuple[str, str]]) -> None:
        """The claims this result flipped against the last one shown (trait claim_changes,
        sent with the new result's data); none the first time. ``unsettled``: the
        ``(pair key, rule)`` the Monte Carlo screen left open, named in the note."""
        w = self.w
        claims = claims_of(summary, w.interpretation)
        before, self.claims = self.claims, claims
        if before is None:
            return
        rule = w.interpretation
        w.claim_changes = claim_changes(before, claims, {k for k, r in unsettled if r == rule})

    def show_headline(self, result: BBTResult, summary: pd.DataFrame | None) -> None:
        """The headline sentence of the decisions over every pair, and, the first time there
        are many algorithms, "Show pairs of" set to the top-ranked one: the intervals of
        120 or more pairs cannot be read at once (the control shows the choice)."""
        w = self.w
        rope = (w.rope_low, w.rope_high)
        if summary is None:  # the view's summary is against a control: not every pair
            summary = result.summary(rope=rope, hdi=w.hdi)
        ranking = result.ranking(hdi=w.hdi)
        w.headline = headline(summary, ranking, w.interpretation)
        # from FILTER_ALGORITHMS on, the undecided pairs and the neighbours (pair_filters)
        if not self.focus_defaulted and FOCUS_ALGORITHMS < len(w.algorithms) < FILTER_ALGORITHMS:
            self.focus_defaulted = True
            if not w.focus:
                w.focus = str(ranking["algorithm"].iloc[0])

    def on_summary_event(self, event: FitEvent[dict[str, Any]]) -> None:
        if event.kind == "done" and event.result is not None:
            with self.w.hold_sync():  # the spec and its view no longer marked behind, at once
                self.w.summary_spec = event.result
                self.in_step.drawn("summary", event.key)
        elif event.kind == "error":  # a bug: shown, and the other views carry on
            problem = f"could not draw the ranking: {error_text(event.error)}"
            self.w._controls.set_problem("summary", problem)
