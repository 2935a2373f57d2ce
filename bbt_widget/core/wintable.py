"""Tidy results -> win/loss/tie counts per pair of algorithms (paper Sec. 5.2, 6.1, 6.2).

Floating-point noise is not a win
---------------------------------
Two means that are equal up to the rounding of the stored fold scores differ by about
1e-16; the paper's Table 3a counts three such differences as wins. Here a difference counts
only when it exceeds :data:`REL_TOL` times the larger magnitude of the two means. In the
real data shipped with the package the noise is below 1e-15 and every real difference is
above 1e-7, so 1e-12 sits orders of magnitude from both (and still separates real
differences of 1e-6 on metrics as large as 1e6). The same tolerance applies to the
local-ROPE threshold: an effect size equal to ``d_min`` up to rounding is a tie, as Eq. 4/6
say (the real data has such a case: on threeOf9, lgbm vs svm has d = 1 exactly, and an sd
computed elsewhere, e.g. by ``DataFrame.std``, may differ in its last bit). Fold scores are
also sorted within each (data set, algorithm) before summing, so the order in which folds
are given never changes a table.

A tie threshold in score units
------------------------------
``tie_threshold`` makes a data set a tie when the two mean scores differ by no more than it
(score units, e.g. 0.005 = half a point of accuracy), whatever their spread; with ``d_min``
too, a data set is a tie when either rule says so. A difference equal to the threshold up to
the rounding of the means is a tie, as for ``d_min``: 0.805 - 0.8 is 0.0050000000000000044
in floating point and must not count as a win at ``tie_threshold=0.005``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .data import as_tidy
from .options import DEFAULT_TIES, TiePolicy
from .tidy import DataWarning, Layout, LayoutKeywords, TidyResults, Unpack
from .validation import (
    WIN_TABLE_COLUMNS,
    check_d_min,
    check_flag,
    check_tie_threshold,
    check_ties,
    check_win_table,
    is_win_table,
)

#: Relative tolerance below which two means are equal (see the module docstring).
REL_TOL = 1e-12


def snap_ties(values: np.ndarray, rel_tol: float = REL_TOL, abs_tol: float = 0.0) -> np.ndarray:
    """Make values of one row that differ by at most the tolerance exactly equal: the
    baselines' and the ranking models' per-data-set means tie where ``win_table`` counts a tie.

    The tolerance is ``rel_tol`` times the larger magnitude, or ``abs_tol`` if larger. Each
    value joins the group of the smallest value it is within tolerance of, so a group never
    spans more than one tolerance (no chaining).
    """
    out = values.copy()
    for row in out:
        finite = np.flatnonzero(np.isfinite(row))
        order = finite[np.argsort(row[finite], kind="stable")]
        anchor = None
        for i in order:
            v = row[i]
            if anchor is not None and v - anchor <= max(
                rel_tol * max(abs(v), abs(anchor)), abs_tol
            ):
                row[i] = anchor
            else:
                anchor = v
    return np.asarray(out)


def win_table(
    data: pd.DataFrame | TidyResults,
    *,
    d_min: float | None = None,
    paired: bool = True,
    ties: TiePolicy | None = DEFAULT_TIES,
    tie_threshold: float | None = None,
    **layout: Unpack[LayoutKeywords],
) -> pd.DataFrame:
    """Count wins, losses and ties for every pair of algorithms.

    Parameters
    ----------
    data
        Results in any layout accepted by :func:`bbt_widget.core.data.tidy_results`
        (wide means, wide by fold, long with ``algorithm=`` and ``score=``, means + ``sd``),
        the :class:`~bbt_widget.core.tidy.TidyResults` it returns, or a ready win table
        (columns ``alg1, alg2, win1, win2`` and optionally ``ties``), taken as given: only
        the tie policy applies to it.
    d_min
        ``None`` compares means. A number applies the local ROPE: a win counts only when
        the effect size exceeds ``d_min`` (Eq. 4 unpaired Cohen's d, Eq. 6 paired d_z).
        A data set with a single fold falls back to comparing means.
    paired
        Use the paired effect size d_z over fold differences; ``False`` uses Cohen's d with
        the root mean of the two variances. Paired, when an algorithm lacks some folds of a
        data set, each pair is compared on the folds both have (mean and SD of those
        differences, as a paired t-test drops incomplete pairs); with fewer than 2 common
        folds that pair counts as a missing result on that data set. Unpaired, an algorithm
        with a single fold on a data set has no spread to estimate: its variance is taken
        as 0 in Eq. 4, so the pooled SD is ``sqrt(s**2 / 2)`` with the other's variance
        ``s**2`` (two single folds compare means).
    ties
        ``"add"``, ``"spread"`` (ceil(t/2) to each side, the paper's choice), ``"forget"``,
        ``"davidson"`` (ties kept for the Davidson model) or ``None`` (raw counts).
    tie_threshold
        In score units: on a data set, two mean scores (over the folds) that differ by no
        more than it are a tie, before any local ROPE (with ``d_min`` too, a tie under
        either rule is a tie). ``None`` or 0 (default) counts every difference.
    **layout
        How to read the results: :class:`~bbt_widget.core.tidy.LayoutKeywords` (as for
        :func:`~bbt_widget.core.data.tidy_results`).

    Returns
    -------
    pandas.DataFrame
        One row per unordered pair, pairs in order of first appearance of the algorithms.
        ``alg1, alg2``; ``win1, win2, ties``: the counts given to the model, after the tie
        policy (spread: each side gets half of the ties, rounded up; add: every tie; forget:
        none; those three leave ``ties`` 0; davidson and ``None`` keep them); ``raw_win1,
        raw_win2, raw_ties``: the data sets where alg1 beat alg2, where alg2 beat alg1 and
        where neither won (after the local ROPE), before the tie policy.

    Warns
    -----
    DataWarning
        When reading the results merged names that differ only by surrounding whitespace or
        Unicode form, or left out data sets where fewer than two algorithms have a score.

    Examples
    --------
    >>> import bbt_widget as bbt
    >>> base = bbt.datasets.load_base()
    >>> bbt.win_table(base, dataset="db").head(2)
      alg1  alg2  win1  win2  ties  raw_win1  raw_win2  raw_ties
    0   dt   lda     7    14     0         6        13         1
    1   dt  lgbm     2    19     0         0        17         3
    """
    asked = Layout.from_keywords(layout)
    ties = check_ties(ties)
    raw, tidy = raw_counts(data, asked, d_min=d_min, paired=paired, tie_threshold=tie_threshold)
    for note in tidy.notes if tidy is not None else ():
        warnings.warn(str(note), DataWarning, stacklevel=2)
    return with_raw_counts(apply_ties(raw, ties), raw)


#: The raw-count columns :func:`with_raw_counts` adds, by the model-count column they match.
RAW_COLUMNS = {"win1": "raw_win1", "win2": "raw_win2", "ties": "raw_ties"}


def with_raw_counts(table: pd.DataFrame, raw: pd.DataFrame) -> pd.DataFrame:
    """``table`` (the counts given to the model, ``alg1, alg2, win1, win2, ties``) with the
    raw counts of the same pairs beside it: ``raw_win1, raw_win2, raw_ties`` (see
    :func:`win_table`). ``raw`` is the table before the tie policy; pairs are matched by
    name, in either orientation."""
    raw = check_win_table(raw)
    flipped = raw.rename(columns={"alg1": "alg2", "alg2": "alg1", "win1": "win2", "win2": "win1"})
    both = pd.concat([raw, flipped], ignore_index=True).drop_duplicates(["alg1", "alg2"])
    counts = both.set_index(["alg1", "alg2"])[list(RAW_COLUMNS)].rename(columns=RAW_COLUMNS)
    keys = pd.MultiIndex.from_arrays([table["alg1"].astype(str), table["alg2"].astype(str)])
    found = counts.reindex(keys)
    if found.isna().any().any():
        missing = keys[found.isna().any(axis=1).to_numpy()][0]
        raise ValueError(f"the raw counts have no pair {missing[0]!r} - {missing[1]!r}")
    out = table.reset_index(drop=True).copy()
    for col in RAW_COLUMNS.values():
        out[col] = found[col].to_numpy(dtype=np.int64)
    return out


def raw_counts(
    data: pd.DataFrame | TidyResults,
    layout: Layout,
    *,
    d_min: float | None = None,
    paired: bool = True,
    tie_threshold: float | None = None,
) -> tuple[pd.DataFrame, TidyResults | None]:
    """Raw counts (no tie policy) and the validated results they came from, read as
    ``layout`` says.

    A ready win table (columns ``alg1, alg2, win1, win2`` and optionally ``ties``) is
    checked and returned as given, with ``None`` for the results; the keywords that read
    and count raw results cannot apply to it and are refused.
    """
    d_min = check_d_min(d_min)
    paired = check_flag(paired, "paired")
    tie_threshold = check_tie_threshold(tie_threshold)
    if isinstance(data, pd.DataFrame) and is_win_table(data):
        given = {
            **layout.as_dict(),
            "d_min": d_min,
            "tie_threshold": tie_threshold or None,
        }
        extra = [k for k, v in given.items() if v is not None and k != "lower_is_better"]
        if extra or layout.lower_is_better:
            what = ", ".join(extra + (["lower_is_better"] if layout.lower_is_better else []))
            raise ValueError(
                f"data is a ready win table (alg1, alg2, win1, win2), so {what} cannot apply; "
                "pass the raw results instead to count wins with these settings"
            )
        return check_win_table(data), None
    tidy = as_tidy(data, **layout.as_dict())
    return count_wins(tidy, d_min=d_min, paired=paired, tie_threshold=tie_threshold), tidy


def comparison_components(table: pd.DataFrame, algorithms: Sequence[str]) -> list[list[str]]:
    """Groups of algorithms linked by games, largest first (ties broken by input order).

    Two algorithms are linked when they met on some data set (a win, a loss or a tie in the
    raw counts); a group is a connected component of that graph. Algorithms in different
    groups never met, directly or through others: only the prior relates their abilities.
    """
    parent = {a: a for a in algorithms}

    def root(a: str) -> str:
        while parent[a] != a:
            parent[a] = parent[parent[a]]  # path halving keeps the trees flat
            a = parent[a]
        return a

    games = table["win1"] + table["win2"] + table["ties"]
    for a, b in zip(table["alg1"][games > 0], table["alg2"][games > 0]):
        parent[root(a)] = root(b)
    groups: dict[str, list[str]] = {}
    for a in algorithms:
        groups.setdefault(root(a), []).append(a)
    return sorted(groups.values(), key=len, reverse=True)  # stable: input order among equals


def count_wins(
    tidy: TidyResults,
    *,
    d_min: float | None = None,
    paired: bool = True,
    tie_threshold: float | None = None,
) -> pd.DataFrame:
    """Raw win/loss/tie counts (no tie policy) from validated results (``d_min``, ``paired``
    and ``tie_threshold`` as for :func:`win_table`)."""
    counter = _Counter(tidy, d_min=d_min, paired=paired, tie_threshold=tie_threshold)
    algs = tidy.algorithms
    rows: list[tuple[str, str, int, int, int]] = []
    for i in range(len(algs) - 1):
        j = np.arange(i + 1, len(algs))
        present, first, second = counter.outcomes(i, j)
        w1, w2 = first.sum(axis=0), second.sum(axis=0)
        t = present.sum(axis=0) - w1 - w2
        rows.extend((algs[i], algs[k], int(a), int(b), int(c)) for k, a, b, c in zip(j, w1, w2, t))
    return pd.DataFrame(rows, columns=list(WIN_TABLE_COLUMNS))


#: What :func:`dataset_outcomes` says of a data set: the first algorithm won, the second
#: won, a tie, or no result for one of them there.
OUTCOMES = ("a wins", "b wins", "tie", "missing")


def dataset_outcomes(
    tidy: TidyResults,
    a: str,
    b: str,
    *,
    d_min: float | None = None,
    paired: bool = True,
    tie_threshold: float | None = None,
) -> pd.DataFrame:
    """How ``a`` and ``b`` compare on each data set, as :func:`count_wins` counts it.

    Parameters
    ----------
    tidy
        Validated results.
    a, b
        Two of its algorithms.
    d_min, paired, tie_threshold
        As for :func:`win_table` (``d_min=None``: the means decide, no local ROPE).

    Returns
    -------
    pandas.DataFrame
        One row per data set (``tidy.datasets`` order): ``dataset``, ``mean_a``,
        ``mean_b`` (mean scores over the folds, in the scores' own units: lower is better
        for ``lower_is_better`` results) and ``outcome``, one of :data:`OUTCOMES`.
        Its counts are the pair's row of :func:`count_wins`. Then what decided it:
        ``difference`` (the difference of means compared, positive when ``a`` is better;
        paired, over the folds both have), ``effect`` (the local ROPE's effect size,
        ``difference`` over the noise of Eq. 4 or Eq. 6; NaN without a local ROPE or a
        noise estimate, infinite when the folds agree exactly) and, for a tie, which rules
        make it one: ``equal`` (the means are equal up to their rounding), ``rope_tie``
        (the effect is within ``d_min``), ``threshold_tie`` (within the tie threshold).
    """
    algs = list(tidy.algorithms)
    for name in (a, b):
        if name not in algs:
            raise ValueError(f"{name!r} is not one of the algorithms {algs}")
    if a == b:
        raise ValueError(f"dataset_outcomes needs two different algorithms, got {a!r} twice")
    i, k = algs.index(a), algs.index(b)
    counter = _Counter(tidy, d_min=d_min, paired=paired, tie_threshold=tie_threshold)
    first_i, other = min(i, k), np.array([max(i, k)])
    c = counter.compare(first_i, other)
    present, first, second = (m[:, 0] for m in counter.decide(c))
    a_wins, b_wins = (first, second) if i < k else (second, first)
    outcome = np.select([~present, a_wins, b_wins], OUTCOMES[3:] + OUTCOMES[:2], OUTCOMES[2])
    sign = -1.0 if tidy.lower_is_better else 1.0  # the means as given, not as compared
    difference = c.difference[:, 0] * (1.0 if i < k else -1.0)
    gap = np.abs(difference)
    with np.errstate(invalid="ignore", divide="ignore"):
        tie = present & (outcome == OUTCOMES[2])
        return pd.DataFrame(
            {
                "dataset": list(tidy.datasets),
                "mean_a": sign * tidy.means[:, i],
                "mean_b": sign * tidy.means[:, k],
                "outcome": outcome.astype(object),
                "difference": difference,
                "effect": difference / c.noise[:, 0],
                "equal": tie & (gap <= c.rounding[:, 0]),
                "rope_tie": tie & (gap <= c.rope[:, 0]),
                "threshold_tie": tie & (gap <= c.score_threshold[:, 0]),
            }
        )


class _Counter:
    """Who wins on each data set: the one rule of :func:`count_wins` and
    :func:`dataset_outcomes` (means, their rounding, the local ROPE, the tie threshold)."""

    def __init__(
        self,
        tidy: TidyResults,
        *,
        d_min: float | None,
        paired: bool,
        tie_threshold: float | None,
    ) -> None:
        self.d_min = check_d_min(d_min)
        self.paired = check_flag(paired, "paired")
        self.tie_threshold = check_tie_threshold(tie_threshold)
        if self.d_min is not None:
            _check_local_rope(tidy, self.paired)
        self.raw = tidy.cube
        self.means, n = tidy.means, tidy.fold_counts
        given_sds = tidy.sd_matrix
        if given_sds is not None:
            self.sds = given_sds
        else:
            # a single fold has no spread to estimate: its variance counts as 0 in Eq. 4, so
            # the other algorithm's spread still counts (two single folds: compare means)
            self.sds = np.where(n > 1, _fold_sd(self.raw - self.means[:, :, None], n), 0.0)
        self.has_fold = np.isfinite(self.raw)

    def outcomes(self, i: int, j: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Algorithm ``i`` against each of ``j`` (data sets x len(j)): whether the pair has a
        result there, whether ``i`` won, whether the other one won (neither: a tie)."""
        return self.decide(self.compare(i, j))

    @staticmethod
    def decide(c: _Comparison) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`outcomes` from a comparison: a tie within the largest of its bounds."""
        threshold = np.fmax(np.fmax(c.rounding, c.rope), c.score_threshold)
        with np.errstate(invalid="ignore"):
            first = c.present & (c.difference > threshold)
            second = c.present & (-c.difference > threshold)
        return c.present, first, second

    def compare(self, i: int, j: np.ndarray) -> _Comparison:
        """What :meth:`outcomes` decides from, for algorithm ``i`` against each of ``j``."""
        d_min, means = self.d_min, self.means
        mi, mj = means[:, [i]], means[:, j]
        present = np.isfinite(mi) & np.isfinite(mj)
        diff = mi - mj
        rounding = REL_TOL * np.maximum(np.abs(mi), np.abs(mj))
        nothing = np.full(diff.shape, np.nan)
        noise, rope = nothing, nothing
        if d_min is not None:
            if self.paired:
                mean_d, noise, common = _paired_stats(self.raw, i, j)
                # folds that differ: compare on the folds both have, like a paired t-test
                # dropping incomplete pairs; fewer than 2 common folds is a missing result
                same = (self.has_fold[:, [i], :] == self.has_fold[:, j, :]).all(axis=2)
                diff = np.where(same, diff, mean_d)
                present &= same | (common >= 2)
            else:
                # hypot: the squares of SDs above ~1e154 would overflow to inf (all ties)
                noise = np.hypot(self.sds[:, [i]], self.sds[:, j]) / np.sqrt(2)
            # one fold (or a missing sd) leaves no noise estimate (NaN: compare means). An
            # effect equal to d_min up to rounding is a tie (Eq. 4/6: tie if diff <= d_min * sd)
            rope = np.where(np.isfinite(noise), d_min * noise * (1 + REL_TOL), np.nan)
        score_threshold = nothing
        if self.tie_threshold:
            # means no further apart than the threshold (up to their rounding) are a tie
            score_threshold = self.tie_threshold * (1 + REL_TOL) + rounding
        return _Comparison(present, diff, noise, rounding, rope, score_threshold)


@dataclass(frozen=True)
class _Comparison:
    """One algorithm against others, per data set (arrays of data sets x others): whether the
    pair has a result, the difference of means compared (better minus worse when positive;
    paired over the folds both have), the noise the local ROPE divides it by (Eq. 4 pooled
    SD or Eq. 6 SD of the differences; NaN without one) and the three bounds within which
    the difference is a tie: the rounding of the means, ``d_min`` times the noise and the
    tie threshold (NaN where a rule is off). The effect size of Eq. 4/6 is
    ``difference / noise``."""

    present: np.ndarray
    difference: np.ndarray
    noise: np.ndarray
    rounding: np.ndarray
    rope: np.ndarray
    score_threshold: np.ndarray


def _check_local_rope(tidy: TidyResults, paired: bool) -> None:
    if not tidy.has_folds and not tidy.has_sd:
        raise ValueError(
            "a local ROPE (d_min) needs fold-level scores or an sd table, but these results "
            "have one score per data set and algorithm; pass d_min=None to compare means, "
            "or give the fold scores (one row per fold) or sd="
        )
    if paired and not tidy.paired_ok:
        raise ValueError(f"paired local ROPE is not possible: {tidy.paired_problem}")


def _paired_stats(raw: np.ndarray, i: int, j: np.ndarray) -> tuple[np.ndarray, ...]:
    """Mean and SD (ddof=1) of the fold differences of algorithm i against each of j, and
    the number of folds both have, per data set.

    ``raw`` is the unsorted cube: fold k of one algorithm is paired with fold k of the
    other, and a fold missing for either drops out. The differences are sorted before
    summing so fold order cannot matter.
    """
    d = np.sort(raw[:, [i], :] - raw[:, j, :], axis=2)
    n = np.isfinite(d).sum(axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = np.nansum(d, axis=2) / n
    return m, np.where(n > 1, _fold_sd(d - m[:, :, None], n), np.nan), n


def _fold_sd(dev: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Sample SD (ddof=1) over the last axis from deviations from the mean (NaN = no fold).

    The squared deviations are sorted before summing, so fold order cannot matter. Squares of
    deviations above about 1e154 overflow to inf, which would make every comparison on that
    data set a tie; there the deviations are first divided by the largest of them (the SD
    scales with it). Elsewhere the plain formula is kept, bit for bit.
    """
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        plain = np.sqrt(np.nansum(np.sort(dev**2, axis=2), axis=2) / (n - 1))
        if np.isfinite(plain[n > 1]).all():
            return np.asarray(plain)
        scale = np.max(np.where(np.isfinite(dev), np.abs(dev), 0.0), axis=2)
        scale = np.where(scale > 0, scale, 1.0)
        unit = np.sort((dev / scale[..., None]) ** 2, axis=2)
        scaled = scale * np.sqrt(np.nansum(unit, axis=2) / (n - 1))
    return np.asarray(np.where(np.isfinite(plain), plain, scaled))


def apply_ties(table: pd.DataFrame, ties: str | None) -> pd.DataFrame:
    """Apply a tie policy to raw counts.

    ``add`` gives each tie to both sides, ``spread`` gives ceil(t/2) to each side (the
    paper's choice), ``forget`` drops ties; after these the ``ties`` column is 0.
    ``davidson`` and ``None`` keep the ties.
    """
    ties = check_ties(ties)
    out = check_win_table(table)
    t = out["ties"]
    if ties == "add":
        out["win1"] += t
        out["win2"] += t
    elif ties == "spread":
        half = (t + 1) // 2
        out["win1"] += half
        out["win2"] += half
    if ties in ("add", "spread", "forget"):
        out["ties"] = 0
    return out
