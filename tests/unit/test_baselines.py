"""Standard comparisons next to BBT (paper Sec. 7): Friedman/Nemenyi, pairwise Wilcoxon, the
Bayesian signed-rank test, the agreement table and the CD diagram.

References: scipy; R's semantics written out by hand; the paper's Tables 13, 14 and 15 on
the base results; scikit-posthocs, baycomp and statsmodels where installed.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bbt_widget as bbt
from bbt_widget.baselines import (
    IncompleteBlocksWarning,
    NemenyiResult,
    agreement,
    bayesian_signed_rank,
    friedman,
    hochberg,
    holm,
    nemenyi,
    scores_cd_diagram,
    wilcoxon_holm,
)
from bbt_widget.baselines._signed_rank import (
    dirichlet_weights,
    posterior_thetas,
    region_probabilities,
)
from bbt_widget.baselines._wilcoxon import signed_rank_test

BASE_ORDER_BY_MEDIAN = ["lgbm", "svm", "xgb", "dt", "lda"]  # paper Table 14a


def _clean_means(base: pd.DataFrame) -> pd.DataFrame:
    """Per-data-set means with floating-point noise rounded away (what the module uses)."""
    return base.groupby("db", sort=False).mean().round(12)


def _row(table: pd.DataFrame, a: str, b: str) -> pd.Series:
    """The row of the pair {a, b}, whichever way the method ordered it."""
    hit = ((table["alg_a"] == a) & (table["alg_b"] == b)) | (
        (table["alg_a"] == b) & (table["alg_b"] == a)
    )
    return table[hit].iloc[0]


def _long(wide: pd.DataFrame) -> pd.DataFrame:
    return wide.melt(id_vars="db", var_name="alg", value_name="acc")


# --------------------------------------------------------------------------- Friedman


def test_friedman_is_scipys_on_the_noise_free_means(base):
    res = friedman(base, dataset="db")
    ref = stats.friedmanchisquare(*_clean_means(base).to_numpy().T)
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-12)
    assert res.df == 4 and res.n_datasets == 20 and res.dropped == ()
    # paper Sec. 7.1: "the Friedman test ... results in a p-value <= 0.05 for the base results"
    assert res.pvalue <= 0.05


def test_friedman_iman_davenport_by_hand(base):
    res = friedman(base, dataset="db")
    n, k, chi2 = 20, 5, res.statistic
    f = (n - 1) * chi2 / (n * (k - 1) - chi2)
    assert res.iman_davenport == pytest.approx(f)
    assert res.iman_davenport_pvalue == pytest.approx(stats.f.sf(f, k - 1, (k - 1) * (n - 1)))


def test_friedman_drops_incomplete_data_sets_and_says_so(base):
    gappy = base.copy()
    gappy.loc[gappy["db"].isin(["biomed", "breast"]), "xgb"] = np.nan
    with pytest.warns(IncompleteBlocksWarning, match=r"dropped 2 data set.*'biomed', 'breast'"):
        res = friedman(gappy, dataset="db")
    assert res.dropped == ("biomed", "breast") and res.n_datasets == 18
    complete = friedman(base[~base["db"].isin(["biomed", "breast"])], dataset="db")
    assert res.statistic == pytest.approx(complete.statistic)


def test_a_partly_missing_data_set_keeps_its_other_folds(base):
    # one missing fold is not a missing result: the mean uses the folds that are there
    gappy = base.copy()
    gappy.loc[gappy.index[0], "xgb"] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert friedman(gappy, dataset="db").n_datasets == 20


def test_friedman_refuses_two_algorithms_and_too_few_complete_data_sets(base):
    with pytest.raises(ValueError, match=r"at least 3 algorithms.*wilcoxon_holm"):
        friedman(base[["db", "dt", "lda"]], dataset="db")
    sparse = base.copy()
    sparse.loc[sparse["db"] != "biomed", "svm"] = np.nan
    with pytest.raises(ValueError, match=r"only 1 of 20.*'svm', 19 data sets"):
        friedman(sparse, dataset="db")


def test_identical_algorithms_give_no_evidence_and_no_warning():
    same = pd.DataFrame({"a": [0.5, 0.6, 0.7], "b": [0.5, 0.6, 0.7], "c": [0.5, 0.6, 0.7]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = friedman(same)
        w = wilcoxon_holm(same).table
        b = bayesian_signed_rank(same, seed=1, n_samples=1000).table
    assert (f.statistic, f.pvalue, f.iman_davenport_pvalue) == (0.0, 1.0, 1.0)
    assert (w["pvalue"] == 1.0).all() and (w["decision"] == "no claim").all()
    assert (b["p_rope"] == 1.0).all() and (b["decision"] == "equivalent").all()


# --------------------------------------------------------------------------- Nemenyi


def test_q_alpha_from_scipy_matches_demsars_table():
    # Demšar (2006), Table 5a: q_0.05 for k = 3..10 (from 3-decimal studentized-range tables)
    table = [2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]
    for k, q in zip(range(3, 11), table):
        data = pd.DataFrame(np.random.default_rng(k).random((6, k)))
        assert nemenyi(data).q_alpha == pytest.approx(q, abs=1e-3), k


def test_nemenyi_reproduces_paper_table_13(base):
    res = nemenyi(base, dataset="db")
    # Table 13, in its order; "yes" marks a significant difference
    table_13 = {
        "xgb > lgbm": False,
        "xgb > svm": False,
        "xgb > lda": False,
        "xgb > dt": True,
        "lgbm > svm": False,
        "lgbm > lda": False,
        "lgbm > dt": True,
        "svm > lda": False,
        "svm > dt": True,
        "lda > dt": False,
    }
    assert list(res.table["pair"]) == list(table_13)
    assert dict(zip(res.table["pair"], res.table["significant"])) == table_13
    assert res.cd == pytest.approx(2.7277743708703763 * np.sqrt(5 * 6 / (6 * 20)))
    assert list(res.table["decision"].unique()) == ["no claim", "a better"]
    assert res.friedman.pvalue == friedman(base, dataset="db").pvalue


def test_nemenyi_ranks_by_hand_with_ties(base):
    ranks = stats.rankdata(-_clean_means(base).to_numpy(), axis=1).mean(axis=0)
    expected = dict(zip(["dt", "lda", "lgbm", "xgb", "svm"], ranks))
    res = nemenyi(base, dataset="db")
    assert res.mean_ranks.to_dict() == pytest.approx(expected)
    # the equal means of lgbm and xgb on breast_w and colic (fold sums 1008/350 and 300/92
    # for both) are tied ranks: xgb 2.30, lgbm 2.35; ordered best first
    assert list(res.mean_ranks.index) == ["xgb", "lgbm", "svm", "lda", "dt"]
    assert res.mean_ranks["lda"] == pytest.approx(3.45)


def test_nemenyi_pvalues_match_scikit_posthocs(base, pmlb16):
    sp = pytest.importorskip("scikit_posthocs")
    for data in (base, pmlb16):
        means = _clean_means(data)
        res = nemenyi(data, dataset="db")
        ref = sp.posthoc_nemenyi_friedman(means.to_numpy())
        ref.index = ref.columns = list(means.columns)
        for a, b, p in zip(res.table["alg_a"], res.table["alg_b"], res.table["pvalue"]):
            assert p == pytest.approx(ref.loc[a, b], abs=1e-9), (a, b)


def test_nemenyi_groups_are_the_maximal_runs_within_the_cd():
    table = pd.DataFrame(
        [
            [5, 4, 3, 2, 1, 0],
            [5, 4, 3, 2, 1, 0],
            [4, 5, 3, 2, 0, 1],
            [5, 3, 4, 1, 2, 0],
        ],
        columns=list("abcdef"),
        dtype=float,
    )
    res = nemenyi(table)
    r, cd = res.mean_ranks, res.cd
    groups = res.groups()
    for g in groups:  # within a group nothing differs, and the next algorithm would
        assert r[list(g)].max() - r[list(g)].min() <= cd
    names = list(r.index)
    for g in groups:
        after = names.index(g[-1]) + 1
        if after < len(names):
            assert r.iloc[after] - r[g[0]] > cd
    significant = set(res.table.loc[res.table["significant"], "pair"])
    together = {f"{x} > {y}" for g in groups for i, x in enumerate(g) for y in g[i + 1 :]}
    assert significant.isdisjoint(together)
    assert set(res.table["pair"]) == significant | together


def test_nemenyi_lower_is_better_is_the_mirror(base):
    errors = base.copy()
    errors[["dt", "lda", "lgbm", "xgb", "svm"]] = 1 - errors[["dt", "lda", "lgbm", "xgb", "svm"]]
    res = nemenyi(errors, dataset="db", lower_is_better=True)
    ref = nemenyi(base, dataset="db")
    pd.testing.assert_frame_equal(res.table, ref.table)


# --------------------------------------------------------------------------- Wilcoxon


def _r_wilcox_normal(d: np.ndarray) -> float:
    """R's wilcox.test(paired = TRUE) normal branch, written out (stats/R/wilcox.test.R)."""
    x = d[d != 0]
    n = len(x)
    r = stats.rankdata(np.abs(x))
    v = r[x > 0].sum()
    _, nties = np.unique(r, return_counts=True)
    z = v - n * (n + 1) / 4
    sigma = np.sqrt(n * (n + 1) * (2 * n + 1) / 24 - (nties**3 - nties).sum() / 48)
    z = (z - np.sign(z) * 0.5) / sigma
    return 2 * min(stats.norm.cdf(z), stats.norm.sf(z))


