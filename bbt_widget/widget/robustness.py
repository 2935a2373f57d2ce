"""The widget's Robustness section: :func:`bbt_widget.sweep` in the background on request (its
own runner, through the batch layer; progress and cancel), the flips chart of the pairs that
change their decision across the settings, and the data sets that move the highlighted pair
most (:func:`bbt_widget.influence`, computed in the background the first time a pair is
highlighted for a fit).

With data sets in groups (``BBTWidget(data, group=...)``) the sweep is
``bbt.sweep(..., group=...)``: every setting fits the group model (the default grid has no
Davidson ties, which that model cannot count). The flips chart shows the pooled abilities'
decisions, or the chosen group's (``GroupedSweepResult.group_table``) when the group selector
names one. The influence is not computed for the group model (``bbt.influence`` refuses it:
its importance weights and refits are those of the model without groups): the section says so
instead of starting it.

:class:`RobustnessSection` is one of the section objects
:class:`~bbt_widget.widget.app.BBTWidget` composes: it owns the sweep and influence runners and
their results, and sets the widget's robustness traits.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from typing import Any, cast

from ..charts.frames import to_columns
from ..charts.frames_decisions import flips_frame, influence_frame
from ..charts.spec_cache import robustness_spec
from ..core.bidi import isolate
from ..core.result import BBTResult
from ..core.run_context import RunContext
from ..engines.base import FitCancelled
from ..lab.influence import Influence
from ..lab.influence import influence as core_influence
from ..lab.sweep import sweep as core_sweep
from ..lab.sweep_groups import GroupedSweepResult
from ..lab.sweep_result import SweepResult
from .keys import settings_key
from .messages import error_text
from .runner import Dispatcher, FitEvent, FitRunner
from .views import SWEEP_OPTIONS

__all__ = ["GROUP_INFLUENCE_NOTE", "RobustnessSection"]

#: Shown in place of the influence chart of a grouped widget (no influence is computed).
GROUP_INFLUENCE_NOTE = (
    "influence is not computed for the group model: leaving a data set out changes its "
    "group's win table and abilities, which bbt.influence (importance weights and refits of "
    "the model without groups) ignores; for the influence on the pooled claims, fit the data "
    "without group= (e.g. bbt.influence(bbt.fit(data, ...)))"
)


class RobustnessSection:
    """The sweep and the influence of the highlighted pair (see the module doc).

    Parameters
    ----------
    widget
        The :class:`~bbt_widget.widget.app.BBTWidget` whose robustness view this is.
    dispatcher
        Where the runners hand their events (the kernel's loop).
    sweep_options
        The first :attr:`sweep_options`.
    """

    def __init__(
        self, widget: Any, dispatcher: Dispatcher | None, sweep_options: Mapping[str, Any]
    ) -> None:
        self.w = widget
        self._sweep_options: dict[str, Any] = {}
        self.sweep_options = sweep_options
        self._sweep: SweepResult | None = None
        #: How long the sweep shown took ("in 12 s" or "cached") and the score column it
        #: read, for its summary line.
        self._sweep_when, self._sweep_score = "", ""
        self.sweep_runner: FitRunner[SweepResult] = FitRunner(
            self._run_sweep,
            self._on_sweep_event,
            dispatcher=dispatcher,
            cache_size=4,
            cancelled_types=(FitCancelled,),
        )
        self._influence: tuple[Hashable, Influence] | None = None
        self.influence_runner: FitRunner[Influence] = FitRunner(
            self._run_influence,
            self._on_influence_event,
            dispatcher=dispatcher,
            cache_size=6,
            cancelled_types=(FitCancelled,),
        )

    def close(self) -> None:
        """Forget the sweep and influence results (the runners are the widget's to close)."""
        self._sweep = self._influence = None

    @property
    def sweep_options(self) -> dict[str, Any]:
        """Keywords of :func:`bbt_widget.sweep` for :meth:`run_sweep` (see ``SWEEP_OPTIONS``).

        Unless a seed of its own was given, the seed is the fits' seed of the metric shown
        (with several metrics, the one ``compare_metrics`` gives that metric)."""
        options = dict(self._sweep_options)
        if "seed" not in options:
            options["seed"] = self.w._sampler_kwargs["seed"]
        return options

    @sweep_options.setter
    def sweep_options(self, options: Mapping[str, Any]) -> None:
        unknown = sorted(set(options) - set(SWEEP_OPTIONS))
        if unknown:
            raise ValueError(
                f"sweep_options: unknown option {unknown[0]!r}; valid options: "
                f"{', '.join(SWEEP_OPTIONS)} (the data layout, ROPE and HDI come from the "
                "widget)"
            )
        options = dict(options)
        # a seed equal to the fits' is the widget's (read back from sweep_options and set
        # again): it follows the metric shown, as the fits' seed does
        if options.get("seed", object()) == self.w._sampler_kwargs["seed"]:
            del options["seed"]
        self._sweep_options = options

    @property
    def sweep(self) -> SweepResult | None:
        """The last sweep of the robustness section (``None`` before the first one)."""
        return self._sweep

    @property
    def influence(self) -> Influence | None:
        """Influence of each data set on the fit shown, at the current ROPE and
        interpretation (``None`` until a pair was highlighted and it was computed)."""
        if self._influence is None or self._influence[0] != self.influence_key():
            return None
        return self._influence[1]

    def run_sweep(self) -> None:
        """Run the robustness sweep in the background (the section's button does this).

        ``bbt.sweep`` with the widget's data and ``sweep_options``, through the batch layer
        (all local cores, or the Dask client given as ``executor``); progress in
        ``sweep_status``/``sweep_text``, the flips chart when done. A sweep of the same data
        and options is taken from the cache.
        """
        options = {**self.w._data_kwargs, "lower_is_better": self.w.lower_is_better}
        options.update(self.w._groups.fit_keywords)  # group=: the group model's sweep
        if self.w.tie_threshold:  # the fits' tie threshold, unless the grid varies it
            options["tie_threshold"] = self.w.tie_threshold
        options.update(self.sweep_options)
        if "grid" not in options:
            # the default grid, with the widget's paired setting (not the data's default);
            # the group model has no tie parameter: no Davidson ties
            grouped = self.w._groups.active
            options["grid"] = {
                "ties": [
                    t for t in core_sweep.DEFAULT_GRID["ties"] if not grouped or t != "davidson"
                ],
                "d_min": list(core_sweep.DEFAULT_GRID["d_min"])
                if self.w.local_rope_available
                else [None],
                "paired": [bool(self.w.paired)],
            }
        self.sweep_runner.submit(settings_key(options), options)

    def cancel_sweep(self) -> None:
        """Stop the running sweep (its fits are killed; nothing is shown for it)."""
        if not self.sweep_runner.busy:
            return
        self.sweep_runner.cancel()
        self.w.sweep_status, self.w.sweep_progress = "cancelled", 0.0
        self.w.sweep_text = "sweep cancelled" + (
            " (the chart shows the previous sweep)" if self._sweep is not None else ""
        )

    def on_front_end_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        # the section's buttons: actions, not state, so custom messages rather than traits
        action = content.get("action") if isinstance(content, dict) else None
        if action == "run_sweep":
            self.run_sweep()
        elif action == "cancel_sweep":
            self.cancel_sweep()

    def _run_sweep(self, context: RunContext, **kwargs: Any) -> SweepResult:
        # Runs on the sweep runner's thread: the batch layer runs the fits in parallel.
        robustness_spec()  # built (or read) here, not on the kernel's thread
        data = self.w._groups.data if "group" in kwargs else self.w._data
        return core_sweep(data, progress=context.progress, cancel=context.cancel, **kwargs)

    def _on_sweep_event(self, event: FitEvent[SweepResult]) -> None:
        if event.kind == "queued":
            self.w.sweep_status, self.w.sweep_progress = "queued", -1.0
            self.w.sweep_text = "sweep queued"
        elif event.kind == "progress":
            known = 0.0 <= event.fraction <= 1.0
            self.w.sweep_status = event.stage or "fitting"
            self.w.sweep_progress = event.fraction if known else -1.0
            self.w.sweep_text = (
                f"sweep: fitting {event.fraction:.0%}"
                if known
                else f"sweep: {event.stage or 'starting'}"
            )
        elif event.kind == "done" and event.result is not None:
            sweep = event.result
            with self.w.hold_sync():
                self._sweep = sweep
                self._sweep_when = "cached" if event.cached else f"in {event.seconds:.0f} s"
                # a sweep's key is its settings as (name, value) pairs
                key = dict(cast("Iterable[tuple[str, Any]]", event.key))
                self._sweep_score = str(key.get("score"))
                if not self.w.robustness_spec:
                    self.w.robustness_spec = robustness_spec()
                self.w.sweep_status, self.w.sweep_progress = "done", 1.0
                self.refresh_sweep_view()
                self.w.sweep_text = self._sweep_summary(sweep, self._sweep_group(sweep))
        elif event.kind == "error":
            self.w.sweep_status, self.w.sweep_progress = "error", 0.0
            self.w.sweep_text = f"Sweep failed: {error_text(event.error)}"

    def _sweep_summary(self, sweep: SweepResult, group: str | None) -> str:
        flips = self.w.sweep_data.get("flips", [])
        keys = self.w.sweep_data.get("key", [])
        n_pairs = len(set(keys))
        n_flips = len({k for k, f in zip(keys, flips) if f})
        fits = len(sweep.settings)
        text = (
            f"{fits} fits ({self._sweep_when}): {n_flips} of {n_pairs} pairs change their "
            f"{self.w.interpretation} decision across the settings"
        )
        if isinstance(sweep, GroupedSweepResult):  # whose decisions: the group model's
            text += (
                " (group model, pooled abilities)"
                if group is None
                else f" in group {isolate(group)} (group model)"
            )
        text += f"; {sweep.n_failed} fits failed" if sweep.n_failed else ""
        shown = str(self.w._data_kwargs["score"])
        if self.w.metrics and self._sweep_score != shown:  # several metrics: another one's
            text += (
                f"; this is the sweep of {isolate(self._sweep_score)}: run it again for "
                f"{isolate(shown)}"
            )
        return text

    def _sweep_group(self, sweep: SweepResult) -> str | None:
        """The group whose decisions the flips chart shows (None: the pooled abilities')."""
        name = self.w.selected_group
        if isinstance(sweep, GroupedSweepResult) and name in sweep.groups:
            return str(name)
        return None

    def refresh_sweep_view(self) -> None:
        """The flips chart at the current ROPE, HDI and interpretation (no refit): of the
        pooled abilities, or of the chosen group's in a sweep of the group model."""
        sweep = self._sweep
        if sweep is None or self.w._controls.check_view_settings():
            return
        rope, hdi = (self.w.rope_low, self.w.rope_high), self.w.hdi
        group = self._sweep_group(sweep)
        if group is None:
            table = sweep.table(rope=rope, hdi=hdi)
        else:  # the group's rows: setting by setting, pairs in the pooled table's order
            assert isinstance(sweep, GroupedSweepResult)
            rows = sweep.group_table(rope=rope, hdi=hdi)
            table = rows[rows["group"] == group].drop(columns="group").reset_index(drop=True)
        frame = flips_frame(table, list(sweep.setting_labels()), self.w.interpretation)
        self.w.sweep_data = to_columns(frame)
        if self.w.sweep_status == "done":
            self.w.sweep_text = self._sweep_summary(sweep, group)

    def influence_key(self) -> Hashable:
        return (self.w._result_key, self.w.interpretation, self.w.rope_low, self.w.rope_high)

    def on_selected_pair(self, change: dict[str, Any]) -> None:
        self.update_influence()

    def update_influence(self) -> None:
        """Show the influence chart of the highlighted pair; the first time a pair is
        highlighted for a fit (and ROPE / interpretation), compute it in the background."""
        pair = self.w.selected_pair
        fitted = self.w._fitted
        if self.w._groups.active:  # bbt.influence refuses the group model: say why, start none
            if fitted is not None:
                note = "influence is not computed for the group model"
                self.w.influence_data = to_columns(influence_frame(None, pair, note=note))
                self.w.influence_text = GROUP_INFLUENCE_NOTE
            return
        key = self.influence_key()
        if self._influence is not None and self._influence[0] == key:
            frame = influence_frame(self._influence[1].table, pair)
            self.w.influence_data = to_columns(frame)
            return
        pending = bool(pair) and fitted is not None and not self.w._controls.check_view_settings()
        note = "computing the influence of each data set..." if pending else ""
        self.w.influence_data = to_columns(influence_frame(None, pair, note=note))
        if not pending:
            return
        self.influence_runner.submit(
            key,
            {
                "result": fitted.result,
                "interpretation": self.w.interpretation,
                "rope": (self.w.rope_low, self.w.rope_high),
            },
        )

    @staticmethod
    def _run_influence(result: BBTResult, context: RunContext, **kwargs: Any) -> Influence:
        return core_influence(result, progress=context.progress, cancel=context.cancel, **kwargs)

    def _on_influence_event(self, event: FitEvent[Influence]) -> None:
        if event.kind in ("queued", "progress"):
            self.w.influence_text = "computing the influence of each data set (once per fit)..."
        elif event.kind == "done" and event.result is not None:
            self._influence = (event.key, event.result)
            self.w.influence_text = ""
            if event.key == self.influence_key():
                self.update_influence()
        elif event.kind == "error":
            self.w.influence_text = f"Influence unavailable: {error_text(event.error)}"
