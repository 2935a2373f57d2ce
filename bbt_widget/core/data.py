"""Input shapes -> one tidy, validated form.

Each layout is checked here, at the boundary, so that a mistake is reported with the column
or value to fix instead of surfacing as a traceback from pandas or Stan; the option checks
(``check_*``) live in :mod:`bbt_widget.core.validation` and are re-exported here.

Accepted shapes (see :func:`tidy_results`):

* **wide means**: one row per data set (names in the index or a column), one column per
  algorithm;
* **wide by fold**: the data-set column repeated once per fold (``pmlb16_4fold.csv``);
  folds are numbered by order of appearance unless a ``fold`` column is given; a column
  that looks like fold numbers is refused rather than ranked as an algorithm
  (:mod:`~bbt_widget.core.fold_columns`);
* **long / tidy**: columns for data set, algorithm, score and optionally fold;
* **means + sd**: a wide means table plus a same-shaped ``sd`` table (unpaired local ROPE
  without fold scores).

Names are compared as :func:`~bbt_widget.core.names.clean_name` gives them (surrounding
whitespace removed, Unicode composed, NFC): "rf" and "rf ", or "café" typed and pasted, name
one algorithm (data set, fold label). Raw names merged that way, and data sets left out because
fewer than two algorithms have a score there, are the reading's :attr:`TidyResults.notes`:
``fit`` (through the audit) and ``win_table`` issue them as :class:`DataWarning`. The type
itself, :class:`TidyResults`, and the :class:`Layout` it was read with are in
:mod:`bbt_widget.core.tidy`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .fold_columns import check_fold_columns
from .names import (
    SHOWN,
    check_merged,
    clean_name,
    cleaned,
    joined,
    merge_columns,
    shown,
)

#: Option checks and constants live in .validation and .options; they are re-exported here
#: because ``bbt_widget.data`` was their home (users and older code import them from it).
from .options import HYPERPRIORS, TIE_POLICIES
from .tidy import MIN_RANKED_DATASETS, Layout, LayoutKeywords, ReadingNote, TidyResults, Unpack
from .validation import (
    DEFAULT_SEED,
    MAX_COUNT,
    WIN_TABLE_COLUMNS,
    _numeric,
    _plain,
    _preview,
    check_algorithms,
    check_count,
    check_d_min,
    check_flag,
    check_hdi,
    check_hyperprior,
    check_interpretation,
    check_rope,
    check_seed,
    check_ties,
    check_win_table,
    is_win_table,
)

#: The readers, and what older code imports from here: the option checks, and of the type the
#: readers build (:mod:`.tidy`) the type itself and the ranking models' minimum.
__all__ = [
    "DEFAULT_SEED",
    "HYPERPRIORS",
    "MAX_COUNT",
    "MIN_RANKED_DATASETS",
    "TIE_POLICIES",
    "WIN_TABLE_COLUMNS",
    "TidyResults",
    "as_tidy",
    "check_algorithms",
    "check_count",
    "check_d_min",
    "check_hdi",
    "check_hyperprior",
    "check_interpretation",
    "check_rope",
    "check_seed",
    "check_ties",
    "check_win_table",
    "is_win_table",
    "tidy_results",
]


# --------------------------------------------------------------------------- shapes


def as_tidy(data: pd.DataFrame | TidyResults, **layout: Unpack[LayoutKeywords]) -> TidyResults:
    """The one entry to the results: a :class:`TidyResults` as given, a table read once.

    Every public function that takes results calls this first, so that results read once
    with :func:`tidy_results` can be passed on as they are.

    Parameters
    ----------
    data
        A results table in any layout :func:`tidy_results` accepts, or results it already
        read.
    **layout
        How to read a table (:class:`~bbt_widget.core.tidy.LayoutKeywords`, as for
        :func:`tidy_results`). With a :class:`TidyResults` they may be left out; any given
        must say what its :attr:`~TidyResults.layout` says.

    Raises
    ------
    TypeError
        ``data`` is neither a DataFrame nor a :class:`TidyResults`, or a keyword is not a
        layout keyword.
    ValueError
        A layout keyword given with a :class:`TidyResults` read otherwise (the message names
        it), and every error of :func:`tidy_results`.
    """
    asked = Layout.from_keywords(layout)
    if not isinstance(data, TidyResults):
        return tidy_results(data, **asked.as_dict())
    read = data.read_with
    clash = [k for k in asked.given() if not _same(k, getattr(asked, k), getattr(read, k))]
    if clash:
        said = ", ".join(
            f"{k}={_layout_value(asked, k)} (they were read with {_layout_value(read, k)})"
            for k in clash
        )
        raise ValueError(
            f"these results were already read (a TidyResults), so the layout cannot change: "
            f"{said}; leave the layout keywords out, or pass the DataFrame to read it again "
            f"with them"
        )
    return data


def _same(key: str, asked: object, read: object) -> bool:
    """Whether a layout keyword given agrees with how the results were read (an sd table:
    the same table)."""
    return asked is read if key == "sd" else bool(asked == read)


def _layout_value(layout: Layout, key: str) -> str:
    """A layout keyword's value as an error message shows it (an sd table by its shape)."""
    value = getattr(layout, key)
    if isinstance(value, pd.DataFrame):
        return f"<a {value.shape[0]}x{value.shape[1]} table>"
    return repr(value)


