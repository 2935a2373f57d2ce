"""The hierarchical correlated t-test of every pair, run through the batch layer.

One fit per pair (:func:`bbt_widget.baselines.hierarchical`), run as the batch layer
runs sweeps (:func:`bbt_widget.fitting.batch.run_batch`): several fits at once on the local
cores or one Dask task per pair, with one progress bar and cancellation. Each pair gets its
own seed from ``SeedSequence(seed).spawn(n_pairs)``, so the numbers do not depend on the
executor or on the number of workers.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..core.data import TidyResults
from ..core.draws import ProgressCallback
from ..core.options import DEFAULT_CHAINS, DEFAULT_DRAWS, TTEST_HDI, DrawsMode
from ..core.posterior import ordered_pairs
from ..core.run_context import RunContext
from ..core.tidy import Layout, Unpack
from ..core.validation import DEFAULT_SEED, check_hdi
from ..core.wintable import snap_ties
from ..fitting.batch import run_batch
from ._common import Means, TableSummary, pair_frame
from ._cv import FoldDifferences, check_rope_width, fold_results, pair_differences
from ._hierarchical import (
    DEFAULT_ITER,
    DEFAULT_NU_PRIOR,
    QUADRATURE_WARMUP,
    HierarchicalResult,
    check_enough,
    check_nu_prior,
    fit_pair,
    sampler_settings,
)
from ._sizing import check_hierarchical_pairs_size

if TYPE_CHECKING:  # typing.Unpack is Python 3.11; the checker knows it on 3.10 too
    from ..core.tidy import LayoutKeywords

#: Draws a pair's result keeps in :attr:`HierarchicalPairsResult.fits` (the per-data-set
#: ``mu`` and ``sigma`` draws of 120 pairs would take gigabytes; ``shrinkage`` summarises them).
_KEPT_DRAWS = ("mu0", "sigma0", "nu")
#: The quadrature sampler draws the per-data-set parameters of every 4th kept draw (1000 of
#: 4 x 1000 by default) for ``shrinkage``: enough for its HDIs, at a fifth of the cost.
_LATENT_EVERY = 4


@dataclass(frozen=True)
class HierarchicalPairsResult(TableSummary):
    """Hierarchical correlated t-tests of every pair.

    Attributes
    ----------
    table
        One row per pair, ordered by median as :func:`bayesian_signed_rank` (``"a > b"``: a
        has the higher median): the columns of :attr:`HierarchicalResult.table`, plus
        ``max_rhat``, ``min_ess_bulk``, ``min_ess_tail``, ``divergences`` and
        ``diagnostics_ok`` (R-hat <= 1.01, bulk and tail ESS >= 100 per chain, no divergence,
        no saturated tree depth) of each fit, and ``seconds`` it took.
    fits
        The single-pair results by ``(alg_a, alg_b)``; their ``draws`` keep ``mu0``,
        ``sigma0`` and ``nu`` (the per-data-set draws are summarised in ``shrinkage``).
    medians
        Median of the per-data-set means per algorithm, best first.
    rope
        ROPE half-width on the scores' scale.
    """

    table: pd.DataFrame
    fits: dict[tuple[str, str], HierarchicalResult]
    medians: pd.Series
    rope: float


@dataclass(frozen=True)
class HierarchicalJob:
    """One pair's fit, as the batch layer runs it (a
    :class:`bbt_widget.fitting.batch.BatchJob`)."""

    diffs: FoldDifferences
    rope: float
    hdi: float
    settings: dict[str, Any]
    nu_prior: str = DEFAULT_NU_PRIOR
    meta: dict[str, Any] = field(default_factory=dict)

    def check(self) -> HierarchicalJob:
        """Checked when the job is made (by :func:`hierarchical_pairs`); returns self."""
        return self

    def run(self, seed: int, context: RunContext) -> tuple[HierarchicalResult, list[str]]:
        """Fit the pair; the result keeps only the draws in ``_KEPT_DRAWS``."""
        res = fit_pair(
            self.diffs,
            self.rope,
            self.hdi,
            self.settings | {"seed": seed},
            context,
            self.nu_prior,
            warn=False,
            latent_every=_LATENT_EVERY,
        )
        draws = replace(res.draws, params={k: res.draws.params[k] for k in _KEPT_DRAWS})
        return replace(res, draws=draws), list(res.diagnostics.messages)


def hierarchical_pairs(
    data: pd.DataFrame | TidyResults,
    *,
    algorithms: list[str] | None = None,
    run: str | None = None,
    rope: float = 0.01,
    rho: float | None = None,
    hdi: float = TTEST_HDI,
    nu_prior: str = DEFAULT_NU_PRIOR,
    chains: int = DEFAULT_CHAINS,
    iter_warmup: int = QUADRATURE_WARMUP,
    iter_sampling: int = DEFAULT_ITER,
    draws: DrawsMode = DEFAULT_DRAWS,
    seed: int | None = DEFAULT_SEED,
    executor: Any = None,
    n_jobs: int | None = None,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    **layout: Unpack[LayoutKeywords],
) -> HierarchicalPairsResult:
    """:func:`hierarchical` for every pair of ``algorithms`` (default: all), in one table.

    Pairs are ordered as in :func:`bayesian_signed_rank` (by median, ``"a > b"``), so the
    table lines up with the other baselines and can be passed to :func:`agreement`
    (``hierarchical=``). Every pair is checked before the first fit. Parameters as
    :func:`hierarchical`, and:

    Parameters
    ----------
    seed
        Pair ``k`` is fitted with ``spawn_seeds(seed, n_pairs)[k]``
        (:func:`bbt_widget.fitting.batch.spawn_seeds`), whatever the executor.
    executor, n_jobs
        ``None`` (the local cores, ``n_jobs`` fits at once, default: the number of cores),
        a ``dask.distributed.Client`` or a scheduler address (one task per pair); as
        :func:`bbt_widget.sweep`.
    progress
        ``progress(stage, fraction)``: ``("fitting", f)`` with ``f`` the finished share of
        all pairs.
    cancel
        Setting it stops every running fit and raises
        :class:`~bbt_widget.engines.FitCancelled`.
    **layout
        How to read the results: :class:`~bbt_widget.core.tidy.LayoutKeywords`, as for
        :func:`hierarchical`.

    Raises
    ------
    bbt_widget.core.sizing.FitTooLargeError
        Before any fit, when the pairs' results would not fit in memory (the message names
        ``algorithms=`` and ``iter_sampling``); a run estimated to take minutes gives its
        time and memory beforehand (a :class:`~bbt_widget.core.sizing.LongRunWarning`).
    RuntimeError
        A pair's fit failed (its error is named); diagnostics failures are not errors: they
        are the ``diagnostics_ok`` column.

    Notes
    -----
    The pairs run in threads (the sampler's numpy work releases the GIL). On the shipped
    16 x 132 results (4 folds, ``rho=1/4``) the 120 pairs took 223 s on two cores (3.5 s of
    CPU a pair) and 115 passed the diagnostics (``benchmarks/results/methods.json``).
    """
    asked = Layout.from_keywords(layout)
    rope = check_rope_width(rope)
    hdi = check_hdi(hdi)
    nu_prior = check_nu_prior(nu_prior)
    settings = sampler_settings(chains, iter_warmup, iter_sampling, seed, draws)
    seed = settings.pop("seed")
    medians, pairs, all_diffs = check_pairs(
        data,
        asked,
        algorithms=algorithms,
        run=run,
        rho=rho,
        size=(settings["chains"], settings["iter_sampling"]),
        n_jobs=n_jobs,
        timed=executor is None,
    )
    names = list(medians.index)
    jobs = [HierarchicalJob(d, rope, hdi, settings, nu_prior) for d in all_diffs]
    outcomes = run_batch(
        jobs, seed=seed, executor=executor, n_jobs=n_jobs, context=RunContext(progress, cancel)
    )
    failed = [(names[i], names[j], o.error) for (i, j), o in zip(pairs, outcomes) if not o.ok]
    if failed:
        a, b, error = failed[0]
        raise RuntimeError(
            f"the hierarchical test of {a!r} vs {b!r} failed ({len(failed)} of "
            f"{len(pairs)} pairs failed): {error}"
        )
    fits, rows = {}, []
    for (i, j), outcome in zip(pairs, outcomes):
        res: HierarchicalResult = outcome.value
        fits[(names[i], names[j])] = res
        diag = res.diagnostics
        rows.append(
            res.table.iloc[0].to_dict()
            | {
                "max_rhat": diag.max_rhat,
                "min_ess_bulk": diag.min_ess_bulk,
                "min_ess_tail": diag.min_ess_tail,
                "divergences": diag.divergences,
                "diagnostics_ok": bool(diag.ok),
                "seconds": outcome.seconds,
            }
        )
    table = pd.DataFrame(rows)
    table = pd.concat(
        [pair_frame(names, pairs), table.drop(columns=["pair", "alg_a", "alg_b"])], axis=1
    )
    table["diagnostics_ok"] = table["diagnostics_ok"].astype(bool)
    return HierarchicalPairsResult(table=table, fits=fits, medians=medians, rope=rope)


def check_pairs(
    data: pd.DataFrame | TidyResults,
    layout: Layout,
    *,
    algorithms: list[str] | None = None,
    run: str | None = None,
    rho: float | None = None,
    size: tuple[int, int] | None = None,
    n_jobs: int | None = None,
    timed: bool | None = None,
) -> tuple[pd.Series, list[tuple[int, int]], list[FoldDifferences]]:
    """Every pair :func:`hierarchical_pairs` would fit, checked in milliseconds before any
    (slow) fit, from the results read as ``layout`` says: the medians that order the
    algorithms, the pairs (indices into them) and each pair's fold differences.

    ``size`` (chains, kept draws per chain; default the defaults, 4 x 1000), ``n_jobs`` and
    ``timed`` (whether the time is known, default True: the local cores; not a Dask cluster)
    are for the estimate of the run's time
    and memory, checked before the pairs' differences are gathered (themselves gigabytes for
    100,000 pairs).

    Raises
    ------
    ValueError
        Fewer than 2 algorithms, or a pair with fewer than 2 data sets of 2 or more common
        folds (the message names the pair).
    bbt_widget.core.sizing.FitTooLargeError
        The pairs' results would not fit in memory.
    """
    results = fold_results(data, layout, run=run, rho=rho)
    tidy = results.tidy
    means = Means(snap_ties(tidy.means), tidy.algorithms, tidy.datasets, tidy.lower_is_better)
    if algorithms is not None:
        means = means.subset(algorithms)
    if len(means.algorithms) < 2:
        example = [*means.algorithms, *(a for a in tidy.algorithms if a not in means.algorithms)]
        raise ValueError(
            f"need at least 2 algorithms to compare, got {list(means.algorithms)}; pass "
            f"algorithms as a list of two or more, e.g. algorithms={example[:2]!r}"
        )
    check_hierarchical_pairs_size(
        len(means.algorithms),
        len(means.datasets),
        *(size or (4, DEFAULT_ITER)),
        n_jobs=n_jobs,
        timed=timed is not False,
        stacklevel=3,
    )
    medians = means.medians()
    names = list(medians.index)
    pairs = ordered_pairs(list(range(len(names))))
    all_diffs = [pair_differences(results, names[i], names[j]) for i, j in pairs]
    for diffs in all_diffs:
        check_enough(diffs)
    return medians, pairs, all_diffs
