"""The widget's metrics section: several score columns, a metric selector and the dominance
view.

``BBTWidget(df, score=["acc", "f1", "time"], lower_is_better=["time"])`` offers the metrics in
a selector (trait ``metric``): every view shows the chosen metric's BBT fit, and its direction
control is that metric's direction. The other metrics are fitted in the background once the
chosen one is shown, one after the other, under the same settings; each finished fit updates
the dominance view: per ordered pair, the metrics where ``a`` is claimed better and worse, and
whether ``a`` dominates ``b``, with the Pareto set, all from
:class:`~bbt_widget.lab.metrics.MetricsResult` (the rule is defined there once). Metric ``k``
is fitted with seed ``spawn_seeds(seed, n)[k]``, as :func:`bbt_widget.compare_metrics` does,
so the widget shows the numbers ``compare_metrics`` gives for the same data and seed.

A single score column (``score="acc"`` or none) is the widget as it always was: no selector,
no dominance view, no background fits.

:class:`MetricsSection` is one of the section objects :class:`~bbt_widget.widget.app.BBTWidget`
composes; it sets the widget's ``metric``, ``dominance_data`` and ``dominance_text`` traits and
answers ``BBTWidget.metrics_result``.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..core.bidi import isolate
from ..core.data import as_tidy
from ..core.run_context import QUIET, RunContext
from ..core.tidy import TidyResults
from ..engines.base import FitCancelled
from ..lab.batch import spawn_seeds
from ..lab.metrics import MetricsResult, check_metrics
from .controls import FIT_TRAITS, VIEW_TRAITS
from .fitted import Fitted
from .keys import fit_keys
from .messages import error_text
from .runner import Dispatcher, FitEvent, FitRunner

__all__ = ["MetricChoice", "MetricsResult", "MetricsSection", "metric_choice"]


@dataclass(frozen=True)
class MetricChoice:
    """The score column(s) of a widget, checked once at construction.

    Attributes
    ----------
    tidy
        The results of the score shown first, read by ``tidy_results``.
    score
        The score column shown first (the first metric; ``None``: the one column inferred).
    lower_is_better
        Its direction.
    metrics
        Every metric offered, in the order given; ``()`` for a single score column.
    lower
        The metrics where a lower score is better.
    seeds
        Metric -> its fits' seed (``spawn_seeds(seed, n)``, as ``compare_metrics``).
    """

    tidy: TidyResults
    score: str | None
    lower_is_better: bool
    metrics: tuple[str, ...] = ()
    lower: tuple[str, ...] = ()
    seeds: Mapping[str, int] = field(default_factory=dict)


def metric_choice(
    data: pd.DataFrame | TidyResults,
    score: str | Sequence[str] | None,
    lower_is_better: bool | Sequence[str],
    *,
    seed: int | None,
    layout: Mapping[str, Any],
    group: Any = None,
) -> MetricChoice:
    """The widget's metrics from its ``score`` and ``lower_is_better`` arguments, and the
    results of the first one (``layout``: the ``dataset``, ``algorithm``, ``fold`` and ``sd``
    arguments).

    A string (or ``None``) is one score column, read by ``tidy_results`` as before (results
    it already read are taken as they are). A list
    names several score columns of long-form results: each must be a numeric column
    (``tidy_results`` reads every one of them here, before anything is shown), and
    ``lower_is_better`` lists those where lower is better.

    Raises
    ------
    TypeError, ValueError
        Naming the column and the fix: a metric that is not a column, or not numbers, one
        given twice, a ``lower_is_better`` metric that is not in ``score``, or ``sd``
        (standard deviations of one score) with several metrics, or ``group`` (data sets in
        groups) with several metrics.
    """
    if score is None or isinstance(score, str):
        # one score column: reading checks the arguments, lower_is_better included (results
        # already read are taken as they are)
        direction: Any = lower_is_better
        tidy = as_tidy(data, **layout, score=score, lower_is_better=direction)
        return MetricChoice(tidy, score, direction)
    metrics, lower = check_metrics(
        data, score, lower_is_better, name="score", layout={**layout, "group": group}
    )
    if group is not None:
        raise ValueError(
            "the widget shows data sets in groups (group=) for one score; for several metrics "
            "in groups use bbt.compare_metrics(data, metrics=[...], group=...), or pass one "
            "score column"
        )
    if layout.get("sd") is not None:
        raise ValueError(
            "sd= holds the standard deviations of one score; with several metrics "
            "(score=[...]) give fold-level results (fold=) instead"
        )
    read = []
    for m in metrics:
        try:
            read.append(
                as_tidy(
                    data,
                    **{k: layout.get(k) for k in ("dataset", "algorithm", "fold")},
                    score=m,
                    lower_is_better=m in lower,
                )
            )
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"score {m!r}: {exc}") from None
    seeds = dict(zip(metrics, spawn_seeds(seed, len(metrics))))
    first = metrics[0]
    return MetricChoice(read[0], first, first in lower, tuple(metrics), tuple(lower), seeds)


class MetricsSection:
    """The metric selector's checks, the other metrics' background fits and the dominance
    view (see the module doc).

    Parameters
    ----------
    widget
        The :class:`~bbt_widget.widget.app.BBTWidget` whose metrics these are.
    dispatcher
        Where the runner hands its events (the kernel's loop).
    choice
        The metrics, checked by :func:`metric_choice`.
    """

    def __init__(self, widget: Any, dispatcher: Dispatcher | None, choice: MetricChoice) -> None:
        self.w = widget
        self.choice = choice
        #: Metric -> whether lower is better: the direction control's value for each metric.
        self.directions = {m: m in choice.lower for m in choice.metrics}
        #: Metric -> the key and settings of its fit under the settings shown.
        self.keys: dict[str, Hashable] = {}
        self._settings: dict[str, dict[str, Any]] = {}
        #: The fits (and errors) of the settings shown, by fit key.
        self.fits: dict[Hashable, Fitted] = {}
        self.errors: dict[Hashable, str] = {}
        self._progress = ""
        #: Whether the fit of newer settings failed: the metrics of the settings shown that
        #: are not fitted yet will not be (the other metrics follow a fit that is shown).
        self._stalled = False
        self._switching = False
        # the background fits of the other metrics, one at a time (nothing cached here: the
        # fits are kept above and handed to the widget's fit cache)
        self.runner: FitRunner[Fitted] = FitRunner(
            self._run,
            self._on_event,
            dispatcher=dispatcher,
            cache_size=0,
            cancelled_types=(FitCancelled,),
        )
        # registered before the widget's own observers: a background fit of the old settings
        # is cancelled before the new fit is asked for
        widget.observe(self.on_metric, names=["metric"])
        if choice.metrics:
            widget.observe(self.on_direction, names=["lower_is_better"])
            widget.observe(self.on_fit_setting, names=list(FIT_TRAITS))
            widget.observe(lambda _change: self.refresh(), names=list(VIEW_TRAITS))

    @staticmethod
    def initial_traits(choice: MetricChoice) -> dict[str, Any]:
        """The traits' first values."""
        return {"metric": choice.score if choice.metrics else "", "metrics": list(choice.metrics)}

    # --- the selector and the direction control

    @property
    def current(self) -> str:
        """The metric whose fit the views show (the last valid choice)."""
        return str(self.w._data_kwargs["score"])

    def on_metric(self, change: dict[str, Any]) -> None:
        """Show another metric: its fit from the cache, else a new fit (as for a fit
        control); an unknown metric is shown as the problem and changes nothing."""
        w, new = self.w, change["new"]
        metrics = self.choice.metrics
        if not metrics:
            problem = (
                f"metric: this widget has one score column; pass score=[...] with several "
                f"score columns to compare metrics (got {new!r})"
                if new
                else ""
            )
            w._controls.set_problem("metric", problem)
            return
        if new not in metrics:
            w._controls.set_problem(
                "metric",
                f"metric: {new!r} is not one of the metrics ({', '.join(metrics)}); "
                "choose one of them",
            )
            return
        w._controls.set_problem("metric", "")
        if new == self.current:
            return
        if self.runner.is_fitting(self.keys.get(new)):
            self.runner.cancel()  # the widget's own fit takes it over
        w._data_kwargs["score"] = new
        w._sampler_kwargs["seed"] = self.choice.seeds[new]
        if bool(w.lower_is_better) != self.directions[new]:
            self._switching = True  # the direction follows the metric; its change refits
            try:
                w.lower_is_better = self.directions[new]
            finally:
                self._switching = False
        else:
            w.refit()

    def on_direction(self, change: dict[str, Any]) -> None:
        if not self._switching:
            self.directions[self.current] = bool(change["new"])

    def on_fit_setting(self, change: dict[str, Any]) -> None:
        """A fit control changed: when the background fit running is not one of the new
        settings (as it still is after d_min moved with the local ROPE off, or after the
        shown metric's direction changed), it stops; the other metrics are fitted under the
        new settings once their fit is shown."""
        if self._switching or not self.keys:
            return
        try:
            keys = {m: fit_keys(self.settings_for(m))[0] for m in self.choice.metrics}
        except (TypeError, ValueError):
            return  # invalid settings start no fit (the widget says why): nothing changes
        if keys != self.keys and not any(self.runner.is_fitting(k) for k in keys.values()):
            self.runner.cancel()
            self._progress = ""  # the cancelled fit's progress is no news any more

    # --- the fits

    def settings_for(self, metric: str) -> dict[str, Any]:
        """The ``fit`` keywords of ``metric`` under the widget's current settings."""
        return {
            **self.w.fit_settings,
            "score": metric,
            "lower_is_better": self.directions[metric],
            "seed": self.choice.seeds[metric],
        }

    def on_fit_shown(self, key: Hashable, fitted: Fitted) -> None:
        """The widget shows a new full fit (of the current metric): fit the other metrics
        under its settings (those fitted before come from the widget's cache), redraw."""
        if not self.choice.metrics:
            return
        try:
            settings = {m: self.settings_for(m) for m in self.choice.metrics}
            keys = {m: fit_keys(s)[0] for m, s in settings.items()}
        except (TypeError, ValueError):
            # the controls were set to invalid values since this fit was asked for (the
            # widget says why): the other metrics wait for the next valid settings
            settings, keys = {}, {}
        self._settings, self.keys = settings, {**keys, self.current: key}
        self._stalled = False
        shown = set(self.keys.values())
        self.fits = {k: f for k, f in self.fits.items() if k in shown}
        self.errors = {k: e for k, e in self.errors.items() if k in shown}
        self.fits[key] = fitted
        for k in shown - set(self.fits):
            hit = self.w._runner.cached(k)
            if hit is not None:
                self.fits[k] = hit
        self.schedule()
        self.refresh()

    def on_fit_failed(self) -> None:
        """The widget's fit of new settings failed (the charts keep the last good fit): the
        metrics of the settings shown that are not fitted yet wait for settings that fit, and
        the view says so rather than "still fitting"."""
        if not self.choice.metrics or not self.keys:
            return
        # a background fit still running is one of the settings shown (a change of settings
        # stopped the others): it ends and is shown; no further one is asked for
        self._stalled = True
        self.w.dominance_text = self.text()

    def resume(self) -> None:
        """The controls are back at the settings shown after a failed fit: fit their other
        metrics (as when the fit was shown), and say so."""
        if not self._stalled:
            return
        self._stalled = False
        self.schedule()
        self.refresh()

    def schedule(self) -> None:
        """Ask for the next metric not fitted yet (one at a time), unless a fit of new
        settings is on its way (its metrics follow once it is shown)."""
        w = self.w
        if w._requested_key != w._result_key:
            return
        for m in self.choice.metrics:
            k = self.keys.get(m)
            if k is not None and k not in self.fits and k not in self.errors:
                self.runner.submit(k, {**self._settings[m], "metric": m})
                return

    def _run(
        self,
        metric: str,
        context: RunContext = QUIET,
        **settings: Any,
    ) -> Fitted:
        # on the runner's thread: the widget's own fit function, for another score column
        fitted: Fitted = self.w._fits.run_fit(context=context, **settings)
        return fitted

    def _on_event(self, event: FitEvent[Fitted]) -> None:
        metric = next((m for m, k in self.keys.items() if k == event.key), "")
        if event.kind == "done" and event.result is not None:
            self.w._runner.remember(event.key, event.result)  # switching to it is instant
            self.fits[event.key] = event.result
            self._progress = ""
        elif event.kind == "error":
            self.errors[event.key] = error_text(event.error)
            self._progress = ""
        elif event.kind in ("queued", "progress"):
            known = 0.0 <= event.fraction <= 1.0
            stage = event.stage or ("queued" if event.kind == "queued" else "sampling")
            self._progress = f"{isolate(metric)}: {stage}" + (
                f" {event.fraction:.0%}" if known else ""
            )
            self.w.dominance_text = self.text()
            return
        else:
            return
        self.schedule()
        self.refresh()

    # --- the dominance view

    def result(self) -> MetricsResult | None:
        """The fits of the settings shown as a :class:`MetricsResult` (metrics still fitting
        are absent, failed ones in its ``errors``); ``None`` with a single score column."""
        if not self.choice.metrics:
            return None
        fitted = [m for m in self.choice.metrics if self.keys.get(m) in self.fits]
        return MetricsResult(
            {m: self.fits[self.keys[m]].result for m in fitted},
            fitted,
            [m for m in fitted if self.directions[m]],
            errors={m: self.errors[k] for m, k in self.keys.items() if k in self.errors},
        )

    def pending(self) -> list[str]:
        """The metrics whose fit under the settings shown has not arrived yet."""
        return [
            m
            for m in self.choice.metrics
            if self.keys.get(m) not in self.fits and self.keys.get(m) not in self.errors
        ]

    def text(self) -> str:
        """Which metrics are still fitting and which failed ('' when all are shown)."""
        lines = []
        pending = self.pending()
        if pending:
            fitted = [m for m in self.choice.metrics if self.keys.get(m) in self.fits]
            so_far = (
                f"; the dominance below is over {', '.join(map(isolate, fitted))} so far"
                if fitted
                else ""
            )
            names = ", ".join(map(isolate, pending))
            if self._stalled:
                lines.append(
                    f"not fitted: {names} (the fit of the new settings failed, see the error; "
                    f"the dominance below is over {', '.join(map(isolate, fitted))} under the "
                    "settings shown)"
                )
            else:
                now = f" ({self._progress})" if self._progress else ""
                lines.append(f"still fitting: {names}{now}{so_far}")
        for m, k in self.keys.items():
            if k in self.errors:
                lines.append(f"fit failed for {isolate(m)}: {self.errors[k]}")
        return "\n".join(lines)

    def refresh(self) -> None:
        """Redraw the dominance view from the fits there (no fit); invalid view settings
        keep the last good view (the widget shows their problem)."""
        w = self.w
        if not self.choice.metrics or not self.keys:
            return
        if w._controls.check_view_settings():
            return
        res = self.result()
        assert res is not None  # several metrics
        rope, hdi = (w.rope_low, w.rope_high), w.hdi
        try:
            rule = res.rule(w.interpretation)
            dominance = res.dominance(rule, rope, hdi)
            pareto = res.pareto(rule, rope, hdi)
        except Exception as exc:  # a bug: shown, the last good view stays
            problem = f"could not redraw the dominance view: {error_text(exc)}"
            w._controls.set_problem("dominance", problem)
            return
        w._controls.set_problem("dominance", "")
        w.dominance_data = {
            "metrics": list(self.choice.metrics),
            "fitted": res.metrics,
            "pending": self.pending(),
            "failed": dict(res.errors),
            "lower": [m for m in self.choice.metrics if self.directions[m]],
            "rule": rule,
            "algorithms": res.algorithms,
            "pareto": pareto,
            "rows": dominance.to_dict("records"),
        }
        w.dominance_text = self.text()

    # --- what the widget's close() and wait_background() call

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every metric of the settings shown is fitted (or failed)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not self.runner.wait(left):
                return False
            if not self.runner.busy:  # the last event delivered asked for no further fit
                return True

    def cancel(self) -> None:
        self.runner.cancel()

    def close(self, timeout: float = 10.0) -> None:
        self.runner.close(timeout)
        self.fits.clear()
