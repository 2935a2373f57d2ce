"""The widget's cross-check of the numpy engine against Stan.

A control change shows the numpy engine's exact posterior at once. Where a Stan engine can run
here, the same settings are then fitted again with NUTS in the background (newest request
wins, as for every fit of the widget), and the diagnostics badge says whether the two agree:
every weak and strong decision the same and every mean of P(a > b) within Monte Carlo error
(:meth:`~bbt_widget.core.result.BBTResult.disagreements`), or, when they do not, a warning
naming the pairs. Nothing else waits for it: the headline, ranking and charts are the numpy
fit's from the start.

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

__all__ = ["StanCheck"]

#: Pairs listed on the badge when the engines disagree (the rest are counted).
_LISTED = 8
#: Seconds between a numpy fit shown and its Stan check starting: the ranking, the
#: critical-difference diagram and the decision matrices are built and drawn in that time,
#: which NUTS's chains would otherwise slow by taking the cores. A newer fit within it
#: cancels the check before it costs anything (a slider being dragged).
DELAY = 2.0


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
            job.model, job.stan_data, engine=engine, **stan.as_dict(), cancel=cancel
        )
        theirs = job.result(draws, stan.as_dict())
        w = self.w
        return ours.result.disagreements(theirs, (w.rope_low, w.rope_high), w.hdi)

    def _on_event(self, event: FitEvent[list[str]]) -> None:
        if event.kind == "done" and event.result is not None:
            self.verdicts[event.key] = event.result
        elif event.kind == "error":
            self.verdicts[event.key] = error_text(event.error)
        else:
            return
        if event.key == self.w._result_key:
            self.show(event.key)

    def show(self, key: Hashable) -> None:
        """Put the verdict of ``key`` on the diagnostics badge (of the fit shown)."""
        w = self.w
        if w._fitted is None or key not in self.verdicts or w._result_key != key:
            return
        w.diagnostics = self.badge()

    def badge(self) -> dict[str, Any]:
        """The diagnostics badge of the full fit shown ({} when there is none), with the Stan
        verdict once known; while the fit asked for after it has failed (the widget's
        ``error``), marked as the last good fit's."""
        w = self.w
        fitted = w._fitted
        if fitted is None:
            return failed_fit_badge({}, w.error)
        badge = dict(fitted.badge)
        verdict = self.verdicts.get(w._result_key)
        if verdict is None:
            return failed_fit_badge(badge, w.error)
        messages = list(badge.get("messages", []))
        if isinstance(verdict, str):
            badge["stan"] = "failed"
            messages.append(f"Stan cross-check not run: {verdict}")
        elif not verdict:
            badge["stan"] = "agrees"
            badge["label"] = f"{badge['label']}; Stan agrees"
            messages.append(
                "Stan (NUTS) agrees: every decision the same, every P(a > b) within Monte "
                "Carlo error"
            )
        else:
            pairs = len({line.split(":")[0] for line in verdict})
            badge["stan"] = "differs"
            badge["ok"] = False
            badge["label"] = f"Stan differs on {pairs} pair{'s' if pairs > 1 else ''}"
            messages.append("Stan (NUTS) differs from the numpy engine:")
            messages += verdict[:_LISTED]
            if len(verdict) > _LISTED:
                messages.append(f"... and {len(verdict) - _LISTED} more")
        badge["messages"] = messages
        return failed_fit_badge(badge, w.error)