def test_signed_rank_test_follows_r_wilcox_test():
    rng = np.random.default_rng(1)
    clean = rng.normal(0.01, 0.03, 20)
    exact = signed_rank_test(clean)
    assert exact["method"] == "exact"
    assert exact["pvalue"] == pytest.approx(stats.wilcoxon(clean, method="exact").pvalue)
    assert exact["r_plus"] + exact["r_minus"] == 20 * 21 / 2
    # a zero difference, or tied |differences|, switch R to the corrected normal form
    for d in (np.r_[clean, 0.0], np.r_[clean, clean[:3]], np.r_[-clean[:5], clean[:5]]):
        res = signed_rank_test(d)
        assert res["method"] == "normal"
        assert res["pvalue"] == pytest.approx(_r_wilcox_normal(d), rel=1e-12)
    big = rng.normal(0.01, 0.03, 60)  # R: exact only below 50 non-zero differences
    assert signed_rank_test(big)["method"] == "normal"
    assert signed_rank_test(big)["pvalue"] == pytest.approx(_r_wilcox_normal(big), rel=1e-12)


def test_signed_rank_test_edge_cases():
    assert signed_rank_test(np.zeros(5))["pvalue"] == 1.0  # tied everywhere: no evidence
    assert np.isnan(signed_rank_test(np.full(4, np.nan))["pvalue"])  # never met
    assert signed_rank_test(np.r_[0.1, np.nan, -0.2])["n"] == 2


