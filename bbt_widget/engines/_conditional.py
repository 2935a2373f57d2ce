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

The average over posterior draws of ``E[f(d) | s, rest, sigma]`` estimates the posterior
mean of ``f(d)`` without bias, whichever sampler drew them (the numpy engine's kernels or
Stan): the posterior probabilities ``above_50`` and ``in_rope`` and the mean of P(a > b).

Most of the posterior spread of ``d`` is its spread given the rest, so these expectations
vary little from draw to draw: the Monte Carlo error of ``above_50`` near a threshold is
60 to 100 times smaller than the indicator's over all the fit's draws, though computed on an
eighth or fewer of them (on the shipped 16 x 132 results and simulated ones of 30 and 50
algorithms; a Pólya-Gamma conditional, which integrates all abilities given latent variables,
gave 5 to 10), and a pair's claim settles unless its estimate lies within about 1e-4 of the
threshold.

Only the plain model has this form; the group model and Davidson's do not get conditional
estimates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.posterior import inv_logit
from ._design import Array, Design, softplus

__all__ = ["PairConditionals"]

#: Every k-th posterior draw of each chain has its conditional expectations computed per
#: pair, k at least :data:`THIN` (they vary so little between draws that an eighth of the
#: draws gives a Monte Carlo error far below any threshold's reach, and each costs a
#: quadrature) and at most :data:`MOST_DRAWS` draws in all. A fixed share, so that their
#: error falls with more rounds of draws as sampling by decision expects.
THIN = 8
MOST_DRAWS = 8000
#: A coarse look first uses every this-many-th of those draws: enough to settle almost every
#: claim (an error still tens of times below the indicator's), at a quarter of the cost (see
#: :func:`bbt_widget.core.precision.refined`).
COARSE = 4
#: Gauss-Legendre nodes of the window, and its half-width in standard deviations of the
#: normal law at the mode (the log-density falls at least that fast near the mode and
#: slightly slower beyond, where the likelihood's curvature fades: the width covers it).
_N = 48
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(_N)
_WIDTH = 7.0
#: The Legendre polynomials P_0..P_{N-1} at the nodes, scaled by (2k + 1) / 2: with the
#: weights they turn the density at the nodes into its expansion's coefficients.
_BASIS = np.polynomial.legendre.legvander(_NODES, _N - 1) * (2 * np.arange(_N) + 1) / 2
#: Newton steps to the mode, from the draw's own difference (a typical point, a fraction of a
#: standard deviation from it), and the largest step in logits (a guard far from the mode).
#: The window only needs the mode to a small fraction of its width: after a few steps it
#: holds the mass to far below the quadrature's own error.
_NEWTON_STEPS = 5
_MAX_STEP = 2.0
#: Draws integrated at once (draws x nodes x games floats).
_CHUNK = 256


@dataclass
class _Quadrature:
    """One pair's conditional laws of ``d``, per used draw: the window's centre and
    half-width, the Legendre coefficients of the density there (on the window's scale
    ``v`` in [-1, 1], integrating to 1) and the mean of P(a > b)."""

    centre: Array
    half: Array
    coefficients: Array
    mean: Array

    def below(self, t: float) -> Array:
        """Per draw, the conditional probability that ``d`` lies below ``t``."""
        v = np.clip((t - self.centre) / self.half, -1.0, 1.0)
        legendre = np.polynomial.legendre.legvander(v, _N)  # P_0..P_N at v, per draw
        integral = np.empty((len(v), _N))
        integral[:, 0] = v + 1.0
        k = np.arange(1, _N)
        integral[:, 1:] = (legendre[:, 2:] - legendre[:, :-2]) / (2 * k + 1)
        # the expansion's integral from -1 to v: sum_k c_k I_k(v)
        return np.asarray((self.coefficients * integral).sum(axis=1))


class PairConditionals:
    """``conditional(pairs, rope)`` for a plain model's posterior draws: per used draw and
    pair, the expectations of P(a > b), of "P(a > b) > 0.5" and of "P(a > b) in the ROPE"
    given the rest of the draw (the other abilities, ``beta_a + beta_b`` and ``sigma``),
    shaped (3, chains, used, pairs), in that order (averaged over the draws they estimate
    the summary's ``mean``, ``above_50`` and ``in_rope``): every k-th draw of each chain
    (:data:`THIN`, :data:`MOST_DRAWS`), or with ``coarse`` every :data:`COARSE`-th of those.
    Each pair's quadrature is kept for the next ROPE.

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
        step = max(THIN, -(-chains * draws // MOST_DRAWS))
        self._chains = chains
        self._draws = {
            coarse: (
                beta[:, :: step * (COARSE if coarse else 1)],
                sigma[:, :: step * (COARSE if coarse else 1)],
            )
            for coarse in (False, True)
        }
        self._known: dict[tuple[int, int, bool], _Quadrature] = {}

    def __call__(
        self, pairs: Sequence[tuple[int, int]], rope: tuple[float, float], *, coarse: bool = False
    ) -> Array:
        low, high = (float(np.log(r / (1.0 - r))) for r in rope)
        used = self._draws[coarse][1].size
        out = np.empty((3, used, len(pairs)))
        for k, pair in enumerate(pairs):
            key = (int(pair[0]), int(pair[1]), coarse)
            if key not in self._known:
                self._known[key] = self._quadrature(*key)
            q = self._known[key]
            out[0, :, k] = q.mean
            out[1, :, k] = 1.0 - q.below(0.0)
            out[2, :, k] = q.below(high) - q.below(low)
        return out.reshape(3, self._chains, -1, len(pairs))

    def _quadrature(self, a: int, b: int, coarse: bool) -> _Quadrature:
        beta, sigma = self._draws[coarse]
        beta = beta.reshape(-1, beta.shape[-1])
        sigma = sigma.reshape(-1)
        parts = [
            _pair_law(self._design, beta[rows], sigma[rows], a, b)
            for rows in (slice(s, s + _CHUNK) for s in range(0, len(beta), _CHUNK))
        ]
        return _Quadrature(*(np.concatenate(field) for field in zip(*parts)))


def _pair_law(
    design: Design, beta: Array, sigma: Array, a: int, b: int
) -> tuple[Array, Array, Array, Array]:
    """Per draw: the window's centre and half-width, the Legendre coefficients of the
    density of ``d`` there and its conditional mean of P(a > b) (see the module)."""
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

    mode = beta[:, a] - beta[:, b]
    for _ in range(_NEWTON_STEPS):
        p = inv_logit(shift + slope * mode[:, None])
        grad = pull - prior * mode - (counts * p * slope).sum(axis=1)
        curvature = prior + (counts * p * (1 - p) * slope**2).sum(axis=1)
        mode = mode + np.clip(grad / curvature, -_MAX_STEP, _MAX_STEP)
    p = inv_logit(shift + slope * mode[:, None])
    half = _WIDTH / np.sqrt(prior + (counts * p * (1 - p) * slope**2).sum(axis=1))

    nodes = mode[:, None] + half[:, None] * _NODES  # (draws, nodes)
    eta = shift[:, None, :] + slope * nodes[..., None]
    log_density = (pull - prior[:, None] * nodes / 2) * nodes
    log_density -= softplus(eta) @ counts
    log_density -= log_density.max(axis=1, keepdims=True)
    mass = np.exp(log_density) * _WEIGHTS
    mass /= mass.sum(axis=1, keepdims=True)
    mean = (mass * inv_logit(nodes)).sum(axis=1)
    return mode, half, mass @ _BASIS, mean
