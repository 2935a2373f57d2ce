"""Draws of the hierarchical correlated t-test's posterior by an independence
Metropolis-Hastings sampler over ``(mu_0, sigma_0, nu)``, the per-data-set parameters
integrated out (:mod:`._hierarchical_marginal`) and drawn afterwards from their
conditionals.

Why this sampler: once ``mu_i`` and ``sigma_i`` are integrated out, the posterior has three
dimensions and is close to a normal on ``(mu_0, log sigma_0, log(nu - shift))``. An
independence sampler whose proposal is a Student t fitted to it accepts most proposals, so
its draws are nearly independent; and since a proposal does not depend on the chain's
state, every proposal's density is computed in large vectorised batches before the chains
run (the cost of a fit is that of the integrals). Its chains are real Markov chains: R-hat
and the effective sample sizes (bulk and tail) say when the proposal fits the posterior
badly (a chain that sticks), as they do for NUTS.

Steps:

1. The modes, by BFGS with central differences from three starts, and the Hessian at each.
2. Warm-up: ``iter_warmup`` proposals per chain from a mixture of split Student t's (5
   degrees of freedom; :class:`SplitT`), one centred on each mode, along the axes of its
   inverse Hessian, each side's scale found by scanning the posterior out to 6 standard
   deviations; the chains start from their first proposal and run through the rest.
3. Sampling: ``iter_sampling`` proposals per chain from a kernel estimate of the
   posterior built from the warm-up proposals' importance weights, mixed with the split t's
   and with nu's prior (:class:`KernelMixture`), each chain continuing from its warm-up
   state. If the chains of ``(mu_0, sigma_0, nu)`` then fail R-hat or ESS (a chain stuck
   where the proposal was thin), the kernels are refitted to every proposal so far and the
   chains run again from where they stopped, up to :data:`_ROUNDS` rounds in all; the
   rounds before the last are then warm-up.
4. Each kept state's ``mu_i`` and ``sigma_i`` drawn from their conditionals. A proposal
   drawn jointly with its ``mu_i`` and accepted with the marginal ratio is the same
   independence sampler on the joint posterior, so these are posterior draws as well.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from ..core.diagnostics import draws_diagnostics
from ..core.draws import Draws
from ..core.run_context import QUIET, RunContext
from ..engines._independence import independence_chains
from ._hierarchical_marginal import Marginal, conditional_draws, log_nu_prior, log_posterior

#: Degrees of freedom of the proposals (heavier tails than the posterior's).
_PROPOSAL_DF = 5.0
#: Scale factor of the proposals' covariance.
_INFLATE = 1.3
#: Points per batch of integrals (a batch's arrays stay within the processor's cache).
_BATCH = 16
#: Step of the finite differences, in the unconstrained coordinates.
_STEP = 1e-3
#: Kernels of the sampling proposal, and the share of its defensive part.
_KERNELS = 100
_SHARES = (0.6, 0.2, 0.2)
#: Sampling rounds at most: another while the last round's chains did not mix (each refits
#: the proposal to every draw so far, so a stuck chain's region is covered better each time).
_ROUNDS = 4
#: Least share of a mode in the warm-up proposal.
_MODE_FLOOR = 0.1
#: Where the first proposal's sides are scanned, in standard deviations of the Laplace
#: approximation.
_SCAN = (0.5, 1.0, 2.0, 3.0, 4.0, 6.0)


def sample(
    m: Marginal,
    *,
    chains: int,
    iter_warmup: int,
    iter_sampling: int,
    seed: int,
    scale: float,
    context: RunContext = QUIET,
    latent_every: int = 1,
) -> Draws:
    """Posterior draws shaped as the Stan program's (``mu0_s``, ``sigma0_s``, ``nu``, ``mu``
    in the scores' units, ``sigma_s``); ``mu`` and ``sigma_s`` for every ``latent_every``-th
    draw of each chain only (``0``: none). ``sampler["accept_stat__"]`` is 1 where a
    proposal was accepted."""
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    kept_latent = len(range(0, iter_sampling, latent_every)) if latent_every else 0
    total = chains * (iter_warmup + iter_sampling + kept_latent)
    done = [0]

    def batches(count: int) -> Iterator[slice]:
        # _BATCH points at a time: cancel is checked before each, progress told after
        for i in range(0, count, _BATCH):
            context.check("the hierarchical test was cancelled")
            part = slice(i, min(i + _BATCH, count))
            yield part
            done[0] += part.stop - part.start
            context.report("sampling", min(done[0] / total, 1.0))

    def evaluate(z: np.ndarray) -> np.ndarray:
        out = np.empty(len(z))
        for part in batches(len(z)):
            out[part] = log_posterior(m, z[part])
        return out

    first = SplitMixture.around(_modes(m, evaluate), evaluate)
    warm_z = first.draw(rng, chains * iter_warmup)
    warm_lp, warm_lq = evaluate(warm_z), first.log_density(warm_z)
    warm_states, state_lp, _ = _chains(
        warm_z.reshape(chains, iter_warmup, 3),
        warm_lp.reshape(chains, iter_warmup),
        warm_lq.reshape(chains, iter_warmup),
        rng,
    )
    state, seen_z, seen_log_w = warm_states[:, -1], warm_z, warm_lp - warm_lq
    rounds = 0
    while True:
        proposal = KernelMixture.fitted(first, seen_z, seen_log_w, rng, m)
        z = proposal.draw(rng, chains * iter_sampling)
        lp, lq = evaluate(z), proposal.log_density(z)
        # each chain continues from its last state, seen with the new proposal's density
        kept, state_lp, accepted = _chains(
            z.reshape(chains, iter_sampling, 3),
            lp.reshape(chains, iter_sampling),
            lq.reshape(chains, iter_sampling),
            rng,
            start=(state, state_lp, proposal.log_density(state)),
        )
        rounds += 1
        mixed = _mixed(kept)
        if rounds == _ROUNDS or mixed:
            break
        # a chain stuck where the proposal was thin: the kernels are refitted to every
        # proposal so far (each weighted against the proposal it came from) and the chains
        # run again, the first round counted as warm-up
        state = kept[:, -1]
        seen_z = np.vstack([seen_z, z])
        seen_log_w = np.concatenate([seen_log_w, lp - lq])
        total += chains * iter_sampling
    mu0 = kept[..., 0]
    sigma0 = np.exp(kept[..., 1])
    nu = m.nu_shift + np.exp(kept[..., 2])
    params = {"mu0_s": mu0, "sigma0_s": sigma0, "nu": nu}
    if kept_latent:
        flat = [p[:, ::latent_every].reshape(-1) for p in (mu0, sigma0, nu)]
        mus, sigmas = [], []
        for part in batches(len(flat[0])):
            mu, sigma = conditional_draws(m, flat[0][part], flat[1][part], flat[2][part], rng)
            mus.append(mu)
            sigmas.append(sigma)
        q = len(m.xbar)
        params["mu"] = np.concatenate(mus).reshape(chains, kept_latent, q) * scale
        params["sigma_s"] = np.concatenate(sigmas).reshape(chains, kept_latent, q)
    return Draws(
        params=params,
        sampler={"accept_stat__": accepted.astype(float)},
        engine="numpy",
        timings={"compile": 0.0, "sample": time.perf_counter() - start},
        info={
            "sampler": "independence Metropolis-Hastings, mu_i and sigma_i integrated out",
            "proposal_df": _PROPOSAL_DF,
            "acceptance": float(accepted.mean()),
            # what was drawn, for the warning of a failed check
            "convergence": (
                f"{rounds} sampling round{'s' if rounds > 1 else ''} of {iter_sampling} draws a "
                "chain, the proposal refitted to every draw before each, the last kept ("
                + ("diagnostics passed" if mixed else "diagnostics failed")
                + ")"
            ),
        },
    )


def _mixed(kept: np.ndarray) -> bool:
    """Whether the chains' ``(mu_0, log sigma_0, log(nu - shift))`` pass the checks the
    results will be given (:func:`~bbt_widget.core.diagnostics.draws_diagnostics`: R-hat, bulk
    and tail ESS per chain; this sampler has no NUTS-only outputs)."""
    names = ["mu0", "log_sigma0", "log_nu"]
    trial = Draws(
        params={name: kept[..., k] for k, name in enumerate(names)}, sampler={}, engine="numpy"
    )
    return draws_diagnostics(trial, names).ok


def _modes(
    m: Marginal, evaluate: Callable[[np.ndarray], np.ndarray]
) -> list[tuple[np.ndarray, float, np.ndarray]]:
    """The posterior's modes in ``(mu_0, log sigma_0, log(nu - shift))`` found by BFGS from
    three starts, each with its log density and the inverse of the negative Hessian there (a
    positive definite stand-in if the Hessian is not); best first, each mode once.

    Why three starts: the data sets' spread can be explained by a normal-like t (large nu)
    with the outlying data sets' own sds large, or by a heavy-tailed t (nu near 1) with a
    small sigma_0 and a shifted mu_0; on data whose differences are nearly all 0 these are two
    modes, and a proposal built on one never visits the other.
    """
    centre = float(np.clip(np.median(m.xbar), -m.mu0_bound, m.mu0_bound))
    spread = float(np.median(np.abs(m.xbar - centre))) * 1.4826
    spread = min(max(spread, 0.05 * float(np.median(m.width)), 1e-3), 0.5 * m.sigma0_high)
    starts = [
        (centre, np.log(spread), np.log(4.0)),
        (centre, np.log(spread / 10), np.log(30.0)),
        (centre, np.log(spread), np.log(0.2)),
    ]
    eye = np.eye(3) * _STEP

    def objective(z: np.ndarray) -> tuple[float, np.ndarray]:
        points = np.vstack([z, z + eye, z - eye])
        lp = evaluate(points)
        if not np.isfinite(lp[0]):
            return np.inf, np.zeros(3)
        grad = (lp[1:4] - lp[4:7]) / (2 * _STEP)
        return -float(lp[0]), -np.nan_to_num(grad)

    found: list[tuple[np.ndarray, float, np.ndarray]] = []
    for start in starts:
        res = optimize.minimize(
            objective, np.array(start), jac=True, method="BFGS", options={"gtol": 1e-4}
        )
        if not np.isfinite(res.fun):
            continue
        mode = res.x
        vals, vecs = np.linalg.eigh(-_hessian(mode, evaluate))
        # a flat or curved-the-wrong-way direction gets a wide proposal instead
        vals = np.where(np.isfinite(vals) & (vals > 1e-2), vals, 1e-2)
        cov = (vecs / vals) @ vecs.T
        # the same mode as one found before: within 2 standard deviations of it
        if any((mode - z) @ np.linalg.solve(c, mode - z) < 4.0 for z, _, c in found):
            continue
        found.append((mode, -float(res.fun), cov))
    if not found:
        raise RuntimeError("the hierarchical test found no point of positive posterior density")
    return sorted(found, key=lambda f: -f[1])


def _hessian(z: np.ndarray, evaluate: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Central-difference Hessian of the log posterior at ``z``."""
    h = 10 * _STEP
    eye = np.eye(3) * h
    points = [z]
    for i in range(3):
        points += [z + eye[i], z - eye[i]]
    pairs = [(i, j) for i in range(3) for j in range(i + 1, 3)]
    for i, j in pairs:
        points += [
            z + eye[i] + eye[j],
            z + eye[i] - eye[j],
            z - eye[i] + eye[j],
            z - eye[i] - eye[j],
        ]
    lp = evaluate(np.array(points))
    hess = np.empty((3, 3))
    for i in range(3):
        hess[i, i] = (lp[1 + 2 * i] - 2 * lp[0] + lp[2 + 2 * i]) / h**2
    for k, (i, j) in enumerate(pairs):
        pp, pm, mp, mm = lp[7 + 4 * k : 11 + 4 * k]
        hess[i, j] = hess[j, i] = (pp - pm - mp + mm) / (4 * h**2)
    return hess


