"""Names as results compare them: one rule for data sets, algorithms, fold and group labels.

A name is compared as :func:`clean_name` gives it: invisible characters removed (see
:data:`INVISIBLE`), surrounding whitespace removed and Unicode composed (NFC). Without that,
"rf" and "rf " (a CSV written with ", " between fields), "café" typed (one code point for é)
and "café" pasted (e followed by a combining accent), or "svm" and "svm" with a zero-width
space pasted from a web page, would be two algorithms or data sets with the same label, each
ranked on its own ("svm is better than svm"). Raw names that read as one are merged, and the
reading says which (:func:`merge_text`); invisible characters removed from a name are said too
(:func:`invisible_text`); two results for one key that exist only because of the merge are
refused (:func:`check_merged`, :func:`merge_columns`), since then one of them is a copy or a
mistake that only the user can resolve.

Bidi controls (embeddings, overrides, isolates) are kept: they change how a name reads, and
every output isolates them (:mod:`bbt_widget.core.bidi`). Two names that differ only by them
are refused (:func:`check_controls_apart`): a LaTeX report drops them, and printed they may
look the same.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from .bidi import strip_controls

#: How many merged groups a message names (its count covers all).
SHOWN = 4

#: What to do about a merge that was not meant, for the reading's note.
MERGE_FIX = "if they are different, rename them so that they differ in more than that"

_RULE = (
    "once invisible characters and surrounding whitespace are removed and Unicode is "
    "normalised (NFC)"
)
_RENAME = (
    "rename one so that the names differ in more than whitespace, invisible characters or "
    "Unicode form"
)

#: Invisible format characters (Unicode category Cf) that a name loses: the soft hyphen, the
#: Arabic letter mark, the Mongolian vowel separator, the zero-width space, non-joiner and
#: joiner, the left-to-right and right-to-left marks, the word joiner and the invisible
#: operators, the deprecated format characters, the byte-order mark (zero-width no-break
#: space) and the interlinear annotation characters. They print as nothing (or a LaTeX
#: report drops them), so two names differing only by them read as one. The joiners are kept
#: between two letters or symbols beyond Latin (a Persian word, an emoji sequence such as
#: U+1F469 U+200D U+1F52C), where they shape what is printed.
INVISIBLE = re.compile(
    "[\u00ad\u061c\u180e\u200b-\u200f\u2060-\u2064\u206a-\u206f\ufeff\ufff9-\ufffb]"
)
_JOINERS = "\u200c\u200d"


def _joins(name: str, i: int) -> bool:
    """Whether the joiner at ``name[i]`` stands between two letters, marks or symbols
    beyond Latin (U+0370 on), where it shapes the text."""
    if not 0 < i < len(name) - 1:
        return False
    return all(
        ord(ch) >= 0x370 and unicodedata.category(ch)[0] in "LMS"
        for ch in (name[i - 1], name[i + 1])
    )


def drop_invisible(name: str) -> str:
    """``name`` without its :data:`INVISIBLE` characters (a joiner that shapes the text kept)."""
    if not INVISIBLE.search(name):
        return name
    return "".join(
        ch
        for i, ch in enumerate(name)
        if not INVISIBLE.match(ch) or (ch in _JOINERS and _joins(name, i))
    )


def clean_name(name: str) -> str:
    """A name as results are compared: :data:`INVISIBLE` characters removed
    (:func:`drop_invisible`), then surrounding whitespace (``str.strip``), and Unicode in
    composed form (NFC)."""
    return unicodedata.normalize("NFC", drop_invisible(name).strip())


def shown(names: Sequence[str]) -> list[str]:
    """Raw names quoted so that their difference shows: ``repr`` (whitespace is visible), or
    ``ascii`` when two of them would look the same (they differ only in their Unicode form,
    e.g. "é" and "e" + combining accent)."""
    looks = {unicodedata.normalize("NFC", repr(n)) for n in names}
    return [ascii(n) if len(looks) < len(set(names)) else repr(n) for n in names]


def joined(items: Sequence[str]) -> str:
    """``'a' and 'b'``, ``'a', 'b' and 'c'``."""
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else "".join(items)


def _label(role: str) -> str:
    """How a note names the names of one ``role``: "fold labels", "data-set names", ..."""
    return "fold labels" if role == "fold" else f"{role.replace(' ', '-')} names"


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
    label = _label(role)
    return (
        f"{label} that differ only by invisible characters, surrounding whitespace or Unicode "
        f"form (NFC) were merged: {'; '.join(said)}{more}"
    )


#: What to do about invisible characters removed from names, for the reading's note.
INVISIBLE_FIX = (
    "they print as nothing; if one was meant to tell two names apart, rename them so that they "
    "differ in visible characters"
)


def invisible_text(role: str, raw: Iterable[str]) -> str | None:
    """Which raw names of one ``role`` lost invisible characters (:func:`drop_invisible`),
    each quoted with its characters escaped (``'svm\\u200b' -> 'svm'``); ``None`` when none
    did."""
    hit = [(name, clean_name(name)) for name in dict.fromkeys(raw) if drop_invisible(name) != name]
    if not hit:
        return None
    said = [f"{name!a} -> {clean!r}" for name, clean in hit[:SHOWN]]
    more = f" and {len(hit) - SHOWN} more" if len(hit) > SHOWN else ""
    label = _label(role)
    return (
        f"{label} held invisible characters (zero-width spaces, joiners, soft hyphens, "
        f"byte-order marks or direction marks), removed: {', '.join(said)}{more}"
    )


def check_controls_apart(role: str, names: Iterable[str]) -> None:
    """Refuse two of the (cleaned) ``names`` of one ``role`` that differ only by bidi
    controls (:func:`bbt_widget.core.bidi.strip_controls`): a LaTeX report drops them and a
    terminal may print them as nothing, so the two would read as one name.

    Raises
    ------
    ValueError
        Naming both names with their controls escaped, and the fix.
    """
    seen: dict[str, str] = {}
    for name in dict.fromkeys(names):
        first = seen.setdefault(strip_controls(name), name)
        if first != name:
            raise ValueError(
                f"the {role} names {first!a} and {name!a} differ only by bidi "
                "controls (U+202A-U+202E, U+2066-U+2069), which a LaTeX report drops and a "
                "terminal may print as nothing, so they would read as one name; rename one "
                "so that they differ in visible characters"
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


def cleaned(raw: pd.DataFrame) -> tuple[pd.DataFrame, list[tuple[str, str]]]:
    """:func:`clean_name` of every name in ``raw``, whose columns are named for their role
    ("data set", "algorithm", "fold"), and a note (what was done, what to do) for each role
    whose names lost invisible characters (:func:`invisible_text`) or had a merge
    (:func:`merge_text`).

    Raises
    ------
    ValueError
        A name blank once cleaned (:func:`check_blank`), or two names of a role that differ
        only by bidi controls (:func:`check_controls_apart`).
    """
    clean = pd.DataFrame(index=raw.index)
    notes = []
    for role, text in raw.items():
        distinct = pd.unique(text)
        mapping = {v: clean_name(v) for v in distinct}
        for value, name in mapping.items():
            if not name:
                row = text.index[(text == value).to_numpy()][0]
                check_blank(str(role), value, f"on row {row}", "give it a name or drop the row")
        check_controls_apart(str(role), mapping.values())
        if all(k == v for k, v in mapping.items()):  # the usual case: nothing to clean
            clean[role] = text
            continue
        clean[role] = text.map(mapping)
        notes += notes_of(str(role), distinct)
    return clean, notes


def notes_of(role: str, raw: Sequence[str]) -> list[tuple[str, str]]:
    """The notes (what was done, what to do) on the raw names of one ``role`` once cleaned:
    invisible characters removed (:func:`invisible_text`), names merged
    (:func:`merge_text`)."""
    said = [(invisible_text(role, raw), INVISIBLE_FIX), (merge_text(role, raw), MERGE_FIX)]
    return [(text, fix) for text, fix in said if text is not None]


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


def merge_columns(
    scores: dict[str, pd.Series],
) -> tuple[dict[str, pd.Series], list[tuple[str, str]]]:
    """Wide algorithm columns by their :func:`clean_name`, and the notes on their names
    (:func:`notes_of`).

    Columns that read as one name are one algorithm when no row has a score in more than one
    of them (two tables concatenated, one with "rf", the other with "rf "); a row with a score
    in two of them holds the same algorithm twice, which is refused.

    Raises
    ------
    ValueError
        Naming both columns (quoted so that the difference shows) and the first such row;
        or two columns that differ only by bidi controls (:func:`check_controls_apart`).
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
    check_controls_apart("algorithm", groups)
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
    return merged, notes_of("algorithm", list(scores))
