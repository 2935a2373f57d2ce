"""Davidson's model of ties (``stan/davidson.stan``) sampled exactly in numpy: the numpy
engine's sampler for ``ties="davidson"``, with no compiler.

The model: per pair ``(win1, win2, ties) ~ Multinomial(N, softmax(b1, b2, nu + (b1 + b2) / 2))``,
``beta ~ Normal(0, sigma)``, ``sigma`` from the hyper-prior of the plain model and
``nu ~ Normal(0, 2)``. The tie probability is not logistic in a linear function of the
abilities, so the Pólya-Gamma Gibbs sampler of the plain model does not apply; this is a
Metropolis-Hastings sampler instead (exact too: every move leaves the posterior invariant).

The state is ``theta = (log sigma, c, nu)``, ``c`` the abilities' ``n - 1`` contrasts in the
Helmert basis that the Stan programs use. The likelihood ignores the abilities' mean, whose
coordinate is ``Normal(0, sigma)`` given ``sigma`` whatever the data: it is integrated out of
the target and drawn exactly for each kept draw, so it adds no funnel to the chains. Each
iteration of every chain (the chains are one batch: the first axis of every array) makes
four moves:

1. an independence move on ``theta`` (Tierney 1994), proposing from a defensive mixture
   (Hesterberg 1995) of the normal approximation at the posterior mode and the same normal
   three times as wide, whose tails bound the weights where the posterior's are heavier;
2. a random-walk Metropolis move on ``theta`` with the approximation's covariance scaled by
   ``2.38 / sqrt(dim)`` (Gelman, Roberts and Gilks 1996): local moves that need no good
   global approximation;
3. a random-walk Metropolis move of ``log sigma`` given the contrasts (its conditional is
   the prior's alone, cheap to evaluate);
4. ``(sigma, c) -> (k sigma, k c)``: the ridge along which a clear ordering of the
   algorithms (or sparse data) lets their common scale drift, where the moves above step
   slowly (its Jacobian cancels the normal prior's ``k^-(n-1)``).

Where no interior mode exists (the hyper-prior's funnel dominates), move 1 is left out and
the random walk's covariance is that of the chains halfway through the warm-up.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from ..core.run_context import QUIET, RunContext
from ._design import Array, Design, log_prior_sigma
from ._independence import Proposal, _prior_sigma_derivatives
from ._laplace import replicate as _replicate

#: Standard deviation of the normal prior of ``nu`` (``stan/davidson.stan``).
NU_SD = 2.0
#: Share of the independence proposals drawn from the wide component, and its width.
_WIDE_SHARE = 0.2
_WIDE = 3.0
#: Newton iterations before the mode is given up, and its convergence (Newton decrement).
_MAX_NEWTON = 60
_DECREMENT_TOLERANCE = 1e-9
#: A mode with ``log sigma`` below this is the funnel's, not an interior one.
_LOWEST_LOG_SIGMA = -8.0
#: Iterations between two progress calls and two looks at ``cancel``.
_PROGRESS_EVERY = 25

DESCRIPTION = (
    "Metropolis-Hastings sampler for Davidson's model: independence proposals from a "
    "defensive mixture at the posterior mode (Tierney 1994; Hesterberg 1995), random-walk "
    "moves of all parameters and of sigma, and a scale move; the abilities' mean drawn exactly"
)


def helmert_contrasts(n: int) -> Array:
    """Columns 2..n of the orthonormal Helmert basis of ``stan/bbt_common.stanfunctions``
    (their first column, the mean direction, is left out): shaped (n, n - 1)."""
    basis = np.zeros((n, n - 1))
    for k in range(1, n):
        c = 1.0 / np.sqrt(k * (k + 1.0))
        basis[:k, k - 1] = c
        basis[k, k - 1] = -k * c
    return basis


@dataclass(frozen=True)
class Ties:
    """The data of Davidson's model: the plain model's :class:`Design` (its indices, its
    ``wins`` are ``win1``, and its hyper-prior), the other two counts, the games per pair
    and the contrasts."""

    design: Design
    win2: Array
    ties: Array
    games: Array
    basis: Array

    @classmethod
    def from_stan_data(cls, data: Mapping[str, Any]) -> Ties:
        """From the Stan data of ``davidson.stan`` (as ``prepare_data`` returns it)."""
        design = Design.from_stan_data(data)
        win2 = np.asarray(data["win2"], dtype=float)
        ties = np.asarray(data["ties"], dtype=float)
        games = design.wins + win2 + ties
        return cls(design, win2, ties, games, helmert_contrasts(design.n_alg))

    def log_likelihood(self, theta: Array) -> Array:
        """The multinomial log-likelihood (up to a constant) of each row of ``theta``."""
        d = self.design
        beta = theta[:, 1:-1] @ self.basis.T
        b1, b2 = beta[:, d.i1], beta[:, d.i2]
        tie = theta[:, -1:] + 0.5 * (b1 + b2)
        norm = np.logaddexp(np.logaddexp(b1, b2), tie)
        return np.asarray(b1 @ d.wins + b2 @ self.win2 + tie @ self.ties - norm @ self.games)

    def log_prior(self, theta: Array) -> Array:
        """``log p(log sigma, c, nu)``: ``c ~ Normal(0, sigma)``, the hyper-prior of ``log
        sigma`` (Jacobian included) and ``nu ~ Normal(0, 2)``, up to a constant."""
        nu = theta[:, -1]
        return np.asarray(
            self.contrast_prior(theta[:, 0], theta[:, 1:-1]) - (0.5 / NU_SD**2) * nu * nu
        )

    def contrast_prior(self, x: Array, c: Array) -> Array:
        """``log p(log sigma = x, c)``, up to a constant (a far proposal may overflow: its
        density is then nan or -inf, and it is rejected)."""
        normal = -c.shape[1] * x - 0.5 * np.einsum("ij,ij->i", c, c) * np.exp(-2.0 * x)
        return np.asarray(normal + log_prior_sigma(x, self.design))

    def log_posterior(self, theta: Array) -> Array:
        return np.asarray(self.log_likelihood(theta) + self.log_prior(theta))

    def gradient_hessian(self, theta: Array) -> tuple[Array, Array]:
        """Gradient and Hessian of :meth:`log_posterior` at one point ``theta``."""
        d, n = self.design, self.design.n_alg
        x, c, nu = float(theta[0]), theta[1:-1], float(theta[-1])
        beta = self.basis @ c
        eta = np.column_stack([beta[d.i1], beta[d.i2], nu + 0.5 * (beta[d.i1] + beta[d.i2])])
        p = np.exp(eta - np.logaddexp.reduce(eta, axis=1, keepdims=True))
        counts = np.column_stack([d.wins, self.win2, self.ties])
        residual = counts - self.games[:, None] * p
        # d eta / d (b1, b2, nu): eta3 = nu + (b1 + b2) / 2
        jac = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.5, 0.5, 1.0]])
        g_pair = residual @ jac
        h_eta = -self.games[:, None, None] * (
            np.einsum("ka,ab->kab", p, np.eye(3)) - p[:, :, None] * p[:, None, :]
        )
        h_pair = np.einsum("ai,kab,bj->kij", jac, h_eta, jac)
        index = np.column_stack([d.i1, d.i2, np.full(len(d.i1), n)])
        grad_bn = np.zeros(n + 1)
        hess_bn = np.zeros((n + 1, n + 1))
        for a in range(3):
            np.add.at(grad_bn, index[:, a], g_pair[:, a])
            for b in range(3):
                np.add.at(hess_bn, (index[:, a], index[:, b]), h_pair[:, a, b])
        # from (beta, nu) to (c, nu), then the prior's terms and log sigma
        to_c = np.zeros((n + 1, n))
        to_c[:n, : n - 1] = self.basis
        to_c[n, n - 1] = 1.0
        m = n - 1
        precision = np.exp(-2.0 * x)
        d1, d2 = _prior_sigma_derivatives(x, d)
        squares = float(c @ c)
        gradient = np.empty(n + 1)
        hessian = np.zeros((n + 1, n + 1))
        gradient[1:] = to_c.T @ grad_bn
        hessian[1:, 1:] = to_c.T @ hess_bn @ to_c
        gradient[0] = -m + squares * precision + d1
        gradient[1:-1] -= c * precision
        gradient[-1] -= nu / NU_SD**2
        hessian[0, 0] = -2.0 * squares * precision + d2
        hessian[0, 1:-1] = hessian[1:-1, 0] = 2.0 * c * precision
        hessian[1:-1, 1:-1] -= precision * np.eye(m)
        hessian[-1, -1] -= 1.0 / NU_SD**2
        return gradient, hessian


def find_mode(ties: Ties) -> Proposal | None:
    """The normal approximation at the posterior mode of ``theta``, by Newton's method: first
    over ``(c, nu)`` at ``sigma = 1`` (a concave problem), then over everything from there;
    ``None`` when there is no interior mode."""
    theta = np.zeros(ties.design.n_alg + 1)
    for coords in (slice(1, None), slice(None)):
        found = _climb(ties, theta, coords)
        if found is None:
            return None
        theta = found
    precision = -ties.gradient_hessian(theta)[1]
    values, vectors = np.linalg.eigh(precision)
    if theta[0] < _LOWEST_LOG_SIGMA or values[0] <= 0:
        return None
    return Proposal(theta, vectors, values)


def _climb(ties: Ties, theta: Array, coords: slice) -> Array | None:
    """Newton's method over ``theta[coords]`` with the others held (step halving, and the
    Hessian made negative definite where it is not)."""
    theta = theta.copy()
    value = float(ties.log_posterior(theta[None])[0])
    for _ in range(_MAX_NEWTON):
        gradient, hessian = ties.gradient_hessian(theta)
        gradient, hessian = gradient[coords], hessian[coords, coords]
        lam, vec = np.linalg.eigh(-hessian)
        step = vec @ ((vec.T @ gradient) / np.maximum(lam, 1e-8 * max(lam.max(), 1.0)))
        if float(gradient @ step) < _DECREMENT_TOLERANCE:
            return theta
        for _halving in range(40):
            trial = theta.copy()
            trial[coords] += step
            new = float(ties.log_posterior(trial[None])[0])
            if np.isfinite(new) and new >= value - 1e-12:
                break
            step *= 0.5
        else:
            return None
        theta, value = trial, new
    return None


class Chains:
    """The chains of the sampler: their states, and the moves of the module's docstring."""

    def __init__(
        self, ties: Ties, proposal: Proposal | None, rng: np.random.Generator, chains: int
    ) -> None:
        self.ties, self.proposal = ties, proposal
        dim = ties.design.n_alg + 1
        if proposal is None:
            # rough scales until the warm-up's own spread replaces them (see adapt)
            self.walk = Proposal(np.zeros(dim), np.eye(dim), np.full(dim, 4.0))
            x = 0.5 * rng.standard_normal(chains)
            c = np.exp(x)[:, None] * rng.standard_normal((chains, dim - 2))
            self.theta = np.column_stack([x, c, rng.standard_normal(chains)])
        else:
            self.walk = proposal
            # dispersed starts, so that R-hat can see chains that have not forgotten them
            self.theta = proposal.mode + _WIDE * (proposal.draw(chains, rng) - proposal.mode)
        self.value = ties.log_posterior(self.theta)
        self.proposed = self.accepted = 0
        self._scales()

    def _scales(self) -> None:
        covariance = (self.walk.vectors**2 / self.walk.values).sum(axis=1)
        sd_x = float(np.sqrt(covariance[0]))
        self.step_size = 2.38 / np.sqrt(self.theta.shape[1])
        # 2.4 sds: the best scale of a one-dimensional random walk (Gelman et al. 1996)
        self.x_step = float(np.clip(2.4 * sd_x, 0.05, 3.0))
        self.scale_step = float(np.clip(sd_x, 0.02, 1.0))

    def adapt(self, history: Array) -> None:
        """The random walk's covariance from the chains' states ``history`` (steps, chains,
        dim), where no mode gave one; warm-up only."""
        if self.proposal is not None:
            return
        flat = history.reshape(-1, history.shape[-1])
        covariance = np.cov(flat, rowvar=False) + 1e-6 * np.eye(flat.shape[1])
        values, vectors = np.linalg.eigh(covariance)
        self.walk = Proposal(np.zeros(flat.shape[1]), vectors, 1.0 / values)
        self._scales()

    def _accept(
        self, new: Array, value: Array, log_ratio: Array, rng: np.random.Generator
    ) -> Array:
        accept = np.log(rng.random(len(new))) < log_ratio  # nan (an overflow): rejected
        self.theta[accept] = new[accept]
        self.value[accept] = value[accept]
        return accept

    def step(self, rng: np.random.Generator) -> None:
        """One iteration of every chain: the four moves."""
        ties, n = self.ties, len(self.theta)
        if self.proposal is not None:
            q = self.proposal
            wide = rng.random(n) < _WIDE_SHARE
            new = q.mode + np.where(wide, _WIDE, 1.0)[:, None] * (q.draw(n, rng) - q.mode)
            value = ties.log_posterior(new)
            ratio = value - self._log_q(new) - self.value + self._log_q(self.theta)
            self.accepted += int(self._accept(new, value, ratio, rng).sum())
            self.proposed += n
        walk = self.walk
        new = self.theta + self.step_size * (walk.draw(n, rng) - walk.mode)
        value = ties.log_posterior(new)
        self._accept(new, value, value - self.value, rng)
        # log sigma given the contrasts: the likelihood does not depend on it
        x, c = self.theta[:, 0], self.theta[:, 1:-1]
        moved = x + self.x_step * rng.standard_normal(n)
        gain = ties.contrast_prior(moved, c) - ties.contrast_prior(x, c)
        accept = np.log(rng.random(n)) < gain
        self.theta[accept, 0] = moved[accept]
        self.value[accept] += gain[accept]
        # the scale move: the posterior ratio times the Jacobian e^((n - 1) k)
        k = self.scale_step * rng.standard_normal(n)
        new = self.theta.copy()
        new[:, 0] += k
        new[:, 1:-1] *= np.exp(k)[:, None]
        value = ties.log_posterior(new)
        self._accept(new, value, value - self.value + (new.shape[1] - 2) * k, rng)

    def _log_q(self, theta: Array) -> Array:
        """Log density of the defensive mixture, up to the constant both components share."""
        assert self.proposal is not None
        narrow = self.proposal.log_density(theta)
        dim = theta.shape[1]
        return np.asarray(
            np.logaddexp(
                np.log1p(-_WIDE_SHARE) + narrow,
                np.log(_WIDE_SHARE) - dim * np.log(_WIDE) + narrow / _WIDE**2,
            )
        )

    @property
    def acceptance(self) -> float | None:
        """The share of independence proposals accepted (None: no mode, none made)."""
        return self.accepted / self.proposed if self.proposed else None


