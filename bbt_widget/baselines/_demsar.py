"""Demšar's procedure: Friedman test, then Nemenyi's critical difference (paper Sec. 7.1).

Ranks are computed per data set with 1 = best and average ranks for ties (scmamp's
``rankMatrix``, which made the paper's Table 13). The Nemenyi critical difference is
``q_alpha * sqrt(k (k + 1) / (6 N))`` with ``q_alpha`` the studentized-range quantile for
``k`` groups and infinite degrees of freedom divided by sqrt(2) (Demšar 2006), taken from
scipy rather than a table; two algorithms differ when their mean ranks differ by more
than the CD (strictly, as scmamp's ``nemenyiTest``).

With a control algorithm the comparison is Bonferroni-Dunn's (Demšar 2006, Sec. 3.2.2): only
the ``k - 1`` pairs with the control, the same standard error, and ``q_alpha`` the normal
quantile at ``1 - alpha / (2 (k - 1))`` (Demšar's Table 5(b): 2.498 for 5 algorithms at
alpha 0.05).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats

from ..core.data import TidyResults, as_tidy
from ..core.posterior import maximal_runs, ordered_pairs
from ..core.tidy import Unpack
from ._common import (
    Means,
    TableSummary,
    check_alpha,
    check_control,
    control_pairs,
    dataset_means,
    drop_warning_text,
    pair_frame,
)

if TYPE_CHECKING:  # typing.Unpack is Python 3.11; the checker knows it on 3.10 too
    from ..core.tidy import LayoutKeywords


class IncompleteBlocksWarning(UserWarning):
    """Data sets with a missing result were left out of a test that needs complete blocks."""


@dataclass(frozen=True)
class FriedmanResult:
    """Friedman's test that all algorithms have the same mean rank.

    Attributes
    ----------
    statistic, pvalue
        Friedman's chi-square (corrected for ties, as ``scipy.stats.friedmanchisquare``)
        with ``df = k - 1`` degrees of freedom, and its p-value (0 and 1 when every data
        set ties every algorithm, where the corrected statistic is undefined).
    df
        Degrees of freedom of the chi-square, ``k - 1``.
    iman_davenport, iman_davenport_pvalue
        Iman and Davenport's F form of the statistic, which Demšar (2006) recommends as
        less conservative, with ``(k - 1, (k - 1)(N - 1))`` degrees of freedom.
    mean_ranks
        Mean rank per algorithm (1 = best), best first.
    n_datasets
        Number of data sets used (complete blocks).
    dropped
        Data sets left out because some algorithm has no result on them.
    """

    statistic: float
    pvalue: float
    df: int
    iman_davenport: float
    iman_davenport_pvalue: float
    mean_ranks: pd.Series
    n_datasets: int
    dropped: tuple[str, ...]

    def summary(self) -> pd.DataFrame:
        """The test in one row: Friedman's statistic, p-value and degrees of freedom, Iman and
        Davenport's statistic and p-value, and the number of data sets."""
        return pd.DataFrame(
            [
                {
                    "statistic": self.statistic,
                    "pvalue": self.pvalue,
                    "df": self.df,
                    "iman_davenport": self.iman_davenport,
                    "iman_davenport_pvalue": self.iman_davenport_pvalue,
                    "n_datasets": self.n_datasets,
                }
            ]
        )


@dataclass(frozen=True)
class NemenyiResult(TableSummary):
    """Nemenyi's all-pairs comparison of mean ranks (Demšar's critical difference), or
    Bonferroni-Dunn's comparison of each algorithm with a control.

    Attributes
    ----------
    mean_ranks
        Mean rank per algorithm (1 = best), best first.
    cd
        The critical difference: mean ranks further apart than this differ significantly.
    q_alpha
        Studentized-range quantile divided by sqrt(2) (2.728 for 5 algorithms, alpha 0.05);
        with a control, the Bonferroni-Dunn normal quantile (2.498).
    alpha
        Significance level.
    n_datasets
        Number of data sets used (complete blocks).
    table
        One row per pair, best-ranked first (``"a > b"``: a has the better mean rank):
        ``pair, alg_a, alg_b, rank_a, rank_b, rank_diff`` (``rank_b - rank_a``),
        ``pvalue`` (from the studentized range; with a control, the two-sided normal p
        times ``k - 1``, capped at 1), ``significant`` (``rank_diff > cd``) and
        ``decision`` (``"a better"`` or ``"no claim"``; a frequentist test never claims
        equivalence). With a control, only the ``k - 1`` pairs that hold it.
    friedman
        The omnibus test on the same data sets (Demšar: look at the pairs only when it
        rejects).
    dropped
        Data sets left out because some algorithm has no result on them.
    control
        The control algorithm (Bonferroni-Dunn), or ``None`` (Nemenyi, every pair).
    """

    mean_ranks: pd.Series
    cd: float
    q_alpha: float
    alpha: float
    n_datasets: int
    table: pd.DataFrame
    friedman: FriedmanResult
    dropped: tuple[str, ...]
    control: str | None = None

    def groups(self) -> list[tuple[str, ...]]:
        """The bars of the CD diagram: algorithms joined by a bar are not significantly
        different.

        Without a control: the maximal runs of algorithms (in rank order) whose mean ranks
        are all within the CD. With one: a pair ``(control, x)`` for each algorithm ``x``
        not significantly different from the control, in rank order of ``x``.
        """
        return significance_groups(self.mean_ranks, self.table, self.control)


