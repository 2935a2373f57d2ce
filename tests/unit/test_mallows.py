"""Mallows ranking model with Kendall's distance (Rojas-Delgado et al. 2022, Sec. II-C;
Vitelli et al. 2018): the exact formulas against enumeration, the sampler against exact
posteriors computed by enumerating every consensus ranking, recovery of simulated rankings,
the input errors."""

from __future__ import annotations

import threading
import warnings
from itertools import permutations

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget.engines.base import FitCancelled
from bbt_widget.ranking import _mallows
from bbt_widget.ranking._mallows import pair_counts
from bbt_widget.ranking._mallows_sampler import (
    before_probability,
    kendall_distance,
    log_partition,
    position_probabilities,
    run_chains,
    sample_rankings,
)

#: Grid over beta for the exact posteriors (the prior rate 0.1 makes beta > 12 negligible
#: at these data sizes; checked by the mass in the last grid cells).
BETA_GRID = np.linspace(1e-4, 12.0, 6001)


def all_rankings(n: int) -> np.ndarray:
    """Every ranking of n items as ranks (``[k, i]`` = rank of item i, 0 = first)."""
    return np.array(list(permutations(range(n))))


def mallows_pmf(rho: np.ndarray, beta: float) -> tuple[np.ndarray, np.ndarray]:
    perms = all_rankings(len(rho))
    w = np.exp(-beta * kendall_distance(perms, rho[None]))
    return perms, w / w.sum()


def as_results(ranks: np.ndarray, names: list[str] | None = None) -> pd.DataFrame:
    """Wide results (data sets x algorithms, higher is better) with the given ranks."""
    names = names or [f"A{i + 1}" for i in range(ranks.shape[1])]
    return pd.DataFrame(
        -np.asarray(ranks, dtype=float), columns=names, index=[f"d{k}" for k in range(len(ranks))]
    )


# --- the closed forms against enumeration


@pytest.mark.parametrize("beta", [0.05, 0.7, 3.0])
def test_partition_function_and_marginals_equal_enumeration(beta):
    rho = np.array([2, 0, 4, 1, 3])
    perms, pmf = mallows_pmf(rho, beta)
    d = kendall_distance(perms, rho[None])
    assert log_partition(beta, 5) == pytest.approx(np.log(np.exp(-beta * d).sum()), rel=1e-12)
    exact = np.zeros((5, 5))  # [consensus rank, position]
    for i in range(5):
        for x in range(5):
            exact[rho[i], x] = pmf[perms[:, i] == x].sum()
    got = position_probabilities(np.array([beta]), 5)[0]
    np.testing.assert_allclose(got, exact, atol=1e-12)
    # Rojas-Delgado et al. 2022, Eq. 20: P(first) = exp(-beta (rank - 1)) psi_{n-1} / psi_n
    eq20 = np.exp(-beta * np.arange(5)) * np.exp(log_partition(beta, 4) - log_partition(beta, 5))
    np.testing.assert_allclose(got[:, 0], eq20, rtol=1e-10)
    for i in range(5):
        for j in range(5):
            if rho[i] < rho[j]:
                p = pmf[perms[:, i] < perms[:, j]].sum()
                assert before_probability(beta, rho[j] - rho[i]) == pytest.approx(p, abs=1e-12)


def test_marginals_at_a_dispersion_near_zero_are_uniform():
    """beta -> 0 is the uniform distribution over rankings: every place 1/n, every pair 1/2
    (1 - exp(-k beta) taken as is would lose six digits at beta = 1e-10)."""
    p = position_probabilities(np.array([1e-10]), 7)[0]
    np.testing.assert_allclose(p, 1 / 7, atol=1e-9)
    np.testing.assert_allclose(before_probability(1e-10, np.arange(1, 7)), 0.5, atol=1e-9)


def test_repeated_insertion_draws_follow_the_model():
    rho = np.array([1, 3, 0, 2])
    perms, pmf = mallows_pmf(rho, 0.8)
    draws = sample_rankings(rho, np.array(0.8), 100_000, np.random.default_rng(4))
    index = {tuple(p): k for k, p in enumerate(perms)}
    freq = np.bincount([index[tuple(r)] for r in draws], minlength=len(perms)) / len(draws)
    se = np.sqrt(pmf * (1 - pmf) / len(draws))
    assert np.all(np.abs(freq - pmf) < 4.5 * se + 1e-4)


