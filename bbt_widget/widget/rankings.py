"""The widget's ranking views beyond BBT: Plackett-Luce or Mallows fitted to the rankings and
drawn against the BBT fit (each once per data settings, in the background, when
``ranking_model`` asks for it), and the correlated t-test of the data set clicked in the
influence chart for the highlighted pair, beside that pair's Bayesian signed-rank test in the
probability simplex.

With data sets in groups (``BBTWidget(data, group=...)``) both views pool the data sets of
every group, as they would without groups: Plackett-Luce and Mallows have no groups and are
drawn against the group model's pooled abilities (whatever group the selector shows), the
t-test reads the clicked data set alone and the signed-rank test every data set. Each view says
so beside its chart (:data:`GROUP_RANKING_NOTE`, :data:`GROUP_TTEST_NOTE`).

:class:`RankingSection` is one of the section objects :class:`~bbt_widget.widget.app.BBTWidget`
composes: it owns the ranking-model and t-test runners and the ranking-model fits, and sets the
widget's ranking-model and t-test traits.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any, cast

from ..core.bidi import isolate
from ..core.result import BBTResult
from ..core.run_context import QUIET, RunContext
from ..engines.base import FitCancelled
from .keys import pair_of, settings_key
from .messages import check_ranking_model, error_text
from .runner import Dispatcher, FitEvent, FitRunner
from .views import ranking_model_spec, ttest_spec

if TYPE_CHECKING:  # imports Altair, which the first charts must not wait for
    from ..ranking._mallows import MallowsResult
    from ..ranking._plackett_luce import RankingModelResult

__all__ = ["GROUP_RANKING_NOTE", "GROUP_TTEST_NOTE", "RankingSection"]

#: Beside the ranking-model chart of a grouped widget ({model}: Plackett-Luce or Mallows).
GROUP_RANKING_NOTE = (
    "{model} pools all data sets (it ignores the groups) and is drawn against the group "
    "model's pooled abilities, whatever group is chosen"
)
#: Beside the t-test of a grouped widget.
GROUP_TTEST_NOTE = (
    "The correlated t-test reads this data set's folds alone; the signed-rank test pools all "
    "data sets (it ignores the groups)."
)


class RankingSection:
    """The ranking models and the clicked data set's t-test (see the module doc).

    Parameters
    ----------
    widget
        The :class:`~bbt_widget.widget.app.BBTWidget` whose ranking views these are.
    dispatcher
        Where the runners hand their events (the kernel's loop).
    ttest_options
        The t-test's ``rope`` and ``rho``, and whether the data have folds (``has_folds``).
    """

    def __init__(
        self, widget: Any, dispatcher: Dispatcher | None, ttest_options: dict[str, Any]
    ) -> None:
        self.w = widget
        self._ttest_options = ttest_options
        #: Plackett-Luce and Mallows fits by data settings and model (fitted at most once
        #: each, on the runner's thread).
        self.fits: dict[Hashable, RankingModelResult | MallowsResult] = {}
        self.pl_runner: FitRunner[dict[str, Any]] = FitRunner(
            self._run_ranking_model,
            self._on_ranking_model_event,
            dispatcher=dispatcher,
            cache_size=6,
            cancelled_types=(FitCancelled,),
        )
        self.ttest_runner: FitRunner[dict[str, Any]] = FitRunner(
            ttest_spec,
            self._on_ttest_event,
            dispatcher=dispatcher,
            cache_size=12,
            cancelled_types=(FitCancelled,),
        )

    @property
    def plackett_luce(self) -> RankingModelResult | None:
        """The Plackett-Luce fit of the ranking view (``None`` until it was asked for, with
        ``ranking_model`` ``'plackett-luce'`` or ``'both'``, and has finished)."""
        # the fit under the Plackett-Luce key is a Plackett-Luce fit
        return cast("RankingModelResult | None", self.fits.get(self._pl_key("plackett-luce")))

    @property
    def mallows(self) -> MallowsResult | None:
        """The Mallows fit of the ranking view (``None`` until it was asked for, with
        ``ranking_model`` ``'mallows'``, and has finished)."""
        return self.fits.get(self._pl_key("mallows"))  # type: ignore[return-value]

    def _ranking_model_name(self) -> str:
        """The model the ranking view fits: ``"mallows"`` or ``"plackett-luce"``."""
        return "mallows" if self.w.ranking_model == "mallows" else "plackett-luce"

    def _pl_key(self, model: str | None = None) -> Hashable:
        # the ranking models rank the scores: ties, ROPE and the hyper-prior do not change them
        return settings_key(self._pl_settings(model))

    def _pl_settings(self, model: str | None = None) -> dict[str, Any]:
        # the ranking models sample in numpy: the BBT fit's engine is not one of theirs
        sampler = {k: v for k, v in self.w._sampler_kwargs.items() if k != "engine"}
        return {
            **self.w._data_kwargs,
            "lower_is_better": self.w.lower_is_better,
            **sampler,
            "model": model or self._ranking_model_name(),
        }

    def on_ranking_model(self, change: dict[str, Any]) -> None:
        problem = ""
        try:
            check_ranking_model(self.w.ranking_model)
        except ValueError as exc:
            problem = str(exc)
        self.w._controls.set_problem("ranking_model", problem)
        self.update_ranking_model()

    def update_ranking_model(self) -> None:
        """Fit Plackett-Luce or Mallows in the background the first time it is asked for
        (once per data settings), then draw it against the BBT fit shown."""
        fitted = self.w._fitted
        if self.w.ranking_model == "bbt" or fitted is None:
            return
        key = (self._pl_key(), self.w._result_key)
        self.pl_runner.submit(
            key, {"pl_key": key[0], "settings": self._pl_settings(), "result": fitted.result}
        )

    def _run_ranking_model(
        self,
        pl_key: Hashable,
        settings: dict[str, Any],
        result: BBTResult,
        context: RunContext = QUIET,
    ) -> dict[str, Any]:
        # On the runner's thread: the fit (once per data settings), then the spec.
        pl = self.fits.get(pl_key)
        if pl is None:
            from ..ranking._plackett_luce import ranking_model as core_ranking_model

            pl = core_ranking_model(self.w._data, progress=context.progress, **settings)
            self.fits[pl_key] = pl
        return ranking_model_spec(pl, result)

    def _on_ranking_model_event(self, event: FitEvent[dict[str, Any]]) -> None:
        label = "Mallows" if self._ranking_model_name() == "mallows" else "Plackett-Luce"
        key = cast("tuple[Hashable, ...]", event.key)  # (data settings, BBT result key)
        if event.kind in ("queued", "progress"):
            fitting = self.fits.get(key[0]) is None
            self.w.ranking_model_text = (
                f"fitting {label} to the rankings (once per data)..."
                if fitting
                else f"drawing BBT vs {label}..."
            )
        elif event.kind == "done" and event.result is not None:
            if key[1] == self.w._result_key:
                self.w.ranking_model_spec = event.result
            grouped = self.w._groups.active
            fitted = self.fits.get(key[0])
            # the orders another seed could reverse, as the report names them
            tied = fitted.tied_text() if fitted is not None else ""
            tied = f"{label}: {tied}" if tied else ""
            notes = [GROUP_RANKING_NOTE.format(model=label) if grouped else "", tied]
            self.w.ranking_model_text = " ".join(n for n in notes if n)
        elif event.kind == "error":
            self.w.ranking_model_text = f"{label} unavailable: {error_text(event.error)}"

    # --- correlated t-test of a clicked data set

    def on_clicked_dataset(self, change: dict[str, Any]) -> None:
        self.update_ttest()

    def update_ttest(self) -> None:
        """The correlated t-test posterior of the clicked data set for the highlighted pair
        (paper 001, Eq. 6) and the pair's signed-rank simplex (Fig. 9), or one line saying
        why there is none."""
        name, pair = self.w.clicked_dataset, pair_of(self.w.selected_pair)
        if not name or len(pair) != 2:
            self.w.ttest_spec, self.w.ttest_text = {}, ""
            return
        shown = isolate(name)  # the data set's name among the sentence's words
        if not self._ttest_options["has_folds"]:
            self.w.ttest_spec = {}
            self.w.ttest_text = (
                f"No correlated t-test for {shown}: it needs fold-level scores, and these "
                "results have one score per data set and algorithm."
            )
            return
        if self._ttest_options["rho"] is None:
            # the test needs rho; the widget has no run= column to infer it from (k folds)
            self.w.ttest_spec = {}
            self.w.ttest_text = (
                f"No correlated t-test for {shown}: it needs rho, the correlation of results "
                "from overlapping training sets; pass BBTWidget(..., rho=1/k) for k-fold "
                "cross-validation."
            )
            return
        options = {
            **self.w._data_kwargs,
            "lower_is_better": self.w.lower_is_better,
            "rope": self._ttest_options["rope"],
            "rho": self._ttest_options["rho"],
            "seed": self.w._sampler_kwargs["seed"],
        }
        self.w.ttest_text = f"computing the correlated t-test on {shown}..."
        self.ttest_runner.submit(
            settings_key({**options, "pair": pair, "on": name}),
            {"data": self.w._data, "a": pair[0], "b": pair[1], "on": name, **options},
        )

    def _on_ttest_event(self, event: FitEvent[dict[str, Any]]) -> None:
        if event.kind == "done" and event.result is not None:
            note = GROUP_TTEST_NOTE if self.w._groups.active else ""
            self.w.ttest_spec, self.w.ttest_text = event.result, note
        elif event.kind == "error":
            self.w.ttest_spec = {}
            self.w.ttest_text = f"No correlated t-test here: {error_text(event.error)}"
