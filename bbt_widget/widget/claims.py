"""Which claims a change flipped: the decisions of the summary shown before a change (of a
view control or a fit setting) against those after it, for the note the widget shows with
the new result ("3 claims changed: ...").
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..charts import decision_text, pair_key
from ..core.bidi import isolate

__all__ = ["NOTE_PAIRS", "claim_changes", "claims_of"]

#: Pairs named in the note; the others are counted ("and N more").
NOTE_PAIRS = 5

#: A pair's claim: the pair's two names (in the summary's order) and its decision in words.
Claim = tuple[str, str, str]


def claims_of(summary: pd.DataFrame, rule: str) -> dict[str, Claim]:
    """The ``rule``'s claim of every pair of ``summary`` (``BBTResult.summary()``), by pair
    key: the decision names the better algorithm, so a pair listed the other way round after
    a refit is the same claim."""
    return {
        pair_key(a, b): (str(a), str(b), decision_text(d, str(a), str(b)))
        for a, b, d in zip(summary["alg_a"], summary["alg_b"], summary[rule], strict=True)
    }


def claim_changes(
    before: dict[str, Claim],
    after: dict[str, Claim],
    unsettled: set[str] | frozenset[str] = frozenset(),
    limit: int = NOTE_PAIRS,
) -> dict[str, Any]:
    """The pairs compared both times whose claim changed, as the widget's note.

    Parameters
    ----------
    before, after
        :func:`claims_of` the summaries before and after the change.
    unsettled
        Keys of the pairs whose claim after the change was left open by the Monte Carlo
        screen (``BBTResult.unsettled``): their "no claim" says so.
    limit
        Pairs named in the note; the rest are counted.

    Returns
    -------
    dict
        ``{}`` when no claim changed; else ``text`` (names isolated for bidirectional text:
        the front end writes it as text, never HTML), ``keys`` (the changed pairs' keys, to
        highlight) and ``count``.
    """
    changed = [key for key, claim in after.items() if key in before and before[key][2] != claim[2]]
    if not changed:
        return {}
    parts = []
    for key in changed[:limit]:
        a, b, now = after[key]
        if key in unsettled and now == "no claim":
            now = "no claim (unsettled at this precision)"
        parts.append(f"{isolate(a)} vs {isolate(b)} now {now} (was {before[key][2]})")
    more = len(changed) - limit
    if more > 0:
        parts.append(f"and {more} more")
    noun = "claim" if len(changed) == 1 else "claims"
    return {
        "text": f"{len(changed)} {noun} changed: " + ", ".join(parts),
        "keys": changed,
        "count": len(changed),
    }
