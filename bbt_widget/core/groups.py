"""Data sets in groups (families): which group each data set is in, each group's win table and
the Stan data of the group model (``stan/bbt_groups.stan``).

``bbt.fit(data, ..., group="family")`` reads the results and counts the pooled wins as every
fit does, then :func:`assign_groups` checks the grouping and counts each group's wins with the
same rules (:func:`~bbt_widget.core.wintable.count_wins` on the group's data sets), before any
fit. :meth:`Grouping.result` turns the fit into a :class:`GroupedBBTResult`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from .group_result import GroupedBBTResult
from .names import check_blank, clean_name, shown
from .options import GROUP_TAU_SCALE
from .result import BBTResult
from .tidy import TidyResults
from .wintable import apply_ties, count_wins

#: What ``group=`` accepts: a column of the results, or a mapping data set -> group.
GroupSpec = str | Mapping[Any, Any]
#: How group labels are compared, for the messages (the rule of names, :mod:`.names`).
_LABEL_RULE = "with surrounding whitespace removed and Unicode normalised (NFC)"
#: Why a group column cannot be read from results already read.
_COLUMN_OF_READ = (
    "group={group!r} names a column, but these results were already read (a TidyResults), "
    "which keeps no group column; pass group as a dict data set -> group, or pass the "
    "DataFrame that has the column"
)


@dataclass(frozen=True)
class Grouping:
    """The groups of a fit, checked: each group's data sets and win table (tie policy applied),
    and the Stan data they add to the pooled fit's."""

    groups: tuple[str, ...]
    datasets: dict[str, list[str]]
    tables: dict[str, pd.DataFrame]
    stan_data: dict[str, Any]
    label: str

    def result(self, base: BBTResult) -> GroupedBBTResult:
        """The grouped result of a fit of the group model (``base`` built as for any fit)."""
        return GroupedBBTResult(base, self.groups, self.tables, self.datasets)


def check_group_request(group: object, ties: str | None, data: object) -> None:
    """Refuse what the group model cannot fit, before the results are read.

    Raises
    ------
    ValueError
        ``ties="davidson"`` (the group model is the Bradley-Terry one), a ready win table (it
        has no data sets to group), a ``group`` that is neither a column name nor a mapping,
        or a column name that is not a column of ``data`` (or ``data`` already read, a
        :class:`~bbt_widget.core.tidy.TidyResults`).
    """
    if not isinstance(group, (str, Mapping)):
        raise ValueError(
            f"group must name a column of the results or map each data set to its group, got "
            f"{type(group).__name__}; e.g. group='family' or group={{'iris': 'tabular', ...}}"
        )
    if ties == "davidson":
        raise ValueError(
            "group= fits the Bradley-Terry group model, which has no tie parameter; use "
            "ties='spread', 'add' or 'forget' with group="
        )
    if isinstance(data, pd.DataFrame) and {"alg1", "alg2", "win1", "win2"} <= set(data.columns):
        raise ValueError(
            "group= needs the raw results (one score per data set and algorithm): a ready win "
            "table has no data sets left to put in groups"
        )
    if isinstance(group, str) and isinstance(data, (pd.DataFrame, TidyResults)):
        _check_column(data, group)


def _check_column(data: pd.DataFrame | TidyResults, group: str) -> pd.DataFrame:
    """``data``, checked to be a table with the column ``group``."""
    if isinstance(data, TidyResults):
        raise ValueError(_COLUMN_OF_READ.format(group=group))
    if group not in data.columns:
        raise ValueError(
            f"group={group!r} is not a column of the results (columns: "
            f"{', '.join(map(str, data.columns))}); pass the column giving each data set's "
            "group, or a dict data set -> group"
        )
    return data


def results_only(data: pd.DataFrame | TidyResults, group: GroupSpec) -> pd.DataFrame | TidyResults:
    """``data`` without the group column (in wide form it would read as an algorithm)."""
    if isinstance(group, str) and isinstance(data, pd.DataFrame) and group in data.columns:
        return data.drop(columns=[group])
    return data


def _dataset_groups(
    data: pd.DataFrame | TidyResults, group: GroupSpec, dataset: str | None
) -> tuple[dict[str, set[str]], str]:
    """Each data set's group(s), data sets and group labels cleaned as the results' names are
    (:func:`_group_labels`), and a label."""
    if isinstance(group, Mapping):
        pairs = [(clean_name(str(k)), v) for k, v in group.items()]
        return _group_labels(pairs, "the group mapping"), "mapping"
    data = _check_column(data, group)
    values = data[group]
    names = data[dataset] if dataset is not None else pd.Series(data.index, index=data.index)
    names = names.astype(str).map(clean_name)
    if values.isna().any():
        at = int(np.flatnonzero(values.isna().to_numpy())[0])
        raise ValueError(
            f"column {group!r} has no group for row {data.index[at]!r} (data set "
            f"{names.iloc[at]!r}); give every row its data set's group"
        )
    return _group_labels(zip(names, values), f"column {group!r}"), group


