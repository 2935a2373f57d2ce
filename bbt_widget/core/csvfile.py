"""Reading a results file (CSV, TSV, and the ``;``-separated, decimal-comma CSV that
spreadsheets write in much of Europe), with errors that name the file, the line and the fix.

The separator is detected from the first lines unless given: ``,`` when every line splits
into the same number of fields (more than one) with it, else the one of ``;``, tab and ``|``
that does so with the most fields (``.tsv`` / ``.tab`` files: tab). The decimal mark is ``,``
when the separator is not ``,`` and the numbers are written like ``0,85`` (and none like
``0.85``); else ``.``.

A file larger than :func:`input_limit` (:data:`DEFAULT_MAX_INPUT_MB` megabytes unless the
environment variable :data:`MAX_INPUT_ENV` says otherwise) is refused before it is read: a
regular file by its size, a pipe or a device (``/dev/stdin``, ``/dev/zero``) as soon as that
much was read, in chunks, so that a signal (Ctrl-C, SIGTERM) stops the reading between two.
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

import pandas as pd

__all__ = [
    "DECIMALS",
    "DEFAULT_MAX_INPUT_MB",
    "MAX_INPUT_ENV",
    "SEPARATORS",
    "input_limit",
    "long_form_columns",
    "read_results",
    "sniff_separator",
]

#: The largest results file read, in megabytes (10**6 bytes), unless :data:`MAX_INPUT_ENV`
#: sets another: far above any table of algorithms x data sets x folds that can be fitted,
#: and small enough that reading the wrong file (a device, a log) fails at once rather than
#: after the memory ran out.
DEFAULT_MAX_INPUT_MB = 256
#: The environment variable that sets the input limit in megabytes.
MAX_INPUT_ENV = "BBT_WIDGET_MAX_INPUT_MB"
#: Bytes read at a time from a pipe or a device.
_CHUNK = 1 << 20

#: The separators detected, in order of preference.
SEPARATORS = (",", ";", "\t", "|")
#: The decimal marks accepted.
DECIMALS = (".", ",")
#: Lines read to detect the separator and the decimal mark.
_SNIFF_LINES = 50
_COMMA_NUMBER = re.compile(r"^\s*[+-]?\d+,\d+(?:[eE][+-]?\d+)?\s*$")
_POINT_NUMBER = re.compile(r"^\s*[+-]?\d*\.\d+(?:[eE][+-]?\d+)?\s*$")
_NAMES = {",": "','", ";": "';'", "\t": "tab", "|": "'|'"}


def _name(sep: str) -> str:
    return _NAMES.get(sep, repr(sep))


def input_limit() -> int:
    """The largest results file read, in bytes: :data:`MAX_INPUT_ENV` megabytes when that
    environment variable is set, else :data:`DEFAULT_MAX_INPUT_MB`.

    Raises
    ------
    ValueError
        The variable is set to something other than a positive number.
    """
    given = os.environ.get(MAX_INPUT_ENV)
    if given is None or not given.strip():
        return DEFAULT_MAX_INPUT_MB * 10**6
    try:
        mb = float(given)
    except ValueError:
        mb = float("nan")
    if not (mb > 0 and mb < float("inf")):
        raise ValueError(
            f"the environment variable {MAX_INPUT_ENV}={given!r} must be a number of "
            f"MB > 0 (the largest results file to read; default {DEFAULT_MAX_INPUT_MB})"
        )
    return int(mb * 10**6)


def _too_large(path: Path, size: str, limit: int) -> ValueError:
    return ValueError(
        f"results file {str(path)!r} is larger than the input limit of {limit / 10**6:g} MB "
        f"({size}); check that it is the results table, or raise the limit with the "
        f"environment variable {MAX_INPUT_ENV}, e.g. {MAX_INPUT_ENV}={2 * limit // 10**6}"
    )


def _opener(path: Path) -> Callable[[], TextIO]:
    """A way to read the file's text from its start (after a byte-order mark), as often as
    the reading needs: the separator is detected, the layout checked, then pandas reads.

    A pipe (``/dev/stdin``, ``<(zcat results.csv.gz)``) can be read only once: each later
    read would start where the last stopped, mid-file. Its text is read once, into memory,
    in chunks up to the :func:`input_limit` (a device such as ``/dev/zero`` never ends).

    Raises
    ------
    ValueError
        The file is larger than the :func:`input_limit`.
    """
    limit = input_limit()
    if path.is_file():
        size = path.stat().st_size
        if size > limit:
            raise _too_large(path, f"{size} bytes", limit)
        return lambda: path.open(newline="", encoding="utf-8-sig")
    data = bytearray()
    with path.open("rb") as f:
        # one bounded read at a time: Python runs signal handlers between two, where a
        # single read of the whole stream would hold them until it returned
        while chunk := f.read(min(_CHUNK, limit + 1 - len(data))):
            data += chunk
            if len(data) > limit:
                raise _too_large(path, "more than that was read from it", limit)
    text = data.decode("utf-8-sig")
    return lambda: io.StringIO(text, newline="")


def _head(source: Callable[[], TextIO]) -> list[str]:
    """The file's first lines (after a byte-order mark)."""
    lines = []
    with source() as f:
        for line in f:
            lines.append(line)
            if len(lines) >= _SNIFF_LINES:
                break
    return lines


