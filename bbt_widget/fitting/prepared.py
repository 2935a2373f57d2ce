"""A fit's inputs read and checked once (:func:`prepare_fit`), then sampled, settled by
decision, or approximated (:class:`PreparedFit`)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from .. import engines
from ..core import groups, settling
from ..core.audit import Audit, DataWarning, audit_validated
from ..core.draws import Draws, ModelName, SamplerSettings
from ..core.options import (
    DEFAULT_ADAPT_DELTA,
    DEFAULT_CHAINS,
    DEFAULT_DRAWS,
    DEFAULT_ENGINE,
    DEFAULT_HYPERPRIOR,
    DEFAULT_MAX_TREEDEPTH,
    HYPERPRIORS,
    SETTLE_MEMORY,
    DrawsMode,
    EngineChoice,
    HyperpriorName,
    TiePolicy,
)
from ..core.precision import DEFAULT_Z
from ..core.result import BBTResult, disconnected_message
from ..core.run_context import QUIET, RunContext
from ..core.settings import CountingSettings, FitSettings, PriorSettings
from ..core.sizing import check_fit_size, estimate_fit_bytes, estimate_fit_seconds, warn_long_run
from ..core.tidy import Layout, TidyResults
from ..core.validation import DEFAULT_SEED, check_count, check_group_column, check_seed
from ..core.wintable import apply_ties, comparison_components, count_wins, raw_counts


class DiagnosticsWarning(UserWarning):
    """The sampler's convergence diagnostics failed; the message says which and what to do."""


class DisconnectedWarning(UserWarning):
    """Some algorithms never met, even through others: only the prior relates their
    abilities, so ``summary()`` marks those pairs ``"not compared"``.

    Filter it like any warning, e.g.
    ``warnings.simplefilter("ignore", bbt_widget.DisconnectedWarning)``.
    """


#: What ``fit_laplace`` says for the group model, and what to run instead. Why: the Laplace
#: approximation is built at the joint posterior mode, which misplaces tau. With the pooled
#: abilities centred (the program's choice when there are many games) the mode falls into the
#: funnel of sigma (every pooled ability 0, the group deviations carrying the abilities: sigma
#: 0.02 and tau 1.8 on the PMLB results in 4 families, where NUTS gives 0.77 and 0.25); seen
#: non-centred it lacks the -n log tau of integrating out the n group deviations and puts tau
#: at 1.0, the pooled abilities' sd 3 times NUTS' (21 pooled weak claims of NUTS' 92).
GROUP_LAPLACE_REFUSAL = (
    "there is no Laplace approximation of the group model (group=): its posterior mode "
    "misplaces tau, the spread between groups, so the approximation's intervals and claims "
    "would be wrong. Fit it with bbt.fit(..., group=...) (NUTS); for a quicker look, with "
    "fewer draws (e.g. chains=2, iter_warmup=500, iter_sampling=500)"
)


