"""Sampling by decision: more draws only where a claim could flip with the seed.

A fit's claims compare Monte Carlo estimates (``above_50``, ``in_rope``, the mean of
P(a > b)) with fixed thresholds. Where an estimate lies within ``z`` Monte Carlo standard
errors of its threshold, another seed could give the other claim. ``draws="auto"`` draws
the default number first; a claim still open there has first been estimated again over
every draw already made (the conditional estimates' last look:
:func:`~.precision.refined`), which settles almost all. For the few left, it adds the
chains those claims need, seeded from the fit's seed, and re-checks those claims alone
(:meth:`~.result.BBTResult.unsettled_among`), in up to :data:`_ROUNDS` more rounds within
the budget (:data:`~.options.SETTLE_BUDGET` times the first round's draws, and
:data:`~.options.SETTLE_MEMORY` bytes of draws). An estimate's MCSE falls as one over the
square root of the draws, so the draws a claim needs follow from its distance to the
threshold: a claim whose estimate sits on its threshold (within :data:`ON_THRESHOLD`) would
need unbounded draws, or draws that change no digit a reader sees, and is left unsettled (the
summary makes no claim for it and names it).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pandas as pd

from .draws import Draws, joined, round_seed
from .options import DRAWS_MODES, SETTLE_BUDGET
from .result import BBTResult

#: The progress stage of the later rounds (the first is the engine's "sampling").
STAGE = "sampling more (claims near their thresholds)"
#: Draws asked for beyond the estimate of what a claim needs, against the noise of that
#: estimate (the distance and MCSE are themselves estimates).
_MARGIN = 1.25
#: Open claims that would need more than this many budgets each are on their threshold:
#: no round is spent on them alone.
_HOPELESS = 4
#: An estimate closer than this to its threshold sits on it: the summary shows three decimals,
#: so 0.69995 and 0.70004 both read 0.700 against 0.70, and no number of draws would tell a
#: reader which side it is on. Among thousands of claims (50 algorithms have 1,225 pairs,
#: three claims each) one is that close by chance alone; drawing for it would multiply the
#: fit's time to settle a difference no one can see.
ON_THRESHOLD = 5e-4
#: Most rounds after the first (each joins more chains; a claim's estimate moves between
#: rounds, so what it needs is estimated again).
_ROUNDS = 3


def draws_needed(open_claims: pd.DataFrame, drawn: int, z: float) -> pd.Series:
    """Per open claim (a row of :meth:`BBTResult.unsettled`), the total draws at which its
    estimate would lie ``z`` MCSE from its threshold, were the estimate to stay where it is:
    ``drawn * (z * mcse / distance) ** 2`` (infinite for an estimate on its threshold, within
    :data:`ON_THRESHOLD` of it)."""
    distance = (open_claims["value"] - open_claims["threshold"]).abs()
    ratio = (z * open_claims["mcse"] / distance.where(distance >= ON_THRESHOLD)) ** 2
    return (drawn * _MARGIN * ratio).fillna(math.inf)


def settle(
    first: Draws,
    result_of: Callable[[Draws, int], BBTResult],
    more: Callable[[int, int], Draws],
    *,
    per_chain: int,
    seed: int,
    budget: int,
    z: float,
) -> BBTResult:
    """The result of ``first``'s draws with as many more chains as its open claims need.

    Parameters
    ----------
    first
        The first round's draws.
    result_of
        ``result_of(draws, rounds)``: the fit's result of ``draws``, drawn in ``rounds``
        rounds.
    more
        ``more(chains, seed)``: that many more chains of the same fit, with that seed.
    per_chain
        Kept draws per chain.
    seed
        The fit's seed (later rounds' seeds derive from it: :func:`round_seed`).
    budget
        Most draws in all (chains x draws per chain).
    z
        Monte Carlo standard errors between a settled claim's estimate and its threshold.
    """
    result = result_of(first, 1)
    drawn, rounds = first, 1
    open_claims = result.unsettled(z=z)
    while rounds <= _ROUNDS:
        total = int(drawn.params["beta"].shape[0]) * per_chain
        chains = chains_needed(open_claims, total, per_chain, budget, z)
        if chains < 1:
            break
        extra = more(chains, round_seed(seed, rounds))
        drawn, rounds = joined(drawn, extra), rounds + 1
        later = result_of(drawn, rounds)
        if result.conditional_draws is not None and later.conditional_draws is not None:
            # the earlier rounds' conditional expectations are kept, not computed again
            later.conditional_draws = result.conditional_draws.joined(
                extra.params["beta"], extra.params["sigma"]
            )
        result = later
        open_claims = result.unsettled_among(zip(open_claims["alg_a"], open_claims["alg_b"]), z)
    return result


def chains_needed(
    open_claims: pd.DataFrame, drawn: int, per_chain: int, budget: int, z: float
) -> int:
    """The chains of the next round of the BBT fit (0: none): as many as the open claims
    (rows with ``value``, ``threshold``, ``mcse``) that could settle within the ``budget``
    of draws need (:func:`draws_needed`), at most what the budget leaves; none when every
    claim is settled or each would need many budgets (it sits on its threshold)."""
    if open_claims.empty:
        return 0
    needed = draws_needed(open_claims, drawn, z)
    reachable = needed[needed <= _HOPELESS * budget]
    if reachable.empty:
        return 0
    target = min(float(reachable.max()), float(budget))
    wanted = math.ceil(max(target - drawn, 1.0) / per_chain)
    return max(min(wanted, (budget - drawn) // per_chain), 0)


def chains_to_add(
    open_claims: pd.DataFrame, drawn: int, per_chain: int, budget: int, z: float
) -> int:
    """The chains of the second round (0: none): up to the whole ``budget`` of draws when some
    open claim (rows with ``value``, ``threshold``, ``mcse``) could settle within it, none
    when every claim is settled or each would need many budgets (it sits on its threshold).

    One round up to the whole budget, not just to what the open claims seem to need: the
    precision a claim is judged at is then the same whatever the seed, so only a claim whose
    distance to its threshold is close to ``z`` MCSE at the budget can change."""
    if open_claims.empty or not (draws_needed(open_claims, drawn, z) <= _HOPELESS * budget).any():
        return 0
    return max((budget - drawn) // per_chain, 0)


def check_draws(draws: str) -> None:
    """Refuse a ``draws`` that is not one of :data:`~.options.DRAWS_MODES`."""
    if draws not in DRAWS_MODES:
        raise ValueError(f"draws must be one of {', '.join(DRAWS_MODES)}, got {draws!r}")


def settle_budget(first_draws: int, bytes_per_draw: float, memory: int) -> int:
    """The most draws in all for ``draws="auto"``: :data:`~.options.SETTLE_BUDGET` times the
    first round's, fewer when the extra draws would hold more than ``memory`` bytes."""
    room = int(memory / max(bytes_per_draw, 1.0))
    return max(first_draws, min(SETTLE_BUDGET * first_draws, first_draws + room))
