"""The whole report, as ``bbt-widget report`` writes it, from Python or the command line.

:func:`write` fits the results when given data, checks the optional sections (robustness,
the other methods) against the data before any fit, runs them and writes the report with
:func:`bbt_widget.outputs.report_render.write_report`. The command line does exactly this,
so the same data, options and seed give the same report either way.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ...core.data import TidyResults, as_tidy
from ...core.options import (
    DEFAULT_HDI,
    DEFAULT_INTERPRETATION,
    DEFAULT_ROPE,
    DEFAULT_TITLE,
    Rule,
    RuleChoice,
)
from .._atomic import missing_folder
from ..methods_text import check_report_paths
from ._side_fits import SideFit

# the report writer and its sections (Altair) are imported where used: the command line
# checks its options with this module before the fit and imports those meanwhile
if TYPE_CHECKING:
    from ...core.draws import ProgressCallback
    from ...core.result import BBTResult
    from ...lab.metrics import MetricsResult
    from ._sections import Section

#: The other methods a report can add besides BBT (``methods=``; ``--with`` on the command line).
OTHER_METHODS = ("hierarchical", "plackett-luce", "mallows", "friedman", "signed-rank", "sign")
#: The baselines among them, each a section of its own (``report_baselines``).
_BASELINES = ("friedman", "signed-rank", "sign")
#: The ranking models among them (a "Ranking models" section together).
_RANKING_MODELS = ("plackett-luce", "mallows")
#: The fit's iteration settings left to their defaults (None: the engine's, see
#: ``bbt_widget.engines.iterations``): the hierarchical t-test and the Plackett-Luce fit keep
#: their own iteration defaults unless the fit's were set (``--iter-warmup``...).
SAMPLER_DEFAULTS: dict[str, int | None] = {"iter_warmup": None, "iter_sampling": None}
#: Largest pairs x data sets for which an HTML report runs the hierarchical t-test without
#: ``methods`` (given ``rho``): 10 pairs x 132 data sets (5 algorithms on the shipped results'
#: 132 data sets, or 20 pairs on 66): a pair of 132 data sets of 4 folds takes about 3.5 s of
#: CPU (``benchmarks/results/methods.json``), so about 20 s on two cores; larger data
#: asks for ``methods=["hierarchical"]``.
PAIRWISE_DEFAULT_MAX = 10 * 132
#: Warm-up iterations per chain of the report's Plackett-Luce fit unless the fit's warm-up
#: differs from :data:`SAMPLER_DEFAULTS` (it keeps the fit's chains, kept draws and seed).
#: Its Gibbs sampler starts each chain from a draw of the prior and forgets it within a few
#: dozen sweeps. On the shipped 16 x 132 results, over 8 seeds, 4 x (250 + 1000) gave R-hat
#: <= 1.0034, bulk ESS >= 2026 and tail ESS >= 2534 for every P(best), expected rank,
#: P(a before b) and P(top-k), Monte Carlo errors of the reported means <= 0.0002 (P(best)),
#: 0.0065 (expected rank) and 0.001 (P(top-k)), and the same algorithm first as 4 x (1000 +
#: 1000) at every seed (``benchmarks/bench_pl_draws.py``, ``benchmarks/results/
#: pl_draws.json``).
RANKING_WARMUP = 250
#: How the results were read: the keys of a fit's settings the other methods take too.
_LAYOUT = ("dataset", "algorithm", "fold", "score", "lower_is_better")
#: The sampler settings the other methods' fits share with the BBT fit.
_SAMPLER = ("engine", "chains", "iter_warmup", "iter_sampling", "seed")


def methods_from(words: str | Sequence[str] | None) -> list[str] | None:
    """The methods ``methods=`` names, in :data:`OTHER_METHODS` order (``"none"`` left out):
    ``None`` for ``None`` (the defaults alone), ``[]`` for ``"none"``; a comma-separated
    string is split. Whether the defaults stay: :func:`keeps_defaults`."""
    names = _words(words)
    return None if names is None else [m for m in OTHER_METHODS if m in names]


def keeps_defaults(words: str | Sequence[str] | None) -> bool:
    """Whether ``methods=`` adds to the default methods (:func:`check_methods`): unless it
    holds ``"none"`` (``"none"`` alone: no other method; ``"none,friedman"``: Friedman
    alone)."""
    names = _words(words)
    return names is None or "none" not in names


def _words(words: str | Sequence[str] | None) -> list[str] | None:
    """The names in ``methods=``, checked; ``None`` for ``None``."""
    if words is None:
        return None
    given = words
    if isinstance(words, str):
        words = words.split(",")
    names = [str(w).strip() for w in words if str(w).strip()]
    unknown = [w for w in names if w not in (*OTHER_METHODS, "none")]
    if unknown or not names:
        shown = given if isinstance(given, str) else ",".join(map(str, given))
        raise ValueError(
            f"methods={shown!r}: give 'none' or a comma-separated list of "
            f"{', '.join(OTHER_METHODS)} (e.g. methods=hierarchical,plackett-luce), added to "
            "the default methods; add 'none' to leave those out (none,friedman)"
        )
    return names


def check_methods(
    data: pd.DataFrame | TidyResults,
    layout: Mapping[str, Any],
    *,
    path: str | Path,
    methods: str | Sequence[str] | None = None,
    robustness: bool = False,
    rho: float | None = None,
) -> list[str]:
    """The other methods to run, each checked against the data before any fit.

    The defaults, in every format, so that the HTML, Markdown and LaTeX reports of the same
    data have the same sections: Plackett-Luce for data with folds where it can run, and
    the hierarchical t-test too when ``rho`` is given and pairs x data sets is at most
    :data:`PAIRWISE_DEFAULT_MAX` (it is one fit per pair). The methods ``methods`` names are
    added to them, unless it holds ``"none"`` (:func:`keeps_defaults`). A ``rho`` that no
    hierarchical t-test uses is refused. ``robustness`` (leaving each data set out) needs
    enough data sets.

    Parameters
    ----------
    data, layout
        The results (a table or as read) and how to read them (``dataset``, ``algorithm``,
        ``fold``, ``score``, ``lower_is_better``), as given to the fit.
    path
        The report file.

    Raises
    ------
    ValueError
        Naming the keyword and the fix.
    """
    # the checks read the data alone: the methods themselves (Altair, SciPy) are imported
    # where they run, so that the command line can import them while it fits
    from ...core.data import MIN_RANKED_DATASETS
    from ...lab.influence import MIN_DATASETS

    tidy = as_tidy(
        data,
        **{k: layout.get(k) for k in _LAYOUT if k != "lower_is_better"},
        lower_is_better=bool(layout.get("lower_is_better")),
    )
    if robustness and len(tidy.datasets) < MIN_DATASETS:
        raise ValueError(
            f"robustness=True leaves each data set out in turn and needs at least "
            f"{MIN_DATASETS} data sets; these results have {len(tidy.datasets)}"
        )
    ranked = int(tidy.ranked.sum())
    named = methods_from(methods) or []
    defaults = []
    if keeps_defaults(methods):
        if tidy.has_folds and ranked >= MIN_RANKED_DATASETS:
            defaults.append("plackett-luce")
        n_alg, n_data = len(tidy.algorithms), len(tidy.datasets)
        small = n_alg * (n_alg - 1) // 2 * n_data <= PAIRWISE_DEFAULT_MAX
        if tidy.has_folds and small and rho is not None:
            defaults.append("hierarchical")
    chosen = [m for m in OTHER_METHODS if m in named or m in defaults]
    for model in _RANKING_MODELS:
        if model in chosen and ranked < MIN_RANKED_DATASETS:
            raise ValueError(
                f"methods={model} needs at least {MIN_RANKED_DATASETS} data sets where 2 or "
                f"more algorithms have a result; these results have {ranked}"
            )
    if rho is not None and "hierarchical" not in chosen:
        raise ValueError(
            f"rho={rho:g} is used only by the hierarchical t-test; add methods=hierarchical "
            "or leave rho out"
        )
    if "hierarchical" in chosen:
        if not tidy.has_folds:
            raise ValueError(
                "methods=hierarchical needs the results of every fold (several rows per data "
                "set and algorithm); these results have one score per data set"
            )
        if rho is None:
            raise ValueError(
                "methods=hierarchical needs rho, the correlation of results from overlapping "
                "training sets: 1/k for k-fold cross-validation (e.g. rho=0.1 for 10 folds)"
            )
        if not 0.0 < rho < 1.0:
            raise ValueError(f"rho={rho:g}: must lie strictly between 0 and 1")
        from ...baselines._hierarchical_pairs import check_pairs

        try:  # every pair has enough data sets with common folds
            check_pairs(
                tidy,
                **{k: layout.get(k) for k in _LAYOUT if k != "lower_is_better"},
                lower_is_better=bool(layout.get("lower_is_better")),
                rho=rho,
            )
        except ValueError as err:
            raise ValueError(f"methods=hierarchical: {err}") from None
    return chosen


def ranking_sampler(sampler: Mapping[str, Any]) -> dict[str, Any]:
    """The sampler settings of the report's Plackett-Luce fit from the BBT fit's (``engine``,
    ``chains``, ``iter_warmup``, ``iter_sampling``, ``seed``): the same, but a warm-up of
    :data:`RANKING_WARMUP` iterations when the fit's is the default."""
    from ... import engines

    # the BBT fit's defaults, as given (None) or as the fit recorded them (its engine's)
    defaults = engines.iterations(engines.resolve_engine(sampler["engine"]))
    warmup, sampling = sampler["iter_warmup"], sampler["iter_sampling"]
    if warmup is None or warmup == defaults[0]:
        warmup = RANKING_WARMUP
    chosen = {k: sampler[k] for k in _SAMPLER}
    return chosen | {"iter_warmup": warmup, "iter_sampling": sampling or defaults[1]}