@dataclass
class PreparedFit:
    """A fit's inputs once read and checked (:func:`prepare_fit`): the model, its Stan data,
    the win table and the settings, ready for :meth:`sample` or :meth:`laplace`.

    The widget prepares its settings once for a preview and the full fit that follows (the
    data read and the wins counted once, not twice at the same moment).
    """

    model: ModelName
    engine: str
    stan_data: dict[str, Any]
    table: pd.DataFrame
    algorithms: list[str]
    fitted: np.ndarray
    tidy: TidyResults | None
    components: list[list[str]]
    audit: Audit
    #: The settings of these inputs (``engine`` and ``sampler`` are set by the fit).
    settings: FitSettings
    #: The data's warnings (message, category), issued by :meth:`warn`, not when prepared:
    #: a preview sharing these inputs must not repeat what its full fit reports.
    warnings: list[tuple[str, type[Warning]]]
    #: Data sets in groups (``fit(..., group=)``): the result is then a ``GroupedBBTResult``,
    #: whose diagnostics also judge tau and the group abilities.
    grouping: groups.Grouping | None = None
    #: The engine asked for (``"auto"``...): counted again under another tie policy, the
    #: inputs may need another engine (Davidson's model is Stan's).
    requested: str = "auto"

    def recount(
        self,
        *,
        d_min: float | None,
        paired: bool,
        ties: TiePolicy | None,
        hyperprior: HyperpriorName,
        prior_scale: float | None,
        size: tuple[int, int | None],
        tie_threshold: float | None = None,
    ) -> PreparedFit:
        """These inputs with the wins counted again under other local-ROPE and tie settings
        (and a prior): the results read and their audit are reused, which the widget does
        while the d_min slider drags (reading and auditing are most of
        :func:`prepare_fit`'s work). Equal to :func:`prepare_fit` with these settings.

        Raises
        ------
        ValueError
            For inputs that came from a ready win table (nothing to count again), and for
            invalid settings, as :func:`prepare_fit` does.
        """
        if self.tidy is None:
            raise ValueError("these inputs are a ready win table: there are no results to count")
        counting = CountingSettings(ties, d_min, paired, tie_threshold)
        _tie_policy(counting)
        prior = PriorSettings(hyperprior, prior_scale)
        raw = count_wins(
            self.tidy,
            d_min=counting.d_min,
            paired=counting.paired,
            tie_threshold=counting.tie_threshold,
        )
        layout = self.settings.layout
        seed = self.settings.seed
        return _assemble(
            raw, self.tidy, self.audit, layout, counting, prior, self.requested, seed, size
        )

    def with_prior(self, hyperprior: HyperpriorName, prior_scale: float | None) -> PreparedFit:
        """These inputs under another hyper-prior on sigma (``prior_scale=None``: the family's
        default scale).

        The prior does not touch the data: the results read, the wins counted and the data's
        checks are those of these inputs, so a widget changing only the prior skips them
        before the chains start. Equal to :func:`prepare_fit` with the new prior.
        """
        prior = PriorSettings(hyperprior, prior_scale)
        stan_data = {**self.stan_data, **_prior_data(prior.family, prior.resolved_scale)}
        return replace(self, stan_data=stan_data, settings=replace(self.settings, prior=prior))

    def warn(self, stacklevel: int = 1) -> None:
        """Issue the data's warnings (missing results, groups that never met, ...);
        ``stacklevel`` as for ``warnings.warn`` called where this is called."""
        for message, category in self.warnings:
            warnings.warn(message, category, stacklevel=stacklevel + 1)

    def sample(
        self,
        *,
        chains: int = DEFAULT_CHAINS,
        iter_warmup: int | None = None,
        iter_sampling: int | None = None,
        adapt_delta: float = DEFAULT_ADAPT_DELTA,
        max_treedepth: int = DEFAULT_MAX_TREEDEPTH,
        draws: DrawsMode = DEFAULT_DRAWS,
        context: RunContext = QUIET,
        stacklevel: int = 1,
    ) -> BBTResult:
        """The full posterior fit (what :func:`fit` returns), with a
        :class:`DiagnosticsWarning` when the diagnostics fail (``stacklevel`` as for
        ``warnings.warn`` called where this is). Iterations left at None are the engine's
        defaults (:func:`bbt_widget.engines.iterations`); ``draws`` as for :func:`fit`;
        ``context`` carries the progress callback and the cancel event (:func:`fit`'s
        ``progress`` and ``cancel``), later rounds told as :data:`.settling.STAGE`."""
        settling.check_draws(draws)
        iter_warmup, iter_sampling = engines.iterations(self.engine, iter_warmup, iter_sampling)
        sampler = SamplerSettings(
            chains=chains,
            iter_warmup=iter_warmup,
            iter_sampling=iter_sampling,
            adapt_delta=adapt_delta,
            max_treedepth=max_treedepth,
            seed=self.settings.seed,
        )
        self._warn_long_run(sampler, stacklevel + 1)
        checked = sampler.as_dict()

        def more(chains: int, seed: int, told: RunContext) -> Draws:
            return engines.sample(
                self.model,
                self.stan_data,
                engine=self.engine,
                **(checked | {"chains": chains, "seed": seed}),
                progress=told.progress,
                cancel=told.cancel,
            )

        first = more(sampler.chains, checked["seed"], context)
        run = {k: checked[k] for k in ("chains", "iter_warmup", "iter_sampling", "seed")}
        run |= {k: checked[k] for k in ("adapt_delta", "max_treedepth")}
        if draws == "fixed" or self.grouping is not None:
            result = self.result(first, run | {"draws": "fixed"})
        else:
            result = settling.settle(
                first,
                lambda drawn, rounds: self.result(
                    drawn,
                    run
                    | {
                        "draws": "auto",
                        "rounds": rounds,
                        "chains_drawn": drawn.params["beta"].shape[0],
                    },
                ),
                lambda chains, seed: more(
                    chains, seed, context.relabelled("sampling", settling.STAGE)
                ),
                per_chain=sampler.iter_sampling,
                seed=int(first.info.get("seed", checked["seed"])),
                budget=self._settle_budget(sampler),
                z=DEFAULT_Z,
            )
        diag = result.diagnostics()
        if not diag.ok:
            warnings.warn(
                "BBT fit diagnostics failed: " + "; ".join(diag.messages),
                DiagnosticsWarning,
                stacklevel=stacklevel + 1,
            )
        return result

    def _settle_budget(self, sampler: SamplerSettings) -> int:
        """The most draws ``draws="auto"`` may keep in all (:func:`.settling.settle_budget`):
        more pairs, more bytes per draw."""
        first = sampler.chains * sampler.iter_sampling
        need = estimate_fit_bytes(
            len(self.algorithms), self.stan_data["n_pairs"], self.model, 1, first
        )
        return settling.settle_budget(first, need / first, SETTLE_MEMORY)

    def _warn_long_run(self, sampler: SamplerSettings, stacklevel: int) -> None:
        """A :class:`~.sizing.LongRunWarning` before a fit (and its summary) estimated to take
        minutes, where its time is known (the numpy engine: :func:`~.sizing.
        estimate_fit_seconds`); ``stacklevel`` as for ``warnings.warn`` called in
        :meth:`sample`."""
        rows, n_groups = self.stan_data["n_pairs"], self.stan_data.get("n_groups", 0)
        n_alg = len(self.algorithms)
        seconds = estimate_fit_seconds(
            self.model,
            self.engine,
            rows,
            sampler.chains,
            sampler.iter_warmup + sampler.iter_sampling,
            n_alg=n_alg,
            iter_sampling=sampler.iter_sampling,
        )
        if seconds is None:
            return
        need = estimate_fit_bytes(
            n_alg, rows, self.model, sampler.chains, sampler.iter_sampling, n_groups=n_groups
        )
        draws = (
            f"{sampler.chains} chains x {sampler.iter_warmup} + {sampler.iter_sampling} iterations"
        )
        if self.grouping is not None:
            what = (
                f"this fit of {n_alg} algorithms in {n_groups} groups ({rows} (group, pair) "
                f"rows, {draws})"
            )
            shrink = (
                "time and memory grow with rows x draws: fewer groups (merge small ones), fewer "
                "algorithms, or fewer draws (iter_sampling, iter_warmup) or chains shrink it"
            )
        else:
            what = f"this fit and its summary of {n_alg} algorithms ({rows} fitted pairs, {draws})"
            shrink = (
                "time grows with pairs x draws (the slower where the Gibbs sampler is needed): "
                "fewer draws (iter_sampling, --iter-sampling) or chains (--chains), "
                "draws='fixed' (no further rounds for claims near a threshold), or fewer "
                "algorithms (a subset, e.g. the strongest ones, or each against a control) "
                "shrink it"
            )
        warn_long_run(seconds[1], need, what, shrink, stacklevel=stacklevel + 1, fastest=seconds[0])

    def laplace(
        self,
        *,
        draws: int = 1000,
        context: RunContext = QUIET,
        engine: str | None = None,
    ) -> BBTResult:
        """The Laplace approximation (what :func:`fit_laplace` returns); ``engine``, the one
        that approximates, is by default the fit's (a Stan engine, for a fit on the numpy
        engine: :func:`bbt_widget.engines.laplace` with ``engine="auto"``); ``context`` as
        for :meth:`sample`.

        Raises
        ------
        ValueError
            For the group model's inputs (:data:`GROUP_LAPLACE_REFUSAL`), before any fit.
        """
        if self.grouping is not None:
            raise ValueError(GROUP_LAPLACE_REFUSAL)
        draws = check_count(draws, "draws")
        if engine is None:
            engine = "auto" if self.engine == "numpy" else self.engine
        approximation = engines.laplace(
            self.model,
            self.stan_data,
            engine=engine,
            draws=draws,
            seed=self.settings.seed,
            progress=context.progress,
            cancel=context.cancel,
        )
        run = {"method": "laplace", "draws": draws, "seed": self.settings.seed}
        return self.result(approximation, run)

    def result(self, draws: Draws, run: Mapping[str, Any]) -> BBTResult:
        """The result of ``draws``; ``run`` holds how they were drawn (sampler settings)."""
        settings = self.settings.fitted(draws.engine, run)
        result = BBTResult(
            draws, self.table, self.algorithms, settings, self.fitted, self.tidy, self.components
        )
        result.audit = self.audit
        if self.model == "bbt" and "method" not in run and "sigma" in draws.params:
            # the plain model's posterior draws: their pairs' conditional expectations sharpen
            # the summaries (computed only for the pairs near a threshold, when asked)
            from ..engines._conditional import PairConditionals

            result.conditional_draws = PairConditionals(
                self.stan_data, draws.params["beta"], draws.params["sigma"]
            )
        return self.grouping.result(result) if self.grouping is not None else result


