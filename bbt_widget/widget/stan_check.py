"""The widget's cross-check of the numpy engine against Stan.

A control change shows the numpy engine's exact posterior at once. Where a Stan engine can run
here, the same settings are then fitted again with NUTS in the background (newest request
wins, as for every fit of the widget), and the diagnostics badge says whether the two agree:
every weak and strong decision the same and every mean of P(a > b) within Monte Carlo error
(:meth:`~bbt_widget.core.result.BBTResult.disagreements`), or, when they do not, a warning
naming the pairs. Nothing else waits for it: the headline, ranking and charts are the numpy
fit's from the start. While the check is under way the badge says where it is (waiting,
compiling the Stan model, running with its percentage), so that a cold compile of minutes is
not read as a verdict; :func:`stan_verdict` gives the same in words to a script.

:class:`StanCheck` is owned by the widget's :class:`~.fits.FitRequests`.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from .. import engines
from ..core.draws import SamplerSettings
from ..core.run_context import QUIET, RunContext
from ..engines.base import FitCancelled
from ..fitting import SAMPLER_SETTINGS
from .fitted import Fitted, failed_fit_badge
from .messages import error_text
from .runner import Dispatcher, FitEvent, FitRunner

__all__ = ["StanCheck", "stan_verdict"]

#: Pairs listed on the badge when the engines disagree (the rest are counted).
_LISTED = 8
#: Seconds between a numpy fit shown and its Stan check starting: the ranking, the
#: critical-difference diagram and the decision matrices are built and drawn in that time,
#: which NUTS's chains would otherwise slow by taking the cores. A newer fit within it
#: cancels the check before it costs anything (a slider being dragged).
DELAY = 2.0
#: What the badge says of a check under way, by the runner's event or progress stage.
_UNDER_WAY = {"queued": "waiting", "compiling": "compiling", "sampling": "running"}


class StanCheck:
    """Background Stan fits of the settings the numpy engine showed, and their verdicts.

    Parameters
    ----------
    widget
        The :class:`~bbt_widget.widget.app.BBTWidget`.
    dispatcher
        Where the runner hands its events (the kernel's loop).
    enabled
        False: no Stan fit is started (``BBTWidget(stan_check=False)``).
    """

    def __init__(self, widget: Any, dispatcher: Dispatcher | None, enabled: bool = True) -> None:
        self.w = widget
        self.enabled = enabled
        #: Per fit key: the disagreements found ([] when the engines agree), or the message
        #: of a Stan fit that failed.
        self.verdicts: dict[Hashable, list[str] | str] = {}
        self.runner: FitRunner[list[str]] = FitRunner(
            self._run,
            self._on_event,
            dispatcher=dispatcher,
            cache_size=6,
            cancelled_types=(FitCancelled,),
        )
        #: The check under way (the runner's newest request): its key, state (a value of
        #: ``_UNDER_WAY``) and fraction done (NaN when unknown).
        self.under_way: tuple[Hashable, str, float] | None = None

    def stan_engine(self) -> str | None:
        """The Stan engine the check runs on here, or None (none installed)."""
        try:
            return engines.stan_engine()
        except Exception:
            return None

    def after_fit(self, key: Hashable, fitted: Fitted) -> None:
        """A fit is shown: check it against Stan if it is the numpy engine's (the verdict at
        once when known)."""
        if not self.enabled or fitted.preview or fitted.result.engine != "numpy":
            return
        if self.w._groups.active:  # the group model's Stan fit takes minutes: not checked
            return
        if key in self.verdicts:
            self.show(key)
            return
        engine = self.stan_engine()
        if engine is None:
            return
        self.runner.submit(key, {"settings": self.w.fit_settings, "engine": engine, "ours": fitted})

    def stop(self) -> None:
        """Stop the check under way and the one waiting (a new fit is coming: the check of
        the fit it replaces would only slow it; :meth:`after_fit` starts the next one)."""
        self.runner.cancel()
        self.under_way = None

    def _run(
        self,
        settings: dict[str, Any],
        engine: str,
        ours: Fitted,
        context: RunContext = QUIET,
    ) -> list[str]:
        # On the runner's thread: the same inputs as the shown fit, sampled with NUTS.
        cancel = context.cancel
        if cancel is not None and cancel.wait(DELAY):
            raise FitCancelled("a newer fit came before the Stan check started")
        settings = dict(settings)
        sampler = {k: settings.pop(k) for k in SAMPLER_SETTINGS if k in settings}
        # the inputs the shown fit was prepared from (the data are not read again), sampled
        # on Stan at Stan's own iterations; through the engine, not PreparedFit.sample, so
        # that nothing is warned from this thread (warnings' filters are process-wide)
        job = self.w._fits.prepared(settings)
        stan = SamplerSettings(chains=sampler.get("chains", 4), seed=job.settings.seed)
        draws = engines.sample(
            job.model,
            job.stan_data,
            engine=engine,
            **stan.as_dict(),
            progress=context.progress,  # compiling, then sampling: on the badge
            cancel=cancel,
        )
        theirs = job.result(draws, stan.as_dict())
        w = self.w
        return ours.result.disagreements(theirs, (w.rope_low, w.rope_high), w.hdi)

    def _on_event(self, event: FitEvent[list[str]]) -> None:
        if event.kind == "done" and event.result is not None:
            self.verdicts[event.key] = event.result
            self.under_way = None
        elif event.kind == "error":
            self.verdicts[event.key] = error_text(event.error)
            self.under_way = None
        elif event.kind == "progress":
            self.under_way = (event.key, _UNDER_WAY.get(event.stage, "running"), event.fraction)
        elif event.kind == "queued":
            last = self.under_way
            # a request adopting the check already running for these settings keeps its state
            if last is None or last[0] != event.key or not self.runner.is_fitting(event.key):
                self.under_way = (event.key, "waiting", float("nan"))
        else:
            return
        if event.key == self.w._result_key:
            self.show(event.key)

    def show(self, key: Hashable) -> None:
        """Put the check of ``key`` (its verdict, or where it is) on the diagnostics badge,
        when ``key`` is the full fit shown."""
        w = self.w
        if w._fitted is None or w._preview is not None or w._result_key != key:
            return
        w.diagnostics = self.badge()

    def state(self) -> tuple[str, float, list[str] | str | None]:
        """Where the check of the fit shown is: ``("off", nan, None)`` when none runs for it,
        else its state (``"waiting"``, ``"compiling"``, ``"running"`` or ``"done"``), the
        fraction done while running, and its verdict once done."""
        w = self.w
        fitted = w._fitted
        nan = float("nan")
        if not self.enabled or w._groups.active or self.stan_engine() is None:
            return "off", nan, None
        if fitted is not None and (fitted.preview or fitted.result.engine != "numpy"):
            return "off", nan, None
        if fitted is None and w._fits.needs_preview(w.fit_settings):
            return "off", nan, None  # a Stan engine's own fit comes: nothing to check
        verdict = self.verdicts.get(w._result_key) if fitted is not None else None
        if verdict is not None:
            return "done", nan, verdict
        under = self.under_way
        if fitted is not None and under is not None and under[0] == w._result_key:
            return under[1], under[2], None
        return "waiting", nan, None  # the fit it checks is not shown yet, or it is queued

    def badge(self) -> dict[str, Any]:
        """The diagnostics badge of the full fit shown ({} when there is none), with the Stan
        verdict once known; while the fit asked for after it has failed (the widget's
        ``error``), marked as the last good fit's."""
        w = self.w
        fitted = w._fitted
        if fitted is None:
            return failed_fit_badge({}, w.error)
        badge = dict(fitted.badge)
        state, fraction, verdict = self.state()
        if state == "off":
            return failed_fit_badge(badge, w.error)
        messages = list(badge.get("messages", []))
        if verdict is None:
            shown = state
            if state == "running" and 0.0 <= fraction <= 1.0:
                shown = f"running ({fraction:.0%})"
            badge["stan"] = state
            badge["label"] = f"{badge['label']}; Stan check: {shown}"
            messages.append(f"Stan (NUTS) cross-check of these numbers: {_DOING[state]}")
        elif isinstance(verdict, str):
            badge["stan"] = "failed"
            badge["label"] = f"{badge['label']}; Stan check: failed"
            messages.append(f"Stan cross-check not run: {verdict}")
        elif not verdict:
            badge["stan"] = "agrees"
            badge["label"] = f"{badge['label']}; Stan check: agrees"
            messages.append(
                "Stan (NUTS) agrees: every decision the same, every P(a > b) within Monte "
                "Carlo error"
            )
        else:
            badge["stan"] = "differs"
            badge["ok"] = False
            badge["label"] = f"Stan check: differs on {_pairs(verdict)}"
            messages.append("Stan (NUTS) differs from the numpy engine:")
            messages += verdict[:_LISTED]
            if len(verdict) > _LISTED:
                messages.append(f"... and {len(verdict) - _LISTED} more")
        badge["messages"] = messages
        return failed_fit_badge(badge, w.error)


