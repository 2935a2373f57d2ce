"""The Plackett-Luce Gibbs sampler (``ranking._plackett_luce_gibbs``) against the exact
posterior: on three algorithms the posterior lives on a 2-simplex, where its moments are
integrals that a fine grid gives to 1e-6, ties split into fractional weights included."""

from __future__ import annotations

import numpy as np
import pytest

from bbt_widget.core.convergence import ess_bulk, rhat
from bbt_widget.core.run_context import RunContext
from bbt_widget.ranking._plackett_luce import expand_rankings, pl_data
from bbt_widget.ranking._plackett_luce_gibbs import sample


def _exact_moments(data: dict) -> tuple[np.ndarray, np.ndarray]:
    """Mean and sd of theta under the posterior of ``data`` (three algorithms), by the
    midpoint rule on a fine triangular grid of the simplex."""
    n = 1200
    a, b = np.meshgrid((np.arange(n) + 0.5) / n, (np.arange(n) + 0.5) / n, indexing="ij")
    inside = a + b < 1
    theta = np.stack([a[inside], b[inside], 1 - a[inside] - b[inside]], axis=1)
    sets = np.asarray(data["sets"], dtype=float)
    log_density = np.log(theta) @ (
        np.asarray(data["alpha"]) - 1 + np.asarray(data["placed"])
    ) - np.log(theta @ sets.T) @ np.asarray(data["set_weight"])
    weight = np.exp(log_density - log_density.max())
    weight /= weight.sum()
    mean = weight @ theta
    return mean, np.sqrt(weight @ (theta - mean) ** 2)


@pytest.fixture(scope="module")
def tied_rankings() -> dict:
    """Twelve data sets' means (higher is better) with ties and a missing result, split into
    weighted orderings as the model reads them, and a Dirichlet(1.5) prior."""
    means = np.array(
        [
            [0.9, 0.8, 0.7],
            [0.9, 0.7, 0.8],
            [0.8, 0.9, 0.7],
            [0.9, 0.9, 0.6],  # a tie: two orderings of weight 1/2
            [0.7, 0.8, 0.9],
            [0.9, 0.8, 0.8],
            [0.9, np.nan, 0.8],  # a ranking of two: Luce's choice axiom
            [0.6, 0.7, 0.8],
            [0.9, 0.8, 0.7],
            [0.8, 0.8, 0.8],  # all tied: six orderings of weight 1/6
            [0.9, 0.7, 0.8],
            [0.7, 0.9, 0.8],
        ]
    )
    orders, weights = expand_rankings(means, "split", np.random.default_rng(0))
    assert any(w < 1 for w in weights)
    return pl_data(orders, weights, 3, 1.5)


def test_gibbs_draws_the_exact_posterior_of_tied_rankings(tied_rankings):
    mean, sd = _exact_moments(tied_rankings)
    draws = sample(tied_rankings, chains=4, iter_warmup=200, iter_sampling=5000, seed=11)
    theta = draws.params["theta"]
    assert theta.shape == (4, 5000, 3)
    assert np.allclose(theta.sum(axis=2), 1.0)
    flat = theta.reshape(-1, 3)
    # Monte Carlo error of each mean: sd / sqrt(ESS), ESS >= 20000 * 0.3 here
    ess = [ess_bulk(theta[..., i]) for i in range(3)]
    assert min(ess) > 6000, ess
    mcse = sd / np.sqrt(min(ess))
    assert np.all(np.abs(flat.mean(axis=0) - mean) < 4 * mcse), (flat.mean(axis=0), mean, mcse)
    assert flat.std(axis=0) == pytest.approx(sd, rel=0.03)
    assert max(rhat(theta[..., i]) for i in range(3)) < 1.01


def test_gibbs_is_reproducible_and_seeded(tied_rankings):
    one = sample(tied_rankings, chains=2, iter_warmup=10, iter_sampling=50, seed=3)
    two = sample(tied_rankings, chains=2, iter_warmup=10, iter_sampling=50, seed=3)
    other = sample(tied_rankings, chains=2, iter_warmup=10, iter_sampling=50, seed=4)
    np.testing.assert_array_equal(one.params["theta"], two.params["theta"])
    assert not np.array_equal(one.params["theta"], other.params["theta"])
    assert one.engine == "numpy" and one.info["seed"] == 3


def test_gibbs_reports_its_progress_to_the_end(tied_rankings):
    seen = []
    sample(
        tied_rankings,
        chains=1,
        iter_warmup=20,
        iter_sampling=180,
        seed=1,
        context=RunContext(lambda stage, f: seen.append((stage, f))),
    )
    fractions = [f for _, f in seen]
    assert {stage for stage, _ in seen} == {"sampling"}
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and len(fractions) >= 4