def prepare_fit(
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
    ties: TiePolicy | None,
    tie_threshold: float | None = None,
    hyperprior: HyperpriorName = DEFAULT_HYPERPRIOR,
    prior_scale: float | None = None,
    engine: EngineChoice = DEFAULT_ENGINE,
    seed: int | None = DEFAULT_SEED,
    size: tuple[int, int | None],
    group: groups.GroupSpec | None = None,
) -> PreparedFit:
    """Check the settings, count the wins and find the data's warnings, as every fit does
    (:func:`fit` runs this, then samples).

    ``data`` and the other keywords as for :func:`fit`; ``size`` is (chains, draws) for the
    memory check. ``group``: data sets in groups, as for
    :func:`fit` (the group model's inputs, each group's wins counted and checked). The
    warnings are issued by :meth:`PreparedFit.warn`.
    """
    layout = Layout(dataset, algorithm, fold, score, sd, lower_is_better)
    counting = CountingSettings(ties, d_min, paired, tie_threshold)
    if group is not None:
        groups.check_group_request(group, counting.ties, data)
        check_group_column(group, dataset=dataset, algorithm=algorithm, fold=fold, score=score)
    job = _prepare(
        data if group is None else groups.results_only(data, group),
        layout,
        counting,
        PriorSettings(hyperprior, prior_scale),
        engine,
        seed,
        size,
    )
    if group is None:
        return job
    read = job.settings.layout["dataset"]  # as the results were read (a TidyResults knows)
    return _grouped(job, data, group, read, paired, (size[0], _draws(job.engine, size[1])))


