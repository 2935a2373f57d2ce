"""The fit's entry points: :func:`fit` (NUTS, or the numpy engine) and :func:`fit_laplace`
(the quick approximation), and the groups of their keywords that callers pass on."""

from __future__ import annotations

import inspect
import threading
from typing import Any

import pandas as pd

from .. import engines
from ..core import groups
from ..core.draws import ModelName, ProgressCallback, SamplerSettings
from ..core.options import (
    DEFAULT_ADAPT_DELTA,
    DEFAULT_CHAINS,
    DEFAULT_DRAWS,
    DEFAULT_ENGINE,
    DEFAULT_HYPERPRIOR,
    DEFAULT_MAX_TREEDEPTH,
    DEFAULT_TIES,
    DrawsMode,
    EngineChoice,
    HyperpriorName,
    TiePolicy,
)
from ..core.result import BBTResult
from ..core.run_context import RunContext
from ..core.settings import LAYOUT_KEYS, CountingSettings
from ..core.tidy import TidyResults
from ..core.validation import DEFAULT_SEED, check_count
from .prepared import GROUP_LAPLACE_REFUSAL, prepare_fit


def fit(
    data: pd.DataFrame | TidyResults,
    *,
    dataset: str | None = None,
    algorithm: str | None = None,
    fold: str | None = None,
    score: str | None = None,
    sd: pd.DataFrame | None = None,
    lower_is_better: bool = False,
    d_min: float | None = None,
    paired: bool = True,
    ties: TiePolicy | None = DEFAULT_TIES,
    tie_threshold: float | None = None,
    hyperprior: HyperpriorName = DEFAULT_HYPERPRIOR,
    prior_scale: float | None = None,
    engine: EngineChoice = DEFAULT_ENGINE,
    chains: int = DEFAULT_CHAINS,
    iter_warmup: int | None = None,
    iter_sampling: int | None = None,
    draws: DrawsMode = DEFAULT_DRAWS,
    seed: int | None = DEFAULT_SEED,
    adapt_delta: float = DEFAULT_ADAPT_DELTA,
    max_treedepth: int = DEFAULT_MAX_TREEDEPTH,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    group: groups.GroupSpec | None = None,
) -> BBTResult:
    """Fit the Bayesian Bradley-Terry model (paper Eq. 2, or Davidson's Eq. 7 for ties).

    Parameters
    ----------
    data
        Results in any layout :func:`bbt_widget.win_table` accepts (a table, or the
        :class:`~bbt_widget.core.tidy.TidyResults` that :func:`bbt_widget.tidy_results` read
        from it), or a ready win table (a DataFrame with columns ``alg1, alg2, win1, win2``
        and optionally ``ties``, e.g. counts published elsewhere).
    dataset, algorithm, fold, score, sd, lower_is_better, d_min, paired
        How to read the results and count wins; see :func:`bbt_widget.win_table`.
    ties
        ``"spread"`` (default, the paper's), ``"add"``, ``"forget"`` or ``"davidson"``
        (fits the Davidson model, which keeps the ties).
    tie_threshold
        In score units: on a data set, two mean scores (over the folds) that differ by no
        more than it are a tie before any local ROPE (a tie under either rule is a tie),
        e.g. 0.005 for "differences below half a point of accuracy are ties". ``None``
        (default) or 0 counts every difference. Recorded in ``result.settings``.
    hyperprior, prior_scale
        Prior on the spread sigma of the abilities: ``"lognormal"`` (default), ``"cauchy"``
        (half-Cauchy) or ``"normal"`` (half-normal) (paper Appendix A). ``prior_scale=None``
        (default) takes the family's default scale from Appendix A: 0.5 for lognormal, 1.0 for
        half-Cauchy, 3.0 for half-normal (``bbt_widget.core.options.HYPERPRIOR_SCALES``); the scale
        used is recorded in ``result.settings["prior_scale"]``.
    engine
        ``"auto"`` (default: the numpy engine, exact samplers that need no compiler, for every
        model), ``"numpy"``, ``"cmdstanpy"`` or ``"pystan"``. PyStan is the ``stan`` extra
        (``pip install "bbt-widget[stan]"``) and needs a C++ compiler.
    chains, iter_warmup, iter_sampling, seed
        Sampler settings. ``iter_warmup`` and ``iter_sampling`` (warm-up and kept iterations
        per chain) default to the engine's: 100 and 1000 on the numpy engine (its Gibbs
        sampler has nothing to adapt), Stan's 1000 and 1000 on the others. The default seed
        (``bbt_widget.DEFAULT_SEED``, 1) makes a rerun give
        the same numbers; ``seed=None`` draws a fresh one (recorded in ``result.settings``).
    draws
        ``"auto"`` (default): after the first ``chains * iter_sampling`` draws, more chains
        (seeded from ``seed``) until no claim of either rule lies within 3 Monte Carlo
        standard errors of its threshold, or the claims still open could not settle within
        4 times the first round's draws (:mod:`bbt_widget.core.settling`); a fit whose
        claims are settled draws nothing more. ``"fixed"``: exactly the first round. Claims
        left unsettled are "no claim" in ``summary()`` and named by ``result.unsettled()``.
        The group model (``group=``) keeps its first round.
    adapt_delta, max_treedepth
        NUTS settings (Stan's defaults 0.8 and 10), recorded in ``result.settings``. Raise
        ``adapt_delta`` (e.g. 0.95) when the diagnostics report divergent transitions, and
        ``max_treedepth`` (e.g. 12) when transitions hit the maximum tree depth.
    progress
        Called as ``progress(stage, fraction)`` while compiling and sampling.
    cancel
        Setting this event stops the fit (raises ``FitCancelled``).
    group
        Data sets in groups (families): a column of the results giving each data set's
        group, or a dict data set -> group. Fits the group model (``stan/bbt_groups.stan``:
        group abilities ``beta[g, i] ~ Normal(beta[i], tau)``) and returns a
        :class:`~bbt_widget.core.group_result.GroupedBBTResult`, whose ``summary()`` is of the
        pooled abilities and ``group_summary()``, ``group_ranking()`` and ``group_claims()``
        of the groups'. Not with ``ties="davidson"`` or a ready win table.

    Returns
    -------
    BBTResult
        With ``summary()``, ``ranking()``, ``ppc_table()``, ``diagnostics()``, ``waic()``,
        ``loo()``, ``idata`` and the fitted ``win_table``. A :class:`DiagnosticsWarning` is
        issued when the diagnostics fail, a :class:`DisconnectedWarning` when some groups of
        algorithms never met (``result.components``).

    Raises
    ------
    ValueError
        Bad data or settings, or a win table with no games (nothing to fit).
    """
    counting = CountingSettings(ties, d_min, paired, tie_threshold)
    model: ModelName = "davidson" if counting.ties == "davidson" else "bbt"
    if group is not None:
        model = "bbt_groups"
    engine = engines.resolve_engine(engine, model)
    iter_warmup, iter_sampling = engines.iterations(engine, iter_warmup, iter_sampling)
    sampler = SamplerSettings(
        chains=chains,
        iter_warmup=iter_warmup,
        iter_sampling=iter_sampling,
        adapt_delta=adapt_delta,
        max_treedepth=max_treedepth,
        seed=seed,
    )
    job = prepare_fit(
        data,
        dataset=dataset,
        algorithm=algorithm,
        fold=fold,
        score=score,
        sd=sd,
        lower_is_better=lower_is_better,
        d_min=d_min,
        paired=paired,
        ties=ties,
        tie_threshold=tie_threshold,
        hyperprior=hyperprior,
        prior_scale=prior_scale,
        engine=engine,
        seed=seed,
        size=(sampler.chains, sampler.iter_sampling),
        group=group,
    )
    job.warn(stacklevel=2)
    return job.sample(
        chains=sampler.chains,
        iter_warmup=sampler.iter_warmup,
        iter_sampling=sampler.iter_sampling,
        adapt_delta=sampler.adapt_delta,
        max_treedepth=sampler.max_treedepth,
        draws=draws,
        context=RunContext(progress, cancel),
        stacklevel=2,
    )