def start_methods(
    data: TidyResults,
    *,
    methods: Sequence[str],
    hdi: float = DEFAULT_HDI,
    **sampler: Any,
) -> SideFit | None:
    """Start now, in the background, the other methods' fits that :func:`optional_sections`
    will make with the same results, ``hdi`` and sampler settings (those the BBT fit will
    record: ``engine``, ``chains``, ``iter_warmup``, ``iter_sampling``, ``seed``; other
    keywords of the fit are ignored), so that they run during the BBT fit; hand what this
    returns to :func:`optional_sections`. Now the Plackett-Luce model (None when it is not
    among ``methods``, or without a seed: the fit draws one, which is not known yet)."""
    if "plackett-luce" not in methods or sampler.get("seed") is None:
        return None
    from ...ranking._plackett_luce import ranking_model

    options = _ranking_options(data, hdi, sampler)
    return SideFit(lambda progress: ranking_model(data, progress=progress, **options), options)


def _ranking_options(data: TidyResults, hdi: float, sampler: Mapping[str, Any]) -> dict[str, Any]:
    """The keywords of the report's Plackett-Luce fit of ``data`` (:func:`ranking_sampler`;
    its Gibbs sampler has no engine)."""
    options: dict[str, Any] = {"hdi": float(hdi)}
    return options | {k: v for k, v in ranking_sampler(sampler).items() if k != "engine"}