def _draws(engine: str, iter_sampling: int | None) -> int:
    """Kept draws per chain: ``iter_sampling``, or the engine's default when None."""
    return engines.iterations(engine, None, iter_sampling)[1]


def _grouped(
    job: PreparedFit,
    data: pd.DataFrame | TidyResults,
    group: groups.GroupSpec,
    dataset: str | None,
    paired: bool,
    size: tuple[int, int],
) -> PreparedFit:
    """``job`` (prepared from ``data`` without the group column) as the group model's inputs:
    each group's wins counted with the same settings and checked
    (:func:`~.groups.assign_groups`), and the memory of its (group, pair) rows checked for
    ``size`` (chains, kept draws per chain), before any fit."""
    grouping = groups.assign_groups(
        job.tidy,
        data,
        group,
        dataset=dataset,
        counting={**job.settings, "paired": paired},
    )
    rows = grouping.stan_data
    check_fit_size(
        len(job.algorithms), rows["n_pairs"], "bbt_groups", *size, n_groups=rows["n_groups"]
    )
    return replace(
        job,
        model="bbt_groups",
        stan_data={**job.stan_data, **grouping.stan_data},
        settings=replace(
            job.settings,
            model="bbt_groups",
            extra={"group": grouping.label, "tau_scale": grouping.stan_data["tau_scale"]},
        ),
        grouping=grouping,
    )


def _prepare(
    data: pd.DataFrame | TidyResults,
    layout: Layout,
    counting: CountingSettings,
    prior: PriorSettings,
    engine: str,
    seed: int | None,
    size: tuple[int, int | None],
) -> PreparedFit:
    """:func:`prepare_fit` from settings already checked."""
    _tie_policy(counting)
    seed = check_seed(seed)
    # the engine is checked before the results are read (a fix to name, not a traceback)
    engines.resolve_engine(engine, "davidson" if counting.ties == "davidson" else "bbt")

    raw, tidy = raw_counts(
        data,
        layout,
        d_min=counting.d_min,
        paired=counting.paired,
        tie_threshold=counting.tie_threshold,
    )
    found = audit_validated(tidy) if tidy is not None else Audit()
    read = (tidy.read_with if tidy is not None else layout).record()
    return _assemble(raw, tidy, found, read, counting, prior, engine, seed, size)


def _tie_policy(counting: CountingSettings) -> str:
    """The tie policy of a fit; raw counts (``ties=None``) are for ``win_table`` only."""
    if counting.ties is None:
        raise ValueError(
            "fit needs a tie policy ('spread', 'add', 'forget' or 'davidson'); ties=None "
            "only makes sense for win_table"
        )
    return counting.ties


