"""Fold-level differences of two algorithms and the correlation of cross-validation.

The correlated t-tests (Benavoli et al. 2017, Sec. 3 and 4.3) work on the differences
``x = score_b - score_a`` fold by fold, on the folds both algorithms have, oriented so that
higher is better (``lower_is_better`` flips the scores first, as :func:`win_table` does): a
negative mean says *a* is better, which is the *left* side of every table here (Benavoli's
and baycomp's convention, as in :func:`bayesian_signed_rank`).

The results of overlapping training sets are correlated. Nadeau and Bengio's heuristic
(Benavoli et al. 2017, Eq. 1-2) sets the correlation to ``rho = n_test / n_total``, i.e.
``1 / k`` for k-fold cross-validation whatever the number of runs. (Sec. 4.3 writes
``n_te / n_tr`` once; that is a slip: Eq. 1-2, Sec. 3 and the worked example with
rho = 1/10 use ``n_te / n_tot``.)
``k`` is known only when the layout says which rows belong to which run: with ``run=``
(the column numbering the repetitions) and ``fold=`` (the fold within a run) it is the number
of folds per run of each data set; otherwise ``rho=`` must be given.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ..core.data import TidyResults, as_tidy
from ..core.tidy import Layout
from ..core.validation import _preview, check_algorithms

#: Column name given to the run x fold key (never a user column: it starts with a NUL).
_RUN_FOLD = "\x00run:fold"


@dataclass(frozen=True)
class FoldDifferences:
    """Per data set, the fold differences ``b - a`` and the correlation ``rho``.

    Attributes
    ----------
    a, b
        The pair: negative differences favour ``a``.
    datasets
        Data sets with at least two common folds, in input order.
    diffs
        One array of differences per data set (its common folds, in sorted fold order).
    rho
        Correlation per data set (``1 / k``, or the value given).
    dropped
        Data sets where both algorithms have a result but fewer than two common folds.
    lower_is_better
        Whether the scores were flipped before differencing.
    """

    a: str
    b: str
    datasets: tuple[str, ...]
    diffs: tuple[np.ndarray, ...]
    rho: np.ndarray
    dropped: tuple[str, ...]
    lower_is_better: bool

    @property
    def n(self) -> np.ndarray:
        """Number of common folds per data set."""
        return np.array([len(x) for x in self.diffs], dtype=int)

    @property
    def mean(self) -> np.ndarray:
        """Mean difference per data set."""
        return np.array([x.mean() for x in self.diffs])

    @property
    def sd(self) -> np.ndarray:
        """Sample standard deviation (``ddof=1``) per data set."""
        return np.array([x.std(ddof=1) for x in self.diffs])


def check_rope_width(rope: float) -> float:
    """Validate a ROPE half-width on the scores' scale: a finite number > 0."""
    if isinstance(rope, bool) or not isinstance(rope, (int, float, np.number)):
        raise TypeError(f"rope must be a number > 0 on the scores' scale, e.g. 0.01; got {rope!r}")
    if not (np.isfinite(rope) and rope > 0):
        raise ValueError(
            f"rope must be a finite number > 0 (half-width of [-rope, rope] on the scores' "
            f"scale, e.g. 0.01 for one point of accuracy); got {rope}"
        )
    return float(rope)


def check_rho(rho: float | None) -> float | None:
    """Validate a correlation in (0, 1), or ``None`` (infer it from ``run=``)."""
    if rho is None:
        return None
    if isinstance(rho, bool) or not isinstance(rho, (int, float, np.number)):
        raise TypeError(f"rho must be a number in (0, 1), e.g. 0.1 for 10 folds; got {rho!r}")
    if not 0.0 < rho < 1.0:
        raise ValueError(
            f"rho must lie strictly between 0 and 1 (Nadeau and Bengio: n_test / n_total, "
            f"i.e. 1/k for k-fold cross-validation, e.g. 0.1); got {rho}"
        )
    return float(rho)


@dataclass(frozen=True)
class FoldResults:
    """Validated fold-level results and, when ``run=`` was given, k per data set."""

    tidy: TidyResults
    folds_per_run: dict[str, int] | None
    rho: float | None


