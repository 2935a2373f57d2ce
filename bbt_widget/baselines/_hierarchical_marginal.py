"""The hierarchical correlated t-test's posterior of ``(mu_0, sigma_0, nu)`` alone, with every
data set's ``mu_i`` and ``sigma_i`` integrated out numerically.

Why: with few folds per data set (e.g. 4) the joint posterior of a data set that lies far
from the others has two modes, its mean explained either by a ``mu_i`` far in the t's tail
or by a ``sigma_i`` many times its observed sd. A sampler that moves ``mu_i`` and
``sigma_i`` (NUTS on any parametrisation tried) rarely crosses between the two, and its
chains disagree. Integrating both out leaves a smooth three-dimensional posterior.

The integrals, per data set ``i`` (units of the sampler: the differences divided by
``scale``, see :func:`bbt_widget.baselines._hierarchical.model_data`):

* ``sigma_i`` exactly. With ``A_i = ss_i / (1 - rho_i)``, ``v_i = (1 + (n_i - 1) rho_i) /
  n_i`` and ``S_i(mu) = A_i + (xbar_i - mu)^2 / v_i``, the likelihood times ``sigma_i``'s
  uniform prior on ``(0, H)`` integrates to a constant times ``f_i(mu) = S_i(mu)^-k_i Q(k_i,
  S_i(mu) / (2 H^2))``, ``k_i = (n_i - 1) / 2`` and ``Q`` the regularised upper incomplete
  gamma function (the truncation at ``H``; nearly 1).
* ``mu_i`` by Gauss-Legendre quadrature of ``f_i(mu) t(mu | mu_0, sigma_0, nu)`` on
  intervals between breakpoints placed at ``c + w sinh(j delta)`` around both factors' peaks
  (``c = xbar_i``, ``w`` the width of ``f_i``; ``c = mu_0``, ``w = sigma_0``). Each interval
  is then short against the distance to the nearer peak, where both factors are smooth, so a
  few nodes per interval give a relative error near 1e-6 whether the peaks coincide, are far
  apart or differ in width by orders of magnitude (``tests/unit/test_hierarchical_marginal.py``
  checks it against adaptive quadrature).

The same nodes give a draw of ``mu_i`` from its conditional given ``(mu_0, sigma_0, nu)``
(inverse of the quadrature's cumulative distribution) and then ``sigma_i`` given ``mu_i``
(``S_i / (2 sigma_i^2)`` is Gamma(``k_i``) truncated below at ``S_i / (2 H^2)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

#: Breakpoints on each side of a peak, at ``width * sinh(j * step)``, j = 1.._SIDE, the
#: outermost ``_REACH`` times (the distance between the peaks plus both widths) away, with
#: ``step`` at most _STEP_MAX (the outermost then 2200 widths away).
_SIDE = 7
_REACH = 30.0
_STEP_MAX = 1.2
#: Gauss-Legendre nodes per interval.
_NODES = 5
#: ``Q`` is left out of ``log f`` for a data set where ``f (1 - Q)`` stays below it.
_Q_TOL = 1e-8
_XI, _WI = np.polynomial.legendre.leggauss(_NODES)


@dataclass(frozen=True)
class Marginal:
    """What the integrals need of the data, in the sampler's units (see the module).

    Attributes
    ----------
    xbar, a, v, k, width
        Per data set: mean difference, ``A_i``, ``v_i``, ``k_i`` and the width of ``f_i``
        (the scale of the Student t with ``2 k_i - 1`` degrees of freedom it is, up to
        ``Q``).
    t_high
        ``1 / (2 H^2)``.
    q_rows
        The data sets whose factor ``Q`` is computed (see ``_log_kernel``).
    mu0_bound, sigma0_high
        Bounds of the uniform priors of ``mu_0`` and ``sigma_0``.
    nu_shift, beta_low, beta_high, alpha_node, alpha_log_weight
        The prior of ``nu`` (alpha and beta integrated out, as in the Stan program).
    """

    xbar: np.ndarray
    a: np.ndarray
    v: np.ndarray
    k: np.ndarray
    width: np.ndarray
    t_high: float
    q_rows: np.ndarray
    mu0_bound: float
    sigma0_high: float
    nu_shift: float
    beta_low: float
    beta_high: float
    alpha_node: np.ndarray
    alpha_log_weight: np.ndarray


def marginal(data: dict[str, Any]) -> Marginal:
    """The :class:`Marginal` of the model's data (``model_data``)."""
    scale = float(data["scale"])
    n = np.asarray(data["n"], dtype=float)
    rho = np.asarray(data["rho"], dtype=float)
    a = np.asarray(data["ss"], dtype=float) / scale**2 / (1.0 - rho)
    v = (1.0 + (n - 1.0) * rho) / n
    alpha = np.asarray(data["alpha_node"], dtype=float)
    k = (n - 1.0) / 2.0
    t_high = 0.5 / (float(data["sigma_high"]) / scale) ** 2
    q_bound = np.exp(k * np.log(a * t_high) - special.gammaln(k + 1.0))
    return Marginal(
        xbar=np.asarray(data["xbar"], dtype=float) / scale,
        a=a,
        v=v,
        k=k,
        width=np.sqrt(v * a / np.maximum(n - 2.0, 1.0)),
        t_high=t_high,
        q_rows=q_bound > _Q_TOL,
        mu0_bound=float(data["mu0_bound"]) / scale,
        sigma0_high=float(data["sigma0_high"]) / scale,
        nu_shift=float(data["nu_shift"]),
        beta_low=float(data["beta_low"]),
        beta_high=float(data["beta_high"]),
        alpha_node=alpha,
        alpha_log_weight=np.log(np.asarray(data["alpha_weight"], dtype=float)) + np.log(alpha),
    )