def friedman(
    data: pd.DataFrame | TidyResults,
    **layout: Unpack[LayoutKeywords],
) -> FriedmanResult:
    """Friedman's test on the per-data-set means (mean over folds).

    Parameters
    ----------
    data
        Results in any layout :func:`bbt_widget.win_table` accepts.
    **layout
        How to read the results: :class:`~bbt_widget.core.tidy.LayoutKeywords` (``sd`` is
        accepted and not used: the test uses only the means).

    Returns
    -------
    FriedmanResult
        ``statistic``, ``pvalue``, the Iman-Davenport F form, mean ranks and ``dropped``.

    Warns
    -----
    IncompleteBlocksWarning
        When data sets with a missing result had to be dropped.

    Examples
    --------
    >>> import bbt_widget as bbt
    >>> from bbt_widget.baselines import friedman
    >>> res = friedman(bbt.datasets.load_base(), dataset="db")
    >>> f"{res.statistic:.2f}, p = {res.pvalue:.1e}"
    '24.02, p = 7.9e-05'
    """
    means = dataset_means(as_tidy(data, **layout))
    complete, dropped = complete_blocks(means, "Friedman's test")
    return friedman_from_means(complete, dropped)


def nemenyi(
    data: pd.DataFrame | TidyResults,
    *,
    alpha: float = 0.05,
    control: str | None = None,
    **layout: Unpack[LayoutKeywords],
) -> NemenyiResult:
    """Nemenyi's test: mean ranks, the critical difference and which pairs differ; with a
    ``control``, Bonferroni-Dunn's test of the control against each other algorithm.

    Parameters
    ----------
    data
        Results in any layout :func:`bbt_widget.win_table` accepts.
    alpha
        Significance level of the critical difference.
    control
        An algorithm to compare with each other one only (the ``k - 1`` comparisons of a
        paper proposing one method): the critical difference is then Bonferroni-Dunn's,
        adjusted over ``k - 1`` tests instead of ``k (k - 1) / 2``. ``None``: every pair.
    **layout
        How to read the results: :class:`~bbt_widget.core.tidy.LayoutKeywords` (``sd`` is
        accepted and not used: the test uses only the means).

    Returns
    -------
    NemenyiResult
        ``mean_ranks``, ``cd``, the per-pair ``table``, the ``friedman`` result and
        ``dropped``; :func:`scores_cd_diagram` draws it.

    Raises
    ------
    ValueError
        ``control`` is not one of the algorithms.

    Warns
    -----
    IncompleteBlocksWarning
        When data sets with a missing result had to be dropped.
    """
    alpha = check_alpha(alpha)
    means = dataset_means(as_tidy(data, **layout))
    control = check_control(control, means.algorithms)
    test = "Nemenyi's test" if control is None else "Bonferroni-Dunn's test"
    complete, dropped = complete_blocks(means, test)
    return nemenyi_from_means(complete, dropped, alpha, control)


# --------------------------------------------------------------------------- on means


def complete_blocks(means: Means, test: str) -> tuple[Means, tuple[str, ...]]:
    """The complete data sets, warning about dropped ones and refusing too few."""
    k = len(means.algorithms)
    if k < 3:
        raise ValueError(
            f"{test} needs at least 3 algorithms, got {k} ({', '.join(means.algorithms)}); "
            "to compare two algorithms use wilcoxon_holm or bayesian_signed_rank"
        )
    complete, dropped = means.complete()
    if len(complete.datasets) < 2:
        missing = np.isnan(means.values).sum(axis=0)
        worst = means.algorithms[int(np.argmax(missing))]
        raise ValueError(
            f"{test} needs at least 2 data sets with a result for every algorithm, but only "
            f"{len(complete.datasets)} of {len(means.datasets)} have one; fill in the missing "
            f"results or leave out the algorithm missing most often ({worst!r}, "
            f"{int(missing.max())} data sets)"
        )
    if dropped:
        warnings.warn(
            drop_warning_text(test, dropped, len(complete.datasets)),
            IncompleteBlocksWarning,
            stacklevel=3,
        )
    return complete, dropped