def _holm_by_definition(p):
    """Holm (1979): adjusted p_(i) = max over j <= i of min(1, (m - j + 1) p_(j))."""
    m, o = len(p), np.argsort(p)
    adj = [max(min(1, (m - j) * p[o[j]]) for j in range(i + 1)) for i in range(m)]
    return np.array(adj)[np.argsort(o)]


def _hochberg_by_definition(p):
    """Hochberg (1988): adjusted p_(i) = min over j >= i of min(1, (m - j + 1) p_(j))."""
    m, o = len(p), np.argsort(p)
    adj = [min(min(1, (m - j) * p[o[j]]) for j in range(i, m)) for i in range(m)]
    return np.array(adj)[np.argsort(o)]


def test_holm_and_hochberg_by_hand():
    # R: p.adjust(c(.01, .02, .03, .04, .05), "holm") and "hochberg"
    p = np.array([0.01, 0.02, 0.03, 0.04, 0.05])
    assert holm(p) == pytest.approx([0.05, 0.08, 0.09, 0.09, 0.09])
    assert hochberg(p) == pytest.approx([0.05] * 5)
    p_nan = np.array([0.04, np.nan, 0.01])  # NaN kept out, as R's p.adjust
    assert holm(p_nan)[[0, 2]] == pytest.approx([0.04, 0.02]) and np.isnan(holm(p_nan)[1])
    rng = np.random.default_rng(0)
    for _ in range(50):
        p = rng.uniform(0, 0.2, 12) ** 2
        assert holm(p) == pytest.approx(_holm_by_definition(p))
        assert hochberg(p) == pytest.approx(_hochberg_by_definition(p))


def test_wilcoxon_reproduces_paper_table_14(base):
    res = wilcoxon_holm(base, dataset="db", adjust="hochberg")
    # Table 14a: order by median, medians to 2 decimals
    assert list(res.medians.index) == BASE_ORDER_BY_MEDIAN
    assert res.medians.round(2).tolist() == [0.93, 0.93, 0.93, 0.87, 0.85]
    t = res.table.set_index("pair")
    # Table 14b, in its order: only lgbm > dt and xgb > dt are significant
    assert list(t.index) == [
        "lgbm > svm",
        "lgbm > xgb",
        "lgbm > dt",
        "lgbm > lda",
        "svm > xgb",
        "svm > dt",
        "svm > lda",
        "xgb > dt",
        "xgb > lda",
        "dt > lda",
    ]
    assert set(t.index[t["significant"]]) == {"lgbm > dt", "xgb > dt"}
    assert set(t.loc[t["significant"], "decision"]) == {"a better"}
    # the adjusted p-values that no floating-point tie touches are the paper's
    for pair, p in {
        "lgbm > dt": 0.00,
        "lgbm > lda": 0.47,
        "svm > dt": 0.11,
        "xgb > dt": 0.00,
    }.items():
        assert round(t.loc[pair, "p_hochberg"], 2) == p, pair
    # the others differ (0.47 vs 0.46 for svm > lda and xgb > lda; 0.93 vs 0.98 for the
    # four capped pairs): exactly equal means count as ties here; see the next test
    assert t.loc["svm > lda", "p_hochberg"] == pytest.approx(0.4745, abs=1e-3)
    assert t.loc["lgbm > xgb", "p_hochberg"] == pytest.approx(0.9321, abs=1e-3)


def test_table_14_deviations_come_from_floating_point_ties(base):
    # The paper's R code compared plain float means. The same R semantics on plain float
    # means (pandas') reproduce Table 14 except the largest p (lgbm vs xgb: 0.96 vs 0.98),
    # which depends on the sign of 1e-16 "differences" between equal means: R's mean()
    # (long double accumulation) rounds them differently again.
    means = base.groupby("db", sort=False).mean()
    order = BASE_ORDER_BY_MEDIAN
    pairs = [(order[i], order[j]) for i in range(5) for j in range(i + 1, 5)]
    p = np.array([signed_rank_test((means[a] - means[b]).to_numpy())["pvalue"] for a, b in pairs])
    got = dict(zip([f"{a} > {b}" for a, b in pairs], np.round(hochberg(p), 2)))
    paper = {
        "lgbm > svm": 0.98,
        "lgbm > xgb": 0.98,
        "lgbm > dt": 0.00,
        "lgbm > lda": 0.47,
        "svm > xgb": 0.98,
        "svm > dt": 0.11,
        "svm > lda": 0.46,
        "xgb > dt": 0.00,
        "xgb > lda": 0.46,
        "dt > lda": 0.98,
    }
    same = {k for k in paper if got[k] == paper[k]}
    assert same == {"lgbm > dt", "lgbm > lda", "svm > dt", "svm > lda", "xgb > dt", "xgb > lda"}
    assert {got[k] for k in set(paper) - same} == {0.96}


