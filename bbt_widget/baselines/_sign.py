"""Bayesian sign test with a ROPE (Benavoli et al. 2017, Sec. 4.1; baycomp's ``SignTest``).

For a pair (a, b) with differences ``z_i = b_i - a_i`` of the per-data-set means over the
data sets where both have a result, each difference falls left of the ROPE (``z < -r``, a
practically better), in it (``-r <= z <= r``) or right of it (``z > r``, b practically
better). With a Dirichlet process prior of strength ``s`` whose pseudo-observation lies in
one region (the ROPE by default: the prior says nothing about either side), the posterior of
the region probabilities is

    (theta_left, theta_rope, theta_right) ~ Dir(n_left, n_rope + s, n_right)

and ``p_left``/``p_rope``/``p_right`` are the posterior probabilities that each region is the
most probable one (the share of Monte Carlo draws in which its theta is the largest), as for
the signed-rank test. As in baycomp, every count gets ``1e-4`` so that an empty region still
has a proper Dirichlet parameter. The sign test uses only the side each difference falls on,
not its size: it is more robust to outlying data sets than the signed-rank test, and less
powerful.

A difference equal to ``+-r`` up to floating-point noise is in the (closed) ROPE, the rule of
:mod:`._signed_rank`; baycomp compares the floating-point differences as they are, so the two
can count a difference on a ROPE bound differently. Each pair's draws come from a generator
seeded with ``seed``, so a pair's probabilities never depend on the other algorithms.
"""

from __future__ import annotations

from dataclasses import dataclass
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
    check_choice,
    check_positive,
    dataset_means,
    find_pair,
    noise_level,
    pair_frame,
    selected_pairs,
)
from ._signed_rank import _winners
from ._simplex import SimplexTestResult, settled_shares

if TYPE_CHECKING:  # typing.Unpack is Python 3.11; the checker knows it on 3.10 too
    from ..core.tidy import LayoutKeywords

#: Where the prior's pseudo-observation can be placed (baycomp's LEFT, ROPE, RIGHT).
PRIOR_PLACES = ("left", "rope", "right")
#: Added to every count, as baycomp does, so that an empty region has a Dirichlet parameter > 0.
COUNT_OFFSET = 1e-4
_THETAS = ["theta_left", "theta_rope", "theta_right"]
#: Float64 values per draw at the peak: the three thetas, and the arrays that find each
#: draw's most probable region (measured: 59 bytes a draw).
_VALUES_PER_DRAW = 8


@dataclass(frozen=True)
class BayesianSignTestResult(SimplexTestResult):
    """Bayesian sign tests of one pair or of every pair.

    Attributes
    ----------
    table
        One row per pair: ``pair`` ("a > b"), ``alg_a``, ``alg_b``, ``n`` (data sets where
        both have a result); ``n_left``, ``n_rope``, ``n_right``: how many differences
        ``b - a`` fall left of the ROPE (a practically better), in it, right of it;
        ``p_left``, ``p_rope``, ``p_right``: the posterior probabilities that each region is
        the most probable; ``decision``: ``"a better"``, ``"equivalent"``, ``"b better"`` at
        probability >= 0.95 by 3 Monte Carlo standard errors (``mcse_left``, ``mcse_rope``,
        ``mcse_right``, binomial), else ``"no claim"``; ``unsettled``: a region within 3
        of them of 0.95 (another seed could change the decision). Every pair: ordered by
        median (a has the higher median); one pair: as asked. A pair with no common data set has NaN
        probabilities.
    rope, prior_strength, n_samples, seed, medians
        As for every pairwise test with a ROPE (:class:`._simplex.SimplexTestResult`).
    prior_place
        The region of the prior's pseudo-observation.
    """

    prior_place: str

    test_name: ClassVar[str] = "Bayesian sign test"

    def posterior(self, a: str | None = None, b: str | None = None) -> pd.DataFrame:
        """The draws of ``theta_left`` (a better), ``theta_rope``, ``theta_right`` of a pair.

        ``a`` and ``b`` name the pair in either order (left is then ``a``); they may be left
        out when the result holds one pair. The draws are those behind ``p_*`` in the table.
        """
        row, swapped = find_pair(self.table, a, b)
        theta = sign_draws(
            row[["n_left", "n_rope", "n_right"]].to_numpy(dtype=float),
            self.prior_strength,
            self.prior_place,
            self.n_samples,
            self.seed,
        )
        return pd.DataFrame(theta[:, ::-1] if swapped else theta, columns=_THETAS)


