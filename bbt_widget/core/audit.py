"""``audit``: what is in a results table, before any fit.

A reviewer's first questions are about the data, not the model: how many algorithms and data
sets, what is missing, which algorithms never met, how many folds each comparison rests on,
and whether a column is not what it seems (an ID read as an algorithm, a constant column,
percent mixed with fractions). :func:`audit` answers them in one table of findings, each with
its severity, what was found, where and the fix. It never raises on data that ``fit``
accepts; on data that ``fit`` refuses it reports the refusal as an ``error`` finding.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .bidi import isolate

# DataWarning lives with the reading of the results, which issues it too (``win_table``); it
# is importable from here, its first home.
from .data import as_tidy
from .tidy import DataWarning, Layout, LayoutKeywords, TidyResults, Unpack
from .validation import is_win_table
from .wording import counted

__all__ = [
    "SEVERITIES",
    "Audit",
    "DataWarning",
    "Finding",
    "audit",
    "audit_tidy",
    "audit_validated",
]

SEVERITIES = ("error", "warning", "info")

#: Float-noise examples shown per finding (the count covers all).
_EXAMPLES = 3


@dataclass(frozen=True)
class Finding:
    """One thing the audit found.

    Attributes
    ----------
    severity
        ``"error"`` (fit refuses the data), ``"warning"`` (fit runs, but a result may
        mislead) or ``"info"`` (what is there).
    check
        Short name of the check (``"shape"``, ``"missing"``, ``"graph"`` ...).
    what, where, fix
        What was found, where (columns, algorithms, data sets) and what to do.
    """

    severity: str
    check: str
    what: str
    where: str = ""
    fix: str = ""

    def __str__(self) -> str:
        return (
            self.what
            + (f" ({self.where})" if self.where else "")
            + (f"; {self.fix}" if self.fix else "")
        )


@dataclass(frozen=True)
class Audit:
    """The findings of :func:`audit`, errors first."""

    findings: tuple[Finding, ...] = field(default_factory=tuple)

    @property
    def errors(self) -> list[Finding]:
        """Findings that make ``fit`` refuse the data."""
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        """Findings that do not stop a fit but may make a result mislead."""
        return [f for f in self.findings if f.severity == "warning"]

    @property
    def ok(self) -> bool:
        """No errors and no warnings."""
        return not self.errors and not self.warnings

    def to_frame(self) -> pd.DataFrame:
        """One row per finding: severity, check, what, where, fix."""
        return pd.DataFrame(
            [(f.severity, f.check, f.what, f.where, f.fix) for f in self.findings],
            columns=["severity", "check", "what", "where", "fix"],
        )

    def summary(self) -> pd.DataFrame:
        """The findings, one row each: :meth:`to_frame`."""
        return self.to_frame()

    def __repr__(self) -> str:
        counts = {s: sum(f.severity == s for f in self.findings) for s in SEVERITIES}
        head = f"Audit: {counts['error']} errors, {counts['warning']} warnings, "
        lines = [head + f"{counts['info']} notes"]
        for f in self.findings:
            line = f"  [{f.severity}] {f.what}"
            line += f" ({f.where})" if f.where else ""
            line += f" -> {f.fix}" if f.fix else ""
            lines.append(line)
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        # every field is escaped: names come from the user's data
        rows = "".join(
            f'<tr class="bbt-audit-{f.severity}"><td>{f.severity}</td><td>{html.escape(f.check)}'
            f"</td><td>{html.escape(f.what)}</td><td>{html.escape(f.where)}</td>"
            f"<td>{html.escape(f.fix)}</td></tr>"
            for f in self.findings
        )
        return (
            "<table><thead><tr><th>severity</th><th>check</th><th>what</th><th>where</th>"
            f"<th>fix</th></tr></thead><tbody>{rows}</tbody></table>"
        )


def audit(data: pd.DataFrame | TidyResults, **layout: Unpack[LayoutKeywords]) -> Audit:
    """Audit a results table before any fit.

    Parameters
    ----------
    data
        The results, exactly as for :func:`bbt_widget.fit` (a table, or the
        :class:`~bbt_widget.core.tidy.TidyResults` that
        :func:`~bbt_widget.core.data.tidy_results` read from it).
    **layout
        How to read them: :class:`~bbt_widget.core.tidy.LayoutKeywords`.

    Returns
    -------
    Audit
        Findings with severity, what, where and the fix: what reading the results changed
        (names merged, data sets left out), shape, missing results, the comparison graph
        (components, pairs that never met), folds shared by each pair, float-noise ties,
        mixed percent/fraction scales, suspicious columns (ID-like integers, constant
        columns), data sets where every algorithm scored the same, and duplicate keys.
        ``fit``'s own refusal, if any, is an ``error`` finding.
    """
    asked = Layout.from_keywords(layout)
    if isinstance(data, pd.DataFrame) and is_win_table(data):
        return Audit((Finding("info", "shape", "a ready win table: nothing to audit"),))
    try:
        tidy = as_tidy(data, **asked.as_dict())
    except (TypeError, ValueError) as err:
        found = [Finding("error", "input", f"fit refuses these data: {err}")]
        dataset, fold = asked.dataset, asked.fold
        if isinstance(data, pd.DataFrame) and asked.algorithm is None:
            found += _column_findings(data, dataset, fold)
            if not isinstance(data.columns, pd.MultiIndex):
                # the scales of the columns as given; integer columns (IDs, counts) have none
                floats = [
                    c
                    for c in data.columns
                    if c not in (dataset, fold) and pd.api.types.is_float_dtype(data[c])
                ]
                found += _mixed_scale((str(c), data[c].dropna()) for c in floats)
        return Audit(_ordered(found))
    return audit_validated(tidy)


def audit_validated(tidy: TidyResults) -> Audit:
    """The audit of results that ``tidy_results`` already accepted (what ``fit`` runs): the
    checks of raw wide columns read the table they came from (:attr:`TidyResults.source`)."""
    read, source = tidy.read_with, tidy.source
    raw: list[Finding] = []
    if source is not None and read.algorithm is None:  # the wide columns, as given
        raw = _column_findings(source, read.dataset, read.fold)
    return Audit(_ordered(raw + audit_tidy(tidy)))


def audit_tidy(tidy: TidyResults) -> list[Finding]:
    """The checks that need validated results (all but the raw-column checks), whatever the
    layout they were read from."""
    out = [Finding("warning", note.check, note.what, "", note.fix) for note in tidy.notes]
    out.append(_shape(tidy))
    out += _few_datasets(tidy)
    out += _missing(tidy)
    out += _mixed_scale(tidy.frame.groupby("algorithm", sort=False)["score"])
    out += _graph(tidy)
    out += _shared_folds(tidy)
    out += _float_noise(tidy)
    out += _all_equal(tidy)
    return out


def _ordered(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    return tuple(sorted(findings, key=lambda f: SEVERITIES.index(f.severity)))


def _names(items: Iterable[object], n: int = 6) -> str:
    # each name isolated: one that holds a bidi override cannot reverse the list after it
    names = [isolate(i) for i in items]
    shown = ", ".join(names[:n])
    return shown + (f" and {len(names) - n} more" if len(names) > n else "")


def _shape(tidy: TidyResults) -> Finding:
    folds = pd.Series(tidy.fold_counts.max(axis=1)).value_counts().sort_index(ascending=False)
    per = "; ".join(f"{counted(k, 'fold')} on {counted(n, 'data set')}" for k, n in folds.items())
    return Finding(
        "info",
        "shape",
        f"{len(tidy.algorithms)} algorithms, {len(tidy.datasets)} data sets ({per})",
    )


#: Fewer data sets than this get a warning: each pair then rests on a handful of wins, and
#: intervals over the data sets (bootstrap, order statistics) cannot reach their stated mass.
MIN_DATASETS = 5


def _few_datasets(tidy: TidyResults) -> list[Finding]:
    n = len(tidy.datasets)
    if n >= MIN_DATASETS:
        return []
    return [
        Finding(
            "warning",
            "few-datasets",
            f"only {counted(n, 'data set')}: every pair met at most {counted(n, 'time')}, so "
            "P(a > b) is set mostly by the prior, and intervals over the data sets cannot "
            "reach their stated mass",
            "",
            f"compare on at least {MIN_DATASETS} data sets (Wainer 2022 used 132); read these "
            "claims as tentative",
        )
    ]


def _missing(tidy: TidyResults) -> list[Finding]:
    counts = tidy.fold_counts
    out = []
    missing = np.argwhere(counts == 0)
    if len(missing):
        by_alg: dict[str, list[str]] = {}
        for d, a in missing:
            by_alg.setdefault(tidy.algorithms[a], []).append(tidy.datasets[d])
        where = "; ".join(f"{isolate(a)}: {_names(ds, 3)} ({len(ds)})" for a, ds in by_alg.items())
        out.append(
            Finding(
                "warning",
                "missing",
                f"{len(missing)} missing results (algorithm x data set)",
                where,
                "a missing result does not count for that pair on that data set; fill it in "
                "if it exists",
            )
        )
    full = counts.max(axis=1, keepdims=True)
    partial = np.argwhere((counts > 0) & (counts < full))
    if len(partial):
        where = _names(
            f"{isolate(tidy.algorithms[a])} on {isolate(tidy.datasets[d])} "
            f"({counts[d, a]} of {full[d, 0]})"
            for d, a in partial
        )
        out.append(
            Finding(
                "info",
                "missing",
                f"{counted(len(partial), 'result')} with fewer folds than others on the same "
                "data set",
                where,
                "means use the folds present; paired comparisons use the folds both have",
            )
        )
    return out


def _graph(tidy: TidyResults) -> list[Finding]:
    from .wintable import comparison_components, count_wins

    table = count_wins(tidy)  # who met whom: a win, a loss or a tie on some data set
    out = []
    groups = comparison_components(table, tidy.algorithms)
    if len(groups) > 1:
        out.append(
            Finding(
                "warning",
                "graph",
                f"the algorithms fall into {len(groups)} groups that never share a data set; "
                "pairs across groups are linked only by the prior and are 'not compared'",
                " | ".join(_names(g) for g in groups),
                "add results that put algorithms of different groups on common data sets",
            )
        )
    games = table["win1"] + table["win2"] + table["ties"]
    never = [
        f"{isolate(a)} - {isolate(b)}"
        for a, b in zip(table["alg1"][games == 0], table["alg2"][games == 0])
    ]
    if never:
        out.append(
            Finding(
                "warning",
                "graph",
                f"{counted(len(never), 'pair')} of algorithms never met on a data set",
                _names(never),
                "their P(a > b) rests on other pairs only",
            )
        )
    return out


def _shared_folds(tidy: TidyResults) -> list[Finding]:
    if not tidy.has_folds:
        return []
    present = np.isfinite(tidy.cube).astype(int)  # (dataset, algorithm, fold)
    counts = present.sum(axis=2)  # folds per (dataset, algorithm)
    both = np.einsum("dif,djf->dij", present, present)  # common folds per data set and pair
    met = (counts[:, :, None] > 0) & (counts[:, None, :] > 0)
    short = (met & (both < np.maximum(counts[:, :, None], counts[:, None, :]))).sum(axis=0)
    algs = tidy.algorithms
    i, j = np.nonzero(np.triu(short, k=1))
    fewer = [
        f"{isolate(algs[a])} - {isolate(algs[b])} on {counted(int(short[a, b]), 'data set')}"
        for a, b in zip(i, j)
    ]
    if not fewer:
        return [Finding("info", "folds", "every pair shares all of its folds on every data set")]
    return [
        Finding(
            "info",
            "folds",
            f"{counted(len(fewer), 'pair')} share fewer folds than they have on some data sets",
            _names(fewer),
            "the paired local ROPE uses only the folds both algorithms have (at least 2)",
        )
    ]


def _float_noise(tidy: TidyResults) -> list[Finding]:
    from .wintable import REL_TOL

    means = tidy.means
    algs = tidy.algorithms
    examples: list[str] = []
    count = 0
    for i in range(len(algs) - 1):
        mi, mj = means[:, [i]], means[:, i + 1 :]
        with np.errstate(invalid="ignore"):
            diff = np.abs(mi - mj)
            noise = (diff > 0) & (diff <= REL_TOL * np.maximum(np.abs(mi), np.abs(mj)))
        count += int(noise.sum())
        for d, k in np.argwhere(noise)[: _EXAMPLES - len(examples)]:
            examples.append(
                f"{isolate(algs[i])} - {isolate(algs[i + 1 + k])} on {isolate(tidy.datasets[d])} "
                f"(difference {diff[d, k]:.1e})"
            )
    if not count:
        return []
    return [
        Finding(
            "info",
            "float-noise",
            f"{counted(count, 'difference')} between means "
            + (
                "is floating-point noise and counts as a tie"
                if count == 1
                else "are floating-point noise and count as ties"
            ),
            "; ".join(examples),
            "nothing to do: the win table treats them as ties",
        )
    ]


def _all_equal(tidy: TidyResults) -> list[Finding]:
    # only data sets with two or more results: a row of NaN has no max (numpy would warn)
    rows = np.flatnonzero((tidy.fold_counts > 0).sum(axis=1) > 1)
    means = tidy.means[rows]
    spread = np.nanmax(means, axis=1) - np.nanmin(means, axis=1)
    scale = np.nanmax(np.abs(means), axis=1)
    same = [tidy.datasets[d] for d in rows[spread <= 1e-12 * scale]]
    if not same:
        return []
    return [
        Finding(
            "info",
            "all-equal",
            f"{counted(len(same), 'data set')} where every algorithm scored the same (all ties)",
            _names(same),
            "they add ties only; check they are not a copy or a failed run",
        )
    ]


def _mixed_scale(scores: Iterable[tuple[str, pd.Series]]) -> list[Finding]:
    """Algorithms whose scores look like fractions (at most 1) next to others that look like
    percentages (above 1, up to 100): ``scores`` are (algorithm, its scores as given), from
    the tidy frame in any layout (or from the columns of wide results that fit refuses).

    An algorithm whose scores are all whole numbers (counts, ranks, 0/1 outcomes) shows no
    fraction scale; percentages that happen to be whole (85, 90) still count as percentages
    when another algorithm has fractional scores.
    """
    fractions, percents = [], []
    for name, values in scores:
        top = float(values.abs().max()) if len(values) else np.nan
        if top <= 1.0 and not (values == np.round(values)).all():
            fractions.append(name)
        elif 1.0 < top <= 100.0:
            percents.append(name)
    if not fractions or not percents:
        return []
    return [
        Finding(
            "warning",
            "mixed-scale",
            "some algorithms have scores that look like fractions (at most 1) and others "
            "like percentages (up to 100)",
            f"fractions: {_names(map(repr, fractions), 4)}; percentages: "
            f"{_names(map(repr, percents), 4)}",
            "put every algorithm on the same scale (e.g. divide the percentages by 100)",
        )
    ]


def _column_findings(data: pd.DataFrame, dataset: str | None, fold: str | None) -> list[Finding]:
    """Checks on the raw wide columns, which the tidy form no longer shows."""
    out: list[Finding] = []
    if isinstance(data.columns, pd.MultiIndex):
        return out  # tidy_results reports it
    cols = [c for c in data.columns if c not in (dataset, fold)]
    numeric = [c for c in cols if pd.api.types.is_numeric_dtype(data[c])]
    for c in numeric:
        col = data[c]
        if pd.api.types.is_integer_dtype(col) and col.is_unique and len(col) > 2:
            out.append(
                Finding(
                    "warning",
                    "id-column",
                    f"column {c!r} holds integers unique to each row, like an ID or a seed, "
                    "not scores",
                    f"column {c!r}",
                    f"drop it before the analysis; if it names the data sets, pass dataset={c!r}",
                )
            )
        elif col.nunique(dropna=True) == 1 and len(col) > 1:
            out.append(
                Finding(
                    "warning",
                    "constant",
                    f"column {c!r} has the same value ({col.dropna().iloc[0]:g}) in every row",
                    f"column {c!r}",
                    "a constant column ties or wins everywhere; check it is an algorithm",
                )
            )
    return out