def fold_results(
    data: pd.DataFrame | TidyResults, layout: Layout, *, run: str | None, rho: float | None
) -> FoldResults:
    """Read the results as ``layout`` says (``tidy_results`` does every check), the folds of
    each run of ``run=`` combined, and validate the fold information.

    Raises
    ------
    ValueError
        No fold-level scores, ``run=`` without ``fold=``, or no way to know ``rho`` (the
        message says to pass ``rho=`` or ``run=``).
    """
    if layout.sd is not None:
        raise ValueError(
            "the correlated t-tests need fold-level scores; an sd= table gives only means and "
            "standard deviations: pass the results of every fold instead"
        )
    rho = check_rho(rho)
    folds_per_run = None
    if run is not None:
        data, fold, folds_per_run = _combine_run_and_fold(data, layout.dataset, layout.fold, run)
        layout = replace(layout, fold=fold)
    try:
        tidy = as_tidy(data, **layout.as_dict())
    except ValueError as exc:
        text = str(exc)
        if run is None and layout.fold is not None and ("duplicate" in text or "two rows" in text):
            # repeated cross-validation numbers its folds again in every run
            raise ValueError(
                f"{text}; if the fold numbers start again in each run of repeated "
                "cross-validation, pass run='<column numbering the runs>' as well"
            ) from None
        raise
    if not tidy.has_folds:
        raise ValueError(
            "the correlated t-tests need fold-level scores (several results per data set and "
            "algorithm); these results have one score per data set: use "
            "bayesian_signed_rank for per-data-set means"
        )
    if rho is None and folds_per_run is None:
        raise ValueError(
            "rho, the correlation of results from overlapping training sets, is unknown: "
            "pass rho=1/k for k-fold cross-validation (e.g. rho=0.1 for 10 folds, whatever "
            "the number of runs), or run='<column numbering the repetitions>' together with "
            "fold='<column numbering the folds within a run>' so that k can be counted"
        )
    return FoldResults(tidy, folds_per_run, rho)


def pair_differences(results: FoldResults, a: str, b: str) -> FoldDifferences:
    """The fold differences ``b - a`` per data set, on the folds both have."""
    tidy = results.tidy
    if isinstance(a, str) and a == b:
        raise ValueError(f"a and b are the same algorithm ({a!r}); name two different ones")
    a, b = check_algorithms([a, b], tidy.algorithms, "a/b")
    ia, ib = tidy.algorithms.index(a), tidy.algorithms.index(b)
    diff = tidy.cube[:, ib, :] - tidy.cube[:, ia, :]
    kept, dropped, diffs = [], [], []
    for name, row, has_a, has_b in zip(
        tidy.datasets, diff, tidy.fold_counts[:, ia] > 0, tidy.fold_counts[:, ib] > 0
    ):
        x = row[np.isfinite(row)]
        if len(x) >= 2:
            kept.append(name)
            diffs.append(x)
        elif has_a and has_b:
            dropped.append(name)
    if results.rho is not None:
        rhos = np.full(len(kept), results.rho)
    else:
        k = results.folds_per_run or {}
        rhos = 1.0 / np.array([k[d] for d in kept], dtype=float)
    return FoldDifferences(
        a, b, tuple(kept), tuple(diffs), rhos, tuple(dropped), tidy.lower_is_better
    )


def fold_differences(
    data: pd.DataFrame | TidyResults,
    layout: Layout,
    *,
    a: str,
    b: str,
    run: str | None,
    rho: float | None,
) -> FoldDifferences:
    """:func:`fold_results` then :func:`pair_differences` for one pair."""
    return pair_differences(fold_results(data, layout, run=run, rho=rho), a, b)


def _combine_run_and_fold(
    data: pd.DataFrame | TidyResults, dataset: str | None, fold: str | None, run: str
) -> tuple[pd.DataFrame, str, dict[str, int]]:
    """One fold key per (run, fold), and the number of folds per run of each data set."""
    if isinstance(data, TidyResults):
        raise ValueError(
            f"run={run!r} combines the run and fold columns of a table, but these results "
            "were already read (a TidyResults), so each of their folds is one already; pass "
            "rho=1/k instead of run=, or pass the DataFrame with run= and fold="
        )
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"results must be a pandas DataFrame, got {type(data).__name__}")
    for role, col in (("run", run), ("fold", fold), ("dataset", dataset)):
        if col is not None and col not in data.columns:
            raise ValueError(
                f"{role}={col!r} is not a column of the results; columns are "
                f"{_preview(map(str, data.columns))}"
            )
    if fold is None:
        raise ValueError(
            f"run={run!r} needs fold= as well: the column numbering the folds within each run"
        )
    if data[run].isna().any() or data[fold].isna().any():
        col = run if data[run].isna().any() else fold
        raise ValueError(f"the column {col!r} has missing values; number every run and fold")
    names = (data[dataset] if dataset is not None else data.index.to_series()).astype(str)
    keys = pd.DataFrame(
        {"dataset": names.to_numpy(), "run": data[run].astype(str).to_numpy()}
    ).assign(fold=data[fold].astype(str).to_numpy())
    per_run = keys.groupby(["dataset", "run"], sort=False)["fold"].nunique()
    k = per_run.groupby(level="dataset", sort=False).max()
    if (k < 2).any():
        bad = k[k < 2].index[0]
        raise ValueError(
            f"data set {bad!r} has a single fold per run, so rho = 1/k is undefined; "
            "cross-validation needs k >= 2 folds (or pass rho=)"
        )
    combined = data.assign(**{_RUN_FOLD: keys["run"].to_numpy() + "\x1f" + keys["fold"].to_numpy()})
    if dataset is None:
        combined.index = data.index
    return combined.drop(columns=[run, fold]), _RUN_FOLD, {d: int(v) for d, v in k.items()}