def _rows(lines: list[str], sep: str) -> list[list[str]]:
    try:
        return [row for row in csv.reader(lines, delimiter=sep) if row]
    except csv.Error:
        return []


def sniff_separator(lines: list[str]) -> str | None:
    """The separator that splits every one of ``lines`` into the same number of fields,
    more than one: ``,`` if it does, else the one of :data:`SEPARATORS` giving the most
    fields; ``None`` when none does."""
    best, best_fields = None, 1
    for sep in SEPARATORS:
        counts = {len(row) for row in _rows(lines, sep)}
        if len(counts) == 1 and (fields := counts.pop()) > best_fields:
            if sep == ",":
                return sep
            best, best_fields = sep, fields
    return best


def _header_guess(lines: list[str], sep: str) -> str | None:
    """Another separator that splits the header into more fields than ``sep``: the
    separator the file seems to use when ``sep`` reads it as one column."""
    rows = [_rows(lines[:1], s) for s in SEPARATORS]
    fields = {s: len(r[0]) if r else 0 for s, r in zip(SEPARATORS, rows)}
    guess = max(SEPARATORS, key=lambda s: fields[s])
    return guess if guess != sep and fields[guess] > max(fields.get(sep, 1), 1) else None


def _seems(lines: list[str], sep: str) -> str:
    """``; it seems to use ';' (pass sep=';')`` or nothing."""
    guess = _header_guess(lines, sep)
    return "" if guess is None else f"; it seems to use {_name(guess)} (pass sep={guess!r})"


def _sniff_decimal(lines: list[str], sep: str) -> str:
    if sep == ",":
        return "."
    cells = [cell for row in _rows(lines, sep)[1:] for cell in row]
    comma = any(_COMMA_NUMBER.match(c) for c in cells)
    return "," if comma and not any(_POINT_NUMBER.match(c) for c in cells) else "."


def _check_options(sep: str | None, decimal: str | None) -> str | None:
    if sep is not None:
        sep = {"tab": "\t", "\\t": "\t"}.get(sep, sep) if isinstance(sep, str) else sep
        if not isinstance(sep, str) or len(sep) != 1 or sep.isalnum() or sep in "\"'\r\n.":
            raise ValueError(
                f"sep={sep!r}: give the one character that separates the columns (not a "
                "letter, digit, quote or '.'), such as ',' ';' '|' or 'tab', or leave it out "
                "to detect it"
            )
    if decimal is not None:
        if decimal not in DECIMALS:
            raise ValueError(f"decimal={decimal!r}: the decimal mark is '.' or ','")
        if decimal == sep:
            raise ValueError(
                f"sep={sep!r} and decimal={decimal!r}: the decimal mark cannot also separate "
                "the columns; a file with decimal commas uses another separator, e.g. sep=';'"
            )
    return sep


