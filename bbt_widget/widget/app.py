"""``BBTWidget``: the interactive Jupyter front end of the BBT comparison.

Traits and observers only. The statistics come from the core (``fit``, ``BBTResult``), the
chart specs from :mod:`bbt_widget.outputs.charts` and the background fits from
:mod:`bbt_widget.widget.runner`. Controls split by cost, as the core does:

* ties, local ROPE / d_min, paired, metric direction, hyper-prior and its scale change the
  win table or the model: they start a background fit (or take it from the cache);
* ROPE bounds, HDI mass, control algorithm and interpretation only re-summarise the draws
  already there: new chart data in milliseconds, no fit;
* the highlighted pair and the focus algorithm live in the browser (Vega parameters) and are
  mirrored here.

The Robustness section runs ``bbt.sweep`` in the background on request (its own runner,
through the batch layer; progress and cancel) and shows which pairs change their decision
across the settings; highlighting a pair also shows the data sets that move it most
(``bbt_widget.influence(result)``, computed in the background the first time a pair is highlighted).
The data audit (``result.audit``, the warnings ``fit`` issues) is a badge.

The class is written in parts: this module holds the traits, the constructor, the fits and
the re-summaries; :mod:`~bbt_widget.widget.robustness` the sweep and influence methods and
:mod:`~bbt_widget.widget.rankings` the ranking-model and correlated t-test ones (classes
``BBTWidget`` inherits from); :mod:`~bbt_widget.widget.fitted` what the charts need from a
fit, :mod:`~bbt_widget.widget.keys` the cache keys and :mod:`~bbt_widget.widget.messages`
what the widget says about bad arguments and failures.

Invalid control values never raise from the front end: the widget shows what is wrong
inline and keeps the last good charts.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anywidget
import pandas as pd
import traitlets as t

from .. import engines
from ..core import options
from ..core.data import tidy_results
from ..core.fitting import (
    COUNT_SETTINGS,
    PRIOR_SETTINGS,
    SAMPLER_SETTINGS,
    PreparedFit,
    prepare_fit,
)
from ..core.options import (
    D_MIN_RANGE,
    DEFAULT_INTERPRETATION,
    DEFAULT_SEED,
    INTERPRETATIONS,
    TIE_POLICIES,
    resolve_interpretation,
)
from ..core.result import BBTResult
from ..core.validation import (
    check_d_min,
    check_flag,
    check_hdi,
    check_hyperprior,
    check_rope,
    check_ties,
)
from ..engines.base import FitCancelled, ProgressCallback
from ..lab.influence import Influence
from ..lab.sweep import SweepResult
from ..outputs import charts
from ..outputs.headline import headline
from .fitted import Fitted
from .keys import pair_of, settings_key
from .messages import check_extra_kwargs, check_ranking_model, error_text, paired_note
from .preview import preview_settings
from .rankings import RankingSection
from .robustness import RobustnessSection
from .runner import FitEvent, FitRunner, kernel_dispatcher
from .sync import json_trait, remember_json
from .views import (
    summary_spec,
    ttest_spec,
    warm_model,
    weak_rule_caveat,
)

if TYPE_CHECKING:  # both import Altair, which the first charts must not wait for
    from ..baselines._mallows import MallowsResult
    from ..baselines._plackett_luce import RankingModelResult

__all__ = ["D_MIN_RANGE", "BBTWidget"]

_STATIC = Path(__file__).resolve().parents[1] / "static"
if not (_STATIC / "widget.js").is_file():  # pragma: no cover - only in an unbuilt checkout
    raise ImportError(
        "the bbt_widget front end is not built (bbt_widget/static/widget.js is missing). "
        "Install the package with pip (the build hook runs npm), or build it by hand: "
        "npm --prefix js ci && npm --prefix js run build"
    )

_FIT_TRAITS = (
    "ties",
    "local_rope",
    "d_min",
    "paired",
    "lower_is_better",
    "hyperprior",
    "prior_scale",
)
#: Beyond this many algorithms the pairwise charts open on the top-ranked algorithm's pairs.
FOCUS_ALGORITHMS = 8
_VIEW_TRAITS = ("rope_low", "rope_high", "hdi", "control", "interpretation")
#: Default ROPE half-width of the correlated t-test (on the scores' scale), as in baselines.
_TTEST_ROPE = 0.01


def _warm_while_open(model: str, engine: str) -> None:
    """:func:`warm_model` for a widget's background thread: when every widget was closed
    while it compiled, the idle workers it started are stopped again (close() must leave no
    process behind, and it does not wait for a compile of up to a minute)."""
    warm_model(model, engine)
    if not _OPEN:
        engines.shutdown()


#: The widgets of this process not yet closed (weakly: a widget dropped without close()
#: leaves by itself); the last one to close stops the engine's shared idle workers.
_OPEN: weakref.WeakSet[BBTWidget] = weakref.WeakSet()

#: The widget's background runners (attribute names), closed by ``close()``.
_RUNNERS = (
    "_sweep_runner",
    "_influence_runner",
    "_summary_runner",
    "_pl_runner",
    "_ttest_runner",
    "_preview_runner",
    "_runner",
)


class BBTWidget(RobustnessSection, RankingSection, anywidget.AnyWidget):
    """Interactive Bayesian Bradley-Terry comparison of algorithms on data sets.

    Parameters
    ----------
    data
        Results in any layout :func:`bbt_widget.tidy_results` accepts (e.g. one row per
        data set and fold, one column per algorithm).
    dataset, algorithm, fold, score, sd
        How to read ``data``; see :func:`bbt_widget.tidy_results`.
    lower_is_better, d_min, paired, ties, hyperprior, prior_scale
        Initial fit settings, as for :func:`bbt_widget.fit`. ``d_min=None`` starts with the
        local ROPE off (the slider then starts at 0.4, the paper's value).
        ``prior_scale=None`` uses the family's default scale (paper Appendix A), and so does
        switching the family later, until a scale is set.
    rope, hdi, control, interpretation
        Initial summary settings: ROPE bounds, HDI mass, control algorithm (``None`` = all
        pairs) and the decision rule: ``"auto"`` starts the control at the strong rule with
        more than 10 algorithms, at the weak one otherwise (paper Sec. 5.6), or ``"weak"`` /
        ``"strong"`` (paper Sec. 9.2 / 9.3).
    engine, chains, iter_warmup, iter_sampling, seed
        Sampler settings for every fit. The seed is fixed (default
        ``bbt_widget.DEFAULT_SEED``, as for ``fit``) so that going back to earlier settings, or
        running the same settings with ``fit``, shows the same numbers.
    autostart
        Start the first fit at once (default). Otherwise call :meth:`refit`.
    previews
        When a control needs a new fit (not one in the cache), first show a preview: a
        Laplace approximation of the same model (``bbt_widget.widget.preview``), marked
        "preview" on the diagnostics badge and the decisions, then replace it with the full
        fit. A preview is never cached and never
        becomes :attr:`result`, :attr:`summary` or :attr:`charts`. ``False``: the charts wait
        for the full fit.
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
    _css = _STATIC / "widget.css"

    # --- fit controls --------------------------------------------------------------------
    ties = t.Unicode("spread", help="tie policy: add, spread, forget or davidson").tag(sync=True)
    local_rope = t.Bool(False, help="count small differences (Cohen's d < d_min) as ties").tag(
        sync=True
    )
    d_min = t.Float(0.4, help="local ROPE threshold on the effect size").tag(sync=True)
    paired = t.Bool(True, help="paired local ROPE (d_z on fold differences)").tag(sync=True)
    lower_is_better = t.Bool(False, help="metric direction").tag(sync=True)
    hyperprior = t.Unicode("lognormal", help="lognormal, cauchy or normal").tag(sync=True)
    prior_scale = t.Float(0.5, help="scale of the hyper-prior on sigma").tag(sync=True)

    # --- summary controls ----------------------------------------------------------------
    rope_low = t.Float(0.45).tag(sync=True)
    rope_high = t.Float(0.55).tag(sync=True)
    hdi = t.Float(0.89, help="HDI mass").tag(sync=True)
    control = t.Unicode("", help="control algorithm ('' = all pairs)").tag(sync=True)
    interpretation = t.Unicode("weak", help="weak or strong").tag(sync=True)

    # --- linked-view selection (set by clicks in the browser, or from Python) -------------
    focus = t.Unicode("", help="show only this algorithm's pairs ('' = all)").tag(sync=True)
    selected_pair = t.Unicode(
        "", help="""highlighted pair key, charts.pair_key(a, b), e.g. '["lgbm", "xgb"]'"""
    ).tag(sync=True)

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
    error = t.Unicode("", help="the last fit's error message").tag(sync=True)
    diagnostics = t.Dict().tag(sync=True)
    audit = t.Dict(help="data-audit badge: count, label and the findings").tag(sync=True)
    caveat = t.Unicode("", help="note on the chosen interpretation ('' = none)").tag(sync=True)
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
        data: pd.DataFrame,
        *,
        dataset: str | None = None,
        algorithm: str | None = None,
        fold: str | None = None,
        score: str | None = None,
        sd: pd.DataFrame | None = None,
        lower_is_better: bool = False,
        d_min: float | None = None,
        paired: bool = True,
        ties: str = "spread",
        hyperprior: str = "lognormal",
        prior_scale: float | None = None,
        rope: Sequence[float] = (0.45, 0.55),
        hdi: float = 0.89,
        control: str | None = None,
        interpretation: str = DEFAULT_INTERPRETATION,
        engine: str = "auto",
        chains: int = 4,
        iter_warmup: int = 1000,
        iter_sampling: int = 1000,
        seed: int = DEFAULT_SEED,
        autostart: bool = True,
        previews: bool = True,
        sweep_options: Mapping[str, Any] | None = None,
        ranking_model: str = "bbt",
        rho: float | None = None,
        ttest_rope: float = _TTEST_ROPE,
        **kwargs: Any,
    ) -> None:
        # Bad data or settings raise the core's own message here, before anything is shown.
        check_extra_kwargs(type(self), kwargs)
        tidy = tidy_results(
            data,
            dataset=dataset,
            algorithm=algorithm,
            fold=fold,
            score=score,
            sd=sd,
            lower_is_better=lower_is_better,
        )
        check_ties(ties)
        d_min = check_d_min(d_min)
        scale_given = prior_scale is not None
        hyperprior, prior_scale = check_hyperprior(hyperprior, prior_scale)
        rope = check_rope(rope)
        hdi = check_hdi(hdi)
        algorithms = list(tidy.algorithms)
        if control is not None and control not in algorithms:
            raise ValueError(f"control {control!r} is not one of the algorithms {algorithms}")
        interpretation = resolve_interpretation(interpretation, len(algorithms)).rule
        check_ranking_model(ranking_model)
        if rho is not None or ttest_rope != _TTEST_ROPE:
            # the baselines import Altair: only for values that are not the (valid) defaults
            from ..baselines._cv import check_rho, check_rope_width

            check_rho(rho)
            check_rope_width(ttest_rope)

        local_ok = tidy.has_folds or tidy.has_sd
        if d_min is not None and not local_ok:
            raise ValueError(
                "d_min needs fold-level scores or an sd table; these results have one score "
                "per data set and algorithm (pass d_min=None)"
            )
        super().__init__(
            algorithms=algorithms,
            paired_available=tidy.paired_ok,
            paired_reason=paired_note(tidy.paired_problem),
            local_rope_available=local_ok,
            local_rope_reason="" if local_ok else "no fold-level scores",
            ties=ties,
            local_rope=d_min is not None,
            d_min=0.4 if d_min is None else d_min,
            paired=check_flag(paired, "paired") and tidy.paired_ok,
            lower_is_better=lower_is_better,  # checked by tidy_results
            hyperprior=hyperprior,
            prior_scale=prior_scale,
            rope_low=rope[0],
            rope_high=rope[1],
            hdi=hdi,
            control=control or "",
            interpretation=interpretation,
            caveat=weak_rule_caveat(len(algorithms), interpretation),
            spec=charts.view_spec(),
            checks_spec=charts.checks_spec(),
            option_lists=options.as_dict(),
            ranking_model=ranking_model,
            **kwargs,
        )
        # Copies, not the caller's objects: an in-place edit of the caller's frame after this
        # would reach new fits but not the cached ones.
        self._data = _own_copy(data)
        self._data_kwargs = {
            "dataset": dataset,
            "algorithm": algorithm,
            "fold": fold,
            "score": score,
            "sd": _own_copy(sd),
        }
        self._sampler_kwargs = {
            "engine": engine,
            "chains": chains,
            "iter_warmup": iter_warmup,
            "iter_sampling": iter_sampling,
            "seed": seed,
        }
        #: Whether the user chose the scale (then a new family keeps it), else each family
        #: gets its own default scale (paper Appendix A).
        self._scale_chosen = scale_given
        self._setting_default_scale = False
        self._sweep_options: dict[str, Any] = {}
        self.sweep_options = {**self._sampler_kwargs, **dict(sweep_options or {})}
        self._fitted: Fitted | None = None
        self._previews = bool(previews)
        #: The preview the charts show (None when they show the full fit ``_fitted``).
        self._preview: Fitted | None = None
        self._result_key: Hashable | None = None
        self._summary: pd.DataFrame | None = None
        self._frames: dict[str, pd.DataFrame] = {}
        self._problems: dict[str, str] = {}
        self._requested_key: Hashable | None = None
        #: Whether "Show pairs of" was set for the user: once, at the first fit with more
        #: than FOCUS_ALGORITHMS algorithms (the top-ranked algorithm's pairs).
        self._focus_defaulted = bool(kwargs.get("focus"))
        #: Python seconds of the last re-summary (control change -> new chart data).
        self.last_view_seconds = 0.0
        dispatcher = kernel_dispatcher()
        self._runner: FitRunner[Fitted] = FitRunner(
            self._run_fit,
            self._on_fit_event,
            dispatcher=dispatcher,
            cancelled_types=(FitCancelled,),
        )
        # Previews: the newest request wins here too; a preview is never cached (cache_size=0)
        self._preview_runner: FitRunner[Fitted] = FitRunner(
            self._run_preview,
            self._on_preview_event,
            dispatcher=dispatcher,
            cache_size=0,
            cancelled_types=(FitCancelled,),
        )
        self._sweep: SweepResult | None = None
        self._sweep_runner: FitRunner[SweepResult] = FitRunner(
            self._run_sweep,
            self._on_sweep_event,
            dispatcher=dispatcher,
            cache_size=4,
            cancelled_types=(FitCancelled,),
        )
        self._influence: tuple[Hashable, Influence] | None = None
        self._influence_runner: FitRunner[Influence] = FitRunner(
            self._run_influence,
            self._on_influence_event,
            dispatcher=dispatcher,
            cache_size=6,
            cancelled_types=(FitCancelled,),
        )
        self._summary_runner: FitRunner[dict[str, Any]] = FitRunner(
            summary_spec,
            self._on_summary_event,
            dispatcher=dispatcher,
            cache_size=6,
            cancelled_types=(FitCancelled,),
        )
        self._ttest_options = {"rope": ttest_rope, "rho": rho, "has_folds": tidy.has_folds}
        #: Plackett-Luce and Mallows fits by data settings and model (fitted at most once
        #: each, on the runner's thread).
        self._pl_fits: dict[Hashable, RankingModelResult | MallowsResult] = {}
        self._pl_runner: FitRunner[dict[str, Any]] = FitRunner(
            self._run_ranking_model,
            self._on_ranking_model_event,
            dispatcher=dispatcher,
            cache_size=6,
            cancelled_types=(FitCancelled,),
        )
        self._ttest_runner: FitRunner[dict[str, Any]] = FitRunner(
            ttest_spec,
            self._on_ttest_event,
            dispatcher=dispatcher,
            cache_size=12,
            cancelled_types=(FitCancelled,),
        )
        self._compile_started: float | None = None
        self._warm_thread: threading.Thread | None = None
        #: The inputs of the newest fit settings, by their key (see ``_prepared``).
        self._prepared_lock = threading.Lock()
        #: (key of the settings, of the settings but the prior, of those but the counting
        #: settings too, the inputs prepared for them)
        self._last_prepared: tuple[Hashable, Hashable, Hashable, PreparedFit] | None = None
        self.observe(self._on_fit_setting, names=list(_FIT_TRAITS))
        self.observe(self._on_view_setting, names=list(_VIEW_TRAITS))
        self.observe(self._on_focus, names=["focus"])
        self.observe(self._on_selected_pair, names=["selected_pair"])
        self.observe(self._on_ranking_model, names=["ranking_model"])
        self.observe(self._on_clicked_dataset, names=["clicked_dataset", "selected_pair"])
        self.on_msg(self._on_front_end_message)
        _OPEN.add(self)
        self._opened = True
        if autostart:
            self.refit()

    # ------------------------------------------------------------------ public API

    @property
    def result(self) -> BBTResult | None:
        """The last full fit (``None`` until the first fit finishes); never a preview.

        While the charts show a preview (:attr:`preview`), this is still the previous full
        fit: call :meth:`wait` for the one of the current settings.
        """
        return None if self._fitted is None else self._fitted.result

    @property
    def summary(self) -> pd.DataFrame | None:
        """The summary table of :attr:`result` (current ROPE, HDI and control); never a
        preview's."""
        return None if self._summary is None else self._summary.copy()

    @property
    def charts(self) -> dict[str, Any]:
        """Altair charts of the current view, data inlined (for ``chart.save(...)``).

        Keys: ``intervals``, ``rope_overlap``, ``ppc``, ``coverage``, ``win_matrix`` and
        ``linked`` (all of them in one linked view). Empty before the first fit. Made from
        :attr:`result`, never from a preview.
        """
        f = self._frames
        if not f:
            return {}
        return charts.chart_set(f, hdi=self.hdi, selected_pair=self.selected_pair, focus=self.focus)

    @property
    def fit_settings(self) -> dict[str, Any]:
        """The keyword arguments of ``bbt_widget.fit`` the current controls ask for."""
        return {
            **self._data_kwargs,
            "lower_is_better": self.lower_is_better,
            "d_min": self.d_min if self.local_rope else None,
            # paired only matters with a local ROPE; normalised so the cache key is stable
            "paired": bool(self.paired and self.paired_available) if self.local_rope else True,
            "ties": self.ties,
            "hyperprior": self.hyperprior,
            "prior_scale": self.prior_scale,
            **self._sampler_kwargs,
        }

    def refit(self) -> None:
        """Fit with the current settings (from the cache when they were fitted before)."""
        problem = self._check_fit_settings()
        self._set_problem("fit", problem)
        if problem:
            return
        settings = self.fit_settings
        key = settings_key(settings)
        self._requested_key = key
        if key == self._result_key:
            # e.g. d_min moved while the local ROPE is off: the charts already show this fit
            self._runner.cancel()
            self._preview_runner.cancel()
            self._drop_preview()
            self.status, self.progress, self.error = "done", 1.0, ""
            self.status_text = "done (no change)"
            return
        if self._previews and self._runner.cached(key) is None and not self._runner.is_fitting(key):
            self._preview_runner.submit(key, preview_settings(settings))
        else:
            self._preview_runner.cancel()  # a stale preview would only cost CPU
        self._runner.submit(key, settings)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the running fit is done and shown (scripts, notebooks run top to bottom).

        Returns True when the charts show the current settings, False on a timeout or when
        the fit failed (see :attr:`error`).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        idle = self._runner.wait(timeout)
        # the preview of these settings was cancelled when the full fit was shown: let it end
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        idle = self._preview_runner.wait(left) and idle
        return idle and not self.error and self._result_key == self._requested_key

    def close(self) -> None:
        """Cancel the running fits and sweep, drop the cached fits and close the widget; the
        last open widget also stops the engine's idle worker processes.

        The idle workers are the engine's, shared by every fit in this process: while another
        widget is open they stay ready for its next fit. :attr:`result` stays readable.
        """
        runners = [r for r in (getattr(self, name, None) for name in _RUNNERS) if r is not None]
        for runner in runners:  # all at once: a fit must not run on while others are awaited
            runner.cancel()
        for runner in runners:
            runner.close(timeout=5.0)
        _OPEN.discard(self)
        # after the runners: a fit that was running has released its worker by now. Not for a
        # widget whose constructor refused its arguments (ipywidgets' __del__ closes it too):
        # it never opened, and the workers are kept warm for the fits of others.
        if self._opened and not _OPEN:
            engines.shutdown()
        self._sweep = self._influence = None
        self._pl_fits = {}
        super().close()

    @property
    def fit_stats(self) -> dict[str, int]:
        """Counters of the background runner: started, finished, cancelled, cache_hits..."""
        return dict(self._runner.stats)

    def wait_background(self, timeout: float | None = None) -> bool:
        """Block until the background views are done and shown: the sweep, the influence of
        the highlighted pair, the ranking chart and decision matrices, the Plackett-Luce
        panel and the clicked data set's t-test."""
        deadline = None if timeout is None else time.monotonic() + timeout
        runners = (
            self._sweep_runner,
            self._influence_runner,
            self._summary_runner,
            self._pl_runner,
            self._ttest_runner,
        )
        for runner in runners:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not runner.wait(left):
                return False
        return True

    # ------------------------------------------------------------------ observers

    @t.validate("paired")
    def _valid_paired(self, proposal: t.Bunch) -> bool:
        # Paired local ROPE needs the same folds for every algorithm: off otherwise (the
        # front end greys the box out and shows paired_reason).
        return bool(proposal["value"]) and self.paired_available

    @t.validate("local_rope")
    def _valid_local_rope(self, proposal: t.Bunch) -> bool:
        return bool(proposal["value"]) and self.local_rope_available

    def _on_fit_setting(self, change: dict[str, Any]) -> None:
        if change["name"] == "prior_scale" and not self._setting_default_scale:
            self._scale_chosen = True
        elif change["name"] == "hyperprior" and not self._scale_chosen:
            try:
                default = check_hyperprior(change["new"])[1]
            except (TypeError, ValueError):
                default = None  # refit() shows the problem
            if default is not None and default != self.prior_scale:
                # the family's own default scale; its change refits, with the new family
                self._setting_default_scale = True
                try:
                    self.prior_scale = default
                finally:
                    self._setting_default_scale = False
                return
        self.refit()

    def _on_view_setting(self, change: dict[str, Any]) -> None:
        self._refresh_view()

    def _on_focus(self, change: dict[str, Any]) -> None:
        value = change["new"]
        problem = ""
        if value and value not in self.algorithms:
            problem = (
                f"focus: {value!r} is not one of the algorithms ({', '.join(self.algorithms)})"
            )
        self._set_problem("focus", problem)
        if value and self.selected_pair and value not in pair_of(self.selected_pair):
            # the highlighted pair is not among the pairs now shown: keeping it would dim
            # every pair of the new view
            self.selected_pair = ""

    # ------------------------------------------------------------------ fits

    def _run_fit(
        self,
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
        **kwargs: Any,
    ) -> Fitted:
        # Runs on the runner's worker thread: touches no trait. What bbt_widget.fit does, from
        # the inputs prepared once for this fit and its preview.
        sampler = {k: kwargs.pop(k) for k in SAMPLER_SETTINGS if k in kwargs}
        job = self._prepared(kwargs)
        job.warn(stacklevel=1)  # at this line, as bbt_widget.fit's were
        result = job.sample(**sampler, progress=progress, cancel=cancel, stacklevel=1)
        return Fitted.prepare(result)

    def _run_preview(
        self,
        draws: int,
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
        **kwargs: Any,
    ) -> Fitted:
        # On the preview runner's thread, beside the full fit's. No job.warn(): the data's
        # warnings are the full fit's to report, a preview repeating them would say all twice.
        preview = self._prepared(kwargs).laplace(draws=draws, progress=progress, cancel=cancel)
        return Fitted.prepare(preview, preview=True)

    def _prepared(self, settings: Mapping[str, Any]) -> PreparedFit:
        """The inputs of a fit of ``settings`` (no sampler settings), prepared once for the
        preview and the full fit of a control change, whichever thread asks first; the other
        waits for them (a few hundredths of a second) rather than reading the data again at
        the same time, which would delay both. Built from the last ones where it can:
        the data are the widget's own copy, so nothing read from them can differ. When only
        the hyper-prior changed, they are those inputs under the new prior
        (``PreparedFit.with_prior``: nothing read or counted again); when the local ROPE or the
        tie policy changed too, the wins are counted again from the results already read and
        audited (``PreparedFit.recount``), as the d_min slider drags."""
        key = settings_key(settings)
        data_key = settings_key({k: v for k, v in settings.items() if k not in PRIOR_SETTINGS})
        layout_key = settings_key(
            {k: v for k, v in settings.items() if k not in PRIOR_SETTINGS + COUNT_SETTINGS}
        )
        # the full fit's size: the preview fails the memory check as its fit would
        size = (self._sampler_kwargs["chains"], self._sampler_kwargs["iter_sampling"])
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
                    prepared = prepare_fit(self._data, size=size, **settings)
                self._last_prepared = (key, data_key, layout_key, prepared)
            return self._last_prepared[3]

    def _on_preview_event(self, event: FitEvent[Fitted]) -> None:
        # Progress and errors are the full fit's to show (a failing preview means a failing
        # fit, which says why); only a preview of the settings still being fitted is shown.
        if event.kind != "done" or event.result is None:
            return
        if event.key != self._requested_key or event.key == self._result_key:
            return  # superseded, or the full fit landed first
        with self.hold_sync():
            self._preview = event.result
            self.preview = True
            try:
                self._refresh_view(strict=True)
            except Exception:
                self._drop_preview()
                raise
            self.diagnostics = event.result.badge
            self._show_fit_data(event.result)
            if self.status != "done":
                self.status_text = "preview shown; the full fit follows"

    def _drop_preview(self) -> None:
        """Show the last full fit again instead of a preview (a failed or superseded fit)."""
        if self._preview is None:
            return
        self._preview = None
        self.preview = False
        fitted = self._fitted
        if fitted is None:
            self.fit_data, self.view_data, self.diagnostics = {}, {}, {}
            return
        self.diagnostics = fitted.badge
        self._show_fit_data(fitted)
        self._refresh_view()

    def _check_fit_settings(self) -> str:
        try:
            if self.ties not in TIE_POLICIES:
                check_ties(self.ties)  # raises with the core's message
            check_hyperprior(self.hyperprior, self.prior_scale)
            if self.local_rope:
                if not self.local_rope_available:
                    return f"local ROPE unavailable: {self.local_rope_reason}"
                low, high = D_MIN_RANGE
                if not low <= self.d_min <= high:
                    return f"d_min must be between {low} and {high}; got {self.d_min}"
                check_d_min(self.d_min)
        except (TypeError, ValueError) as exc:
            return str(exc)
        return ""

    def _on_fit_event(self, event: FitEvent[Fitted]) -> None:
        # Runs on the kernel's loop (or in wait()): the only place traits follow a fit.
        if event.kind != "progress" or event.stage != "compiling":
            self._compile_started = None
        if event.kind == "queued":
            self.status, self.progress = "queued", -1.0
            self.status_text = "fit queued" + (
                " (charts show the previous settings)" if self._fitted is not None else ""
            )
        elif event.kind == "progress":
            known = 0.0 <= event.fraction <= 1.0  # NaN: the engine cannot tell
            self.status = event.stage or "sampling"
            self.progress = event.fraction if known else -1.0  # -1: indeterminate bar
            if event.stage == "compiling":
                # the engine reports about once a second while compiling: the text ticks
                self.status_text = self._compiling_text(event.at)
            else:
                self._compile_started = None
                self.status_text = f"{self.status} {event.fraction:.0%}" if known else self.status
                if self.preview:
                    self.status_text += " (charts show a preview)"
        elif event.kind == "done":
            with self.hold_sync():
                self._show_result(event.key, event.result)
                if not event.cached:
                    self.fit_count += 1
                self.status, self.progress, self.error = "done", 1.0, ""
                self.status_text = (
                    "done (cached, instant)" if event.cached else f"done in {event.seconds:.1f} s"
                )
            if not event.cached:
                self._warm_other_model()
        elif event.kind == "error":
            # Only the message: a traceback helps nobody looking at a widget.
            self._preview_runner.cancel()
            self._drop_preview()  # "the charts show the last good fit": not a preview
            self.status, self.progress = "error", 0.0
            if event.stage == "display":
                # the fit ran, but turning it into charts failed (a bug, reported as such)
                self.status_text = "could not show the fit (charts show the last good fit)"
                self.error = f"Could not show the fit: {error_text(event.error)}"
            else:
                self.status_text = "fit failed (charts show the last good fit)"
                self.error = f"Fit failed: {error_text(event.error)}"

    def _show_result(self, key: Hashable, fitted: Fitted | None) -> None:
        if fitted is None:  # pragma: no cover - "done" always carries a result
            return
        previous = self._fitted, self._result_key, self._preview
        self._fitted, self._result_key, self._preview = fitted, key, None
        self._preview_runner.cancel()  # its preview, if still running, is not needed now
        try:
            refreshed = self._refresh_view(strict=True)
        except Exception:
            # keep showing the last good fit; the runner reports the error
            self._fitted, self._result_key, self._preview = previous
            raise
        self.preview = False
        self._frames.update(fitted.frames)
        self.diagnostics = fitted.badge
        self.audit = fitted.audit
        self._set_problem("groups", fitted.result.disconnected_note)  # shown as an alert
        self._show_fit_data(fitted)
        if not refreshed:  # the view's own refresh updates it (the same frame twice, before)
            self._update_influence()
        self._update_ranking_model()
        self._update_ttest()

    def _show_fit_data(self, fitted: Fitted) -> None:
        # sent as the JSON the worker thread encoded with the fit (also when it comes back
        # from the cache): nothing left to encode on the kernel
        remember_json(self, "fit_data", fitted.data, fitted.data_json)
        self.fit_data = fitted.data

    # ------------------------------------------------------------------ re-summaries

    def _refresh_view(self, strict: bool = False) -> bool:
        """New chart data from the draws already there; no fit.

        With ``strict`` a failure to build the chart data raises (a new fit: the runner
        shows it as the widget's error); otherwise it is shown as the view's problem.
        Returns whether the views built on the full fit (summary, sweep, influence) were
        updated too: not for a preview, nor when the view's settings are invalid.
        """
        started = time.perf_counter()
        problem = self._check_view_settings()
        self._set_problem("view", problem)
        if self.interpretation in INTERPRETATIONS:
            self.caveat = weak_rule_caveat(len(self.algorithms), self.interpretation)
        preview = self._preview
        fitted = self._fitted if preview is None else preview
        if problem or fitted is None:
            return False
        rope = (self.rope_low, self.rope_high)
        control = self.control or None
        try:
            summary = fitted.result.summary(rope=rope, hdi=self.hdi, control=control)
            mass = fitted.result.rope_mass(rope=rope, control=control)
            frames = {
                "intervals": charts.interval_frame(summary, fitted.ranges, self.interpretation),
                "overlap": charts.overlap_frame(summary, mass),
                "rope": charts.rope_frame(rope),
            }
        except Exception as exc:
            if strict:
                raise
            self._set_problem("view", f"could not redraw: {error_text(exc)}")
            return False
        self.view_data = {name: charts.to_columns(frames[name]) for name in charts.VIEW_DATASETS}
        self._show_headline(fitted.result, summary if control is None else None)
        self.last_view_seconds = time.perf_counter() - started
        if preview is not None:
            return False  # the summary, the exports and the views built on a fit wait for it
        self._summary = summary
        self._frames.update(frames)
        self._refresh_sweep_view()
        self._update_influence()
        self._summary_runner.submit(
            (self._result_key, rope, self.hdi),
            {"result": fitted.result, "rope": rope, "hdi": self.hdi},
        )
        return True

    def _show_headline(self, result: BBTResult, summary: pd.DataFrame | None) -> None:
        """The headline sentence of the decisions over every pair, and, the first time there
        are many algorithms, "Show pairs of" set to the top-ranked one: the intervals of
        120 or more pairs cannot be read at once (the control shows the choice)."""
        rope = (self.rope_low, self.rope_high)
        if summary is None:  # the view's summary is against a control: not every pair
            summary = result.summary(rope=rope, hdi=self.hdi)
        ranking = result.ranking(hdi=self.hdi)
        self.headline = headline(summary, ranking, self.interpretation)
        if not self._focus_defaulted and len(self.algorithms) > FOCUS_ALGORITHMS:
            self._focus_defaulted = True
            if not self.focus:
                self.focus = str(ranking["algorithm"].iloc[0])

    def _on_summary_event(self, event: FitEvent[dict[str, Any]]) -> None:
        if event.kind == "done" and event.result is not None:
            self.summary_spec = event.result
        elif event.kind == "error":  # a bug: shown, and the other views carry on
            self._set_problem("summary", f"could not draw the ranking: {error_text(event.error)}")

    # ------------------------------------------------------------------ engines

    def _compiling_text(self, now: float) -> str:
        if self._compile_started is None:
            self._compile_started = now
        elapsed = now - self._compile_started
        return (
            f"compiling the Stan model: {elapsed:.0f} s (once per machine; usually about a minute)"
        )

    def _warm_other_model(self) -> None:
        """After the first fit, compile (and with PyStan, load) the other Stan model in the
        background, so that switching to or from Davidson later waits for no compile."""
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

    def _check_view_settings(self) -> str:
        """Every problem of the summary controls, one per line ('' when all are fine)."""
        problems = []
        for check in (
            lambda: check_rope((self.rope_low, self.rope_high)),
            lambda: check_hdi(self.hdi),
        ):
            try:
                check()
            except (TypeError, ValueError) as exc:
                problems.append(str(exc))
        if self.control and self.control not in self.algorithms:
            problems.append(f"control: {self.control!r} is not one of the algorithms")
        if self.interpretation not in INTERPRETATIONS:
            problems.append(
                f"interpretation must be 'weak' or 'strong', not {self.interpretation!r}"
            )
        return "\n".join(problems)

    def _set_problem(self, where: str, problem: str) -> None:
        if problem:
            self._problems[where] = problem
        else:
            self._problems.pop(where, None)
        self.message = "\n".join(self._problems.values())


def _own_copy(value: Any) -> Any:
    """A deep copy of a pandas object (the widget's own), else the value itself."""
    if isinstance(value, (pd.DataFrame, pd.Series)):
        return value.copy(deep=True)
    return value
