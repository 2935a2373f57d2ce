"""``bbt.sweep``: do the claims survive reasonable analysis choices?

The tie policy, the local ROPE ``d_min``, the tie threshold in score units, paired or unpaired
effect sizes and the hyper-prior are choices a reviewer will question. A sweep refits the
model for every combination in a grid (through :mod:`bbt_widget.lab.batch`, on local cores or
a Dask cluster) and lays the decisions side by side: which pairs flip, which claims hold in
every setting.

>>> import bbt_widget as bbt
>>> sw = bbt.sweep(bbt.datasets.load_base(), dataset="db")  # doctest: +SKIP
>>> sw.flips("strong")  # doctest: +SKIP
>>> grid = {**bbt.sweep.DEFAULT_GRID, "prior": bbt.sweep.APPENDIX_A}  # doctest: +SKIP
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..core.data import as_tidy
from ..core.draws import ProgressCallback
from ..core.groups import GroupSpec, check_group_request, results_only
from ..core.options import (
    DEFAULT_CHAINS,
    DEFAULT_ENGINE,
    DEFAULT_HDI,
    DEFAULT_HYPERPRIOR,
    DEFAULT_ROPE,
    DEFAULT_TIES,
    HYPERPRIOR_SCALES,
    EngineChoice,
)
from ..core.precision import ConditionalDraws
from ..core.result import BBTResult
from ..core.run_context import RunContext
from ..core.settings import CountingSettings, PriorSettings
from ..core.tidy import Layout, TidyResults, Unpack
from ..core.validation import (
    DEFAULT_SEED,
    check_count,
    check_hdi,
    check_rope,
    check_sampler_counts,
)
from ..core.wintable import comparison_components, count_wins
from .batch import FitRequest, check_executor, run_batch
from .sweep_groups import GroupedSweepResult, group_draws, grouped_fits
from .sweep_result import SETTING_COLUMNS, SweepResult

if TYPE_CHECKING:  # typing.Unpack is Python 3.11; the checker knows it on 3.10 too
    from ..core.tidy import LayoutKeywords

#: Grid keys: the settings, plus ``prior`` for (hyperprior, scale) pairs such as APPENDIX_A.
GRID_KEYS = (*SETTING_COLUMNS, "prior")
#: The paper's Appendix A hyper-priors on sigma, for ``grid={"prior": APPENDIX_A}``.
APPENDIX_A: tuple[tuple[str, float], ...] = tuple(HYPERPRIOR_SCALES.items())


def default_grid(tidy: TidyResults, grouped: bool = False) -> dict[str, list[Any]]:
    """Ties {spread, add, forget, davidson} x d_min {None, 0.2, 0.4}, paired where valid.

    Without fold scores or an sd table a local ROPE cannot be computed, so d_min is then only
    ``None``. ``grouped``: for the group model (``sweep(..., group=...)``), which has no tie
    parameter, without ``davidson``.
    """
    can_rope = tidy.has_folds or tidy.has_sd
    ties = [t for t in _Sweep.DEFAULT_GRID["ties"] if not (grouped and t == "davidson")]
    return {
        "ties": ties,
        "d_min": list(_Sweep.DEFAULT_GRID["d_min"]) if can_rope else [None],
        "paired": [tidy.paired_ok],
    }


def _check_value(key: str, value: Any) -> Any:
    """One grid value, validated by the settings objects ``fit`` builds; errors name the
    setting."""
    try:
        if key == "ties":
            if CountingSettings(ties=value).ties is None:
                raise ValueError("a fit needs a tie policy, not None")
            return value
        if key in ("d_min", "tie_threshold", "paired"):
            return getattr(CountingSettings(**{key: value}), key)
        if key == "hyperprior":
            return PriorSettings(value, 1.0).family
        if key == "prior_scale":
            return PriorSettings(scale=value).scale
        if isinstance(value, str) or not isinstance(value, Sequence) or len(value) != 2:
            raise ValueError(
                "a prior is a (family, scale) pair such as ('cauchy', 1.0), and 'prior' a list "
                "of them, e.g. grid={'prior': [('lognormal', 0.5), ('cauchy', 1.0)]} or "
                "bbt.sweep.APPENDIX_A; to vary the family alone use 'hyperprior'"
            )
        prior = PriorSettings(*value)
        return prior.family, prior.scale
    except (TypeError, ValueError) as exc:
        raise ValueError(f"sweep grid {key!r}: invalid value {value!r}: {exc}") from None


def _check_grid(grid: Any) -> None:
    """The grid's shape: a non-empty dict of setting -> list of values (checked before the
    data are read; the values themselves are checked by :func:`_settings`)."""
    example = "e.g. grid={'ties': ['spread', 'davidson'], 'd_min': [None, 0.4]}"
    if not isinstance(grid, Mapping):
        raise TypeError(
            f"grid must be a dict of setting -> list of values ({example}) or None for the "
            f"default grid; got {type(grid).__name__} {grid!r}"
        )
    if not grid:
        raise ValueError(
            "grid is empty, so there is nothing to sweep (one fit cannot show which claims "
            f"are stable); give at least one setting to vary ({example}) or grid=None for "
            "the default grid"
        )


def _settings(grid: Mapping[str, Sequence[Any]], base: dict[str, Any]) -> list[dict[str, Any]]:
    """Every combination of the grid, validated, ``paired`` dropped where d_min is None."""
    _check_grid(grid)
    unknown = [k for k in grid if k not in GRID_KEYS]
    if unknown:
        raise ValueError(
            f"sweep grid: unknown setting {unknown[0]!r}; valid settings: {', '.join(GRID_KEYS)}"
        )
    if "prior" in grid and ({"hyperprior", "prior_scale"} & set(grid)):
        raise ValueError(
            "sweep grid: give either 'prior' (hyperprior, scale) pairs or 'hyperprior' / "
            "'prior_scale', not both"
        )
    values: dict[str, list[Any]] = {}
    for key, vals in grid.items():
        if (
            key == "prior"
            and isinstance(vals, tuple)
            and len(vals) == 2
            and isinstance(vals[0], str)
        ):
            raise ValueError(
                f"sweep grid 'prior': {vals!r} is one (family, scale) pair; 'prior' takes a "
                f"list of them, e.g. grid={{'prior': [{vals!r}]}}"
            )
        if isinstance(vals, (str, bool)) or vals is None:
            vals = [vals]
        elif isinstance(vals, Iterable) and not isinstance(vals, Mapping):
            vals = list(vals)
        else:
            raise TypeError(
                f"sweep grid {key!r}: give a list of values, e.g. {{{key!r}: [{vals!r}]}}; "
                f"got {type(vals).__name__} {vals!r}"
            )
        if not vals:
            raise ValueError(f"sweep grid {key!r}: no values; give at least one")
        values[key] = [_check_value(key, v) for v in vals]
    out: list[dict[str, Any]] = []
    for combo in itertools.product(*values.values()):
        s = dict(base)
        for key, value in zip(values, combo):
            if key == "prior":
                s["hyperprior"], s["prior_scale"] = value
            else:
                s[key] = value
        if s["d_min"] is None:
            s["paired"] = None  # no local ROPE: paired or not counts the same wins
        # a family without a scale takes its own default (Appendix A), never another's
        s.update(PriorSettings(s["hyperprior"], s["prior_scale"]).as_dict())
        if s not in out:
            out.append(s)
    return out


def _count_key(setting: Mapping[str, Any]) -> tuple[Any, ...]:
    """The settings a setting's win table depends on (equal keys share one table)."""
    return (setting["d_min"], setting["paired"], setting.get("tie_threshold"))


