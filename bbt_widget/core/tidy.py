"""Results in one tidy, validated form, and how they were read.

:class:`TidyResults` holds them, :class:`Layout` the keywords they were read with (which
every public function that reads results takes as its ``**layout``, typed and documented once
by :class:`LayoutKeywords`), and :class:`ReadingNote` and :class:`DataWarning` what reading
them changed. The readers that build them from a table are in :mod:`bbt_widget.core.data`.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Any, NamedTuple, TypedDict

# at run time too, so that typing.get_type_hints resolves the public functions' **layout
if sys.version_info >= (3, 11):
    from typing import Unpack as Unpack
else:  # pragma: no cover - Python 3.10
    from typing_extensions import Unpack as Unpack

# at run time too, so that typing.get_type_hints resolves the public functions' **layout
if sys.version_info >= (3, 11):
    pass
else:  # pragma: no cover - Python 3.10
    pass

import numpy as np
import pandas as pd

#: A ranking model needs this many data sets that rank 2 or more algorithms
#: (:attr:`TidyResults.ranked`).
MIN_RANKED_DATASETS = 2


class DataWarning(UserWarning):
    """Something in the results may make a result mislead: names that were merged or data
    sets left out when the results were read, or a warning of the data audit (missing
    results, mixed scales, ...).

    ``fit`` issues one per warning of its audit, ``win_table`` one per note of the reading;
    silence them with ``warnings.simplefilter("ignore", bbt_widget.DataWarning)``.
    """


class ReadingNote(NamedTuple):
    """What reading the results changed in them: raw names merged, data sets left out.

    Attributes
    ----------
    check
        Short name, as for an audit finding: ``"names"`` or ``"no-comparison"``.
    what, fix
        What was done, and what to do if it is not what was meant.
    """

    check: str
    what: str
    fix: str

    def __str__(self) -> str:
        return f"{self.what}; {self.fix}"


class LayoutKeywords(TypedDict, total=False):
    """The six layout keywords: how a results table is read. Every public function that takes
    results accepts them (``win_table``, ``audit``, ``sweep``, ``calibration``, the baselines,
    the ranking models, ...) as its ``**layout``, with the meaning and defaults of
    :func:`~bbt_widget.core.data.tidy_results`, where they are documented in full; a keyword
    that is none of them is a ``TypeError`` naming it. With results already read (a
    :class:`TidyResults`) they may be left out.

    Attributes
    ----------
    dataset
        Column naming the data sets (``None``, the default: the index).
    algorithm, score
        Long form: the columns of the algorithm names and of the scores (both or neither).
    fold
        Column numbering the folds (long form, or wide by fold).
    sd
        Wide means only: the table of each mean's standard deviation over its folds.
    lower_is_better
        ``True`` for errors, times, RMSE (default ``False``).
    """

    dataset: str | None
    algorithm: str | None
    fold: str | None
    score: str | None
    sd: pd.DataFrame | None
    lower_is_better: bool


@dataclass(frozen=True, eq=False)
class Layout:
    """How a results table is read: the six :class:`LayoutKeywords` that every entry point
    taking results accepts (``fit``, ``win_table``, ``audit``, ``sweep``, the baselines, ...).

    Attributes
    ----------
    dataset, algorithm, fold, score, sd, lower_is_better
        As for :func:`~bbt_widget.core.data.tidy_results`. ``sd`` is the table itself
        (compared by identity).
    """

    dataset: str | None = None
    algorithm: str | None = None
    fold: str | None = None
    score: str | None = None
    sd: pd.DataFrame | None = None
    lower_is_better: bool = False

    @classmethod
    def from_keywords(cls, keywords: Mapping[str, Any]) -> Layout:
        """The layout that the :class:`LayoutKeywords` ``keywords`` (a function's
        ``**layout``) say. Any other keyword is a TypeError naming it, as Python raises for
        a keyword a function does not take."""
        unknown = [k for k in keywords if k not in LAYOUT_KEYS]
        if unknown:
            raise TypeError(
                f"unexpected keyword argument {unknown[0]!r}: neither a parameter of this "
                f"function nor a layout keyword ({', '.join(LAYOUT_KEYS)})"
            )
        return cls(**keywords)

    def as_dict(self) -> dict[str, Any]:
        """The keywords, as :func:`~bbt_widget.core.data.tidy_results` takes them."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def record(self) -> dict[str, Any]:
        """The keywords as a fit's settings record them: ``sd`` is whether one was given."""
        return {**self.as_dict(), "sd": self.sd is not None}

    def given(self) -> tuple[str, ...]:
        """The keywords set to something other than their default."""
        return tuple(f.name for f in fields(self) if getattr(self, f.name) is not f.default)


#: The layout keywords, in their order (the keys of a fit's settings that say how its
#: results were read).
LAYOUT_KEYS = tuple(f.name for f in fields(Layout))