def tidy_results(
    data: pd.DataFrame,
    *,
    dataset: str | None = None,
    algorithm: str | None = None,
    fold: str | None = None,
    score: str | None = None,
    sd: pd.DataFrame | None = None,
    lower_is_better: bool = False,
) -> TidyResults:
    """Normalise any accepted results layout into :class:`TidyResults`.

    Parameters
    ----------
    data
        The results table (wide means, wide by fold, or long).
    dataset
        Column naming the data set; ``None`` takes the names from the index.
    algorithm, score
        Long form: the columns holding the algorithm name and the score. Passing both
        selects long form.
    fold
        Optional column numbering the folds (long form, or wide by fold).
    sd
        Wide means only: a table with the same data sets and algorithms holding the
        standard deviation of each mean over its folds (unpaired local ROPE).
    lower_is_better
        ``True`` for errors, times, RMSE.

    Returns
    -------
    TidyResults
        The results, with names compared as :func:`clean_name` gives them; raw names merged
        that way and data sets with fewer than two scored algorithms (left out) are its
        ``notes``.

    Raises
    ------
    TypeError
        ``data`` is not a DataFrame, or scores are not numeric.
    ValueError
        Any other problem, including two results for one key once names are cleaned; the
        message names the column or value and the fix.
    """
    if not isinstance(data, pd.DataFrame):
        raise TypeError(
            f"results must be a pandas DataFrame, got {type(data).__name__}; "
            "e.g. pandas.read_csv('results.csv')"
        )
    if isinstance(data.columns, pd.MultiIndex):
        raise ValueError(
            f"the results have MultiIndex columns (e.g. {data.columns[0]!r}), as groupby/agg "
            "or pivot_table make; flatten them first, e.g. data.columns = ['_'.join(map(str, "
            "c)).strip('_') for c in data.columns], or select one level with "
            "data.droplevel(1, axis=1)"
        )
    check_flag(lower_is_better, "lower_is_better")
    if (algorithm is None) != (score is None):
        missing = "score" if score is None else "algorithm"
        raise ValueError(
            f"long-form results need both algorithm= and score=; {missing}= is missing"
        )
    notes: list[ReadingNote] = []
    if algorithm is not None:
        if sd is not None:
            raise ValueError("sd= applies to a wide means table, not to long-form results")
        assert score is not None  # both or neither, checked above
        frame = _from_long(data, dataset, algorithm, fold, score, notes)
    else:
        frame = _from_wide(data, dataset, fold, sd, notes)
    layout = Layout(dataset, algorithm, fold, score, sd, bool(lower_is_better))
    return _finish(frame, layout, notes, data)


