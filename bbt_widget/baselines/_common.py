"""Shared plumbing of the baselines: per-data-set means, pair order, decisions, options.

Every baseline works on one number per (data set, algorithm): the mean over folds, oriented
so that higher is better. Means that are equal up to floating-point noise are made exactly
equal first (the rule of :data:`bbt_widget.core.wintable.REL_TOL`), so that a rank tie or a zero
difference here is the same tie that :func:`bbt_widget.win_table` counts. Without this, two
algorithms with identical fold scores in a different order could differ by 1e-16, which
changes ranks by 0.5 and moves the Wilcoxon test between its exact and normal forms.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.bidi import pair_label
from ..core.data import TidyResults, as_tidy
from ..core.posterior import ordered_pairs
from ..core.validation import _preview, check_algorithms
from ..core.wintable import REL_TOL, snap_ties

#: The decision vocabulary shared with :meth:`bbt_widget.BBTResult.summary`.
DECISIONS = ("a better", "equivalent", "no claim", "b better")


class TableSummary:
    """``summary()`` of a result whose per-pair (or per-data-set) answer is its ``table``:
    every result of the package answers ``summary()`` with a DataFrame."""

    table: pd.DataFrame

    def summary(self) -> pd.DataFrame:
        """The result's table (the same frame as ``table``)."""
        return self.table


@dataclass(frozen=True)
class Means:
    """Per-data-set means, oriented so that higher is better; NaN marks a missing result."""

    values: np.ndarray
    algorithms: tuple[str, ...]
    datasets: tuple[str, ...]
    lower_is_better: bool

    def subset(self, algorithms: Iterable[str]) -> Means:
        """Only these algorithms (in this order); data sets left with none are kept as NaN.
        A single name (a string) is one algorithm, not its letters."""
        names = check_algorithms(algorithms, self.algorithms, "algorithms")
        idx = [self.algorithms.index(a) for a in names]
        return Means(self.values[:, idx], tuple(names), self.datasets, self.lower_is_better)

    def complete(self) -> tuple[Means, tuple[str, ...]]:
        """Keep the data sets where every algorithm has a result; also return the dropped ones."""
        ok = np.isfinite(self.values).all(axis=1)
        dropped = tuple(d for d, k in zip(self.datasets, ok) if not k)
        kept = tuple(d for d, k in zip(self.datasets, ok) if k)
        return Means(self.values[ok], self.algorithms, kept, self.lower_is_better), dropped

    def medians(self) -> pd.Series:
        """Median over data sets per algorithm, on the scores' own scale, best first."""
        with np.errstate(all="ignore"):
            med = np.nanmedian(self.values, axis=0)
        order = np.argsort(-med, kind="stable")  # stable: equal medians keep input order
        sign = -1.0 if self.lower_is_better else 1.0
        return pd.Series(
            sign * med[order],
            index=pd.Index([self.algorithms[i] for i in order], name="algorithm"),
            name="median",
        )


def dataset_means(
    data: pd.DataFrame | TidyResults,
    *,
    dataset: str | None,
    algorithm: str | None,
    fold: str | None,
    score: str | None,
    sd: pd.DataFrame | None,
    lower_is_better: bool,
) -> Means:
    """Validate the results (``tidy_results`` does every check) and average the folds."""
    tidy = as_tidy(
        data,
        dataset=dataset,
        algorithm=algorithm,
        fold=fold,
        score=score,
        sd=sd,
        lower_is_better=lower_is_better,
    )
    return Means(snap_ties(tidy.means), tidy.algorithms, tidy.datasets, tidy.lower_is_better)


def noise_level(values: np.ndarray) -> float:
    """Floating-point noise of a difference of these means: relative to the means themselves
    (a difference of 1e-16 between two means near 0.9 is noise, however small it is)."""
    finite = np.abs(values[np.isfinite(values)])
    return REL_TOL * float(finite.max()) if finite.size else 0.0


def pair_frame(names: Sequence[str], pairs: Sequence[tuple[int, int]]) -> pd.DataFrame:
    """The leading columns of every per-pair table: ``pair`` ("a > b"), ``alg_a``, ``alg_b``."""
    a = [names[i] for i, _ in pairs]
    b = [names[j] for _, j in pairs]
    return pd.DataFrame({"pair": [pair_label(x, y) for x, y in zip(a, b)], "alg_a": a, "alg_b": b})