def _assemble(
    raw: pd.DataFrame,
    tidy: TidyResults | None,
    found: Audit,
    layout: Mapping[str, Any],
    counting: CountingSettings,
    prior: PriorSettings,
    engine: str,
    seed: int | None,
    size: tuple[int, int | None],
) -> PreparedFit:
    """A fit's inputs from its raw counts (checked settings): the tie policy applied, the Stan
    data, the size check and the data's warnings. ``layout``: how the results were read
    (``dataset`` ... ``lower_is_better``, ``sd`` whether one was given); ``engine`` as asked
    for (resolved here for the model); ``size`` (chains, kept draws per chain; None: the
    engine's default)."""
    ties = _tie_policy(counting)
    table = apply_ties(raw, ties)
    algorithms = (
        list(tidy.algorithms)
        if tidy is not None
        else list(pd.unique(np.column_stack([table["alg1"], table["alg2"]]).ravel()))
    )
    model: ModelName = "davidson" if ties == "davidson" else "bbt"
    requested, engine = engine, engines.resolve_engine(engine, model)
    size = (size[0], _draws(engine, size[1]))
    stan_data, fitted = stan_inputs(table, algorithms, model, prior.family, prior.resolved_scale)
    if not fitted.any():
        raise ValueError(_no_games_message(raw, tidy, ties, layout["dataset"]))
    check_fit_size(len(algorithms), stan_data["n_pairs"], model, *size)
    components = comparison_components(raw, algorithms)
    found_warnings: list[tuple[str, type[Warning]]] = []
    if len(components) > 1:
        found_warnings.append((disconnected_message(components), DisconnectedWarning))
    for finding in found.warnings:
        if finding.check != "graph" or len(components) == 1:  # groups: DisconnectedWarning
            found_warnings.append((str(finding), DataWarning))
    settings = FitSettings(dict(layout), counting, prior, model, seed, tidy is None)
    return PreparedFit(
        model,
        engine,
        stan_data,
        table,
        algorithms,
        fitted,
        tidy,
        components,
        found,
        settings,
        found_warnings,
        requested=requested,
    )


def _no_games_message(
    raw: pd.DataFrame, tidy: TidyResults | None, ties: str, dataset: str | None
) -> str:
    """Why a win table has no games to fit, and what to change."""
    if (raw[["win1", "win2", "ties"]].to_numpy() > 0).any():
        return (
            f"every game is a tie and ties={ties!r} drops ties, so there is nothing to fit; "
            "use ties='spread' or 'davidson'"
        )
    if tidy is None:
        return "the win table has no games (every win1, win2 and ties is 0); nothing to fit"
    hint = (
        "; without dataset= every row is its own data set: pass dataset='<column naming the "
        "data sets>'"
        if dataset is None
        else ""
    )
    return (
        "no two algorithms have a result on the same data set, so the win table has no games "
        f"and there is nothing to fit ({len(tidy.datasets)} data sets){hint}"
    )


def _prior_data(hyperprior: str, prior_scale: float) -> dict[str, Any]:
    """The Stan data of a (checked) hyper-prior on sigma: the family's code and its scale."""
    return {"hyperprior": HYPERPRIORS[hyperprior], "prior_scale": float(prior_scale)}


def stan_inputs(
    table: pd.DataFrame,
    algorithms: list[str],
    model: str,
    hyperprior: str,
    prior_scale: float,
) -> tuple[dict[str, Any], np.ndarray]:
    """Stan data for a win table, and the mask of pairs that were fitted.

    Pairs that never met (no wins, losses or counted ties) carry no information and would
    only inflate the PPC coverage, so they are left out of the likelihood.
    """
    idx = {a: k + 1 for k, a in enumerate(algorithms)}  # Stan is 1-based
    n = table["win1"] + table["win2"] + (table["ties"] if model == "davidson" else 0)
    fitted = (n > 0).to_numpy()
    t = table[fitted]
    data: dict[str, Any] = {
        "n_alg": len(algorithms),
        "n_pairs": int(fitted.sum()),
        "i1": [idx[a] for a in t["alg1"]],
        "i2": [idx[a] for a in t["alg2"]],
        "win1": t["win1"].astype(int).tolist(),
        "win2": t["win2"].astype(int).tolist(),
        **_prior_data(hyperprior, prior_scale),
    }
    if model == "davidson":
        data["ties"] = t["ties"].astype(int).tolist()
    return data, fitted