# --- the sampler against the exact posterior


def exact_posterior(log_lik: np.ndarray, rate: float = 0.1) -> tuple[np.ndarray, float]:
    """Posterior P(rho) and E[beta] from ``log_lik[rho, beta grid]`` with the uniform prior
    on rho and the exponential prior on beta (its truncation at 1e6 changes nothing here)."""
    log_post = log_lik - rate * BETA_GRID[None]
    w = np.exp(log_post - log_post.max())
    assert w[:, -50:].sum() < 1e-9 * w.sum()  # the grid holds the posterior
    p_rho = w.sum(axis=1) / w.sum()
    return p_rho, float((w.sum(axis=0) * BETA_GRID).sum() / w.sum())


def mcmc_against_exact(res, perms: np.ndarray, p_rho: np.ndarray, beta_mean: float) -> None:
    rank = res.draws.params["rank"].reshape(-1, perms.shape[1]) - 1
    index = {tuple(p): k for k, p in enumerate(perms)}
    freq = np.bincount([index[tuple(r)] for r in rank], minlength=len(perms)) / len(rank)
    top = np.argsort(p_rho)[::-1][:3]
    # Monte Carlo error: the draws are autocorrelated; 0.03 is over 4 standard errors at
    # the ESS these chains reach (> 1000 for beta)
    np.testing.assert_allclose(freq[top], p_rho[top], atol=0.03)
    beta = res.draws.params["beta"]
    ess = float(_mallows._az().ess(beta))
    assert abs(beta.mean() - beta_mean) < 4 * beta.std() / np.sqrt(ess)
    assert res.diagnostics.ok, res.diagnostics
    # the mode reported is the most frequent order
    mode = perms[np.argmax(freq)]
    assert res.consensus.order == tuple(f"A{i + 1}" for i in np.argsort(mode))
    assert res.consensus.probability == pytest.approx(freq.max())


@pytest.mark.slow
def test_posterior_equals_enumeration_with_split_ties():
    """n = 5, 12 rankings, some with ties: every consensus ranking enumerated, each tied
    ranking as the average over the orderings that break its ties (the split rule)."""
    rng = np.random.default_rng(11)
    rho_true = np.array([0, 1, 2, 3, 4])
    ranks = sample_rankings(rho_true, np.array(0.6), 12, rng).astype(float)
    ranks[0, [1, 2]] = ranks[0, 1]  # A2 and A3 tied in d0
    ranks[5, [0, 3, 4]] = ranks[5, 0]  # three-way tie in d5
    data = as_results(ranks)
    perms = all_rankings(5)
    total = np.zeros(len(perms))  # sum over data sets of the mean distance over tie breaks
    for row in ranks:
        breaks = [
            p
            for p in perms
            if np.all(np.sign(p[:, None] - p[None]) * np.sign(row[:, None] - row[None]) >= 0)
        ]
        total += np.mean([kendall_distance(perms, np.array(b)[None]) for b in breaks], axis=0)
    log_lik = -BETA_GRID[None] * total[:, None] - len(ranks) * log_partition(BETA_GRID, 5)[None]
    p_rho, beta_mean = exact_posterior(log_lik)
    # leap 3: moves over more than one rank, where the proposal is not symmetric
    res = bbt.ranking_model(
        data, model="mallows", iter_warmup=500, iter_sampling=3000, seed=2, leap=3
    )
    mcmc_against_exact(res, perms, p_rho, beta_mean)