def _stage(progress: ProgressCallback | None, name: str) -> ProgressCallback | None:
    """``progress`` for one step of the report: its stages prefixed with the step's name."""
    if progress is None:
        return None

    def report(stage: str, fraction: float) -> None:
        progress(stage if stage.startswith("compiling") else f"{name}: {stage}", fraction)

    return report


def optional_sections(
    result: BBTResult,
    data: TidyResults,
    *,
    methods: Sequence[str],
    robustness: bool,
    rho: float | None,
    rope: tuple[float, float],
    hdi: float,
    interpretation: Rule,
    progress: ProgressCallback | None = None,
    log: Callable[[str], None] | None = None,
    started: SideFit | None = None,
) -> list[Section]:
    """The report's optional sections: robustness (a sweep over the analysis choices and the
    influence of each data set) and the other ``methods`` (checked by :func:`check_methods`)
    on ``data``, the results ``result`` was fitted on, as read once for the whole report.

    ``interpretation`` is the rule the report uses (``"weak"`` or ``"strong"``); ``progress``
    gets each step's stages, ``log`` a line when a step is done (what it did, how long);
    ``started``: the side fit :func:`start_methods` started for this report, if any.
    """
    from ...core.groups import results_only
    from ...lab.influence import influence
    from ...lab.sweep import sweep as run_sweep
    from ...ranking._plackett_luce import ranking_model
    from . import _sections as rs
    from ._groups import group_mapping, group_sweep_section, influence_not_computed

    s = result.settings
    # how the results were read: the methods that take the layout are given that very one
    layout = {k: getattr(data.read_with, k) for k in _LAYOUT}
    sampler = {k: s[k] for k in _SAMPLER}
    tell = log or (lambda line: None)
    out: list[Section] = []
    if robustness:
        from ...lab.sweep import default_grid

        if result.tidy is None:
            raise ValueError(
                "robustness=True refits the fit's own results, and this is a fit of a ready win "
                "table: fit the results (give them as result_or_data) to add robustness"
            )
        start = time.perf_counter()
        prior = (s["hyperprior"], s["prior_scale"])  # the scale used
        # a fit of the group model is swept as the group model, its groups as fitted
        groups = group_mapping(result)
        grid = {**default_grid(result.tidy, grouped=groups is not None), "prior": [prior]}
        sweep = run_sweep(
            data if groups is None else results_only(data, s["group"]),
            **layout,
            tie_threshold=s.get("tie_threshold"),
            grid=grid,
            rope=rope,
            hdi=hdi,
            **_methods_sampler(s),
            progress=_stage(progress, "sweep"),
            group=groups,
        )
        tell(
            f"sweep: {len(sweep.settings)} fits in {time.perf_counter() - start:.1f} s"
            + (f" ({sweep.n_failed} failed)" if sweep.n_failed else "")
        )
        out.append(rs.sweep_section(sweep, interpretation))
        if groups is not None:
            out[-1] = group_sweep_section(out[-1], sweep, interpretation)
            # leaving a data set out of the group model changes one group's table and its
            # likelihood, which the influence analysis (of the plain model) does not know
            out.append(influence_not_computed())
            tell("influence: not computed for the group model")
        else:
            start = time.perf_counter()
            if progress is not None:
                progress("influence: leaving each data set out", math.nan)
            infl = influence(
                result,
                interpretation=interpretation,
                rope=rope,
                progress=_stage(progress, "influence"),
            )
            tell(
                f"influence: {infl.pareto_k.size} data sets, {infl.n_refits} refitted, in "
                f"{time.perf_counter() - start:.1f} s"
            )
            out.append(rs.influence_section(infl))
    ranking_models = []
    if "plackett-luce" in methods:
        start = time.perf_counter()
        options = _ranking_options(data, hdi, sampler)
        stage = _stage(progress, "Plackett-Luce")
        # the fit start_methods started with these very options, or else one now
        taken = started.take(options, stage) if started is not None else None
        pl = taken or ranking_model(data, progress=stage, **options)
        tell(f"Plackett-Luce: fitted in {time.perf_counter() - start:.1f} s")
        ranking_models.append(pl)
    if "mallows" in methods:
        start = time.perf_counter()
        mallows = ranking_model(
            data,
            **layout,
            model="mallows",
            hdi=hdi,
            # numpy, not Stan; its own iteration defaults unless the fit was given others
            **{k: v for k, v in _methods_sampler(s).items() if k != "engine" and v is not None},
            progress=_stage(progress, "Mallows"),
        )
        tell(f"Mallows: sampled in {time.perf_counter() - start:.1f} s")
        ranking_models.append(mallows)
    if ranking_models:
        out.append(
            rs.ranking_model_section(
                ranking_models, result, interpretation=interpretation, rope=rope
            )
        )
    pairs = None
    if "hierarchical" in methods:
        from ...baselines import hierarchical_pairs

        start = time.perf_counter()
        n_alg = len(result.algorithms)
        if progress is not None:
            progress(f"hierarchical t-test: {n_alg * (n_alg - 1) // 2} pairs", math.nan)
        # the test's own iteration defaults (4 x 500 + 500 give ESS >= 400) unless the fit
        # was given others
        from ... import engines

        defaults = dict(zip(SAMPLER_DEFAULTS, engines.iterations(s["engine"])))
        iters = {k: s[k] for k in SAMPLER_DEFAULTS if s[k] != defaults[k]}
        pairs = hierarchical_pairs(
            data,
            **layout,
            rho=rho,
            chains=s["chains"],
            seed=s["seed"],
            **iters,
            progress=_stage(progress, "hierarchical t-test"),
        )
        tell(f"hierarchical t-test: done in {time.perf_counter() - start:.1f} s")
    baselines = [m for m in _BASELINES if m in methods]
    if pairs is None and not baselines:
        return out
    from ...baselines import agreement

    start = time.perf_counter()
    # every baseline from one call: the same data sets, seed and BBT decisions
    agree = agreement(
        data,
        result,
        **layout,
        rope=rope,
        hdi=hdi,
        interpretation=interpretation,
        seed=s["seed"],
        hierarchical=pairs,
    )
    if pairs is not None:
        out.append(rs.pairwise_section(agree))
    if baselines:
        from ...baselines._common import dataset_means
        from . import _baselines as rb

        for name in baselines:
            if name == "friedman":
                means = dataset_means(data, sd=None, **layout).subset(result.algorithms)
                out.append(rb.friedman_section(agree, means))
            else:
                out.append(rb.bayesian_test_section(agree, name))
        tell(f"{', '.join(baselines)}: done in {time.perf_counter() - start:.1f} s")
    return out


