"""The Bayesian signed-rank and sign tests and the hierarchical t-test report the Monte Carlo
standard error of their region probabilities, it is the spread those show over 20 seeds, and
a decision within 3 of them of the 0.95 threshold is not made."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bbt_widget as bbt
from bbt_widget import baselines
from bbt_widget.baselines._simplex import iid_mcse, region_decisions

SEEDS = 20


def _within(values: list[float], errors: list[float]) -> tuple[float, float]:
    spread = float(np.std(values, ddof=1))
    claimed = float(np.sqrt(np.mean(np.square(errors))))
    assert 1 / 1.5 < claimed / spread < 1.5, (claimed, spread)
    return claimed, spread


@pytest.mark.parametrize("test", ["bayesian_signed_rank", "bayesian_sign_test"])
def test_the_tests_mcse_is_their_spread_over_seeds(test: str) -> None:
    """rf against xrf on the shipped results: P(left) near 0.76 (signed-rank), a share
    that moves with the seed; 2000 Dirichlet draws per fit."""
    data = bbt.datasets.load_pmlb16()
    run = getattr(baselines, test)
    rows = [
        run(data, dataset="db", a="rf", b="xrf", n_samples=2000, seed=s).table.iloc[0]
        for s in range(SEEDS)
    ]
    for region in ("left", "rope"):
        values = [float(r[f"p_{region}"]) for r in rows]
        if 0.02 < np.mean(values) < 0.98:
            _within(values, [float(r[f"mcse_{region}"]) for r in rows])


def test_the_hierarchical_tests_mcse_is_its_spread_over_seeds() -> None:
    """svm against lda on the paper's base results (4-fold, rho 1/4): P(left) near 0.78,
    from the quadrature sampler's chains (their autocorrelation in the effective sample
    size)."""
    data = bbt.datasets.load_base()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tables = [
            baselines.hierarchical(
                data, dataset="db", a="svm", b="lda", rho=1 / 4, seed=s, iter_sampling=500
            ).table.iloc[0]
            for s in range(SEEDS)
        ]
    values = [float(t["p_left"]) for t in tables]
    _within(values, [float(t["mcse_left"]) for t in tables])


def test_a_region_within_z_mcse_of_the_threshold_decides_nothing() -> None:
    p_left, p_rope, p_right = (
        np.array([0.96, 0.99]),
        np.array([0.02, 0.005]),
        np.array([0.02, 0.005]),
    )
    assert region_decisions(p_left, p_rope, p_right).tolist() == ["a better", "a better"]
    errors = [np.array([0.005, 0.005]), np.array([0.001, 0.001]), np.array([0.001, 0.001])]
    got = region_decisions(p_left, p_rope, p_right, mcse=errors, z=3.0)
    assert got.tolist() == ["no claim", "a better"]  # 0.96 - 3 x 0.005 < 0.95 <= 0.99 - 0.015
    # an independent share's error is binomial, and at least one draw's share
    np.testing.assert_allclose(iid_mcse([0.5, 0.0], 100), [0.05, 0.01])