def test_wilcoxon_uses_the_data_sets_both_algorithms_have(base):
    gappy = base.copy()
    gappy.loc[gappy["db"].isin(["biomed", "breast", "cmc"]), "svm"] = np.nan
    gappy.loc[gappy["db"] == "cmc", "dt"] = np.nan
    t = wilcoxon_holm(gappy, dataset="db").table
    assert _row(t, "lgbm", "svm")["n"] == 17 and _row(t, "lgbm", "xgb")["n"] == 20
    assert _row(t, "svm", "dt")["n"] == 17 and _row(t, "lgbm", "dt")["n"] == 19
    ref = wilcoxon_holm(base[~base["db"].isin(["biomed", "breast", "cmc"])], dataset="db")
    assert _row(t, "lgbm", "svm")["pvalue"] == pytest.approx(
        _row(ref.table, "lgbm", "svm")["pvalue"]
    )


def test_wilcoxon_is_the_same_on_errors_as_on_accuracies(pmlb16):
    # 1 - accuracy changes the last bits of every difference; ties must stay ties
    cols = [c for c in pmlb16.columns if c != "db"]
    errors = pmlb16.copy()
    errors[cols] = 1 - errors[cols]
    ours = wilcoxon_holm(errors, dataset="db", lower_is_better=True)
    ref = wilcoxon_holm(pmlb16, dataset="db")
    pd.testing.assert_frame_equal(ours.table, ref.table)
    assert ours.medians.to_numpy() == pytest.approx(1 - ref.medians.to_numpy())


def test_wilcoxon_pair_that_never_met_is_left_out_of_the_adjustment():
    data = pd.DataFrame(
        {
            "a": [0.9, 0.8, 0.7, np.nan, np.nan],
            "b": [np.nan, np.nan, np.nan, 0.6, 0.7],
            "c": [0.5, 0.6, 0.4, 0.5, 0.3],
        }
    )
    t = wilcoxon_holm(data).table.set_index("pair")
    never = t.loc[next(p for p in t.index if set(p.split(" > ")) == {"a", "b"})]
    assert never["n"] == 0 and np.isnan(never["pvalue"]) and np.isnan(never["p_holm"])
    assert not never["significant"] and never["decision"] == "no claim"
    met = t.dropna(subset=["pvalue"])
    assert met["p_holm"].tolist() == pytest.approx(holm(met["pvalue"].to_numpy()))


def test_wilcoxon_decides_by_the_larger_rank_sum():
    rng = np.random.default_rng(3)
    a = rng.uniform(0.7, 0.9, 30)
    data = pd.DataFrame({"a": a, "b": a - 0.05 + rng.normal(0, 0.005, 30), "c": a - 0.2})
    t = wilcoxon_holm(data).table.set_index("pair")
    assert t.loc["a > b", "decision"] == "a better" and t.loc["a > c", "decision"] == "a better"
    assert (t["r_plus"] > t["r_minus"]).all()


# --------------------------------------------------------------------------- BSR


def test_posterior_samples_equal_baycomps_on_the_same_weights():
    baycomp = pytest.importorskip("baycomp")
    rng = np.random.default_rng(5)
    x = rng.normal(0.8, 0.05, 25)
    y = x + rng.normal(0.004, 0.02, 25)
    ref = baycomp.SignedRankTest.sample(x, y, 0.01, nsamples=4000, random_state=7)
    weights = np.random.RandomState(7).dirichlet(np.r_[0.5, np.ones(25)], 4000)
    ours = posterior_thetas(y - x, weights, 0.01)  # z = b - a, as baycomp's y - x
    np.testing.assert_allclose(ours, ref, atol=1e-12)
    probs = region_probabilities(y - x, np.ascontiguousarray(weights.T), (0.01,))[0]
    ref_probs = baycomp.SignedRankTest.probs(x, y, 0.01, nsamples=4000, random_state=7)
    assert probs == pytest.approx(ref_probs, abs=1e-12)


def test_bsr_closed_form_with_one_observation():
    # z = (0, 1): theta_rope = w0^2, theta_right = 1 - w0^2 with w0 ~ Beta(0.5, 1), so
    # P(right is most probable) = P(w0 < 2^-1/2) = 2^-1/4
    w = dirichlet_weights(1, 0.5, 200_000, seed=11)
    p = region_probabilities(np.array([1.0]), w, (0.01,))[0]
    assert p[2] == pytest.approx(2**-0.25, abs=0.004)
    assert p[0] == 0 and p[1] == pytest.approx(1 - 2**-0.25, abs=0.004)


