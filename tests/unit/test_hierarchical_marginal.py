"""The hierarchical t-test's integrals over each data set's mean and sd, checked against
adaptive quadrature and closed forms (no Stan)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import integrate, special, stats

from bbt_widget.baselines._hierarchical_marginal import (
    Marginal,
    conditional_draws,
    log_marginals,
    log_nu_prior,
    marginal,
)

H = 1000.0  # sigma_i's upper bound in the sampler's units (1000 mean sd)


def one_dataset(xbar: float, sd: float, n: int, rho: float = 0.25, **prior) -> Marginal:
    """The marginal of one data set's summary, in units where the mean sd is 1."""
    data = {
        "scale": 1.0,
        "n": [n],
        "xbar": [xbar],
        "ss": [(n - 1) * sd**2],
        "rho": [rho],
        "sigma_high": H,
        "sigma0_high": 1000.0,
        "mu0_bound": 100.0,
        "nu_shift": prior.get("shift", 1.0),
        "beta_low": prior.get("beta", (0.01, 0.1))[0],
        "beta_high": prior.get("beta", (0.01, 0.1))[1],
        "alpha_node": [1.2, 1.8],
        "alpha_weight": [0.5, 0.5],
    }
    return marginal(data)


def f_exact(m: Marginal, x: float) -> float:
    """``S(x)^-k Q(k, S / 2H^2)`` relative to its value ``A^-k`` at the data set's mean."""
    ratio = 1 + (m.xbar[0] - x) ** 2 / (m.v[0] * m.a[0])
    return ratio ** -m.k[0] * special.gammaincc(m.k[0], ratio * m.a[0] / (2 * H**2))


def reference(m: Marginal, mu0: float, sigma0: float, nu: float) -> float:
    """``log integral f(x) t(x | mu0, sigma0, nu) dx`` by adaptive quadrature, split at
    both peaks and at multiples of both widths."""

    def g(x: float) -> float:
        return f_exact(m, x) * stats.t.pdf(x, nu, loc=mu0, scale=sigma0)

    marks = {-np.inf, np.inf}
    for centre, width in ((m.xbar[0], m.width[0]), (mu0, sigma0)):
        marks |= {centre + s * width for s in (-100, -10, -3, -1, 0, 1, 3, 10, 100)}
    edges = sorted(marks)
    total = sum(
        integrate.quad(g, lo, hi, epsabs=0, epsrel=1e-11, limit=400)[0]
        for lo, hi in itertools.pairwise(edges)
    )
    return float(np.log(total))


CASES = [
    # (xbar, sd, n, mu0, sigma0, nu): peaks together, apart, far apart (an outlying data
    # set), one far narrower than the other, light and heavy tails, few and many folds
    (0.0, 1.0, 4, 0.0, 1.0, 5.0),
    (0.3, 1.0, 4, -0.2, 2.0, 30.0),
    (-13.0, 0.8, 4, 0.0, 0.9, 20.0),
    (2.0, 0.01, 4, 0.0, 1.0, 3.0),
    (0.0, 1.0, 4, 0.5, 0.01, 50.0),
    (5.0, 3.0, 2, 0.0, 0.5, 1.2),
    (0.1, 0.5, 100, 0.0, 1.0, 500.0),
    (8.0, 0.2, 10, 0.0, 0.05, 1.05),
]


@pytest.mark.parametrize("xbar, sd, n, mu0, sigma0, nu", CASES)
def test_integral_matches_adaptive_quadrature(xbar, sd, n, mu0, sigma0, nu):
    m = one_dataset(xbar, sd, n)
    ours = log_marginals(m, np.array([mu0]), np.array([sigma0]), np.array([nu]))[0, 0]
    assert ours == pytest.approx(reference(m, mu0, sigma0, nu), abs=2e-4)


def test_a_tiny_sigma0_gives_the_limit_f_at_mu0():
    """As sigma_0 -> 0 the t is a point mass at mu_0 and the integral tends to f(mu_0): the
    quadrature must resolve a peak a million times narrower than the data set's (a grid
    spread evenly out to the other peak put a few nodes on it and found spurious mass)."""
    m = one_dataset(0.4, 1.0, 4)
    for sigma0 in (1e-4, 1e-6, 1e-8):
        ours = log_marginals(m, np.array([-0.3]), np.array([sigma0]), np.array([60.0]))[0, 0]
        assert ours == pytest.approx(np.log(f_exact(m, -0.3)), abs=1e-3)


