"""``BBTWidget``: the interactive Jupyter front end of the BBT comparison.

Traits and observers only. The statistics come from the core (``fit``, ``BBTResult``), the
chart specs from :mod:`bbt_widget.charts` and the background fits from
:mod:`bbt_widget.runner`. Controls split by cost, as the core does:

* ties, local ROPE / d_min, paired, metric direction, hyper-prior and its scale change the
  win table or the model: they start a background fit (or take it from the cache);
* ROPE bounds, HDI mass, control algorithm and interpretation only re-summarise the draws
  already there: new chart data in milliseconds, no fit;
* the highlighted pair and the focus algorithm live in the browser (Vega parameters) and are
  mirrored here.

Invalid control values never raise from the front end: the widget shows what is wrong
inline and keeps the last good charts.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anywidget
import pandas as pd
import traitlets as t

from . import charts
from .data import (
    DEFAULT_SEED,
    TIE_POLICIES,
    check_d_min,
    check_hdi,
    check_hyperprior,
    check_rope,
    check_ties,
    tidy_results,
)
from .engines.base import FitCancelled
from .fitting import fit as core_fit
from .result import BBTResult
from .runner import FitEvent, FitRunner, kernel_dispatcher

__all__ = ["D_MIN_RANGE", "BBTWidget"]

_STATIC = Path(__file__).parent / "static"
if not (_STATIC / "widget.js").is_file():  # pragma: no cover - only in an unbuilt checkout
    raise ImportError(
        "the bbt_widget front end is not built (bbt_widget/static/widget.js is missing). "
        "Install the package with pip (the build hook runs npm), or build it by hand: "
        "npm --prefix js ci && npm --prefix js run build"
    )

#: Range of the local-ROPE threshold offered by the slider (the paper uses 0.4).
D_MIN_RANGE = (0.0, 1.5)
_INTERPRETATIONS = ("weak", "strong")
_FIT_TRAITS = (
    "ties",
    "local_rope",
    "d_min",
    "paired",
    "lower_is_better",
    "hyperprior",
    "prior_scale",
)
_VIEW_TRAITS = ("rope_low", "rope_high", "hdi", "control", "interpretation")
#: Diagnostics message keywords -> what the badge names.
_DIAG_NAMES = (
    ("R-hat", "R-hat"),
    ("ESS", "ESS"),
    ("divergent", "divergences"),
    ("tree depth", "tree depth"),
    ("E-BFMI", "E-BFMI"),
)


def _ranges(result: BBTResult) -> pd.DataFrame:
    """Full range of every pair's draws, keyed by (alg_a, alg_b): pair labels can collide."""
    pairs = result.summary()  # all pairs, in the order of pair_draws()' columns
    return charts.range_frame(result.pair_draws(), pairs["alg_a"], pairs["alg_b"])


@dataclass(frozen=True)
class _Fitted:
    """A fit plus everything the charts need from it that ROPE/HDI/control do not change.

    Built on the runner's worker thread (so the kernel is not blocked for it) and cached with
    the result, so going back to earlier settings redraws without recomputing anything.
    """

    result: BBTResult
    frames: dict[str, pd.DataFrame]
    data: dict[str, dict[str, list[Any]]]
    ranges: pd.DataFrame
    badge: dict[str, Any]

    @classmethod
    def prepare(cls, result: BBTResult) -> _Fitted:
        order = list(result.ranking()["algorithm"])
        frames = {
            "ppc": charts.ppc_frame(result.ppc_histogram(), order),
            "coverage": charts.coverage_frame(result.ppc_table()),
            "matrix": charts.matrix_frame(result.win_table, order),
        }
        return cls(
            result=result,
            frames=frames,
            data={name: charts.to_columns(frame) for name, frame in frames.items()},
            ranges=_ranges(result),
            badge=_badge(result.diagnostics()),
        )


