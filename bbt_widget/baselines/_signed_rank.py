"""Bayesian signed-rank test with a ROPE (Benavoli et al. 2017, Sec. 4.2; paper Sec. 7.3).

For a pair (a, b) with differences ``z_i = b_i - a_i`` over the data sets where both have a
result, the Dirichlet-process posterior puts weights ``(w_0, w_1, ..., w_q) ~ Dir(s, 1, ...,
1)`` on the prior pseudo-observation ``z_0 = 0`` and the observations; Eq. 11 gives

    theta_left  = sum_ij w_i w_j I(z_i + z_j < -2r)      (a practically better)
    theta_rope  = sum_ij w_i w_j I(-2r <= z_i + z_j <= 2r)
    theta_right = sum_ij w_i w_j I(z_i + z_j > 2r)       (b practically better)

and ``p_left``/``p_rope``/``p_right`` are the posterior probabilities that each region is the
most probable one (the counts of Benavoli's Table 9, of baycomp and of scmamp's
``bSignedRankTest``, which made the paper's Table 15). The sign convention is Benavoli's
and baycomp's: *left* means the first algorithm of the pair is better. Regions tied for the
maximum share the sample (scmamp; it never happens with continuous weights).

Computation: with the ``z`` sorted, the pairs with ``z_i + z_j`` above a threshold form a
staircase, so each theta is ``sum_i w_i * (suffix or prefix sum of w)``: O(q) per sample
instead of O(q^2). The thresholds are found on the floating-point sums themselves, and a sum
equal to +-2r up to floating-point noise is on the boundary, i.e. in the closed ROPE: scores
are often fractions of a test-set size, so exact boundary cases are common (on the base
results, dt vs lda differs by -0.10 on corral and +0.12 on prnn_crabs, a Walsh average of
exactly 0.01, the paper's ROPE; which side 0.020000000000000018 falls must not decide it).

Every pair with the same number of data sets uses the same Dirichlet draws (one generator
per pair, seeded with ``seed``, as baycomp does): a pair's probabilities never depend on
which other algorithms are in the table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import pandas as pd

from ..core.data import TidyResults, as_tidy
from ..core.options import DEFAULT_DRAWS, DrawsMode
from ..core.settling import check_draws
from ..core.sizing import check_draws_memory
from ..core.tidy import Unpack
from ..core.validation import check_count, check_seed
from ._common import (
    Means,
    check_positive,
    dataset_means,
    find_pair,
    noise_level,
    pair_frame,
    selected_pairs,
)
from ._simplex import SimplexTestResult, settled_shares

if TYPE_CHECKING:  # typing.Unpack is Python 3.11; the checker knows it on 3.10 too
    from ..core.tidy import LayoutKeywords

_PROB_COLUMNS = ("p_left", "p_rope", "p_right", "p_left_0", "p_right_0")
#: Samples processed at once: a chunk of weights small enough to stay in the CPU cache, so
#: the sort and the cumulative sums do not stream whole arrays through memory.
_CHUNK = 1024


@dataclass(frozen=True)
class BayesianSignedRankResult(SimplexTestResult):
    """Pairwise Bayesian signed-rank tests.

    Attributes
    ----------
    table
        One row per pair, ordered by median (``"a > b"``: a has the higher median, as in
        the paper's Table 15; with ``a=`` and ``b=`` the one pair as asked): ``pair, alg_a,
        alg_b, n`` (data sets where both have a
        result); ``p_left`` (a practically better), ``p_rope`` (practically equivalent),
        ``p_right`` (b practically better); ``p_left_0`` and ``p_right_0``: the same on the
        same draws with no ROPE (the paper's ``above.0`` is ``p_left_0``); ``decision``:
        ``"a better"``, ``"equivalent"``, ``"b better"`` when that probability is
        >= 0.95 by 3 Monte Carlo standard errors, else ``"no claim"``; ``mcse_left``,
        ``mcse_rope``, ``mcse_right``: those errors (binomial: the draws are independent);
        ``unsettled``: a region within 3 of them of 0.95, so that another seed could change
        the decision (unsettled at this precision). A pair with no common data set has NaN
        probabilities.
    rope, prior_strength, n_samples, seed, medians
        As for every pairwise test with a ROPE (:class:`._simplex.SimplexTestResult`);
        ``prior_strength`` is the Dirichlet weight ``s`` of the pseudo-observation at 0.
    means
        The per-data-set means the table was computed from (for :meth:`posterior`).
    """

    means: Means | None = field(default=None, repr=False, compare=False)

    test_name: ClassVar[str] = "Bayesian signed-rank test"

    def posterior(self, a: str | None = None, b: str | None = None) -> pd.DataFrame:
        """The draws of ``theta_left`` (a better), ``theta_rope``, ``theta_right`` (Eq. 11)
        of a pair, one row per Monte Carlo sample: those behind ``p_*`` in the table.

        ``a`` and ``b`` name the pair in either order (left is then ``a``); they may be left
        out when the result holds one pair.
        """
        row, swapped = find_pair(self.table, a, b)
        if self.means is None:
            raise ValueError("this result does not hold the means its draws were made from")
        idx = [self.means.algorithms.index(name) for name in (row["alg_a"], row["alg_b"])]
        values = self.means.values[:, idx]
        z = values[:, 1] - values[:, 0]
        z = z[np.isfinite(z)]
        weights_t = dirichlet_weights(z.size, self.prior_strength, self.n_samples, self.seed)
        order, ((below, upto),) = _staircase(z, (self.rope,), noise_level(values))
        theta = np.empty((3, self.n_samples))
        for start in range(0, self.n_samples, _CHUNK):
            w, cum = _sorted_cumsum(weights_t[:, start : start + _CHUNK], order)
            theta[:, start : start + _CHUNK] = _thetas(w, cum, below, upto)
        theta = theta[::-1] if swapped else theta
        return pd.DataFrame(theta.T, columns=["theta_left", "theta_rope", "theta_right"])


def bayesian_signed_rank(
    data: pd.DataFrame | TidyResults,
    *,
    a: str | None = None,
    b: str | None = None,
    rope: float = 0.01,
    prior_strength: float = 0.5,
    n_samples: int = 50_000,
    seed: int | None = None,
    draws: DrawsMode = DEFAULT_DRAWS,
    **layout: Unpack[LayoutKeywords],
) -> BayesianSignedRankResult:
    """Bayesian signed-rank test with ROPE for every pair of algorithms.

    Parameters
    ----------
    data
        Results in any layout :func:`bbt_widget.win_table` accepts.
    a, b
        One pair to test (differences ``b - a``: *left* means a is better); leave both out
        to test every pair.
    rope
        Half-width of the ROPE on the scores' own scale (not the probability scale of the
        BBT ROPE); 0 gives the test without ROPE.
    prior_strength
        Prior strength ``s`` of the pseudo-observation at 0 (Benavoli et al.: 0.5).
    n_samples
        Monte Carlo samples of the Dirichlet weights per pair (Monte Carlo standard error
        of a probability at most ``0.5 / sqrt(n_samples)``).
    seed
        Seed of the weights; ``None`` draws one (reported in the result).
    draws
        ``"auto"`` (default): a pair whose region probability lies within 3 Monte Carlo
        standard errors of 0.95 is drawn again, with 3 x ``n_samples`` more weights (seeded
        from ``seed``), before its claim is decided; ``"fixed"``: ``n_samples`` only.
    **layout
        How to read the results: :class:`~bbt_widget.core.tidy.LayoutKeywords`. With
        ``lower_is_better`` the differences are oriented so that *left* still means the
        first algorithm is better; ``sd`` is accepted and not used.

    Returns
    -------
    BayesianSignedRankResult
        The per-pair ``table`` of posterior probabilities and the settings used;
        ``posterior()`` (the draws of a pair) and ``simplex()``.
    """
    rope = check_positive(rope, "rope", "0.01")
    prior_strength = check_positive(prior_strength, "prior_strength", "0.5")
    if prior_strength == 0:
        raise ValueError("prior_strength must be > 0 (Benavoli et al. use 0.5)")
    n_samples = check_count(n_samples, "n_samples")
    seed = check_seed(seed)
    check_draws(draws)
    means = dataset_means(as_tidy(data, **layout))
    names, pairs = selected_pairs(means, a, b)
    return signed_rank_from_means(
        means, rope, prior_strength, n_samples, seed, names, pairs, draws=draws
    )


def signed_rank_from_means(
    means: Means,
    rope: float,
    prior_strength: float,
    n_samples: int,
    seed: int,
    names: list[str] | None = None,
    pairs: list[tuple[int, int]] | None = None,
    draws: DrawsMode = DEFAULT_DRAWS,
) -> BayesianSignedRankResult:
    """The tests of ``pairs`` (indices into ``names``; default: every pair, by median) on
    validated means; ``draws`` as for :func:`bayesian_signed_rank`."""
    # the Dirichlet draws of weights, one per data set and the prior's, and their
    # contiguous copy (measured: 336 bytes a draw for 20 data sets)
    check_draws_memory(n_samples, 2 * (len(means.datasets) + 1), "the Bayesian signed-rank test")
    medians = means.medians()
    if names is None or pairs is None:
        names, pairs = selected_pairs(means, None, None)
    values = means.values[:, [means.algorithms.index(a) for a in names]]

    def shares_of(chosen: list[int], n: int, seed: int) -> pd.DataFrame:
        """The region probabilities of ``pairs[chosen]`` from ``n`` draws seeded ``seed``."""
        weights: dict[int, np.ndarray] = {}  # one draw per number of data sets (module doc)
        rows = []
        for i, j in (pairs[k] for k in chosen):
            z = values[:, j] - values[:, i]
            z = z[np.isfinite(z)]
            if z.size == 0:
                rows.append({"n": 0} | dict.fromkeys(_PROB_COLUMNS, np.nan))
                continue
            if z.size not in weights:
                weights[z.size] = dirichlet_weights(z.size, prior_strength, n, seed)
            tol = noise_level(values[:, [i, j]])
            with_rope, no_rope = region_probabilities(z, weights[z.size], (rope, 0.0), tol)
            rows.append(
                {
                    "n": int(z.size),
                    "p_left": with_rope[0],
                    "p_rope": with_rope[1],
                    "p_right": with_rope[2],
                    "p_left_0": no_rope[0],
                    "p_right_0": no_rope[2],
                }
            )
        return pd.DataFrame(rows)

    first = shares_of(list(range(len(pairs))), n_samples, seed)
    table = pd.concat([pair_frame(names, pairs), first], axis=1)
    # the draws are independent Dirichlet weights: a share's error is the binomial one
    table = settled_shares(table, n_samples, seed, draws, shares_of)
    return BayesianSignedRankResult(
        table=table,
        rope=rope,
        prior_strength=prior_strength,
        n_samples=n_samples,
        seed=seed,
        medians=medians,
        means=means,
    )


def dirichlet_weights(q: int, prior_strength: float, n_samples: int, seed: int) -> np.ndarray:
    """Draws of ``(w_0, ..., w_q) ~ Dir(s, 1, ..., 1)``, laid out (q + 1, n_samples)."""
    alpha = np.ones(q + 1)
    alpha[0] = prior_strength
    return np.ascontiguousarray(np.random.default_rng(seed).dirichlet(alpha, n_samples).T)


def region_probabilities(
    z: np.ndarray, weights_t: np.ndarray, ropes: tuple[float, ...], tol: float = 0.0
) -> list[np.ndarray]:
    """For each ROPE half-width, P(left, rope, right is the most probable region).

    ``z`` are the observed differences b - a (without the pseudo-observation);
    ``weights_t`` are Dirichlet draws laid out (q + 1, n_samples), row 0 belonging to the
    pseudo-observation at 0 (rows are observations so that sorting them copies contiguous
    rows rather than gathering strided columns). Sums within ``tol`` of a ROPE
    bound count as on it (inside the ROPE).
    """
    order, cuts = _staircase(z, ropes, tol)
    n = weights_t.shape[1]
    wins = np.zeros((len(ropes), 3))
    for start in range(0, n, _CHUNK):
        w, cum = _sorted_cumsum(weights_t[:, start : start + _CHUNK], order)
        for k, (below, upto) in enumerate(cuts):
            wins[k] += _winners(_thetas(w, cum, below, upto))
    return list(wins / n)


def posterior_thetas(
    z: np.ndarray, weights: np.ndarray, rope: float, tol: float = 0.0
) -> np.ndarray:
    """Samples of ``(theta_left, theta_rope, theta_right)`` (Eq. 11), shape (n_samples, 3).

    ``weights`` are laid out (n_samples, q + 1) here, as baycomp's.
    """
    order, ((below, upto),) = _staircase(z, (rope,), tol)
    w, cum = _sorted_cumsum(weights.T, order)
    return np.asarray(_thetas(w, cum, below, upto).T)


def _staircase(
    z: np.ndarray, ropes: tuple[float, ...], tol: float
) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """Sort order of (0, z) and, per ROPE and per i, how many j have z_i + z_j < -2r, <= 2r.

    Both counts are non-increasing/non-decreasing along sorted rows (float addition is
    monotone), which is what makes the prefix sums in :func:`_thetas` valid.
    """
    full = np.concatenate(([0.0], z))
    order = np.argsort(full, kind="stable")
    zs = full[order]
    sums = zs[:, None] + zs[None, :]
    return order, [
        ((sums < -2 * r - tol).sum(axis=1), (sums <= 2 * r + tol).sum(axis=1)) for r in ropes
    ]


def _sorted_cumsum(weights_t: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weights (q + 1, samples) in sorted-z order and their prefix sums along the rows."""
    w = weights_t[order]
    cum = np.empty((w.shape[0] + 1, w.shape[1]))
    cum[0] = 0.0
    # row by row: each step adds contiguous rows, where numpy's cumsum along axis 0 of a
    # C-ordered array walks strided memory
    for i in range(w.shape[0]):
        np.add(cum[i], w[i], out=cum[i + 1])
    return w, cum


def _thetas(w: np.ndarray, cum: np.ndarray, below: np.ndarray, upto: np.ndarray) -> np.ndarray:
    """(theta_left, theta_rope, theta_right) per sample, shape (3, samples)."""
    left = np.einsum("ij,ij->j", w, cum[below])
    left_or_inside = np.einsum("ij,ij->j", w, cum[upto])
    total = cum[-1] * cum[-1]  # sum_ij w_i w_j, 1 up to rounding
    return np.vstack([left, left_or_inside - left, total - left_or_inside])


def _winners(theta: np.ndarray) -> np.ndarray:
    """How many samples each region is the most probable in (ties share the sample)."""
    is_max = theta == theta.max(axis=0)
    return np.asarray((is_max / is_max.sum(axis=0)).sum(axis=1))
