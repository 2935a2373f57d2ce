"""Names as results compare them: one rule for data sets, algorithms and fold labels.

A name is compared as :func:`clean_name` gives it: surrounding whitespace removed and Unicode
composed (NFC). Without that, "rf" and "rf " (a CSV written with ", " between fields), or
"café" typed (one code point for é) and "café" pasted (e followed by a combining accent),
would be two algorithms or data sets with the same label, each ranked on its own. Raw names
that read as one are merged, and the reading says which (:func:`merge_text`); two results for
one key that exist only because of the merge are refused (:func:`check_merged`,
:func:`merge_columns`), since then one of them is a copy or a mistake that only the user can
resolve.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

#: How many merged groups a message names (its count covers all).
SHOWN = 4

#: What to do about a merge that was not meant, for the reading's note.
MERGE_FIX = "if they are different, rename them so that they differ in more than that"

_RULE = "once surrounding whitespace is removed and Unicode is normalised (NFC)"
_RENAME = "rename one so that the names differ in more than whitespace or Unicode form"


def clean_name(name: str) -> str:
    """A name as results are compared: surrounding whitespace removed (``str.strip``) and
    Unicode in composed form (NFC)."""
    return unicodedata.normalize("NFC", name.strip())


def shown(names: Sequence[str]) -> list[str]:
    """Raw names quoted so that their difference shows: ``repr`` (whitespace is visible), or
    ``ascii`` when two of them would look the same (they differ only in their Unicode form,
    e.g. "é" and "e" + combining accent)."""
    looks = {unicodedata.normalize("NFC", repr(n)) for n in names}
    return [ascii(n) if len(looks) < len(set(names)) else repr(n) for n in names]


def joined(items: Sequence[str]) -> str:
    """``'a' and 'b'``, ``'a', 'b' and 'c'``."""
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else "".join(items)


def merge_text(role: str, raw: Iterable[str]) -> str | None:
    """What was merged among the raw names of one ``role`` ("data set", "algorithm",
    "fold"): each group of distinct raw names with one :func:`clean_name`; ``None`` when
    nothing was."""
    groups: dict[str, list[str]] = {}
    for name in dict.fromkeys(raw):  # distinct, in order of appearance
        groups.setdefault(clean_name(name), []).append(name)
    merged = [(name, group) for name, group in groups.items() if len(group) > 1]
    if not merged:
        return None
    said = [f"{joined(shown(group))} into {name!r}" for name, group in merged[:SHOWN]]
    more = f" and {len(merged) - SHOWN} more groups" if len(merged) > SHOWN else ""
    label = "fold labels" if role == "fold" else f"{role.replace(' ', '-')} names"
    return (
        f"{label} that differ only by surrounding whitespace or Unicode form (NFC) were "
        f"merged: {'; '.join(said)}{more}"
    )


def check_blank(role: str, raw: str, where: str, fix: str) -> None:
    """Refuse a name that is empty once cleaned: it would print as nothing in every table,
    chart and report (``where`` says where it was found, ``fix`` how to name it).

    Raises
    ------
    ValueError
        Naming the role, the raw name (quoted, so its whitespace shows) and where it is.
    """
    if not clean_name(raw):
        raise ValueError(f"the {role} name {raw!r} {where} is blank; {fix}")


def cleaned(raw: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """:func:`clean_name` of every name in ``raw``, whose columns are named for their role
    ("data set", "algorithm", "fold"), and the :func:`merge_text` of each role that had a
    merge."""
    clean = pd.DataFrame(index=raw.index)
    merges = []
    for role, text in raw.items():
        distinct = pd.unique(text)
        mapping = {v: clean_name(v) for v in distinct}
        for value, name in mapping.items():
            if not name:
                row = text.index[(text == value).to_numpy()][0]
                check_blank(str(role), value, f"on row {row}", "give it a name or drop the row")
        if all(k == v for k, v in mapping.items()):  # the usual case: nothing to clean
            clean[role] = text
            continue
        clean[role] = text.map(mapping)
        said = merge_text(str(role), distinct)
        if said is not None:
            merges.append(said)
    return clean, merges


def check_merged(raw: pd.DataFrame, clean: pd.DataFrame) -> None:
    """Refuse two rows whose keys are one only once the names are cleaned (columns as for
    :func:`cleaned`). A key repeated exactly as given is left to the layout's own checks,
    whose messages say more about that case (e.g. folds without a fold column).

    Raises
    ------
    ValueError
        Naming both rows and their raw names, quoted so that the difference shows.
    """
    if clean.equals(raw):
        return
    distinct = ~raw.duplicated()  # the first row of each key as given
    hit = clean[distinct].duplicated(keep=False)
    if not hit.any():
        return
    rows = clean[distinct][hit]
    i = rows.index[0]
    j = rows.index[(rows == rows.loc[i]).all(axis=1).to_numpy()][1]
    parts = []
    for role in raw.columns:
        a, b = raw.at[i, role], raw.at[j, role]
        parts.append(f"{role} " + (joined(shown([a, b])) if a != b else repr(a)))
    raise ValueError(
        f"rows {i} and {j} give two results for one ({', '.join(raw.columns)}) {_RULE}: "
        f"{', '.join(parts)}; if they are the same, keep one of the two rows; if they are "
        f"different, {_RENAME}"
    )


def merge_columns(scores: dict[str, pd.Series]) -> tuple[dict[str, pd.Series], str | None]:
    """Wide algorithm columns by their :func:`clean_name`, and the :func:`merge_text`.

    Columns that read as one name are one algorithm when no row has a score in more than one
    of them (two tables concatenated, one with "rf", the other with "rf "); a row with a score
    in two of them holds the same algorithm twice, which is refused.

    Raises
    ------
    ValueError
        Naming both columns (quoted so that the difference shows) and the first such row.
    """
    groups: dict[str, list[str]] = {}
    for name in scores:
        check_blank(
            "algorithm",
            name,
            "of a score column",
            f"name the column, e.g. data.rename(columns={{{name!r}: 'my_algorithm'}})",
        )
        groups.setdefault(clean_name(name), []).append(name)
    merged = {}
    for name, group in groups.items():
        column = scores[group[0]]
        for other in group[1:]:
            both = column.notna() & scores[other].notna()
            if both.any():
                first, second = shown([group[0], other])
                raise ValueError(
                    f"columns {first} and {second} are one algorithm {_RULE}, and both hold a "
                    f"score on row {int(np.flatnonzero(both)[0])}; if they are the same "
                    f"algorithm, drop one (data.drop(columns=[{second}])); if they are "
                    f"different, {_RENAME}"
                )
            column = column.fillna(scores[other])
        merged[name] = column
    return merged, merge_text("algorithm", scores)