def _group_labels(pairs: Iterable[tuple[str, object]], where: str) -> dict[str, set[str]]:
    """Each data set's group label(s) from ``(data set, raw label)`` pairs, a label read as
    text and cleaned as names are (:func:`~bbt_widget.core.names.clean_name`), so that "tab"
    and "tab " or a composed and a decomposed "café" are not two groups printing the same.

    Raises
    ------
    ValueError
        A missing label (None, NaN) or a blank one, naming its data set; two raw labels that
        are one group only once cleaned or read as text ("A" and "A ", 1 and "1"), naming both
        (``where`` says where the labels are).
    """
    first: dict[str, object] = {}  # cleaned label -> the first raw label that gave it
    found: dict[str, set[str]] = {}
    for name, raw in pairs:
        if _missing(raw):
            raise ValueError(
                f"data set {name!r} has no group in {where} (it is {raw!r}); give every data "
                "set its group"
            )
        check_blank(
            "group", str(raw), f"of data set {name!r} in {where}", f"give {name!r} its group"
        )
        label = clean_name(str(raw))
        seen = first.setdefault(label, raw)
        if isinstance(seen, str) != isinstance(raw, str) or str(seen) != str(raw):
            a, b = _shown_labels(seen, raw)
            raise ValueError(
                f"group labels {a} and {b} in {where} are one group, {label!r}, once read as "
                f"text {_LABEL_RULE}; if they are the same group, write it one way in "
                f"{where}; if they are different, rename one so that they differ in more than "
                "whitespace, Unicode form or type"
            )
        found.setdefault(name, set()).add(label)
    return found


def _missing(value: object) -> bool:
    """Whether ``value`` is no label at all: None, NaN, pandas' NA or NaT."""
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # a list or an array: a value, if an odd one
        return False


def _shown_labels(a: object, b: object) -> list[str]:
    """Two raw labels quoted so that their difference shows: text as :func:`shown` quotes
    it (whitespace and Unicode form visible), anything else with its type (``int 1``)."""
    if isinstance(a, str) and isinstance(b, str):
        return shown([a, b])
    return [repr(x) if isinstance(x, str) else f"{type(x).__name__} {x!r}" for x in (a, b)]


def assign_groups(
    tidy: TidyResults | None,
    data: pd.DataFrame | TidyResults,
    group: GroupSpec,
    *,
    dataset: str | None,
    counting: Mapping[str, Any],
    tau_scale: float = GROUP_TAU_SCALE,
) -> Grouping:
    """Check the grouping of the data sets and count each group's wins.

    ``counting`` holds the checked ``d_min, paired, ties, tie_threshold`` of the fit: each
    group's win table is counted with them from the group's data sets only.

    Raises
    ------
    ValueError
        Naming the column or value and the fix: an unknown column, a data set with no group or
        with several, a group where fewer than 2 algorithms have results or with no games, or
        a single group.
    """
    if tidy is None:
        raise ValueError(
            "group= needs the raw results (one score per data set and algorithm): a ready win "
            "table has no data sets left to put in groups"
        )
    given, label = _dataset_groups(data, group, dataset)
    where = f"column {label!r}" if label != "mapping" else "the group mapping"
    missing = [d for d in tidy.datasets if d not in given]
    if missing:
        raise ValueError(
            f"data sets with no group in {where}: {', '.join(map(repr, missing[:5]))}"
            f"{' ...' if len(missing) > 5 else ''}; give every data set a group"
        )
    several = {d: sorted(given[d]) for d in tidy.datasets if len(given[d]) > 1}
    if several:
        d, gs = next(iter(several.items()))
        raise ValueError(
            f"data set {d!r} is in several groups in {where} ({', '.join(map(repr, gs))}); "
            "each data set must be in exactly one group"
        )
    groups: dict[str, list[str]] = {}
    for d in tidy.datasets:
        groups.setdefault(next(iter(given[d])), []).append(d)
    lost = {next(iter(given[d])) for d in tidy.dropped_datasets if len(given.get(d, ())) == 1}
    for g in sorted(lost - set(groups)):
        raise ValueError(
            f"group {g!r} of {where} has no data set where 2 or more algorithms have results "
            "(fewer than 2 algorithms to compare on each): merge it into another group"
        )
    if len(groups) < 2:
        only = next(iter(groups), "")
        raise ValueError(
            f"every data set is in one group ({only!r}) in {where}: there is nothing to compare "
            "between groups; fit without group=, or give at least two groups"
        )
    tables: dict[str, pd.DataFrame] = {}
    for g, names in groups.items():
        raw = count_wins(
            _subset(tidy, names),
            d_min=counting["d_min"],
            paired=counting["paired"],
            tie_threshold=counting["tie_threshold"],
        )
        table = apply_ties(raw, counting["ties"])
        if not ((table["win1"] + table["win2"]) > 0).any():
            raise ValueError(
                f"group {g!r} of {where} has no games (no wins or losses between any two "
                "algorithms on its data sets, under this tie policy); merge it into another group"
            )
        tables[g] = table
    order = tuple(groups)
    return Grouping(order, groups, tables, _stan_rows(tables, tidy.algorithms, tau_scale), label)


def _subset(tidy: TidyResults, datasets: list[str]) -> TidyResults:
    """The results of ``datasets`` only (every algorithm kept, so that pairs line up)."""
    frame = tidy.frame[tidy.frame["dataset"].isin(datasets)].reset_index(drop=True)
    return replace(tidy, frame=frame, datasets=tuple(datasets), notes=(), dropped_datasets=())


def _stan_rows(
    tables: Mapping[str, pd.DataFrame], algorithms: tuple[str, ...], tau_scale: float
) -> dict[str, Any]:
    """The rows of the group model's data: each group's pairs with games, in group order."""
    idx = {a: k + 1 for k, a in enumerate(algorithms)}  # Stan is 1-based
    out: dict[str, list[int]] = {"group": [], "i1": [], "i2": [], "win1": [], "win2": []}
    for g, table in enumerate(tables.values(), start=1):
        t = table[(table["win1"] + table["win2"]) > 0]
        out["group"] += [g] * len(t)
        out["i1"] += [idx[a] for a in t["alg1"]]
        out["i2"] += [idx[a] for a in t["alg2"]]
        out["win1"] += t["win1"].astype(int).tolist()
        out["win2"] += t["win2"].astype(int).tolist()
    return {
        **out,
        "n_groups": len(tables),
        "n_pairs": len(out["group"]),
        "tau_scale": float(tau_scale),
    }
