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
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from threadpoolctl import threadpool_limits

from . import _polya_gamma
from .base import FitCancelled, ProgressCallback

Array = npt.NDArray[Any]

#: Bounds of ``log sigma`` and ``log tau`` for the slice sampler (a prior mass outside them
#: below 1e-30 for every hyper-prior and scale the package accepts).
_LOG_BOUNDS = (-25.0, 12.0)
#: Initial width of a slice, in log units, and the most steps out on each side.
_SLICE_WIDTH = 1.0
_SLICE_STEPS = 40
#: Fewest warm-up sweeps (half the warm-up) before the slice widths are tuned.
_TUNE_AFTER = 20
#: Sweeps between two progress calls and two looks at ``cancel``.
_PROGRESS_EVERY = 25


@dataclass(frozen=True)
class Design:
    """A model's data as the sampler reads it (0-based indices).

    Attributes
    ----------
    n_alg, n_groups
        Algorithms, and groups of data sets (1 for the plain model).
    i1, i2, group
        Per pair: its two algorithms and its group.
    wins, games
        Per pair: wins of ``i1`` and games (``win1 + win2``, real numbers allowed).
    hyperprior, prior_scale
        The hyper-prior of ``sigma`` (1 lognormal, 2 half-Cauchy, 3 half-normal) and its scale.
    tau_scale
        Scale of the half-normal prior of ``tau``; ``None`` for the plain model.
    """

    n_alg: int
    n_groups: int
    i1: Array
    i2: Array
    group: Array
    wins: Array
    games: Array
    hyperprior: int
    prior_scale: float
    tau_scale: float | None

    @classmethod
    def from_stan_data(cls, data: Mapping[str, Any]) -> Design:
        """The design of the Stan data of ``bbt`` or ``bbt_groups`` (as
        :func:`~._programs.prepare_data` returns it, or with real counts)."""
        grouped = "group" in data
        wins = np.asarray(data["win1"], dtype=float)
        return cls(
            n_alg=int(data["n_alg"]),
            n_groups=int(data["n_groups"]) if grouped else 1,
            i1=np.asarray(data["i1"], dtype=np.intp) - 1,
            i2=np.asarray(data["i2"], dtype=np.intp) - 1,
            group=(
                np.asarray(data["group"], dtype=np.intp) - 1
                if grouped
                else np.zeros(len(wins), dtype=np.intp)
            ),
            wins=wins,
            games=wins + np.asarray(data["win2"], dtype=float),
            hyperprior=int(data.get("hyperprior", 1)),
            prior_scale=float(data.get("prior_scale", 0.5)),
            tau_scale=float(data["tau_scale"]) if grouped else None,
        )

    @property
    def grouped(self) -> bool:
        """Whether this is the group model."""
        return self.tau_scale is not None


def sample(
    design: Design,
    *,
    chains: int,
    iter_warmup: int,
    iter_sampling: int,
    rng: np.random.Generator,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
) -> dict[str, Array]:
    """Posterior draws of ``sigma``, ``beta`` (and ``tau``, ``beta_group`` for the group
    model), shaped (chains, iter_sampling, ...) as the Stan programs write them.

    Raises
    ------
    FitCancelled
        ``cancel`` was set (looked at every few sweeps).
    """
    state = _start(design, chains, rng)
    total = iter_warmup + iter_sampling
    kept: dict[str, Array] = {
        "sigma": np.empty((chains, iter_sampling)),
        "beta": np.empty((chains, iter_sampling, design.n_alg)),
    }
    if design.grouped:
        kept["tau"] = np.empty((chains, iter_sampling))
        kept["beta_group"] = np.empty((chains, iter_sampling, design.n_groups * design.n_alg))
    kappa_b = _kappa_sums(design)
    trace = np.empty((iter_warmup, 2, chains))
    # The sweeps' linear algebra is many small decompositions: BLAS threads only contend
    # (with each other and with other work on the machine) and make them slower.
    with threadpool_limits(limits=1, user_api="blas"):
        _run(design, state, kappa_b, rng, trace, kept, iter_warmup, total, progress, cancel)
    if progress is not None:
        progress("sampling", 1.0)
    return kept