def selected_pairs(
    means: Means, a: str | None, b: str | None
) -> tuple[list[str], list[tuple[int, int]]]:
    """The algorithms and pairs (indices into them) a pairwise test compares.

    Without ``a`` and ``b``: every pair, the algorithms ordered by median and each pair read
    ``"a > b"`` with a the higher median (the paper's Table 15). With both: only ``(a, b)``,
    in the order given (*left* means ``a`` is better).
    """
    if a is None and b is None:
        names = list(means.medians().index)
        return names, ordered_pairs(list(range(len(names))))
    if a is None or b is None:
        raise ValueError(
            "name both algorithms of the pair (a= and b=), or neither to test every pair"
        )
    if isinstance(a, str) and a == b:
        raise ValueError(f"a and b are the same algorithm ({a!r}); name two different ones")
    return check_algorithms([a, b], means.algorithms, "a/b"), [(0, 1)]


def find_pair(table: pd.DataFrame, a: str | None, b: str | None) -> tuple[pd.Series, bool]:
    """The row of a per-pair table for ``{a, b}`` and whether it reads ``b > a`` (swapped).

    ``a`` and ``b`` may be left out when the table has a single row.
    """
    if a is None and b is None:
        if len(table) == 1:
            return table.iloc[0], False
        raise ValueError(
            f"this result holds {len(table)} pairs: name one with a= and b= "
            f"(e.g. a={table['alg_a'].iloc[0]!r}, b={table['alg_b'].iloc[0]!r})"
        )
    for swapped, (x, y) in ((False, (a, b)), (True, (b, a))):
        hit = table[(table["alg_a"] == x) & (table["alg_b"] == y)]
        if len(hit):
            return hit.iloc[0], swapped
    names = pd.unique(pd.concat([table["alg_a"], table["alg_b"]]))
    raise ValueError(
        f"no test of {a!r} vs {b!r} in this result; its algorithms are {_preview(names, 20)}"
    )


def check_control(control: str | None, algorithms: Sequence[str]) -> str | None:
    """Validate the control algorithm of an all-versus-control comparison (``None``: all
    pairs)."""
    if control is None:
        return None
    if not isinstance(control, str) or control not in algorithms:
        raise ValueError(
            f"control {control!r} is not an algorithm of these results; choose one of "
            f"{_preview(algorithms, 20)}, or leave control out to compare every pair"
        )
    return control


def control_pairs(
    pairs: Sequence[tuple[int, int]], names: Sequence[str], control: str | None
) -> list[tuple[int, int]]:
    """The pairs that hold the control (all of them without one)."""
    if control is None:
        return list(pairs)
    c = list(names).index(control)
    return [p for p in pairs if c in p]


def drop_warning_text(test: str, dropped: Sequence[str], n_kept: int) -> str:
    return (
        f"{test} needs a result of every algorithm on every data set: dropped "
        f"{len(dropped)} data set(s) with a missing result ({_preview(dropped)}); "
        f"{n_kept} remain"
    )


# --------------------------------------------------------------------------- options


def check_alpha(alpha: float) -> float:
    """Validate a significance level in (0, 1)."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.number)):
        raise TypeError(f"alpha must be a number in (0, 1), e.g. 0.05; got {alpha!r}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie strictly between 0 and 1 (e.g. 0.05); got {alpha}")
    return float(alpha)


def check_positive(value: float, name: str, example: str) -> float:
    """Validate a finite number > 0 (``>= 0`` is checked by the caller when 0 is allowed)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        raise TypeError(f"{name} must be a number, e.g. {example}; got {value!r}")
    if not np.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0 (e.g. {example}); got {value}")
    return float(value)


def check_choice(value: str, name: str, choices: Sequence[str]) -> str:
    """Validate one of a few named options."""
    if value not in choices:
        raise ValueError(
            f"unknown {name} {value!r}; use one of {', '.join(repr(c) for c in choices)}"
        )
    return value