def test_bsr_reproduces_paper_table_15(base):
    res = bayesian_signed_rank(base, dataset="db", seed=2023, n_samples=100_000)
    t = res.table.set_index("pair")
    # Table 15: name -> (above0, in.rope, above.rope), scmamp's bSignedRankTest with its
    # default 1000 samples; our p_left_0, p_rope, p_left (left = the first is better)
    table_15 = {
        "lgbm > svm": (0.69, 0.62, 0.33),
        "lgbm > xgb": (0.51, 1.00, 0.00),
        "lgbm > dt": (1.00, 0.00, 1.00),
        "lgbm > lda": (0.96, 0.01, 0.97),
        "svm > xgb": (0.21, 0.61, 0.05),
        "svm > dt": (1.00, 0.00, 1.00),
        "svm > lda": (0.98, 0.03, 0.94),
        "xgb > dt": (1.00, 0.00, 1.00),
        "xgb > lda": (0.97, 0.02, 0.96),
        "dt > lda": (0.20, 0.00, 0.23),
    }
    assert list(t.index) == list(table_15)
    for pair, paper in table_15.items():
        ours = t.loc[pair, ["p_left_0", "p_rope", "p_left"]].to_numpy(dtype=float)
        # 3 Monte Carlo standard errors of the paper's 1000 samples, plus its rounding
        tol = 3 * np.sqrt(np.clip(ours * (1 - ours), 0.01, None) / 1000) + 0.005
        assert np.all(np.abs(ours - np.array(paper)) <= tol), (pair, ours, paper)
    assert res.rope == 0.01 and res.prior_strength == 0.5 and res.seed == 2023


def test_bsr_is_seeded_and_a_pair_does_not_depend_on_the_others(base):
    one = bayesian_signed_rank(base, dataset="db", seed=5, n_samples=5000).table
    two = bayesian_signed_rank(base, dataset="db", seed=5, n_samples=5000).table
    pd.testing.assert_frame_equal(one, two)
    sub = bayesian_signed_rank(base[["db", "lgbm", "dt"]], dataset="db", seed=5, n_samples=5000)
    full = one.set_index("pair").loc["lgbm > dt"]
    assert sub.table.iloc[0][["p_left", "p_rope", "p_right"]].tolist() == pytest.approx(
        full[["p_left", "p_rope", "p_right"]].tolist()
    )
    drawn = bayesian_signed_rank(base, dataset="db", n_samples=100)
    assert isinstance(drawn.seed, int)


def test_bsr_of_one_pair_is_its_row_and_its_draws_give_the_table(base):
    every = bayesian_signed_rank(base, dataset="db", seed=6, n_samples=8000)
    row = every.table.set_index("pair").loc["lgbm > svm"]
    one = bayesian_signed_rank(base, dataset="db", a="svm", b="lgbm", seed=6, n_samples=8000)
    mine = one.table.iloc[0]
    assert (mine["pair"], mine["n"]) == ("svm > lgbm", row["n"])
    assert mine[["p_left", "p_rope", "p_right"]].tolist() == pytest.approx(
        row[["p_right", "p_rope", "p_left"]].tolist(), abs=1e-12
    )
    for res, (a, b) in ((every, ("lgbm", "svm")), (one, ("svm", "lgbm"))):
        theta = res.posterior(a, b).to_numpy()
        np.testing.assert_allclose(theta.sum(axis=1), 1.0)
        shares = np.bincount(theta.argmax(axis=1), minlength=3) / len(theta)
        r = res.table.iloc[0] if res is one else row
        assert shares.tolist() == pytest.approx(
            r[["p_left", "p_rope", "p_right"]].tolist(), abs=1e-12
        )
    # the same draws summed in another order
    np.testing.assert_allclose(
        every.posterior("svm", "lgbm").to_numpy(), one.posterior().to_numpy(), atol=1e-12
    )
    with pytest.raises(ValueError, match="name both algorithms"):
        bayesian_signed_rank(base, dataset="db", b="svm")


def test_bsr_probabilities_and_decisions(base):
    t = bayesian_signed_rank(base, dataset="db", seed=1, n_samples=20_000).table
    sums = t[["p_left", "p_rope", "p_right"]].sum(axis=1)
    assert sums.to_numpy() == pytest.approx(1.0)
    assert (t["p_left_0"] + t["p_right_0"] <= 1 + 1e-12).all()
    d = t.set_index("pair")["decision"]
    assert d["lgbm > dt"] == "a better" and d["lgbm > xgb"] == "equivalent"
    assert d["lgbm > svm"] == "no claim"


def test_bsr_lower_is_better_mirrors_and_missing_results_shrink_n(base):
    cols = ["dt", "lda", "lgbm", "xgb", "svm"]
    errors = base.copy()
    errors[cols] = 1 - errors[cols]
    res = bayesian_signed_rank(errors, dataset="db", lower_is_better=True, seed=3, n_samples=4000)
    ref = bayesian_signed_rank(base, dataset="db", seed=3, n_samples=4000)
    pd.testing.assert_frame_equal(res.table, ref.table)
    assert res.medians.round(6).tolist() == (1 - ref.medians).round(6).tolist()
    gappy = base.copy()
    gappy.loc[gappy["db"] == "cmc", "svm"] = np.nan
    t = bayesian_signed_rank(gappy, dataset="db", seed=3, n_samples=1000).table
    assert _row(t, "lgbm", "svm")["n"] == 19


