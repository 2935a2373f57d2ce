"""Real Stan fits through the public API, checked against the paper (Tables 5, 6, 7b)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget.core import diagnostics
from bbt_widget.outputs.methods_text import methods_text

pytestmark = pytest.mark.stan

# Paper Table 3b exactly as printed (lda-svm 5/15), passed to fit as a ready win table.
TABLE_3B = pd.DataFrame(
    [
        ("dt", "lda", 7, 14),
        ("dt", "lgbm", 2, 19),
        ("dt", "xgb", 2, 19),
        ("dt", "svm", 6, 15),
        ("lda", "lgbm", 7, 14),
        ("lda", "xgb", 6, 15),
        ("lda", "svm", 5, 15),
        ("lgbm", "xgb", 11, 10),
        ("lgbm", "svm", 11, 10),
        ("xgb", "svm", 12, 9),
    ],
    columns=["alg1", "alg2", "win1", "win2"],
)

# Paper Table 6: pair -> (mean, delta, above.50, in.rope)
TABLE_6 = {
    "xgb > lgbm": (0.51, 0.23, 0.56, 0.49),
    "xgb > svm": (0.56, 0.22, 0.82, 0.37),
    "xgb > lda": (0.72, 0.19, 1.00, 0.01),
    "xgb > dt": (0.83, 0.14, 1.00, 0.00),
    "lgbm > svm": (0.55, 0.23, 0.77, 0.40),
    "lgbm > lda": (0.71, 0.19, 1.00, 0.01),
    "lgbm > dt": (0.82, 0.14, 1.00, 0.00),
    "svm > lda": (0.66, 0.21, 0.99, 0.05),
    "svm > dt": (0.79, 0.17, 1.00, 0.00),
    "lda > dt": (0.66, 0.21, 0.99, 0.05),
}


@pytest.fixture(scope="module")
def paper_fit() -> bbt.BBTResult:
    return bbt.fit(TABLE_3B, seed=20230101)


@pytest.fixture(scope="module")
def raw_fit() -> bbt.BBTResult:
    return bbt.fit(bbt.datasets.load_base(), dataset="db", seed=7)


def test_table_6_from_the_papers_win_table(paper_fit):
    s = paper_fit.summary().set_index("pair")
    assert list(s.index) == list(TABLE_6)  # ordered best > worse, as in the paper
    for pair, (mean, delta, above, in_rope) in TABLE_6.items():
        row = s.loc[pair]
        assert row["mean"] == pytest.approx(mean, abs=0.02), pair
        assert row["delta"] == pytest.approx(delta, abs=0.03), pair
        assert row["above_50"] == pytest.approx(above, abs=0.05), pair
        assert row["in_rope"] == pytest.approx(in_rope, abs=0.05), pair


def test_table_5_ppc_coverage(paper_fit):
    ppc = paper_fit.ppc_table().set_index("hdi")["proportion"]
    assert list(ppc.index) == [0.5, 0.9, 0.95, 1.0]
    assert ppc[0.9] >= 0.9
    assert ppc[1.0] == 1.0
    assert ppc.is_monotonic_increasing


def test_raw_data_corrected_table_stays_close_to_table_6(raw_fit):
    assert raw_fit.win_table.set_index(["alg1", "alg2"]).loc[("lda", "svm"), "win1"] == 6
    s = raw_fit.summary().set_index("pair")
    for pair, (mean, _delta, above, in_rope) in TABLE_6.items():
        if pair not in s.index:  # xgb/lgbm order may flip: they are practically equal
            a, b = pair.split(" > ")
            row = s.loc[f"{b} > {a}"]
            assert 1 - row["mean"] == pytest.approx(mean, abs=0.05)
            continue
        row = s.loc[pair]
        assert row["mean"] == pytest.approx(mean, abs=0.05), pair
        assert row["above_50"] == pytest.approx(above, abs=0.05), pair
        assert row["in_rope"] == pytest.approx(in_rope, abs=0.05), pair


def test_decisions_follow_the_papers_rules(paper_fit):
    s = paper_fit.summary().set_index("pair")
    # Sec. 9.2 on Table 6: the pairs whose above.50 is >= 0.95 there are claimed better
    expected = {pair for pair, (_m, _d, above, _r) in TABLE_6.items() if above >= 0.95}
    assert set(s.index[s["weak"] == "a better"]) == expected
    assert s.loc["xgb > dt", "strong"] == "a better"
    assert s.loc["xgb > lgbm", "strong"] == "equivalent"
    assert s.loc["svm > lda", "strong"] == "no claim"


def test_summary_options_do_not_refit(paper_fit):
    draws = paper_fit.draws
    wide = paper_fit.summary(rope=(0.4, 0.6), hdi=0.95)
    assert paper_fit.draws is draws
    base = paper_fit.summary()
    assert (wide["in_rope"] >= base["in_rope"] - 1e-12).all()
    assert (wide["delta"] >= base["delta"] - 1e-12).all()
    ctrl = paper_fit.summary(control="svm")
    assert len(ctrl) == 4 and all("svm" in p for p in ctrl["pair"])
    sel = paper_fit.summary(selected=["dt", "lda", "xgb"])
    assert set(sel["pair"]) == {"xgb > lda", "xgb > dt", "lda > dt"}
    with pytest.raises(ValueError, match="'knn' is not an algorithm"):
        paper_fit.summary(control="knn")
    with pytest.raises(ValueError, match="rope low must be below rope high"):
        paper_fit.summary(rope=(0.6, 0.4))
    with pytest.raises(ValueError, match="hdi"):
        paper_fit.summary(hdi=1.5)


def test_ranking(paper_fit):
    r = paper_fit.ranking()
    assert list(r["algorithm"]) == ["xgb", "lgbm", "svm", "lda", "dt"]
    assert r["p_best"].sum() == pytest.approx(1.0)
    assert (np.diff(r["expected_rank"]) > 0).all()
    assert (r["low"] < r["mean_beta"]).all() and (r["mean_beta"] < r["high"]).all()


def test_diagnostics_idata_and_information_criteria(paper_fit):
    d = paper_fit.diagnostics()
    assert d.ok, d.messages
    # the fit's check reads the parameters' draws only; the same numbers as from the full
    # InferenceData, which it no longer builds for every fit
    assert "idata" not in vars(paper_fit)
    # (assert_equal: NaN equals NaN, as min E-BFMI is for a sampler other than NUTS)
    np.testing.assert_equal(
        d.as_dict(), diagnostics.diagnostics(paper_fit.idata, paper_fit.draws).as_dict()
    )
    assert d.max_rhat < 1.01 and d.min_ess_bulk > 400 and d.divergences == 0
    idata = paper_fit.idata
    for group in ("posterior", "posterior_predictive", "log_likelihood", "observed_data"):
        assert group in idata.groups()
    assert list(idata.posterior["beta"].coords["algorithm"].values) == paper_fit.algorithms
    # draws="auto" (the default) kept 4 chains, or 16 when a claim near its threshold could
    # settle with more
    chains = paper_fit.settings["chains_drawn"]
    assert chains in (4, 16) and idata.posterior.sizes["chain"] == chains
    assert idata.posterior.sizes["draw"] == 1000
    waic = paper_fit.waic()
    loo = paper_fit.loo()
    # deviance scale, 10 binomial observations: a few tens (paper Table 18: about 40)
    assert 20 < waic.elpd_waic < 80
    assert loo.elpd_loo == pytest.approx(waic.elpd_waic, rel=0.1)


def test_ppc_histogram_matches_the_replicates(paper_fit):
    h = paper_fit.ppc_histogram()
    per_pair = h.groupby(["alg1", "alg2"])["count"].sum()
    drawn = paper_fit.settings["chains_drawn"] * paper_fit.settings["iter_sampling"]
    assert len(per_pair) == 10 and (per_pair == drawn).all()
    obs = h.groupby(["alg1", "alg2"])["observed"].first()
    assert obs[("dt", "lgbm")] == 2


def test_missing_results_table_7(raw_fit):
    base = bbt.datasets.load_base()
    base.loc[base["db"].isin(["biomed", "breast"]), "xgb"] = np.nan
    res = bbt.fit(base, dataset="db", seed=3)
    wt = res.win_table.set_index(["alg1", "alg2"])
    assert tuple(wt.loc[("dt", "xgb"), ["win1", "win2"]]) == (2, 17)
    s = res.summary().set_index("pair")
    # paper Table 7b: lgbm > dt 0.82, xgb > dt 0.81
    assert s.loc["lgbm > dt", "mean"] == pytest.approx(0.82, abs=0.03)
    assert s.loc["xgb > dt", "mean"] == pytest.approx(0.81, abs=0.03)


def test_davidson_is_symmetric_under_swapping_players():
    table = bbt.win_table(bbt.datasets.load_base(), dataset="db", ties="davidson")
    swapped = table.rename(columns={"alg1": "alg2", "alg2": "alg1", "win1": "win2", "win2": "win1"})
    a = bbt.fit(table, ties="davidson", seed=11)
    b = bbt.fit(swapped[list(table.columns)], ties="davidson", seed=12)
    sa = a.summary().set_index("pair")["mean"]
    sb = b.summary().set_index("pair")["mean"].reindex(sa.index)
    assert np.abs(sa - sb).max() < 0.02
    nu_a = a.draws.params["nu"].mean()
    nu_b = b.draws.params["nu"].mean()
    assert nu_a == pytest.approx(nu_b, abs=0.1)
    ppc = a.ppc_table()
    assert "proportion_ties" in ppc.columns
    assert set(a.ppc_histogram()["quantity"]) == {"win1", "ties"}


@pytest.mark.parametrize("hyperprior", ["cauchy", "normal"])
def test_other_hyperpriors_give_the_same_answer(paper_fit, hyperprior):
    # Appendix A: the hyper-prior makes no important difference
    scale = 1.0 if hyperprior == "cauchy" else 3.0
    res = bbt.fit(TABLE_3B, hyperprior=hyperprior, prior_scale=scale, seed=5)
    diff = res.summary().set_index("pair")["mean"] - paper_fit.summary().set_index("pair")["mean"]
    assert np.abs(diff).max() < 0.03
    assert res.settings["hyperprior"] == hyperprior


def test_local_rope_reduces_wins_and_widens_intervals(raw_fit):
    rope = bbt.fit(bbt.datasets.load_base(), dataset="db", d_min=0.4, seed=9)
    assert (rope.win_table["win1"] + rope.win_table["win2"]).sum() < (
        raw_fit.win_table["win1"] + raw_fit.win_table["win2"]
    ).sum()
    assert rope.settings["d_min"] == 0.4 and rope.settings["paired"] is True


def test_fit_rejects_data_keywords_with_a_ready_win_table():
    with pytest.raises(ValueError, match="ready win table"):
        bbt.fit(TABLE_3B, d_min=0.4)
    with pytest.raises(ValueError, match="tie policy"):
        bbt.fit(TABLE_3B, ties=None)
    with pytest.raises(ValueError, match="iter_sampling"):
        bbt.fit(TABLE_3B, iter_sampling=0)


# --------------------------------------------------------------------------- issue 9.3


def _two_groups() -> pd.DataFrame:
    """a and b meet on d1..d15 only, c and d on d16..d30 only; a beats b 13 times of 15,
    c beats d 13 times."""
    rows = []
    for k in range(30):
        first, upset = k < 15, k % 15 < 2
        rows.append(
            {
                "db": f"d{k + 1}",
                "a": (0.5 if upset else 0.9) if first else np.nan,
                "b": 0.6 if first else np.nan,
                "c": np.nan if first else (0.4 if upset else 0.8),
                "d": np.nan if first else 0.5,
            }
        )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def split_fit() -> bbt.BBTResult:
    with pytest.warns(bbt.DisconnectedWarning, match=r"2 groups.*\{a, b\}; \{c, d\}"):
        return bbt.fit(_two_groups(), dataset="db", seed=4)


def test_disconnected_groups_are_detected_and_never_claimed(split_fit):
    assert split_fit.components == [["a", "b"], ["c", "d"]]
    assert "not compared" in split_fit.disconnected_note
    s = split_fit.summary().set_index("pair")
    group = {"a": 0, "b": 0, "c": 1, "d": 1}
    across = s[[group[x] != group[y] for x, y in zip(s["alg_a"], s["alg_b"])]]
    assert len(across) == 4
    assert (across["weak"] == "not compared").all() and (across["strong"] == "not compared").all()
    # within a group the data speak: 13 of 15 wins
    assert s.loc["a > b", "strong"] == "a better" and s.loc["c > d", "strong"] == "a better"
    # the posterior alone would claim cross pairs under the strong rule (mean P > 0.70):
    # a's ability is far above d's, but only through the prior
    assert across["mean"].max() > 0.70
    # selections keep the mark
    ctrl = split_fit.summary(control="a")
    other = np.where(ctrl["alg_a"] == "a", ctrl["alg_b"], ctrl["alg_a"])
    assert list(ctrl["weak"] == "not compared") == [o in ("c", "d") for o in other]


@pytest.mark.parametrize("interpretation", ["weak", "strong"])
def test_report_never_claims_pairs_across_groups(split_fit, interpretation):
    text = methods_text(split_fit, interpretation=interpretation)
    for a, b in (("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "a"), ("d", "b")):
        assert f"{a} is better than {b}" not in text
        assert f"{a} and {b} (" not in text  # no equivalence claim either
    assert "4 pairs across groups of algorithms that never met" in text


def test_connected_fit_has_one_group_and_no_warning():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", bbt.DisconnectedWarning)
        res = bbt.fit(TABLE_3B, seed=2, iter_warmup=300, iter_sampling=300)
    assert res.components == [["dt", "lda", "lgbm", "xgb", "svm"]]
    assert res.disconnected_note == ""
    assert "not compared" not in set(res.summary()["weak"])


# --------------------------------------------------------------------------- issue 9.4


def test_pmlb16_paired_local_rope_fits():
    """The shipped 16 x 132 data, where qda lacks 2 folds on lymphography, with d_min."""
    data = bbt.datasets.load_pmlb16()
    res = bbt.fit(data, dataset="db", d_min=0.4, seed=3)
    assert res.settings["paired"] is True
    wt = res.win_table
    assert len(wt) == 120 and ((wt["win1"] + wt["win2"]) > 0).all()
    text = methods_text(res)
    assert "On 1 data set some algorithms lacked folds" in text


# --------------------------------------------------------------------------- issue 8


def _never_called(stage: str, fraction: float) -> None:
    raise AssertionError(f"fit reached {stage!r}: the empty win table was not refused first")


def test_fit_refuses_long_results_without_dataset_before_sampling():
    long = bbt.datasets.load_base().melt(id_vars="db", var_name="alg", value_name="acc")
    with pytest.raises(ValueError, match=r"no games.*pass dataset="):
        bbt.fit(long, algorithm="alg", score="acc", progress=_never_called)


def test_fit_refuses_a_win_table_with_no_games():
    zeros = TABLE_3B.assign(win1=0, win2=0)
    with pytest.raises(ValueError, match=r"win table has no games"):
        bbt.fit(zeros, progress=_never_called)
    all_ties = TABLE_3B.assign(win1=0, win2=0, ties=3)
    with pytest.raises(ValueError, match=r"every game is a tie.*'forget'.*'davidson'"):
        bbt.fit(all_ties, ties="forget", progress=_never_called)


def test_pair_reads_one_pair_in_the_orientation_asked(paper_fit):
    s = paper_fit.summary().set_index("pair")
    # as stored (best first): the same row as summary()
    same = paper_fit.pair("xgb", "dt")
    pd.testing.assert_series_equal(
        same.drop("pair"), s.loc["xgb > dt"], check_names=False, check_exact=False
    )
    # flipped: P(dt > xgb) = 1 - P(xgb > dt), the HDI mirrored, the decision reversed
    flip = paper_fit.pair("dt", "xgb")
    row = s.loc["xgb > dt"]
    assert flip["pair"] == "dt > xgb" and (flip["alg_a"], flip["alg_b"]) == ("dt", "xgb")
    assert flip["mean"] == pytest.approx(1 - row["mean"])
    assert flip["median"] == pytest.approx(1 - row["median"])
    assert (flip["low"], flip["high"]) == pytest.approx((1 - row["high"], 1 - row["low"]))
    assert flip["above_50"] == pytest.approx(1 - row["above_50"])
    assert flip["in_rope"] == pytest.approx(row["in_rope"])
    assert (flip["weak"], flip["strong"]) == ("b better", "b better")
    # an equivalence stays an equivalence either way round
    assert paper_fit.pair("lgbm", "xgb")["strong"] == "equivalent"
    with pytest.raises(ValueError, match="'knn' is not an algorithm"):
        paper_fit.pair("knn", "dt")
    with pytest.raises(ValueError, match="two different algorithms"):
        paper_fit.pair("dt", "dt")
