"""Sampling by decision for the ranking models: their claims, and the chains to add.

A ranking model's result claims an order: its ``ranking`` table puts each algorithm ahead of
the next by P(first), and the report's first-places sentence reads that order with
:func:`._order.order_gap` (a gap within :data:`._order.ORDER_Z` Monte Carlo standard errors
of zero is *tied at this precision*). The claims are therefore the gaps in P(first) between
adjacent algorithms of the table, each against the threshold 0. The tables print no other
probability as a decision (``before`` lists P(a ranked before b) in the table's order, with
its HDI, and the report compares no threshold with it).

``draws="auto"`` (:data:`~bbt_widget.core.options.DEFAULT_DRAWS`) keeps the first round
when every gap lies at least ``z`` MCSE from 0 (no fit costs more where today's draws
suffice); otherwise one more round of chains, as many as
:func:`bbt_widget.core.settling.chains_to_add` gives for the BBT fit (up to
:data:`~bbt_widget.core.options.SETTLE_BUDGET` times the first round), seeded by
:func:`bbt_widget.core.draws.round_seed`. Whatever is still within ``z`` MCSE is named by
the result's ``unsettled()`` and marked ``settled`` False in its ``ranking``.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import numpy as np
import pandas as pd

from ..core.bidi import isolate, pair_label
from ..core.options import SETTLE_BUDGET
from ..core.settling import chains_to_add
from ._order import ORDER_Z, order_gap

__all__ = ["CLAIM_COLUMNS", "RankingClaims", "more_chains", "order_claims", "with_settled"]

#: The columns of ``unsettled()`` (those of :meth:`bbt_widget.BBTResult.unsettled`).
CLAIM_COLUMNS = [
    "pair",
    "alg_a",
    "alg_b",
    "rule",
    "claim",
    "quantity",
    "value",
    "threshold",
    "mcse",
]


def ranked_order(first: np.ndarray, names: list[str]) -> list[str]:
    """The algorithms by decreasing posterior mean of ``first`` (chains, draws, algorithms),
    equal means in input order: the order of the ``ranking`` table."""
    means = pd.Series(first.reshape(-1, len(names)).mean(axis=0), index=names)
    return [str(a) for a in means.sort_values(ascending=False, kind="stable").index]


def order_claims(first: np.ndarray, names: list[str], order: list[str]) -> pd.DataFrame:
    """Every claim of the ranking ``order``: per adjacent pair, the gap in P(first) (per-draw
    values ``first``: chains, draws, algorithms of ``names``) against 0, with its MCSE.

    Returns
    -------
    pandas.DataFrame
        :data:`CLAIM_COLUMNS`, one row per adjacent pair, best first.
    """
    rows = []
    for one, other in pairwise(order):
        gap = order_gap(first, names, one, other)
        rows.append(
            {
                "pair": pair_label(gap.ahead, gap.behind),
                "alg_a": gap.ahead,
                "alg_b": gap.behind,
                "rule": "order",
                "claim": "ranked ahead",
                "quantity": "p_first gap",
                "value": gap.p_ahead - gap.p_behind,
                "threshold": 0.0,
                "mcse": gap.mcse,
            }
        )
    return pd.DataFrame(rows, columns=CLAIM_COLUMNS)


def _open(claims: pd.DataFrame, z: float) -> pd.DataFrame:
    """The claims whose estimate lies within ``z`` MCSE of its threshold (a NaN MCSE: open,
    an order that cannot be checked is not asserted)."""
    settled = (claims["value"] - claims["threshold"]).abs() > z * claims["mcse"]
    return claims[~settled.to_numpy(dtype=bool)].reset_index(drop=True)


def more_chains(first: np.ndarray, names: list[str], per_chain: int, z: float = ORDER_Z) -> int:
    """The chains of the second round for the first round's per-draw P(first) ``first``
    (chains, draws, algorithms): 0 when every claim is settled at ``z`` MCSE, else as
    :func:`bbt_widget.core.settling.chains_to_add` for up to
    :data:`~bbt_widget.core.options.SETTLE_BUDGET` times the first round's draws."""
    claims = order_claims(first, names, ranked_order(first, names))
    drawn = int(first.shape[0]) * per_chain
    return chains_to_add(_open(claims, z), drawn, per_chain, SETTLE_BUDGET * drawn, z)


def with_settled(ranking: pd.DataFrame, claims: pd.DataFrame, z: float = ORDER_Z) -> pd.DataFrame:
    """``ranking`` with the column ``settled``: whether the row's algorithm is ahead of the
    next row's at ``z`` MCSE (False: the two are tied at this precision; the last row claims
    nothing and is True)."""
    open_ahead = set(_open(claims, z)["alg_a"])
    return ranking.assign(settled=[a not in open_ahead for a in ranking["algorithm"]])


class RankingClaims:
    """``unsettled()`` of a ranking model's result (its ``first_draws()``, ``algorithms``
    and ``ranking``)."""

    ranking: pd.DataFrame
    algorithms: tuple[str, ...]

    def first_draws(self) -> np.ndarray:
        raise NotImplementedError

    def summary(self) -> pd.DataFrame:
        """Per algorithm, best first: the ``ranking`` table (P(first), expected rank, their
        HDIs and Monte Carlo errors, and whether each order is settled)."""
        return self.ranking

    def claims(self) -> pd.DataFrame:
        """Every order the ``ranking`` table claims: per adjacent pair, the gap in P(first)
        against 0 with its Monte Carlo standard error (:data:`CLAIM_COLUMNS`)."""
        order = [str(a) for a in self.ranking["algorithm"]]
        return order_claims(self.first_draws(), list(self.algorithms), order)

    def unsettled(self, z: float = ORDER_Z) -> pd.DataFrame:
        """The claims that could change with the seed: the adjacent pairs of ``ranking``
        whose gap in P(first) lies within ``z`` Monte Carlo standard errors of 0 (tied at
        this precision).

        Returns
        -------
        pandas.DataFrame
            ``pair``, ``alg_a`` (ahead by the estimate), ``alg_b``, ``rule`` ("order"),
            ``claim``, ``quantity``, ``value`` (the gap), ``threshold`` (0) and ``mcse``;
            empty when every claim is settled at this precision.
        """
        return _open(self.claims(), z)

    def tied_text(self) -> str:
        """The neighbours of ``ranking`` whose order is not settled (:meth:`unsettled`), in
        a sentence (names isolated for bidirectional text): the table lists them in an order
        another seed could reverse. Empty when every order is settled."""
        open_claims = self.unsettled()
        if open_claims.empty:
            return ""
        pairs = "; ".join(
            f"{isolate(a)} and {isolate(b)}"
            for a, b in zip(open_claims["alg_a"], open_claims["alg_b"])
        )
        return (
            f"In its ranking these neighbours are tied at this precision (their gap in "
            f"P(first) is within {ORDER_Z:g} Monte Carlo standard errors): {pairs}."
        )


def draws_settings(rounds: int, chains: int, per_chain: int, mode: str) -> dict[str, Any]:
    """What ``settings`` records of the rounds: the mode, the rounds drawn, the chains and
    the draws kept in all."""
    return {
        "draws": mode,
        "rounds": rounds,
        "chains_drawn": chains,
        "total_draws": chains * per_chain,
    }
