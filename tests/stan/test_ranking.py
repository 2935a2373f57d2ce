"""Plackett-Luce ranking model (Rojas-Delgado et al. 2022) on rankings from known weights,
sampled by the package's Gibbs sampler (numpy), and checked against NUTS on the model's Stan
program (the oracle of ``tests/oracles``, real Stan fits): the two must agree."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from oracles import stan_twins  # tests/ is on sys.path under pytest (its conftest)

import bbt_widget as bbt
from bbt_widget import engines
from bbt_widget.ranking._plackett_luce import _expected_ranks

pytestmark = pytest.mark.stan

TRUE = np.array([0.4, 0.25, 0.2, 0.1, 0.05])
FAST = dict(chains=4, iter_warmup=500, iter_sampling=500, seed=3)


def simulated(n_datasets: int, weights: np.ndarray = TRUE, seed: int = 0) -> pd.DataFrame:
    """Long results whose per-data-set rankings are Plackett-Luce(weights) draws."""
    rng = np.random.default_rng(seed)
    keys = np.log(weights) + rng.gumbel(size=(n_datasets, len(weights)))
    rows = [
        {"ds": f"d{d}", "alg": f"A{a + 1}", "acc": 0.5 + 0.01 * keys[d, a]}
        for d in range(n_datasets)
        for a in range(len(weights))
    ]
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def fitted():
    data = simulated(300)
    return data, bbt.ranking_model(data, dataset="ds", algorithm="alg", score="acc", **FAST)


def test_gibbs_agrees_with_nuts_on_the_stan_twin_on_the_shipped_results():
    """Gibbs and NUTS on the Stan program sample the same posterior: on the shipped 16 x 132
    results (ties split) their P(first) and expected ranks agree within a few Monte Carlo
    errors, and Gibbs's draws pass the same R-hat and ESS checks."""
    if "pystan" not in engines.available_engines():
        pytest.skip("PyStan is not available here")
    df = bbt.datasets.load_pmlb16()
    kw = dict(chains=4, iter_warmup=250, iter_sampling=1000, seed=5)
    gibbs = bbt.ranking_model(df, dataset="db", **kw)
    nuts = stan_twins.plackett_luce(df, dataset="db", **kw)
    assert gibbs.settings["sampler"] == "gibbs" and gibbs.draws.engine == "numpy"
    assert gibbs.diagnostics.ok, gibbs.diagnostics.messages
    assert nuts.diagnostics.ok, nuts.diagnostics.messages
    a = gibbs.draws.params["theta"].reshape(-1, 16)
    b = nuts.draws.params["theta"].reshape(-1, 16)
    # each mean's Monte Carlo error is at most sd / sqrt(min ESS) (>= 1000 for both here)
    mcse = np.hypot(a.std(axis=0), b.std(axis=0)) / np.sqrt(1000)
    assert np.all(np.abs(a.mean(axis=0) - b.mean(axis=0)) < 4 * mcse)
    assert a.std(axis=0) == pytest.approx(b.std(axis=0), rel=0.1)
    # expected ranks per draw, as the ranking table computes them (same algorithm order)
    ranks = [_expected_ranks(theta).mean(axis=0) for theta in (a, b)]
    assert np.abs(ranks[0] - ranks[1]).max() < 0.1
    assert ranks[0] == pytest.approx(
        gibbs.ranking.set_index("algorithm")["expected_rank"].reindex(gibbs.algorithms).to_numpy()
    )


def test_one_sampler_per_model_no_sampler_or_engine_to_choose():
    df = bbt.datasets.load_pmlb16()
    for option in ({"sampler": "nuts"}, {"engine": "pystan"}):
        with pytest.raises(TypeError, match="unexpected keyword argument"):
            bbt.ranking_model(df, dataset="db", **option)


def test_recovers_the_simulated_weights(fitted):
    _, res = fitted
    theta = res.draws.params["theta"].reshape(-1, len(TRUE))
    z = (theta.mean(axis=0) - TRUE) / theta.std(axis=0)
    assert np.all(np.abs(z) < 3), z
    assert res.diagnostics.ok, res.diagnostics.messages
    assert list(res.ranking["algorithm"]) == ["A1", "A2", "A3", "A4", "A5"]


def test_p_first_sums_to_one_and_top_k_is_monotone(fitted):
    _, res = fitted
    assert res.ranking["p_first"].sum() == pytest.approx(1.0, abs=1e-9)
    wide = res.top_k.pivot(index="algorithm", columns="k", values="p")
    assert (np.diff(wide.to_numpy(), axis=1) >= 0).all()
    assert np.allclose(wide[len(TRUE)], 1.0)
    assert wide.sum(axis=0).to_numpy() == pytest.approx(np.arange(1, len(TRUE) + 1), abs=1e-9)
    # top-1 by simulation agrees with P(first) = theta within Monte Carlo error
    top1 = wide[1].reindex(res.ranking["algorithm"]).to_numpy()
    assert top1 == pytest.approx(res.ranking["p_first"].to_numpy(), abs=0.01)
    # P(a before b) = theta_a / (theta_a + theta_b) and expected ranks add up to 1 + ... + n
    row = res.before.set_index("pair").loc["A1 > A2"]
    assert row["p"] == pytest.approx(0.4 / 0.65, abs=0.05)
    assert res.ranking["expected_rank"].sum() == pytest.approx(15.0)


def test_ppc_observed_against_replicated(fitted):
    _, res = fitted
    ppc = res.ppc
    shares = ppc.groupby("rank")["observed"].sum()
    assert np.allclose(shares, 1.0)  # every data set puts one algorithm at each rank
    inside = (ppc["observed"] >= ppc["low"]) & (ppc["observed"] <= ppc["high"])
    assert inside.mean() >= 0.8  # the model that made the data fits them
    assert res.chart_ppc().to_dict()["facet"]
    assert res.chart_top_k().to_dict()["facet"]


def test_bbt_vs_plackett_luce_panel(fitted):
    data, res = fitted
    small = data[data["ds"].isin([f"d{i}" for i in range(40)])]
    fit = bbt.fit(small, dataset="ds", algorithm="alg", score="acc", engine="pystan", seed=1)
    both = res.compare(fit)
    assert set(both["model"]) == {"BBT", "Plackett-Luce"}
    assert len(both) == 2 * len(TRUE)
    best = both.loc[both.groupby("model")["p_best"].idxmax(), "algorithm"]
    assert set(best) == {"A1"}  # both models name the same best algorithm
    spec = res.chart_vs_bbt(fit).to_dict()
    assert spec["title"] == "BBT vs Plackett-Luce" and len(spec["hconcat"]) == 2


def test_lower_is_better_reverses_the_rankings():
    data = simulated(60, seed=5)
    flipped = data.assign(acc=-data["acc"])
    kw = dict(dataset="ds", algorithm="alg", score="acc", **FAST)
    a = bbt.ranking_model(data, **kw)
    b = bbt.ranking_model(flipped, lower_is_better=True, **kw)
    assert np.array_equal(a.draws.params["theta"], b.draws.params["theta"])
