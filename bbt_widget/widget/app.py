"""``BBTWidget``: the interactive Jupyter front end of the BBT comparison.

Traits and observers only. The statistics come from the core (``fit``, ``BBTResult``), the
chart specs from :mod:`bbt_widget.charts` and the background fits from
:mod:`bbt_widget.widget.runner`. Controls split by cost, as the core does:

* ties, tie threshold, local ROPE / d_min, paired, metric direction, hyper-prior and its
  scale change the win table or the model: they start a background fit (or take it from the
  cache);
* ROPE bounds, HDI mass, control algorithm and interpretation only re-summarise the draws
  already there: new chart data in milliseconds, no fit;
* the highlighted pair and the focus algorithm live in the browser (Vega parameters) and are
  mirrored here.

The Robustness section runs ``bbt.sweep`` in the background on request and shows which pairs
change their decision across the settings; highlighting a pair also shows the data sets that
move it most (``bbt_widget.influence(result)``). The data audit is a badge.

The class composes one small object per section, each in a module of its own, holding its
runners and state and setting the widget's traits: :class:`~.controls.Controls` (the checks of
the controls and the problems shown), :class:`~.fits.FitRequests` (the fits, their previews and
the Stan cross-check), :class:`~.decisions.DecisionsView` (the re-summaries, the headline and
the ranking chart), :class:`~.robustness.RobustnessSection` (sweep and influence),
:class:`~.rankings.RankingSection` (ranking models and the clicked data set's t-test),
:class:`~.metrics_section.MetricsSection` (several metrics: selector, dominance) and
:class:`~.more_data_view.MoreDataView` (the highlighted pair's forecast). This module holds the
traits the front end syncs with, the constructor and the public methods; :mod:`~.fitted` has
what the charts need from a fit, :mod:`~.keys` the cache keys and :mod:`~.messages` what the
widget says about bad arguments and failures.

Every control's value is checked where it enters (:mod:`~bbt_widget.widget.checks`): refused
from the browser with the reason beside the control, refused from Python with ``SettingRefused``;
the trait keeps its last good value either way.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anywidget
import pandas as pd
import traitlets as t

from .. import engines
from ..charts.spec_cache import checks_spec, view_spec
from ..core import options
from ..core.options import (
    D_MIN_RANGE,
    DEFAULT_HDI,
    DEFAULT_INTERPRETATION,
    DEFAULT_ROPE,
    DEFAULT_SEED,
    DEFAULT_TIES,
)
from ..core.result import BBTResult
from ..core.validation import check_algorithms
from ..lab.influence import Influence
from ..lab.sweep_result import SweepResult
from . import export
from .checks import quiet_when_unchanged
from .controls import FIT_TRAITS, TTEST_ROPE, VIEW_TRAITS, Controls, initial_controls
from .decisions import FOCUS_ALGORITHMS, DecisionsView
from .fits import FitRequests
from .fitted import Fitted, own_copy
from .groups_section import GroupsSection
from .in_step import SETTINGS_TRAITS
from .messages import check_extra_kwargs
from .metrics_section import MetricsResult, MetricsSection, metric_choice
from .more_data_view import MoreDataView, more_data_traits
from .pairs_section import PairsSection, pair_view_traits
from .rankings import RankingSection
from .robustness import RobustnessSection
from .runner import kernel_dispatcher
from .stan_check import stan_verdict
from .sync import json_trait
from .views import warm_model
from .wait import wait_all

if TYPE_CHECKING:  # both import Altair, which the first charts must not wait for
    from ..core.tidy import TidyResults
    from ..ranking._mallows import MallowsResult
    from ..ranking._plackett_luce import RankingModelResult

__all__ = ["D_MIN_RANGE", "FOCUS_ALGORITHMS", "BBTWidget"]

_STATIC = Path(__file__).resolve().parents[1] / "static"
if not (_STATIC / "widget.js").is_file():  # pragma: no cover - only in an unbuilt checkout
    raise ImportError(
        "the bbt_widget front end is not built (bbt_widget/static/widget.js is missing). "
        "Install the package with pip (the build hook runs npm), or build it by hand: "
        "npm --prefix js ci && npm --prefix js run build"
    )


def _warm_while_open(model: str, engine: str) -> None:
    """:func:`warm_model` for a widget's background thread: when every widget was closed
    while it compiled, :func:`bbt_widget.engines.shutdown` runs as the last close() would
    have (close() does not wait for a compile of up to a minute)."""
    warm_model(model, engine)
    if not _OPEN:
        engines.shutdown()


#: The widgets of this process not yet closed (weakly: a widget dropped without close()
#: leaves by itself); the last one to close calls :func:`bbt_widget.engines.shutdown`.
_OPEN: weakref.WeakSet[BBTWidget] = weakref.WeakSet()

#: The widget's background runners (attribute names), closed by ``close()``: the background
#: views' (and the Stan check's) first, then the fits'.
_RUNNERS = (
    "_metrics_runner",
    "_sweep_runner",
    "_influence_runner",
    "_summary_runner",
    "_pl_runner",
    "_ttest_runner",
    "_more_data_runner",
    "_stan_runner",
    "_preview_runner",
    "_runner",
)


class BBTWidget(anywidget.AnyWidget):
    """Interactive Bayesian Bradley-Terry comparison of algorithms on data sets.

    Parameters
    ----------
    data
        Results in any layout :func:`bbt_widget.tidy_results` accepts (e.g. one row per
        data set and fold, one column per algorithm).
    dataset, algorithm, fold, score, sd, group
        How to read ``data``; see :func:`bbt_widget.tidy_results`. ``score=["acc", "time"]``
        (with ``lower_is_better=["time"]``): several metrics, see ``widget.metrics_section``.
        ``group``: data sets in groups, as for :func:`bbt_widget.fit` (see
        :mod:`~bbt_widget.widget.groups_section`); not with several metrics.
    lower_is_better, d_min, paired, ties, tie_threshold, hyperprior, prior_scale
        Initial fit settings, as for :func:`bbt_widget.fit` (``tie_threshold`` in score
        units; ``None`` or 0, the default, counts every difference). ``d_min=None`` starts with the
        local ROPE off (the slider then starts at 0.4, the paper's value).
        ``prior_scale=None`` uses the family's default scale (paper Appendix A), and so does
        switching the family later, until a scale is set.
    rope, hdi, control, interpretation
        Initial summary settings: ROPE bounds, HDI mass, control algorithm (``None`` = all
        pairs) and the decision rule: ``"auto"`` starts the control at the strong rule with
        more than 10 algorithms, at the weak one otherwise (paper Sec. 5.6), or ``"weak"`` /
        ``"strong"`` (paper Sec. 9.2 / 9.3).
    engine, chains, iter_warmup, iter_sampling, seed
        Sampler settings for every fit, as for :func:`bbt_widget.fit`. The seed is fixed (default
        ``bbt_widget.DEFAULT_SEED``, as for ``fit``) so that going back to earlier settings, or
        running the same settings with ``fit``, shows the same numbers.
    autostart
        Start the first fit at once (default). Otherwise call :meth:`refit`.
    previews
        On a Stan engine (``engine="pystan"`` or ``"cmdstanpy"``), when a control needs a new fit
        (not one in the cache), first show a preview: a Laplace approximation of the same
        model (``bbt_widget.widget.preview``), marked "preview" on the diagnostics badge and
        the decisions, then replace it with the full fit. A preview is never cached and never
        becomes :attr:`result`, :attr:`summary` or :attr:`charts`. ``False``: the charts wait
        for the full fit.
    stan_check
        After a fit on the numpy engine, fit the same settings with Stan in the background, where
        a Stan engine runs here (the ``stan`` extra), and say on the badge whether they agree
        (:attr:`stan_verdict` in a script).
    ranking_model
        What the ranking view shows: ``"bbt"`` (default), ``"plackett-luce"``, ``"mallows"``
        or ``"both"`` (BBT and Plackett-Luce). Plackett-Luce or Mallows
        (:func:`bbt_widget.ranking_model`) is fitted in the background the first time it is
        asked for, once per data settings, and drawn against BBT.
    rho, ttest_rope
        Correlation of the fold results (``1/k`` for k-fold cross-validation) and ROPE
        half-width (scores' scale) of the correlated t-test shown for a data set clicked in
        the influence chart (:func:`bbt_widget.baselines.correlated_ttest`), beside the
        highlighted pair's Bayesian signed-rank test over every data set in the probability
        simplex (same ROPE, the widget's seed). Without ``rho`` the widget says that the
        test needs it.
    highlight
        Algorithms drawn in their own colour in the ranking view's critical-difference
        diagram (e.g. the methods a paper proposes).
    sweep_options
        Keywords for the robustness section's sweep (:func:`bbt_widget.sweep`), any of
        ``SWEEP_OPTIONS``: e.g. ``{"grid": {"ties": ["spread", "davidson"]}, "chains": 2,
        "iter_sampling": 300}``. Default: the default grid with the widget's sampler settings.
    **kwargs
        Handed on to ipywidgets: ``layout``, ``tabbable`` or ``tooltip`` (e.g.
        ``layout={"width": "900px"}``).

    Raises
    ------
    TypeError, ValueError
        The core's message when ``data`` or a setting is invalid; TypeError for a keyword
        that is none of the above (e.g. a misspelt setting), naming the one probably meant.

    Examples
    --------
    >>> import bbt_widget as bbt
    >>> w = bbt.BBTWidget(bbt.datasets.load_base(), dataset="db")  # doctest: +SKIP
    >>> w  # doctest: +SKIP
    >>> w.d_min = 0.2; w.local_rope = True  # doctest: +SKIP
    >>> w.wait(); w.summary  # doctest: +SKIP
    """

    #: Set once the constructor has checked its arguments and the widget counts as open.
    _opened = False
    _esm = _STATIC / "widget.js"
    notify_change = quiet_when_unchanged(anywidget.AnyWidget.notify_change)  # widget/checks
    _css = _STATIC / "widget.css"

    # --- fit controls --------------------------------------------------------------------
    ties = t.Unicode(DEFAULT_TIES, help="tie policy: add, spread, forget or davidson").tag(
        sync=True
    )
    local_rope = t.Bool(False, help="count small differences (Cohen's d < d_min) as ties").tag(
        sync=True
    )
    d_min = t.Float(0.4, help="local ROPE threshold on the effect size").tag(sync=True)
    tie_threshold = t.Float(
        0.0, help="mean scores differing by no more than this (score units) tie; 0 = none"
    ).tag(sync=True)
    paired = t.Bool(True, help="paired local ROPE (d_z on fold differences)").tag(sync=True)
    lower_is_better = t.Bool(False, help="metric direction").tag(sync=True)
    hyperprior = t.Unicode("lognormal", help="lognormal, cauchy or normal").tag(sync=True)
    prior_scale = t.Float(0.5, help="scale of the hyper-prior on sigma").tag(sync=True)

    # --- summary controls ----------------------------------------------------------------
    rope_low = t.Float(0.45).tag(sync=True)
    rope_high = t.Float(0.55).tag(sync=True)
    hdi = t.Float(DEFAULT_HDI, help="HDI mass").tag(sync=True)
    control = t.Unicode("", help="control algorithm ('' = all pairs)").tag(sync=True)
    interpretation = t.Unicode("weak", help="weak or strong").tag(sync=True)
    selected_group = t.Unicode(None, allow_none=True, help="group shown (None: all)").tag(sync=True)

    # --- linked-view selection (set by clicks in the browser, or from Python) -------------
    focus = t.Unicode("", help="show only this algorithm's pairs ('' = all)").tag(sync=True)
    selected_pair = t.Unicode(
        "", help="""highlighted pair key, bbt.charts.pair_key(a, b), e.g. '["lgbm", "xgb"]'"""
    ).tag(sync=True)
    # the pairwise view's rows (filter, search, page) and the pair panel (pairs_section)
    pair_filter, pair_search, pair_page, pair_rows, pair_panel = pair_view_traits()
    more_data_open, more_data_view = more_data_traits()  # the pair's forecast (more_data_view)

    # --- the option lists the controls offer (bbt_widget.options, defined once) ----------
    option_lists = t.Dict(
        help="tie policies, hyper-priors with default scales, d_min range, interpretations"
    ).tag(sync=True)

    # --- facts about the data (read-only for the front end) -------------------------------
    algorithms = t.List(t.Unicode()).tag(sync=True)
    paired_available = t.Bool(False).tag(sync=True)
    paired_reason = t.Unicode("").tag(sync=True)
    local_rope_available = t.Bool(False).tag(sync=True)
    local_rope_reason = t.Unicode("").tag(sync=True)

    # --- state shown by the front end -----------------------------------------------------
    status = t.Unicode("idle").tag(sync=True)
    preview = t.Bool(
        False, help="the charts show a preview (an approximation); the full fit replaces it"
    ).tag(sync=True)
    status_text = t.Unicode("").tag(sync=True)
    progress = t.Float(0.0, help="fit progress in [0, 1]; -1 when unknown").tag(sync=True)
    fit_count = t.Int(0, help="fits that ran (cache hits excluded)").tag(sync=True)
    message = t.Unicode("", help="why the last control change was not applied").tag(sync=True)
    input_errors = t.Dict(help="control -> why its value was refused (checks)").tag(sync=True)
    error = t.Unicode("", help="the last fit's error message").tag(sync=True)
    diagnostics = t.Dict().tag(sync=True)
    audit = t.Dict(help="data-audit badge: count, label and the findings").tag(sync=True)
    caveat = t.Unicode("", help="note on the chosen interpretation ('' = none)").tag(sync=True)
    claim_changes = t.Dict(help="claims the last change flipped (widget/claims)").tag(sync=True)
    stale_views = t.Dict(help="views behind the settings (widget/in_step)").tag(sync=True)
    spec = t.Dict(help="pairwise view: P(a > b) intervals and ROPE overlap").tag(sync=True)
    checks_spec = t.Dict(help="model checks: PPC, coverage and win matrix").tag(sync=True)
    headline = t.Unicode(
        "", help="the answer in one sentence (outputs.headline), names unescaped"
    ).tag(sync=True)
    # chart data: dicts here, one JSON buffer each on the wire (widget/sync.py)
    fit_data = t.Dict().tag(sync=True, to_json=json_trait("fit_data"))
    view_data = t.Dict().tag(sync=True, to_json=json_trait("view_data"))

    # --- robustness section: sweep (flips chart) and influence of the highlighted pair -----
    sweep_status = t.Unicode("idle").tag(sync=True)
    sweep_text = t.Unicode("").tag(sync=True)
    sweep_progress = t.Float(0.0, help="sweep progress in [0, 1]; -1 when unknown").tag(sync=True)
    summary_spec = t.Dict(help="ranking chart and weak/strong decision matrices").tag(sync=True)
    robustness_spec = t.Dict().tag(sync=True)
    sweep_data = t.Dict().tag(sync=True)
    influence_data = t.Dict().tag(sync=True)
    influence_text = t.Unicode("").tag(sync=True)
    group_view = t.Dict(help="data sets in groups: names, heatmap spec and cells").tag(sync=True)

    # --- several metrics (score=[...]): the selector and the dominance view (metrics_section)
    metric = t.Unicode("", help="the metric shown ('' = one score column)").tag(sync=True)
    metrics = t.List(t.Unicode(), help="the metrics offered ([] = one score)").tag(sync=True)
    dominance_data = t.Dict(help="pairs' metrics better/worse, Pareto set").tag(sync=True)
    dominance_text = t.Unicode("", help="metrics still fitting or failed").tag(sync=True)

    # --- ranking models and the per-data-set correlated t-test -----------------------------
    ranking_model = t.Unicode(
        "bbt", help="ranking view: 'bbt', 'plackett-luce', 'mallows' or 'both'"
    ).tag(sync=True)
    ranking_model_spec = t.Dict(help="BBT vs Plackett-Luce or Mallows, P(top-k) charts").tag(
        sync=True
    )
    ranking_model_text = t.Unicode("").tag(sync=True)
    clicked_dataset = t.Unicode("", help="data set clicked in the influence chart ('' = none)").tag(
        sync=True
    )
    ttest_spec = t.Dict(
        help="correlated t-test posterior of the clicked data set, the pair's simplex"
    ).tag(sync=True)
    ttest_text = t.Unicode("", help="why no t-test posterior is shown ('' = it is)").tag(sync=True)

    def __init__(
        self,
        data: pd.DataFrame | TidyResults,
        *,
        dataset: str | None = None,
        algorithm: str | None = None,
        fold: str | None = None,
        score: str | Sequence[str] | None = None,
        sd: pd.DataFrame | None = None,
        lower_is_better: bool | Sequence[str] = False,
        d_min: float | None = None,
        paired: bool = True,
        ties: str = DEFAULT_TIES,
        tie_threshold: float | None = None,
        hyperprior: str = "lognormal",
        prior_scale: float | None = None,
        rope: Sequence[float] = DEFAULT_ROPE,
        hdi: float = DEFAULT_HDI,
        control: str | None = None,
        interpretation: str = DEFAULT_INTERPRETATION,
        engine: str = "auto",
        chains: int = 4,
        iter_warmup: int | None = None,
        iter_sampling: int | None = None,
        seed: int = DEFAULT_SEED,
        autostart: bool = True,
        previews: bool = True,
        stan_check: bool = True,
        sweep_options: Mapping[str, Any] | None = None,
        ranking_model: str = "bbt",
        rho: float | None = None,
        ttest_rope: float = TTEST_ROPE,
        highlight: Sequence[str] = (),
        group: str | Mapping[Any, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        # Bad data or settings raise the core's own message here, before anything is shown.
        check_extra_kwargs(type(self), kwargs)
        self._groups = GroupsSection(self, data, group, dataset=dataset, ties=ties)
        layout = {"dataset": dataset, "algorithm": algorithm, "fold": fold, "sd": sd}
        choice = metric_choice(
            self._groups.results, score, lower_is_better, seed=seed, layout=layout, group=group
        )
        tidy = choice.tidy
        first = initial_controls(
            tidy,
            lower_is_better=choice.lower_is_better,
            d_min=d_min,
            paired=paired,
            ties=ties,
            tie_threshold=tie_threshold,
            hyperprior=hyperprior,
            prior_scale=prior_scale,
            rope=rope,
            hdi=hdi,
            control=control,
            interpretation=interpretation,
            ranking_model=ranking_model,
            rho=rho,
            ttest_rope=ttest_rope,
        )
        highlight = check_algorithms(highlight, first["algorithms"], "highlight")
        super().__init__(
            **first | self._groups.initial(tidy, first),
            spec=view_spec(),
            checks_spec=checks_spec(),
            option_lists=options.as_dict(),
            **MetricsSection.initial_traits(choice),
            **kwargs,
        )
        # Copies, not the caller's objects: an in-place edit of the caller's frame after this
        # would reach new fits but not the cached ones.
        self._data = own_copy(self._groups.results)
        self._highlight = highlight
        self._data_kwargs = {**layout, "score": choice.score, "sd": own_copy(sd)}
        iterations = {"iter_warmup": iter_warmup, "iter_sampling": iter_sampling}
        self._sampler_kwargs = {
            "engine": engine,
            "chains": chains,
            **{k: v for k, v in iterations.items() if v is not None},  # None: the defaults
            "seed": choice.seeds.get(str(choice.score), seed),
        }
        self._fitted: Fitted | None = None
        self._previews = bool(previews) and not self._groups.active
        #: The preview the charts show (None when they show the full fit ``_fitted``).
        self._preview: Fitted | None = None
        self._result_key: Hashable | None = None
        self._requested_key: Hashable | None = None
        self._summary: pd.DataFrame | None = None
        self._frames: dict[str, pd.DataFrame] = {}
        #: Python seconds of the last re-summary (control change -> new chart data).
        self.last_view_seconds = 0.0
        self._warm_thread: threading.Thread | None = None
        # the sections, each with its runners and state (see the module doc)
        dispatcher = kernel_dispatcher()
        self._controls = Controls(self, scale_chosen=prior_scale is not None)
        # first: it checks sweep_options, which may raise, before any runner exists
        sweep_options = {**self._sampler_kwargs, **dict(sweep_options or {})}
        self._robustness = RobustnessSection(self, dispatcher, sweep_options)
        self._metrics = self._metrics_runner = MetricsSection(self, dispatcher, choice)
        self._fits = FitRequests(self, dispatcher, self._warm_other_model, stan_check)
        self._decisions = DecisionsView(self, dispatcher, focus_defaulted=bool(kwargs.get("focus")))
        self._pairs = PairsSection(self)  # the pairwise view's rows, the pair panel
        ttest_options = {"rope": ttest_rope, "rho": rho, "has_folds": tidy.has_folds}
        self._rankings = RankingSection(self, dispatcher, ttest_options)
        # the runners by name, for code that waits on or inspects one of them
        self._runner, self._preview_runner = self._fits.runner, self._fits.preview_runner
        self._stan_runner = self._fits.stan_check.runner
        self._summary_runner = self._decisions.summary_runner
        self._sweep_runner = self._robustness.sweep_runner
        self._influence_runner = self._robustness.influence_runner
        self._pl_runner, self._ttest_runner = self._rankings.pl_runner, self._rankings.ttest_runner
        self._more_data = self._more_data_runner = MoreDataView(self, dispatcher)
        self._pl_fits = self._rankings.fits
        self._on_front_end_message = self._robustness.on_front_end_message
        self.observe(self._controls.on_fit_setting, names=list(FIT_TRAITS))
        # after the refit a fit control starts, before the redraw a view control starts
        self.observe(self._decisions.in_step.update, names=list(SETTINGS_TRAITS))
        self.observe(lambda _change: self._decisions.refresh(), names=list(VIEW_TRAITS))
        self.observe(self._controls.on_focus, names=["focus"])
        self.observe(self._robustness.on_selected_pair, names=["selected_pair"])
        self.observe(self._rankings.on_ranking_model, names=["ranking_model"])
        self.observe(self._rankings.on_clicked_dataset, names=["clicked_dataset", "selected_pair"])
        self.on_msg(self._on_front_end_message)
        self.on_msg(export.on_front_end_message)  # "Settings as code" asks for w.code()
        _OPEN.add(self)
        self._opened = True
        if autostart:
            self.refit()

    # ------------------------------------------------------------------ public API

    @property
    def result(self) -> BBTResult | None:
        """The last full fit (``None`` until the first fit finishes); never a preview.

        While the charts show a preview (:attr:`preview`), this is still the previous full
        fit: call :meth:`wait` for the one of the current settings. It holds the fit's
        settings, not the view's ROPE, HDI and rule (:attr:`view_settings`, :meth:`methods_text`).
        Warns (``LastGoodFitWarning``) while the fit of the current settings has failed.
        """
        self._fits.warn_if_failed("result")
        return None if self._fitted is None else self._fitted.result

    @property
    def summary(self) -> pd.DataFrame | None:
        """The summary table of :attr:`result` (current ROPE, HDI and control); never a
        preview's. Warns as :attr:`result` does."""
        self._fits.warn_if_failed("summary")
        return None if self._summary is None else self._summary.copy()

    stan_verdict = property(stan_verdict)  # the Stan check of the fit shown (widget/stan_check)
    # the exports of the view shown, at the current settings (widget/export.py)
    charts = property(export.charts)
    view_settings = property(export.view_settings)
    methods_text = export.methods_text
    report = export.report
    code = export.code
    summary_csv = export.summary_csv

    @property
    def metrics_result(self) -> MetricsResult | None:
        """``bbt.compare_metrics``' result of the metrics fitted so far (None: one score)."""
        return self._metrics.result()

    @property
    def fit_settings(self) -> dict[str, Any]:
        """The keyword arguments of ``bbt_widget.fit`` the current controls ask for."""
        return self._controls.fit_settings()

    def refit(self) -> None:
        """Fit with the current settings (from the cache when they were fitted before)."""
        self._fits.refit()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the running fit is done and shown (scripts, notebooks run top to bottom).

        Returns True when the charts show the current settings, False on a timeout. Raises
        ``FitFailed`` (a RuntimeError, from the fit's own error) when the fit of the current
        settings failed: the charts and :attr:`result` are then the last good fit's.
        """
        return self._fits.wait(timeout)

    def close(self) -> None:
        """Cancel the running fits and sweep (a Stan fit's child process is killed), drop the
        cached fits and close the widget; the last open widget also calls
        :func:`bbt_widget.engines.shutdown`. :attr:`result` stays readable.
        """
        runners = [r for r in (getattr(self, name, None) for name in _RUNNERS) if r is not None]
        for runner in runners:  # all at once: a fit must not run on while others are awaited
            runner.cancel()
        for runner in runners:
            runner.close(timeout=5.0)
        _OPEN.discard(self)
        # after the runners (their fits have ended); not for a widget whose constructor
        # refused its arguments (it never opened, and other widgets may be open)
        if self._opened and not _OPEN:
            engines.shutdown()
        if self._opened:
            self._robustness.close()
            self._rankings.fits.clear()
        super().close()

    @property
    def fit_stats(self) -> dict[str, int]:
        """Counters of the background runner: started, finished, cancelled, cache_hits..."""
        return dict(self._runner.stats)

    def wait_background(self, timeout: float | None = None, *, stan: bool = False) -> bool:
        """Block until the background views are done and shown: the sweep, the influence of
        the highlighted pair, the ranking chart and decision matrices, the Plackett-Luce
        panel, the clicked data set's t-test, the highlighted pair's forecast and, with
        ``stan=True``, the Stan check (:attr:`stan_verdict`; minutes on a cold compile).
        False on a timeout."""
        return wait_all((getattr(self, name) for name in _RUNNERS[: 8 if stan else 7]), timeout)

    # --- the robustness section (RobustnessSection)

    @property
    def sweep_options(self) -> dict[str, Any]:
        """Keywords of :func:`bbt_widget.sweep` for :meth:`run_sweep` (see ``SWEEP_OPTIONS``)."""
        return self._robustness.sweep_options

    @sweep_options.setter
    def sweep_options(self, options: Mapping[str, Any]) -> None:
        self._robustness.sweep_options = options

    @property
    def sweep(self) -> SweepResult | None:
        """The last sweep of the robustness section (``None`` before the first one)."""
        return self._robustness.sweep

    @property
    def influence(self) -> Influence | None:
        """Influence of each data set on the fit shown, at the current ROPE and
        interpretation (``None`` until a pair was highlighted and it was computed)."""
        return self._robustness.influence

    def run_sweep(self) -> None:
        """Run the robustness sweep in the background (the section's button does this).

        ``bbt.sweep`` with the widget's data and ``sweep_options``, through the batch layer
        (all local cores, or the Dask client given as ``executor``); progress in
        ``sweep_status``/``sweep_text``, the flips chart when done. A sweep of the same data
        and options is taken from the cache.
        """
        self._robustness.run_sweep()

    def cancel_sweep(self) -> None:
        """Stop the running sweep (its fits are killed; nothing is shown for it)."""
        self._robustness.cancel_sweep()

    # --- the ranking section (RankingSection)

    @property
    def plackett_luce(self) -> RankingModelResult | None:
        """The Plackett-Luce fit of the ranking view (``None`` until it was asked for, with
        ``ranking_model`` ``'plackett-luce'`` or ``'both'``, and has finished)."""
        return self._rankings.plackett_luce

    @property
    def mallows(self) -> MallowsResult | None:
        """The Mallows fit of the ranking view (``None`` until it was asked for, with
        ``ranking_model`` ``'mallows'``, and has finished)."""
        return self._rankings.mallows

    # ------------------------------------------------------------------ what the sections share

    def _update_influence(self) -> None:
        self._robustness.update_influence()

    def _warm_other_model(self) -> None:
        """After the first fit, compile the other Stan model in the background, so that
        switching to or from Davidson later waits for no compile."""
        if self._warm_thread is not None:
            return
        other = "bbt" if self.ties == "davidson" else "davidson"
        self._warm_thread = threading.Thread(
            target=_warm_while_open,
            args=(other, str(self._sampler_kwargs["engine"])),
            name="bbt-warm-model",
            daemon=True,
        )
        self._warm_thread.start()
