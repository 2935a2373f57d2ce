"""Pure posterior summaries: HDI, decisions (paper Sec. 9.2, 9.3), ranking, ordering."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from bbt_widget.core import posterior


def test_hdi_matches_the_narrowest_interval_computed_by_hand():
    draws = np.array([[0.0], [1.0], [1.1], [1.2], [1.3], [5.0]])
    # 0.5 of 6 draws -> windows of 4 consecutive sorted draws; [1.0, 1.3] is narrowest
    low, high = posterior.hdi_sorted(draws, 0.5)
    assert (low[0], high[0]) == (1.0, 1.3)
    low, high = posterior.hdi_sorted(draws, 1.0)
    assert (low[0], high[0]) == (0.0, 5.0)


def test_hdi_agrees_with_arviz():
    az = pytest.importorskip("arviz")
    rng = np.random.default_rng(3)
    x = np.column_stack([rng.beta(5, 3, 4000), rng.gamma(2, size=4000)])
    low, high = posterior.hdi_sorted(np.sort(x, axis=0), 0.89)
    for k in range(2):
        ref = az.hdi(x[:, k], hdi_prob=0.89)
        assert low[k] == pytest.approx(ref[0]) and high[k] == pytest.approx(ref[1])


def test_weak_decision_rule_sec_9_2():
    above = np.array([0.99, 0.99, 0.50, 0.94, 0.02])
    in_rope = np.array([0.96, 0.10, 0.50, 0.01, 0.0])
    # equivalence wins when both pass; below 0.95 no claim
    assert list(posterior.weak_decision(above, in_rope)) == [
        "equivalent",
        "a better",
        "no claim",
        "no claim",
        "b better",
    ]


def test_strong_decision_rule_sec_9_3():
    mean = np.array([0.52, 0.60, 0.71, 0.70, 0.25])
    got = posterior.strong_decision(mean, (0.45, 0.55))
    assert list(got) == ["equivalent", "no claim", "a better", "no claim", "b better"]


def test_summary_columns_and_counts():
    rng = np.random.default_rng(0)
    p = np.sort(np.column_stack([rng.uniform(0.5, 0.9, 1000), rng.uniform(0.44, 0.56, 1000)]), 0)
    table = posterior.summarise(p, ["a > b", "a > c"], ["a", "a"], ["b", "c"], (0.45, 0.55), 0.89)
    assert tuple(table.columns) == posterior.SUMMARY_COLUMNS
    assert table["above_50"][0] == pytest.approx(np.mean(p[:, 0] >= 0.5))
    inside = np.mean((p[:, 1] >= 0.45) & (p[:, 1] <= 0.55))
    assert table["in_rope"][1] == pytest.approx(inside)
    assert table["delta"][0] == pytest.approx(table["high"][0] - table["low"][0])


def test_pairs_are_ordered_best_against_each_worse_one():
    beta = np.array([[0.0, 2.0, 1.0]] * 10)
    order = posterior.algorithm_order(beta)
    assert list(order) == [1, 2, 0]
    assert posterior.ordered_pairs(order) == [(1, 2), (1, 0), (2, 0)]
    p = posterior.pair_probabilities(beta, [(1, 0)])
    assert p[0, 0] == pytest.approx(1 / (1 + np.exp(-2.0)))


def test_inv_logit_is_stable_at_extremes():
    out = posterior.inv_logit(np.array([-800.0, 0.0, 800.0]))
    assert np.all(np.isfinite(out))
    assert out[0] == 0.0 and out[1] == 0.5 and out[2] == 1.0
    # and P(a > b) of beta differences that large: 0 and 1 exactly, no warning, no NaN
    beta = np.array([[0.0, 800.0], [800.0, 0.0], [0.0, -1e-300]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = posterior.pair_probabilities(beta, [(0, 1)])
    assert p[:, 0].tolist() == [0.0, 1.0, 0.5]
    x = np.linspace(-30, 30, 601)
    assert np.allclose(posterior.inv_logit(x), 1 / (1 + np.exp(-x)), rtol=1e-14, atol=0)


def test_ranking_probabilities_and_expected_rank():
    beta = np.array([[0.0, 1.0, 2.0], [0.0, 3.0, 2.0]])
    table = posterior.ranking(beta, ["x", "y", "z"], 0.5)
    assert list(table["algorithm"]) == ["y", "z", "x"]
    assert list(table["p_best"]) == [0.5, 0.5, 0.0]
    assert list(table["expected_rank"]) == [1.5, 1.5, 3.0]


def test_pairs_not_compared_get_no_decision_under_either_rule():
    """Issue 9.3: a pair whose algorithms never met is 'not compared', whatever its draws."""
    p = np.sort(np.column_stack([np.full(100, 0.99), np.full(100, 0.99)]), 0)
    table = posterior.summarise(
        p, ["a > b", "a > c"], ["a", "a"], ["b", "c"], (0.45, 0.55), 0.89, np.array([True, False])
    )
    assert list(table["weak"]) == ["a better", posterior.NOT_COMPARED]
    assert list(table["strong"]) == ["a better", posterior.NOT_COMPARED]
    assert table["above_50"][1] == 1.0  # the numbers stay; only the claim is withheld


def test_ranking_intervals_are_of_centred_abilities():
    """Issue 10: a common shift of every beta (the prior-only mode) must not widen the HDIs."""
    rng = np.random.default_rng(0)
    differences = np.array([0.0, 0.5, 1.0]) + rng.normal(0, 0.05, (4000, 3))
    shifted = differences + rng.normal(0, 3.0, (4000, 1))  # the same shift for all in a draw
    table = posterior.ranking(shifted, ["x", "y", "z"], 0.89).set_index("algorithm")
    width = table["high"] - table["low"]
    assert (width < 0.25).all()  # the 0.05 noise, not the shift's 3.0
    assert table["mean_beta"].sum() == pytest.approx(0.0, abs=1e-12)
    assert table.loc["z", "mean_beta"] == pytest.approx(0.5, abs=0.01)
