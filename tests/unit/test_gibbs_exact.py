"""The numpy engine's Pólya-Gamma Gibbs sampler gives the exact BBT posterior.

Two kinds of evidence, both real runs of the sampler (no Stan needed):

* the posterior of 3 algorithms with fractional counts (as split ties give), against its
  exact moments by quadrature: the likelihood depends on two contrasts of the abilities, which
  are iid Normal(0, sigma) under the prior (a Helmert rotation of iid normals), so a grid over
  (sigma, contrast 1, contrast 2) is the whole posterior;
* simulation-based calibration (Talts et al. 2018, arXiv:1804.06788): with parameters drawn
  from the prior and data from the model, the rank of the true value among posterior draws is
  uniform, for every parameter, when and only when the sampler is right. 200 replications per
  case, ranks in 10 bins, a chi-square test per parameter (Bonferroni over the parameters of a
  case at 0.001). Cases: 5 algorithms x 20 data sets; 3 algorithms x 2 data sets (sparse: the
  prior dominates); each hyper-prior; and the group model.

The Pólya-Gamma draws themselves are checked against their exact mean and variance, both from
``polyagamma`` and from the fallback series.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats

import bbt_widget as bbt
from bbt_widget.core import convergence
from bbt_widget.core.run_context import RunContext
from bbt_widget.engines import _gibbs, _polya_gamma
from bbt_widget.engines._design import Design

PAIRS3 = [(0, 1), (0, 2), (1, 2)]


def _design(n_alg, pairs, wins, games, *, hyperprior=1, scale=0.5, groups=None, tau_scale=None):
    pairs = np.asarray(pairs)
    return Design(
        n_alg=n_alg,
        n_groups=1 if groups is None else int(np.max(groups)) + 1,
        i1=pairs[:, 0].astype(np.intp),
        i2=pairs[:, 1].astype(np.intp),
        group=np.zeros(len(pairs), np.intp) if groups is None else np.asarray(groups, np.intp),
        wins=np.asarray(wins, float),
        games=np.asarray(games, float),
        hyperprior=hyperprior,
        prior_scale=scale,
        tau_scale=tau_scale,
    )


def _exact_moments(design: Design) -> dict[str, tuple[float, float]]:
    """Posterior mean and sd of sigma and of beta_0 - beta_1, beta_0 - beta_2 by quadrature
    (sigma up to 8: cut at 4, the grid lost enough of its right tail to make the sd 1% short)."""
    s = np.linspace(0.005, 8.0, 320)
    c = np.linspace(-7, 7, 181)
    sig, c1, c2 = np.meshgrid(s, c, c, indexing="ij")
    log_p = -0.5 * (np.log(sig) / design.prior_scale) ** 2 - np.log(sig)  # lognormal(0, s)
    log_p += -2 * np.log(sig) - (c1**2 + c2**2) / (2 * sig**2)
    return _grid_moments(design, c1, c2, log_p, {"sigma": sig})


def _grid_moments(
    design: Design, c1: np.ndarray, c2: np.ndarray, log_p: np.ndarray, extra: dict
) -> dict[str, tuple[float, float]]:
    """Posterior mean and sd of ``extra``'s quantities and of beta_0 - beta_1 and
    beta_0 - beta_2 over a grid of the Helmert contrasts ``c1, c2`` of 3 abilities, whose log
    prior on the grid is ``log_p`` (the likelihood of ``design`` is added here)."""
    # beta = mean + c1 * (1, -1, 0) / sqrt 2 + c2 * (1, 1, -2) / sqrt 6
    b = [
        c1 / np.sqrt(2) + c2 / np.sqrt(6),
        -c1 / np.sqrt(2) + c2 / np.sqrt(6),
        -2 * c2 / np.sqrt(6),
    ]
    for k in range(len(design.wins)):
        eta = b[design.i1[k]] - b[design.i2[k]]
        log_p = log_p + design.wins[k] * eta - design.games[k] * np.logaddexp(0, eta)
    w = np.exp(log_p - log_p.max())
    w /= w.sum()
    out = {}
    for name, value in {**extra, "d01": b[0] - b[1], "d02": b[0] - b[2]}.items():
        m = float((w * value).sum())
        out[name] = (m, float(np.sqrt((w * (value - m) ** 2).sum())))
    return out


@pytest.mark.slow
def test_fractional_counts_give_the_exact_posterior():
    """Split ties (x.5 counts) on 3 algorithms: means within 4 MCSE, sds within 3%."""
    design = _design(3, PAIRS3, [3.5, 6.0, 4.5], [5.0, 7.0, 9.0])
    rng = np.random.default_rng(20261128)
    draws = _gibbs.sample(design, chains=4, iter_warmup=100, iter_sampling=5000, rng=rng)
    beta = draws["beta"]
    got = {"sigma": draws["sigma"], "d01": beta[..., 0] - beta[..., 1]}
    got["d02"] = beta[..., 0] - beta[..., 2]
    exact = _exact_moments(design)
    for name, x in got.items():
        mean, sd = exact[name]
        mcse = x.std() / np.sqrt(convergence.ess_bulk(x))
        assert abs(x.mean() - mean) < 4 * mcse, (name, x.mean(), mean, mcse)
        assert x.std() == pytest.approx(sd, rel=0.03), name


@pytest.mark.slow
def test_rounding_the_fractional_counts_is_detected():
    """The same check fails when the counts are rounded: the test can tell the difference."""
    exact = _exact_moments(_design(3, PAIRS3, [3.5, 6.0, 4.5], [5.0, 7.0, 9.0]))
    rounded = _design(3, PAIRS3, [4.0, 6.0, 5.0], [5.0, 7.0, 9.0])
    draws = _gibbs.sample(
        rounded, chains=4, iter_warmup=100, iter_sampling=5000, rng=np.random.default_rng(3)
    )
    d = draws["beta"][..., 0] - draws["beta"][..., 2]
    mcse = d.std() / np.sqrt(convergence.ess_bulk(d))
    assert abs(d.mean() - exact["d02"][0]) > 4 * mcse


# ------------------------------------------------------------------ simulation-based calibration

REPLICATIONS = 200
KEPT = 100  # posterior draws per replication after thinning: ranks 0..100
BINS = 10


def _prior_sigma(rng, hyperprior, scale):
    if hyperprior == 1:
        return float(np.exp(scale * rng.standard_normal()))
    if hyperprior == 2:
        return float(abs(scale * rng.standard_cauchy()))
    return float(abs(scale * rng.standard_normal()))


def _sbc(
    n_alg,
    n_sets,
    *,
    hyperprior=1,
    scale=0.5,
    groups=0,
    tau_scale=0.5,
    seed=0,
    kernel="auto",
    kept=KEPT,
):
    """Ranks of the true sigma (tau), each beta and each contrast beta_i - beta_0 (group
    model: each group ability and contrast too) among ``kept`` posterior draws, over
    REPLICATIONS simulated data sets; ``"_kernel"``: whether each replication's chain kept
    the independence kernel (chosen in the warm-up, whatever ``kept``)."""
    rng = np.random.default_rng(seed)
    pairs = [(i, j) for i in range(n_alg) for j in range(i + 1, n_alg)]
    ranks: dict[str, list[int]] = {}
    done = 0
    while done < REPLICATIONS:
        sigma = _prior_sigma(rng, hyperprior, scale)
        beta = sigma * rng.standard_normal(n_alg)
        truth = {"sigma": sigma, **{f"beta{i}": beta[i] for i in range(n_alg)}}
        if groups:
            tau = abs(tau_scale * rng.standard_normal())
            theta = beta + tau * rng.standard_normal((groups, n_alg))
            truth["tau"] = tau
            truth |= {f"theta{g}_{i}": theta[g, i] for g in range(groups) for i in range(n_alg)}
            rows = [(g, i, j) for g in range(groups) for i, j in pairs]
            per = n_sets // groups
        else:
            theta = beta[None, :]
            rows = [(0, i, j) for i, j in pairs]
            per = n_sets
        p = special.expit(np.array([theta[g, i] - theta[g, j] for g, i, j in rows]))
        wins = rng.binomial(per, p)
        design = _design(
            n_alg,
            [(i, j) for _, i, j in rows],
            wins,
            np.full(len(rows), per),
            hyperprior=hyperprior,
            scale=scale,
            groups=[g for g, _, _ in rows] if groups else None,
            tau_scale=tau_scale if groups else None,
        )
        report: dict = {}
        draws = _gibbs.sample(
            design,
            chains=1,
            iter_warmup=50,
            iter_sampling=2 * kept,
            rng=rng,
            kernel=kernel,
            report=report,
        )
        ranks.setdefault("_kernel", []).append(report["kernel"] == "independence")
        got = {"sigma": draws["sigma"][0, ::2]}
        got |= {f"beta{i}": draws["beta"][0, ::2, i] for i in range(n_alg)}
        if groups:
            got["tau"] = draws["tau"][0, ::2]
            flat = draws["beta_group"][0, ::2]
            got |= {
                f"theta{g}_{i}": flat[:, g * n_alg + i] for g in range(groups) for i in range(n_alg)
            }
        # the contrasts, which the data inform (each beta alone is mostly their common
        # level, which only the prior sees: a test of it would be blind to the likelihood)
        for i in range(1, n_alg):
            got[f"beta{i}-beta0"] = got[f"beta{i}"] - got["beta0"]
            truth[f"beta{i}-beta0"] = truth[f"beta{i}"] - truth["beta0"]
            for g in range(groups):
                got[f"theta{g}_{i}-theta{g}_0"] = got[f"theta{g}_{i}"] - got[f"theta{g}_0"]
                truth[f"theta{g}_{i}-theta{g}_0"] = truth[f"theta{g}_{i}"] - truth[f"theta{g}_0"]
        for name, values in got.items():
            ranks.setdefault(name, []).append(int((values < truth[name]).sum()))
        done += 1
    return ranks


def _uniform(ranks: dict[str, list[int]]) -> dict[str, float]:
    """Chi-square p-value of each parameter's ranks (0..KEPT) against uniform, in BINS bins."""
    out = {}
    for name, r in ranks.items():
        if name.startswith("_"):  # not a parameter: which kernel sampled
            continue
        counts = np.bincount(np.asarray(r) * BINS // (KEPT + 1), minlength=BINS)
        out[name] = float(stats.chisquare(counts).pvalue)
    return out


def _check(ranks: dict[str, list[int]]) -> None:
    pvalues = _uniform(ranks)
    worst = min(pvalues, key=pvalues.get)
    assert pvalues[worst] > 0.001 / len(pvalues), (worst, pvalues[worst], pvalues)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("n_alg", "n_sets", "hyperprior", "scale"),
    [(5, 20, 1, 0.5), (3, 2, 1, 0.5), (5, 20, 2, 1.0), (5, 20, 3, 3.0)],
    ids=["5x20-lognormal", "3x2-sparse", "5x20-half-cauchy", "5x20-half-normal"],
)
def test_simulation_based_calibration(n_alg, n_sets, hyperprior, scale):
    _check(_sbc(n_alg, n_sets, hyperprior=hyperprior, scale=scale, seed=n_alg * 10 + hyperprior))


