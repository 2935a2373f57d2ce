"""The BBT posterior sampled exactly by Pólya-Gamma Gibbs (numpy, no compiler): the sampler
of the numpy engine, for the models of ``stan/bbt.stan`` and ``stan/bbt_groups.stan``.

Both models have a binomial-logit likelihood in differences of abilities,
``win1[k] ~ Binomial(n[k], inv_logit(theta[g_k, i1_k] - theta[g_k, i2_k]))``, with Gaussian
abilities: ``theta = beta`` (one group) in the plain model, and ``theta[g] ~ Normal(beta, tau)``
in the group model; ``beta ~ Normal(0, sigma)``, ``sigma`` from the hyper-prior
(lognormal, half-Cauchy or half-normal with scale ``s``) and ``tau ~ half-Normal(0, tau_scale)``.

Pólya-Gamma augmentation (Polson, Scott and Windle 2013, JASA 108(504),
doi:10.1080/01621459.2013.829001): with ``omega[k] ~ PG(n[k], psi[k])``, ``psi`` the
difference above, the likelihood given ``omega`` is ``exp(kappa' psi - psi' Omega psi / 2)``,
``kappa = win1 - n / 2``: Gaussian in the abilities. Each sweep, for all chains at once (the
chains are the first axis of every array):

1. ``omega | theta``: one PG draw per pair (:mod:`._polya_gamma`).
2. ``(sigma, tau) | omega`` with every ability integrated out, by slice sampling (Neal 2003,
   Ann. Statist. 31(3)) on ``log sigma`` and ``log tau``. Given ``omega`` the group
   abilities, then ``beta``, integrate out in closed form through the eigendecompositions of
   each group's precision ``P_g = X_g' Omega_g X_g`` (see :func:`_margins`); collapsing them
   is what keeps the chain fast where data are sparse (the funnel of ``sigma`` and ``beta``,
   or of ``tau`` and the group deviations, that slows a Gibbs sampler which conditions on them).
3. ``beta | sigma, tau, omega`` and ``theta | beta, tau, omega``: Gaussian, drawn exactly.

Steps 2 and 3 together leave ``p(sigma, tau, beta, theta | omega)`` invariant, and step 1
draws ``omega`` from its exact conditional, so the chain's stationary law is the posterior:
no approximation beyond Monte Carlo error (the simulation-based calibration of
``tests/stan/test_numpy_engine.py`` checks it). Counts may be fractional (``PG(h, z)`` is
defined for real ``h > 0``).

There is nothing to tune: the warm-up sweeps are only dropped (the chains forget their
starting point within a few sweeps, as their R-hat shows).

A Pólya-Gamma draw per pair and chain is most of a sweep's cost (about 1.5 microseconds at
the shapes of many data sets: 7 ms a sweep at 50 algorithms). Where the plain model's
posterior is close to normal, as with many data sets, an independence Metropolis-Hastings
kernel (:mod:`._independence`) is cheaper per effective draw; :func:`sample` tries it during
the warm-up and keeps whichever suits the posterior (``kernel="auto"``).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from ..core.run_context import QUIET, RunContext
from . import _independence, _polya_gamma
from ._design import Array, Design, log_prior_sigma, softplus
from ._hmc import AbilityMoves
from ._slice import slice_update

#: Initial width of a slice, in log units.
_SLICE_WIDTH = 1.0
#: Fewest warm-up sweeps (half the warm-up) before the slice widths are tuned.
_TUNE_AFTER = 20
#: Sweeps between two progress calls and two looks at ``cancel``.
_PROGRESS_EVERY = 25
#: Gibbs sweeps that start the warm-up before the independence kernel is tried (the chains
#: reach the posterior's bulk, from which the mode is found), and the fewest warm-up steps
#: left to measure that kernel's acceptance rate.
_GIBBS_START = 10
_MIN_TRIAL = 10
#: Warm-up sweeps that tune the abilities' moves (:mod:`._hmc`) when the Gibbs sampler takes
#: over from the independence kernel at the end of the warm-up (which tuned nothing of it).
_RETUNE_SWEEPS = 25
#: The independence kernel samples when it accepted at least this share of its warm-up
#: proposals (at least :data:`_TRIAL_STEPS` steps a chain, added to a short warm-up: each
#: is a valid move); below it the Gibbs sampler mixes better.
_MIN_ACCEPTANCE = 0.72
_TRIAL_STEPS = 150
#: Fewest algorithms for the independence kernel under "auto". Below, sigma is informed by
#: few abilities and its posterior is too skewed for a normal proposal (chains that accept
#: most proposals still stall in sigma's tail), and a Gibbs sweep over so few pairs costs
#: little anyway.
_MIN_ALGORITHMS = 10
#: Independence steps per kept draw: its draws are more correlated than the Gibbs sweeps'
#: (bulk ESS about a third of the draws at an acceptance of 0.8, where Gibbs gives 0.9), and
#: a step costs a small part of a sweep, so it keeps every third.
THIN = 3
#: The kernels :func:`sample` takes: "auto" chooses during the warm-up (see there).
KERNELS = ("auto", "gibbs", "independence")


def sample(
    design: Design,
    *,
    chains: int,
    iter_warmup: int,
    iter_sampling: int,
    rng: np.random.Generator,
    context: RunContext = QUIET,
    kernel: str = "auto",
    report: dict[str, Any] | None = None,
) -> dict[str, Array]:
    """Posterior draws of ``sigma``, ``beta`` (and ``tau``, ``beta_group`` for the group
    model), shaped (chains, iter_sampling, ...) as the Stan programs write them.

    ``kernel``: the plain model's draws after the warm-up come from the Pólya-Gamma Gibbs
    sweeps or from the independence Metropolis-Hastings kernel of :mod:`._independence`
    (both leave the posterior invariant). "auto" runs :data:`_GIBBS_START` Gibbs sweeps,
    finds the mode from the chains' mean, runs the rest of the warm-up with the independence
    kernel and keeps it when it accepted at least :data:`_MIN_ACCEPTANCE` of its proposals
    (a posterior close to normal); otherwise, and for the group model, Gibbs samples. The
    choice uses the warm-up only, so the kept draws are those of one fixed kernel.
    ``report``, when given, receives ``kernel`` (the one that sampled), ``acceptance`` and
    ``run``: the :class:`Run`, whose :meth:`Run.more` draws again from where the chains are.

    Raises
    ------
    FitCancelled
        The context's cancel was set (looked at every few sweeps).
    """
    run = Run(design, _start(design, chains, rng), _kappa_sums(design), rng, kernel)
    kept = run.first(iter_warmup, iter_sampling, context)
    if report is not None:
        report["kernel"] = run.kernel_used
        report["acceptance"] = None if run.chains is None else run.chains.acceptance
        report["run"] = run
    context.report("sampling", 1.0)
    return kept


@dataclass
class Run:
    """The chains of one :func:`sample`: their state, the independence chains once they
    sample, and what drawing more from where they are takes (:meth:`more`)."""

    design: Design
    state: _State
    kappa_b: Array
    rng: np.random.Generator
    kernel: str
    chains: _independence.Chains | None = None
    #: The Hamiltonian moves of the abilities that follow each Gibbs sweep of the plain model
    #: (see :meth:`_find_mode`; None before, without a mode, or not needed).
    moves: AbilityMoves | None = None

    @property
    def kernel_used(self) -> str:
        """The kernel of the last kept draws: "independence" or "gibbs"."""
        return "gibbs" if self.chains is None else "independence"

    def first(
        self,
        iter_warmup: int,
        iter_sampling: int,
        context: RunContext,
    ) -> dict[str, Array]:
        """The warm-up (with the choice of kernel, see :func:`sample`) and the kept draws."""
        design, state = self.design, self.state
        kept = _empty(design, state.sigma.shape[0], iter_sampling)
        trace = np.empty((iter_warmup, 2, state.sigma.shape[0]))
        total = iter_warmup + iter_sampling
        # The sweeps' linear algebra is many small decompositions: BLAS threads only contend
        # (with each other and with other work on the machine) and make them slower.
        with threadpool_limits(limits=1, user_api="blas"):
            work = _Workspace.of(design, state.sigma.shape[0])
            start = self._independence_from(iter_warmup)
            found = -1 if design.grouped else min(iter_warmup, _GIBBS_START)
            for sweep in range(total):
                _look(sweep, total, context)
                if sweep == found:
                    self._find_mode(
                        try_independence=sweep == start, moves=design.n_alg >= _MIN_ALGORITHMS
                    )
                if self.chains is not None:
                    for _ in range(1 if sweep < iter_warmup else THIN):
                        self.chains.step(self.rng)
                else:
                    self._gibbs_sweep(work, tune=sweep < iter_warmup)
                if sweep < iter_warmup:
                    if self.chains is None:
                        _tune(state, sweep, iter_warmup, trace)
                    elif sweep == iter_warmup - 1 and self._keep_or_leave():
                        for _ in range(_RETUNE_SWEEPS if self.moves is not None else 0):
                            self._gibbs_sweep(work, tune=True)
                    continue
                self._keep(kept, sweep - iter_warmup)
        return kept

    def more(
        self,
        iter_warmup: int,
        iter_sampling: int,
        thin: int,
        context: RunContext,
    ) -> dict[str, Array]:
        """New draws, shaped as :meth:`first`'s, by Gibbs sweeps from the chains' current
        states (the independence chains, if they sampled, hand theirs over): ``iter_warmup``
        sweeps dropped, then one in ``thin`` of ``iter_sampling * thin`` sweeps kept.

        Why Gibbs: where the first draws failed their diagnostics, the independence kernel's
        chains had stalled where the normal proposal's tails are lighter than the
        posterior's, while a Gibbs sweep moves from anywhere; thinning Gibbs's own draws
        raises their ESS per kept draw where they were too correlated. Each sweep is followed
        by the abilities' Hamiltonian move (:mod:`._hmc`; the mode is found here if the first
        round did not): a failed round is the case it is for."""
        self._leave_independence()
        design = self.design
        n_chains = self.state.sigma.shape[0]
        kept = _empty(design, n_chains, iter_sampling)
        total = iter_warmup + iter_sampling * thin
        # later rounds report no progress of their own (the caller tells their stage), but stop
        unheard = RunContext(cancel=context.cancel)
        with threadpool_limits(limits=1, user_api="blas"):
            if self.moves is None and not design.grouped:
                self._find_mode(try_independence=False, moves=True)
            work = _Workspace.of(design, n_chains)
            for sweep in range(total):
                _look(sweep, total, unheard)
                self._gibbs_sweep(work, tune=sweep < iter_warmup)
                t, step = divmod(sweep - iter_warmup, thin)
                if sweep >= iter_warmup and step == thin - 1:
                    self._keep(kept, t)
        return kept

    def _gibbs_sweep(self, work: _Workspace, *, tune: bool) -> None:
        """One Gibbs sweep; for the plain model, then the scale move and (once the mode is
        found) the abilities' Hamiltonian move, whose step a warm-up sweep (``tune``) sets."""
        state = self.state
        _sweep(self.design, state, self.kappa_b, self.rng, work)
        if self.design.grouped:
            return
        _scale_move(self.design, state, self.rng)
        if self.moves is not None:
            state.beta = self.moves.move(state.beta, state.sigma, self.rng, tune=tune)
            state.theta = state.beta[:, None, :]

    def _keep(self, kept: dict[str, Array], t: int) -> None:
        """The chains' current draws as kept draw ``t``."""
        if self.chains is not None:
            kept["sigma"][:, t] = self.chains.sigma
            kept["beta"][:, t] = self.chains.beta
            return
        state = self.state
        kept["sigma"][:, t] = state.sigma
        kept["beta"][:, t] = state.beta
        if self.design.grouped:
            kept["tau"][:, t] = state.tau
            kept["beta_group"][:, t] = state.theta.reshape(state.theta.shape[0], -1)

    def _independence_from(self, iter_warmup: int) -> int:
        """The sweep at which the independence kernel is tried (-1: never)."""
        if self.design.grouped or self.kernel == "gibbs":
            return -1
        if self.kernel == "auto" and self.design.n_alg < _MIN_ALGORITHMS:
            return -1
        start = min(iter_warmup, _GIBBS_START)
        if self.kernel == "auto" and iter_warmup - start < _MIN_TRIAL:
            return -1  # too short a warm-up to judge it
        return start

    def _find_mode(self, *, try_independence: bool, moves: bool) -> None:
        """Find the mode from the chains' mean: the Laplace approximation there sets the
        abilities' Hamiltonian moves (when ``moves``) and, when ``try_independence``, is the
        independence chains' proposal, started from the chains' states (the Gibbs sampler goes
        on alone where there is no interior mode).

        Why moves only where asked: with fewer than :data:`_MIN_ALGORITHMS` algorithms the
        Gibbs sweeps alone mix well (their first rounds passed in 200 of 200 fits of data from
        the prior) and a move would double a sweep's cost; with more, the Gibbs sampler samples
        only where the posterior is far from normal, and a later round follows only a round
        that failed its diagnostics."""
        state = self.state
        x = np.log(state.sigma)
        mean = np.concatenate([[x.mean()], state.beta.mean(axis=0)])
        proposal = _independence.Proposal.at_mode(self.design, mean)
        if moves:
            self.moves = AbilityMoves.at(self.design, proposal)
        if try_independence and proposal is not None:
            self.chains = _independence.Chains(self.design, proposal, x, state.beta)

    def _keep_or_leave(self) -> bool:
        """At the end of the warm-up: back to Gibbs when "auto" and too few proposals were
        accepted, from the independence chains' current states; whether it went back."""
        chains = self.chains
        if chains is None or self.kernel != "auto":
            return False
        while chains.proposed < _TRIAL_STEPS * chains.theta.shape[0]:
            chains.step(self.rng)
        if chains.acceptance >= _MIN_ACCEPTANCE:
            return False
        self._leave_independence()
        return True

    def _leave_independence(self) -> None:
        """Gibbs samples from here on, from the independence chains' current states."""
        chains = self.chains
        if chains is None:
            return
        state = self.state
        state.sigma, state.beta = chains.sigma, chains.beta.copy()
        state.theta = state.beta[:, None, :]
        self.chains = None