def sample(
    ties: Ties,
    *,
    chains: int,
    iter_warmup: int,
    iter_sampling: int,
    rng: np.random.Generator,
    context: RunContext = QUIET,
    report: dict[str, Any] | None = None,
) -> dict[str, Array]:
    """Posterior draws of ``sigma``, ``beta`` and ``nu``, shaped (chains, iter_sampling, ...)
    as ``stan/davidson.stan`` writes them, and its generated quantities ``win1_rep``,
    ``ties_rep`` and ``log_lik``. ``report``, when given, receives ``acceptance`` (of the
    independence proposals; None when there was no mode).

    Raises
    ------
    FitCancelled
        The context's cancel was set (looked at every few iterations).
    """
    # far proposals may overflow: their density is then nan or -inf, and they are rejected;
    # the products are of small matrices, which BLAS threads only slow down (and one thread
    # gives the same rounding, so the same draws, in every process)
    with (
        np.errstate(over="ignore", invalid="ignore", divide="ignore"),
        threadpool_limits(limits=1, user_api="blas"),
    ):
        return _run(ties, chains, iter_warmup, iter_sampling, rng, context, report)


def _run(
    ties: Ties,
    chains: int,
    iter_warmup: int,
    iter_sampling: int,
    rng: np.random.Generator,
    context: RunContext,
    report: dict[str, Any] | None,
) -> dict[str, Array]:
    run = Chains(ties, find_mode(ties), rng, chains)
    dim = ties.design.n_alg + 1
    history = np.empty((iter_warmup, chains, dim))
    kept = np.empty((iter_sampling, chains, dim))
    total = iter_warmup + iter_sampling
    for t in range(total):
        if t % _PROGRESS_EVERY == 0:
            context.check("the numpy sampler was cancelled")
            if t:
                context.report("sampling", t / total)
        run.step(rng)
        if t < iter_warmup:
            history[t] = run.theta
            if t + 1 == iter_warmup // 2 and t + 1 >= 20:
                run.adapt(history[(t + 1) // 2 : t + 1])
            continue
        kept[t - iter_warmup] = run.theta
    if report is not None:
        report["acceptance"] = run.acceptance
    context.report("sampling", 1.0)
    return outputs(ties, kept.transpose(1, 0, 2), rng)


def outputs(ties: Ties, kept: Array, rng: np.random.Generator) -> dict[str, Array]:
    """``sigma``, ``beta``, ``nu`` and the generated quantities of the draws ``kept`` of
    ``theta``, shaped (chains, draws, dim), as ``stan/davidson.stan`` writes them."""
    sigma = np.exp(kept[..., 0])
    # the abilities' mean: Normal(0, sigma) given sigma, whatever the data
    mean = sigma * rng.standard_normal(sigma.shape) / np.sqrt(ties.design.n_alg)
    beta = kept[..., 1:-1] @ ties.basis.T + mean[..., None]
    nu = kept[..., -1]
    return {"sigma": sigma, "beta": beta, "nu": nu} | replicate(ties, beta, nu, rng)


def replicate(ties: Ties, beta: Array, nu: Array, rng: np.random.Generator) -> dict[str, Array]:
    """``win1_rep``, ``ties_rep`` (int64) and ``log_lik`` of the draws ``beta`` (chains, draws,
    n_alg) and ``nu`` (chains, draws): the program's generated quantities."""
    d = ties.design
    data = {
        "i1": d.i1 + 1,
        "i2": d.i2 + 1,
        "win1": np.rint(d.wins),
        "win2": np.rint(ties.win2),
        "ties": np.rint(ties.ties),
    }
    shape = beta.shape[:2]
    out = _replicate("davidson", data, beta.reshape(-1, d.n_alg), nu.reshape(-1), rng)
    return {
        name: values.reshape(*shape, -1).astype(np.int64 if name != "log_lik" else np.float64)
        for name, values in out.items()
    }