def bayesian_sign_test(
    data: pd.DataFrame | TidyResults,
    *,
    a: str | None = None,
    b: str | None = None,
    rope: float = 0.01,
    prior_strength: float = 1.0,
    prior_place: str = "rope",
    n_samples: int = 50_000,
    seed: int | None = None,
    draws: DrawsMode = DEFAULT_DRAWS,
    **layout: Unpack[LayoutKeywords],
) -> BayesianSignTestResult:
    """Bayesian sign test with ROPE of ``a`` vs ``b``, or of every pair of algorithms.

    Parameters
    ----------
    data
        Results in any layout :func:`bbt_widget.win_table` accepts.
    a, b
        The pair; the differences are ``b - a``, so *left* means a is better. Leave both
        out to test every pair (ordered by median, as :func:`bayesian_signed_rank`).
    rope
        Half-width of the ROPE on the scores' own scale (0.01: one point of accuracy); 0
        counts only exact ties as equivalent.
    prior_strength
        Strength ``s`` of the Dirichlet process prior (baycomp's default: 1).
    prior_place
        The region of the prior's pseudo-observation: ``"rope"`` (default, as baycomp and
        Benavoli et al.: no side is favoured), ``"left"`` or ``"right"``.
    n_samples
        Monte Carlo draws per pair (standard error of a probability at most
        ``0.5 / sqrt(n_samples)``).
    seed
        Seed of the draws; ``None`` draws one (reported in the result).

    draws
        ``"auto"`` (default): a pair whose region probability lies within 3 Monte Carlo
        standard errors of 0.95 is drawn again, with 3 x ``n_samples`` more draws (seeded
        from ``seed``), before its claim is decided; ``"fixed"``: ``n_samples`` only.
    **layout
        How to read the results: :class:`~bbt_widget.core.tidy.LayoutKeywords`. With
        ``lower_is_better`` the differences are oriented so that *left* still means a is
        better; ``sd`` is accepted and not used.

    Returns
    -------
    BayesianSignTestResult
        The per-pair ``table``, ``posterior()`` (the draws) and ``simplex()``.

    Raises
    ------
    ValueError
        Before any draw: bad layout or settings, unknown algorithms, a == b, only one of a
        and b.
    """
    rope = check_positive(rope, "rope", "0.01")
    prior_strength = check_positive(prior_strength, "prior_strength", "1")
    prior_place = check_choice(prior_place, "prior_place", PRIOR_PLACES)
    n_samples = check_count(n_samples, "n_samples")
    seed = check_seed(seed)
    check_draws(draws)
    means = dataset_means(as_tidy(data, **layout))
    names, pairs = selected_pairs(means, a, b)
    return sign_from_means(
        means, names, pairs, rope, prior_strength, prior_place, n_samples, seed, draws=draws
    )


def sign_from_means(
    means: Means,
    names: list[str],
    pairs: list[tuple[int, int]],
    rope: float,
    prior_strength: float,
    prior_place: str,
    n_samples: int,
    seed: int,
    draws: DrawsMode = DEFAULT_DRAWS,
) -> BayesianSignTestResult:
    """The sign test of ``pairs`` (indices into ``names``) on validated means; ``draws`` as
    for :func:`bayesian_sign_test`."""
    check_draws_memory(n_samples, _VALUES_PER_DRAW, "the Bayesian sign test")
    values = means.values[:, [means.algorithms.index(name) for name in names]]

    def shares_of(chosen: list[int], n: int, seed: int) -> pd.DataFrame:
        """The counts and region probabilities of ``pairs[chosen]`` from ``n`` draws."""
        rows = []
        for i, j in (pairs[k] for k in chosen):
            z = values[:, j] - values[:, i]
            z = z[np.isfinite(z)]
            counts = region_counts(z, rope, noise_level(values[:, [i, j]]))
            row = {"n": int(z.size), "n_left": counts[0], "n_rope": counts[1]}
            row["n_right"] = counts[2]
            if z.size == 0:
                rows.append(row | {"p_left": np.nan, "p_rope": np.nan, "p_right": np.nan})
                continue
            theta = sign_draws(counts, prior_strength, prior_place, n, seed)
            wins = _winners(theta.T) / n
            rows.append(row | {"p_left": wins[0], "p_rope": wins[1], "p_right": wins[2]})
        return pd.DataFrame(rows)

    first = shares_of(list(range(len(pairs))), n_samples, seed)
    table = pd.concat([pair_frame(names, pairs), first], axis=1)
    # the draws are independent Dirichlet weights: a share's error is the binomial one
    table = settled_shares(table, n_samples, seed, draws, shares_of)
    return BayesianSignTestResult(
        table=table,
        rope=rope,
        prior_strength=prior_strength,
        prior_place=prior_place,
        n_samples=n_samples,
        seed=seed,
        medians=means.medians(),
    )


def region_counts(z: np.ndarray, rope: float, tol: float = 0.0) -> np.ndarray:
    """How many differences lie left of ``-rope``, in ``[-rope, rope]``, right of ``rope``;
    within ``tol`` of a bound counts as on it (inside)."""
    left = int(np.sum(z < -rope - tol))
    right = int(np.sum(z > rope + tol))
    return np.array([left, z.size - left - right, right])


def sign_draws(
    counts: np.ndarray,
    prior_strength: float,
    prior_place: str,
    n_samples: int,
    seed: int | np.random.Generator | np.random.RandomState,
) -> np.ndarray:
    """Draws of ``(theta_left, theta_rope, theta_right)``, shape (n_samples, 3), from
    ``Dir(counts + 1e-4 + s at the prior's place)``.

    ``seed`` may also be a generator: ``np.random.RandomState(seed)`` gives baycomp's own
    draws.
    """
    alpha = np.asarray(counts, dtype=float) + COUNT_OFFSET
    alpha[PRIOR_PLACES.index(prior_place)] += prior_strength
    rng = seed if hasattr(seed, "dirichlet") else np.random.default_rng(seed)
    return rng.dirichlet(alpha, n_samples)
