"""Plackett-Luce input: rankings from the scores, the tie rule, the input errors (no Stan)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget.ranking._plackett_luce import MAX_SPLIT, expand_rankings


def test_a_tie_is_split_into_its_orderings_with_equal_weights():
    means = np.array([[0.9, 0.8, 0.8, 0.7]])
    orders, weights = expand_rankings(means, "split", np.random.default_rng(0))
    assert sorted(map(tuple, orders)) == [(0, 1, 2, 3), (0, 2, 1, 3)]
    assert weights == [0.5, 0.5]


def test_missing_results_leave_the_algorithm_out_of_that_ranking():
    means = np.array([[0.7, np.nan, 0.9]])
    orders, weights = expand_rankings(means, "split", np.random.default_rng(0))
    assert [tuple(o) for o in orders] == [(2, 0)] and weights == [1.0]


def test_large_ties_are_sampled_and_random_breaks_once():
    means = np.full((1, 7), 0.5)  # 7! = 5040 orderings
    orders, weights = expand_rankings(means, "split", np.random.default_rng(0))
    assert len(orders) == MAX_SPLIT and sum(weights) == pytest.approx(1.0)
    assert all(sorted(o) == list(range(7)) for o in orders)
    orders, weights = expand_rankings(means, "random", np.random.default_rng(0))
    assert len(orders) == 1 and weights == [1.0]


@pytest.fixture
def no_stan(monkeypatch):
    from bbt_widget import engines

    def refuse(*args, **kwargs):
        raise AssertionError("a Stan fit was started")

    monkeypatch.setattr(engines, "sample", refuse)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"model": "bradley-terry"}, "unknown model 'bradley-terry'"),
        ({"ties": "average"}, "unknown ties 'average'"),
        ({"prior": 0}, r"concentration \(ranking_model.s prior\) must be a finite number > 0"),
        ({"hdi": 1.5}, "hdi mass"),
    ],
)
def test_bad_settings_fail_before_any_fit(no_stan, kwargs, match):
    data = pd.DataFrame({"a": [0.8, 0.7], "b": [0.9, 0.6]}, index=["d1", "d2"])
    with pytest.raises(ValueError, match=match):
        bbt.ranking_model(data, **kwargs)


def test_too_few_data_sets_or_algorithms_fail_before_any_fit(no_stan):
    one = pd.DataFrame({"a": [0.8], "b": [0.9]}, index=["d1"])
    with pytest.raises(ValueError, match="at least 2 data sets"):
        bbt.ranking_model(one)
    sparse = pd.DataFrame({"a": [0.8, np.nan], "b": [0.9, 0.5]}, index=["d1", "d2"])
    with pytest.raises(ValueError, match="at least 2 data sets"):
        bbt.ranking_model(sparse)
    single = pd.DataFrame({"ds": ["d1", "d2"], "alg": ["a", "a"], "acc": [0.8, 0.9]})
    with pytest.raises(ValueError, match="at least 2 algorithms"):
        bbt.ranking_model(single, dataset="ds", algorithm="alg", score="acc")


def test_stan_data_reproduce_the_plackett_luce_log_likelihood(pmlb16):
    """The reduced data (weighted counts per algorithm and per remaining set) give the same
    log-likelihood as Eq. 5 of Rojas-Delgado et al. (2022) summed over every weighted ordering."""
    from bbt_widget.core.data import tidy_results
    from bbt_widget.core.wintable import snap_ties
    from bbt_widget.ranking._plackett_luce import pl_data

    means = snap_ties(tidy_results(pmlb16, dataset="db").means)
    orders, weights = expand_rankings(means, "split", np.random.default_rng(0))
    data = pl_data(orders, weights, means.shape[1], 1.0)
    assert data["n_set"] < sum(len(o) for o in orders) / 10  # merged sets: a small matrix
    theta = np.random.default_rng(1).dirichlet(np.ones(means.shape[1]))
    direct = sum(
        w * sum(np.log(theta[o[i]]) - np.log(theta[o[i:]].sum()) for i in range(len(o)))
        for o, w in zip(orders, weights)
    )
    reduced = np.dot(data["placed"], np.log(theta)) - np.dot(
        data["set_weight"], np.log(np.array(data["sets"]) @ theta)
    )
    assert reduced == pytest.approx(direct, rel=1e-12)


def test_simulated_places_and_their_counts_match_a_direct_count():
    """The places of the simulated rankings are the inverse of their sort order (absent
    algorithms last), and the counts per (draw, algorithm, place) are those of counting
    every ranking, with or without a mask of the entries counted."""
    from bbt_widget.ranking._plackett_luce import _place_counts, _simulated_positions

    rng = np.random.default_rng(5)
    theta = rng.dirichlet(np.ones(6), size=7)
    present = rng.random((40, 6)) > 0.3
    pos = _simulated_positions(theta, 40, np.random.default_rng(1), present)
    order = np.argsort(pos, axis=2)
    assert (np.take_along_axis(pos, order, axis=2) == np.arange(6)).all()  # a permutation
    last = present.sum(axis=1)  # the present algorithms take the first places
    assert all((pos[:, s][:, present[s]] < last[s]).all() for s in range(40))
    direct = np.stack([(pos == p).sum(axis=1) for p in range(6)], axis=2)
    np.testing.assert_array_equal(_place_counts(pos), direct)
    masked = np.stack([((pos == p) & present[None]).sum(axis=1) for p in range(6)], axis=2)
    np.testing.assert_array_equal(_place_counts(pos, present), masked)


def test_simulated_rankings_follow_plackett_luce():
    """Rankings simulated from theta (the exponential race) have Plackett-Luce's
    probabilities: P(a first, then b, then c) = theta_a / 1 * theta_b / (theta_b + theta_c)."""
    from itertools import permutations

    from bbt_widget.ranking._plackett_luce import _simulated_positions

    theta = np.array([[0.6, 0.3, 0.1]])
    n = 200_000
    pos = _simulated_positions(theta, n, np.random.default_rng(2))[0]
    for a, b, c in permutations(range(3)):
        t = theta[0]
        exact = t[a] * t[b] / (t[b] + t[c])
        seen = np.mean((pos[:, a] == 0) & (pos[:, b] == 1) & (pos[:, c] == 2))
        assert abs(seen - exact) < 4 * np.sqrt(exact * (1 - exact) / n), (a, b, c, seen, exact)


def test_each_ranking_model_has_its_own_parameters_and_ranking_model_calls_them_by_name():
    # ranking_model's prior was a Dirichlet concentration or an exponential rate depending on
    # model=; each model is now its own function, named for what its prior is
    data = bbt.datasets.load_base()
    pl = bbt.ranking.plackett_luce(data, dataset="db", concentration=2.0, seed=3)
    by_name = bbt.ranking_model(data, dataset="db", prior=2.0, seed=3)
    pd.testing.assert_frame_equal(pl.ranking, by_name.ranking)
    assert pl.settings["prior"] == 2.0 and pl.settings["model"] == "plackett-luce"
    quick = {"chains": 2, "burn_in": 50, "iter_sampling": 100}
    ml = bbt.ranking.mallows(data, dataset="db", rate=0.5, seed=3, **quick)
    ml_by_name = bbt.ranking_model(
        data,
        dataset="db",
        model="mallows",
        prior=0.5,
        seed=3,
        chains=2,
        iter_warmup=50,
        iter_sampling=100,
    )
    pd.testing.assert_frame_equal(ml.ranking, ml_by_name.ranking)
    with pytest.raises(TypeError, match="unexpected keyword argument 'rate'"):
        bbt.ranking.plackett_luce(data, dataset="db", rate=0.5)  # Mallows' parameter
    with pytest.raises(TypeError, match="unexpected keyword argument 'concentration'"):
        bbt.ranking.mallows(data, dataset="db", concentration=2.0)  # Plackett-Luce's