def _results_of(result: BBTResult, data: pd.DataFrame | TidyResults | None) -> TidyResults | None:
    """The results the other methods read, read once: ``data`` when given (a table read with
    the fit's own layout settings), else the fit's own results as it read them (``None`` for
    a fit of a ready win table)."""
    if data is None:
        return result.tidy
    layout: dict[str, Any] = {k: result.settings.get(k) for k in _LAYOUT}
    return as_tidy(data, **layout)


def write_metrics(
    compared: MetricsResult,
    path: str | Path,
    *,
    rope: Sequence[float] = DEFAULT_ROPE,
    hdi: float = DEFAULT_HDI,
    interpretation: RuleChoice = DEFAULT_INTERPRETATION,
    control: str | None = None,
    title: str | None = None,
    provenance: Mapping[str, str] | None = None,
    highlight: str | Sequence[str] | None = None,
) -> Path:
    """The report of several metrics (:func:`bbt_widget.compare_metrics`): the title names the
    Pareto set, the body is the first metric's fit, then a section with the dominance across
    metrics (summary, relations, rankings side by side) and a section per further metric.

    ``highlight`` draws these algorithms in their own colour in the body's critical-difference
    diagram, as in the report of one metric.

    Raises
    ------
    ValueError
        When the first metric's fit failed (there is no body to write).
    """
    from . import _sections as rs
    from ._render import write_report
    from ._scores import scores_section

    first = compared.metrics[0]
    if first not in compared.results:
        raise ValueError(
            f"the fit of the first metric {first!r} failed ({compared.errors.get(first)}); "
            "put a metric whose fit succeeded first"
        )
    rule = compared.rule(interpretation)
    rope = (float(rope[0]), float(rope[1]))
    front = compared.pareto(rule, rope, hdi)
    shown = ", ".join(front[:5]) + (f" and {len(front) - 5} more" if len(front) > 5 else "")
    sections = [rs.metrics_section(compared, rule, rope, hdi)]
    for k, m in enumerate(compared.metrics):
        if k > 0 and m in compared.results:  # each metric's section, then its scores
            res = compared.results[m]
            sections.append(rs.metric_section(m, k, res, rule, rope, hdi))
            summary = res.summary(rope=rope, hdi=hdi)
            order = list(res.ranking(hdi=hdi)["algorithm"])
            scores = scores_section(
                res, summary, order, rule=rule, rope=rope, hdi=hdi, prefix=f"metric-{k}-"
            )
            sections += [scores] if scores is not None else []
    if compared.seed is not None:  # the user's seed, not the first metric's spawned one
        provenance = {**(provenance or {}), "seed": _metrics_seed(compared)}
    if compared.groups:
        from ._groups import metrics_group_sections

        sections[1:1] = metrics_group_sections(compared, rule, rope, hdi)
    return write_report(
        compared.results[first],
        path,
        rope=rope,
        hdi=hdi,
        interpretation=interpretation,
        control=control,
        title=title
        or f"Bayesian Bradley-Terry comparison on {', '.join(compared.metrics)}: Pareto set "
        f"{shown} ({rule} rule)",
        provenance=provenance,
        sections=sections,
        highlight=highlight,
    )