# --------------------------------------------------------------------------- validation


def test_data_errors_are_data_pys(base):
    with pytest.raises(ValueError) as ours:
        friedman(base, dataset="dataset")
    with pytest.raises(ValueError) as theirs:
        bbt.win_table(base, dataset="dataset")
    assert str(ours.value) == str(theirs.value) and "'db'" in str(ours.value)
    for fn in (nemenyi, wilcoxon_holm, bayesian_signed_rank, scores_cd_diagram):
        with pytest.raises(ValueError, match="long-form results need both"):
            fn(base, dataset="db", algorithm="alg")


def test_option_errors_name_the_fix(base):
    with pytest.raises(ValueError, match=r"alpha must lie strictly between 0 and 1"):
        nemenyi(base, dataset="db", alpha=5)
    with pytest.raises(ValueError, match=r"unknown adjust 'bonferroni'; use one of 'holm'"):
        wilcoxon_holm(base, dataset="db", adjust="bonferroni")
    with pytest.raises(ValueError, match=r"rope must be a finite number >= 0"):
        bayesian_signed_rank(base, dataset="db", rope=-0.01)
    with pytest.raises(ValueError, match=r"n_samples must be an integer >= 1"):
        bayesian_signed_rank(base, dataset="db", n_samples=0)
    with pytest.raises(ValueError, match=r"prior_strength must be > 0"):
        bayesian_signed_rank(base, dataset="db", prior_strength=0)
    with pytest.raises(ValueError, match=r"seed must be an integer"):
        bayesian_signed_rank(base, dataset="db", seed=-1)


def test_every_layout_gives_the_same_answer_and_sd_is_ignored(base):
    means = base.groupby("db", sort=False).mean()
    sd = base.groupby("db", sort=False).std()
    ref = nemenyi(base, dataset="db").table
    pd.testing.assert_frame_equal(nemenyi(means).table, ref)
    pd.testing.assert_frame_equal(nemenyi(means, sd=sd).table, ref)
    long = _long(base)
    long["fold"] = long.groupby(["db", "alg"]).cumcount()
    pd.testing.assert_frame_equal(
        nemenyi(long, dataset="db", algorithm="alg", score="acc", fold="fold").table, ref
    )
    w = wilcoxon_holm(means, sd=sd).table
    pd.testing.assert_frame_equal(w, wilcoxon_holm(base, dataset="db").table)


# --------------------------------------------------------------------------- agreement


class FakeResult:
    """Stands in for a BBT fit: ``summary(rope=, hdi=)`` with the real column layout."""

    def __init__(self, rows, lower_is_better=False):
        self.rows = rows
        self.settings = {"lower_is_better": lower_is_better}
        self.calls = []

    def summary(self, rope=(0.45, 0.55), hdi=0.89):
        self.calls.append((rope, hdi))
        t = pd.DataFrame(self.rows, columns=["alg_a", "alg_b", "above_50", "in_rope", "weak"])
        t.insert(0, "pair", t["alg_a"] + " > " + t["alg_b"])
        t["strong"] = "no claim"
        for col in ("mean", "median", "low", "high", "delta"):
            t[col] = 0.5
        return t


# BBT-like order (xgb best); dt > svm on purpose runs against every baseline's order
BASE_FAKE = [
    ("xgb", "lgbm", 0.56, 0.49, "no claim"),
    ("xgb", "svm", 0.82, 0.37, "no claim"),
    ("xgb", "lda", 1.00, 0.01, "a better"),
    ("xgb", "dt", 1.00, 0.00, "a better"),
    ("lgbm", "svm", 0.77, 0.40, "no claim"),
    ("lgbm", "lda", 1.00, 0.01, "a better"),
    ("lgbm", "dt", 1.00, 0.00, "a better"),
    ("svm", "lda", 0.99, 0.05, "a better"),
    ("dt", "svm", 0.01, 0.00, "b better"),
    ("lda", "dt", 0.50, 0.96, "equivalent"),
]


