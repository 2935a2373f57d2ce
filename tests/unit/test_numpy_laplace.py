"""The numpy engine's Laplace approximation: what the widget's previews show on a Stan engine.

It approximates the posterior of the plain BBT model in ``(log sigma, beta)`` (the proposal of
the independence kernel) and of Davidson's model in ``(log sigma, contrasts, nu)``, in this
process, in milliseconds; the Stan engines' approximation needs a child process per call.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget import engines
from bbt_widget.engines import EngineError
from bbt_widget.fitting import prepare_fit


def _approximation(
    data: pd.DataFrame, ties: str, draws: int = 400, seed: int = 1, **prior: object
) -> bbt.BBTResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the data's warnings are fit's to test
        job = prepare_fit(data, dataset="db", ties=ties, seed=seed, size=(1, draws), **prior)
        return job.laplace(draws=draws, engine="numpy")


@pytest.mark.parametrize("ties", ["spread", "davidson"])
def test_the_approximation_has_a_fits_outputs_and_is_close_to_the_exact_fit(
    base: pd.DataFrame, ties: str
) -> None:
    approx = _approximation(base, ties, draws=2000, seed=3)
    assert approx.engine == "numpy" and approx.settings["method"] == "laplace"
    params = approx.draws.params
    assert params["beta"].shape == (1, 2000, 5) and params["sigma"].shape == (1, 2000)
    assert params["win1_rep"].dtype == np.int64 and params["log_lik"].shape == (1, 2000, 10)
    assert ("ties_rep" in params) == ("nu" in params) == (ties == "davidson")
    assert approx.diagnostics().ok  # an approximation has no sampler to judge
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exact = bbt.fit(base, dataset="db", ties=ties, seed=3, draws="fixed")
    # the Stan engines' approximation is as far (benchmarks/results/laplace.json)
    diff = approx.summary()["mean"].to_numpy() - exact.summary()["mean"].to_numpy()
    assert np.abs(diff).max() < 0.03, diff
    assert (approx.summary()["weak"] == exact.summary()["weak"]).all()


def test_a_seed_gives_the_same_draws(base: pd.DataFrame) -> None:
    first, again, other = (_approximation(base, "spread", seed=s) for s in (5, 5, 6))
    for name in ("beta", "win1_rep", "log_lik"):
        np.testing.assert_array_equal(first.draws.params[name], again.draws.params[name])
    assert not np.array_equal(first.draws.params["beta"], other.draws.params["beta"])


#: Priors whose Newton search from the origin (abilities 0, sigma 1) stepped into the funnel
#: of the hierarchical prior (sigma towards 0) and found no interior mode: no preview. A
#: widget's prior-scale slider reaches them.
FUNNEL_PRIORS = [
    ("spread", "lognormal", 2.5),
    ("spread", "lognormal", 5.0),
    ("spread", "cauchy", 0.1),
    ("spread", "cauchy", 3.0),
    ("spread", "normal", 5.0),
    ("davidson", "lognormal", 2.5),
]


@pytest.mark.parametrize(("ties", "hyperprior", "scale"), FUNNEL_PRIORS)
def test_the_mode_is_found_clear_of_the_funnel(
    base: pd.DataFrame, ties: str, hyperprior: str, scale: float
) -> None:
    """The abilities are first fitted at sigma = 1 (a concave problem), and the search
    starts there: the approximation's P(a > b) are those at the default prior (the data
    dominate it), its sigma far from 0."""
    reference = _approximation(base, ties).summary()["mean"].to_numpy()
    approx = _approximation(base, ties, hyperprior=hyperprior, prior_scale=scale)
    assert float(np.mean(approx.draws.params["sigma"])) > 0.3
    np.testing.assert_allclose(approx.summary()["mean"].to_numpy(), reference, atol=0.02)


def test_the_group_model_and_a_posterior_without_a_mode_are_refused() -> None:
    """No approximation of the group model (its joint mode misplaces tau); where the data
    leave no interior mode, an error that says to sample instead."""
    data = {"n_alg": 3, "i1": [1], "i2": [2], "win1": [1], "win2": [1], "n_groups": 2}
    with pytest.raises(EngineError, match="no Laplace approximation of 'bbt_groups'"):
        engines.get("numpy").laplace("bbt_groups", data | {"group": [1]}, draws=10, seed=1)
    # one game between two of three algorithms under a wide half-Cauchy: the prior's funnel
    none = engines.prepare_data("bbt", data | {"hyperprior": 2, "prior_scale": 50.0})
    with pytest.raises(EngineError, match=r"no interior mode.*sample it instead"):
        engines.laplace("bbt", none, engine="numpy", draws=10, seed=1)
