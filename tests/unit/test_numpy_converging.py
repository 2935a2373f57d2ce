"""The numpy engine draws again where its first round fails its diagnostics, and a warning
that still comes names what was drawn."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget.core.diagnostics import draws_diagnostics
from bbt_widget.core.draws import SamplerSettings
from bbt_widget.engines._converging import FURTHER_SWEEPS
from bbt_widget.engines._numpy import NumpyEngine


def _prior_win_table(n_alg: int, n_sets: int, rng: np.random.Generator) -> dict:
    """The Stan data of a win table simulated from the model's prior (lognormal(0, 0.5)
    sigma, beta ~ Normal(0, sigma), every pair met on ``n_sets`` data sets)."""
    sigma = float(np.exp(0.5 * rng.standard_normal()))
    beta = sigma * rng.standard_normal(n_alg)
    i1, i2 = np.triu_indices(n_alg, 1)
    wins = rng.binomial(n_sets, 1 / (1 + np.exp(beta[i2] - beta[i1])))
    return {
        "n_alg": n_alg,
        "n_pairs": len(i1),
        "i1": i1 + 1,
        "i2": i2 + 1,
        "win1": wins,
        "win2": n_sets - wins,
        "hyperprior": 1,
        "prior_scale": 0.5,
    }


@pytest.mark.slow
def test_a_first_round_that_fails_its_diagnostics_is_drawn_again():
    """The 43rd of a run of 12 x 30 win tables simulated from the prior, at seed 42: the
    independence kernel's chains stall in a tail (R-hat 1.024, tail ESS 36 of the 400 the
    check asks), and the draws returned are the Gibbs sampler's, which pass, with what was
    tried in ``info``."""
    rng = np.random.default_rng(0)
    for _ in range(43):
        data = _prior_win_table(12, 30, rng)
    drawn = NumpyEngine().sample("bbt", data, SamplerSettings(iter_warmup=100, seed=42))
    diag = draws_diagnostics(drawn, ["beta", "sigma"])
    assert diag.ok, diag.messages
    tried = drawn.info["convergence"]
    assert tried.startswith("independence kernel, one step in 3 kept (R-hat 1.024"), tried
    assert tried.endswith("then Gibbs sampler (diagnostics passed)"), tried
    assert drawn.info["kernel"] == "gibbs" and drawn.info["thin"] == 1
    assert drawn.params["beta"].shape == (4, 1000, 12)
    assert drawn.params["log_lik"].shape == (4, 1000, 66)


def test_a_first_round_that_passes_is_kept_as_it_was():
    rng = np.random.default_rng(0)
    data = _prior_win_table(12, 30, rng)
    drawn = NumpyEngine().sample("bbt", data, SamplerSettings(iter_warmup=100, seed=1))
    assert (
        drawn.info["convergence"] == "independence kernel, one step in 3 kept (diagnostics passed)"
    )


def test_the_warning_when_the_rounds_are_spent_names_what_was_drawn():
    """50 draws a chain cannot give the 400 effective draws the check asks: every round
    fails, and the warning names each."""
    table = pd.DataFrame(
        {"alg1": ["a", "a", "b"], "alg2": ["b", "c", "c"], "win1": [12, 15, 9], "win2": [8, 5, 11]}
    )
    with pytest.warns(bbt.DiagnosticsWarning) as caught:
        result = bbt.fit(table, iter_sampling=50, draws="fixed", seed=3)
    message = str(caught[0].message)
    assert "the sampler drew: Gibbs sampler (bulk ESS" in message, message
    thins = [int(t) for t in re.findall(r"then Gibbs sampler, one step in (\d+) kept \(", message)]
    assert thins and thins == sorted(thins) and sum(thins) <= FURTHER_SWEEPS, message
    assert result.draws.info["thin"] == thins[-1]
    assert not result.diagnostics().ok


def test_the_group_model_is_drawn_again_too():
    """The group model's Gibbs draws, too few for the check (60 a chain), are thinned in
    further rounds (its four parameters judged, as its result judges them)."""
    rng = np.random.default_rng(5)
    data = _prior_win_table(4, 6, rng)
    data |= {
        "n_groups": 2,
        "group": np.repeat([1, 2], 6)[: 2 * data["n_pairs"]],
        "tau_scale": 0.5,
    }
    for key in ("i1", "i2", "win1", "win2"):
        data[key] = np.tile(data[key], 2)
    data["n_pairs"] *= 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        drawn = NumpyEngine().sample(
            "bbt_groups", data, SamplerSettings(iter_warmup=50, iter_sampling=60, seed=2)
        )
    assert drawn.params["beta_group"].shape == (4, 60, 8)
    assert "then Gibbs sampler, one step in" in drawn.info["convergence"]


@pytest.mark.slow
def test_a_single_chain_is_judged_by_its_ess():
    """One chain has no R-hat (NaN, which fails the check): it passes on its ESS alone, with
    no further round that could never give it one."""
    data = _prior_win_table(5, 20, np.random.default_rng(3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the R-hat of one chain: all NaN
        drawn = NumpyEngine().sample("bbt", data, SamplerSettings(chains=1, seed=4))
    # the first round's tail ESS was short of the 100 one chain needs; the second's was not,
    # and the rounds stop there (judged with R-hat, they went on until the budget was spent)
    assert drawn.info["convergence"] == (
        "Gibbs sampler (R-hat nan > 1.01; tail ESS 86 < 100); "
        "then Gibbs sampler, one step in 2 kept (R-hat nan > 1.01)"
    ), drawn.info["convergence"]
