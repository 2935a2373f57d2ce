"""An independence Metropolis-Hastings kernel for the plain BBT model: the numpy engine's
sampler where the posterior is close to normal, as it is with many games per pair.

The state is ``(log sigma, beta)``. Each step proposes, for every chain at once, a draw of
the normal distribution centred on the posterior mode, with the inverse of the negative
Hessian of the log posterior there as its covariance (the Laplace approximation), and accepts
it with the Metropolis-Hastings probability ``min(1, [pi(new) q(old)] / [pi(old) q(new)])``
(Tierney 1994, Ann. Statist. 22(4), doi:10.1214/aos/1176325750); then ``log sigma`` moves
given ``beta`` (see :class:`Chains`). The chain's stationary law is the exact posterior
whatever the proposal; the proposal decides only how fast it mixes. (A multivariate t
proposal, whose heavier tails bound ``pi / q``, was tried: its scale mixture spreads the
draws in every dimension at once, and at 17 or more dimensions it accepted far fewer.)

The Pólya-Gamma Gibbs sampler (:mod:`._gibbs`) pays one Pólya-Gamma draw per pair and chain
a sweep, about 1.5 microseconds each at the shapes of many data sets; a step here costs one
evaluation of the log posterior (a few operations per pair). Where the posterior is near
normal (many data sets, as in most benchmark studies) nearly every proposal is accepted and
the draws are close to independent. Where it is not (few data sets, where the prior and the
funnel of sigma and beta dominate) the acceptance rate falls: :func:`._gibbs.sample` measures
it during the warm-up and keeps the Gibbs sampler there.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._design import Array, Design, log_prior_sigma, softplus

#: Newton iterations before the mode is given up (they converge in 5-10).
_MAX_NEWTON = 60
#: Newton stops when the Newton decrement (``g' H^-1 g``, twice the log density the next
#: step would gain) is below this.
_DECREMENT_TOLERANCE = 1e-9
#: The mode's log sigma must lie above this: a mode at the edge (sigma near 0: the prior's
#: funnel dominates) is a posterior that is not near normal.
_LOWEST_LOG_SIGMA = -8.0


def log_posterior(design: Design, x: Array, beta: Array) -> Array:
    """``log p(log sigma = x, beta | data)`` up to a constant, per chain: ``x`` (chains,),
    ``beta`` (chains, n_alg)."""
    return np.asarray(log_likelihood(design, beta) + log_prior(design, x, beta))


def log_likelihood(design: Design, beta: Array) -> Array:
    """The binomial log-likelihood of ``beta`` (chains, n_alg), up to a constant."""
    psi = beta[:, design.i1] - beta[:, design.i2]
    return np.asarray(psi @ design.wins - softplus(psi) @ design.games)


def log_prior(design: Design, x: Array, beta: Array) -> Array:
    """``log p(x, beta)``: ``beta ~ Normal(0, e^x)`` and the hyper-prior of ``x = log sigma``
    (with its Jacobian)."""
    # a far proposal or Newton step may overflow: its density is then -inf or nan, and
    # it is rejected (nan compares false) or its step halved
    with np.errstate(over="ignore", invalid="ignore"):
        prior_beta = -design.n_alg * x - 0.5 * (beta**2).sum(axis=1) * np.exp(-2.0 * x)
        return np.asarray(prior_beta + log_prior_sigma(x, design))


def _prior_sigma_derivatives(x: float, design: Design) -> tuple[float, float]:
    """First and second derivatives in ``x = log sigma`` of :func:`._design.log_prior_sigma`."""
    s = design.prior_scale
    if design.hyperprior == 1:  # -x^2 / (2 s^2)
        return -x / s**2, -1.0 / s**2
    u = np.exp(2.0 * x) / s**2
    if design.hyperprior == 2:  # x - log(1 + u)
        return 1.0 - 2.0 * u / (1.0 + u), -4.0 * u / (1.0 + u) ** 2
    return 1.0 - u, -2.0 * u  # x - u / 2


def _gradient_hessian(design: Design, theta: Array) -> tuple[Array, Array]:
    """Gradient and Hessian of :func:`log_posterior` at ``theta = (x, beta)``."""
    x, beta = float(theta[0]), theta[1:]
    n = design.n_alg
    psi = beta[design.i1] - beta[design.i2]
    p = 0.5 + 0.5 * np.tanh(0.5 * psi)
    residual = design.wins - design.games * p
    weight = design.games * p * (1.0 - p)
    grad_beta = np.bincount(design.i1, residual, n) - np.bincount(design.i2, residual, n)
    info = np.zeros((n, n))
    np.add.at(info, (design.i1, design.i1), weight)
    np.add.at(info, (design.i2, design.i2), weight)
    np.add.at(info, (design.i1, design.i2), -weight)
    np.add.at(info, (design.i2, design.i1), -weight)
    precision = np.exp(-2.0 * x)
    d1, d2 = _prior_sigma_derivatives(x, design)
    squares = float(beta @ beta)
    gradient = np.empty(n + 1)
    gradient[0] = -n + squares * precision + d1
    gradient[1:] = grad_beta - beta * precision
    hessian = np.empty((n + 1, n + 1))
    hessian[0, 0] = -2.0 * squares * precision + d2
    hessian[0, 1:] = hessian[1:, 0] = 2.0 * beta * precision
    hessian[1:, 1:] = -info - precision * np.eye(n)
    return gradient, hessian


def find_mode(design: Design, start: Array) -> tuple[Array, Array] | None:
    """The posterior mode of ``(log sigma, beta)`` by Newton's method from ``start`` (with
    step halving, and the Hessian made negative definite where it is not), and the negative
    Hessian there; ``None`` when there is no interior mode to approximate around."""
    theta = np.asarray(start, dtype=float).copy()
    value = float(log_posterior(design, theta[:1], theta[None, 1:])[0])
    for _ in range(_MAX_NEWTON):
        gradient, hessian = _gradient_hessian(design, theta)
        lam, vec = np.linalg.eigh(-hessian)
        step = vec @ ((vec.T @ gradient) / np.maximum(lam, 1e-8 * max(lam.max(), 1.0)))
        # converged when the Newton decrement (the log density still to gain) is below
        # the rounding of a log density summed over many games, not at a fixed gradient
        if float(gradient @ step) < _DECREMENT_TOLERANCE:
            break
        for _halving in range(40):
            trial = theta + step
            new = float(log_posterior(design, trial[:1], trial[None, 1:])[0])
            if np.isfinite(new) and new >= value - 1e-12:
                break
            step *= 0.5
        else:
            return None
        theta, value = trial, new
    else:
        return None
    negative_hessian = -_gradient_hessian(design, theta)[1]
    if theta[0] < _LOWEST_LOG_SIGMA or np.linalg.eigvalsh(negative_hessian)[0] <= 0:
        return None
    return theta, negative_hessian


def start_clear_of_the_funnel(design: Design) -> Array:
    """A start for :func:`find_mode` with no sampler's draws to start from (the Laplace
    approximation): ``log sigma = 0`` and the abilities at their mode given it.

    Why: from the origin, where the abilities are 0 and the data pull on nothing, the joint
    Newton steps shrink ``sigma`` (the normal prior's ``-n log sigma``) into the funnel of the
    hierarchical prior, where no interior mode is found. Given ``sigma`` the log posterior is
    concave in the abilities, so Newton's method (with step halving) finds their mode.
    """
    theta = np.zeros(design.n_alg + 1)
    value = float(log_posterior(design, theta[:1], theta[None, 1:])[0])
    for _ in range(_MAX_NEWTON):
        gradient, hessian = _gradient_hessian(design, theta)
        step = np.linalg.solve(-hessian[1:, 1:], gradient[1:])
        if float(gradient[1:] @ step) < _DECREMENT_TOLERANCE:
            break
        for _halving in range(40):
            trial = theta.copy()
            trial[1:] += step
            new = float(log_posterior(design, trial[:1], trial[None, 1:])[0])
            if np.isfinite(new) and new >= value - 1e-12:
                break
            step *= 0.5
        else:
            break
        theta, value = trial, new
    return theta


@dataclass(frozen=True)
class Proposal:
    """The normal proposal: mean ``mode``, covariance ``(U diag(values) U')^-1`` with
    ``U = vectors``."""

    mode: Array
    vectors: Array
    values: Array

    @classmethod
    def at_mode(cls, design: Design, start: Array) -> Proposal | None:
        """The proposal at the posterior mode found from ``start`` (see :func:`find_mode`)."""
        found = find_mode(design, start)
        if found is None:
            return None
        mode, precision = found
        values, vectors = np.linalg.eigh(precision)
        return cls(mode, vectors, values)

    def draw(self, chains: int, rng: np.random.Generator) -> Array:
        """One proposal per chain, shaped (chains, 1 + n_alg)."""
        z = rng.standard_normal((chains, self.mode.size)) / np.sqrt(self.values)
        return np.asarray(self.mode + z @ self.vectors.T)

    def log_density(self, theta: Array) -> Array:
        """Log density of the proposal at each row of ``theta``, up to a constant."""
        rotated = (theta - self.mode) @ self.vectors
        return np.asarray(-0.5 * (rotated**2 * self.values).sum(axis=1))


def independence_chains(
    log_w: Array, rng: np.random.Generator, current: Array | None = None
) -> tuple[Array, Array]:
    """The independence Metropolis-Hastings kernel through proposals drawn beforehand, every
    chain at once: this engine's step (one proposal a chain) and the hierarchical t-test's
    sampler (a batch a chain, their densities computed together).

    ``log_w`` (chains, draws) is each proposal's log target minus log proposal density; it is
    accepted with probability ``min(1, w(new) / w(held))``, a nan ratio refused. ``current``
    (chains,) is the log weight of each chain's state before its first proposal (``None``:
    each chain starts at its first proposal). Returns ``held``, the index of the proposal each
    chain holds after each step (-1: its starting state), and ``accepted``, both (chains,
    draws).
    """
    chains, draws = log_w.shape
    log_u = np.log(rng.random((chains, draws)))
    held = np.full((chains, draws), -1)
    accepted = np.zeros((chains, draws), dtype=bool)
    index = np.full(chains, -1)
    if current is None:
        current, first = log_w[:, 0].copy(), 1
        index[:] = held[:, 0] = 0
        accepted[:, 0] = True
    else:
        current, first = np.asarray(current, dtype=float).copy(), 0
    for t in range(first, draws):
        with np.errstate(invalid="ignore"):  # -inf - -inf where both lie beyond float range
            ratio = log_w[:, t] - current
        take = log_u[:, t] < np.where(np.isnan(ratio), -np.inf, ratio)
        current = np.where(take, log_w[:, t], current)
        index = np.where(take, t, index)
        held[:, t] = index
        accepted[:, t] = take
    return held, accepted


class Chains:
    """The independence Metropolis-Hastings chains: their states and acceptances.

    Each step is the independence move on ``(log sigma, beta)`` followed by a random-walk
    Metropolis move of ``log sigma`` given ``beta`` (both leave the posterior invariant, so
    their composition does). The second move is what keeps sigma mixing where the normal
    proposal's tails are lighter than its posterior's (few algorithms inform sigma little,
    however many data sets there are): there a rejected proposal would leave a chain stuck
    in sigma's tail for many steps.
    """

    def __init__(self, design: Design, proposal: Proposal, x: Array, beta: Array) -> None:
        self.design, self.proposal = design, proposal
        self.theta = np.column_stack([x, beta])
        self.likelihood = log_likelihood(design, self.theta[:, 1:])
        self.proposed = 0
        self.accepted = 0
        # the random walk's step: 2.4 of the proposal's sds of log sigma (the optimal scale
        # of a one-dimensional random walk on a normal target; Gelman, Roberts, Gilks 1996)
        covariance_x = (proposal.vectors[0] ** 2 / proposal.values).sum()
        self.scale = float(2.4 * np.sqrt(covariance_x))

    def _log_weight(self, theta: Array, likelihood: Array) -> Array:
        """Log posterior minus log proposal density: the weight the kernel compares."""
        prior = log_prior(self.design, theta[:, 0], theta[:, 1:])
        return np.asarray(likelihood + prior - self.proposal.log_density(theta))

    def step(self, rng: np.random.Generator) -> None:
        """One step of every chain: the independence move, then log sigma given beta."""
        chains = self.theta.shape[0]
        new = self.proposal.draw(chains, rng)
        likelihood = log_likelihood(self.design, new[:, 1:])
        weight = self._log_weight(new, likelihood)
        current = self._log_weight(self.theta, self.likelihood)
        accept = independence_chains(weight[:, None], rng, current)[1][:, 0]
        self.theta[accept] = new[accept]
        self.likelihood[accept] = likelihood[accept]
        self.proposed += chains
        self.accepted += int(accept.sum())
        # log sigma given beta: the likelihood does not depend on it
        x, beta = self.theta[:, 0], self.theta[:, 1:]
        moved = x + self.scale * rng.standard_normal(chains)
        gain = log_prior(self.design, moved, beta) - log_prior(self.design, x, beta)
        with np.errstate(invalid="ignore"):
            keep = np.log(rng.random(chains)) < gain
        self.theta[keep, 0] = moved[keep]

    @property
    def acceptance(self) -> float:
        """The share of proposals accepted so far."""
        return self.accepted / self.proposed if self.proposed else 0.0

    @property
    def sigma(self) -> Array:
        return np.asarray(np.exp(self.theta[:, 0]))

    @property
    def beta(self) -> Array:
        return np.asarray(self.theta[:, 1:])