def _metrics_seed(compared: MetricsResult) -> str:
    """The user's seed of several metrics' fits, and the seed each metric's fit drew from
    it."""
    from ...lab.batch import spawn_seeds

    n = len(compared.metrics)
    each = ", ".join(f"{m} {s}" for m, s in zip(compared.metrics, spawn_seeds(compared.seed, n)))
    return (
        f"{compared.seed} (metric k of the {n} fitted with numpy.random.SeedSequence("
        f"{compared.seed}).spawn({n})[k]: {each})"
    )


def write(
    result_or_data: BBTResult | pd.DataFrame,
    path: str | Path,
    *,
    data: pd.DataFrame | None = None,
    methods: str | Sequence[str] | None = None,
    robustness: bool = False,
    rho: float | None = None,
    rope: Sequence[float] = DEFAULT_ROPE,
    hdi: float = DEFAULT_HDI,
    interpretation: RuleChoice = DEFAULT_INTERPRETATION,
    control: str | None = None,
    title: str = DEFAULT_TITLE,
    provenance: Mapping[str, str] | None = None,
    progress: ProgressCallback | None = None,
    log: Callable[[str], None] | None = None,
    highlight: str | Sequence[str] | None = None,
    more_data: str | Sequence[int] | None = None,
    **fit_options: Any,
) -> Path:
    """Write the report ``bbt-widget report`` writes: the same sections for the same data,
    options and seed. The format follows the suffix (``.html``, ``.md``, ``.tex``).

    Parameters
    ----------
    result_or_data
        A fit (:func:`bbt_widget.fit`), or results in any layout ``fit`` accepts: they are
        fitted first with ``fit_options``.
    path
        The report file; ``.md`` and ``.tex`` reports write their figures beside it, and
        every report its tables as CSV in ``<stem>_<format>_tables/`` (``r.html``:
        ``r_html_tables/``).
    data
        With a fit: the results it was fitted on, for the other methods and the robustness
        sections (read with the fit's own ``dataset``, ``algorithm``, ... settings). Without
        them those sections read the fit's tidy results.
    methods
        Other methods beside BBT, a list or a comma-separated string of
        :data:`OTHER_METHODS`, added to the defaults (as the command line): in every format,
        Plackett-Luce for data with folds, and the hierarchical t-test when ``rho`` is given
        and the data are small (:func:`check_methods`). With ``"none"`` among them the
        defaults are left out: ``"none"`` alone for BBT alone, ``"none,friedman"`` for
        Friedman alone.
    robustness
        Add the sweep over the analysis choices and the influence of each data set.
    rho
        For the hierarchical t-test: the correlation of fold results, 1/k for k-fold
        cross-validation.
    rope, hdi, control, title, provenance, highlight
        As for :func:`bbt_widget.outputs.report_render.write_report` (``highlight``: the
        algorithms drawn in their own colour in the critical-difference diagram).
    interpretation
        ``"auto"`` (strong with more than 10 algorithms, weak otherwise), ``"weak"`` or
        ``"strong"``; the report says which rule it follows and why.
    progress, log
        Progress of the fits (``progress(stage, fraction)``) and a line per finished step.
    more_data
        Add the "More data sets" section: for the pairs with no claim, the probability that
        this many more data sets (e.g. ``(50, 100)`` or ``"50,100"``) would decide them
        (:meth:`BBTResult.more_data`). Default: no such section.
    **fit_options
        With data: keywords of :func:`bbt_widget.fit` (``dataset``, ``seed``, ...).

    Returns
    -------
    pathlib.Path
        The report written.

    Raises
    ------
    ValueError
        Bad options, checked against the data before any fit.
    OutputConflictError
        A symbolic link where the report or one of its folders goes, or a figures or tables
        folder holding files no earlier report wrote (checked before any fit; an
        ``OSError`` and a ``ValueError``).
    """
    from ...core.groups import results_only
    from ...core.options import resolve_interpretation
    from ...core.result import BBTResult as _Result
    from ...fitting import FIT_KEYWORDS, fit

    _check_keywords(fit_options, FIT_KEYWORDS)
    if more_data is not None:  # checked before any fit
        from ._more_data import parse_more_data

        more_data = parse_more_data(more_data)
        if fit_options.get("ties") == "davidson" or fit_options.get("group") is not None:
            raise ValueError(
                "more_data forecasts the plain Bradley-Terry model: leave it out with "
                "ties='davidson' or group="
            )
    problem = missing_folder(path)
    if problem is not None:  # before any fit: nothing is computed for a report not written
        raise ValueError(f"path {str(path)!r}: {problem}")
    check_report_paths(path)
    if isinstance(result_or_data, _Result):
        if fit_options:
            raise ValueError(
                f"{', '.join(sorted(fit_options))} are options of the fit; "
                "result_or_data is already a fit: pass the results instead to fit them here"
            )
        result = result_or_data
        _check_highlight(highlight, result.algorithms)
    else:
        if data is not None:
            raise ValueError(
                "data= is for a fit given as result_or_data; these are results already"
            )
        given = result_or_data
        # the results without the group column (in wide form it would read as an algorithm)
        data = (
            given if fit_options.get("group") is None else results_only(given, fit_options["group"])
        )
        layout: dict[str, Any] = {k: fit_options.get(k) for k in _LAYOUT}
        layout["lower_is_better"] = bool(layout["lower_is_better"])
        resolve_interpretation(interpretation, 2)  # checked before the fit
        # read once: the checks, the fit and every other method take these very results
        tidy = as_tidy(data, **layout, sd=fit_options.get("sd"))
        chosen = check_methods(
            tidy, layout, path=path, methods=methods, robustness=robustness, rho=rho
        )
        if highlight is not None:  # the names, checked before the fit
            _check_highlight(highlight, tidy.algorithms)
        started = start_methods(tidy, methods=chosen, hdi=hdi, **_fit_sampler(fit_options))
        # the group model reads its groups from the table's group column
        fitted = tidy if fit_options.get("group") is None else given
        options = fit_options if fitted is given else _without_layout(fit_options)
        result = fit(fitted, progress=progress, **options)
        with keeping_posterior(result, path):
            return report_of_fit(
                result, path, data=tidy, methods=methods, robustness=robustness, rho=rho,
                rope=rope, hdi=hdi, interpretation=interpretation, control=control, title=title,
                provenance=provenance, progress=progress, log=log, highlight=highlight,
                started=started, more_data=more_data,
            )  # fmt: skip
    return report_of_fit(
        result, path, data=data, methods=methods, robustness=robustness, rho=rho, rope=rope,
        hdi=hdi, interpretation=interpretation, control=control, title=title,
        provenance=provenance, progress=progress, log=log, highlight=highlight,
        more_data=more_data,
    )  # fmt: skip


