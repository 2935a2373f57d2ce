"""Pair keys and display labels, shared by every chart frame (pure Python and pandas).

Every frame carries ``key`` (the unordered pair as a JSON array of the two sorted names,
unique whatever the names contain) and ``alg_a``/``alg_b``. Labels such as ``"a > b"`` are for
display only: names containing ``" > "`` or ``" vs "`` can give two pairs the same label, so
rows and panels are told apart by key and such labels are made distinct with zero-width
spaces.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..core.bidi import isolate

__all__ = [
    "decision_text",
    "distinct_labels",
    "keys_and_labels",
    "match_rows",
    "pair_key",
    "pair_words",
    "unsettled_keys",
    "verdict_kind",
    "verdict_words",
]


def pair_key(a: str, b: str) -> str:
    """Key of the unordered pair {a, b}: the same whichever algorithm is better.

    A JSON array of the two names, sorted: unique for every pair whatever the names contain
    (``" vs "``, ``" > "``, quotes), and readable back with ``json.loads``.
    """
    return json.dumps(sorted((str(a), str(b))), ensure_ascii=False)


def distinct_labels(labels: Sequence[str], keys: Sequence[Hashable]) -> list[str]:
    """Display labels, made distinct where two keys share one label.

    Names containing ``" > "`` can give two different pairs the same label (``"a > b"`` vs
    ``"c"`` and ``"a"`` vs ``"b > c"``); a chart that encodes the label would draw both on one
    row. The later one gets zero-width spaces appended: it reads the same, but is its own row.
    """
    owner: dict[str, Hashable] = {}
    first_label: dict[Hashable, str] = {}
    out = []
    for label, key in zip(labels, keys, strict=True):
        if key in first_label:
            out.append(first_label[key])
            continue
        text = str(label)
        while text in owner and owner[text] != key:
            text += "\u200b"
        owner[text] = key
        first_label[key] = text
        out.append(text)
    return out


def keys_and_labels(rows: pd.DataFrame) -> tuple[list[str], list[str]]:
    """The :func:`pair_key` of each row of a pair table (``alg_a``, ``alg_b``, ``pair``) and
    its ``pair`` label, made distinct (:func:`distinct_labels`)."""
    keys = [pair_key(a, b) for a, b in zip(rows["alg_a"], rows["alg_b"], strict=True)]
    return keys, distinct_labels(rows["pair"].astype(str), keys)


def decision_text(decision: str, alg_a: str, alg_b: str) -> str:
    """Readable decision: the core's ``"a better"`` / ``"b better"`` name the algorithm."""
    text = str(decision)
    if text == "a better":
        return f"{isolate(alg_a)} better"
    if text == "b better":
        return f"{isolate(alg_b)} better"
    return text


#: What a "no claim" left by the Monte Carlo screen says (``BBTResult.unsettled``).
UNSETTLED = "unsettled at this precision"


def unsettled_keys(unsettled: pd.DataFrame) -> set[tuple[str, str]]:
    """``(pair key, rule)`` of each row of ``BBTResult.unsettled()``."""
    return {
        (pair_key(a, b), str(rule))
        for a, b, rule in zip(
            unsettled["alg_a"], unsettled["alg_b"], unsettled["rule"], strict=True
        )
    }


def verdict_words(decision: str, alg_a: str, alg_b: str, unsettled: bool = False) -> str:
    """:func:`decision_text`, and why a "no claim" is one when the Monte Carlo screen made it."""
    text = decision_text(decision, alg_a, alg_b)
    return f"{text} ({UNSETTLED})" if unsettled and text == "no claim" else text


def _number(rec: Any, name: str) -> str:
    """A probability of a summary row to 3 decimals ('not given' when the table lacks it)."""
    value = getattr(rec, name, None)
    return "not given" if value is None else f"{float(value):.3f}"


def _estimate_text(rec: Any, a: str, b: str) -> str:
    text = f"P({isolate(a)} > {isolate(b)}) = {_number(rec, 'mean')}"
    if hasattr(rec, "low") and hasattr(rec, "high"):
        text += f", HDI {_number(rec, 'low')} to {_number(rec, 'high')}"
    return text


def pair_words(
    summary: pd.DataFrame,
    unsettled: set[tuple[str, str]] | frozenset[tuple[str, str]] = frozenset(),
) -> pd.DataFrame:
    """A pair's numbers in words, for tooltips (never a column name such as ``above_50``).

    Parameters
    ----------
    summary
        ``BBTResult.summary()``: alg_a, alg_b, mean, low, high, above_50, in_rope and the
        ``weak``/``strong`` decisions.
    unsettled
        :func:`unsettled_keys` of the same fit, ROPE and HDI.

    Returns
    -------
    pandas.DataFrame
        Row for row: ``key``, ``pair_text`` ("a vs b"), ``p_text`` (P(a > b) with its HDI),
        ``above_text`` and ``rope_text`` (the probabilities that P(a > b) > 0.5 and that it
        lies in the ROPE), and ``weak_text``/``strong_text`` (each rule's verdict).
    """
    rows = []
    for rec in summary.itertuples(index=False):
        a, b = str(rec.alg_a), str(rec.alg_b)
        key = pair_key(a, b)
        rows.append(
            {
                "key": key,
                "pair_text": f"{isolate(a)} vs {isolate(b)}",
                "p_text": _estimate_text(rec, a, b),
                "above_text": _number(rec, "above_50"),
                "rope_text": _number(rec, "in_rope"),
                **{
                    f"{rule}_text": verdict_words(
                        getattr(rec, rule), a, b, (key, rule) in unsettled
                    )
                    for rule in ("weak", "strong")
                },
            }
        )
    columns = ["key", "pair_text", "p_text", "above_text", "rope_text", "weak_text", "strong_text"]
    return pd.DataFrame(rows, columns=columns)


def verdict_kind(decision: str) -> str:
    """Map a core decision string ("xgb better", "equivalent", "no claim") to its colour kind."""
    text = str(decision)
    if text.endswith(" better"):
        return "better"
    if text == "equivalent":
        return "equivalent"
    return "no claim"


def match_rows(target: pd.DataFrame, source: pd.DataFrame, what: str) -> np.ndarray:
    """Row of ``source`` for each row of ``target``: by (alg_a, alg_b) when both have them,
    by position when the pair labels agree row for row, else by (unique) pair label."""
    if {"alg_a", "alg_b"} <= set(source.columns):
        where = {
            (a, b): i for i, (a, b) in enumerate(zip(source["alg_a"], source["alg_b"], strict=True))
        }
        wanted = list(zip(target["alg_a"].astype(str), target["alg_b"].astype(str), strict=True))
        missing = [f"{a} > {b}" for a, b in wanted if (a, b) not in where]
        if missing:
            raise ValueError(f"{what} has no row for the pairs {missing[:5]}")
        return np.array([where[p] for p in wanted], dtype=int)
    labels = source["pair"].to_numpy()
    wanted = target["pair"].to_numpy()
    if len(labels) == len(wanted) and (labels == wanted).all():
        return np.arange(len(wanted))
    if pd.Index(labels).has_duplicates:
        raise ValueError(
            f"{what} has two pairs with the same label (algorithm names containing ' > '); "
            "give it alg_a and alg_b columns, or the pairs in the summary's order"
        )
    position = pd.Index(labels).get_indexer(wanted)
    if (position < 0).any():
        raise ValueError(f"{what} has no row for the pairs {list(wanted[position < 0][:5])}")
    return np.asarray(position)
