"""Hamiltonian Monte Carlo moves of the plain model's abilities given ``sigma``: what the
numpy engine's Gibbs sweeps add so that they mix where the Pólya-Gamma updates alone crawl.

Why: when algorithms are clearly ordered (one beats another on nearly every data set), the
Pólya-Gamma variables of far-apart pairs are small, and given them the abilities' conditional
law is far narrower than their posterior, so each Gibbs sweep moves the abilities a little
(bulk ESS under 30 of 4,000 draws for the middle algorithms of 20 perfectly ordered ones).
Given ``sigma`` the abilities' log posterior (the binomial-logit likelihood and the normal
prior) is smooth and concave, the case Hamiltonian Monte Carlo handles best (Neal 2011,
"MCMC using Hamiltonian dynamics", Handbook of MCMC, ch. 5): with the covariance of the
posterior's Laplace approximation as its inverse mass matrix, a few leapfrog steps carry the
abilities across the width of their posterior.

Each move draws a momentum, runs :data:`LEAPFROGS` leapfrog steps of a size jittered
uniformly within 20% of the tuned step, and accepts the end point with probability
``min(1, exp(-dH))``. It leaves ``p(beta | sigma, data)`` invariant, so composed with the
Gibbs sweep the chain's stationary law is still the exact posterior. The step is tuned during
warm-up sweeps only (toward an acceptance of :data:`TARGET_ACCEPTANCE`) and fixed while
draws are kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._design import Array, Design
from ._independence import Proposal, log_likelihood

#: Leapfrog steps a move: with the Laplace covariance as mass matrix, 5 steps gave the same
#: ESS as 10 on 20 perfectly ordered algorithms (about 1,100 of 4,000 draws) at half the cost.
LEAPFROGS = 5
#: The acceptance rate the warm-up tunes the step toward (Stan's default).
TARGET_ACCEPTANCE = 0.8
#: The step's tuning gain a warm-up sweep, in log units per unit of acceptance missed.
_GAIN = 0.1
#: Bounds of the step in the whitened coordinates (a normal target of unit scale).
_STEP_BOUNDS = (1e-3, 2.0)


@dataclass
class AbilityMoves:
    """The moves of one run: the Cholesky factor ``root`` of the inverse mass matrix (the
    abilities' Laplace covariance), the current step and the acceptance counts of kept
    sweeps."""

    design: Design
    root: Array
    step: float
    proposed: int = 0
    accepted: int = 0

    @classmethod
    def at(cls, design: Design, proposal: Proposal | None) -> AbilityMoves | None:
        """The moves whose mass matrix is ``proposal``'s (the Laplace approximation at the
        posterior mode of ``(log sigma, beta)``); None without one (no interior mode)."""
        if proposal is None or design.grouped:
            return None
        covariance = (proposal.vectors / proposal.values) @ proposal.vectors.T
        try:
            root = np.linalg.cholesky(covariance[1:, 1:])
        except np.linalg.LinAlgError:
            return None
        # a leapfrog step of about d^(-1/4) keeps the acceptance near its target on a normal
        # target of d dimensions (Beskos et al. 2013, Bernoulli 19(5A))
        return cls(design, root, float(design.n_alg ** (-0.25)))

    def move(self, beta: Array, sigma: Array, rng: np.random.Generator, *, tune: bool) -> Array:
        """One move of every chain's abilities ``beta`` (chains, n_alg) given ``sigma``
        (chains,): the new abilities. ``tune``: a warm-up sweep, whose acceptance sets the
        next step."""
        precision = 1.0 / sigma**2
        momentum = rng.standard_normal(beta.shape)
        size = self.step * rng.uniform(0.8, 1.2, size=(beta.shape[0], 1))
        start = -self._log_density(beta, precision) + 0.5 * (momentum**2).sum(axis=1)
        position, grad = beta, self._gradient(beta, precision)
        with np.errstate(over="ignore", invalid="ignore"):
            for _ in range(LEAPFROGS):
                momentum = momentum + 0.5 * size * (grad @ self.root)
                position = position + size * (momentum @ self.root.T)
                grad = self._gradient(position, precision)
                momentum = momentum + 0.5 * size * (grad @ self.root)
            end = -self._log_density(position, precision) + 0.5 * (momentum**2).sum(axis=1)
            log_ratio = np.where(np.isfinite(end), start - end, -np.inf)
        accept = np.log(rng.random(beta.shape[0])) < log_ratio
        if tune:
            rate = float(np.exp(np.minimum(log_ratio, 0.0)).mean())
            self.step = float(
                np.clip(self.step * np.exp(_GAIN * (rate - TARGET_ACCEPTANCE)), *_STEP_BOUNDS)
            )
        else:
            self.proposed += accept.size
            self.accepted += int(accept.sum())
        return np.where(accept[:, None], position, beta)

    @property
    def acceptance(self) -> float | None:
        """The share of kept sweeps' moves accepted (None before any)."""
        return self.accepted / self.proposed if self.proposed else None

    def _log_density(self, beta: Array, precision: Array) -> Array:
        """``log p(beta | sigma, data)`` up to a constant, per chain."""
        prior = -0.5 * precision * (beta**2).sum(axis=1)
        return np.asarray(log_likelihood(self.design, beta) + prior)

    def _gradient(self, beta: Array, precision: Array) -> Array:
        """The gradient of :meth:`_log_density` in ``beta``, per chain."""
        design = self.design
        psi = beta[:, design.i1] - beta[:, design.i2]
        residual = design.wins - design.games * (0.5 + 0.5 * np.tanh(0.5 * psi))
        chains, n = beta.shape
        offsets = (np.arange(chains) * n)[:, None]
        size = chains * n
        grad = np.bincount((offsets + design.i1).ravel(), residual.ravel(), size)
        grad -= np.bincount((offsets + design.i2).ravel(), residual.ravel(), size)
        return np.asarray(grad.reshape(chains, n) - precision[:, None] * beta)