#: What a check under way is doing, for the badge's tooltip.
_DOING = {
    "waiting": "waiting for the charts to be drawn (it starts a few seconds after the fit)",
    "compiling": "compiling the Stan model (once per machine; usually about a minute)",
    "running": "sampling with NUTS",
}


def _pairs(verdict: list[str]) -> str:
    """``"N pair(s)"``: the pairs a list of disagreements names (one line per claim)."""
    pairs = len({line.split(":")[0] for line in verdict})
    return f"{pairs} pair{'s' if pairs > 1 else ''}"


def stan_verdict(widget: Any) -> str:
    """The Stan cross-check of the fit shown (``BBTWidget(stan_check=True)``), in words.

    ``"off"`` when no check runs for it (``stan_check=False``, no Stan engine installed here,
    data sets in groups, or a fit on a Stan engine already); ``"waiting"``, ``"compiling"`` or
    ``"running"`` while it is under way; then ``"agrees"`` (every decision the same, every
    P(a > b) within Monte Carlo error), ``"differs on N pairs: ..."`` (the claims that
    differ) or ``"failed: <reason>"``. In a script, call ``w.wait()`` then
    ``w.wait_background(timeout, stan=True)``, which waits for the check too, before reading it.
    """
    check: StanCheck = widget._fits.stan_check
    state, _fraction, verdict = check.state()
    if verdict is None:
        return state
    if isinstance(verdict, str):
        return f"failed: {verdict}"
    if not verdict:
        return "agrees"
    return f"differs on {_pairs(verdict)}: " + "; ".join(verdict)