def _require_columns(data: pd.DataFrame, **columns: str | None) -> None:
    """Refuse a role (``dataset=``, ``score=``, ...) naming no column, a column the header
    holds twice, or the column another role names."""
    taken: dict[str, str] = {}
    for role, col in columns.items():
        if col is None:
            continue
        if col in taken:
            raise ValueError(
                f"{taken[col]}={col!r} and {role}={col!r} name the same column; each role "
                "needs its own column of the results"
            )
        taken[col] = role
        if col not in data.columns:
            # groupby, pivot and set_index leave the names in the index, a frequent slip
            where = (
                "; it is a level of the index: pass data.reset_index()"
                if col in data.index.names
                else ""
            )
            raise ValueError(
                f"{role}={col!r} is not a column of the results; columns are "
                f"{_preview(map(str, data.columns))}{where}"
            )
        # pd.concat(axis=1) and merges can repeat a name: data[col] is then a table, and
        # pandas fails far from here
        times = int((data.columns == col).sum())
        if times > 1:
            raise ValueError(
                f"{role}={col!r}: the results have {times} columns named {col!r}; keep "
                "one, e.g. data = data.loc[:, ~data.columns.duplicated()], or rename the others"
            )


def _from_long(
    data: pd.DataFrame,
    dataset: str | None,
    algorithm: str,
    fold: str | None,
    score: str,
    notes: list[ReadingNote],
) -> pd.DataFrame:
    _require_columns(data, dataset=dataset, algorithm=algorithm, fold=fold, score=score)
    raw = pd.DataFrame(
        {
            "data set": _names(
                data[dataset] if dataset is not None else data.index.to_series(), "dataset"
            ),
            "algorithm": _names(data[algorithm], "algorithm"),
        }
    )
    if fold is not None:
        raw["fold"] = _fold_labels(data[fold])
    clean = _cleaned(raw, notes)
    check_merged(raw, clean)
    out = pd.DataFrame(
        {
            "dataset": clean["data set"].to_numpy(),
            "algorithm": clean["algorithm"].to_numpy(),
            "score": _numeric(data[score], f"score column {score!r}").to_numpy(),
        }
    )
    labels = None
    if fold is not None:
        out["fold"] = _fold_codes(clean["fold"], out["dataset"])
        labels = data[fold].reset_index(drop=True)
    else:
        dup = out.duplicated(["dataset", "algorithm"], keep=False)
        if dup.any():
            row = out[dup].iloc[0]
            raise ValueError(
                f"several rows for data set {row['dataset']!r} and algorithm "
                f"{row['algorithm']!r}; if they are cross-validation folds, pass "
                "fold='<column numbering the folds>'"
            )
        out["fold"] = 0
    _check_duplicates(out, labels, data.drop(columns=[score]))
    return out


def _from_wide(
    data: pd.DataFrame,
    dataset: str | None,
    fold: str | None,
    sd: pd.DataFrame | None,
    notes: list[ReadingNote],
) -> pd.DataFrame:
    _require_columns(data, dataset=dataset, fold=fold)
    raw = pd.DataFrame(
        {
            "data set": _names(
                data[dataset] if dataset is not None else data.index.to_series(), "dataset"
            )
        }
    )
    alg_cols = [c for c in data.columns if c not in (dataset, fold)]
    if len(alg_cols) < 2:
        raise ValueError(
            f"need at least 2 algorithm columns to compare, found {len(alg_cols)} "
            f"({_preview(map(str, alg_cols))}); for long-form data pass algorithm= and score="
        )
    names = [str(c) for c in alg_cols]
    if len(set(names)) != len(names):
        dupes = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"algorithm columns appear twice: {_preview(dupes)}")
    _check_id_columns(data, names, alg_cols)
    check_fold_columns(data, names, alg_cols, raw["data set"], fold)
    if dataset is None:
        for name, c in zip(names, alg_cols):
            col = data[c]
            if (
                not pd.api.types.is_numeric_dtype(col)
                and col.notna().any()
                and pd.to_numeric(col, errors="coerce").isna().all()
            ):
                raise TypeError(
                    f"column {name!r} holds text, not scores (row 0 is {col.iloc[0]!r}); if "
                    f"it names the data sets, pass dataset={name!r}"
                )
    scores = {name: _numeric(data[c], f"column {name!r}") for name, c in zip(names, alg_cols)}
    scores, said = merge_columns(scores)
    notes.extend(ReadingNote("names", what, fix) for what, fix in said)
    names = list(scores)
    if fold is not None:
        raw["fold"] = _fold_labels(data[fold])
    clean = _cleaned(raw, notes)
    if fold is not None:  # without one, the rows of a data set are its folds
        check_merged(raw, clean)
    ds = clean["data set"]
    if fold is not None:
        folds = _fold_codes(clean["fold"], ds)
    else:
        folds = ds.groupby(ds, sort=False).cumcount().to_numpy()
    wide = pd.DataFrame(scores)
    wide.index = pd.MultiIndex.from_arrays([ds.to_numpy(), folds], names=["dataset", "fold"])
    if wide.index.duplicated().any():
        i = int(np.flatnonzero(wide.index.duplicated())[0])
        d, f = ds.iloc[i], _plain(data[fold].iloc[i])
        raise ValueError(f"data set {d!r} has two rows for fold {f!r} in column {fold!r}")
    if sd is not None:
        if (folds != 0).any():
            d = ds[folds != 0].iloc[0]
            raise ValueError(
                f"sd= needs one row of means per data set, but {d!r} appears more than "
                "once; with fold-level scores the local ROPE computes the sd itself"
            )
        sd_wide = _sd_table(sd, names, ds, dataset)
    n_rows, n_alg = wide.shape
    long = pd.DataFrame(
        {
            "dataset": np.repeat(ds.to_numpy(), n_alg),
            "fold": np.repeat(folds, n_alg),
            "algorithm": np.tile(np.asarray(names, dtype=object), n_rows),
            "score": wide.to_numpy(dtype=float).ravel(),
        }
    )
    if sd is not None:
        long["sd"] = sd_wide.to_numpy(dtype=float).ravel()
    return long


