"""How BBT and a ranking model order two algorithms, at the Monte Carlo precision of their
draws.

BBT's P(best) is the probability that an algorithm's ability is the largest; a ranking
model's P(first) is the probability that the algorithm is ranked first on a new data set.
They are different quantities, so the two models are compared by the orderings they give,
never by value: a model puts ``a`` ahead of ``b`` when its own quantity is larger for ``a``.

Each quantity is a posterior mean, an average over the draws, so the gap between two
algorithms has a Monte Carlo standard error: the standard deviation of the draws of the
difference over the square root of their effective sample size over the chains
(:func:`bbt_widget.core.precision.mcse`, the error the report gives BBT's own probabilities).
A gap within :data:`ORDER_Z` standard errors of zero could reverse with another seed: the
model has the two *tied at this precision*.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.precision import DEFAULT_Z, mcse

__all__ = ["ORDER_Z", "OrderGap", "best_indicators", "order_gap"]

#: Standard errors a gap must exceed for a model's ordering of two algorithms to count: the
#: report's threshold for BBT's own claims (a two-sided 0.3% chance that a gap of zero looks
#: this large, were the error normal).
ORDER_Z = DEFAULT_Z


@dataclass(frozen=True)
class OrderGap:
    """One model's own quantity for two algorithms, ``ahead`` (the larger posterior mean)
    first, and the Monte Carlo standard error of their difference.

    Attributes
    ----------
    ahead, behind
        The algorithms, by the posterior means of the quantity.
    p_ahead, p_behind
        Those posterior means.
    mcse
        Monte Carlo standard error of ``p_ahead - p_behind`` (NaN: too few draws to tell).
    """

    ahead: str
    behind: str
    p_ahead: float
    p_behind: float
    mcse: float

    def settled(self, z: float = ORDER_Z) -> bool:
        """Whether the gap exceeds ``z`` Monte Carlo standard errors (never, with a NaN
        error: an ordering that cannot be checked is not asserted)."""
        return bool(self.p_ahead - self.p_behind > z * self.mcse)


def order_gap(draws: np.ndarray, names: Any, one: str, other: str) -> OrderGap:
    """The ordering of ``one`` and ``other`` by a quantity whose per-draw values are
    ``draws`` (chains, draws, algorithms in the order of ``names``), with its precision.

    ``ahead`` is the one with the larger posterior mean (``one`` on an exact tie)."""
    names = list(names)
    x = np.asarray(draws, dtype=float)[..., names.index(one)]
    y = np.asarray(draws, dtype=float)[..., names.index(other)]
    error = mcse(x - y)
    px, py = float(x.mean()), float(y.mean())
    if py > px:
        return OrderGap(other, one, py, px, error)
    return OrderGap(one, other, px, py, error)


def best_indicators(beta: np.ndarray) -> np.ndarray:
    """Per draw of the abilities ``beta`` (chains, draws, algorithms), 1 for the algorithm
    with the largest ability and 0 for the others: the draws whose means are BBT's P(best)
    (the first of equal largest, as :func:`bbt_widget.core.posterior.ranking` counts)."""
    beta = np.asarray(beta, dtype=float)
    if beta.ndim == 2:  # draws without chains: one chain
        beta = beta[None]
    out = np.zeros(beta.shape)
    np.put_along_axis(out, np.argmax(beta, axis=-1)[..., None], 1.0, axis=-1)
    return out
