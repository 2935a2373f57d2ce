"""Hierarchical correlated t-test (Benavoli et al. 2017, Sec. 4.3) on simulated and shipped
results: the package's sampler (quadrature and Metropolis-Hastings, numpy), checked against
NUTS on the model's Stan program (the oracle of ``tests/oracles``, real Stan fits)."""

from __future__ import annotations

import json
import threading
import warnings
from pathlib import Path

import baycomp_reference  # tests/stan is on sys.path under pytest
import numpy as np
import pandas as pd
import pytest
import test_batch
from oracles import stan_twins  # tests/ is on sys.path under pytest (its conftest)

import bbt_widget as bbt
from bbt_widget import engines
from bbt_widget.baselines import agreement, hierarchical, hierarchical_pairs
from bbt_widget.baselines._simulate import simulate_cv_results

LAYOUT = dict(dataset="dataset", algorithm="algorithm", score="score", fold="fold", run="run")
FAST = dict(chains=4, iter_warmup=500, iter_sampling=500, seed=11)

#: baycomp's HierarchicalTest on the cases of baycomp_reference.py (that script wrote it).
REFERENCE = json.loads(
    (Path(__file__).parent / "data" / "baycomp_hierarchical.json").read_text(encoding="utf-8")
)
PROBS = ["p_left", "p_rope", "p_right"]

pytestmark = pytest.mark.stan


@pytest.fixture(scope="module")
def pystan():
    """The Stan twin runs with PyStan."""
    if "pystan" not in engines.available_engines():
        pytest.skip("PyStan is not available here")


def test_recovers_a_known_mu0():
    data = simulate_cv_results(16, 5, 10, mu0=0.03, sigma0=0.01, sigma=(0.01, 0.03), seed=4)
    res = hierarchical(data, a="a", b="b", **LAYOUT, **FAST)
    mu0 = res.draws.params["mu0"].ravel()
    z = (mu0.mean() - 0.03) / mu0.std()
    assert abs(z) < 3, (mu0.mean(), mu0.std())
    assert res.diagnostics.ok, res.diagnostics.messages
    row = res.table.iloc[0]
    assert row["p_right"] > 0.95 and row["decision"] == "b better"
    assert row["p_left"] + row["p_rope"] + row["p_right"] == pytest.approx(1.0)
    assert row["mu0_low"] < 0.03 < row["mu0_high"]
    # rho = 1/10 was read from run= and fold=; shrinkage pulls the means towards mu_0
    shrink = res.shrinkage
    assert (shrink["rho"] == 0.1).all() and (shrink["n"] == 50).all()
    assert (shrink["low"] <= shrink["shrunk"]).all() and (shrink["shrunk"] <= shrink["high"]).all()
    assert shrink["shrunk"].std() < shrink["mean"].std()
    assert res.chart().to_dict()["layer"]


def test_p_rope_tends_to_one_when_the_algorithms_are_equal():
    data = simulate_cv_results(12, 5, 10, mu0=0.0, sigma0=0.0005, sigma=(0.002, 0.004), seed=5)
    # half of the data sets: the very same scores on every fold (sd 0: rope / sqrt(3) used)
    same = data["dataset"].isin([f"d{i:02d}" for i in range(6)]) & (data["algorithm"] == "b")
    data.loc[same, "score"] = 0.8
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no DiagnosticsWarning
        res = hierarchical(data, a="a", b="b", **LAYOUT, **FAST)
    row = res.table.iloc[0]
    assert row["p_rope"] > 0.95 and row["decision"] == "equivalent"
    assert row["next_rope"] > 0.9 and row["mu0_rope"] > 0.99


def test_all_pairs_table_lines_up_with_the_other_baselines():
    a = simulate_cv_results(6, 2, 5, mu0=0.05, sigma0=0.005, seed=1)
    c = a[a["algorithm"] == "b"].assign(
        algorithm="c", score=lambda f: f["score"] + 0.05
    )  # c beats b by 0.05 everywhere
    data = __import__("pandas").concat([a, c], ignore_index=True)
    res = hierarchical_pairs(data, **LAYOUT, **FAST)
    assert res.table["pair"].tolist() == ["c > b", "c > a", "b > a"]
    assert list(res.medians.index) == ["c", "b", "a"]
    assert (res.table["decision"] == "a better").all(), res.table
    assert set(res.fits) == {("c", "b"), ("c", "a"), ("b", "a")}
    # joined to agreement(): one more decision column, one more row of counts
    flat = data.assign(cv=data["run"] * 5 + data["fold"])
    layout = dict(dataset="dataset", algorithm="algorithm", score="score", fold="cv")
    fit = bbt.fit(flat, seed=1, **layout)
    agree = agreement(flat, fit, hierarchical=res, seed=1, n_samples=2000, **layout)
    assert "hierarchical" in agree.table and "hier_p_rope" in agree.table
    assert "hierarchical" in set(agree.counts["baseline"])
    row = agree.table.set_index("pair").loc["c > a"]
    assert row["hierarchical"] == "a better" and row["hier_p_left"] > 0.95


