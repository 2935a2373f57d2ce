"""The conditional (Rao-Blackwellised) estimates of a BBT fit's pair probabilities: per
posterior draw, the expectation of each quantity over the pair's difference of abilities
given everything else, by quadrature in one dimension.

For a pair ``(a, b)`` write ``beta_a = (s + d) / 2`` and ``beta_b = (s - d) / 2``. Given
``s``, the other abilities and ``sigma``, the posterior of ``d`` is known up to a constant
(``stan/bbt.stan``): the prior's ``-d^2 / (4 sigma^2)`` and the binomial-logit likelihood of
every pair that involves ``a`` or ``b``, where each difference ``eta`` is linear in ``d``. It
is log-concave and smooth, so a Newton search finds its mode, and its density at the
Gauss-Legendre nodes of a window around it gives its Legendre expansion there: integrated
term by term, the expansion gives the mass below any threshold (``d = 0`` for "P(a > b) >
0.5", the ROPE's bounds in logits) to about 1e-10. The expansion is computed once per pair
and serves every ROPE (a widget's slider asks for many).

The window is scaled to the law itself, not only to its curvature at the mode: where some
algorithms beat others on every data set (complete separation) the law is a wide plateau
whose curvature at the mode is the prior's alone, and a window of a few of those standard
deviations would hold the plateau between a handful of nodes (probabilities above 1 or
below 0). So the window is narrowed to where the density lies within ``exp(-30)`` of its
peak (the nodes beyond, one each side), and widened where its ends still hold mass, until
it fits; the probabilities are then exact to the quadrature's precision, and kept in
[0, 1] against rounding.

The average over posterior draws of ``E[f(d) | s, rest, sigma]`` estimates the posterior
mean of ``f(d)`` without bias, whichever sampler drew them (the numpy engine's kernels or
Stan): the posterior probabilities ``above_50`` and ``in_rope`` and the mean of P(a > b).

Most of the posterior spread of ``d`` is its spread given the rest, so these expectations
vary little from draw to draw: the Monte Carlo error of ``above_50`` near a threshold is
60 to 100 times smaller than the indicator's over all the fit's draws, though computed on an
eighth or fewer of them (on the shipped 16 x 132 results and simulated ones of 30 and 50
algorithms; a Pólya-Gamma conditional, which integrates all abilities given latent variables,
gave 5 to 10), and a pair's claim settles unless its estimate lies within about 1e-4 of the
threshold. Three looks, each over more draws: a coarse one over every 32nd draw, a fine one
over every 8th, and one over every draw (for the few claims still open: the draws are
already made, so this settles them before any more are drawn). Later rounds of draws join
(:meth:`PairConditionals.joined`) and reuse what the earlier rounds computed.

Only the plain model has this form; the group model and Davidson's do not get conditional
estimates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from ..core.posterior import inv_logit, normal_cdf
from . import _independence
from ._design import Array, Design, softplus

__all__ = ["PairConditionals"]

#: Every k-th posterior draw of each chain has its conditional expectations computed per
#: pair in the fine look, k at least :data:`THIN` (they vary so little between draws that
#: an eighth of the draws gives a Monte Carlo error far below any threshold's reach, and
#: each costs a quadrature) and at most :data:`MOST_DRAWS` draws in all. A fixed share, so
#: that their error falls with more rounds of draws as sampling by decision expects.
THIN = 8
MOST_DRAWS = 8000
#: The coarse look uses every this-many-th of the fine look's draws: enough to settle almost
#: every claim (an error still tens of times below the indicator's), at a quarter of the
#: cost (see :func:`bbt_widget.core.precision.refined`).
COARSE = 4
#: The looks, coarsest first (:meth:`PairConditionals.__call__`'s ``look``).
LOOKS = ("coarse", "fine", "all")
#: The window's first half-width in standard deviations of the normal law at the mode (the
#: log-density falls at least that fast near the mode and slightly slower beyond, where the
#: likelihood's curvature fades: the width covers it).
_WIDTH = 7.0
#: The window fits the law (see the module), judged at its panels' nodes: its ends must lie
#: :data:`_END_DROP` below the peak's log-density (else that side is widened by the window's
#: width), and it is narrowed to the nodes within :data:`_LEVEL` of the peak (and one node
#: beyond each side) when they span less than half of it; at most :data:`_FITS` windows.
_END_DROP = 20.0
_LEVEL = 30.0
_FITS = 8
#: The fitted window is cut in two panels, at d = 0 where it lies inside (the threshold of
#: "P(a > b) > 0.5", where a separated pair's law is steepest), else at its middle; each
#: panel has :data:`_N` Gauss-Legendre nodes, and its density there gives its Legendre
#: expansion.
_N = 32
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(_N)
#: The Legendre polynomials P_0..P_{N-1} at the nodes, scaled by (2k + 1) / 2: with the
#: weights they turn the density at the nodes into its expansion's coefficients.
_BASIS = np.polynomial.legendre.legvander(_NODES, _N - 1) * (2 * np.arange(_N) + 1) / 2
#: Newton steps to the mode, from the draw's own difference (a typical point, a fraction of a
#: standard deviation from it), and the largest step in logits (a guard far from the mode).
#: The window only needs the mode to a small fraction of its width: after a few steps it
#: holds the mass to far below the quadrature's own error.
_NEWTON_STEPS = 5
_MAX_STEP = 2.0
#: Draws integrated at once (draws x nodes x games floats), and the floats of the buffer of
#: the log-density's factors (two megabytes: a coarse look's draws in one or two blocks;
#: smaller blocks, kept in the processor's own cache, cost more in numpy's calls per block
#: than they save).
_CHUNK = 256
_CACHE_FLOATS = 1 << 18


@dataclass
class _Quadrature:
    """One pair's conditional laws of ``d``, per used draw: the bounds of its two panels
    (low, cut, high), each panel's share of the mass and the Legendre coefficients of the
    density there (on the panel's scale ``v`` in [-1, 1], integrating to 1), and the mean of
    P(a > b)."""

    bounds: Array
    shares: Array
    coefficients: Array
    mean: Array

    def below(self, thresholds: Sequence[float]) -> Array:
        """Per threshold ``t`` and draw, the conditional probability that ``d`` lies below
        ``t``, in [0, 1], shaped (thresholds, draws); a block of draws at a time."""
        t = np.asarray(thresholds, dtype=float)
        out = np.zeros((len(self.mean), len(t)))
        k = np.arange(1, _N)
        step = max(1, _CACHE_FLOATS // (len(t) * (_N + 1)))
        for start in range(0, len(out), step):
            rows = slice(start, start + step)
            for panel in range(2):
                low, high = self.bounds[rows, panel, None], self.bounds[rows, panel + 1, None]
                half = np.maximum((high - low) / 2, 1e-300)
                v = np.clip((t - (high + low) / 2) / half, -1.0, 1.0)
                legendre = np.polynomial.legendre.legvander(v, _N)  # P_0..P_N at each v
                integral = np.empty((*v.shape, _N))
                integral[..., 0] = v + 1.0
                integral[..., 1:] = (legendre[..., 2:] - legendre[..., :-2]) / (2 * k + 1)
                # the expansion's integral from -1 to v: sum_k c_k I_k(v), at most 1
                coefficients = self.coefficients[rows, panel, None, :]
                inside = np.clip((coefficients * integral).sum(axis=-1), 0.0, 1.0)
                out[rows] += self.shares[rows, panel, None] * inside
        return np.asarray(np.clip(out, 0.0, 1.0).T)

    @staticmethod
    def joined(parts: Sequence[_Quadrature]) -> _Quadrature:
        """Several rounds' laws, one after the other."""
        fields = ("bounds", "shares", "coefficients", "mean")
        return _Quadrature(*(np.concatenate([getattr(p, f) for p in parts]) for f in fields))


class PairConditionals:
    """``conditional(pairs, rope, look="fine")`` for a plain model's posterior draws: per used
    draw and pair, the expectations of P(a > b), of "P(a > b) > 0.5" and of "P(a > b) in the
    ROPE" given the rest of the draw (the other abilities, ``beta_a + beta_b`` and
    ``sigma``), shaped (3, chains, used, pairs), in that order (averaged over the draws they
    estimate the summary's ``mean``, ``above_50`` and ``in_rope``). ``look``: ``"fine"``
    every k-th draw of each chain (:data:`THIN`, :data:`MOST_DRAWS`), ``"coarse"`` every
    :data:`COARSE`-th of those, ``"all"`` every draw. Each pair's quadrature is kept for
    the next ROPE (and the next round of draws: :meth:`joined`).

    Parameters
    ----------
    stan_data
        The plain model's data (``n_alg``, ``i1``, ``i2``, ``win1``, ``win2``, the
        hyper-prior's keys).
    beta, sigma
        Posterior draws, shaped (chains, draws, algorithms) and (chains, draws).
    """

    def __init__(self, stan_data: Mapping[str, Any], beta: Array, sigma: Array) -> None:
        self._stan_data = stan_data
        self._design = Design.from_stan_data(stan_data)
        chains, draws, _ = beta.shape
        fine = max(THIN, -(-chains * draws // MOST_DRAWS))
        self._every = {"coarse": fine * COARSE, "fine": fine, "all": 1}
        self._rounds: list[tuple[Array, Array]] = [(beta, sigma)]
        # per (a, b, every, round): the laws of that round's used draws
        self._known: dict[tuple[int, int, int, int], _Quadrature] = {}
        # the posterior mode and the covariance of the abilities there (None: no interior
        # mode), computed when first asked for
        self._normal: tuple[tuple[Array, Array] | None] | None = None

    @property
    def _chains(self) -> int:
        return sum(beta.shape[0] for beta, _ in self._rounds)

    def joined(self, beta: Array, sigma: Array) -> PairConditionals:
        """These conditionals with another round's draws (more chains, as many draws each)
        after this one's: what was computed for the earlier rounds is reused."""
        out = PairConditionals.__new__(PairConditionals)
        out.__dict__.update(self.__dict__)
        out._rounds = [*self._rounds, (beta, sigma)]
        return out

    def share(self, look: str) -> float:
        """The share of the draws a look uses (1 for ``"all"``)."""
        return 1.0 / float(self._every[look])

    def finest(self, pair: tuple[int, int]) -> str:
        """The finest look computed so far for ``pair`` over every round's draws (at any
        ROPE: the quadratures serve them all), the coarsest when none."""
        rounds = range(len(self._rounds))
        for look in reversed(LOOKS):
            every = self._every[look]
            if all((int(pair[0]), int(pair[1]), every, r) in self._known for r in rounds):
                return look
        return LOOKS[0]

    def looked(self) -> dict[str, set[tuple[int, int]]]:
        """The pairs each look has computed (for benchmarks and tests)."""
        by_every = {every: look for look, every in self._every.items()}
        out: dict[str, set[tuple[int, int]]] = {look: set() for look in LOOKS}
        for a, b, every, _ in self._known:
            out[by_every[every]].add((a, b))
        return out

    def __call__(
        self, pairs: Sequence[tuple[int, int]], rope: tuple[float, float], *, look: str = "fine"
    ) -> Array:
        low, high = (float(np.log(r / (1.0 - r))) for r in rope)
        every = self._every[look]
        rounds = range(len(self._rounds))
        laws = [
            _Quadrature.joined([self._law(int(pair[0]), int(pair[1]), every, r) for r in rounds])
            for pair in pairs
        ]
        if not laws:
            return np.empty((3, self._chains, 0, 0))
        # every pair's draws at once: (3, pairs x draws), then (3, draws, pairs)
        q = _Quadrature.joined(laws)
        below = q.below((0.0, low, high))
        values = np.stack([q.mean, 1.0 - below[0], np.maximum(below[2] - below[1], 0.0)])
        shaped = values.reshape(3, len(pairs), -1).transpose(0, 2, 1)
        return np.asarray(shaped.reshape(3, self._chains, -1, len(pairs)))

    def _law(self, a: int, b: int, every: int, round_index: int) -> _Quadrature:
        key = (a, b, every, round_index)
        if key not in self._known:
            beta, sigma = self._rounds[round_index]
            beta = beta[:, ::every].reshape(-1, beta.shape[-1])
            sigma = sigma[:, ::every].reshape(-1)
            parts = [
                _pair_law(self._design, beta[rows], sigma[rows], a, b)
                for rows in (slice(s, s + _CHUNK) for s in range(0, len(beta), _CHUNK))
            ]
            self._known[key] = _Quadrature(*(np.concatenate(field) for field in zip(*parts)))
        return self._known[key]

    def approximate(
        self, pairs: Sequence[tuple[int, int]], rope: tuple[float, float]
    ) -> Array | None:
        """The pairs' ``mean``, ``above_50``, ``in_rope`` and the posterior sd of P(a > b)
        (shaped (4, pairs)) under the normal approximation of the posterior at its mode,
        found by Newton's method from a fixed start: a function of the data alone, not of
        the draws or their seed (which pairs the summary estimates by their conditional
        expectations follows from it); None where there is no interior mode (complete
        separation)."""
        if self._normal is None:
            # many small decompositions: BLAS threads only contend (as in the sampler)
            with threadpool_limits(limits=1, user_api="blas"):
                start = np.zeros(self._design.n_alg + 1)
                found = _independence.find_mode(self._design, start)
            self._normal = (
                (None,) if found is None else ((found[0][1:], _beta_covariance(found[1])),)
            )
        if self._normal[0] is None:
            return None
        mode, covariance = self._normal[0]
        a = np.array([p[0] for p in pairs], dtype=int)
        b = np.array([p[1] for p in pairs], dtype=int)
        centre = mode[a] - mode[b]
        spread = np.sqrt(
            np.maximum(covariance[a, a] + covariance[b, b] - 2 * covariance[a, b], 1e-300)
        )
        low, high = (float(np.log(r / (1.0 - r))) for r in rope)
        # E[inv_logit(d)] for a normal d: the probit approximation (MacKay 1992)
        mean = inv_logit(centre / np.sqrt(1.0 + np.pi * spread**2 / 8.0))
        above = normal_cdf(centre / spread)
        inside = normal_cdf((high - centre) / spread) - normal_cdf((low - centre) / spread)
        # the sd of inv_logit(d) by the delta method
        spread_p = mean * (1.0 - mean) * spread
        return np.vstack([mean, above, inside, spread_p])


def _beta_covariance(precision: Array) -> Array:
    """The abilities' block of the inverse of the posterior precision of (log sigma, beta)."""
    return np.asarray(np.linalg.inv(precision)[1:, 1:])


def _log_density(
    nodes: Array, shift: Array, slope: Array, counts: Array, pull: float, prior: Array
) -> Array:
    """The log-density of ``d`` (up to a constant per draw) at ``nodes`` (draws, k).

    This evaluation is most of a summary's cost at many algorithms, and it takes no
    logarithm or exponential per draw, node and game. Each game's ``e^eta`` is
    ``e^shift * e^(slope * d)``, and the slopes take a few values (+-1/2 for a game of one
    of the pair, +-1 for the pair's own): the exponentials are taken per draw and game and
    per draw, node and slope. The games that count alike share a logarithm: ``c * sum
    log(1 + x_g) = c * log(prod (1 + x_g))``, the product over a run of games of one count
    and one slope, as many as keep it below ``e^700`` (each factor is at most ``e^max(eta,
    0) * 2``). Rounding changes the sum by about 1e-16 a game, far below the quadrature's
    1e-10. A run's factors are laid out game by game (each a block of draws x nodes), a few
    draws at a time into one buffer of :data:`_CACHE_FLOATS` (new arrays of that size per
    step cost more than the arithmetic: the allocator maps fresh pages for each).
    """
    out = (pull - prior[:, None] * nodes / 2) * nodes
    values, which = np.unique(slope, return_inverse=True)
    reach = float(np.abs(values).max(initial=0.0)) * np.abs(nodes).max(axis=1, initial=0.0)
    # per draw, a bound on its largest eta: below exp's overflow, the factored path
    top = shift.max(axis=1, initial=-np.inf) + reach
    fast = top < 700.0
    if not fast.all():
        # a far widened window's nodes: log(1 + e^eta) stably, from eta itself
        slow = np.flatnonzero(~fast)
        eta = nodes[slow, :, None] * slope
        eta += shift[slow, None, :]
        out[slow] -= softplus(eta) @ counts
        if not fast.any():
            return np.asarray(out)
    rows = np.flatnonzero(fast) if not fast.all() else slice(None)
    width = nodes.shape[1]
    # games per product: each factor is below e^(max(top, 0) + log 2)
    per = max(1, int(700.0 / (max(float(top[rows].max()), 0.0) + np.log(2.0))))
    # the games in order of count and slope; runs of at most ``per`` games of one of each
    order = np.lexsort((which, counts))
    counts, which = counts[order], which[order]
    cuts = np.flatnonzero((np.diff(counts) != 0) | (np.diff(which) != 0)) + 1
    groups = zip([0, *cuts.tolist()], [*cuts.tolist(), len(order)])
    runs = [(f, min(f + per, end)) for start, end in groups for f in range(start, end, per)]
    exp_shift = np.exp(shift[rows][:, order].T)  # (games, draws)
    powers = np.exp(nodes[rows][None] * values[:, None, None])  # (slopes, draws, nodes)
    longest = max(last - first for first, last in runs)
    step = max(1, _CACHE_FLOATS // (longest * width))
    buffer = np.empty(longest * min(step, exp_shift.shape[1]) * width)
    product = np.empty((min(step, exp_shift.shape[1]), width))
    total = np.zeros((exp_shift.shape[1], width))
    for begin in range(0, exp_shift.shape[1], step):
        block = slice(begin, begin + step)
        n = len(total[block])
        for first, last in runs:
            factors = buffer[: (last - first) * n * width].reshape(last - first, n, width)
            power = powers[which[first], block]
            np.multiply(exp_shift[first:last, block, None], power, out=factors)
            factors += 1.0
            np.multiply.reduce(factors, axis=0, out=product[:n])
            np.log(product[:n], out=product[:n])
            product[:n] *= counts[first]
            total[block] += product[:n]
    out[rows] -= total
    return np.asarray(out)


def _pair_law(
    design: Design, beta: Array, sigma: Array, a: int, b: int
) -> tuple[Array, Array, Array, Array]:
    """Per draw: the two panels' bounds and shares of the mass, the Legendre coefficients of
    the density of ``d`` in each and its conditional mean of P(a > b) (see the module)."""
    touches = (design.i1 == a) | (design.i2 == a) | (design.i1 == b) | (design.i2 == b)
    games = np.flatnonzero(touches)
    i1, i2 = design.i1[games], design.i2[games]
    wins, counts = design.wins[games], design.games[games]
    # eta = x' beta per game, x = +1 at i1 and -1 at i2; with beta_a = (s + d) / 2 and
    # beta_b = (s - d) / 2 it is shift + slope * d
    x_a = (i1 == a).astype(float) - (i2 == a)
    x_b = (i1 == b).astype(float) - (i2 == b)
    slope = (x_a - x_b) / 2
    others = np.where((i1 != a) & (i1 != b), beta[:, i1], 0.0)
    others -= np.where((i2 != a) & (i2 != b), beta[:, i2], 0.0)
    shift = others + (x_a + x_b)[None] * (beta[:, [a]] + beta[:, [b]]) / 2
    prior = 1.0 / (2.0 * sigma**2)  # the d-part of the prior: -d^2 / (4 sigma^2)
    # the wins' part of the log-likelihood, sum(wins * eta), is linear in d: its slope
    pull = float(wins @ slope)

    # the log-likelihood's gradient and curvature in d: sums over games of p and p (1 - p),
    # weighted by counts * slope and counts * slope^2
    weights = np.column_stack([counts * slope, counts * slope**2])
    p = np.empty_like(shift)
    spread = np.empty_like(shift)

    def moments(mode: Array) -> tuple[Array, Array]:
        np.multiply(slope, mode[:, None], out=p)
        np.add(p, shift, out=p)
        inv_logit(p, out=p)
        np.multiply(p, p, out=spread)
        np.subtract(p, spread, out=spread)  # p (1 - p)
        return p @ weights[:, 0], prior + spread @ weights[:, 1]

    mode = beta[:, a] - beta[:, b]
    for _ in range(_NEWTON_STEPS):
        expected, curvature = moments(mode)
        grad = pull - prior * mode - expected
        mode = mode + np.clip(grad / curvature, -_MAX_STEP, _MAX_STEP)
    half = _WIDTH / np.sqrt(moments(mode)[1])
    low, high = mode - half, mode + half

    def at(nodes: Array, rows: Array) -> Array:
        return _log_density(nodes, shift[rows], slope, counts, pull, prior[rows])

    # the two panels' nodes of every draw, and the log-density there, for the window as it
    # stands; refitted (see the module) for the draws whose window does not fit their law
    nodes = np.empty((len(mode), 2 * _N))
    values = np.empty((len(mode), 2 * _N))
    cut = np.empty(len(mode))
    todo = np.arange(len(mode))
    for fit in range(_FITS):
        low_, high_ = low[todo], high[todo]
        cut[todo] = np.where((low_ < 0) & (high_ > 0), 0.0, (low_ + high_) / 2)
        for panel, (start, end) in enumerate(((low_, cut[todo]), (cut[todo], high_))):
            span = slice(panel * _N, (panel + 1) * _N)
            nodes[todo, span] = ((start + end) / 2)[:, None] + ((end - start) / 2)[:, None] * _NODES
        values[todo] = at(nodes[todo], todo)
        if fit == _FITS - 1:
            break
        ours, seen = nodes[todo], values[todo]
        top = seen.max(axis=1, keepdims=True)
        # ends that still hold mass: widen that side by the window's width
        width = high_ - low_
        left_open = seen[:, 0] > top[:, 0] - _END_DROP
        right_open = seen[:, -1] > top[:, 0] - _END_DROP
        # the nodes within _LEVEL of the peak, and one beyond each side
        inside = seen > top - _LEVEL
        first = np.maximum(inside.argmax(axis=1) - 1, 0)
        last = np.minimum(2 * _N - inside[:, ::-1].argmax(axis=1), 2 * _N - 1)
        rows = np.arange(len(todo))
        narrow_low, narrow_high = ours[rows, first], ours[rows, last]
        narrow = (narrow_high - narrow_low) < width / 2  # under half the window: narrow it
        again = left_open | right_open | narrow
        if not again.any():
            break
        low[todo] = np.where(left_open, low_ - width, np.where(narrow, narrow_low, low_))
        high[todo] = np.where(right_open, high_ + width, np.where(narrow, narrow_high, high_))
        todo = todo[again]
    bounds = np.column_stack([low, cut, high])
    panels = [
        (nodes[:, span], values[:, span], (bounds[:, k + 1] - bounds[:, k]) / 2)
        for k, span in enumerate((slice(0, _N), slice(_N, 2 * _N)))
    ]
    top = np.maximum(*(values.max(axis=1) for _, values, _ in panels))
    masses, coefficients, means = [], [], []
    for nodes, values, half in panels:
        mass = np.exp(values - top[:, None]) * _WEIGHTS  # times half: the panel's mass
        total = mass.sum(axis=1)
        masses.append(total * half)
        shape = mass / np.where(total > 0, total, 1.0)[:, None]
        coefficients.append(shape @ _BASIS)
        means.append((shape * inv_logit(nodes)).sum(axis=1))
    mass = np.column_stack(masses)
    shares = mass / mass.sum(axis=1, keepdims=True)
    mean = (shares * np.column_stack(means)).sum(axis=1)
    mean = np.minimum(mean, 1.0)  # 1 + 1e-16 by rounding
    return bounds, shares, np.stack(coefficients, axis=1), mean