#: The keywords :func:`fit` takes, for the callers that pass theirs on (``bbt.report.write``)
#: and check them first.
FIT_KEYWORDS = frozenset(inspect.signature(fit).parameters) - {"data"}
#: ``fit``'s sampler settings: what a Laplace approximation of the same fit ignores.
SAMPLER_SETTINGS = (
    "chains",
    "iter_warmup",
    "iter_sampling",
    "draws",
    "adapt_delta",
    "max_treedepth",
)
#: The settings of how results are read (keys of a fit's ``settings``; ``sd`` is whether
#: standard deviations were given): :meth:`PreparedFit.recount` keeps them.
LAYOUT_SETTINGS = LAYOUT_KEYS
#: The settings of how the wins are counted from the results read (:meth:`PreparedFit.recount`).
COUNT_SETTINGS = ("d_min", "paired", "ties", "tie_threshold")
#: The settings of the hyper-prior only, which touch neither the data nor the wins
#: (:meth:`PreparedFit.with_prior`).
PRIOR_SETTINGS = ("hyperprior", "prior_scale")


def fit_laplace(
    data: pd.DataFrame,
    *,
    draws: int = 1000,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    **settings: Any,
) -> BBTResult:
    """The Laplace approximation of the fit that ``fit(data, **settings)`` runs.

    The same data, win table, model and checks as :func:`fit`; instead of NUTS, ``draws``
    draws from the normal approximation at the posterior mode (:func:`bbt_widget.engines.
    laplace`; a Stan engine's), in a fraction of the time. The widget's previews show the
    numpy engine's approximation instead (``prepare_fit(...).laplace(engine="numpy")``).
    Sampler settings in ``settings`` (chains, iterations, adapt_delta, max_treedepth) are
    accepted and ignored. The result's ``settings["method"]`` is ``"laplace"`` and its
    ``diagnostics()`` has no sampler to judge (see :meth:`BBTResult.diagnostics`).

    Raises
    ------
    ValueError
        As :func:`fit` does; and for ``group=``, before the results are read: the group
        model has no faithful Laplace approximation (:data:`GROUP_LAPLACE_REFUSAL` says why).
    """
    if settings.get("group") is not None:
        raise ValueError(GROUP_LAPLACE_REFUSAL)
    for ignored in SAMPLER_SETTINGS:
        settings.pop(ignored, None)
    draws = check_count(draws, "draws")
    job = prepare_fit(data, ties=settings.pop("ties", DEFAULT_TIES), size=(1, draws), **settings)
    job.warn(stacklevel=2)
    return job.laplace(draws=draws, context=RunContext(progress, cancel))
