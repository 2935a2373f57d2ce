"""One slice-sampling update of a scalar per chain (Neal 2003, Ann. Statist. 31(3), the
stepping-out and shrinkage procedures): the numpy engine's draws of ``log sigma`` and
``log tau``, in the Gibbs sweeps and beside the independence kernel."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ._design import Array

#: Bounds of ``log sigma`` and ``log tau`` for the slice sampler (a prior mass outside them
#: below 1e-30 for every hyper-prior and scale the package accepts).
_LOG_BOUNDS = (-25.0, 12.0)
#: The most steps out on each side.
_SLICE_STEPS = 40


def slice_update(
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