def _nodes(m: Marginal, mu0: np.ndarray, sigma0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Quadrature nodes and weights, shaped (batch, data sets, nodes), nodes increasing."""
    mu0, sigma0 = mu0[:, None, None], sigma0[:, None, None]
    centre, width = m.xbar[None, :, None], m.width[None, :, None]
    reach = _REACH * (np.abs(centre - mu0) + width + sigma0)
    j = np.arange(-_SIDE, _SIDE + 1) / _SIDE

    def spread(w: np.ndarray) -> np.ndarray:
        # out to ``reach``, but never coarser than _STEP_MAX near the peak: a peak far
        # narrower than the distance to the other is resolved, and the other grid's
        # breakpoints cover the stretch between them
        return np.asarray(w * np.sinh(j * np.minimum(np.arcsinh(reach / w), _SIDE * _STEP_MAX)))

    points = np.concatenate([centre + spread(width), mu0 + spread(sigma0)], axis=2)
    points.sort(axis=2)
    left, right = points[..., :-1, None], points[..., 1:, None]
    half = (right - left) / 2.0
    x = (left + half + half * _XI).reshape(*points.shape[:2], -1)
    return x, (half * _WI).reshape(x.shape)


def _log_kernel(
    m: Marginal, x: np.ndarray, mu0: np.ndarray, sigma0: np.ndarray, nu: np.ndarray
) -> np.ndarray:
    """``log f_i(x)`` (up to a constant per data set: 0 at ``xbar_i`` but for ``Q``) plus the
    log of the Student t's kernel ``(1 + z^2 / nu)^(-(nu + 1) / 2)``, (batch, q, nodes)."""
    out = m.xbar[:, None] - x
    out *= out
    out /= (m.v * m.a)[:, None]
    out += 1.0
    # log Q(k, S t_high), the bound H of sigma_i's prior: 1 - Q = P(k, t) <= t^k /
    # Gamma(k + 1), so f (1 - Q) <= q_bound everywhere (f is S^-k relative to its peak); it
    # is computed for the data sets where that bound exceeds _Q_TOL (few folds or a large
    # sd), left out elsewhere
    rows = m.q_rows
    q_term = None
    if rows.any():
        t = out[:, rows, :] * (m.a * m.t_high)[rows, None]
        with np.errstate(divide="ignore"):
            q_term = np.log(special.gammaincc(m.k[rows, None], t))
    np.log(out, out=out)
    out *= -m.k[:, None]
    if q_term is not None:
        out[:, rows, :] += q_term
    mu0, sigma0, nu = (p[:, None, None] for p in (mu0, sigma0, nu))
    z = x - mu0
    z /= sigma0
    z *= z
    z /= nu
    np.log1p(z, out=z)
    z *= (nu + 1.0) / 2.0
    out -= z
    return np.asarray(out)


def _log_student_constant(sigma0: np.ndarray, nu: np.ndarray) -> np.ndarray:
    """Log of the Student t density's constant, (batch,)."""
    return np.asarray(
        special.gammaln((nu + 1.0) / 2.0)
        - special.gammaln(nu / 2.0)
        - 0.5 * np.log(nu * np.pi)
        - np.log(sigma0)
    )


def log_terms(
    m: Marginal, mu0: np.ndarray, sigma0: np.ndarray, nu: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Nodes, weights and ``log f_i + log`` Student kernel at them, each (batch, q, nodes)."""
    x, w = _nodes(m, mu0, sigma0)
    return x, w, _log_kernel(m, x, mu0, sigma0, nu)


def log_marginals(m: Marginal, mu0: np.ndarray, sigma0: np.ndarray, nu: np.ndarray) -> np.ndarray:
    """``log integral f_i(mu) t(mu | mu0, sigma0, nu) dmu`` per draw and data set, (batch, q)."""
    _, w, log_k = log_terms(m, mu0, sigma0, nu)
    # the kernel is at most 1 (its value at a peak) and the weights are lengths, so the sum
    # is computed as it is; a row whose every term underflows is summed in logs instead
    total = (w * np.exp(log_k)).sum(axis=2)
    with np.errstate(divide="ignore"):
        out = np.log(total)
    lost = ~(total > 0)
    if lost.any():
        with np.errstate(divide="ignore"):
            terms = np.log(w[lost]) + log_k[lost]
        top = terms.max(axis=1)
        with np.errstate(invalid="ignore"):  # every term -inf: the integral is 0
            out[lost] = np.where(
                np.isfinite(top), top + np.log(np.exp(terms - top[:, None]).sum(axis=1)), -np.inf
            )
    return np.asarray(out + _log_student_constant(sigma0, nu)[:, None])


def log_nu_prior(m: Marginal, nu: np.ndarray) -> np.ndarray:
    """Log prior density of ``nu`` (up to a constant): ``nu - shift ~ Gamma(alpha, beta)``
    with alpha and beta uniform and integrated out (the Stan program's header)."""
    free = np.asarray(nu, dtype=float) - m.nu_shift
    # a nu at or below its shift, or beyond any float (the proposals' exp() under- or
    # overflows), has density 0: -inf, computed without log(0) or inf - inf warnings
    valid = np.isfinite(free) & (free > 0)
    free = np.where(valid, free, 1.0)
    shape = m.alpha_node[:, None] + 1.0
    low, high = m.beta_low * free[None], m.beta_high * free[None]
    # the difference of Q's, written with P below the mode to keep its precision
    small = high < shape
    diff = np.where(
        small,
        special.gammainc(shape, high) - special.gammainc(shape, low),
        special.gammaincc(shape, low) - special.gammaincc(shape, high),
    )
    with np.errstate(divide="ignore"):
        terms = m.alpha_log_weight[:, None] + np.log(diff)
    return np.where(valid, special.logsumexp(terms, axis=0) - 2.0 * np.log(free), -np.inf)


def log_posterior(m: Marginal, z: np.ndarray) -> np.ndarray:
    """Log posterior density (up to a constant) of unconstrained points ``z`` (batch, 3):
    ``(mu_0, log sigma_0, log(nu - shift))``, Jacobians included; -inf outside the priors'
    bounds."""
    z = np.atleast_2d(np.asarray(z, dtype=float))
    # exp() of a far-out proposal can underflow to 0 or overflow: outside as well
    with np.errstate(over="ignore"):
        mu0, sigma0 = z[:, 0], np.exp(z[:, 1])
        nu = m.nu_shift + np.exp(z[:, 2])
    free = nu - m.nu_shift
    inside = (
        np.isfinite(z).all(axis=1)
        & (np.abs(mu0) <= m.mu0_bound)
        & (sigma0 > 0)
        & (sigma0 <= m.sigma0_high)
        & (free > 0)
        & np.isfinite(nu)
    )
    out = np.full(len(z), -np.inf)
    if inside.any():
        s, n_, mu = sigma0[inside], nu[inside], mu0[inside]
        out[inside] = (
            log_marginals(m, mu, s, n_).sum(axis=1)
            + log_nu_prior(m, n_)
            + z[inside, 1]
            + z[inside, 2]
        )
    return out


def conditional_draws(
    m: Marginal,
    mu0: np.ndarray,
    sigma0: np.ndarray,
    nu: np.ndarray,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """One draw of every ``mu_i`` and ``sigma_i`` given each ``(mu0, sigma0, nu)``, in the
    sampler's units, each (batch, q).

    ``mu_i``: the inverse of the cumulative distribution of ``f_i t`` at the quadrature's
    nodes, linear between nodes. ``sigma_i`` given ``mu_i``: ``S_i / (2 sigma_i^2)`` is a
    Gamma(``k_i``) draw above ``S_i / (2 H^2)`` (the truncation keeps almost every draw;
    the rest are drawn again).
    """
    x, w, log_k = log_terms(m, mu0, sigma0, nu)
    mass = w * np.exp(log_k - log_k.max(axis=2, keepdims=True))
    # each node's mass is centred on it: the distribution function passes through
    # (x_j, mass before x_j + half of x_j's) and is linear in between
    mid = np.cumsum(mass, axis=2) - mass / 2.0
    u = rng.random(x.shape[:2]) * (mid[..., -1] + mass[..., -1] / 2.0)
    last = x.shape[2] - 1
    hi = np.clip((mid < u[..., None]).sum(axis=2), 1, last)
    lo = hi - 1

    def at(a: np.ndarray, i: np.ndarray) -> np.ndarray:
        return np.take_along_axis(a, i[..., None], 2)[..., 0]

    c_lo, c_hi, x_lo, x_hi = at(mid, lo), at(mid, hi), at(x, lo), at(x, hi)
    share = np.clip((u - c_lo) / np.where(c_hi > c_lo, c_hi - c_lo, 1.0), 0.0, 1.0)
    mu = x_lo + share * (x_hi - x_lo)
    s = m.a + (m.xbar - mu) ** 2 / m.v
    k = np.broadcast_to(m.k, mu.shape)
    g = rng.standard_gamma(k)
    low = s * m.t_high
    redo = g < low
    while redo.any():
        g[redo] = rng.standard_gamma(k[redo])
        redo = g < low
    return mu, np.sqrt(s / (2.0 * g))
