"""The report's optional sections, one function each: robustness (the sweep and the
influence of each data set), the ranking models, and the hierarchical t-test with the
baselines.

:func:`optional_sections` runs those a :class:`~._request.ReportRequest` asks for on the
results the fit was fitted on; :func:`start_methods` starts the Plackett-Luce fit before the
BBT fit so that the two run side by side.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...core.options import Rule
from ...core.tidy import TidyResults
from ._methods import BASELINES, LAYOUT
from ._request import ReportRequest
from ._side_fits import SideFit

# the sections (Altair) and the methods (SciPy) are imported where they run: the command
# line imports this module before the fit
if TYPE_CHECKING:
    from ...baselines import HierarchicalPairsResult
    from ...core.draws import ProgressCallback
    from ...core.result import BBTResult
    from ._sections import Section

#: The fit's iteration settings left to their defaults (None: the engine's, see
#: ``bbt_widget.engines.iterations``): the hierarchical t-test and the Plackett-Luce fit keep
#: their own iteration defaults unless the fit's were set (``--iter-warmup``...).
SAMPLER_DEFAULTS: dict[str, int | None] = {"iter_warmup": None, "iter_sampling": None}
#: Warm-up iterations per chain of the report's Plackett-Luce fit unless the fit's warm-up
#: differs from :data:`SAMPLER_DEFAULTS` (it keeps the fit's chains, kept draws and seed).
#: Its Gibbs sampler starts each chain from a draw of the prior and forgets it within a few
#: dozen sweeps: 250 gives the same R-hat, ESS and first place as 1000 on the shipped results
#: (``benchmarks/bench_pl_draws.py``, ``benchmarks/results/pl_draws.json``).
RANKING_WARMUP = 250
#: The sampler settings the other methods' fits share with the BBT fit.
SAMPLER = ("engine", "chains", "iter_warmup", "iter_sampling", "seed")


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
    chosen = {k: sampler[k] for k in SAMPLER}
    return chosen | {"iter_warmup": warmup, "iter_sampling": sampling or defaults[1]}


def start_methods(
    data: TidyResults, *, methods: Sequence[str], hdi: float, **sampler: Any
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

    options = _ranking_options(hdi, sampler)
    return SideFit(lambda progress: ranking_model(data, progress=progress, **options), options)


def _ranking_options(hdi: float, sampler: Mapping[str, Any]) -> dict[str, Any]:
    """The keywords of the report's Plackett-Luce fit (:func:`ranking_sampler`; its Gibbs
    sampler has no engine)."""
    options: dict[str, Any] = {"hdi": float(hdi)}
    return options | {k: v for k, v in ranking_sampler(sampler).items() if k != "engine"}


def _stage(progress: ProgressCallback | None, name: str) -> ProgressCallback | None:
    """``progress`` for one step of the report: its stages prefixed with the step's name."""
    if progress is None:
        return None

    def report(stage: str, fraction: float) -> None:
        progress(stage if stage.startswith("compiling") else f"{name}: {stage}", fraction)

    return report


def _since(start: float) -> str:
    """The seconds since ``start`` (``time.perf_counter()``), as a step's log line says them."""
    return f"{time.perf_counter() - start:.1f} s"


def optional_sections(
    result: BBTResult,
    data: TidyResults,
    request: ReportRequest,
    *,
    methods: Sequence[str],
    rule: Rule,
    started: SideFit | None = None,
) -> list[Section]:
    """The report's optional sections: robustness (a sweep over the analysis choices and the
    influence of each data set) and the other ``methods`` (checked by
    :func:`~._methods.check_methods`) on ``data``, the results ``result`` was fitted on, as
    read once for the whole report.

    ``rule`` is the rule the report uses (``"weak"`` or ``"strong"``); the request's
    ``progress`` gets each step's stages, its ``log`` a line when a step is done (what it did,
    how long); ``started``: the side fit :func:`start_methods` started for this report, if
    any.
    """
    out = robustness_sections(result, data, request, rule) if request.robustness else []
    ranking = ranking_models_section(result, data, request, methods, rule, started)
    out += [ranking] if ranking is not None else []
    pairs = hierarchical_pairs(result, data, request) if "hierarchical" in methods else None
    return out + baseline_sections(result, data, request, methods, rule, pairs)


