"""The sentence on which algorithm BBT and a ranking model rank first, for the report's
ranking-model section and its methods paragraph.

The two models' probabilities are different quantities (BBT: P(highest ability); the
ranking model: P(ranked first on a new data set)), so the sentence compares the orderings
they give and quotes each number under its own name. An ordering counts only when its gap
exceeds :data:`~bbt_widget.ranking._order.ORDER_Z` Monte Carlo standard errors
(:mod:`bbt_widget.ranking._order`); within that the model has the two *tied at
this precision*, and two models are said to order them differently only when both orderings
count and disagree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...core.bidi import isolate
from ...core.options import Rule
from ...ranking._order import ORDER_Z, OrderGap, best_indicators, order_gap

if TYPE_CHECKING:
    from ...core.result import BBTResult

__all__ = ["BBT_QUANTITY", "MODEL_QUANTITY", "first_places"]

#: What each model's probability is, as the sentence names it.
BBT_QUANTITY = "P(highest ability)"
MODEL_QUANTITY = "P(ranked first on a new data set)"


def first_places(
    fit: Any,
    bbt: BBTResult,
    interpretation: Rule,
    rope: tuple[float, float],
    *,
    z: float = ORDER_Z,
    brief: bool = False,
) -> str:
    """Which algorithm BBT and the ranking model ``fit`` rank first, in a few sentences
    (``brief``: the first only, without how each model orders the two).

    Parameters
    ----------
    fit
        A Plackett-Luce or Mallows result (its ``ranking``, ``model_label`` and
        ``first_draws()``), fitted to the same results as ``bbt``.
    bbt
        The BBT result: its ``ranking()``, ``summary(rope=)``, ``algorithms`` and the draws
        of ``beta`` (chains, draws, algorithms).
    interpretation, rope
        Which of BBT's decisions to read, and its ROPE: when the two first places differ and
        BBT claims them practically equivalent, they tie for first place; without a claim
        between them, the first place is not settled.
    z
        Monte Carlo standard errors a model's gap between the two must exceed for its
        ordering of them to count.
    brief
        Only the sentence on the first places, for the methods paragraph.

    Returns
    -------
    str
        Names isolated (bidi text).
    """
    model = fit.model_label
    bbt_first = str(bbt.ranking()["algorithm"].iloc[0])
    own_first = str(fit.ranking["algorithm"].iloc[0])
    a, b = isolate(bbt_first), isolate(own_first)
    if bbt_first == own_first:
        both = "Both models" if model == "Plackett-Luce" else f"BBT and {model}"
        return f"{both} rank {b} first."
    decision = _decision(bbt, bbt_first, own_first, interpretation, rope)
    if decision == "equivalent":
        lead = (
            f"{a} and {b} tie for first place: BBT claims them practically equivalent "
            f"({interpretation} interpretation)."
        )
    elif decision in ("a better", "b better"):
        lead = f"BBT ranks {a} first, {model} {b}."
    else:
        lead = (
            f"The first place is not settled: BBT ranks {a} first, {model} {b}, and BBT makes "
            f"no claim between the two ({interpretation} interpretation)."
        )
    if brief:
        return lead
    beta = np.asarray(bbt.draws.params["beta"], dtype=float)
    ours = order_gap(best_indicators(beta), bbt.algorithms, bbt_first, own_first)
    theirs = order_gap(fit.first_draws(), fit.algorithms, own_first, bbt_first)
    orders = _orderings(("BBT", ours, BBT_QUANTITY), (model, theirs, MODEL_QUANTITY), z)
    return f"{lead} {orders}"


def _decision(
    bbt: BBTResult, one: str, other: str, interpretation: Rule, rope: tuple[float, float]
) -> str:
    """BBT's decision on the pair of ``one`` and ``other`` (``"no claim"`` without a row)."""
    summary = bbt.summary(rope=rope)
    row = summary[
        ((summary["alg_a"] == one) & (summary["alg_b"] == other))
        | ((summary["alg_a"] == other) & (summary["alg_b"] == one))
    ]
    return str(row[interpretation].iloc[0]) if len(row) else "no claim"


def _orderings(
    first: tuple[str, OrderGap, str], second: tuple[str, OrderGap, str], z: float
) -> str:
    """The sentence on how the two models, each ``(name, gap, quantity)``, order the pair."""
    within = f"a gap within {z:g} Monte Carlo standard errors"
    (m1, g1, q1), (m2, g2, q2) = first, second
    s1, s2 = g1.settled(z), g2.settled(z)
    if not (s1 or s2):
        return (
            f"Both models have them tied at this precision ({q1} {g1.p_ahead:.3f} and "
            f"{g1.p_behind:.3f} under {m1}, {q2} {g2.p_ahead:.3f} and {g2.p_behind:.3f} "
            f"under {m2}; each {within})."
        )
    if s1 and s2:
        verdict = "order them differently" if g1.ahead != g2.ahead else "agree"
        return (
            f"The two models {verdict}: {_ahead(m1, g1, q1)}, {_ahead(m2, g2, q2)}; each gap "
            f"exceeds {z:g} Monte Carlo standard errors."
        )
    (ms, gs, qs), (mt, gt, qt) = (first, second) if s1 else (second, first)
    return (
        f"{_ahead(ms, gs, qs)}, but {mt} has them tied at this precision ({qt} "
        f"{gt.p_ahead:.3f} and {gt.p_behind:.3f}, {within})."
    )


def _ahead(model: str, gap: OrderGap, quantity: str) -> str:
    """``"<model> puts <ahead> ahead (<quantity> p against p)"``."""
    return (
        f"{model} puts {isolate(gap.ahead)} ahead ({quantity} {gap.p_ahead:.3f} against "
        f"{gap.p_behind:.3f})"
    )
