"""The widget's fit requests and previews: a control change that needs a new fit asks for it
here (:meth:`FitRequests.refit`); the full fit runs on one background runner, its preview (a
Laplace approximation, ``bbt_widget.widget.preview``) on another, both from the inputs
prepared once for the two (:meth:`FitRequests.prepared`), and their events set the widget's
status, progress and error traits and show the fit.

:class:`FitRequests` is one of the section objects :class:`~bbt_widget.widget.app.BBTWidget`
composes. The widget keeps what every section reads (``_fitted``: the full fit shown,
``_preview``, ``_result_key``, ``_requested_key``); this section sets them.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Callable, Hashable, Mapping
from typing import Any

from .. import engines
from ..core.run_context import QUIET, RunContext
from ..engines.base import FitCancelled
from ..fitting import (
    COUNT_SETTINGS,
    PRIOR_SETTINGS,
    SAMPLER_SETTINGS,
    PreparedFit,
    prepare_fit,
)
from .fitted import Fitted
from .keys import fit_keys
from .messages import FitFailed, LastGoodFitWarning, error_text
from .preview import preview_settings
from .runner import Dispatcher, FitEvent, FitRunner
from .stan_check import StanCheck
from .sync import remember_json
from .wait import WaitEstimate
from .warm import warm_altair

__all__ = ["FitRequests"]


class FitRequests:
    """The full fits and previews of one widget (see the module doc).

    Parameters
    ----------
    widget
        The :class:`~bbt_widget.widget.app.BBTWidget` whose traits the fits set.
    dispatcher
        Where the runners hand their events (the kernel's loop).
    warm_other_model
        Called after each new fit (not a cached one): compiles the other Stan model.
    stan_check
        Check each numpy-engine fit against a background Stan fit (:mod:`.stan_check`).
    """

    def __init__(
        self,
        widget: Any,
        dispatcher: Dispatcher | None,
        warm_other_model: Callable[[], None],
        stan_check: bool = True,
    ) -> None:
        self.w = widget
        self.stan_check = StanCheck(widget, dispatcher, enabled=stan_check)
        self._warm_other_model = warm_other_model
        self.runner: FitRunner[Fitted] = FitRunner(
            self.run_fit, self.on_fit_event, dispatcher=dispatcher, cancelled_types=(FitCancelled,)
        )
        # Previews: the newest request wins here too; a preview is never cached (cache_size=0)
        self.preview_runner: FitRunner[Fitted] = FitRunner(
            self.run_preview,
            self.on_preview_event,
            dispatcher=dispatcher,
            cache_size=0,
            cancelled_types=(FitCancelled,),
        )
        self._compile_started: float | None = None
        #: the time left of the fit in progress, shown with its percentage
        self.time_left = WaitEstimate()
        #: The exception of the last fit that failed (None once a fit is shown again).
        self.failure: BaseException | None = None
        #: The inputs of the newest fit settings, by their key (see ``prepared``).
        self._prepared_lock = threading.Lock()
        #: (key of the settings, of the settings but the prior, of those but the counting
        #: settings too, the inputs prepared for them)
        self._last_prepared: tuple[Hashable, Hashable, Hashable, PreparedFit] | None = None

    def refit(self) -> None:
        """Fit the widget's current settings (see :meth:`BBTWidget.refit`)."""
        w = self.w
        changed, w._controls.changed = w._controls.changed, ""  # this request's only
        problem = w._controls.check_fit_settings()
        w._controls.set_problem("fit", problem)
        if problem:
            return
        warm_altair()  # the summary charts need it once the fit is done: import it meanwhile
        settings = w.fit_settings
        key = fit_keys(settings)[0]
        w._requested_key = key
        if key == w._result_key:
            # e.g. d_min moved while the local ROPE is off: the charts already show this fit
            self.runner.cancel()
            self.preview_runner.cancel()
            self.drop_preview()
            w.status, w.progress, w.error = "done", 1.0, ""
            if w._fitted is not None:
                # its check again, had a change undone since stopped it (a no-op when it is
                # running or its verdict is known)
                self.stan_check.after_fit(key, w._fitted)
            w.diagnostics = self.stan_check.badge()  # no longer "fit failed", if it was
            w.status_text = w._controls.unchanged_fit_text(changed)
            w._metrics.resume()  # after a failed fit: the other metrics of this fit follow
            return
        if (
            w._previews
            and self.needs_preview(settings)
            and self.runner.cached(key) is None
            and not self.runner.is_fitting(key)
        ):
            self.preview_runner.submit(key, preview_settings(settings))
        else:
            self.preview_runner.cancel()  # a stale preview would only cost CPU
        # the Stan check of the fit shown is of settings about to be replaced: its chains
        # would take the cores this fit needs (its own check follows it)
        self.stan_check.stop()
        self.runner.submit(key, settings)

    def needs_preview(self, settings: Mapping[str, Any]) -> bool:
        """Whether a fit of ``settings`` is worth a Laplace preview: only on a Stan engine.
        The numpy engine's exact posterior takes about what the preview would, so the widget
        shows it, final, with no preview step."""
        model = "davidson" if settings.get("ties") == "davidson" else "bbt"
        try:
            engine = engines.resolve_engine(self.w._sampler_kwargs["engine"], model)
        except Exception:  # the full fit reports it
            return False
        return engine != "numpy"

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the running fit is done and shown (see :meth:`BBTWidget.wait`)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        idle = self.runner.wait(timeout)
        # the preview of these settings was cancelled when the full fit was shown: let it end
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        idle = self.preview_runner.wait(left) and idle
        w = self.w
        problem = w._controls.problems.get("fit")
        if problem:  # no fit was started: the settings cannot be fitted
            raise FitFailed(f"the current settings cannot be fitted: {problem}")
        if idle and w.error:
            raise FitFailed(
                f"{w.error}. The charts and w.result still show the last good fit, of other "
                "settings (w.result.settings); change the setting back or fix the cause"
            ) from self.failure
        return idle and w._result_key == w._requested_key

    def warn_if_failed(self, what: str) -> None:
        """Warn that ``w.<what>`` belongs to the last good fit when the fit of the current
        settings failed: without it, a notebook's next cell shows the old fit's tables as if
        they were the new settings'."""
        w = self.w
        if w.error and w._fitted is not None and w._result_key != w._requested_key:
            warnings.warn(
                f"w.{what} is the last good fit's (w.result.settings), not the current "
                f"settings': their fit failed ({w.error})",
                LastGoodFitWarning,
                stacklevel=3,
            )

    def run_fit(self, context: RunContext = QUIET, **kwargs: Any) -> Fitted:
        # Runs on the runner's worker thread: touches no trait. What bbt_widget.fit does, from
        # the inputs prepared once for this fit and its preview.
        sampler = {k: kwargs.pop(k) for k in SAMPLER_SETTINGS if k in kwargs}
        if self.w._groups.active:  # data sets in groups: the group model, as fit(group=) fits it
            return Fitted.prepare(self.w._groups.fit(context, **sampler, **kwargs))
        job = self.prepared(kwargs)
        job.warn(stacklevel=1)  # at this line, as bbt_widget.fit's were
        result = job.sample(**sampler, context=context, stacklevel=1)
        return Fitted.prepare(result)

    def run_preview(
        self,
        draws: int,
        context: RunContext = QUIET,
        **kwargs: Any,
    ) -> Fitted:
        # On the preview runner's thread, beside the full fit's. No job.warn(): the data's
        # warnings are the full fit's to report, a preview repeating them would say all twice.
        # The numpy engine's approximation, whatever the full fit's engine: milliseconds in
        # this process, where a Stan engine's starts a process (and PyStan's model server).
        job = self.prepared(kwargs)
        preview = job.laplace(draws=draws, context=context, engine="numpy")
        return Fitted.prepare(preview, preview=True)

    def prepared(self, settings: Mapping[str, Any]) -> PreparedFit:
        """The inputs of a fit of ``settings`` (no sampler settings), prepared once for the
        preview and the full fit of a control change, whichever thread asks first; the other
        waits for them (a few hundredths of a second) rather than reading the data again at
        the same time, which would delay both. Built from the last ones where it can:
        the data are the widget's own copy, so nothing read from them can differ. When only
        the hyper-prior changed, they are those inputs under the new prior
        (``PreparedFit.with_prior``: nothing read or counted again); when the local ROPE or the
        tie policy changed too, the wins are counted again from the results already read and
        audited (``PreparedFit.recount``), as the d_min slider drags."""
        key, data_key, layout_key = fit_keys(settings)
        # the full fit's size: the preview fails the memory check as its fit would
        sampler = self.w._sampler_kwargs
        size = (sampler["chains"], sampler.get("iter_sampling"))
        with self._prepared_lock:
            last = self._last_prepared
            if last is None or last[0] != key:
                if last is not None and last[1] == data_key:
                    prepared = last[3].with_prior(settings["hyperprior"], settings["prior_scale"])
                elif last is not None and last[2] == layout_key and last[3].tidy is not None:
                    prepared = last[3].recount(
                        size=size,
                        **{k: settings[k] for k in COUNT_SETTINGS + PRIOR_SETTINGS},
                    )
                else:
                    prepared = prepare_fit(self.w._data, size=size, **settings)
                last = self._last_prepared = (key, data_key, layout_key, prepared)
            return last[3]

    def on_preview_event(self, event: FitEvent[Fitted]) -> None:
        # Progress and errors are the full fit's to show (a failing preview means a failing
        # fit, which says why); only a preview of the settings still being fitted is shown.
        w = self.w
        if event.kind != "done" or event.result is None:
            return
        if event.key != w._requested_key or event.key == w._result_key:
            return  # superseded, or the full fit landed first
        with w.hold_sync():
            w._preview = event.result
            w.preview = True
            try:
                w._decisions.refresh(strict=True)
            except Exception:
                self.drop_preview()
                raise
            w.diagnostics = event.result.badge
            self.show_fit_data(event.result)
            if w.status != "done":
                w.status_text = "preview shown; the full fit follows"

    def drop_preview(self) -> None:
        """Show the last full fit again instead of a preview (a failed or superseded fit)."""
        w = self.w
        if w._preview is None:
            return
        w._preview = None
        w.preview = False
        fitted = w._fitted
        if fitted is None:
            w.fit_data, w.view_data, w.diagnostics = {}, {}, {}
            return
        w.diagnostics = fitted.badge
        self.show_fit_data(fitted)
        w._decisions.refresh()

    def on_fit_event(self, event: FitEvent[Fitted]) -> None:
        # Runs on the kernel's loop (or in wait()): the only place traits follow a fit.
        w = self.w
        if event.kind != "progress" or event.stage != "compiling":
            self._compile_started = None
        if event.kind != "progress":
            self.time_left.reset()
        if event.kind == "queued":
            w.status, w.progress = "queued", -1.0
            w.status_text = "fit queued" + (
                " (charts show the previous settings)" if w._fitted is not None else ""
            )
        elif event.kind == "progress":
            known = 0.0 <= event.fraction <= 1.0  # NaN: the engine cannot tell
            w.status = event.stage or "sampling"
            w.progress = event.fraction if known else -1.0  # -1: indeterminate bar
            if event.stage == "compiling":
                # the engine reports about once a second while compiling: the text ticks
                w.status_text = self.compiling_text(event.at)
            else:
                self._compile_started = None
                w.status_text = f"{w.status} {event.fraction:.0%}" if known else w.status
                left = self.time_left.text(event.job, w.status, event.at, event.fraction)
                if left:
                    w.status_text += f", {left}"
                if w.preview:
                    w.status_text += " (charts show a preview)"
                w.status_text += w._groups.status_note
        elif event.kind == "done":
            with w.hold_sync():
                w.error, self.failure = "", None  # first: the badge is not a failed one's
                self.show_result(event.key, event.result)
                if not event.cached:
                    w.fit_count += 1
                w.status, w.progress = "done", 1.0
                w.status_text = (
                    "done (cached, instant)" if event.cached else f"done in {event.seconds:.1f} s"
                )
            if not event.cached:
                self._warm_other_model()
        elif event.kind == "error":
            # Only the message: a traceback helps nobody looking at a widget.
            self.failure = event.error
            self.preview_runner.cancel()
            self.drop_preview()  # "the charts show the last good fit": not a preview
            w.status, w.progress = "error", 0.0
            if event.stage == "display":
                # the fit ran, but turning it into charts failed (a bug, reported as such)
                w.status_text = "could not show the fit (charts show the last good fit)"
                w.error = f"Could not show the fit: {error_text(event.error)}"
            else:
                w.status_text = "fit failed (charts show the last good fit)"
                w.error = f"Fit failed: {error_text(event.error)}"
            # not "diagnostics fine": those are the last good fit's, and the badge says so
            w.diagnostics = self.stan_check.badge()
            w._metrics.on_fit_failed()  # the other metrics wait for settings that fit

    def show_result(self, key: Hashable, fitted: Fitted | None) -> None:
        w = self.w
        if fitted is None:  # pragma: no cover - "done" always carries a result
            return
        previous = w._fitted, w._result_key, w._preview
        w._fitted, w._result_key, w._preview = fitted, key, None
        self.preview_runner.cancel()  # its preview, if still running, is not needed now
        try:
            refreshed = w._decisions.refresh(strict=True)
        except Exception:
            # keep showing the last good fit; the runner reports the error
            w._fitted, w._result_key, w._preview = previous
            raise
        w.preview = False
        w._frames.update(fitted.frames)
        w.diagnostics = fitted.badge
        w.audit = fitted.audit
        w._controls.set_problem("groups", fitted.result.disconnected_note)  # shown as an alert
        self.show_fit_data(fitted)
        if not refreshed:  # the view's own refresh updates it (the same frame twice, before)
            w._update_influence()
        w._rankings.update_ranking_model()
        w._rankings.update_ttest()
        w._metrics.on_fit_shown(key, fitted)  # the other metrics' fits and the dominance view
        self.stan_check.after_fit(key, fitted)

    def show_fit_data(self, fitted: Fitted) -> None:
        # sent as the JSON the worker thread encoded with the fit (also when it comes back
        # from the cache): nothing left to encode on the kernel
        remember_json(self.w, "fit_data", fitted.data, fitted.data_json)
        self.w.fit_data = fitted.data

    def compiling_text(self, now: float) -> str:
        if self._compile_started is None:
            self._compile_started = now
        elapsed = now - self._compile_started
        return (
            f"compiling the Stan model: {elapsed:.0f} s (once per machine; usually about a minute)"
        )