class BBTWidget(anywidget.AnyWidget):
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
    rope, hdi, control, interpretation
        Initial summary settings: ROPE bounds, HDI mass, control algorithm (``None`` = all
        pairs) and ``"weak"`` or ``"strong"`` decisions (paper Sec. 9.2 / 9.3).
    engine, chains, iter_warmup, iter_sampling, seed
        Sampler settings for every fit. The seed is fixed (default
        ``bbt_widget.DEFAULT_SEED``, as for ``fit``) so that going back to earlier settings, or
        running the same settings with ``fit``, shows the same numbers.
    autostart
        Start the first fit at once (default). Otherwise call :meth:`refit`.

    Raises
    ------
    TypeError, ValueError
        The core's message when ``data`` or a setting is invalid.

    Examples
    --------
    >>> import bbt_widget as bbt
    >>> w = bbt.BBTWidget(bbt.datasets.load_base(), dataset="db")  # doctest: +SKIP
    >>> w  # doctest: +SKIP
    >>> w.d_min = 0.2; w.local_rope = True  # doctest: +SKIP
    >>> w.wait(); w.summary  # doctest: +SKIP
    """

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

    # --- facts about the data (read-only for the front end) -------------------------------
    algorithms = t.List(t.Unicode()).tag(sync=True)
    paired_available = t.Bool(False).tag(sync=True)
    paired_reason = t.Unicode("").tag(sync=True)
    local_rope_available = t.Bool(False).tag(sync=True)
    local_rope_reason = t.Unicode("").tag(sync=True)

    # --- state shown by the front end -----------------------------------------------------
    status = t.Unicode("idle").tag(sync=True)
    status_text = t.Unicode("").tag(sync=True)
    progress = t.Float(0.0, help="fit progress in [0, 1]; -1 when unknown").tag(sync=True)
    fit_count = t.Int(0, help="fits that ran (cache hits excluded)").tag(sync=True)
    message = t.Unicode("", help="why the last control change was not applied").tag(sync=True)
    error = t.Unicode("", help="the last fit's error message").tag(sync=True)
    diagnostics = t.Dict().tag(sync=True)
    spec = t.Dict().tag(sync=True)
    fit_data = t.Dict().tag(sync=True)
    view_data = t.Dict().tag(sync=True)

    def __init__(
        self,
        data: pd.DataFrame,
        dataset: str | None = None,
        *,
        algorithm: str | None = None,
        fold: str | None = None,
        score: str | None = None,
        sd: pd.DataFrame | None = None,
        lower_is_better: bool = False,
        d_min: float | None = None,
        paired: bool = True,
        ties: str = "spread",
        hyperprior: str = "lognormal",
        prior_scale: float = 0.5,
        rope: Sequence[float] = (0.45, 0.55),
        hdi: float = 0.89,
        control: str | None = None,
        interpretation: str = "weak",
        engine: str = "auto",
        chains: int = 4,
        iter_warmup: int = 1000,
        iter_sampling: int = 1000,
        seed: int = DEFAULT_SEED,
        autostart: bool = True,
        **kwargs: Any,
    ) -> None:
        # Bad data or settings raise the core's own message here, before anything is shown.
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
        hyperprior, prior_scale = check_hyperprior(hyperprior, prior_scale)
        rope = check_rope(rope)
        hdi = check_hdi(hdi)
        algorithms = list(tidy.algorithms)
        if control is not None and control not in algorithms:
            raise ValueError(f"control {control!r} is not one of the algorithms {algorithms}")
        if interpretation not in _INTERPRETATIONS:
            raise ValueError(f"interpretation must be 'weak' or 'strong', not {interpretation!r}")

        local_ok = tidy.has_folds or tidy.has_sd
        if d_min is not None and not local_ok:
            raise ValueError(
                "d_min needs fold-level scores or an sd table; these results have one score "
                "per data set and algorithm (pass d_min=None)"
            )
        super().__init__(
            algorithms=algorithms,
            paired_available=tidy.paired_ok,
            paired_reason=_paired_note(tidy.paired_problem),
            local_rope_available=local_ok,
            local_rope_reason="" if local_ok else "no fold-level scores",
            ties=ties,
            local_rope=d_min is not None,
            d_min=0.4 if d_min is None else d_min,
            paired=bool(paired) and tidy.paired_ok,
            lower_is_better=bool(lower_is_better),
            hyperprior=hyperprior,
            prior_scale=prior_scale,
            rope_low=rope[0],
            rope_high=rope[1],
            hdi=hdi,
            control=control or "",
            interpretation=interpretation,
            spec=charts.view_spec(),
            **kwargs,
        )
        # Copies, not the caller's objects: an in-place edit of the caller's frame after this
        # would reach new fits but not the cached ones (issue 9, finding 7).
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
        self._fitted: _Fitted | None = None
        self._result_key: Hashable | None = None
        self._summary: pd.DataFrame | None = None
        self._frames: dict[str, pd.DataFrame] = {}
        self._problems: dict[str, str] = {}
        self._requested_key: Hashable | None = None
        #: Python seconds of the last re-summary (control change -> new chart data).
        self.last_view_seconds = 0.0
        self._runner: FitRunner[_Fitted] = FitRunner(
            self._run_fit,
            self._on_fit_event,
            dispatcher=kernel_dispatcher(),
            cancelled_types=(FitCancelled,),
        )
        self.observe(self._on_fit_setting, names=list(_FIT_TRAITS))
        self.observe(self._on_view_setting, names=list(_VIEW_TRAITS))
        self.observe(self._on_focus, names=["focus"])
        if autostart:
            self.refit()

    # ------------------------------------------------------------------ public API

    @property
    def result(self) -> BBTResult | None:
        """The fit the charts show (``None`` until the first fit finishes)."""
        return None if self._fitted is None else self._fitted.result

    @property
    def summary(self) -> pd.DataFrame | None:
        """The summary table the charts show (current ROPE, HDI and control)."""
        return None if self._summary is None else self._summary.copy()

    @property
    def charts(self) -> dict[str, Any]:
        """Altair charts of the current view, data inlined (for ``chart.save(...)``).

        Keys: ``intervals``, ``rope_overlap``, ``ppc``, ``coverage``, ``win_matrix`` and
        ``linked`` (all of them in one linked view). Empty before the first fit.
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
        key = _settings_key(settings)
        self._requested_key = key
        if key == self._result_key:
            # e.g. d_min moved while the local ROPE is off: the charts already show this fit
            self._runner.cancel()
            self.status, self.progress, self.error = "done", 1.0, ""
            self.status_text = "done (no change)"
            return
        self._runner.submit(key, settings)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the running fit is done and shown (scripts, notebooks run top to bottom).

        Returns True when the charts show the current settings, False on a timeout or when
        the fit failed (see :attr:`error`).
        """
        idle = self._runner.wait(timeout)
        return idle and not self.error and self._result_key == self._requested_key

    def close(self) -> None:
        """Stop background fits and close the widget."""
        runner = getattr(self, "_runner", None)
        if runner is not None:
            runner.close(timeout=5.0)
        super().close()

    @property
    def fit_stats(self) -> dict[str, int]:
        """Counters of the background runner: started, finished, cancelled, cache_hits..."""
        return dict(self._runner.stats)

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
        if value and self.selected_pair and value not in _pair_of(self.selected_pair):
            # the highlighted pair is not among the pairs now shown: keeping it would dim
            # every pair of the new view
            self.selected_pair = ""

    # ------------------------------------------------------------------ fits

    def _run_fit(self, **kwargs: Any) -> _Fitted:
        # Runs on the runner's worker thread: touches no trait.
        return _Fitted.prepare(core_fit(self._data, **kwargs))

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

    def _on_fit_event(self, event: FitEvent[_Fitted]) -> None:
        # Runs on the kernel's loop (or in wait()): the only place traits follow a fit.
        if event.kind == "queued":
            self.status, self.progress = "queued", -1.0
            self.status_text = "fit queued" + (
                " (charts show the previous settings)" if self._fitted is not None else ""
            )
        elif event.kind == "progress":
            known = 0.0 <= event.fraction <= 1.0  # NaN: the engine cannot tell
            self.status = event.stage or "sampling"
            self.progress = event.fraction if known else -1.0  # -1: indeterminate bar
            self.status_text = f"{self.status} {event.fraction:.0%}" if known else self.status
        elif event.kind == "done":
            with self.hold_sync():
                self._show_result(event.key, event.result)
                if not event.cached:
                    self.fit_count += 1
                self.status, self.progress, self.error = "done", 1.0, ""
                self.status_text = (
                    "done (cached, instant)" if event.cached else f"done in {event.seconds:.1f} s"
                )
        elif event.kind == "error":
            # Only the message: a traceback helps nobody looking at a widget.
            self.status, self.progress = "error", 0.0
            if event.stage == "display":
                # the fit ran, but turning it into charts failed (a bug, reported as such)
                self.status_text = "could not show the fit (charts show the last good fit)"
                self.error = f"Could not show the fit: {_error_text(event.error)}"
            else:
                self.status_text = "fit failed (charts show the last good fit)"
                self.error = f"Fit failed: {_error_text(event.error)}"

    def _show_result(self, key: Hashable, fitted: _Fitted | None) -> None:
        if fitted is None:  # pragma: no cover - "done" always carries a result
            return
        previous = self._fitted, self._result_key
        self._fitted, self._result_key = fitted, key
        try:
            self._refresh_view(strict=True)
        except Exception:
            # keep showing the last good fit; the runner reports the error
            self._fitted, self._result_key = previous
            raise
        self._frames.update(fitted.frames)
        self.diagnostics = fitted.badge
        self._set_problem("groups", fitted.result.disconnected_note)  # shown as an alert
        self.fit_data = fitted.data

    # ------------------------------------------------------------------ re-summaries

    def _refresh_view(self, strict: bool = False) -> None:
        """New chart data from the draws already there; no fit.

        With ``strict`` a failure to build the chart data raises (a new fit: the runner
        shows it as the widget's error); otherwise it is shown as the view's problem.
        """
        started = time.perf_counter()
        problem = self._check_view_settings()
        self._set_problem("view", problem)
        fitted = self._fitted
        if problem or fitted is None:
            return
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
            self._set_problem("view", f"could not redraw: {_error_text(exc)}")
            return
        self._summary = summary
        self._frames.update(frames)
        self.view_data = {
            name: charts.to_columns(self._frames[name]) for name in charts.VIEW_DATASETS
        }
        self.last_view_seconds = time.perf_counter() - started

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
        if self.interpretation not in _INTERPRETATIONS:
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


#: Advice the core gives to callers of ``fit`` ("use paired=False ..."): wrong in the widget,
#: where the user may well have passed paired=False already and the checkbox is greyed out.
_ARGUMENT_ADVICE = re.compile(r"\s*[:;,]\s*(?:use|pass)\s+paired\s*=\s*False\b.*$", re.DOTALL)


def _paired_note(problem: str) -> str:
    """Why paired mode is off, worded for the widget (one line; '' when it is available).

    The core explains the problem for ``fit(...)`` callers and ends with what argument to
    pass; the widget states the reason only.
    """
    reason = _ARGUMENT_ADVICE.sub("", problem.strip()).strip().rstrip(".")
    if not reason:
        return ""
    return f"paired mode is off: {' '.join(reason.split())}"


def _own_copy(value: Any) -> Any:
    """A deep copy of a pandas object (the widget's own), else the value itself."""
    if isinstance(value, (pd.DataFrame, pd.Series)):
        return value.copy(deep=True)
    return value


def _pair_of(key: str) -> tuple[str, ...]:
    """The two algorithms of a pair key (:func:`charts.pair_key`); () when it is not one."""
    try:
        names = json.loads(key)
    except ValueError:
        return ()
    return tuple(str(n) for n in names) if isinstance(names, list) else ()


def _settings_key(settings: dict[str, Any]) -> Hashable:
    # sd (a DataFrame) is fixed per widget; its identity is enough inside one cache
    return tuple(
        sorted((k, id(v) if isinstance(v, pd.DataFrame) else v) for k, v in settings.items())
    )


def _error_text(error: BaseException | None, max_lines: int = 8, max_chars: int = 1500) -> str:
    """The exception's own message, shortened; never a traceback."""
    if error is None:  # pragma: no cover
        return "unknown error"
    text = str(error).strip() or type(error).__name__
    lines = text.splitlines()
    if len(lines) > max_lines:
        text = "\n".join([*lines[:max_lines], "(...)"])
    return text if len(text) <= max_chars else text[:max_chars] + " (...)"


def _badge(diag: Any) -> dict[str, Any]:
    """The diagnostics badge: fine, or a warning naming what failed."""
    messages = [str(m) for m in getattr(diag, "messages", [])]
    ok = bool(diag["ok"])
    if ok:
        label = "diagnostics fine"
    else:
        failed = [name for key, name in _DIAG_NAMES if any(key in m for m in messages)]
        label = "check " + ", ".join(failed or ["diagnostics"])
    numbers = {
        k: _plain(diag[k])
        for k in (
            "max_rhat",
            "min_ess_bulk",
            "min_ess_tail",
            "divergences",
            "treedepth_saturated",
            "min_ebfmi",
        )
    }
    return {"ok": ok, "label": label, "messages": messages, **numbers}


def _plain(value: Any) -> Any:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    return number if number == number else None