def _empty(design: Design, chains: int, iter_sampling: int) -> dict[str, Array]:
    """The arrays of kept draws, to be filled."""
    kept: dict[str, Array] = {
        "sigma": np.empty((chains, iter_sampling)),
        "beta": np.empty((chains, iter_sampling, design.n_alg)),
    }
    if design.grouped:
        kept["tau"] = np.empty((chains, iter_sampling))
        kept["beta_group"] = np.empty((chains, iter_sampling, design.n_groups * design.n_alg))
    return kept


def _look(sweep: int, total: int, context: RunContext) -> None:
    """Every few sweeps: stop if cancelled, and tell the progress how far the run is."""
    if sweep % _PROGRESS_EVERY:
        return
    context.check("the numpy sampler was cancelled")
    if sweep:
        context.report("sampling", sweep / total)


def _tune(state: _State, sweep: int, iter_warmup: int, trace: Array) -> None:
    """Record the warm-up's log sigma and log tau; halfway through the warm-up (given at
    least :data:`_TUNE_AFTER` sweeps), set each slice width to 3 times their spread over the
    chains' second quarter of the warm-up (the slice sampler is exact at any width; a width
    near the posterior's scale takes fewer density evaluations a sweep)."""
    trace[sweep] = np.log(np.maximum([state.sigma, state.tau], 1e-300))
    if sweep + 1 == iter_warmup // 2 and sweep + 1 >= _TUNE_AFTER:
        recent = trace[(sweep + 1) // 2 : sweep + 1]
        spread = recent.std(axis=(0, 2))
        state.widths = [float(np.clip(3 * sd, 0.05, 2.0)) for sd in spread]


@dataclass
class _State:
    """The chains' current values: ``sigma`` and ``tau`` (chains,), ``beta`` (chains, n_alg)
    and ``theta`` (chains, n_groups, n_alg; ``beta`` itself in the plain model)."""

    sigma: Array
    tau: Array
    beta: Array
    theta: Array
    #: Slice widths for log sigma and log tau (set from the warm-up's spread, see sample).
    widths: list[float] = field(default_factory=lambda: [_SLICE_WIDTH, _SLICE_WIDTH])


def _start(design: Design, chains: int, rng: np.random.Generator) -> _State:
    """Dispersed starting points (sigma ~ LogNormal(0, 0.5), abilities from their prior), so
    that R-hat can see chains that have not forgotten where they began."""
    sigma = np.exp(0.5 * rng.standard_normal(chains))
    beta = sigma[:, None] * rng.standard_normal((chains, design.n_alg))
    if not design.grouped:
        return _State(sigma, np.zeros(chains), beta, beta[:, None, :])
    assert design.tau_scale is not None
    tau = np.abs(design.tau_scale * rng.standard_normal(chains))
    noise = rng.standard_normal((chains, design.n_groups, design.n_alg))
    return _State(sigma, tau, beta, beta[:, None, :] + tau[:, None, None] * noise)


def _kappa_sums(design: Design) -> Array:
    """``b_g = X_g' kappa`` per group, shaped (n_groups, n_alg): it does not depend on omega."""
    kappa = design.wins - design.games / 2
    n = design.n_alg
    flat = np.bincount(design.group * n + design.i1, kappa, design.n_groups * n)
    flat -= np.bincount(design.group * n + design.i2, kappa, design.n_groups * n)
    return flat.reshape(design.n_groups, n)


@dataclass(frozen=True)
class _Workspace:
    """What every sweep of a run reuses: the games per chain and pair (contiguous, as the
    Pólya-Gamma draws take them) and where each pair's omega goes in the precisions."""

    games: Array
    index: Array
    size: int

    @classmethod
    def of(cls, design: Design, chains: int) -> _Workspace:
        n, g = design.n_alg, design.n_groups
        base = (np.arange(chains)[:, None] * g + design.group[None, :]) * n * n
        i1, i2 = design.i1[None, :], design.i2[None, :]
        index = np.concatenate(
            [base + i1 * n + i1, base + i2 * n + i2, base + i1 * n + i2, base + i2 * n + i1],
            axis=1,
        )
        games = np.ascontiguousarray(np.broadcast_to(design.games, (chains, len(design.games))))
        return cls(games, index.ravel(), chains * g * n * n)

    def precisions(self, design: Design, omega: Array) -> Array:
        """``P_g = X_g' Omega X_g`` per chain and group, shaped (chains, n_groups, n, n)."""
        weights = np.concatenate([omega, omega, -omega, -omega], axis=1)
        flat = np.bincount(self.index, weights.ravel(), self.size)
        return flat.reshape(omega.shape[0], design.n_groups, design.n_alg, design.n_alg)


def _sweep(
    design: Design,
    state: _State,
    kappa_b: Array,
    rng: np.random.Generator,
    work: _Workspace,
) -> None:
    """One Gibbs sweep of every chain, updating ``state`` in place."""
    g = design.group
    psi = state.theta[:, g, design.i1] - state.theta[:, g, design.i2]
    omega = _polya_gamma.draw(work.games, psi, rng)
    lam, vec = np.linalg.eigh(work.precisions(design, omega))
    lam = np.maximum(lam, 0.0)  # P_g is positive semi-definite; eigh may give -1e-15
    b_rot = np.einsum("cgji,gj->cgi", vec, kappa_b)  # U_g' b_g
    if design.grouped:
        assert design.tau_scale is not None
        tau_scale = design.tau_scale

        def log_tau(x: Array) -> Array:
            tau = np.exp(x)
            mu, _, h_rot, const = _collapsed(lam, vec, b_rot, tau)
            return (
                x - 0.5 * (tau / tau_scale) ** 2 + const + _gaussian_margin(state.sigma, mu, h_rot)
            )

        state.tau = np.exp(slice_update(np.log(state.tau), log_tau, state.widths[1], rng))
        mu, m_vec, h_rot, _ = _collapsed(lam, vec, b_rot, state.tau)
    else:
        mu, h_rot, m_vec = lam[:, 0], b_rot[:, 0], vec[:, 0]

    def log_sigma(x: Array) -> Array:
        return log_prior_sigma(x, design) + _gaussian_margin(np.exp(x), mu, h_rot)

    state.sigma = np.exp(slice_update(np.log(state.sigma), log_sigma, state.widths[0], rng))
    state.beta = _gaussian_draw(m_vec, mu, h_rot, state.sigma, rng)
    if design.grouped:
        beta_rot = np.einsum("cgji,cj->cgi", vec, state.beta)  # U_g' beta per group
        t2 = (state.tau**2)[:, None, None]
        scale = 1.0 + t2 * lam
        noise = rng.standard_normal(lam.shape)
        theta_rot = (t2 * b_rot + beta_rot) / scale + noise * np.sqrt(t2 / scale)
        state.theta = np.einsum("cgij,cgj->cgi", vec, theta_rot)
    else:
        state.theta = state.beta[:, None, :]


def _scale_move(design: Design, state: _State, rng: np.random.Generator) -> None:
    """A Metropolis move of the plain model's scale: ``beta -> c beta`` and ``sigma -> c
    sigma`` together, ``log c`` a normal step as wide as the warm-up's spread of log sigma.

    Why: when some algorithms beat others on every data set (complete separation) only the
    hyper-prior bounds the abilities, and the Gibbs sweeps move the common scale of beta and
    sigma very slowly (bulk ESS under 10 of 4000 draws on 20 clearly ordered algorithms):
    given beta, the Pólya-Gamma variables pin it. This move goes along that ridge. On the
    marginal posterior of (beta, log sigma), the normal prior's ``c^-n`` and the Jacobian's
    ``c^n`` cancel: the ratio is the likelihood's and the hyper-prior's alone. The sweep's
    next Pólya-Gamma draws are made given the moved beta, so the augmented chain stays exact.
    """
    step = (state.widths[0] / 3.0) * rng.standard_normal(state.sigma.shape)
    x = np.log(state.sigma)
    moved = state.beta * np.exp(step)[:, None]
    log_ratio = (
        _independence.log_likelihood(design, moved)
        - _independence.log_likelihood(design, state.beta)
        + log_prior_sigma(x + step, design)
        - log_prior_sigma(x, design)
    )
    accept = np.log(rng.uniform(size=step.shape)) < log_ratio
    state.sigma = np.where(accept, np.exp(x + step), state.sigma)
    state.beta = np.where(accept[:, None], moved, state.beta)
    state.theta = state.beta[:, None, :]


def _gaussian_margin(sigma: Array, lam: Array, b_rot: Array) -> Array:
    """``log integral N(beta; 0, sigma^2 I) exp(b' beta - beta' P beta / 2) d beta`` per
    chain, for ``P``'s eigenvalues ``lam`` and ``b`` in its eigenvectors' basis ``b_rot``
    (both (chains, n)):
    ``sum_j [sigma^2 b_j^2 / (1 + sigma^2 lam_j) - log(1 + sigma^2 lam_j)] / 2``."""
    s2 = (np.asarray(sigma) ** 2)[:, None]
    scale = 1.0 + s2 * lam
    return np.asarray(0.5 * (s2 * b_rot**2 / scale - np.log(scale)).sum(axis=1))


def _collapsed_precision(lam: Array, vec: Array, tau: Array) -> Array:
    """``M(tau) = sum_g U_g diag(lam_g / (1 + tau^2 lam_g)) U_g'``: the precision that the
    group abilities, integrated out, leave on ``beta``; (chains, n, n)."""
    weight = lam / (1.0 + (tau**2)[:, None, None] * lam)
    return np.asarray(np.einsum("cgij,cgj,cgkj->cik", vec, weight, vec))


def _collapsed_shift(vec: Array, b_rot: Array, lam: Array, tau: Array) -> Array:
    """``h(tau) = sum_g U_g (b_rot_g / (1 + tau^2 lam_g))``, the linear term on ``beta``."""
    weight = b_rot / (1.0 + (tau**2)[:, None, None] * lam)
    return np.asarray(np.einsum("cgij,cgj->ci", vec, weight))


def _collapsed(
    lam: Array, vec: Array, b_rot: Array, tau: Array
) -> tuple[Array, Array, Array, Array]:
    """With the group abilities integrated out at ``tau``: the eigenvalues and eigenvectors
    of ``M(tau)``, ``h(tau)`` in their basis, and the log of what the integrals leave that
    does not depend on ``beta``: :func:`_gaussian_margin` of each group, with ``tau`` for
    ``sigma``, summed over the groups."""
    t2 = (tau**2)[:, None, None]
    scale = 1.0 + t2 * lam
    const = 0.5 * (t2 * b_rot**2 / scale - np.log(scale)).sum(axis=(1, 2))
    mu, m_vec = np.linalg.eigh(_collapsed_precision(lam, vec, tau))
    h = _collapsed_shift(vec, b_rot, lam, tau)
    return np.maximum(mu, 0.0), m_vec, np.einsum("cji,cj->ci", m_vec, h), const


def _gaussian_draw(
    vec: Array, lam: Array, b_rot: Array, sigma: Array, rng: np.random.Generator
) -> Array:
    """``beta ~ N((P + I / sigma^2)^-1 b, (P + I / sigma^2)^-1)`` from ``P``'s eigenvalues
    ``lam``, eigenvectors ``vec`` and ``b_rot = vec' b``."""
    s2 = (sigma**2)[:, None]
    scale = 1.0 + s2 * lam
    rotated = s2 * b_rot / scale + rng.standard_normal(lam.shape) * np.sqrt(s2 / scale)
    return np.asarray(np.einsum("cij,cj->ci", vec, rotated))


@dataclass(frozen=True)
class Replicates:
    """:func:`replicate` of a run's draws, when first asked for (a
    :class:`~bbt_widget.core.draws.Derivation`): from a copy of the generator as the sampler
    left it, so the same numbers as drawn right after the sampling, at every call."""

    design: Design
    draws: Mapping[str, Array]
    rng: np.random.Generator
    names: tuple[str, ...] = ("win1_rep", "log_lik")

    @classmethod
    def after(
        cls, design: Design, draws: Mapping[str, Array], rng: np.random.Generator
    ) -> Replicates:
        """The replicates of ``draws``, with ``rng`` in its state now (it is copied)."""
        return cls(design, dict(draws), copy.deepcopy(rng))

    def __call__(self) -> dict[str, Array]:
        return replicate(self.design, self.draws, copy.deepcopy(self.rng))


def replicate(
    design: Design, draws: Mapping[str, Array], rng: np.random.Generator
) -> dict[str, Array]:
    """The Stan programs' generated quantities from the draws: ``win1_rep`` (int64; the
    observed games per pair, which must be whole numbers) and ``log_lik`` (chains, draws,
    pairs)."""
    if design.grouped:
        chains, count = draws["beta_group"].shape[:2]
        theta = draws["beta_group"].reshape(chains, count, design.n_groups, design.n_alg)
        g = design.group
        psi = theta[:, :, g, design.i1] - theta[:, :, g, design.i2]
    else:
        beta = draws["beta"]
        psi = beta[:, :, design.i1] - beta[:, :, design.i2]
    games, wins = design.games, design.wins
    whole = np.rint(games).astype(np.int64)
    log_one_plus = softplus(psi)  # log(1 + e^psi): P(win) = e^(psi - it)
    win1_rep = rng.binomial(whole, np.exp(psi - log_one_plus)).astype(np.int64)
    log_choose = _log_gamma(games + 1) - _log_gamma(wins + 1) - _log_gamma(games - wins + 1)
    log_one_plus *= -games  # in place: the draws x pairs arrays are the largest of a fit
    log_one_plus += wins * psi
    log_one_plus += log_choose
    return {"win1_rep": win1_rep, "log_lik": log_one_plus}


def _log_gamma(x: Array) -> Array:
    """``log Gamma(x)`` per element, from the standard library: one value per pair, so a
    Python loop costs little, where scipy's ``gammaln`` would cost a fresh process the import
    of ``scipy.special``."""
    return np.array([math.lgamma(v) for v in np.asarray(x, dtype=float).ravel()]).reshape(
        np.shape(x)
    )