@pytest.mark.slow
def test_simulation_based_calibration_of_the_independence_kernel():
    """Where the posterior is near normal: the independence Metropolis-Hastings kernel,
    forced (6 algorithms x 60 data sets), and "auto" on 10 algorithms x 60 data sets, which
    chooses it where the simulated posterior is near normal (large sigmas give lopsided wins
    and keep Gibbs)."""
    forced = _sbc(6, 60, seed=61, kernel="independence")
    assert all(forced["_kernel"])
    _check(forced)
    chosen = _sbc(10, 60, seed=62)
    assert 0.2 < np.mean(chosen["_kernel"]), np.mean(chosen["_kernel"])
    _check(chosen)


def test_few_algorithms_keep_the_gibbs_sampler():
    """5 algorithms: sigma's posterior is too skewed for the normal proposal however many
    data sets there are (20,000 here gave chains stalling in sigma's tail), and "auto" keeps
    Gibbs."""
    rng = np.random.default_rng(8)
    pairs = [(i, j) for i in range(5) for j in range(i + 1, 5)]
    games = np.full(len(pairs), 20000.0)
    design = _design(5, pairs, rng.binomial(20000, 0.5, len(pairs)).astype(float), games)
    report: dict = {}
    _gibbs.sample(design, chains=4, iter_warmup=50, iter_sampling=10, rng=rng, report=report)
    assert report["kernel"] == "gibbs"