def _without_layout(fit_options: Mapping[str, Any]) -> dict[str, Any]:
    """The fit's keywords but those that say how to read the results (they were read)."""
    from ...core.data import LAYOUT_KEYS

    return {k: v for k, v in fit_options.items() if k not in LAYOUT_KEYS}


@contextlib.contextmanager
def keeping_posterior(result: BBTResult, path: str | Path) -> Iterator[None]:
    """Run what follows a fit (its report at ``path``): whatever fails there, the fit, which
    may have taken minutes, is kept: its draws are saved (:func:`keep_posterior`) and the
    error carries a note saying where (printed with it; Python 3.10 has no notes)."""
    try:
        yield
    except Exception as err:
        # a file error there (a full disk, no permission): not beside the report, which
        # must be left as it was
        note = keep_posterior(result, path, beside=not isinstance(err, OSError))
        if hasattr(err, "add_note"):
            err.add_note(note)
        raise


def keep_posterior(result: BBTResult, path: str | Path, *, beside: bool = True) -> str:
    """Save the posterior draws of ``result`` as ``<stem>_posterior.npz`` beside the report
    ``path`` (unless not ``beside``, or it cannot be written there: then in the temporary
    folder), written whole or not at all, and say where, for a report that failed after its
    fit."""
    import tempfile

    from .._atomic import atomic_path

    arrays = {name: np.asarray(v) for name, v in result.draws.params.items()}
    arrays["algorithms"] = np.asarray(result.algorithms, dtype=str)
    target = Path(path)
    folders = [target.parent] if beside else []
    for folder in [*folders, Path(tempfile.gettempdir())]:
        saved = folder / f"{target.stem}_posterior.npz"
        try:
            with atomic_path(saved) as tmp, open(tmp, "wb") as file:
                np.savez_compressed(file, **arrays)  # type: ignore[arg-type]
        except OSError:
            continue
        return (
            f"the fit's posterior draws are saved in {saved} (numpy.load: "
            f"{', '.join(arrays)}; each (chains, draws, ...))"
        )
    return "the fit's posterior draws could not be saved (no folder could be written)"


