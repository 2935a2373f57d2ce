"""Columns of a wide table that number folds, runs or seeds rather than hold an algorithm's
scores.

Read as scores, a ``fold`` column is an algorithm like any other: with 0-1 scores it beats
every real algorithm (fold 4 > 0.9), with percentages it loses to all of them, and either
way the ranking looks plausible. :func:`check_fold_columns` refuses such a column before it
is read as scores, naming the keyword that reads it as folds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .names import clean_name, joined
from .validation import _plain

#: Column names that say what a column numbers: fold, run, repeat, seed, split, iteration,
#: with the usual prefixes and suffixes (cv_fold, fold_id, Run #, repetition, iter).
_NAMED_LIKE_FOLD = re.compile(
    r"^(?:cv|outer|inner)?[\s_.-]*"
    r"(?:folds?|runs?|repeats?|repetitions?|reps?|seeds?|splits?|iterations?|iters?)"
    r"[\s_.-]*(?:id|no|nr|num|number|idx|index|#)?$",
    re.IGNORECASE,
)

#: A data set needs this many rows before whole numbers 0..k-1 (or 1..k) on its rows are
#: taken as fold numbers: with two rows, a column of counts reads 0, 1 too easily.
_MIN_FOLDS_SEEN = 3


def named_like_fold(name: str) -> bool:
    """Whether a column's name says it numbers folds, runs, repeats, seeds or splits."""
    return bool(_NAMED_LIKE_FOLD.match(clean_name(name)))


def numbers_rows(col: pd.Series, datasets: pd.Series) -> bool:
    """Whether an integer column numbers the rows of every data set 0..k-1 or 1..k (each
    number once), as a fold column of a wide-by-fold table does.

    Parameters
    ----------
    col
        The column, in the table's row order.
    datasets
        The data-set name of each row, in the same order.
    """
    if not pd.api.types.is_integer_dtype(col) or pd.api.types.is_bool_dtype(col):
        return False
    values = col.to_numpy()
    groups = pd.Series(values).groupby(datasets.to_numpy(), sort=False)
    sizes = groups.size()
    if len(sizes) < 2 or (sizes < 2).any() or sizes.max() < _MIN_FOLDS_SEEN:
        return False
    for _, numbers in groups:
        ordered = np.sort(numbers.to_numpy())
        start = ordered[0]
        if start not in (0, 1) or not np.array_equal(ordered, start + np.arange(len(ordered))):
            return False
    return True


def check_fold_columns(
    data: pd.DataFrame,
    names: Sequence[str],
    columns: Sequence[object],
    datasets: pd.Series,
    fold: str | None,
) -> None:
    """Refuse wide-table columns that number folds, runs or seeds instead of holding scores.

    A column is refused when its name says so (:func:`named_like_fold`) or when it holds
    whole numbers that count the rows of each data set (:func:`numbers_rows`).

    Parameters
    ----------
    data
        The results table.
    names, columns
        The algorithm columns as text, and as the table's labels.
    datasets
        The data-set name of each row.
    fold
        The fold column already given, if any.

    Raises
    ------
    ValueError
        Naming the keyword that reads the column as fold numbers (``fold='fold'``), or, with
        several such columns, how to make one fold label of them.
    """
    found: list[tuple[str, str]] = []
    for name, c in zip(names, columns):
        if named_like_fold(name):
            found.append((name, "is named like a fold, run or seed number"))
        elif numbers_rows(data[c], datasets):
            found.append((name, "numbers the rows of each data set (0, 1, 2, ... or 1, 2, 3, ...)"))
    if not found:
        return
    if not datasets.duplicated().any():
        name, why = found[0]
        raise ValueError(
            f"column {name!r} {why}, but each data set has one row here, so it numbers no "
            f"folds and would be ranked as an algorithm; drop it "
            f"(data.drop(columns={name!r})), or rename it if it holds scores"
        )
    if fold is None and len(found) == 1:
        name, why = found[0]
        # the way out a real algorithm has: a name is changed, whole numbers made floats
        keep = (
            "rename the column"
            if named_like_fold(name)
            else f"pass them as floats (data[{name!r}] = data[{name!r}].astype(float))"
        )
        raise ValueError(
            f"column {name!r} {why}, so it would be ranked as an algorithm; if it numbers "
            f"the folds, pass fold={name!r}; if it holds an algorithm's scores, {keep}"
        )
    quoted = [repr(_plain(n)) for n, _ in found]
    # the given fold column last: the runs' numbers lead the label
    labels = [*quoted, repr(fold)] if fold is not None else quoted
    parts = " + '-' + ".join(f"data[{q}].astype(str)" for q in labels)
    raise ValueError(
        f"column{'s' * (len(found) > 1)} {joined(quoted)} "
        f"{'look' if len(found) > 1 else 'looks'} like fold, run or seed numbers, not an "
        "algorithm's scores"
        + (f" (and fold={fold!r} numbers the folds)" if fold is not None else "")
        + "; give each fold of each run its own label in one column, e.g. "
        f"data['fold_id'] = {parts}, then pass fold='fold_id' and drop the others "
        f"(data.drop(columns=[{', '.join(labels)}]))"
    )