@dataclass(frozen=True)
class SplitT:
    """A multivariate Student t with a different scale on each side of its centre along
    each principal axis (Geweke's split-t, 1989): it follows a skewed posterior, such as
    that of ``log sigma_0`` when the data allow any small spread between data sets.

    ``z = centre + axes @ (scale(side) * e)``, ``e`` a standard Student t; the density is
    ``t(e) / prod(scale(side))``.
    """

    centre: np.ndarray
    axes: np.ndarray  # columns: unit directions
    scales: np.ndarray  # (3, 2): below and above the centre along each axis

    def draw(self, rng: np.random.Generator, count: int) -> np.ndarray:
        e = (
            rng.standard_normal((count, 3))
            * np.sqrt(_PROPOSAL_DF / rng.chisquare(_PROPOSAL_DF, count))[:, None]
        )
        side = np.where(e < 0, self.scales[:, 0], self.scales[:, 1])
        return np.asarray(self.centre + (e * side) @ self.axes.T)

    def standardised(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``e`` of points ``z`` and the scale on their side, each (n, 3)."""
        along = (np.atleast_2d(z) - self.centre) @ self.axes
        side = np.where(along < 0, self.scales[:, 0], self.scales[:, 1])
        return along / side, side

    def log_density(self, z: np.ndarray) -> np.ndarray:
        e, side = self.standardised(z)
        return np.asarray(_log_t(np.sum(e**2, axis=1), 3) - np.log(side).sum(axis=1))


@dataclass(frozen=True)
class SplitMixture:
    """The warm-up proposal: a split t at each mode, mixed by each mode's Laplace mass
    (density times the volume of its covariance), every mode at least ``_MODE_FLOOR``."""

    parts: tuple[SplitT, ...]
    shares: np.ndarray

    @classmethod
    def around(
        cls,
        modes: list[tuple[np.ndarray, float, np.ndarray]],
        evaluate: Callable[[np.ndarray], np.ndarray],
    ) -> SplitMixture:
        parts = tuple(_scanned(mode, cov, evaluate) for mode, _, cov in modes)
        mass = np.array([lp + 0.5 * np.linalg.slogdet(cov)[1] for _, lp, cov in modes])
        shares = np.exp(mass - mass.max())
        shares /= shares.sum()
        shares = np.maximum(shares, _MODE_FLOOR)
        return cls(parts, shares / shares.sum())

    def draw(self, rng: np.random.Generator, count: int) -> np.ndarray:
        which = rng.choice(len(self.parts), size=count, p=self.shares)
        out = np.empty((count, 3))
        for k, part in enumerate(self.parts):
            chosen = which == k
            out[chosen] = part.draw(rng, int(chosen.sum()))
        return out

    def log_density(self, z: np.ndarray) -> np.ndarray:
        logs = [np.log(w) + p.log_density(z) for w, p in zip(self.shares, self.parts)]
        return np.asarray(np.logaddexp.reduce(np.array(logs), axis=0))


def _log_t(quad: np.ndarray, dim: int) -> np.ndarray:
    """Log density of a standard ``dim``-variate Student t (``_PROPOSAL_DF``) at squared
    standardised distance ``quad``."""
    df = _PROPOSAL_DF
    const = special.gammaln((df + dim) / 2) - special.gammaln(df / 2) - dim / 2 * np.log(df * np.pi)
    return np.asarray(const - (df + dim) / 2 * np.log1p(quad / df))


def _t_noise(rng: np.random.Generator, count: int, dim: int) -> np.ndarray:
    """Standard ``dim``-variate Student t draws (``_PROPOSAL_DF``)."""
    chi = rng.chisquare(_PROPOSAL_DF, count)
    return rng.standard_normal((count, dim)) * np.sqrt(_PROPOSAL_DF / chi)[:, None]


@dataclass(frozen=True)
class KernelMixture:
    """The sampling proposal, a mixture of three parts (shares ``_SHARES``):

    * Student t kernels (one covariance) at importance-resampled warm-up draws: a kernel
      estimate follows whatever shape the posterior has, two modes included (nu can be
      near 3 and near 40 on the same data);
    * the warm-up's split t, which keeps the importance weights bounded where the kernels
      are thin (a defensive mixture, Hesterberg 1995);
    * the kernels' ``(mu_0, log sigma_0)`` with ``nu`` drawn from its prior: where the data
      say little about nu (large nu, where the t is nearly normal) its posterior is its
      prior, whose long right tail the kernels would see too rarely.

    Kernels are placed by systematic resampling of the warm-up draws by their weights; their
    covariance is the weighted covariance times Silverman's factor for the effective number
    of draws. Densities are normalised (the parts are mixed).
    """

    centres: np.ndarray  # (K, 3)
    chol: np.ndarray  # lower Cholesky factor of the kernels' covariance
    defensive: SplitMixture
    m: Marginal

    @classmethod
    def fitted(
        cls,
        defensive: SplitMixture,
        z: np.ndarray,
        log_w: np.ndarray,
        rng: np.random.Generator,
        m: Marginal,
    ) -> KernelMixture:
        finite = np.isfinite(log_w)
        z, log_w = z[finite], log_w[finite]
        w = np.exp(log_w - log_w.max())
        w /= w.sum()
        ess = 1.0 / np.sum(w**2)
        mean = w @ z
        dev = z - mean
        cov = (dev * w[:, None]).T @ dev
        # Silverman's rule of thumb in 3 dimensions, for ``ess`` draws
        factor = (4.0 / 5.0) ** (1 / 7) * ess ** (-1 / 7)
        count = min(_KERNELS, len(z))
        picks = np.searchsorted(np.cumsum(w), (rng.random() + np.arange(count)) / count)
        centres = z[np.minimum(picks, len(z) - 1)]
        chol = np.linalg.cholesky(cov * factor**2 + np.eye(3) * 1e-9)
        return cls(centres, chol, defensive, m)

    def draw(self, rng: np.random.Generator, count: int) -> np.ndarray:
        out = self.defensive.draw(rng, count)
        part = rng.choice(3, size=count, p=_SHARES)
        for which in (0, 2):
            chosen = part == which
            k = int(chosen.sum())
            centres = self.centres[rng.integers(len(self.centres), size=k)]
            out[chosen] = centres + _t_noise(rng, k, 3) @ self.chol.T
            if which == 2:
                out[chosen, 2] = np.log(_prior_nu_draws(self.m, rng, k))
        return out

    def log_density(self, z: np.ndarray) -> np.ndarray:
        z = np.atleast_2d(z)
        diff = z[:, None, :] - self.centres[None]
        # the kernels in 3 dimensions, and their (mu_0, log sigma_0) margins in 2
        parts = []
        for dim in (3, 2):
            chol = self.chol if dim == 3 else np.linalg.cholesky(self.chol @ self.chol.T)[:2, :2]
            dev = np.linalg.solve(chol, diff[..., :dim].reshape(-1, dim).T)
            each = _log_t(np.sum(dev**2, axis=0), dim).reshape(len(z), -1)
            top = each.max(axis=1)
            with np.errstate(invalid="ignore"):
                parts.append(
                    top
                    + np.log(np.exp(each - top[:, None]).mean(axis=1))
                    - np.log(np.diag(chol)).sum()
                )
        kernels, margins = parts
        free = np.exp(z[:, 2])
        prior = (
            log_nu_prior(self.m, self.m.nu_shift + free)
            - np.log(self.m.beta_high - self.m.beta_low)
            + z[:, 2]
        )
        split = self.defensive.log_density(z)
        logs = np.log(np.asarray(_SHARES))
        # a part that underflows (a nu far beyond its prior's range) counts as 0, not NaN;
        # the split t is positive everywhere, so the mixture is too
        parts = [logs[0] + kernels, logs[1] + split, logs[2] + margins + prior]
        parts = [np.where(np.isnan(p), -np.inf, p) for p in parts]
        return np.asarray(np.logaddexp(np.logaddexp(parts[0], parts[1]), parts[2]))


def _prior_nu_draws(m: Marginal, rng: np.random.Generator, count: int) -> np.ndarray:
    """Draws of ``nu - shift`` from its prior as the program states it: alpha at the
    quadrature nodes with their weights (the density :func:`log_nu_prior` integrates),
    beta uniform, then Gamma(alpha, rate beta)."""
    weights = np.exp(m.alpha_log_weight) / m.alpha_node
    alpha = m.alpha_node[rng.choice(len(weights), size=count, p=weights / weights.sum())]
    beta = rng.uniform(m.beta_low, m.beta_high, count)
    return np.maximum(rng.gamma(alpha, 1.0 / beta), np.finfo(float).tiny)


def _scanned(
    mode: np.ndarray, cov: np.ndarray, evaluate: Callable[[np.ndarray], np.ndarray]
) -> SplitT:
    """The split-t around the mode along the Laplace covariance's axes, each side's scale
    the largest ``d / sqrt(2 (lp(mode) - lp(mode + d v)))`` over steps ``d`` out to
    ``_SCAN`` standard deviations (Geweke's rule: no tail thinner than the posterior's out
    there), inflated by ``_INFLATE``."""
    vals, axes = np.linalg.eigh(cov)
    sd = np.sqrt(vals)
    steps = np.asarray(_SCAN)
    points = [mode]
    for k in range(3):
        for sign in (-1.0, 1.0):
            points += [mode + sign * d * sd[k] * axes[:, k] for d in steps]
    lp = evaluate(np.array(points))
    top, rest = lp[0], lp[1:].reshape(3, 2, len(steps))
    drop = np.maximum(top - rest, 1e-12)
    implied = np.where(np.isfinite(rest), steps * sd[:, None, None] / np.sqrt(2 * drop), 0.0)
    scales = np.maximum(implied.max(axis=2), 0.5 * sd[:, None]) * _INFLATE
    return SplitT(mode, axes, scales)


def _chains(
    z: np.ndarray,
    lp: np.ndarray,
    lq: np.ndarray,
    rng: np.random.Generator,
    start: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run the independence sampler (the numpy engine's kernel,
    :func:`bbt_widget.engines._independence.independence_chains`) through each chain's
    proposals ``z`` (chains, draws, 3), with their log posterior ``lp`` and proposal density
    ``lq`` (chains, draws).

    Without ``start`` (the state, log posterior and proposal density per chain) a chain
    starts at its first proposal. Returns the states (chains, draws, 3), the last state's
    log posterior, and the accept indicators (chains, draws).
    """
    with np.errstate(invalid="ignore"):  # a point outside the support: nan, refused
        log_w = lp - lq
    current = None if start is None else start[1] - start[2]
    held, accepted = independence_chains(log_w, rng, current)
    rows = np.arange(len(z))
    states = z[rows[:, None], np.maximum(held, 0)]
    last_lp = lp[rows, np.maximum(held[:, -1], 0)]
    if start is not None:
        states = np.where((held < 0)[..., None], start[0][:, None, :], states)
        last_lp = np.where(held[:, -1] < 0, start[1], last_lp)
    return states, last_lp, accepted