def report_of_fit(
    result: BBTResult,
    path: str | Path,
    *,
    data: pd.DataFrame | TidyResults | None,
    methods: str | Sequence[str] | None,
    robustness: bool,
    rho: float | None,
    rope: Sequence[float],
    hdi: float,
    interpretation: RuleChoice,
    control: str | None,
    title: str = DEFAULT_TITLE,
    provenance: Mapping[str, str] | None,
    progress: ProgressCallback | None,
    log: Callable[[str], None] | None,
    highlight: str | Sequence[str] | None,
    started: SideFit | None = None,
    more_data: Sequence[int] | None = None,
) -> Path:
    """The report of a fit: what :func:`write` does once it has one (its keywords), with
    the side fit :func:`start_methods` started before the fit (``started``), if any."""
    from ...core.group_result import GroupedBBTResult
    from ...core.options import resolve_interpretation
    from ._render import ChartsAhead, start_charts, write_report

    results = _results_of(result, data)
    rule = resolve_interpretation(interpretation, len(result.algorithms)).rule
    rope = (float(rope[0]), float(rope[1]))
    ahead: ChartsAhead | None = None
    if results is None:
        chosen = methods_from(methods) or []
        if chosen or robustness:
            raise ValueError(
                "the other methods and robustness need the results, not a win table; "
                "pass data= or leave methods and robustness out"
            )
        sections: list[Section] = []
    else:
        chosen = check_methods(
            results, {}, path=path, methods=methods, robustness=robustness, rho=rho
        )
        if chosen or robustness:  # the charts every report has render while those run
            ahead = start_charts(
                result,
                path,
                rope=rope,
                hdi=hdi,
                interpretation=interpretation,
                control=control,
                highlight=highlight,
            )
        try:
            sections = optional_sections(
                result,
                results,
                methods=chosen,
                robustness=robustness,
                rho=rho,
                rope=rope,
                hdi=hdi,
                interpretation=rule,
                progress=progress,
                log=log,
                started=started,
            )
        except BaseException:
            if ahead is not None:  # no report: its renderer ends now
                ahead.batches.close()
            raise
    if isinstance(result, GroupedBBTResult):
        from ._groups import group_section

        sections.insert(0, group_section(result, rule, rope, hdi))
    if more_data is not None:
        from ._more_data import more_data_section

        sections.append(more_data_section(result, more_data, rule, rope))
    if progress is not None:
        progress(f"writing {Path(path).name}", math.nan)
    return write_report(
        result,
        path,
        rope=rope,
        hdi=hdi,
        interpretation=interpretation,
        control=control,
        title=title,
        provenance=provenance,
        sections=sections,
        highlight=highlight,
        charts_ahead=ahead,
    )