@pytest.mark.slow
def test_posterior_equals_enumeration_with_missing_results():
    """n = 4, data sets where an algorithm has no result: the likelihood of each is the
    model's probability of the observed order of the others, a sum over the full rankings
    that agree with it (enumerated here; data augmentation in the sampler)."""
    rng = np.random.default_rng(5)
    ranks = sample_rankings(np.array([0, 1, 2, 3]), np.array(0.7), 14, rng).astype(float)
    ranks[[1, 4, 7], [3, 0, 2]] = np.nan
    ranks[9, [1, 3]] = np.nan
    data = as_results(ranks)
    perms = all_rankings(4)
    log_lik = np.zeros((len(perms), len(BETA_GRID)))
    for r, rho in enumerate(perms):
        dist = kendall_distance(perms, rho[None])  # every full ranking to this consensus
        terms = np.exp(-BETA_GRID[None] * dist[:, None])  # [full ranking, beta]
        for row in ranks:
            seen = np.flatnonzero(np.isfinite(row))
            agree = np.all(
                np.sign(perms[:, seen][:, :, None] - perms[:, seen][:, None])
                == np.sign(row[seen][:, None] - row[seen][None])[None],
                axis=(1, 2),
            )
            log_lik[r] += np.log(terms[agree].sum(axis=0))
    log_lik -= len(ranks) * log_partition(BETA_GRID, 4)[None]
    p_rho, beta_mean = exact_posterior(log_lik)
    res = bbt.ranking_model(data, model="mallows", iter_warmup=500, iter_sampling=3000, seed=8)
    mcmc_against_exact(res, perms, p_rho, beta_mean)


@pytest.mark.slow
def test_long_leaps_keep_the_exact_rank_probabilities():
    """n = 6, leap 2, a spread posterior (4 rankings): the consensus-rank probabilities
    equal the enumerated ones within 0.006. Without Vitelli et al.'s correction of the
    leap-and-shift proposal (not symmetric for leaps over more than one rank) they are off
    by about 0.02."""
    n = 6
    ranks = sample_rankings(np.arange(n), np.array(1.0), 4, np.random.default_rng(1))
    perms = all_rankings(n)
    total = kendall_distance(perms[:, None, :], ranks[None]).sum(axis=1)
    log_lik = -BETA_GRID[None] * total[:, None] - len(ranks) * log_partition(BETA_GRID, n)[None]
    p_rho, beta_mean = exact_posterior(log_lik)
    out = run_chains(
        pair_counts(-ranks.astype(float)),
        np.zeros((0, n)),
        n_rankings=len(ranks),
        rate=0.1,
        beta_max=1e6,
        chains=4,
        burn_in=500,
        draws=20_000,
        thin=3,
        leap=2,
        rng=np.random.default_rng(3),
    )
    one_hot = perms[:, :, None] == np.arange(n)  # [consensus, item, rank]
    exact = np.einsum("k,kir->ir", p_rho, one_hot)
    drawn = (out.rank.reshape(-1, n)[:, :, None] == np.arange(n)).mean(axis=0)
    assert np.abs(drawn - exact).max() < 0.006
    assert out.beta.mean() == pytest.approx(beta_mean, rel=0.03)


# --- recovery of simulated rankings


@pytest.mark.slow
def test_recovers_a_simulated_consensus_and_dispersion():
    """Repeated insertion from a known consensus (n = 8) and beta = 0.5, 150 data sets: the
    posterior mode is that consensus and the dispersion's HDI holds 0.5."""
    truth = np.array([3, 0, 6, 1, 7, 2, 5, 4])
    names = [f"alg{i}" for i in range(8)]
    ranks = sample_rankings(truth, np.array(0.5), 150, np.random.default_rng(21))
    res = bbt.ranking_model(as_results(ranks, names), model="mallows", seed=4)
    assert res.consensus.order == tuple(names[i] for i in np.argsort(truth))
    assert res.dispersion.low < 0.5 < res.dispersion.high
    assert res.diagnostics.ok, res.diagnostics
    probs = res.rank_probabilities
    assert list(probs.index) == list(res.consensus.order)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    np.testing.assert_allclose(probs.sum(axis=0), 1.0)
    # a new data set's ranking: P(first) sums to 1, P(top-k) grows with k to 1
    assert res.ranking["p_first"].sum() == pytest.approx(1.0)
    top = res.top_k.pivot(index="algorithm", columns="k", values="p")
    assert np.all(np.diff(top.to_numpy(), axis=1) >= -1e-12)
    np.testing.assert_allclose(top[8], 1.0)
    assert res.ranking["algorithm"].iloc[0] == names[np.argmin(truth)]
    ppc = res.ppc
    assert set(ppc.columns) == {"algorithm", "rank", "observed", "predicted", "low", "high"}
    np.testing.assert_allclose(ppc.groupby("algorithm")["observed"].sum(), 1.0)
    inside = (ppc["observed"] >= ppc["low"] - 0.02) & (ppc["observed"] <= ppc["high"] + 0.02)
    assert inside.mean() > 0.8  # rankings drawn from the model fit it