def _beta_draws(
    result: BBTResult, request: FitRequest
) -> tuple[np.ndarray, ConditionalDraws | None, float]:
    """What a sweep keeps of a fit (and all that travels back from a Dask worker): the draws
    of the abilities, the function of the fit's data and draws that gives its pairs'
    conditional expectations, by which the fit's summary estimates its pairs near a
    threshold (:meth:`BBTResult.summary`), when the fit has one, and the fit's measured ESS,
    by which that summary screens its pairs (so the sweep's rows are the summary's)."""
    diag = result.diagnostics()
    return result.beta, result.conditional_draws, float(min(diag.min_ess_bulk, diag.min_ess_tail))


class _Sweep:
    """Callable ``bbt.sweep(...)``; also carries ``APPENDIX_A`` and ``DEFAULT_GRID``."""

    APPENDIX_A = APPENDIX_A
    #: The default grid on data with fold scores (``paired`` follows the data: see
    #: :func:`default_grid`).
    DEFAULT_GRID: Mapping[str, tuple[Any, ...]] = MappingProxyType(
        {"ties": ("spread", "add", "forget", "davidson"), "d_min": (None, 0.2, 0.4)}
    )

    def __call__(
        self,
        data: pd.DataFrame | TidyResults,
        *,
        tie_threshold: float | None = None,
        grid: Mapping[str, Sequence[Any]] | None = None,
        seeds: int = 1,
        seed: int | None = DEFAULT_SEED,
        executor: Any = None,
        n_jobs: int | None = None,
        rope: Sequence[float] = DEFAULT_ROPE,
        hdi: float = DEFAULT_HDI,
        engine: EngineChoice = DEFAULT_ENGINE,
        chains: int = DEFAULT_CHAINS,
        iter_warmup: int | None = None,
        iter_sampling: int | None = None,
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
        group: GroupSpec | None = None,
        **layout: Unpack[LayoutKeywords],
    ) -> SweepResult:
        """Fit every setting of ``grid`` and compare the decisions.

        Parameters
        ----------
        data
            The results, as for :func:`bbt_widget.fit` (a table or a
            :class:`~bbt_widget.core.tidy.TidyResults`).
        tie_threshold
            The tie threshold in score units of every fit, as for :func:`bbt_widget.fit`,
            unless the grid varies it (a ``tie_threshold`` column is then in ``frame``).
        grid
            A non-empty dict, setting -> list of values: ``ties``, ``d_min`` (``None`` = no
            local ROPE), ``paired``, ``tie_threshold`` (score units, e.g. ``[0, 0.005]``),
            ``hyperprior``, ``prior_scale``, or ``prior`` with
            (hyperprior, scale) pairs such as ``bbt.sweep.APPENDIX_A``. Settings not in the
            grid keep fit's defaults. Default: :func:`default_grid` (ties x d_min {None, 0.2,
            0.4}, paired where the data allow it). Every value is checked before any fit starts.
        seeds
            Fits per setting with different seeds (``replicate`` column): shows which flips
            are Monte Carlo noise.
        seed
            The one seed all fit seeds derive from (``SeedSequence(seed).spawn(n)``): the
            numbers do not depend on the executor.
        executor, n_jobs
            ``None`` runs on all local cores; a ``dask.distributed.Client`` (or scheduler
            address) runs one Dask task per fit. See :func:`bbt_widget.lab.batch.run_batch`.
        rope, hdi
            For the decisions in ``frame``; :meth:`SweepResult.table` changes them without
            refitting.
        engine, chains, iter_warmup, iter_sampling
            Sampler settings of every fit (iterations left at None: each fit's engine's
            defaults; with ``engine="auto"`` the numpy engine fits the BBT settings and Stan
            the Davidson ones).
        progress, cancel
            As for :func:`bbt_widget.fit`, for the whole sweep.
        group
            Data sets in groups, as for :func:`bbt_widget.fit` (a column of ``data`` or a
            dict data set -> group): every setting fits the group model, the default grid
            leaves out ``ties="davidson"`` (the group model has no tie parameter) and the
            grouping is checked under every setting before any fit. Returns a
            :class:`~bbt_widget.lab.sweep_groups.GroupedSweepResult`, whose ``frame`` is of
            the pooled abilities and ``group_frame`` / ``group_flips()`` of each group's.
        **layout
            How to read the results: :class:`~bbt_widget.core.tidy.LayoutKeywords`.

        Returns
        -------
        SweepResult
        """
        asked = Layout.from_keywords(layout)
        rope, hdi = check_rope(rope), check_hdi(hdi)
        tie_threshold = CountingSettings(tie_threshold=tie_threshold).tie_threshold
        replicates = check_count(seeds, "seeds")
        check_executor(executor)
        if grid is not None:
            _check_grid(grid)
        if group is not None:  # the column and the kind of data, before they are read
            check_group_request(group, None, data)
        tidy = as_tidy(data if group is None else results_only(data, group), **asked.as_dict())
        if grid is None:
            grid = default_grid(tidy, grouped=group is not None)
        elif "d_min" in grid and "paired" not in grid:
            grid = {**grid, "paired": [tidy.paired_ok]}
        base = {
            "ties": DEFAULT_TIES,
            "d_min": None,
            "paired": True,
            "hyperprior": DEFAULT_HYPERPRIOR,
            "prior_scale": None,  # the family's default scale
        }
        if tie_threshold is not None or "tie_threshold" in grid:
            base["tie_threshold"] = tie_threshold  # type: ignore[assignment]
        settings = _settings(grid, base)
        tables: dict[tuple[Any, ...], pd.DataFrame] = {}
        for s in settings:  # every win table before the first fit: bad settings fail fast
            key = _count_key(s)
            if key not in tables:
                try:
                    tables[key] = count_wins(
                        tidy,
                        d_min=s["d_min"],
                        paired=bool(s["paired"]),
                        tie_threshold=s.get("tie_threshold"),
                    )
                except ValueError as exc:
                    raise ValueError(
                        f"sweep grid setting d_min={s['d_min']}, paired={s['paired']}: {exc}"
                    ) from None
        components = {k: comparison_components(t, tidy.algorithms) for k, t in tables.items()}
        if replicates > 1:
            settings = [{**s, "replicate": r} for s in settings for r in range(replicates)]
        if group is not None:
            sampler = {"chains": chains, "iter_warmup": iter_warmup, "iter_sampling": iter_sampling}
            check_sampler_counts(sampler)  # None: the engine's default
            fits, groups, group_components = grouped_fits(
                data, tidy, group, settings, asked.as_dict(), {**sampler, "engine": engine}
            )
            done = run_batch(
                fits,
                seed=seed,
                executor=executor,
                n_jobs=n_jobs,
                reduce=group_draws,
                context=RunContext(progress, cancel),
            )
            return GroupedSweepResult(
                settings,
                [o.value for o in done],
                [o.error for o in done],
                tidy.algorithms,
                rope,
                hdi,
                [components[_count_key(s)] for s in settings],
                groups,
                group_components,
            )
        requests = [
            FitRequest(
                tables[_count_key(s)],
                ties=s["ties"],
                hyperprior=s["hyperprior"],
                prior_scale=s["prior_scale"],
                chains=chains,
                iter_warmup=iter_warmup,
                iter_sampling=iter_sampling,
                engine=engine,
                meta=s,
            )
            for s in settings
        ]
        outcomes = run_batch(
            requests,
            seed=seed,
            executor=executor,
            n_jobs=n_jobs,
            reduce=_beta_draws,
            context=RunContext(progress, cancel),
        )
        return SweepResult(
            settings,
            [None if o.value is None else o.value[0] for o in outcomes],
            [o.error for o in outcomes],
            tidy.algorithms,
            rope,
            hdi,
            [components[_count_key(s)] for s in settings],
            conditional=[None if o.value is None else o.value[1] for o in outcomes],
            ess=[None if o.value is None else o.value[2] for o in outcomes],
        )


#: ``bbt.sweep(data, **layout, grid=..., seeds=..., executor=None) -> SweepResult``.
sweep = _Sweep()
