"""The one-sentence answer of a fit: which algorithms lead, by the decisions of one
interpretation, and how many pairs are decided.

Pure pandas (no Altair): the widget shows the sentence under its status line and a report can
print it as its headline.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ..core.bidi import isolate
from ..core.options import INTERPRETATIONS, Rule

__all__ = ["headline"]

#: Decisions that count as "decided" (a claim either way, or equivalence).
_DECIDED = ("a better", "b better", "equivalent")


def headline(
    summary: pd.DataFrame,
    ranking: pd.DataFrame,
    interpretation: Rule = "weak",
    *,
    max_groups: int = 3,
) -> str:
    """One sentence that leads with the answer and names who is beaten, e.g. "lgbm, rf and
    xgb are practically equivalent and all better than knn, dt and nb; lgbm and rf also better
    than lr; 53 of 120 pairs decided under the strong rule".

    The algorithms are read in ranking order and gathered into groups: the best-ranked
    algorithm not yet named, with every later one that the rule calls practically equivalent
    to it. The sentence names the algorithms ranked below a group that each member is decided
    better than ("every other algorithm" when that is all of them, "every other algorithm but
    ..." when fewer are left out), first those all members beat, then what some members beat
    besides. Groups after the first are named while the one before them is better than
    everything below it and they beat some of the algorithms below them, at most
    ``max_groups`` groups in all.

    Parameters
    ----------
    summary
        ``BBTResult.summary()``: one row per pair with ``alg_a``, ``alg_b`` and the decision
        column named by ``interpretation`` (``"a better"``, ``"b better"``, ``"equivalent"``,
        ``"no claim"`` or ``"not compared"``). Pairs missing from it (e.g. a summary against a
        control) count as undecided.
    ranking
        ``BBTResult.ranking()``: column ``algorithm``, best first.
    interpretation
        ``"weak"`` (paper Sec. 9.2) or ``"strong"`` (Sec. 9.3): which decision column to read.
    max_groups
        Most groups of algorithms the sentence names (at least 1).

    Returns
    -------
    str
        The sentence, names as given (plain text: the caller escapes or isolates them for its
        medium, e.g. HTML escaping, or bidi isolation of right-to-left names).
    """
    if interpretation not in INTERPRETATIONS:
        raise ValueError(
            f"interpretation must be one of {list(INTERPRETATIONS)}, not {interpretation!r}"
        )
    for column in ("alg_a", "alg_b", interpretation):
        if column not in summary.columns:
            raise ValueError(f"summary has no column {column!r}: pass BBTResult.summary()")
    if "algorithm" not in ranking.columns:
        raise ValueError("ranking has no column 'algorithm': pass BBTResult.ranking()")
    if max_groups < 1:
        raise ValueError(f"max_groups must be at least 1, not {max_groups}")

    order = [str(a) for a in ranking["algorithm"]]
    beats, equivalent = _relations(summary, interpretation)
    decided = int(summary[interpretation].isin(_DECIDED).sum())
    count = f"{decided} of {len(summary)} pairs decided under the {interpretation} rule"
    if not order:
        return count

    clauses: list[str] = []
    remaining = list(order)
    while remaining and len(clauses) < max_groups:
        leader = remaining[0]
        group = [leader] + [a for a in remaining[1:] if frozenset((leader, a)) in equivalent]
        below = [a for a in remaining if a not in group]
        beaten = {a: [b for b in below if (a, b) in beats] for a in group}
        common = [b for b in below if all(b in beaten[a] for a in group)]
        first = not clauses
        if not first and not common:
            break  # a later group is named for what it beats
        clauses.append(_clause(group, beaten, below, first=first))
        if not below or len(common) < len(below):
            break  # the next group would not follow from this one's claims
        remaining = below
    return "; ".join([*clauses, count])


#: Most algorithms a clause names as beaten (or as the exceptions to "every other"); beyond
#: that it counts them.
MAX_NAMED = 8


def _who(beaten: Sequence[str], below: Sequence[str], others: str) -> str:
    """The algorithms ``beaten`` among ``below``, named (``others``: "other" or
    "remaining")."""
    if len(beaten) == len(below):
        return f"every {others} algorithm"
    if len(beaten) <= MAX_NAMED:
        return _names(beaten)
    spared = [b for b in below if b not in beaten]
    if len(spared) <= MAX_NAMED:
        return f"every {others} algorithm but {_names(spared)}"
    return f"{len(beaten)} of the {len(below)} {others} algorithms"


def _relations(
    summary: pd.DataFrame, interpretation: Rule
) -> tuple[set[tuple[str, str]], set[frozenset[str]]]:
    """(winner, loser) pairs and equivalent pairs under one interpretation."""
    beats: set[tuple[str, str]] = set()
    equivalent: set[frozenset[str]] = set()
    for a, b, decision in zip(
        summary["alg_a"].astype(str), summary["alg_b"].astype(str), summary[interpretation]
    ):
        if decision == "a better":
            beats.add((a, b))
        elif decision == "b better":
            beats.add((b, a))
        elif decision == "equivalent":
            equivalent.add(frozenset((a, b)))
    return beats, equivalent


def _names(group: Sequence[str]) -> str:
    # a name holding right-to-left text or bidi controls must not reorder the sentence
    group = [isolate(name) for name in group]
    if len(group) == 1:
        return group[0]
    return ", ".join(group[:-1]) + " and " + group[-1]


def _clause(
    group: Sequence[str], beaten: dict[str, list[str]], below: Sequence[str], *, first: bool
) -> str:
    """One group's clause: its names, equivalence, and whom each member is better than."""
    names = _names(group)
    others = "other" if first else "remaining"
    common = [b for b in below if all(b in beaten[a] for a in group)]
    if len(group) == 1:
        if beaten[group[0]]:
            claim = f"better than {_who(beaten[group[0]], below, others)}"
            return f"{names} is {claim}" if first else f"then {names}, {claim}"
        return f"{names} ranks first, not decided better than any other algorithm"
    # members that beat more than the common set, gathered by what they beat besides
    extra: dict[tuple[str, ...], list[str]] = {}
    for a in group:
        more = tuple(b for b in beaten[a] if b not in common)
        if more:
            extra.setdefault(more, []).append(a)
    also = "; ".join(
        f"{_names(members)} {'also ' if common else ''}"
        f"{'' if common else ('is ' if len(members) == 1 else 'are ')}better than "
        f"{_names(more) if len(more) <= MAX_NAMED else f'{len(more)} more'}"
        for more, members in extra.items()
    )
    if common:
        every = "" if not extra else "all "
        claim = f"practically equivalent and {every}better than {_who(common, below, others)}"
    elif extra:
        claim = "practically equivalent"
    elif below:
        claim = "practically equivalent, none decided better than another algorithm"
    else:
        claim = "practically equivalent"
    text = f"{names} are {claim}" if first else f"then {names}, {claim}"
    return f"{text}; {also}" if also else text