@pytest.mark.parametrize("sampler", ["quadrature", "nuts"])
@pytest.mark.parametrize("case", [k for k in REFERENCE if not k.startswith("_")])
def test_matches_baycomp_on_the_shape_of_the_papers_table_12(request, case, sampler):
    """54 data sets x 10 runs of 10-fold cross-validation, ROPE 0.01 (Benavoli et al. 2017,
    Table 12): P(left), P(rope), P(right) within 0.03 of baycomp's HierarchicalTest on the
    same simulated results (4 x 1000 draws, baycomp_reference.py), and the fit converges with
    the defaults (R-hat <= 1.01, bulk and tail ESS >= 400; for NUTS no divergence and no
    saturated tree depth), with the package's sampler and with NUTS on the Stan twin."""
    data = baycomp_reference.case_data(case)
    if sampler == "nuts":
        request.getfixturevalue("pystan")
    test = hierarchical if sampler == "quadrature" else stan_twins.hierarchical
    res = test(data, a="a", b="b", seed=3, **LAYOUT)
    ours = res.table.iloc[0][PROBS].to_numpy(dtype=float)
    theirs = np.array(REFERENCE[case]["p"])
    assert np.abs(ours - theirs).max() <= 0.03, (ours, theirs)
    assert res.diagnostics.ok, res.diagnostics.messages


@pytest.mark.parametrize(
    "pair", [("lgbm", "xgb"), ("lda", "ridge"), ("rf", "svm"), ("svm", "knn"), ("lgbm", "svm")]
)
def test_converges_on_the_shipped_results(pair):
    """The shipped 16 x 132 results have 4 folds per data set (rho 1/4), so sigma_i is
    weakly identified: an outlying data set (svm is 20-30 points behind on a few) gives its
    mu_i and sigma_i two modes, between which NUTS's chains did not cross (R-hat up to 1.6),
    and a pair of near-equal algorithms (lda, ridge) lets sigma_0 go to 0. With both
    integrated out, the quadrature sampler's chains agree with the defaults on each."""
    res = hierarchical(
        bbt.datasets.load_pmlb16(), a=pair[0], b=pair[1], dataset="db", rho=0.25, seed=5
    )
    assert res.diagnostics.ok, res.diagnostics.messages
    assert res.diagnostics.min_ess_bulk >= 400 and res.diagnostics.min_ess_tail >= 400
    assert res.table["n_datasets"].iloc[0] == 132
    assert res.draws.params["mu"].shape == (4, 1000, 132)


@pytest.mark.usefixtures("pystan")
def test_the_sampler_agrees_with_nuts_on_the_stan_twin_where_nuts_mixes():
    """10 runs of 10 folds on 20 data sets (NUTS mixes there): the package's sampler and
    NUTS on the Stan program give the same posterior of mu_0, sigma_0 and the shrunk means,
    within Monte Carlo error, and the same probabilities within 0.03."""
    data = simulate_cv_results(20, 10, 10, mu0=0.01, sigma0=0.01, sigma=(0.01, 0.03), seed=21)
    q = hierarchical(data, a="a", b="b", seed=2, **LAYOUT)
    n = stan_twins.hierarchical(data, a="a", b="b", seed=2, **LAYOUT)
    assert q.diagnostics.ok and n.diagnostics.ok, (q.diagnostics, n.diagnostics)
    assert not q.diagnostics.nuts and "divergences" not in str(q.diagnostics)
    for name in ("mu0", "sigma0"):
        a, b = q.draws.params[name].ravel(), n.draws.params[name].ravel()
        assert abs(a.mean() - b.mean()) < 0.1 * b.std() + 4 * b.std() / np.sqrt(400), name
        assert a.std() == pytest.approx(b.std(), rel=0.15), name
    shrunk = q.shrinkage["shrunk"] - n.shrinkage["shrunk"]
    assert np.abs(shrunk).max() < 0.25 * (n.shrinkage["high"] - n.shrinkage["low"]).min()
    gap = q.table.iloc[0][PROBS].to_numpy(dtype=float) - n.table.iloc[0][PROBS].to_numpy(
        dtype=float
    )
    assert np.abs(gap).max() <= 0.03