def test_agreement_puts_each_baseline_next_to_bbt(base):
    fake = FakeResult(BASE_FAKE)
    res = agreement(base, fake, dataset="db", rope=(0.4, 0.6), hdi=0.9, seed=1, n_samples=4000)
    assert fake.calls == [((0.4, 0.6), 0.9)]
    t = res.table.set_index("pair")
    assert list(t.index) == [f"{a} > {b}" for a, b, *_ in BASE_FAKE]
    nem = res.nemenyi.table.set_index("pair")
    wil = res.wilcoxon.table.set_index("pair")
    bsr = res.bsr.table.set_index("pair")
    # same orientation: copied
    assert t.loc["xgb > dt", "nemenyi"] == "a better" == nem.loc["xgb > dt", "decision"]
    assert t.loc["lgbm > dt", "wilcoxon"] == wil.loc["lgbm > dt", "decision"]
    assert t.loc["lgbm > dt", "bsr_p_left"] == bsr.loc["lgbm > dt", "p_left"]
    # reversed orientation: decisions flipped, rank difference negated, left/right swapped
    assert t.loc["dt > svm", "nemenyi"] == "b better" and nem.loc["svm > dt", "significant"]
    assert t.loc["dt > svm", "nemenyi_rank_diff"] == -nem.loc["svm > dt", "rank_diff"]
    assert t.loc["dt > svm", "bsr_p_left"] == bsr.loc["svm > dt", "p_right"]
    assert t.loc["dt > svm", "bsr"] == "b better"
    assert t.loc["dt > svm", "wilcoxon_p"] == wil.loc["svm > dt", "p_holm"]
    assert t.loc["xgb > lgbm", "bsr_p_right"] == bsr.loc["lgbm > xgb", "p_left"]
    # the Bayesian sign test joins the same way, on the same ROPE, draws and seed
    sign = res.sign.table.set_index("pair")
    assert res.sign.rope == 0.01 and res.sign.n_samples == 4000 and res.sign.seed == 1
    assert t.loc["lgbm > dt", "sign_p_left"] == sign.loc["lgbm > dt", "p_left"]
    assert t.loc["dt > svm", "sign_p_left"] == sign.loc["svm > dt", "p_right"]
    assert t.loc["dt > svm", "sign"] == "b better" == "b" + sign.loc["svm > dt", "decision"][1:]
    assert t.loc["xgb > lgbm", "sign_p_rope"] == sign.loc["lgbm > xgb", "p_rope"]
    assert "sign" in set(res.counts["baseline"])
    assert t.loc["lda > dt", "bbt"] == "equivalent"
    assert t.loc["xgb > lda", "bbt_above_50"] == 1.0


def test_agreement_counts_follow_the_paper_reading(base):
    res = agreement(base, FakeResult(BASE_FAKE), dataset="db", seed=1, n_samples=4000)
    c = res.counts.set_index("baseline")
    nem = c.loc["nemenyi"]
    # Nemenyi finds xgb>dt, lgbm>dt, svm>dt; this fake BBT claims 7 pairs, all three included
    assert nem["pairs"] == 10 and nem["agree"] == 3 + 3  # 3 differences + 3 "no claim"
    assert nem["only_bbt"] == 4 and nem["only_baseline"] == 0 and nem["conflict"] == 0
    for _, row in c.iterrows():
        assert row["agree"] + row["only_bbt"] + row["only_baseline"] + row["conflict"] <= 10
    assert list(res.rankings["nemenyi"]) == ["xgb", "lgbm", "svm", "lda", "dt"]
    assert list(res.rankings["wilcoxon"]) == BASE_ORDER_BY_MEDIAN
    assert list(res.rankings["bbt"]) == ["xgb", "lgbm", "svm", "dt", "lda"]


def test_agreement_compares_only_the_fitted_algorithms(base):
    three = [
        r for r in BASE_FAKE if r[0] in {"xgb", "lgbm", "dt"} and r[1] in {"xgb", "lgbm", "dt"}
    ]
    res = agreement(base, FakeResult(three), dataset="db", seed=1, n_samples=1000)
    assert set(res.nemenyi.mean_ranks.index) == {"xgb", "lgbm", "dt"}
    assert len(res.table) == 3


def test_agreement_errors(base):
    with pytest.raises(ValueError, match="fitted with lower_is_better=True"):
        agreement(base, FakeResult(BASE_FAKE, lower_is_better=True), dataset="db")
    with pytest.raises(ValueError, match="compares 'rf', which is not an algorithm"):
        agreement(base, FakeResult([("rf", "dt", 0.9, 0.0, "no claim")]), dataset="db")
    with pytest.raises(TypeError, match="with a summary\\(\\) method"):
        agreement(base, object(), dataset="db")

    class NoDecisions(FakeResult):
        def summary(self, rope=(0.45, 0.55), hdi=0.89):
            return super().summary(rope, hdi).drop(columns=["weak"])

    with pytest.raises(ValueError, match="lacks the column\\(s\\) 'weak'"):
        agreement(base, NoDecisions(BASE_FAKE), dataset="db")
    with pytest.raises(ValueError, match="unknown interpretation"):
        agreement(base, FakeResult(BASE_FAKE), dataset="db", interpretation="medium")
    with pytest.raises(ValueError, match="rope"):
        agreement(base, FakeResult(BASE_FAKE), dataset="db", rope=(0.6, 0.4))


@pytest.mark.stan
def test_agreement_with_a_real_fit_matches_paper_sec_7_1(base):
    result = bbt.fit(base, dataset="db", seed=7)
    res = agreement(base, result, dataset="db", seed=1, n_samples=20_000)
    t = res.table.set_index("pair")
    assert list(t.index) == list(result.summary()["pair"])
    # Sec. 7.1: BBT (weak, above.50 >= 0.95) finds every difference Demšar's procedure
    # finds, and also lgbm > lda and xgb > lda, which Demšar's does not
    nem = res.counts.set_index("baseline").loc["nemenyi"]
    assert nem["only_baseline"] == 0 and nem["conflict"] == 0
    for pair in ("xgb > dt", "lgbm > dt", "svm > dt"):
        assert t.loc[pair, "nemenyi"] == "a better" == t.loc[pair, "bbt"]
    for pair in ("lgbm > lda", "xgb > lda"):
        assert t.loc[pair, "bbt"] == "a better" and t.loc[pair, "nemenyi"] == "no claim"
    # Sec. 7.2: Wilcoxon-Hochberg finds only two differences, both BBT's too, and ranks
    # BBT's fourth and fifth algorithms the other way round
    assert res.counts.set_index("baseline").loc["wilcoxon", "only_baseline"] == 0
    assert (res.wilcoxon.table["p_hochberg"] <= 0.05).sum() == 2
    assert list(res.rankings["bbt"][3:]) == list(res.rankings["wilcoxon"][3:])[::-1]


