"""The BBT fits of the batch layer: a win table and model settings (:class:`FitRequest`), or
the results themselves (:class:`ResultsFit`), for sweeps, influence refits and calibration
repeats.

The runner (local cores or Dask, seeds, progress, cancellation) is
:mod:`bbt_widget.fitting.batch`, below every method layer; its names are re-exported here,
the batch layer's documented home for users.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..core.options import (
    DEFAULT_CHAINS,
    DEFAULT_ENGINE,
    DEFAULT_HYPERPRIOR,
    DEFAULT_TIES,
    EngineChoice,
    HyperpriorName,
    TiePolicy,
)
from ..core.result import BBTResult
from ..core.run_context import RunContext
from ..core.settings import CountingSettings, PriorSettings
from ..core.validation import check_sampler_counts, check_win_table
from ..fitting import SAMPLER_SETTINGS, fit, prepare_fit
from ..fitting.batch import BatchJob as BatchJob
from ..fitting.batch import FitOutcome as FitOutcome
from ..fitting.batch import check_executor as check_executor
from ..fitting.batch import run_batch as run_batch
from ..fitting.batch import spawn_seeds as spawn_seeds
from .progress import text_progress as text_progress  # its documented home is this module


@dataclass(frozen=True)
class FitRequest:
    """One fit to run: a raw win table (ties not yet resolved) and the model settings.

    Attributes
    ----------
    win_table
        Counts ``alg1, alg2, win1, win2, ties`` with every pair of the algorithms (as
        :func:`bbt_widget.core.wintable.count_wins` gives them); ``ties`` are resolved by ``ties``.
    ties, hyperprior, prior_scale
        Model settings, as for :func:`bbt_widget.fit`.
    chains, iter_warmup, iter_sampling, engine
        Sampler settings, as for :func:`bbt_widget.fit`.
    meta
        Free labels carried to the outcome (e.g. the sweep setting or the data set left out).
    """

    win_table: pd.DataFrame
    ties: TiePolicy = DEFAULT_TIES
    hyperprior: HyperpriorName = DEFAULT_HYPERPRIOR
    prior_scale: float | None = None
    chains: int = DEFAULT_CHAINS
    #: None: the defaults of the engine that fits it (``bbt_widget.engines.iterations``)
    iter_warmup: int | None = None
    iter_sampling: int | None = None
    engine: EngineChoice = DEFAULT_ENGINE
    meta: dict[str, Any] = field(default_factory=dict)

    def check(self) -> FitRequest:
        """Validate every setting now (before any fit starts); returns self."""
        if CountingSettings(self.ties).ties is None:
            raise ValueError("a fit request needs a tie policy, not ties=None")
        PriorSettings(self.hyperprior, self.prior_scale)
        check_sampler_counts(
            {name: getattr(self, name) for name in ("chains", "iter_warmup", "iter_sampling")}
        )
        check_win_table(self.win_table)
        return self

    def run(self, seed: int, context: RunContext) -> tuple[BBTResult, list[str]]:
        """Fit the BBT model; returns the result and its diagnostics warnings."""
        result = fit(
            self.win_table,
            ties=self.ties,
            hyperprior=self.hyperprior,
            prior_scale=self.prior_scale,
            chains=self.chains,
            iter_warmup=self.iter_warmup,
            iter_sampling=self.iter_sampling,
            engine=self.engine,
            seed=seed,
            progress=context.progress,
            cancel=context.cancel,
        )
        notes = list(result.diagnostics().messages)
        if result.disconnected_note:
            notes.append(result.disconnected_note)
        return result, notes


@dataclass(frozen=True)
class ResultsFit:
    """One fit from the results themselves, as the batch runs it (locally or on a Dask
    worker): what a win table cannot carry, such as one metric's score column of several
    (:func:`bbt_widget.compare_metrics`) or data sets in groups (``group=``, whose group
    model needs each data set's results).

    Attributes
    ----------
    data
        The results, in any layout :func:`bbt_widget.fit` accepts.
    options
        Keywords of :func:`bbt_widget.fit` (layout, counting, prior, engine, ``group``,
        sampler settings); the seed is the batch's.
    meta
        Free labels carried to the outcome.
    """

    data: pd.DataFrame
    options: dict[str, Any]
    meta: dict[str, Any] = field(default_factory=dict)

    def check(self) -> ResultsFit:
        """Nothing left to do: the caller checks the settings and prepares every fit once
        (``prepare_fit``) before the batch starts, so that bad input fails before any fit."""
        return self

    def run(self, seed: int, context: RunContext) -> tuple[BBTResult, list[str]]:
        """Fit; returns the result and its diagnostics warnings. The data's warnings were
        issued once by the caller, not again per fit."""
        sampler = {k: self.options[k] for k in SAMPLER_SETTINGS if k in self.options}
        rest = {
            "ties": DEFAULT_TIES,
            **{k: v for k, v in self.options.items() if k not in SAMPLER_SETTINGS},
        }
        size = (sampler.get("chains", 4), sampler.get("iter_sampling"))
        job = prepare_fit(self.data, seed=seed, size=size, **rest)
        result = job.sample(context=context, **sampler)
        notes = list(result.diagnostics().messages)
        if result.disconnected_note:
            notes.append(result.disconnected_note)
        return result, notes
