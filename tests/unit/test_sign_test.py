"""Bayesian sign test with a ROPE (Benavoli et al. 2017, Sec. 4.1) against baycomp's
``SignTest``, run here on the same differences, and against closed forms."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bbt_widget.baselines import bayesian_sign_test, bayesian_signed_rank
from bbt_widget.baselines._sign import region_counts, sign_draws

ROPE = 0.01


def _differences(data: pd.DataFrame, a: str, b: str, decimals: int | None = None) -> np.ndarray:
    """b - a of the per-data-set means where both have a result (optionally rounded)."""
    means = data.groupby("db", sort=False).mean()
    z = (means[b] - means[a]).to_numpy()
    z = z[np.isfinite(z)]
    return z if decimals is None else np.round(z, decimals)


def test_draws_are_baycomps_on_the_same_generator():
    baycomp = pytest.importorskip("baycomp")
    rng = np.random.default_rng(5)
    x = rng.normal(0.8, 0.05, 40)
    y = x + rng.normal(0.004, 0.02, 40)
    counts = region_counts(y - x, ROPE)
    ours = sign_draws(counts, 1.0, "rope", 4000, np.random.RandomState(7))
    ref = baycomp.SignTest.sample(x, y, ROPE, nsamples=4000, random_state=7)
    np.testing.assert_allclose(ours, ref, atol=1e-12)
    # the prior placed on a side, with another strength; baycomp 1.0.3's docstring says
    # (place, strength), its code unpacks (strength, place)
    ours = sign_draws(counts, 2.5, "left", 4000, np.random.RandomState(8))
    ref = baycomp.SignTest.sample(
        x, y, ROPE, prior=(2.5, baycomp.SignTest.LEFT), nsamples=4000, random_state=8
    )
    np.testing.assert_allclose(ours, ref, atol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["pmlb16", "base"])
def test_equals_baycomp_on_every_pair(name, request):
    """Every pair of the shipped 16 x 132 results and of the paper's base results, against
    baycomp at the same seed (its own generator): within 0.02, i.e. Monte Carlo error. The
    differences are given to baycomp with floating-point noise rounded away, so that both
    count a difference on a ROPE bound alike (see the next test)."""
    baycomp = pytest.importorskip("baycomp")
    data = request.getfixturevalue(name)
    res = bayesian_sign_test(data, dataset="db", rope=ROPE, seed=3)
    assert len(res.table) == {"pmlb16": 120, "base": 10}[name]
    worst = 0.0
    for row in res.table.itertuples():
        z = _differences(data, row.alg_a, row.alg_b, decimals=12)
        ref = baycomp.SignTest.probs(np.zeros(z.size), z, ROPE, random_state=3)
        ours = (row.p_left, row.p_rope, row.p_right)
        worst = max(worst, float(np.max(np.abs(np.subtract(ours, ref)))))
        assert ours == pytest.approx(ref, abs=0.02), (row.pair, ours, ref)
        assert (row.n_left, row.n_right) == (np.sum(z < -ROPE), np.sum(z > ROPE))
    assert worst > 0  # two generators: equal up to Monte Carlo error, not bit for bit


def test_a_difference_on_the_rope_bound_is_in_the_rope(pmlb16):
    """rf vs mlp: two data sets differ by 0.01 up to floating-point noise
    (0.010000000000000009). The closed ROPE takes them in, as the signed-rank test does;
    baycomp on the raw floats puts them right of the ROPE, which moves P(left) by 0.07."""
    baycomp = pytest.importorskip("baycomp")
    raw = _differences(pmlb16, "rf", "mlp")
    on_bound = np.isclose(np.abs(raw), ROPE, rtol=0, atol=1e-12)
    assert on_bound.sum() == 2 and np.all(raw[on_bound] > ROPE)
    row = bayesian_sign_test(pmlb16, dataset="db", a="rf", b="mlp", seed=3).table.iloc[0]
    assert row.n_left == np.sum(raw < -ROPE)
    assert row.n_rope == np.sum(np.abs(raw) <= ROPE) + 2
    assert row.n_right == np.sum(raw > ROPE) - 2
    ours = (row.p_left, row.p_rope, row.p_right)
    clean = baycomp.SignTest.probs(np.zeros(raw.size), np.round(raw, 12), ROPE, random_state=3)
    as_floats = baycomp.SignTest.probs(np.zeros(raw.size), raw, ROPE, random_state=3)
    assert ours == pytest.approx(clean, abs=0.02)
    assert as_floats[0] - ours[0] > 0.05


def test_closed_form_with_one_side():
    """With ``n_left = k``, nothing else, and the prior (strength 1) on the ROPE,
    ``theta_left ~ Beta(k, 1)`` and ``theta_right`` ~ 0, so P(left is the largest) =
    P(theta_left > 1/2) = 1 - 2^-k."""
    data = pd.DataFrame({"db": [f"d{i}" for i in range(3)], "a": 0.9, "b": 0.5})
    for k in (1, 2, 3):
        res = bayesian_sign_test(data.iloc[:k], dataset="db", a="a", b="b", n_samples=200_000)
        row = res.table.iloc[0]
        assert (row.n_left, row.n_rope, row.n_right) == (k, 0, 0)
        assert row.p_left == pytest.approx(1 - 2.0**-k, abs=0.004)
        assert row.p_rope == pytest.approx(2.0**-k, abs=0.004)
        assert row.p_right < 1e-3


def test_one_pair_equals_its_row_of_every_pair_and_mirrors(base):
    every = bayesian_sign_test(base, dataset="db", seed=9, n_samples=20_000)
    row = every.table.set_index("pair").loc["lgbm > svm"]
    one = bayesian_sign_test(base, dataset="db", a="lgbm", b="svm", seed=9, n_samples=20_000)
    cols = ["n", "n_left", "n_rope", "n_right", "p_left", "p_rope", "p_right", "decision"]
    assert one.table.iloc[0][cols].tolist() == row[cols].tolist()
    back = bayesian_sign_test(base, dataset="db", a="svm", b="lgbm", seed=9, n_samples=20_000)
    b = back.table.iloc[0]
    assert (b.alg_a, b.alg_b, b.pair) == ("svm", "lgbm", "svm > lgbm")
    assert (b.n_left, b.n_rope, b.n_right) == (row.n_right, row.n_rope, row.n_left)
    # the other side's draws are a different Dirichlet (prior on the ROPE is symmetric)
    assert b.p_left == pytest.approx(row.p_right, abs=0.015)
    assert list(every.table["pair"][:4]) == ["lgbm > svm", "lgbm > xgb", "lgbm > dt", "lgbm > lda"]
    sub = bayesian_sign_test(base[["db", "lgbm", "svm"]], dataset="db", seed=9, n_samples=20_000)
    assert sub.table.iloc[0][cols].tolist() == row[cols].tolist()  # other pairs do not matter


def test_posterior_draws_give_the_table(base):
    res = bayesian_sign_test(base, dataset="db", seed=4, n_samples=10_000, draws="fixed")
    for row in res.table.itertuples():
        theta = res.posterior(row.alg_a, row.alg_b).to_numpy()
        assert theta.shape == (10_000, 3)
        np.testing.assert_allclose(theta.sum(axis=1), 1.0)
        shares = np.bincount(theta.argmax(axis=1), minlength=3) / len(theta)
        assert shares.tolist() == pytest.approx([row.p_left, row.p_rope, row.p_right], abs=1e-12)
        mirrored = res.posterior(row.alg_b, row.alg_a).to_numpy()
        np.testing.assert_array_equal(mirrored, theta[:, ::-1])
    with pytest.raises(ValueError, match="holds 10 pairs: name one with a= and b="):
        res.posterior()
    with pytest.raises(ValueError, match="no test of 'rf' vs 'dt'"):
        res.posterior("rf", "dt")


def test_lower_is_better_mirrors_and_missing_results_shrink_n(base):
    cols = ["dt", "lda", "lgbm", "xgb", "svm"]
    errors = base.copy()
    errors[cols] = 1 - errors[cols]
    res = bayesian_sign_test(errors, dataset="db", lower_is_better=True, seed=3, n_samples=4000)
    ref = bayesian_sign_test(base, dataset="db", seed=3, n_samples=4000)
    pd.testing.assert_frame_equal(res.table, ref.table)
    gappy = base.copy()
    gappy.loc[gappy["db"] == "cmc", "svm"] = np.nan
    t = bayesian_sign_test(gappy, dataset="db", a="lgbm", b="svm", seed=3, n_samples=1000).table
    assert t.iloc[0]["n"] == 19 and t.iloc[0][["n_left", "n_rope", "n_right"]].sum() == 19


def test_pairs_that_never_met_have_no_probabilities(two_groups):
    t = bayesian_sign_test(two_groups, dataset="db", seed=1, n_samples=1000).table.set_index("pair")
    never = t[t["n"] == 0]
    assert len(never) == 4 and never[["p_left", "p_rope", "p_right"]].isna().all().all()
    assert (never["decision"] == "no claim").all()


def test_sign_and_signed_rank_share_the_pair_rules(base):
    sign = bayesian_sign_test(base, dataset="db", a="dt", b="lgbm", seed=2, n_samples=2000)
    bsr = bayesian_signed_rank(base, dataset="db", a="dt", b="lgbm", seed=2, n_samples=2000)
    assert sign.table["pair"].tolist() == bsr.table["pair"].tolist() == ["dt > lgbm"]
    assert sign.table.iloc[0]["decision"] == bsr.table.iloc[0]["decision"] == "b better"


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"a": "lgbm"}, ValueError, "name both algorithms of the pair"),
        ({"a": "lgbm", "b": "lgbm"}, ValueError, "same algorithm"),
        ({"a": "lgbm", "b": "rf"}, ValueError, "'rf' is not an algorithm"),
        ({"rope": -0.01}, ValueError, "rope must be a finite number >= 0"),
        ({"rope": "0.01"}, TypeError, "rope must be a number"),
        ({"prior_strength": -1}, ValueError, "prior_strength must be a finite number >= 0"),
        ({"prior_place": "middle"}, ValueError, "unknown prior_place 'middle'"),
        ({"n_samples": 0}, ValueError, "n_samples must be an integer >= 1"),
        ({"seed": -3}, ValueError, "seed must be an integer"),
    ],
)
def test_bad_arguments_are_named(base, kwargs, error, match):
    with pytest.raises(error, match=match):
        bayesian_sign_test(base, dataset="db", **kwargs)


def test_prior_place_moves_the_pseudo_observation(base):
    kw = {"dataset": "db", "a": "lgbm", "b": "svm", "seed": 1, "n_samples": 20_000}
    rope = bayesian_sign_test(base, **kw).table.iloc[0]
    left = bayesian_sign_test(base, prior_place="left", prior_strength=5, **kw).table.iloc[0]
    assert left.p_left > rope.p_left and left.p_rope < rope.p_rope
