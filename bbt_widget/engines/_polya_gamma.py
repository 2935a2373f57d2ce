"""Draws of Pólya-Gamma variables PG(h, z), the latent variables of the numpy engine's sampler.

PG(h, z) is the law of ``(1 / (2 pi^2)) sum_{k>=1} g_k / ((k - 1/2)^2 + z^2 / (4 pi^2))`` with
``g_k ~ Gamma(h, 1)`` independent (Polson, Scott and Windle 2013, JASA 108(504),
doi:10.1080/01621459.2013.829001, Eq. 1).

Draws come from the ``polyagamma`` package (binary wheels for Linux, macOS and Windows on
the usual CPython versions), with the methods that are exact there, as measured against the
exact mean and variance (``tests/unit/test_gibbs_exact.py``): Devroye's method for whole
shapes up to :data:`_SADDLE_ABOVE` (exact; about 0.1 microsecond per unit of shape) and the
saddle-point accept-reject method above (about 1.3 microseconds a draw whatever the shape).
Its default "hybrid" is not used: it switches to a normal approximation above 50, and to its
"alternate" method for a fractional shape or a whole one under 25 with ``z >= 2``, whose
draws polyagamma 2.0.2 gives with a mean up to 5% too high (110 standard errors at shape 49
in 4 million draws); its saddle method is off for small shapes (a variance 14% too small at
shape 2). The fractional part of a shape (``PG(h) = PG(floor h) + PG(h - floor h)``,
independent) is drawn from the series below.

Where ``polyagamma`` cannot be installed (a platform without its wheel and no compiler), the
fallback is the series above truncated after :data:`FALLBACK_TERMS` terms, with the
remainder replaced by its mean: an approximation whose mean is exact and whose variance falls
short by less than 1e-7 of the total for the shapes BBT fits (tested against ``polyagamma``
in ``tests/unit/test_gibbs_exact.py``). :func:`method` says which one runs.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
import numpy.typing as npt

#: Whole shapes above this go to polyagamma's saddle-point method, those up to it to
#: Devroye's (which takes about 0.1 microsecond per unit of shape): in 4 million draws at
#: shapes 13 to 1000, tilts 0 to 12, the saddle method's mean was within 2.6 standard errors
#: of the exact one and its variance within 0.2%; below 13 it drifts (14% short at shape 2).
_SADDLE_ABOVE = 20.0
#: Gamma draws the fallback holds at once (a block of elements x its terms).
_FALLBACK_BLOCK = 1 << 20
#: Terms of the truncated series of the fallback.
FALLBACK_TERMS = 200

Array = npt.NDArray[np.float64]


def available() -> bool:
    """Whether the ``polyagamma`` package (exact draws) is installed."""
    return importlib.util.find_spec("polyagamma") is not None


def method() -> str:
    """Which sampler :func:`draw` uses here, for reports."""
    if available():
        from polyagamma import __version__

        return f"polyagamma {__version__} (Devroye and saddle-point methods)"
    return f"a series of {FALLBACK_TERMS} gamma terms (polyagamma is not installed)"


def draw(h: Array, z: Array, rng: np.random.Generator) -> Array:
    """One PG(h, z) draw per element of ``h`` and ``z`` (same shape, ``h > 0``)."""
    if available():
        return _exact(h, z, rng)
    return fallback(h, z, rng)


def _exact(h: Array, z: Array, rng: np.random.Generator) -> Array:
    from polyagamma import random_polyagamma

    whole = np.floor(h)
    out = np.zeros(h.shape)
    methods = (
        (whole > _SADDLE_ABOVE, "saddle"),
        ((whole >= 1) & (whole <= _SADDLE_ABOVE), "devroye"),
    )
    for chosen, kind in methods:
        if chosen.all():
            out = np.asarray(random_polyagamma(whole, z, method=kind, random_state=rng))
        elif chosen.any():
            out[chosen] = random_polyagamma(whole[chosen], z[chosen], method=kind, random_state=rng)
    fractional = h > whole
    if fractional.any():
        out[fractional] += fallback(h[fractional] - whole[fractional], z[fractional], rng)
    return out


def fallback(h: Array, z: Array, rng: np.random.Generator, terms: int = FALLBACK_TERMS) -> Array:
    """PG(h, z) by the series truncated after ``terms`` terms, plus the remainder's mean
    (in blocks of elements, so that the ``terms`` gamma draws of each stay a few MB)."""
    flat_h = np.asarray(h, dtype=float).ravel()
    c = (np.asarray(z, dtype=float).ravel() / (2 * np.pi)) ** 2
    k = (np.arange(1, terms + 1) - 0.5)[:, None] ** 2
    out = np.empty(flat_h.size)
    block = max(1, _FALLBACK_BLOCK // terms)
    for start in range(0, flat_h.size, block):
        part = slice(start, start + block)
        denom = k + c[None, part]  # (terms, block)
        gammas = rng.standard_gamma(np.broadcast_to(flat_h[part], denom.shape))
        head = (gammas / denom).sum(axis=0)
        out[part] = (head + flat_h[part] * _tail(c[part], terms)) / (2 * np.pi**2)
    return out.reshape(np.shape(h))


def _tail(c: Array, terms: int) -> Array:
    """``sum_{k > terms} 1 / ((k - 1/2)^2 + c)``: each term is the integral of
    ``1 / (x^2 + c)`` over ``[k - 1, k]`` less its midpoint-rule error, so the sum is the
    integral from ``terms`` to infinity plus ``f'(terms) / 24`` (exact to ~1e-11 for
    ``terms`` in the hundreds)."""
    a = float(terms)
    root = np.sqrt(np.maximum(c, 1e-300))
    integral = np.where(c > 1e-12, (np.pi / 2 - np.arctan(a / root)) / root, 1.0 / a)
    return np.asarray(integral - a / (12 * (a**2 + c) ** 2), dtype=float)


def mean(h: Any, z: Any) -> Array:
    """E[PG(h, z)] = h / (2 z) tanh(z / 2) (h / 4 at z = 0)."""
    h = np.asarray(h, dtype=float)
    z = np.abs(np.asarray(z, dtype=float))
    safe = np.where(z < 1e-8, 1.0, z)
    return np.asarray(np.where(z < 1e-8, h / 4, h / (2 * safe) * np.tanh(safe / 2)), dtype=float)


def variance(h: Any, z: Any) -> Array:
    """Var[PG(h, z)] = h (sinh z - z) / (4 z^3 cosh^2(z / 2)) (h / 24 at z = 0)."""
    h = np.asarray(h, dtype=float)
    z = np.abs(np.asarray(z, dtype=float))
    safe = np.where(z < 1e-4, 1.0, z)
    exact = h * (np.sinh(safe) - safe) / (4 * safe**3 * np.cosh(safe / 2) ** 2)
    return np.asarray(np.where(z < 1e-4, h / 24, exact), dtype=float)