@pytest.mark.slow
def test_the_sparse_case_keeps_the_gibbs_sampler():
    """3 algorithms x 2 data sets: the prior and the funnel dominate, the posterior is far
    from normal, and "auto" keeps Gibbs (which the calibration above checks there)."""
    ranks = _sbc(3, 2, seed=33, kept=1)  # the kernel only: no draws to rank
    assert np.mean(ranks["_kernel"]) < 0.05


@pytest.mark.slow
def test_simulation_based_calibration_of_the_group_model():
    """4 algorithms, 3 groups of 6 data sets: sigma, tau, beta and every group ability."""
    _check(_sbc(4, 18, groups=3, tau_scale=0.5, seed=7))


@pytest.mark.slow
def test_calibration_detects_a_wrong_sampler(monkeypatch):
    """The SBC check fails for a sampler that is slightly off: one that sees every game
    twice (its posterior too narrow by a factor sqrt 2)."""
    real = Design.__init__

    def doubled(self, **kw):
        kw["wins"] = np.asarray(kw["wins"]) * 2.0
        kw["games"] = np.asarray(kw["games"]) * 2.0
        real(self, **kw)

    monkeypatch.setattr(Design, "__init__", doubled)
    with pytest.raises(AssertionError):
        _check(_sbc(5, 20, seed=51))