def _check_id_columns(data: pd.DataFrame, names: list[str], alg_cols: list[object]) -> None:
    """Refuse an integer column holding a different value on every row (task_id, seed).

    Read as scores it would be an algorithm that beats everyone. Only when some other
    column holds non-integer scores: results that are all counts (errors, wins) are left
    alone, since distinct counts are no sign of an ID.
    """
    is_int = [
        pd.api.types.is_integer_dtype(data[c]) and not pd.api.types.is_bool_dtype(data[c])
        for c in alg_cols
    ]
    if len(data) < 3 or all(is_int):
        return
    for name, c, integer in zip(names, alg_cols, is_int):
        col = data[c]
        if integer and col.notna().all() and col.is_unique:
            raise ValueError(
                f"column {name!r} holds a different whole number on every row "
                f"({_plain(col.iloc[0])!r}, {_plain(col.iloc[1])!r}, ...), like an ID "
                "(task_id, seed), not scores; if it "
                f"names the data sets pass dataset={name!r}, otherwise drop it "
                f"(data.drop(columns={name!r})); if it really holds scores, pass them as floats "
                f"(data[{name!r}] = data[{name!r}].astype(float))"
            )


def _sd_table(
    sd: pd.DataFrame, names: list[str], ds: pd.Series, dataset: str | None
) -> pd.DataFrame:
    if not isinstance(sd, pd.DataFrame):
        raise TypeError(f"sd must be a pandas DataFrame, got {type(sd).__name__}")
    sd_ds = sd[dataset] if dataset is not None and dataset in sd.columns else None
    sd = sd.drop(columns=[dataset]) if sd_ds is not None else sd
    sd_names = [clean_name(str(c)) for c in sd.columns]
    if len(set(sd_names)) < len(sd_names):
        twice = [str(c) for c, n in zip(sd.columns, sd_names) if sd_names.count(n) > 1]
        raise ValueError(
            f"the sd table's columns {joined(shown(twice))} name one algorithm once "
            "surrounding whitespace is removed and Unicode is normalised (NFC); keep one "
            "column per algorithm"
        )
    if sorted(sd_names) != sorted(names):
        raise ValueError(
            "the sd table's columns must be the same algorithms as the means: "
            f"means have {_preview(names)}, sd has {_preview(sd_names)}"
        )
    sd_index = (sd_ds if sd_ds is not None else sd.index.to_series()).astype(str)
    sd_index = sd_index.map(clean_name).to_numpy()
    if len(sd_index) != len(ds) or set(sd_index) != set(ds):
        only_means = [d for d in pd.unique(ds) if d not in set(sd_index)]
        only_sd = [d for d in pd.unique(sd_index) if d not in set(ds)]
        raise ValueError(
            f"the sd table's data sets must match the means: means have {len(ds)} rows, "
            f"sd has {len(sd_index)}; only in the means: {_preview(only_means) or 'none'}; "
            f"only in sd: {_preview(only_sd) or 'none'}"
        )
    values = pd.DataFrame(
        {n: _numeric(sd[c], f"sd column {n!r}").to_numpy() for n, c in zip(sd_names, sd.columns)},
        index=sd_index,
    )
    values = values.loc[ds.to_numpy(), names]
    arr = values.to_numpy()
    if (arr < 0).any():
        r, c = np.argwhere(arr < 0)[0]
        raise ValueError(
            f"sd must be >= 0; data set {ds.iloc[r]!r}, algorithm {names[c]!r} has {arr[r, c]}"
        )
    return values