def test_one_sampler_no_sampler_engine_or_adapt_delta_to_choose():
    data = simulate_cv_results(4, 2, 5, mu0=0.01, sigma0=0.01, seed=1)
    for option in ({"sampler": "nuts"}, {"engine": "pystan"}, {"adapt_delta": 0.9}):
        with pytest.raises(TypeError, match="unexpected keyword argument"):
            hierarchical(data, a="a", b="b", **option, **LAYOUT)
    for option in ({"sampler": "nuts"}, {"adapt_delta": 0.9}):
        with pytest.raises(TypeError, match="unexpected keyword argument"):
            hierarchical_pairs(data, **option, **LAYOUT)


def test_agrees_with_baycomp_live(tmp_path, monkeypatch):
    """baycomp 1.0.3's HierarchicalTest runs here (it builds its own Stan program with PyStan
    3): on a small case, the same probabilities for the next data set."""
    baycomp = pytest.importorskip("baycomp")
    import stan

    monkeypatch.chdir(tmp_path)  # baycomp pickles its last sample into the working directory
    build = stan.build  # baycomp samples without a seed: a seeded run is the same every time
    monkeypatch.setattr(
        stan, "build", lambda code, data=None: build(code, data=data, random_seed=1)
    )
    data = simulate_cv_results(10, 3, 10, mu0=0.012, sigma0=0.006, sigma=(0.01, 0.02), seed=8)
    res = hierarchical(data, a="a", b="b", seed=1, **LAYOUT)
    x, y = (
        data[data["algorithm"] == alg]
        .sort_values(["dataset", "run", "fold"])["score"]
        .to_numpy()
        .reshape(10, 30)
        for alg in ("a", "b")
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = baycomp.HierarchicalTest.sample(
            x, y, 0.01, runs=3, chains=4, nsamples=1000, random_state=1
        )
    ours = res.table.iloc[0][["next_left", "next_rope", "next_right"]].to_numpy(dtype=float)
    assert np.abs(ours - theirs.mean(axis=0)).max() < 0.03, (ours, theirs.mean(axis=0))
    winners = np.bincount(theirs.argmax(axis=1), minlength=3) / len(theirs)
    assert np.abs(res.table.iloc[0][PROBS].to_numpy(dtype=float) - winners).max() < 0.05


def test_pairs_run_as_a_batch_with_progress_and_diagnostics():
    data = simulate_cv_results(6, 2, 5, mu0=0.05, sigma0=0.005, seed=1)
    c = data[data["algorithm"] == "b"].assign(algorithm="c", score=lambda f: f["score"] - 0.03)
    data = pd.concat([data, c], ignore_index=True)
    seen = []
    res = hierarchical_pairs(
        data,
        n_jobs=2,
        progress=lambda s, f: seen.append((s, f)),
        **LAYOUT,
        **FAST,
    )
    assert res.table["diagnostics_ok"].dtype == bool
    assert res.table["diagnostics_ok"].tolist() == [
        res.fits[(r.alg_a, r.alg_b)].diagnostics.ok for r in res.table.itertuples()
    ]
    fractions = [f for s, f in seen if s == "fitting"]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    # the seed of pair k is spawn_seeds(seed, 3)[k], whatever runs it: same numbers again
    again = hierarchical_pairs(data, n_jobs=1, **LAYOUT, **FAST)
    pd.testing.assert_frame_equal(
        res.table.drop(columns="seconds"), again.table.drop(columns="seconds")
    )
    # only the population draws are kept per pair (120 pairs of per-data-set draws: GBs)
    assert set(res.fits[("b", "a")].draws.params) == {"mu0", "sigma0", "nu"}


def test_pairs_cancel_stops_every_fit():
    data = simulate_cv_results(6, 2, 5, mu0=0.05, sigma0=0.005, seed=1)
    c = data[data["algorithm"] == "b"].assign(algorithm="c", score=lambda f: f["score"] - 0.03)
    data = pd.concat([data, c], ignore_index=True)
    cancel, started = threading.Event(), threading.Event()

    def progress(stage: str, fraction: float) -> None:
        if stage == "fitting" and fraction > 0:
            started.set()

    threading.Thread(target=lambda: (started.wait(120), cancel.set()), daemon=True).start()
    with pytest.raises(engines.FitCancelled):
        hierarchical_pairs(
            data,
            progress=progress,
            cancel=cancel,
            chains=4,
            iter_warmup=20000,
            iter_sampling=20000,
            **LAYOUT,
        )
    assert test_batch._pystan_workers() == []