# --------------------------------------------------------------------------- CD diagram


def _walk(node):
    if isinstance(node, dict):
        for k, v in node.items():
            yield k, v
            yield from _walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from _walk(v)


def test_cd_diagram_is_a_self_contained_spec(base):
    chart = scores_cd_diagram(base, dataset="db")
    spec = chart.to_dict()
    keys = [k for k, _ in _walk(spec)]
    assert "url" not in keys  # all data inline: renders with no network
    text = json.dumps(spec)
    assert "https://" not in text.replace(spec["$schema"], "")
    values = [v for d in spec["datasets"].values() for v in d]
    labels = {v["text"] for v in values if "text" in v}
    assert {"xgb (2.30)", "lgbm (2.35)", "svm (2.65)", "lda (3.45)", "dt (4.25)"} <= labels
    assert "CD = 1.36" in labels
    groups = [v for v in values if v.get("kind") == "group"]
    res = nemenyi(base, dataset="db")
    assert len(groups) == len(res.groups()) == 2  # {xgb, lgbm, svm, lda}, {lda, dt}
    assert res.groups() == [("xgb", "lgbm", "svm", "lda"), ("lda", "dt")]


def test_cd_diagram_accepts_a_nemenyi_result(base):
    res = nemenyi(base, dataset="db", alpha=0.1)
    assert isinstance(res, NemenyiResult)
    spec = scores_cd_diagram(res, title="base").to_dict()
    assert spec["title"] == "base"
    with pytest.raises(ValueError, match="already a Nemenyi result, so dataset cannot apply"):
        scores_cd_diagram(res, dataset="db")
    with pytest.raises(ValueError, match="so alpha cannot apply"):
        scores_cd_diagram(res, alpha=0.05)


def test_cd_diagram_renders_offline(base):
    vlc = pytest.importorskip("vl_convert")
    svg = vlc.vegalite_to_svg(scores_cd_diagram(base, dataset="db").to_dict())
    for text in ("xgb (2.30)", "dt (4.25)", "CD = 1.36", "mean rank"):
        assert text in svg


def test_hierarchical_program_data_integrates_the_nu_prior_exactly():
    """The hierarchical t-test's data integrate alpha and beta out of nu's
    prior (closed form over beta, Gauss-Legendre over alpha with the nodes and weights of
    model_data): its density of nu equals the double integral of Gamma(nu | alpha, beta) over
    the uniform alpha and beta of Eq. 15-17, for both priors. A data set with sd 0 gets the
    sd rope / sqrt(3), as baycomp."""
    from scipy import integrate, special

    from bbt_widget.baselines._cv import fold_differences
    from bbt_widget.baselines._hierarchical import NU_PRIORS, model_data
    from bbt_widget.baselines._simulate import simulate_cv_results
    from bbt_widget.core.tidy import Layout

    data = simulate_cv_results(4, 2, 5, mu0=0.02, seed=3)
    same = (data["dataset"] == "d00") & (data["algorithm"] == "b")
    data.loc[same, "score"] = 0.8  # the same score as a on every fold
    layout = Layout(dataset="dataset", algorithm="algorithm", score="score", fold="fold")
    diffs = fold_differences(data, layout, a="a", b="b", run="run", rho=None)
    for name, prior in NU_PRIORS.items():
        sd = model_data(diffs, 0.01, name)
        a, w = np.array(sd["alpha_node"]), np.array(sd["alpha_weight"])
        b1, b2 = sd["beta_low"], sd["beta_high"]
        (a1, a2), shift = prior["alpha"], prior["shift"]
        assert sd["nu_shift"] == shift and (b1, b2) == prior["beta"]
        for nu in (0.3, 2.0, 10.0, 60.0, 200.0):
            ours = (
                np.sum(
                    w * a * (special.gammaincc(a + 1, b1 * nu) - special.gammaincc(a + 1, b2 * nu))
                )
                / nu**2
                / (b2 - b1)
            )
            ref = integrate.dblquad(
                lambda b, al, nu=nu: stats.gamma.pdf(nu, al, scale=1 / b),
                a1,
                a2,
                b1,
                b2,
                epsabs=1e-14,
            )[0] / ((a2 - a1) * (b2 - b1))
            assert ours == pytest.approx(ref, rel=1e-6), (name, nu)
    assert sd["ss"][0] == pytest.approx((10 - 1) * 0.01**2 / 3)
    assert min(sd["ss"][1:]) > 0