def test_batches_of_draws_and_data_sets_line_up():
    data = {
        "scale": 2.0,
        "n": [4, 10, 3],
        "xbar": [0.2, -1.0, 6.0],
        "ss": [3.0, 9.0, 0.5],
        "rho": [0.25, 0.1, 1 / 3],
        "sigma_high": 2000.0,
        "sigma0_high": 100.0,
        "mu0_bound": 10.0,
        "nu_shift": 1.0,
        "beta_low": 0.01,
        "beta_high": 0.1,
        "alpha_node": [1.5],
        "alpha_weight": [1.0],
    }
    m = marginal(data)
    mu0, sigma0, nu = np.array([0.0, 0.5]), np.array([1.0, 0.2]), np.array([4.0, 40.0])
    both = log_marginals(m, mu0, sigma0, nu)
    assert both.shape == (2, 3)
    for b in range(2):
        for i in range(3):
            single = Marginal(
                **{
                    **m.__dict__,
                    **{
                        k: getattr(m, k)[i : i + 1]
                        for k in ("xbar", "a", "v", "k", "width", "q_rows")
                    },
                }
            )
            alone = log_marginals(single, mu0[b : b + 1], sigma0[b : b + 1], nu[b : b + 1])
            assert both[b, i] == pytest.approx(alone[0, 0], abs=1e-12)


@pytest.mark.parametrize("shift, beta", [(1.0, (0.01, 0.1)), (0.0, (0.05, 0.15))])
def test_nu_prior_is_the_gamma_averaged_over_alpha_and_beta(shift, beta):
    """The prior of nu with alpha and beta integrated out equals the double integral of
    the Gamma density (alpha at the two nodes, beta uniform), up to one constant."""
    m = one_dataset(0.0, 1.0, 4, shift=shift, beta=beta)
    nus = np.array([shift + 0.05, shift + 1.0, shift + 10.0, shift + 80.0, shift + 400.0])

    def direct(nu: float) -> float:
        free = nu - shift
        total = 0.0
        for alpha in (1.2, 1.8):
            total += (
                0.5
                * integrate.quad(
                    lambda b, a=alpha: stats.gamma.pdf(free, a, scale=1 / b), *beta, epsrel=1e-12
                )[0]
            )
        return np.log(total / (beta[1] - beta[0]))

    ours = log_nu_prior(m, nus)
    theirs = np.array([direct(v) for v in nus])
    assert ours - ours[0] == pytest.approx(theirs - theirs[0], abs=1e-8)


def test_conditional_draws_follow_the_integrand():
    """Draws of mu_i given (mu_0, sigma_0, nu) have the mean and quartiles of the density
    proportional to f t (by quadrature), for an outlying data set where it has two modes;
    S / (2 sigma_i^2) given mu_i averages k = (n - 1) / 2 (a Gamma(k) draw)."""
    m = one_dataset(4.0, 0.3, 4)
    theta = (0.0, 1.0, 3.0)
    count = 40_000
    mu, sigma = conditional_draws(m, *(np.full(count, v) for v in theta), np.random.default_rng(0))
    mu, sigma = mu[:, 0], sigma[:, 0]

    def g(x: float) -> float:
        return f_exact(m, x) * stats.t.pdf(x, theta[2], loc=theta[0], scale=theta[1])

    edges = [-np.inf, -3, -1, 0, 1, 3, 3.7, 4, 4.3, 6, np.inf]
    pieces = [integrate.quad(g, a, b, limit=200)[0] for a, b in itertools.pairwise(edges)]
    total = sum(pieces)
    mean = (
        sum(
            integrate.quad(lambda x: x * g(x), a, b, limit=200)[0]
            for a, b in itertools.pairwise(edges)
        )
        / total
    )
    assert mu.mean() == pytest.approx(mean, abs=4 * mu.std() / np.sqrt(count))
    # both modes carry mass: near mu_0 and near the data set's mean
    near_data = integrate.quad(g, 3.0, 5.0, limit=200)[0] / total
    assert 0.05 < near_data < 0.95
    assert np.mean((mu > 3.0) & (mu < 5.0)) == pytest.approx(near_data, abs=0.015)
    s = m.a[0] + (m.xbar[0] - mu) ** 2 / m.v[0]
    gamma = s / (2 * sigma**2)
    assert gamma.mean() == pytest.approx(m.k[0], abs=4 * np.sqrt(m.k[0] / count))