# ------------------------------------------------------------------ the Pólya-Gamma draws


#: Shapes and tilts where polyagamma 2.0.2's default ("hybrid") draws are off: its
#: "alternate" method (a fractional shape; a whole one under 25 with z >= 2; 110 standard
#: errors too high at shape 49 in 4 million draws) and its saddle method at small shapes.
PG_CASES = [(1.0, 0.0), (2.0, 1.5), (3.5, 1.0), (20.0, 3.0), (49.0, 0.5), (60.0, 0.7), (132.0, 4.0)]


@pytest.mark.slow
@pytest.mark.parametrize(("h", "z"), PG_CASES)
def test_polya_gamma_draws_have_the_exact_moments(h, z):
    """The engine's draws (a million) and the fallback's (200,000, 200 gammas each): the
    mean within 5 standard errors, the variance within 1% and 2%."""
    rng = np.random.default_rng(1)
    mean, var = _polya_gamma.mean(h, z), _polya_gamma.variance(h, z)
    for draw, n, rel in (
        (_polya_gamma.draw, 1_000_000, 0.01),
        (_polya_gamma.fallback, 200_000, 0.02),
    ):
        x = draw(np.full(n, h), np.full(n, z), rng)
        assert abs(x.mean() - mean) < 5 * np.sqrt(var / n), draw
        assert x.var() == pytest.approx(var, rel=rel), draw


