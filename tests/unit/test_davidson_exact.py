"""The numpy engine's sampler of Davidson's model (``engines/_davidson.py``) gives the exact
posterior of ``stan/davidson.stan``, with no compiler.

* 2 algorithms: the posterior depends on (sigma, the one contrast, nu) alone, so a grid over
  them is the whole posterior: its moments by quadrature against the sampler's;
* simulation-based calibration (Talts et al. 2018, arXiv:1804.06788) on a small shape, as
  ``test_gibbs_exact.py`` does for the plain model, and a check that it fails for a sampler
  slightly off;
* the trap of the reference implementation: swapping the two players of a pair changes
  nothing (its product of two binomials is not symmetric).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats

from bbt_widget.core import convergence
from bbt_widget.engines import _davidson

REPLICATIONS = 100
KEPT = 99  # posterior draws per replication (every second of 198): ranks 0..99, 10 a bin
BINS = 10


def _ties(pairs, win1, win2, ties, n_alg, *, hyperprior=1, scale=0.5) -> _davidson.Ties:
    return _davidson.Ties.from_stan_data(
        {
            "n_alg": n_alg,
            "i1": [i + 1 for i, _ in pairs],
            "i2": [j + 1 for _, j in pairs],
            "win1": list(win1),
            "win2": list(win2),
            "ties": list(ties),
            "hyperprior": hyperprior,
            "prior_scale": scale,
        }
    )


def _exact_moments(win1: int, win2: int, ties: int) -> dict[str, tuple[float, float]]:
    """Posterior mean and sd of sigma, beta_0 - beta_1 and nu for 2 algorithms (lognormal(0,
    0.5) hyper-prior), by quadrature: beta_0 - beta_1 = sqrt(2) c with c ~ Normal(0, sigma)
    (the Helmert contrast), the mean direction being independent of the data."""
    s = np.linspace(0.01, 10.0, 120)
    c = np.linspace(-16, 16, 121)  # the one-sided case's tail of d01 reaches past 15
    nu = np.linspace(-8, 8, 121)
    sig, cc, nn = np.meshgrid(s, c, nu, indexing="ij")
    d = np.sqrt(2.0) * cc
    log_p = -0.5 * (np.log(sig) / 0.5) ** 2 - np.log(sig)  # lognormal(0, 0.5)
    log_p += -np.log(sig) - cc**2 / (2 * sig**2) - nn**2 / 8
    eta = np.stack([d / 2, -d / 2, nn])  # softmax is unchanged by the common (b1 + b2) / 2
    log_prob = eta - special.logsumexp(eta, axis=0)
    log_p += win1 * log_prob[0] + win2 * log_prob[1] + ties * log_prob[2]
    w = np.exp(log_p - log_p.max())
    w /= w.sum()
    out = {}
    for name, value in {"sigma": sig, "d01": d, "nu": nn}.items():
        m = float((w * value).sum())
        out[name] = (m, float(np.sqrt((w * (value - m) ** 2).sum())))
    return out


@pytest.mark.parametrize("counts", [(9, 3, 5), (0, 6, 1)], ids=["mixed", "one-sided"])
def test_two_algorithms_give_the_exact_posterior(counts):
    """Means within 4 MCSE, sds within 4%, of sigma, the difference of abilities and nu."""
    ties = _ties([(0, 1)], [counts[0]], [counts[1]], [counts[2]], 2)
    rng = np.random.default_rng(20261207)
    draws = _davidson.sample(ties, chains=4, iter_warmup=100, iter_sampling=3000, rng=rng)
    got = {
        "sigma": draws["sigma"],
        "d01": draws["beta"][..., 0] - draws["beta"][..., 1],
        "nu": draws["nu"],
    }
    exact = _exact_moments(*counts)
    for name, x in got.items():
        mean, sd = exact[name]
        mcse = x.std() / np.sqrt(convergence.ess_bulk(x))
        assert abs(x.mean() - mean) < 4 * mcse, (name, x.mean(), mean, mcse)
        assert x.std() == pytest.approx(sd, rel=0.04), name


def test_the_quadrature_check_detects_a_wrong_likelihood():
    """The same check fails when the ties are counted as wins of neither side but left out
    of the games (the plain model's view): the test can tell the models apart."""
    exact = _exact_moments(9, 3, 5)
    ties = _ties([(0, 1)], [9], [3], [0], 2)
    draws = _davidson.sample(
        ties, chains=4, iter_warmup=100, iter_sampling=3000, rng=np.random.default_rng(1)
    )
    x = draws["nu"]
    mcse = x.std() / np.sqrt(convergence.ess_bulk(x))
    assert abs(x.mean() - exact["nu"][0]) > 4 * mcse


def _sbc(
    n_alg: int,
    n_sets: int,
    *,
    hyperprior: int = 1,
    scale: float = 0.5,
    seed: int = 0,
    replications: int = REPLICATIONS,
):
    """Ranks of the true sigma, nu and contrasts beta_i - beta_0 among KEPT posterior draws,
    over REPLICATIONS data sets simulated from the prior and the model."""
    rng = np.random.default_rng(seed)
    pairs = [(i, j) for i in range(n_alg) for j in range(i + 1, n_alg)]
    ranks: dict[str, list[int]] = {}
    for _ in range(replications):
        if hyperprior == 1:
            sigma = float(np.exp(scale * rng.standard_normal()))
        else:
            sigma = float(abs(scale * rng.standard_cauchy()))
        beta = sigma * rng.standard_normal(n_alg)
        nu = 2.0 * rng.standard_normal()
        eta = np.array([[beta[i], beta[j], nu + 0.5 * (beta[i] + beta[j])] for i, j in pairs])
        counts = rng.multinomial(n_sets, special.softmax(eta, axis=1))
        ties = _ties(pairs, *counts.T, n_alg, hyperprior=hyperprior, scale=scale)
        draws = _davidson.sample(ties, chains=1, iter_warmup=50, iter_sampling=2 * KEPT, rng=rng)
        got = {"sigma": draws["sigma"][0, ::2], "nu": draws["nu"][0, ::2]}
        truth = {"sigma": sigma, "nu": nu}
        for i in range(1, n_alg):
            got[f"beta{i}-beta0"] = draws["beta"][0, ::2, i] - draws["beta"][0, ::2, 0]
            truth[f"beta{i}-beta0"] = beta[i] - beta[0]
        for name, values in got.items():
            ranks.setdefault(name, []).append(int((values < truth[name]).sum()))
    return ranks


def _check(ranks: dict[str, list[int]]) -> None:
    """Chi-square test of uniform ranks per parameter, Bonferroni over them at 0.001."""
    pvalues = {
        name: float(
            stats.chisquare(np.bincount(np.asarray(r) * BINS // (KEPT + 1), minlength=BINS)).pvalue
        )
        for name, r in ranks.items()
    }
    worst = min(pvalues, key=pvalues.__getitem__)
    assert pvalues[worst] > 0.001 / len(pvalues), (worst, pvalues[worst], pvalues)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("n_alg", "n_sets", "hyperprior", "scale"),
    [(4, 10, 1, 0.5), (3, 3, 2, 1.0)],
    ids=["4x10-lognormal", "3x3-sparse-half-cauchy"],
)
def test_simulation_based_calibration(n_alg, n_sets, hyperprior, scale):
    _check(_sbc(n_alg, n_sets, hyperprior=hyperprior, scale=scale, seed=n_alg * 10 + hyperprior))


@pytest.mark.slow
def test_calibration_detects_a_wrong_sampler(monkeypatch):
    """The SBC check fails for a sampler that sees every game twice (a posterior too narrow
    by a factor sqrt 2)."""
    real = _davidson.Ties.from_stan_data.__func__  # type: ignore[attr-defined]

    def doubled(cls, data):
        twice = dict(data) | {k: [2 * v for v in data[k]] for k in ("win1", "win2", "ties")}
        return real(cls, twice)

    monkeypatch.setattr(_davidson.Ties, "from_stan_data", classmethod(doubled))
    with pytest.raises(AssertionError):
        _check(_sbc(4, 10, seed=41))


def test_swapping_the_players_of_a_pair_changes_nothing():
    """Pair (i, j) with counts (w1, w2, t) is pair (j, i) with (w2, w1, t): the same log
    posterior everywhere, the same mode, the same pointwise log-likelihood."""
    rng = np.random.default_rng(3)
    pairs = [(0, 1), (0, 2), (1, 2), (1, 3), (2, 3)]
    win1, win2, ties = (rng.integers(0, 12, len(pairs)) for _ in range(3))
    swapped = [1, 3]
    pairs2 = [(j, i) if k in swapped else (i, j) for k, (i, j) in enumerate(pairs)]
    w1 = np.where(np.isin(np.arange(5), swapped), win2, win1)
    w2 = np.where(np.isin(np.arange(5), swapped), win1, win2)
    one, other = _ties(pairs, win1, win2, ties, 4), _ties(pairs2, w1, w2, ties, 4)
    theta = rng.standard_normal((50, 5))
    np.testing.assert_allclose(one.log_posterior(theta), other.log_posterior(theta), rtol=1e-12)
    mode_one, mode_other = _davidson.find_mode(one), _davidson.find_mode(other)
    assert mode_one is not None and mode_other is not None
    np.testing.assert_allclose(mode_one.mode, mode_other.mode, atol=1e-8)
    beta = rng.standard_normal((2, 7, 4))
    nu = rng.standard_normal((2, 7))
    lik_one = _davidson.replicate(one, beta, nu, rng)["log_lik"]
    lik_other = _davidson.replicate(other, beta, nu, rng)["log_lik"]
    np.testing.assert_allclose(lik_one, lik_other, rtol=1e-12)


def test_log_lik_is_the_multinomial_log_likelihood():
    """``log_lik`` per pair is ``multinomial_logit_lpmf`` of the program, coefficient included."""
    pairs = [(0, 1), (0, 2), (1, 2)]
    ties = _ties(pairs, [4, 0, 7], [2, 5, 1], [3, 1, 0], 3)
    rng = np.random.default_rng(5)
    beta = rng.standard_normal((1, 2, 3))
    nu = rng.standard_normal((1, 2))
    got = _davidson.replicate(ties, beta, nu, rng)
    for t in range(2):
        for k, (i, j) in enumerate(pairs):
            b = beta[0, t]
            p = special.softmax([b[i], b[j], nu[0, t] + 0.5 * (b[i] + b[j])])
            counts = [ties.design.wins[k], ties.win2[k], ties.ties[k]]
            expected = stats.multinomial.logpmf(counts, sum(counts), p)
            assert got["log_lik"][0, t, k] == pytest.approx(expected, rel=1e-10)
    assert got["win1_rep"].dtype == np.int64 and got["ties_rep"].dtype == np.int64
    assert np.all(got["win1_rep"] + got["ties_rep"] <= ties.games)


def test_the_chains_start_dispersed_and_agree():
    """Four chains on 6 algorithms x 30 data sets: R-hat near 1 for every parameter."""
    rng = np.random.default_rng(11)
    pairs = [(i, j) for i in range(6) for j in range(i + 1, 6)]
    beta = np.linspace(-1, 1, 6)
    eta = np.array([[beta[i], beta[j], -0.5 + 0.5 * (beta[i] + beta[j])] for i, j in pairs])
    counts = rng.multinomial(30, special.softmax(eta, axis=1))
    ties = _ties(pairs, *counts.T, 6)
    report: dict = {}
    draws = _davidson.sample(
        ties, chains=4, iter_warmup=100, iter_sampling=1000, rng=rng, report=report
    )
    assert report["acceptance"] is not None and report["acceptance"] > 0.3
    for name in ("sigma", "nu"):
        assert convergence.rhat(draws[name]) < 1.01, name
    for i in range(6):
        assert convergence.rhat(draws["beta"][..., i]) < 1.01