def read_results(
    path: str | Path, *, sep: str | None = None, decimal: str | None = None
) -> pd.DataFrame:
    """Read a results file; the separator and the decimal mark are detected unless given.

    Parameters
    ----------
    path
        The file (CSV, TSV, or ``;``-separated with decimal commas).
    sep
        The column separator (one character; ``"tab"`` for a tab). Default: detected from the
        first lines (see the module's documentation).
    decimal
        ``"."`` or ``","``. Default: ``","`` when the separator is not ``,`` and the numbers
        are written like ``0,85``.

    Raises
    ------
    ValueError
        The file is missing, empty, not text, larger than the :func:`input_limit`, or its
        rows do not match the header (the
        message names the line); the header names a column twice (pandas would rename the
        second ``a`` to ``a.1``, a new algorithm); or it reads as one column (the message
        names the separator it seems to use).
    """
    sep = _check_options(sep, decimal)
    p = Path(path)
    if not p.exists():
        raise ValueError(f"results file {str(path)!r} does not exist")
    if p.is_dir():
        raise ValueError(f"{str(path)!r} is a folder; give the results file (.csv or .tsv)")
    try:
        source = _opener(p)
        lines = _head(source)
    except UnicodeDecodeError as err:
        raise ValueError(f"cannot read {str(path)!r}: {err}") from None
    if sep is None:
        tsv = p.suffix.lower() in (".tsv", ".tab")
        sep = "\t" if tsv else (sniff_separator(lines) or ",")
    if decimal is None:
        decimal = _sniff_decimal(lines, sep)
    _check_layout(p, source, sep, lines)
    try:
        # index_col=False: a row with one field too many must not turn the first column
        # into the index (every score would shift one column); _check_layout refused it
        with source() as f:
            df = pd.read_csv(f, sep=sep, decimal=decimal, index_col=False)
    except pd.errors.EmptyDataError:
        raise ValueError(f"results file {str(path)!r} is empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as err:
        raise ValueError(f"cannot read {str(path)!r} with separator {_name(sep)}: {err}") from None
    if df.shape[1] < 2:
        raise ValueError(
            f"{str(path)!r} reads as {df.shape[1]} column with separator {_name(sep)}"
            f"{_seems(lines, sep)}; a results table needs a data-set column and a column per "
            "algorithm (or algorithm= and score= for long form)"
        )
    return df


def _check_layout(path: Path, source: Callable[[], TextIO], sep: str, head: list[str]) -> None:
    """Refuse duplicate header names and rows with more or fewer fields than the header.

    pandas would rename a second ``a`` to ``a.1`` (a new algorithm) and, given one extra
    field in the first data row, silently use the first column as the row index.
    """
    try:
        with source() as f:
            rows = csv.reader(f, delimiter=sep)
            header = next(rows, None)
            if header is None:
                return  # empty: pandas says so
            seen: set[str] = set()
            for name in header:
                if name in seen and name.strip():
                    raise ValueError(
                        f"{str(path)!r}: the header names column {name!r} twice; give every "
                        "column its own name"
                    )
                seen.add(name)
            for row in rows:
                if row and len(row) != len(header):  # blank lines are skipped, as pandas does
                    where = f"{str(path)!r} line {rows.line_num}"
                    fix = _seems(head, sep) or (
                        "; fix that row (a missing result is an empty field, e.g. 'a,,c')"
                    )
                    raise ValueError(
                        f"{where}: {len(row)} fields, but the header has {len(header)} (with "
                        f"separator {_name(sep)}){fix}"
                    )
    except (UnicodeDecodeError, csv.Error) as err:
        raise ValueError(f"cannot read {str(path)!r}: {err}") from None


#: Column names that say what a column of long-form results holds (compared lower-case).
_ALGORITHM_NAMES = ("algorithm", "algorithms", "model", "method", "classifier", "learner", "alg")
_DATASET_NAMES = ("dataset", "data_set", "data", "db", "task", "problem", "benchmark")
_FOLD_NAMES = ("fold", "folds", "split", "cv", "repeat", "run", "iteration", "seed")


def long_form_columns(
    data: pd.DataFrame, dataset: str | None = None
) -> dict[str, str | None] | None:
    """The columns of long-form results (one row per data set, algorithm and fold), when
    ``data`` looks like that: two text columns (the data set, given or guessed, and the
    algorithm) and one numeric score, with at most one more numeric column (the fold,
    whole numbers). ``None`` when it does not look like long form.

    The data-set column is ``dataset`` when given; else the text column named like one
    (``dataset``, ``db``, ``task``, ...), or the one the algorithm column is not (named
    like ``algorithm``, ``model``, ...), or the first. Used to suggest the options that
    read such a file when it was read as wide results.

    Returns
    -------
    dict or None
        Keys ``dataset``, ``algorithm``, ``score`` and ``fold`` (``None`` without one).
    """
    numeric = [str(c) for c in data.columns if pd.api.types.is_numeric_dtype(data[c])]
    text = [str(c) for c in data.columns if str(c) not in numeric]
    if dataset is not None:
        if dataset not in text:
            return None
        others = [c for c in text if c != dataset]
    else:
        if len(text) != 2:
            return None
        lower = {c: c.strip().lower() for c in text}
        named_alg = [c for c in text if lower[c] in _ALGORITHM_NAMES]
        named_ds = [c for c in text if lower[c] in _DATASET_NAMES]
        if len(named_ds) == 1:
            dataset = named_ds[0]
        elif len(named_alg) == 1:
            dataset = next(c for c in text if c != named_alg[0])
        else:
            dataset = text[0]
        others = [c for c in text if c != dataset]
    if len(others) != 1 or not 1 <= len(numeric) <= 2:
        return None
    fold = None
    if len(numeric) == 2:
        whole = [
            c
            for c in numeric
            if c.strip().lower() in _FOLD_NAMES
            or bool((data[c].dropna() % 1 == 0).all() and data[c].nunique() < len(data))
        ]
        named = [c for c in whole if c.strip().lower() in _FOLD_NAMES]
        if len(named) == 1:
            fold = named[0]
        elif len(whole) == 1:
            fold = whole[0]
        else:
            return None
    score = next(c for c in numeric if c != fold)
    return {"dataset": dataset, "algorithm": others[0], "score": score, "fold": fold}
