"""The widget's ranking views beyond BBT: Plackett-Luce or Mallows fitted to the rankings and
drawn against the BBT fit (each once per data settings, in the background, when
``ranking_model`` asks for it), and the correlated t-test of the data set clicked in the
influence chart for the highlighted pair, beside that pair's Bayesian signed-rank test in the
probability simplex.

A part of :class:`~bbt_widget.widget.app.BBTWidget` in a module of its own, not a class to
use alone: its methods read the widget's traits and the runners and state its constructor
sets (``_pl_runner``, ``_pl_fits``, ``_ttest_runner``, ``_ttest_options``, ``_fitted``).
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

from ..core.bidi import isolate
from ..core.result import BBTResult
from .keys import pair_of, settings_key
from .messages import check_ranking_model, error_text
from .runner import FitEvent
from .views import ranking_model_spec

if TYPE_CHECKING:  # imports Altair, which the first charts must not wait for
    from ..baselines._mallows import MallowsResult
    from ..baselines._plackett_luce import RankingModelResult

__all__ = ["RankingSection"]


class RankingSection:
    """The ranking-model and correlated t-test methods of ``BBTWidget`` (see the module doc)."""

    @property
    def plackett_luce(self) -> RankingModelResult | None:
        """The Plackett-Luce fit of the ranking view (``None`` until it was asked for, with
        ``ranking_model`` ``'plackett-luce'`` or ``'both'``, and has finished)."""
        return self._pl_fits.get(self._pl_key("plackett-luce"))

    @property
    def mallows(self) -> MallowsResult | None:
        """The Mallows fit of the ranking view (``None`` until it was asked for, with
        ``ranking_model`` ``'mallows'``, and has finished)."""
        return self._pl_fits.get(self._pl_key("mallows"))  # type: ignore[return-value]

    def _ranking_model_name(self) -> str:
        """The model the ranking view fits: ``"mallows"`` or ``"plackett-luce"``."""
        return "mallows" if self.ranking_model == "mallows" else "plackett-luce"

    def _pl_key(self, model: str | None = None) -> Hashable:
        # the ranking models rank the scores: ties, ROPE and the hyper-prior do not change them
        return settings_key(self._pl_settings(model))

    def _pl_settings(self, model: str | None = None) -> dict[str, Any]:
        return {
            **self._data_kwargs,
            "lower_is_better": self.lower_is_better,
            **self._sampler_kwargs,
            "model": model or self._ranking_model_name(),
        }

    def _on_ranking_model(self, change: dict[str, Any]) -> None:
        problem = ""
        try:
            check_ranking_model(self.ranking_model)
        except ValueError as exc:
            problem = str(exc)
        self._set_problem("ranking_model", problem)
        self._update_ranking_model()

    def _update_ranking_model(self) -> None:
        """Fit Plackett-Luce or Mallows in the background the first time it is asked for
        (once per data settings), then draw it against the BBT fit shown."""
        fitted = self._fitted
        if self.ranking_model == "bbt" or fitted is None:
            return
        key = (self._pl_key(), self._result_key)
        self._pl_runner.submit(
            key, {"pl_key": key[0], "settings": self._pl_settings(), "result": fitted.result}
        )

    def _run_ranking_model(
        self,
        pl_key: Hashable,
        settings: dict[str, Any],
        result: BBTResult,
        progress: Any = None,
        cancel: threading.Event | None = None,
    ) -> dict[str, Any]:
        # On the runner's thread: the fit (once per data settings), then the spec.
        pl = self._pl_fits.get(pl_key)
        if pl is None:
            from ..baselines._plackett_luce import ranking_model as core_ranking_model

            pl = core_ranking_model(self._data, progress=progress, **settings)
            self._pl_fits[pl_key] = pl
        return ranking_model_spec(pl, result)

    def _on_ranking_model_event(self, event: FitEvent[dict[str, Any]]) -> None:
        label = "Mallows" if self._ranking_model_name() == "mallows" else "Plackett-Luce"
        if event.kind in ("queued", "progress"):
            fitting = self._pl_fits.get(event.key[0]) is None
            self.ranking_model_text = (
                f"fitting {label} to the rankings (once per data)..."
                if fitting
                else f"drawing BBT vs {label}..."
            )
        elif event.kind == "done" and event.result is not None:
            if event.key[1] == self._result_key:
                self.ranking_model_spec = event.result
            self.ranking_model_text = ""
        elif event.kind == "error":
            self.ranking_model_text = f"{label} unavailable: {error_text(event.error)}"

    # --- correlated t-test of a clicked data set

    def _on_clicked_dataset(self, change: dict[str, Any]) -> None:
        self._update_ttest()

    def _update_ttest(self) -> None:
        """The correlated t-test posterior of the clicked data set for the highlighted pair
        (paper 001, Eq. 6) and the pair's signed-rank simplex (Fig. 9), or one line saying
        why there is none."""
        name, pair = self.clicked_dataset, pair_of(self.selected_pair)
        if not name or len(pair) != 2:
            self.ttest_spec, self.ttest_text = {}, ""
            return
        shown = isolate(name)  # the data set's name among the sentence's words
        if not self._ttest_options["has_folds"]:
            self.ttest_spec = {}
            self.ttest_text = (
                f"No correlated t-test for {shown}: it needs fold-level scores, and these "
                "results have one score per data set and algorithm."
            )
            return
        if self._ttest_options["rho"] is None:
            # the test needs rho; the widget has no run= column to infer it from (k folds)
            self.ttest_spec = {}
            self.ttest_text = (
                f"No correlated t-test for {shown}: it needs rho, the correlation of results "
                "from overlapping training sets; pass BBTWidget(..., rho=1/k) for k-fold "
                "cross-validation."
            )
            return
        options = {
            **self._data_kwargs,
            "lower_is_better": self.lower_is_better,
            "rope": self._ttest_options["rope"],
            "rho": self._ttest_options["rho"],
            "seed": self._sampler_kwargs["seed"],
        }
        self.ttest_text = f"computing the correlated t-test on {shown}..."
        self._ttest_runner.submit(
            settings_key({**options, "pair": pair, "on": name}),
            {"data": self._data, "a": pair[0], "b": pair[1], "on": name, **options},
        )

    def _on_ttest_event(self, event: FitEvent[dict[str, Any]]) -> None:
        if event.kind == "done" and event.result is not None:
            self.ttest_spec, self.ttest_text = event.result, ""
        elif event.kind == "error":
            self.ttest_spec = {}
            self.ttest_text = f"No correlated t-test here: {error_text(event.error)}"