@pytest.mark.slow
def test_lower_is_better_and_random_ties(pmlb16):
    """On the shipped results, with lower_is_better the consensus is reversed, and random
    tie breaks are reproducible with the seed."""
    small = pmlb16[pmlb16["db"].isin(sorted(set(pmlb16["db"]))[:40])]
    kw = dict(dataset="db", model="mallows", iter_warmup=300, iter_sampling=300, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short chains: their diagnostics are not the point
        up = bbt.ranking_model(small, **kw)
        down = bbt.ranking_model(small, lower_is_better=True, **kw)
        rand = [bbt.ranking_model(small, ties="random", **kw) for _ in range(2)]

    def mean_rank(res):
        probs = res.rank_probabilities
        return (probs * probs.columns.to_numpy()).sum(axis=1).sort_index()

    n = len(up.algorithms)
    np.testing.assert_allclose(mean_rank(up) + mean_rank(down), n + 1, atol=0.5)
    pd.testing.assert_frame_equal(rand[0].ranking, rand[1].ranking)
    assert rand[0].settings["ties"] == "random" and up.settings["ties"] == "split"


@pytest.mark.slow
def test_shipped_results_in_a_minute(pmlb16):
    """16 algorithms x 132 data sets at the default settings (the timing itself is measured
    in benchmarks/bench_methods.py): the sampler converges; settings are recorded."""
    res = bbt.ranking_model(pmlb16, dataset="db", model="mallows")
    assert res.diagnostics.ok, res.diagnostics
    assert {"thin": 20, "leap": 3, "rate": 0.1, "beta_max": 1e6}.items() <= res.settings.items()
    assert len(res.consensus.order) == 16 and 0 < res.consensus.probability <= 1
    assert res.dispersion.low < res.dispersion.mean < res.dispersion.high
    assert res.draws.params["rank"].shape == (4, 1000, 16)
    assert res.before["p"].between(0, 1).all() and len(res.before) == 120


def test_cancel_stops_the_sampler(pmlb16):
    stop = threading.Event()
    stop.set()
    with pytest.raises(FitCancelled):
        _mallows.mallows(pmlb16, dataset="db", cancel=stop)


@pytest.fixture
def no_sampling(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the sampler was started")

    monkeypatch.setattr(_mallows, "run_chains", refuse)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"ties": "average"}, "unknown ties 'average'"),
        ({"prior": 0}, r"rate \(ranking_model's prior\) must be a finite number > 0"),
        ({"prior": -1.0}, "rate of the exponential prior on the dispersion"),
        ({"leap": 3}, "leap must be between 1 and n - 1 = 2"),
        ({"thin": 0}, "thin must be an integer >= 1"),
        ({"hdi": 1.5}, "hdi mass"),
    ],
)
def test_bad_settings_fail_before_sampling(no_sampling, kwargs, match):
    data = pd.DataFrame({"a": [0.8, 0.7], "b": [0.9, 0.6], "c": [0.1, 0.2]}, index=["d1", "d2"])
    with pytest.raises(ValueError, match=match):
        bbt.ranking_model(data, model="mallows", **kwargs)


def test_mallows_settings_are_refused_for_plackett_luce(monkeypatch):
    from bbt_widget import engines

    monkeypatch.setattr(engines, "sample", lambda *a, **k: pytest.fail("a Stan fit started"))
    data = pd.DataFrame({"a": [0.8, 0.7], "b": [0.9, 0.6]}, index=["d1", "d2"])
    for name in ("thin", "leap"):
        with pytest.raises(ValueError, match=f"{name} is a setting of model='mallows'"):
            bbt.ranking_model(data, **{name: 5})
