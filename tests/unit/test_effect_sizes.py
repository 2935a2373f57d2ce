"""The scores beside BBT's claims: intervals of a mean and a median, Cliff's delta and its
labels, and pair effect sizes oriented by the score's direction, against hand-computed values."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest

from bbt_widget.baselines._common import Means
from bbt_widget.baselines._effect_sizes import (
    cliffs_delta,
    magnitude,
    median_coverage,
    median_interval,
    pair_effects,
    score_table,
)


def test_cliffs_delta_counts_every_two_values():
    # 1 vs 2, 2, 4: <, <, <; 2 vs them: =, =, <; 3 vs them: >, >, <  ->  (2 - 5) / 9
    assert cliffs_delta(np.array([1.0, 2, 3]), np.array([2.0, 2, 4])) == pytest.approx(-3 / 9)
    assert cliffs_delta(np.array([5.0, 6]), np.array([1.0, 2, 3])) == 1.0
    assert cliffs_delta(np.array([1.0, 2]), np.array([1.0, 2])) == 0.0
    assert np.isnan(cliffs_delta(np.array([]), np.array([1.0])))
    # within the tolerance: a tie (floating-point noise between two equal means)
    assert cliffs_delta(np.array([0.3]), np.array([0.1 + 0.2])) == -1.0
    assert cliffs_delta(np.array([0.3]), np.array([0.1 + 0.2]), tol=1e-12) == 0.0


@pytest.mark.parametrize(
    ("delta", "label"),
    [
        (0.0, "negligible"),
        (0.146, "negligible"),
        (-0.147, "small"),
        (0.329, "small"),
        (0.33, "medium"),
        (-0.473, "medium"),
        (0.474, "large"),
        (-1.0, "large"),
        (float("nan"), ""),
    ],
)
def test_magnitude_uses_autoranks_thresholds(delta, label):
    assert magnitude(delta) == label


def test_median_interval_is_the_binomial_order_statistics():
    x = np.arange(10.0)[::-1]  # unsorted on purpose
    # Binomial(10, 1/2): P(<= 1) = 11/1024 <= 0.025 < P(<= 2) = 56/1024: [x_(2), x_(9)]
    assert median_interval(x, 0.95) == (1.0, 8.0)
    assert median_coverage(10, 0.95) == pytest.approx(1 - 2 * 11 / 1024)
    # 0.89: P(<= 2) = 56/1024 <= 0.055: [x_(3), x_(8)], coverage 1 - 112/1024
    assert median_interval(x, 0.89) == (2.0, 7.0)
    assert median_coverage(10, 0.89) == pytest.approx(1 - 112 / 1024)
    # 5 values cannot reach 95% (the range covers 1 - 2/32): the range
    assert median_interval(np.array([3.0, 1, 2, 5, 4]), 0.95) == (1.0, 5.0)
    assert median_coverage(5, 0.95) == pytest.approx(1 - 2 / 32)
    assert all(np.isnan(median_interval(np.array([]), 0.9)))


def _means(values, lower_is_better=False, names=("a", "b")):
    """Means as the report builds them: oriented so that higher is better."""
    sign = -1.0 if lower_is_better else 1.0
    data = [f"d{k}" for k in range(len(values))]
    return Means(sign * np.asarray(values, dtype=float), tuple(names), tuple(data), lower_is_better)


def test_score_table_on_the_scores_own_scale():
    raw = [[0.1, 0.4], [0.2, np.nan], [0.3, 0.6], [0.6, 0.2]]
    for lower in (False, True):
        table = score_table(_means(raw, lower), mass=0.89, seed=3)
        a, b = table.set_index("algorithm").loc["a"], table.set_index("algorithm").loc["b"]
        assert a["n_datasets"] == 4 and b["n_datasets"] == 3  # the missing score left out
        assert a["mean_score"] == pytest.approx(0.3) and b["mean_score"] == pytest.approx(0.4)
        assert a["median_score"] == pytest.approx(0.25) and b["median_score"] == 0.4
        # 4 and 3 values cannot reach 89%: the median's interval is the range
        assert (a["median_low"], a["median_high"]) == (0.1, 0.6)
        assert (b["median_low"], b["median_high"]) == (0.2, 0.6)
        assert 0.1 <= a["mean_low"] < 0.3 < a["mean_high"] <= 0.6


def test_bootstrap_interval_of_the_mean_is_seeded_percentiles():
    # two values 0 and 1: a resample's mean is 0, 1/2 or 1 with chances 1/4, 1/2, 1/4, so the
    # 5.5% and 94.5% percentiles of 2000 resamples are 0 and 1
    table = score_table(_means([[0.0, 5.0], [1.0, 5.0]]), mass=0.89, seed=1)
    assert table.loc[0, ["mean_low", "mean_high"]].tolist() == [0.0, 1.0]
    assert table.loc[1, ["mean_low", "mean_high"]].tolist() == [5.0, 5.0]  # constant
    rng = np.random.default_rng(7)
    values = rng.normal(size=(30, 2))
    first = score_table(_means(values), mass=0.9, seed=11)
    pd.testing.assert_frame_equal(first, score_table(_means(values), mass=0.9, seed=11))
    assert not first.equals(score_table(_means(values), mass=0.9, seed=12))
    # the same resamples by hand: default_rng(seed), the first algorithm first
    rng = np.random.default_rng(11)
    boot = values[:, 0][rng.integers(0, 30, size=(2000, 30))].mean(axis=1)
    assert first.loc[0, "mean_low"] == pytest.approx(np.quantile(boot, 0.05))
    assert first.loc[0, "mean_high"] == pytest.approx(np.quantile(boot, 0.95))


def test_pair_effects_favour_a_whatever_the_direction():
    raw = [[0.9, 0.8], [0.7, 0.75], [0.6, 0.5], [np.nan, 0.1], [0.8, 0.6]]
    up = pair_effects(_means(raw), [("a", "b")], mass=0.5).iloc[0]
    # common data sets 0, 1, 2, 4: differences 0.1, -0.05, 0.1, 0.2, median 0.1
    assert up["n_common"] == 4
    assert up["advantage"] == pytest.approx(0.1)
    # Binomial(4, 1/2): P(<= 1) = 5/16 > 0.25, so k = 1: the range of the differences
    assert (up["advantage_low"], up["advantage_high"]) == pytest.approx((-0.05, 0.2))
    # a (0.9, 0.7, 0.6, 0.8) over b (0.8, 0.75, 0.5, 0.6): 0.9 > all 4; 0.7 > 0.5, 0.6 and
    # < 0.8, 0.75; 0.6 > 0.5, < 0.8, 0.75 and = 0.6; 0.8 = 0.8 and > the other 3:
    # (4 + 2 + 1 + 3) - (0 + 2 + 2 + 0) over 16
    assert up["cliffs_delta"] == pytest.approx((10 - 4) / 16)
    assert up["magnitude"] == "medium"
    # errors (lower is better): the same numbers read as errors favour b, so a's
    # advantage and delta change sign
    down = pair_effects(_means(raw, lower_is_better=True), [("a", "b")], mass=0.5).iloc[0]
    assert down["advantage"] == pytest.approx(-0.1)
    assert down["cliffs_delta"] == pytest.approx(-(10 - 4) / 16)
    assert (down["advantage_low"], down["advantage_high"]) == pytest.approx((-0.2, 0.05))


def test_pair_effects_of_fifty_algorithms_in_well_under_a_second():
    rng = np.random.default_rng(0)
    names = tuple(f"alg{k}" for k in range(50))
    means = Means(rng.normal(size=(132, 50)), names, tuple(map(str, range(132))), False)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    start = time.perf_counter()
    effects = pair_effects(means, pairs, mass=0.89)
    scores = score_table(means, mass=0.89, seed=0)
    took = time.perf_counter() - start
    assert len(effects) == 1225 and len(scores) == 50
    assert took < 2.0, took