@dataclass(frozen=True)
class TidyResults:
    """Validated results in one internal form.

    Attributes
    ----------
    frame
        Columns ``dataset``, ``algorithm``, ``fold`` (int), ``score`` (float, as given) and,
        for means + sd input, ``sd``. Only finite scores are kept: a missing result is a
        missing row.
    algorithms
        Algorithm names in order of first appearance.
    datasets
        Names of the data sets that give a comparison (at least two algorithms with a
        score), in order of first appearance.
    lower_is_better
        Whether smaller scores are better (errors, times, RMSE).
    notes
        What reading the results changed: raw names merged by
        :func:`~bbt_widget.core.names.clean_name`, data sets left out (see
        ``dropped_datasets``).
    dropped_datasets
        Data sets left out because fewer than two algorithms have a score there.
    layout
        How the results were read (``None`` when built by hand: then only
        ``lower_is_better`` is known, see :attr:`read_with`).
    source
        The table they were read from, not copied (the audit's checks of raw wide columns,
        and a group column, read it); ``None`` when built by hand.
    """

    frame: pd.DataFrame
    algorithms: tuple[str, ...]
    datasets: tuple[str, ...]
    lower_is_better: bool = False
    notes: tuple[ReadingNote, ...] = ()
    dropped_datasets: tuple[str, ...] = ()
    layout: Layout | None = field(default=None, repr=False)
    source: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def read_with(self) -> Layout:
        """How these results were read: :attr:`layout`, or for results built by hand the
        default layout with their ``lower_is_better``."""
        if self.layout is not None:
            return self.layout
        return Layout(lower_is_better=self.lower_is_better)

    @property
    def has_sd(self) -> bool:
        """Whether a per-cell standard deviation was given (means + sd input)."""
        return "sd" in self.frame.columns

    @cached_property
    def n_folds(self) -> int:
        """The largest number of folds of any (data set, algorithm)."""
        return int(self.frame["fold"].max()) + 1 if len(self.frame) else 0

    @property
    def has_folds(self) -> bool:
        """Whether some data set and algorithm has more than one fold score (so a local ROPE
        can use them). Counted from the scores present, not from fold labels: wide input
        with holes and long input without those rows must agree."""
        return bool((self.fold_counts > 1).any())

    @cached_property
    def cube(self) -> np.ndarray:
        """Scores as an array (dataset, algorithm, fold), oriented so higher is better.

        NaN marks a missing result. Folds are sorted within each cell so that sums do not
        depend on the order in which folds were given (reordering never changes a table).
        """
        f = self.frame
        di = pd.Index(self.datasets).get_indexer(f["dataset"])
        ai = pd.Index(self.algorithms).get_indexer(f["algorithm"])
        cube = np.full((len(self.datasets), len(self.algorithms), max(self.n_folds, 1)), np.nan)
        sign = -1.0 if self.lower_is_better else 1.0
        cube[di, ai, f["fold"].to_numpy()] = sign * f["score"].to_numpy(dtype=float)
        return cube

    @cached_property
    def fold_counts(self) -> np.ndarray:
        """Number of finite fold scores per (dataset, algorithm)."""
        return np.asarray(np.isfinite(self.cube).sum(axis=2))

    @cached_property
    def means(self) -> np.ndarray:
        """Mean over folds per (dataset, algorithm), oriented so higher is better; NaN when
        missing. Folds are summed in sorted order, so the mean never depends on their order."""
        n = self.fold_counts
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n > 0, np.nansum(np.sort(self.cube, axis=2), axis=2) / n, np.nan)

    @property
    def ranked(self) -> np.ndarray:
        """Per data set, whether 2 or more algorithms have a result: the data sets that a
        ranking model (Plackett-Luce, Mallows) ranks (it needs :data:`MIN_RANKED_DATASETS`)."""
        return np.asarray(np.isfinite(self.means).sum(axis=1) >= 2)

    @cached_property
    def sd_matrix(self) -> np.ndarray | None:
        """Given standard deviations as an array (dataset, algorithm), or None."""
        if not self.has_sd:
            return None
        f = self.frame
        di = pd.Index(self.datasets).get_indexer(f["dataset"])
        ai = pd.Index(self.algorithms).get_indexer(f["algorithm"])
        out = np.full((len(self.datasets), len(self.algorithms)), np.nan)
        out[di, ai] = f["sd"].to_numpy(dtype=float)
        return out

    @cached_property
    def paired_problem(self) -> str:
        """Why paired local ROPE cannot be used ('' when it can).

        Folds that differ between algorithms are no obstacle: each pair is compared on the
        folds both have (see :attr:`fold_mismatch_datasets`).
        """
        if self.has_sd:
            return (
                "an sd table gives no fold-level scores, so the local ROPE can only be "
                "unpaired: pass paired=False"
            )
        if not self.has_folds:
            return "there are no fold-level scores (one result per data set and algorithm)"
        return ""

    @property
    def paired_ok(self) -> bool:
        """Whether paired local ROPE applies (some data set has fold-level scores)."""
        return not self.paired_problem

    @cached_property
    def fold_mismatch_datasets(self) -> tuple[str, ...]:
        """Data sets whose algorithms do not all have the same folds.

        There a paired local ROPE compares each pair on the folds both have, as a paired
        t-test drops incomplete pairs; an algorithm missing a whole data set is no mismatch.
        """
        present = np.isfinite(self.cube)  # (dataset, algorithm, fold)
        has_any = present.any(axis=2)
        out = []
        for d, name in enumerate(self.datasets):
            rows = present[d][has_any[d]]
            if len(rows) > 1 and not (rows == rows[0]).all():
                out.append(name)
        return tuple(out)