def _run(
    design: Design,
    state: _State,
    kappa_b: Array,
    rng: np.random.Generator,
    trace: Array,
    kept: dict[str, Array],
    iter_warmup: int,
    total: int,
    progress: ProgressCallback | None,
    cancel: threading.Event | None,
) -> None:
    """The sweeps of :func:`sample`, keeping the draws after the warm-up in ``kept``."""
    chains = state.sigma.shape[0]
    work = _Workspace.of(design, chains)
    for sweep in range(total):
        if sweep % _PROGRESS_EVERY == 0:
            if cancel is not None and cancel.is_set():
                raise FitCancelled("the numpy sampler was cancelled")
            if progress is not None and sweep:
                progress("sampling", sweep / total)
        _sweep(design, state, kappa_b, rng, work)
        if sweep < iter_warmup:
            _tune(state, sweep, iter_warmup, trace)
        else:
            t = sweep - iter_warmup
            kept["sigma"][:, t] = state.sigma
            kept["beta"][:, t] = state.beta
            if design.grouped:
                kept["tau"][:, t] = state.tau
                kept["beta_group"][:, t] = state.theta.reshape(chains, -1)


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

        state.tau = np.exp(_slice(np.log(state.tau), log_tau, state.widths[1], rng))
        mu, m_vec, h_rot, _ = _collapsed(lam, vec, b_rot, state.tau)
    else:
        mu, h_rot, m_vec = lam[:, 0], b_rot[:, 0], vec[:, 0]

    def log_sigma(x: Array) -> Array:
        return _log_prior_sigma(x, design) + _gaussian_margin(np.exp(x), mu, h_rot)

    state.sigma = np.exp(_slice(np.log(state.sigma), log_sigma, state.widths[0], rng))
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


def _log_prior_sigma(x: Array, design: Design) -> Array:
    """Log density of ``x = log sigma`` under the hyper-prior (the Jacobian ``sigma``
    included), up to a constant."""
    s = design.prior_scale
    if design.hyperprior == 1:  # lognormal(0, s): log sigma ~ Normal(0, s)
        return np.asarray(-0.5 * (x / s) ** 2)
    sigma = np.exp(x)
    if design.hyperprior == 2:  # half-Cauchy(0, s)
        return np.asarray(x - np.log1p((sigma / s) ** 2))
    return np.asarray(x - 0.5 * (sigma / s) ** 2)  # half-normal(0, s)


def _slice(
    x0: Array, log_f: Callable[[Array], Array], width: float, rng: np.random.Generator
) -> Array:
    """One slice-sampling update (stepping out by ``width``, then shrinking) of each chain's
    scalar ``x0``; ``log_f(x)`` is each chain's log density at its own ``x`` (all chains are
    evaluated together: with a handful of chains that costs what one does). Leaves each
    chain's density invariant whatever the width (Neal 2003, Figs. 3 and 5)."""
    low_bound, high_bound = _LOG_BOUNDS

    def density(x: Array) -> Array:
        inside = (x > low_bound) & (x < high_bound)
        return np.where(inside, log_f(np.clip(x, low_bound, high_bound)), -np.inf)

    level = density(x0) - rng.standard_exponential(x0.shape)
    low = x0 - width * rng.random(x0.shape)
    high = low + width
    for edge, step in ((low, -width), (high, width)):
        out = np.ones(x0.shape, dtype=bool)
        for _ in range(_SLICE_STEPS):
            out &= density(edge) > level
            if not out.any():
                break
            edge[out] += step
    x: Array = x0.copy()
    todo = np.ones(x0.shape, dtype=bool)
    while todo.any():
        trial = np.where(todo, low + (high - low) * rng.random(x0.shape), x)
        accepted = todo & (density(trial) > level)
        x[accepted] = trial[accepted]
        todo &= ~accepted
        below = todo & (trial < x0)
        low[below] = trial[below]
        above = todo & (trial >= x0)
        high[above] = trial[above]
    return x


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
    win1_rep = rng.binomial(whole, 0.5 + 0.5 * np.tanh(0.5 * psi)).astype(np.int64)
    log_choose = _log_gamma(games + 1) - _log_gamma(wins + 1) - _log_gamma(games - wins + 1)
    log_lik = log_choose + wins * psi - games * np.logaddexp(0.0, psi)
    return {"win1_rep": win1_rep, "log_lik": log_lik}


def _log_gamma(x: Array) -> Array:
    """``log Gamma(x)`` per element, from the standard library: one value per pair, so a
    Python loop costs little, where scipy's ``gammaln`` would cost a fresh process the import
    of ``scipy.special``."""
    return np.array([math.lgamma(v) for v in np.asarray(x, dtype=float).ravel()]).reshape(
        np.shape(x)
    )