@pytest.mark.slow
def test_the_moment_check_detects_a_bias_of_a_percent():
    """The check above fails for draws whose mean is 1% off, as polyagamma 2.0.2's default
    ("alternate") method gives at a fractional shape: that is how the engine's choice of
    methods was made."""
    n, h, z = 1_000_000, 3.5, 1.0
    x = _polya_gamma.draw(np.full(n, h), np.full(n, z), np.random.default_rng(1)) * 1.01
    mean, var = _polya_gamma.mean(h, z), _polya_gamma.variance(h, z)
    assert abs(x.mean() - mean) > 5 * np.sqrt(var / n)


def test_the_sweeps_run_blas_on_one_thread():
    """Many small decompositions a sweep: BLAS threads only contend and slow them down (a
    50-algorithm fit took half again as long with them), so the sampler runs BLAS on one
    thread, and gives the threads back after."""
    from threadpoolctl import threadpool_info

    def blas_threads() -> set[int]:
        return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}

    seen: list[set[int]] = []
    design = _design(3, PAIRS3, [3, 4, 5], [10, 10, 10])
    _gibbs.sample(
        design,
        chains=2,
        iter_warmup=30,
        iter_sampling=30,
        rng=np.random.default_rng(0),
        context=RunContext(progress=lambda stage, fraction: seen.append(blas_threads())),
    )
    assert seen and all(threads == {1} for threads in seen[:-1])


def test_the_mode_is_found_where_the_log_density_is_large():
    """50 algorithms with 5000 games a pair: the log posterior is in the hundreds of
    thousands, so its gradient at the mode cannot be made smaller than rounding allows; the
    Newton iterations stop on the decrement (the density still to gain), and the independence
    kernel is then chosen, not given up for Gibbs (a sweep of which costs 30 times a step)."""
    from bbt_widget.engines import _independence

    rng = np.random.default_rng(4)
    n = 50
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    ability = rng.normal(0, 0.05, n)
    games = np.full(len(pairs), 5000.0)
    p = special.expit(np.array([ability[i] - ability[j] for i, j in pairs]))
    design = _design(n, pairs, rng.binomial(5000, p).astype(float), games)
    found = _independence.find_mode(design, np.zeros(n + 1))
    assert found is not None
    report: dict = {}
    _gibbs.sample(
        design,
        chains=4,
        iter_warmup=100,
        iter_sampling=20,
        rng=np.random.default_rng(5),
        report=report,
    )
    assert report["kernel"] == "independence", report


