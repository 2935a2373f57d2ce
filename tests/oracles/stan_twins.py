"""The Stan twins of the package's own samplers, run with PyStan as test oracles.

The package samples the Plackett-Luce model with a Gibbs sampler and the hierarchical
t-test by quadrature and Metropolis-Hastings, both in numpy. The same posteriors written as
Stan programs (``plackett_luce.stan``, ``hierarchical_ttest.stan``, beside this module) and
sampled with NUTS are the independent check the tests compare them with: a different
algorithm, the same model. They are not part of the package.

:func:`sample` runs a program with PyStan (``stan.build``; httpstan caches the compiled model
by its source, so only the first run compiles) and returns the package's :class:`Draws`, so
that the package's summaries and diagnostics read them as they read their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bbt_widget.baselines._hierarchical import DEFAULT_NU_PRIOR, HierarchicalResult
from bbt_widget.core.diagnostics import Diagnostics
from bbt_widget.core.draws import Draws
from bbt_widget.core.options import TTEST_HDI

HERE = Path(__file__).resolve().parent
#: The twins by name: Plackett-Luce (data: ``bbt_widget.ranking._plackett_luce.pl_data``)
#: and the hierarchical t-test (data: ``bbt_widget.baselines._hierarchical.model_data``).
PROGRAMS = ("plackett_luce", "hierarchical_ttest")
_SAMPLER_OUTPUTS = (
    "lp__",
    "accept_stat__",
    "stepsize__",
    "treedepth__",
    "n_leapfrog__",
    "divergent__",
    "energy__",
)
_INTEGER_OUTPUTS = ("treedepth__", "n_leapfrog__", "divergent__")


def program(name: str) -> str:
    """The source of the twin ``name`` (one of :data:`PROGRAMS`)."""
    if name not in PROGRAMS:
        raise ValueError(f"unknown Stan twin {name!r}; expected one of {', '.join(PROGRAMS)}")
    return (HERE / f"{name}.stan").read_text(encoding="utf-8")


def _chains_first(values: np.ndarray, chains: int) -> np.ndarray:
    """PyStan's ``fit[name]``, shaped (*dims, draws x chains) with the chains interleaved,
    as (chains, draws, *dims)."""
    dims = values.shape[:-1]
    per_chain = values.reshape(*dims, -1, chains)
    return np.moveaxis(per_chain, (-1, -2), (0, 1))


def sample(
    name: str,
    data: dict[str, Any],
    *,
    chains: int = 4,
    iter_warmup: int = 1000,
    iter_sampling: int = 1000,
    seed: int = 1,
    adapt_delta: float = 0.8,
    max_treedepth: int = 10,
) -> Draws:
    """NUTS draws of the twin ``name`` given its Stan ``data``, as the package's ``Draws``
    (every parameter shaped (chains, draws, ...), the sampler outputs beside them)."""
    import stan  # PyStan: a test dependency here, installed by CI

    posterior = stan.build(program(name), data=data, random_seed=int(seed))
    fit = posterior.sample(
        num_chains=chains,
        num_warmup=iter_warmup,
        num_samples=iter_sampling,
        delta=adapt_delta,
        max_depth=max_treedepth,
    )
    params = {}
    for p, dims in zip(fit.param_names, fit.dims):
        values = _chains_first(np.asarray(fit[p]), chains)
        params[p] = values if dims else values[..., 0]  # a scalar: (chains, draws)
    sampler = {}
    for out in _SAMPLER_OUTPUTS:
        values = _chains_first(np.asarray(fit[out]), chains)[..., 0]
        sampler[out] = values.astype(np.int64) if out in _INTEGER_OUTPUTS else values
    return Draws(params, sampler, engine="pystan", max_treedepth=max_treedepth)


@dataclass(frozen=True)
class TwinFit:
    """The twin's draws, and their diagnostics as the package computes them."""

    draws: Draws
    diagnostics: Diagnostics


def plackett_luce(
    data: pd.DataFrame,
    *,
    chains: int,
    iter_warmup: int,
    iter_sampling: int,
    seed: int,
    ties: str = "split",
    prior: float = 1.0,
    **layout: Any,
) -> TwinFit:
    """NUTS on the Plackett-Luce program, given the rankings ``ranking_model`` would read
    from ``data`` (the same tie splitting, from the same seed)."""
    from bbt_widget.core.data import as_tidy
    from bbt_widget.core.diagnostics import draws_diagnostics
    from bbt_widget.ranking._plackett_luce import _prepared

    counts = _prepared(as_tidy(data, **layout), ties, prior, seed)[3]
    draws = sample(
        "plackett_luce",
        counts,
        chains=chains,
        iter_warmup=iter_warmup,
        iter_sampling=iter_sampling,
        seed=seed,
    )
    return TwinFit(draws, draws_diagnostics(draws, ["theta"]))


def hierarchical(
    data: pd.DataFrame,
    *,
    a: str,
    b: str,
    rope: float = 0.01,
    rho: float | None = None,
    hdi: float = TTEST_HDI,
    nu_prior: str = DEFAULT_NU_PRIOR,
    chains: int = 4,
    iter_warmup: int = 1000,
    iter_sampling: int = 1000,
    seed: int = 1,
    adapt_delta: float = 0.95,
    dataset: str | None = None,
    algorithm: str | None = None,
    fold: str | None = None,
    score: str | None = None,
    run: str | None = None,
) -> HierarchicalResult:
    """The hierarchical t-test of ``a`` vs ``b`` as ``bbt_widget.baselines.hierarchical``
    computes it, from NUTS draws of the Stan program (``adapt_delta`` 0.95: hierarchical
    models need smaller steps than Stan's 0.8)."""
    from bbt_widget.baselines._cv import fold_differences
    from bbt_widget.baselines._hierarchical import (
        check_enough,
        in_score_units,
        model_data,
        pair_result,
    )
    from bbt_widget.core.tidy import Layout

    layout = Layout(dataset=dataset, algorithm=algorithm, fold=fold, score=score)
    diffs = fold_differences(data, layout, a=a, b=b, run=run, rho=rho)
    check_enough(diffs)
    found = model_data(diffs, rope, nu_prior)
    settings = {
        "chains": chains,
        "iter_warmup": iter_warmup,
        "iter_sampling": iter_sampling,
        "seed": seed,
        "adapt_delta": adapt_delta,
    }
    draws = in_score_units(sample("hierarchical_ttest", found, **settings), found["scale"])
    return pair_result(diffs, draws, rope, hdi, settings | {"sampler": "nuts"})