def robustness_sections(
    result: BBTResult, data: TidyResults, request: ReportRequest, rule: Rule
) -> list[Section]:
    """The sweep over the analysis choices, then the influence of each data set (for the
    group model: a note that it is not computed)."""
    from ...core.groups import results_only
    from ...lab.influence import influence
    from ...lab.sweep import default_grid
    from ...lab.sweep import sweep as run_sweep
    from . import _sections as rs
    from ._groups import group_mapping, group_sweep_section, influence_not_computed

    if result.tidy is None:
        raise ValueError(
            "robustness=True refits the fit's own results, and this is a fit of a ready win "
            "table: fit the results (give them as result_or_data) to add robustness"
        )
    s, progress = result.settings, request.progress
    start = time.perf_counter()
    prior = (s["hyperprior"], s["prior_scale"])  # the scale used
    # a fit of the group model is swept as the group model, its groups as fitted
    groups = group_mapping(result)
    grid = {**default_grid(result.tidy, grouped=groups is not None), "prior": [prior]}
    sweep = run_sweep(
        data if groups is None else results_only(data, s["group"]),
        **_layout(data),
        tie_threshold=s.get("tie_threshold"),
        grid=grid,
        rope=request.rope,
        hdi=request.hdi,
        **methods_sampler(s),
        progress=_stage(progress, "sweep"),
        group=groups,
    )
    failed = f" ({sweep.n_failed} failed)" if sweep.n_failed else ""
    request.tell(f"sweep: {len(sweep.settings)} fits in {_since(start)}{failed}")
    if groups is not None:
        # leaving a data set out of the group model changes one group's table and its
        # likelihood, which the influence analysis (of the plain model) does not know
        request.tell("influence: not computed for the group model")
        section = group_sweep_section(rs.sweep_section(sweep, rule), sweep, rule)
        return [section, influence_not_computed()]
    start = time.perf_counter()
    if progress is not None:
        progress("influence: leaving each data set out", math.nan)
    infl = influence(
        result, interpretation=rule, rope=request.rope, progress=_stage(progress, "influence")
    )
    request.tell(
        f"influence: {infl.pareto_k.size} data sets, {infl.n_refits} refitted, in {_since(start)}"
    )
    return [rs.sweep_section(sweep, rule), rs.influence_section(infl)]


def ranking_models_section(
    result: BBTResult,
    data: TidyResults,
    request: ReportRequest,
    methods: Sequence[str],
    rule: Rule,
    started: SideFit | None,
) -> Section | None:
    """The "Ranking models" section of the ranking models among ``methods`` (None if none):
    the Plackett-Luce fit ``started`` before the BBT fit, or one now, and the Mallows model."""
    from ...ranking._plackett_luce import ranking_model
    from . import _sections as rs

    s, models = result.settings, []
    if "plackett-luce" in methods:
        start = time.perf_counter()
        options = _ranking_options(request.hdi, s)
        stage = _stage(request.progress, "Plackett-Luce")
        # the fit start_methods started with these very options, or else one now
        taken = started.take(options, stage) if started is not None else None
        models.append(taken or ranking_model(data, progress=stage, **options))
        request.tell(f"Plackett-Luce: fitted in {_since(start)}")
    if "mallows" in methods:
        start = time.perf_counter()
        # numpy, not Stan; its own iteration defaults unless the fit was given others
        sampler = {k: v for k, v in methods_sampler(s).items() if k != "engine" and v is not None}
        models.append(
            ranking_model(
                data,
                **_layout(data),
                model="mallows",
                hdi=request.hdi,
                **sampler,
                progress=_stage(request.progress, "Mallows"),
            )
        )
        request.tell(f"Mallows: sampled in {_since(start)}")
    if not models:
        return None
    return rs.ranking_model_section(models, result, interpretation=rule, rope=request.rope)


def hierarchical_pairs(
    result: BBTResult, data: TidyResults, request: ReportRequest
) -> HierarchicalPairsResult:
    """The hierarchical t-test of every pair, with its own iteration defaults (4 x 500 + 500
    give ESS >= 400) unless the fit was given others."""
    from ... import engines
    from ...baselines import hierarchical_pairs as run_pairs

    s, start = result.settings, time.perf_counter()
    n_alg = len(result.algorithms)
    if request.progress is not None:
        request.progress(f"hierarchical t-test: {n_alg * (n_alg - 1) // 2} pairs", math.nan)
    defaults = dict(zip(SAMPLER_DEFAULTS, engines.iterations(s["engine"])))
    iters = {k: s[k] for k in SAMPLER_DEFAULTS if s[k] != defaults[k]}
    pairs = run_pairs(
        data,
        **_layout(data),
        rho=request.rho,
        chains=s["chains"],
        seed=s["seed"],
        **iters,
        progress=_stage(request.progress, "hierarchical t-test"),
    )
    request.tell(f"hierarchical t-test: done in {_since(start)}")
    return pairs


def baseline_sections(
    result: BBTResult,
    data: TidyResults,
    request: ReportRequest,
    methods: Sequence[str],
    rule: Rule,
    pairs: HierarchicalPairsResult | None,
) -> list[Section]:
    """The pairwise section of the hierarchical t-test (``pairs``) and a section per baseline
    among ``methods``, all from one agreement: the same data sets, seed and BBT decisions."""
    baselines = [m for m in BASELINES if m in methods]
    if pairs is None and not baselines:
        return []
    from ...baselines import agreement
    from ...baselines._common import dataset_means
    from . import _baselines as rb
    from . import _sections as rs

    start = time.perf_counter()
    agree = agreement(
        data,
        result,
        **_layout(data),
        rope=request.rope,
        hdi=request.hdi,
        interpretation=rule,
        seed=result.settings["seed"],
        hierarchical=pairs,
    )
    out = [rs.pairwise_section(agree)] if pairs is not None else []
    for name in baselines:
        if name == "friedman":
            means = dataset_means(data, sd=None, **_layout(data)).subset(result.algorithms)
            out.append(rb.friedman_section(agree, means))
        else:
            out.append(rb.bayesian_test_section(agree, name))
    if baselines:
        request.tell(f"{', '.join(baselines)}: done in {_since(start)}")
    return out


def _layout(data: TidyResults) -> dict[str, Any]:
    """How the results were read: the methods that take the layout are given that very one."""
    return {k: getattr(data.read_with, k) for k in LAYOUT}


def methods_sampler(settings: Mapping[str, Any]) -> dict[str, Any]:
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