def _methods_sampler(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The sampler settings of the sweep and the other methods from the fit's: its seed and
    chains; its engine, but ``"auto"`` for the numpy engine (the sweep's Davidson settings
    need Stan); its iterations where they are not its engine's defaults (else None: each
    fit's engine's, each method's own)."""
    from ... import engines

    engine = settings["engine"]
    defaults = dict(zip(SAMPLER_DEFAULTS, engines.iterations(engine)))
    iters = {k: settings[k] if settings[k] != defaults[k] else None for k in SAMPLER_DEFAULTS}
    return {
        "engine": "auto" if engine == "numpy" else engine,
        "chains": settings["chains"],
        "seed": settings["seed"],
        **iters,
    }


def _fit_sampler(fit_options: Mapping[str, Any]) -> dict[str, Any]:
    """The sampler settings :func:`bbt_widget.fit` will record given ``fit_options``."""
    from ...core.options import DEFAULT_CHAINS
    from ...core.validation import DEFAULT_SEED

    defaults = {"engine": "auto", "chains": DEFAULT_CHAINS, "seed": DEFAULT_SEED}
    return {k: fit_options.get(k, {**defaults, **SAMPLER_DEFAULTS}[k]) for k in _SAMPLER}


def _check_keywords(fit_options: Mapping[str, Any], fit_keywords: frozenset[str]) -> None:
    """Refuse a keyword that is neither :func:`write`'s nor the fit's (``fit_keywords``),
    before anything runs: passed on to ``fit`` it failed as "fit() got an unexpected keyword
    argument", after the other methods had started."""
    params = inspect.signature(write).parameters.items()
    own = {n for n, p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}
    of_fit = fit_keywords - own  # progress is the report's, passed on to the fit
    unknown = sorted(set(fit_options) - of_fit)
    if unknown:
        raise TypeError(
            f"report.write() got an unexpected keyword {unknown[0]!r}; its keywords are "
            f"{', '.join(sorted(own))}, and with results, the fit's: {', '.join(sorted(of_fit))}"
        )


def _check_highlight(highlight: str | Sequence[str] | None, algorithms: Sequence[str]) -> None:
    from ...core.validation import check_algorithms

    if highlight is not None:
        check_algorithms(highlight, algorithms, "highlight")