def _names(s: pd.Series, role: str) -> pd.Series:
    if s.isna().any():
        raise ValueError(
            f"the {role} names have missing values (row {int(np.flatnonzero(s.isna())[0])}); "
            f"every row needs a {role} name"
        )
    text = s.astype(str).reset_index(drop=True)
    if s.dtype == object:
        # 1 and "1" are different values with one text: they would merge silently
        kinds = pd.DataFrame({"value": s.to_numpy(), "text": text.to_numpy()})
        kinds = kinds.drop_duplicates("value")
        clash = kinds[kinds["text"].duplicated(keep=False)]
        if len(clash):
            (i, a), (j, b) = list(zip(clash.index, clash["value"]))[:2]
            raise ValueError(
                f"the {role} names {a!r} (row {i}) and {b!r} (row {j}) are different values "
                f"that both read as {str(a)!r}, so they would merge into one {role}; make "
                f"them one type, e.g. as text with .astype(str)"
            )
    return text


def _cleaned(raw: pd.DataFrame, notes: list[ReadingNote]) -> pd.DataFrame:
    """:func:`~bbt_widget.core.names.cleaned` names, with a note for each role whose names
    lost invisible characters or had a merge."""
    clean, said = cleaned(raw)
    notes.extend(ReadingNote("names", what, fix) for what, fix in said)
    return clean


def _fold_labels(s: pd.Series) -> pd.Series:
    """The fold labels as text (as given); missing labels are refused."""
    if s.isna().any():
        raise ValueError(f"the fold column {s.name!r} has missing values; number every fold")
    return s.astype(str).reset_index(drop=True)


def _fold_codes(labels: pd.Series, ds: pd.Series) -> np.ndarray:
    """Number the folds 0..k-1 within each data set, by the order of appearance of their
    labels (text)."""
    key = pd.DataFrame({"dataset": ds.to_numpy(), "fold": labels.to_numpy()})
    return np.asarray(
        key.groupby("dataset", sort=False)["fold"]
        .transform(lambda f: pd.factorize(f)[0])
        .to_numpy()
    )


def _check_duplicates(
    frame: pd.DataFrame, labels: pd.Series | None = None, source: pd.DataFrame | None = None
) -> None:
    """Refuse two results for one (data set, algorithm, fold).

    With the long input (``source``: its columns other than the score), a column that differs
    between the two rows is named: usually the runs of repeated cross-validation, whose fold
    numbers start again in each run.
    """
    key = ["dataset", "algorithm", "fold"]
    dup = frame.duplicated(key)
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        row = frame.iloc[i]
        label = _plain(labels.iloc[i] if labels is not None else row["fold"])
        text = (
            f"duplicate results for data set {row['dataset']!r}, algorithm "
            f"{row['algorithm']!r}, fold {label!r}: keep one row per "
            "(data set, algorithm, fold)"
        )
        if source is not None:
            first = int(np.flatnonzero((frame[key] == row[key]).all(axis=1).to_numpy())[0])
            rows = source.iloc[[first, i]]
            differ = [c for c in rows.columns if rows[c].nunique(dropna=False) > 1]
            if differ:
                col = differ[0]
                fold_col = repr(_plain(labels.name)) if labels is not None else "<fold column>"
                text += (
                    f"; column {_plain(col)!r} differs between these rows: if the fold numbers "
                    "start again in each run of repeated cross-validation, give each fold of "
                    f"each run its own label, e.g. df['fold_id'] = df[{_plain(col)!r}]"
                    f".astype(str) + '-' + df[{fold_col}].astype(str), then pass fold='fold_id'"
                )
        raise ValueError(text)