def mean_ranks(means: Means) -> pd.Series:
    """Mean rank (1 = best, ties averaged) per algorithm over complete data sets, best first."""
    ranks = stats.rankdata(-means.values, axis=1).mean(axis=0)
    order = np.argsort(ranks, kind="stable")
    return pd.Series(
        ranks[order],
        index=pd.Index([means.algorithms[i] for i in order], name="algorithm"),
        name="mean_rank",
    )


def friedman_from_means(complete: Means, dropped: tuple[str, ...]) -> FriedmanResult:
    n, k = complete.values.shape
    if (complete.values == complete.values[:, :1]).all():
        # every data set ties every algorithm: the tie-corrected statistic is 0/0 (scipy
        # and R return NaN); there is no evidence of any difference
        chi2, p = 0.0, 1.0
    else:
        res = stats.friedmanchisquare(*complete.values.T)
        chi2, p = float(res.statistic), float(res.pvalue)
    # Iman-Davenport; chi2 == N (k - 1) means every data set ranks alike: F is infinite
    denom = n * (k - 1) - chi2
    f_stat = (n - 1) * chi2 / denom if denom > 0 else np.inf
    f_p = float(stats.f.sf(f_stat, k - 1, (k - 1) * (n - 1))) if denom > 0 else 0.0
    return FriedmanResult(
        statistic=chi2,
        pvalue=p,
        df=k - 1,
        iman_davenport=float(f_stat),
        iman_davenport_pvalue=f_p,
        mean_ranks=mean_ranks(complete),
        n_datasets=n,
        dropped=dropped,
    )


def nemenyi_from_means(
    complete: Means, dropped: tuple[str, ...], alpha: float, control: str | None = None
) -> NemenyiResult:
    n, k = complete.values.shape
    ranks = mean_ranks(complete)
    se = np.sqrt(k * (k + 1) / (6.0 * n))
    names = list(ranks.index)
    pairs = control_pairs(ordered_pairs(list(range(k))), names, control)
    table = pair_frame(names, pairs)
    r = ranks.to_numpy()
    table["rank_a"] = [r[i] for i, _ in pairs]
    table["rank_b"] = [r[j] for _, j in pairs]
    table["rank_diff"] = table["rank_b"] - table["rank_a"]
    z = table["rank_diff"].abs().to_numpy() / se
    if control is None:
        q_alpha = float(stats.studentized_range.ppf(1 - alpha, k, np.inf) / np.sqrt(2))
        # p of the studentized range statistic q = |dR| sqrt(2) / se (scikit-posthocs' form)
        p = stats.studentized_range.sf(z * np.sqrt(2), k, np.inf)
    else:
        # Bonferroni-Dunn: k - 1 two-sided z tests, Bonferroni-adjusted (Demšar 2006)
        q_alpha = float(stats.norm.ppf(1 - alpha / (2 * (k - 1))))
        p = (k - 1) * 2 * stats.norm.sf(z)
    table["pvalue"] = np.clip(p, 0.0, 1.0)
    cd = q_alpha * se
    table["significant"] = table["rank_diff"] > cd
    table["decision"] = np.where(table["significant"], "a better", "no claim")
    return NemenyiResult(
        mean_ranks=ranks,
        cd=float(cd),
        q_alpha=q_alpha,
        alpha=alpha,
        n_datasets=n,
        table=table,
        friedman=friedman_from_means(complete, dropped),
        dropped=dropped,
        control=control,
    )


def significance_groups(
    order: pd.Series, table: pd.DataFrame, control: str | None
) -> list[tuple[str, ...]]:
    """The bars of a CD diagram from a per-pair table with a ``significant`` column.

    Parameters
    ----------
    order
        The algorithms in the diagram's order (its index), best first.
    table
        ``alg_a``, ``alg_b`` and ``significant`` per tested pair.
    control
        ``None``: the maximal runs along ``order`` with no significant pair inside.
        Otherwise a pair ``(control, x)`` per algorithm not significantly different from
        the control.
    """
    names = [str(a) for a in order.index]
    differ = {
        frozenset((a, b))
        for a, b, s in zip(table["alg_a"], table["alg_b"], table["significant"])
        if bool(s)
    }
    if control is None:
        return maximal_runs(names, lambda i, j: frozenset((names[i], names[j])) in differ)
    return [(control, x) for x in names if x != control and frozenset((control, x)) not in differ]