def test_clearly_ordered_algorithms_pass_their_diagnostics_in_one_round():
    """20 algorithms, each beating every weaker one on all 8 data sets (complete
    separation): only the hyper-prior bounds the abilities. The Gibbs sweeps alone moved the
    common scale of the abilities and sigma so slowly that sigma's bulk ESS was 9 of 4000
    draws (the scale move mends that), and the middle algorithms' abilities so slowly that
    their bulk ESS was under 30 (R-hat 1.10): the default fit then drew a round ten times as
    long, 20 CPU-seconds, and still failed. The abilities' Hamiltonian moves mix them in the
    first round."""
    names = [f"a{k:02d}" for k in range(20)]
    rng = np.random.default_rng(0)
    data = pd.DataFrame(
        [
            {
                "db": f"d{d}",
                **{n: 0.5 + 0.02 * k + rng.normal(0, 0.005) for k, n in enumerate(names)},
            }
            for d in range(8)
        ]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no DiagnosticsWarning
        res = bbt.fit(data, dataset="db", engine="numpy", seed=1, draws="fixed")
    info = res.draws.info
    assert info["kernel"] == "gibbs" and info["thin"] == 1, info["convergence"]
    assert "then" not in info["convergence"], info["convergence"]
    assert "Hamiltonian" in info["sampler"]
    beta = res.draws.params["beta"]
    assert min(convergence.ess_bulk(beta[..., j]) for j in range(20)) > 400
    assert max(convergence.rhat(beta[..., j]) for j in range(20)) < 1.01
    assert convergence.ess_bulk(res.draws.params["sigma"]) > 400


def _exact_given_sigma(design: Design, sigma: float) -> dict[str, tuple[float, float]]:
    """Mean and sd of beta_0 - beta_1 and beta_0 - beta_2 given sigma, 3 algorithms, by
    quadrature over their two Helmert contrasts (the abilities' mean is the prior's alone)."""
    c = np.linspace(-8 * sigma, 8 * sigma, 801)
    c1, c2 = np.meshgrid(c, c, indexing="ij")
    return _grid_moments(design, c1, c2, -(c1**2 + c2**2) / (2 * sigma**2), {})


def test_the_abilities_hamiltonian_moves_leave_their_conditional_invariant():
    """The moves alone, at a fixed sigma, from the mode: the draws of two contrasts have
    their exact conditional mean and sd (quadrature), with the step fixed as in kept sweeps."""
    from bbt_widget.engines._hmc import AbilityMoves
    from bbt_widget.engines._independence import Proposal

    design = _design(3, PAIRS3, [7.0, 8.0, 1.0], [7.0, 8.0, 9.0])
    moves = AbilityMoves.at(design, Proposal.at_mode(design, np.zeros(4)))
    assert moves is not None
    sigma = np.full(4, 3.0)
    rng = np.random.default_rng(8)
    beta = np.zeros((4, 3))
    for _ in range(100):
        beta = moves.move(beta, sigma, rng, tune=True)
    kept = np.empty((4, 6000, 3))
    for t in range(kept.shape[1]):
        beta = kept[:, t] = moves.move(beta, sigma, rng, tune=False)
    assert 0.5 < (moves.acceptance or 0.0) < 0.98
    exact = _exact_given_sigma(design, 3.0)
    for name, x in {"d01": kept[..., 0] - kept[..., 1], "d02": kept[..., 0] - kept[..., 2]}.items():
        mean, sd = exact[name]
        mcse = x.std() / np.sqrt(convergence.ess_bulk(x))
        assert abs(x.mean() - mean) < 4 * mcse, (name, x.mean(), mean, mcse)
        assert x.std() == pytest.approx(sd, rel=0.03), name


def test_the_independence_kernel_leaves_its_target_invariant():
    """The kernel the numpy engine and the hierarchical t-test share: proposals from a wide
    normal, weighted against a standard normal target, give the target's moments."""
    from bbt_widget.engines._independence import independence_chains

    rng = np.random.default_rng(3)
    z = rng.normal(0.5, 1.5, size=(4, 20_000))
    log_w = stats.norm.logpdf(z) - stats.norm.logpdf(z, 0.5, 1.5)
    held, accepted = independence_chains(log_w, rng)
    draws = np.take_along_axis(z, held, axis=1)
    assert (held >= 0).all() and accepted[:, 0].all()  # each chain starts at its first
    assert abs(draws.mean()) < 0.03
    assert abs(draws.var() - 1.0) < 0.04
    assert 0.5 < accepted.mean() < 0.95


def test_the_independence_kernel_keeps_its_start_and_refuses_nan_weights():
    from bbt_widget.baselines._hierarchical_sampler import _chains

    rng = np.random.default_rng(0)
    z = rng.normal(size=(2, 5, 3))
    lp = np.full((2, 5), np.nan)  # nothing to accept: every ratio is nan
    lp[1, 3] = 0.0  # ... but one proposal of chain 1, far better than its start
    lq = np.zeros((2, 5))
    start = (np.ones((2, 3)), np.array([-1.0, -50.0]), np.zeros(2))
    states, last_lp, accepted = _chains(z, lp, lq, rng, start=start)
    assert not accepted[0].any() and (states[0] == 1.0).all() and last_lp[0] == -1.0
    assert accepted[1].tolist() == [False, False, False, True, False]
    assert (states[1, :3] == 1.0).all() and (states[1, 3:] == z[1, 3]).all()
    assert last_lp[1] == 0.0