def _finish(
    frame: pd.DataFrame, layout: Layout, notes: list[ReadingNote], source: pd.DataFrame
) -> TidyResults:
    algorithms = tuple(pd.unique(frame["algorithm"]))
    if len(algorithms) < 2:
        raise ValueError(
            f"need at least 2 algorithms to compare, found {len(algorithms)} "
            f"({_preview(algorithms)})"
        )
    finite = frame[np.isfinite(frame["score"].to_numpy())]
    with_score = set(pd.unique(finite["algorithm"]))  # once, not per algorithm
    empty = [a for a in algorithms if a not in with_score]
    if empty:
        raise ValueError(
            f"algorithm {empty[0]!r} has no finite score at all; remove it from the results "
            "(or fill in its scores)"
        )
    if "sd" in finite.columns:
        miss = finite[~np.isfinite(finite["sd"].to_numpy())]
        if len(miss):
            row = miss.iloc[0]
            raise ValueError(
                f"the sd of data set {row['dataset']!r}, algorithm {row['algorithm']!r} is "
                "missing although its mean is given; give every mean its sd"
            )
    every = pd.Index(pd.unique(frame["dataset"]))
    scored = np.zeros((len(every), len(algorithms)), dtype=bool)  # who has a score where
    scored[
        every.get_indexer(finite["dataset"]), pd.Index(algorithms).get_indexer(finite["algorithm"])
    ] = True
    keep = scored.sum(axis=1) >= 2
    datasets, dropped = tuple(every[keep]), tuple(every[~keep])
    if not datasets:
        hint = (
            "; without dataset= every row is its own data set: pass dataset='<column naming "
            "the data sets>'"
            if layout.dataset is None
            else ""
        )
        raise ValueError(
            "no two algorithms have a result on the same data set, so there are no games and "
            f"nothing to fit ({len(every)} data sets, each with a score for at most one "
            f"algorithm){hint}"
        )
    if dropped:
        only = {
            every[d]: algorithms[int(np.argmax(scored[d]))]
            for d in np.flatnonzero(scored.sum(axis=1) == 1)
        }
        notes.append(_dropped_note(dropped, only))
        finite = finite[finite["dataset"].isin(set(datasets))]
    finite = finite.reset_index(drop=True)
    finite["fold"] = finite["fold"].astype(int)
    tidy = TidyResults(
        finite,
        algorithms,
        datasets,
        layout.lower_is_better,
        tuple(notes),
        tuple(dropped),
        layout,
        source,
    )
    _check_overflow(tidy)
    return tidy


def _dropped_note(dropped: Sequence[str], only: dict[str, str]) -> ReadingNote:
    """The note on data sets left out: fewer than two algorithms have a score there
    (``only``: the one algorithm with a score, for those that have one)."""
    said = [
        f"{name!r} (" + (f"only {only[name]!r}" if name in only else "no score") + ")"
        for name in dropped[:SHOWN]
    ]
    more = f" and {len(dropped) - SHOWN} more" if len(dropped) > SHOWN else ""
    n = len(dropped)
    return ReadingNote(
        "no-comparison",
        f"{n} data set{'s' * (n != 1)} left out: fewer than two algorithms have a score there, "
        f"so {'they give' if n != 1 else 'it gives'} no comparison ({', '.join(said)}{more})",
        "fill in the missing results if they exist; every count (win table, audit, methods "
        "text) is of the data sets that remain",
    )


def _check_overflow(tidy: TidyResults) -> None:
    """Fold scores whose sum overflows to inf would make a data set vanish from every count."""
    with np.errstate(over="ignore"):
        bad = (tidy.fold_counts > 0) & ~np.isfinite(tidy.means)
    if bad.any():
        d, a = np.argwhere(bad)[0]
        name, alg = tidy.datasets[d], tidy.algorithms[a]
        f = tidy.frame
        scores = f.loc[(f["dataset"] == name) & (f["algorithm"] == alg), "score"]
        raise ValueError(
            f"the fold scores of data set {name!r}, algorithm {alg!r} ({_preview(scores)}) "
            "add up to more than the largest float, so their mean is infinite; rescale the "
            "scores (e.g. divide them by 1e300) and keep them below about 1e300"
        )
