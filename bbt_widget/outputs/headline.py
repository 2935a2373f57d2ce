"""The result in one plain sentence: the ranking cut into groups by the claims of one rule.

Pure pandas, no chart and no markup: the sentence holds the algorithms' names as given, and
every writer escapes it for its format like any other user text.
"""

from __future__ import annotations

import pandas as pd

#: Decisions that claim one algorithm of the pair better than the other.
_BETTER = ("a better", "b better")


def _decisions(summary: pd.DataFrame, interpretation: str) -> dict[frozenset[str], str]:
    """Each pair's decision, keyed by the pair: ``"better:<winner>"``, ``"equivalent"`` or
    ``"none"`` (no claim, or never compared)."""
    out: dict[frozenset[str], str] = {}
    for a, b, d in zip(summary["alg_a"], summary["alg_b"], summary[interpretation].astype(str)):
        key = frozenset((str(a), str(b)))
        if d == "a better":
            out[key] = f"better:{a}"
        elif d == "b better":
            out[key] = f"better:{b}"
        else:
            out[key] = "equivalent" if d == "equivalent" else "none"
    return out


def _names(names: list[str]) -> str:
    if len(names) <= 2:
        return " and ".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def groups(summary: pd.DataFrame, ranking: pd.DataFrame, interpretation: str) -> list[list[str]]:
    """The ranking (best first) cut into groups of consecutive algorithms that are claimed
    practically equivalent, every pair of them; an algorithm without such a claim to every
    member of the group before it starts a group of its own."""
    decided = _decisions(summary, interpretation)
    out: list[list[str]] = []
    for name in map(str, ranking["algorithm"]):
        if out and all(decided.get(frozenset((g, name))) == "equivalent" for g in out[-1]):
            out[-1].append(name)
        else:
            out.append([name])
    return out


def headline(summary: pd.DataFrame, ranking: pd.DataFrame, interpretation: str) -> str:
    """One sentence of the result under ``interpretation`` (``"weak"`` or ``"strong"``).

    The ranking (best first) is cut into groups of practically equivalent algorithms
    (:func:`groups`); each group is named with how many of the algorithms below it each of
    its members is claimed better than, e.g. "lgbm and rf are practically equivalent and
    each better than every other algorithm; then xgb, better than 12 of the 13 below it;
    ...; last, passive." A pair of neighbours in different groups without such a count
    carries no claim.

    Parameters
    ----------
    summary
        :meth:`BBTResult.summary` (columns ``alg_a``, ``alg_b`` and the decision column).
    ranking
        :meth:`BBTResult.ranking` (column ``algorithm``, best first).
    interpretation
        The decision column to read: ``"weak"`` or ``"strong"``.
    """
    if interpretation not in ("weak", "strong"):
        raise ValueError(f"interpretation must be 'weak' or 'strong', got {interpretation!r}")
    decided = _decisions(summary, interpretation)
    order = [str(a) for a in ranking["algorithm"]]
    cut = groups(summary, ranking, interpretation)
    lead = f"Under the {interpretation} interpretation"
    if len(cut) == 1:
        return f"{lead}, all {len(order)} algorithms are practically equivalent."
    clauses: list[str] = []
    seen = 0
    for k, group in enumerate(cut):
        seen += len(group)
        below = order[seen:]
        named = _names(group)
        tied = len(group) > 1
        if not below:
            clauses.append(f"last, {named}" + (" (practically equivalent)" if tied else ""))
            break
        whom = _better_than(group, below, decided, first=k == 0)
        if k == 0:
            verb = "are practically equivalent and" if tied else "is"
            clauses.append(f"{named} {verb} {whom}")
        else:
            clauses.append(
                f"then {named}" + (" (practically equivalent)" if tied else "") + f", {whom}"
            )
    return f"{lead}, " + "; ".join(clauses) + "."


def _better_than(
    group: list[str], below: list[str], decided: dict[frozenset[str], str], *, first: bool
) -> str:
    """How many of the algorithms ``below`` each member of ``group`` is claimed better than."""

    def beats(g: str, b: str) -> bool:
        return decided.get(frozenset((g, b)), "none") == f"better:{g}"

    by_all = [b for b in below if all(beats(g, b) for g in group)]
    them = "it" if len(group) == 1 else "them"
    each = "" if len(group) == 1 else "each "
    if len(by_all) == len(below):
        return f"{each}better than every " + ("other algorithm" if first else f"one below {them}")
    if by_all:
        return f"{each}better than {len(by_all)} of the {len(below)} below {them}"
    if each:
        return "no algorithm below them is claimed worse than each of them"
    return "not claimed better than " + (
        "the one below it" if len(below) == 1 else f"any of the {len(below)} below it"
    )
