"""What the ranking models (Plackett-Luce, Mallows) share: the per-data-set means they rank,
posterior summaries, and their results' base (:class:`RankingResult`: the tables, the
comparison with BBT and the charts).

Both models read the results as :func:`bbt_widget.win_table` does (direction, tolerance,
missing data) and rank the algorithms of each data set by their mean score over folds; a
data set with fewer than two results is dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from ..core.bidi import pair_label
from ..core.data import MIN_RANKED_DATASETS, TidyResults, as_tidy
from ..core.diagnostics import Diagnostics
from ..core.draws import Draws
from ..core.posterior import hdi_sorted
from ..core.precision import mcse
from ..core.validation import _preview
from ..core.wintable import snap_ties
from ._settling import RankingClaims

if TYPE_CHECKING:  # the charts import Altair where drawn: fitting a ranking model needs none
    import altair as alt

__all__ = ["RankedMeans", "RankingResult", "ranked_means", "summarise", "top_k_shown"]


@dataclass(frozen=True)
class RankedMeans:
    """The means a ranking model ranks: ``means`` (kept data sets x algorithms, higher is
    better, ties exact, NaN for no result), with the names and the data sets dropped."""

    means: np.ndarray
    algorithms: tuple[str, ...]
    datasets: tuple[str, ...]
    dropped: tuple[str, ...]
    lower_is_better: bool


def ranked_data_sets(tidy: TidyResults) -> tuple[np.ndarray, np.ndarray]:
    """The data sets' mean scores (equal up to floating-point noise snapped together) and,
    per data set, whether it ranks 2 or more algorithms: the data sets a ranking model uses."""
    return snap_ties(tidy.means), tidy.ranked


def ranked_means(data: pd.DataFrame | TidyResults, **layout: Any) -> RankedMeans:
    """Read ``data`` with ``layout`` (dataset, algorithm, fold, score, sd, lower_is_better;
    see :func:`bbt_widget.core.data.tidy_results`) into the means each data set ranks.

    Raises
    ------
    ValueError
        Fewer than :data:`MIN_RANKED_DATASETS` data sets where 2 or more algorithms have a
        result (and every error of ``tidy_results``, e.g. fewer than 2 algorithms).
    """
    tidy = as_tidy(data, **layout)
    means, kept = ranked_data_sets(tidy)
    datasets = tuple(d for d, k in zip(tidy.datasets, kept) if k)
    if len(datasets) < MIN_RANKED_DATASETS:
        raise ValueError(
            f"need at least {MIN_RANKED_DATASETS} data sets where 2 or more algorithms have a "
            f"result to fit a ranking model; found {len(datasets)}"
        )
    return RankedMeans(
        means=means[kept],
        algorithms=tuple(tidy.algorithms),
        datasets=datasets,
        dropped=tuple(d for d, k in zip(tidy.datasets, kept) if not k),
        lower_is_better=tidy.lower_is_better,
    )


#: The top-k chart shows every k (below the number of algorithms) up to this many panels ...
TOP_K_PANELS = 6
#: ... else only these k: the first places and a few broader cuts.
TOP_K_SHOWN = (1, 2, 3, 5, 10)
#: Panels per row of the top-k chart.
TOP_K_COLUMNS = 3


def top_k_shown(n_algorithms: int) -> list[int]:
    """The k the top-k chart shows for ``n_algorithms`` (top-n is 1 for everyone)."""
    every = list(range(1, n_algorithms))
    return every if len(every) <= TOP_K_PANELS else [k for k in TOP_K_SHOWN if k < n_algorithms]


def summarise(values: np.ndarray, hdi: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and HDI of each column of ``values`` (draws along axis 0)."""
    low, high = hdi_sorted(np.sort(values, axis=0), hdi)
    return values.mean(axis=0), low, high


def ranking_table(
    names: list[str],
    p_first: np.ndarray,
    expected_rank: np.ndarray,
    hdi: float,
    chains: int,
) -> pd.DataFrame:
    """The ``ranking`` table from draws (along axis 0: ``chains`` chains one after the other)
    of each algorithm's probability of ranking first and of its expected rank: mean and HDI
    of both, and the Monte Carlo standard error of each mean (``mcse_p_first``,
    ``mcse_expected_rank``, with the chains' effective sample size), best first."""
    p, p_low, p_high = summarise(p_first, hdi)
    r, r_low, r_high = summarise(expected_rank, hdi)
    errors = {
        f"mcse_{name}": [mcse(column.reshape(chains, -1)) for column in draws.T]
        for name, draws in (("p_first", p_first), ("expected_rank", expected_rank))
    }
    table = pd.DataFrame(
        {
            "algorithm": names,
            "p_first": p,
            "p_first_low": p_low,
            "p_first_high": p_high,
            "expected_rank": r,
            "rank_low": r_low,
            "rank_high": r_high,
            **errors,
        }
    )
    return table.sort_values("p_first", ascending=False, kind="stable").reset_index(drop=True)


def top_k_table(names: list[str], positions: np.ndarray, hdi: float) -> pd.DataFrame:
    """The ``top_k`` table (``algorithm, k, p, low, high``) from ``positions``
    [draw, algorithm, place]: each draw's probability of each place."""
    top = np.minimum(np.cumsum(positions, axis=2), 1.0)  # P(place < k), monotone in k
    rows = []
    for k in range(1, len(names) + 1):
        p, low, high = summarise(top[:, :, k - 1], hdi)
        rows.append(pd.DataFrame({"algorithm": names, "k": k, "p": p, "low": low, "high": high}))
    return pd.concat(rows, ignore_index=True)


def before_table(
    names: list[str],
    order: list[int],
    p_before: Callable[[int, int], np.ndarray],
    hdi: float,
) -> pd.DataFrame:
    """The ``before`` table: for each pair ``i`` ahead of ``j`` in ``order``, the mean and
    HDI of the draws ``p_before(i, j)`` of P(i ranks before j)."""
    rows = []
    for x, i in enumerate(order):
        for j in order[x + 1 :]:
            p, low, high = (float(v[0]) for v in summarise(p_before(i, j)[:, None], hdi))
            rows.append(
                {
                    "pair": pair_label(names[i], names[j]),
                    "alg_a": names[i],
                    "alg_b": names[j],
                    "p": p,
                    "low": low,
                    "high": high,
                }
            )
    return pd.DataFrame(rows, columns=["pair", "alg_a", "alg_b", "p", "low", "high"])


def ppc_table(
    names: list[str], observed: np.ndarray, replicated: np.ndarray, hdi: float
) -> pd.DataFrame:
    """The ``ppc`` table: per algorithm and rank, the observed share of data sets
    (``observed`` [algorithm, rank]) against the replicated one (``replicated`` [draw,
    algorithm, rank]: mean and HDI)."""
    rows = []
    for p in range(len(names)):
        mean, low, high = summarise(replicated[:, :, p], hdi)
        rows.append(
            pd.DataFrame(
                {
                    "algorithm": names,
                    "rank": p + 1,
                    "observed": observed[:, p],
                    "predicted": mean,
                    "low": low,
                    "high": high,
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


@dataclass(frozen=True)
class RankingResult(RankingClaims):
    """What the result of a ranking model (Plackett-Luce, Mallows) holds, its claims
    (:class:`._settling.RankingClaims`), ``compare(bbt)`` and its charts.

    Attributes
    ----------
    ranking
        Per algorithm, best first (by P(first), the probability of being ranked first on a
        new data set): ``algorithm``, ``p_first`` with its HDI ``p_first_low``,
        ``p_first_high``; ``expected_rank`` (1 = best) with its HDI ``rank_low``,
        ``rank_high``; ``mcse_p_first`` and ``mcse_expected_rank``: the Monte Carlo standard
        errors of the two means; ``settled``: whether the algorithm is ahead of the next
        row's at 3 Monte Carlo standard errors of their gap in P(first) (False: the two are
        tied at this precision, :meth:`unsettled` names them).
    top_k
        Tidy: ``algorithm, k, p, low, high`` for k = 1..n (P(algorithm in the top k)).
    before
        Tidy, one row per pair in ranking order: ``pair`` ("a > b"), ``alg_a``, ``alg_b``,
        ``p`` = P(a ranked before b), ``low``, ``high``.
    ppc
        Tidy: ``algorithm, rank, observed, predicted, low, high``: the share of data sets
        where the algorithm took that rank, observed and replicated (mean and HDI).
    diagnostics
        Convergence diagnostics of the fit.
    draws
        The posterior draws.
    algorithms, datasets
        Input order; ``datasets`` are those ranked.
    dropped
        Data sets with fewer than two results (nothing to rank).
    settings
        Model, ties, prior, the sampler and its settings; ``draws`` (the mode), ``rounds``,
        ``chains_drawn`` and ``total_draws`` (kept draws in all).
    """

    ranking: pd.DataFrame
    top_k: pd.DataFrame
    before: pd.DataFrame
    ppc: pd.DataFrame
    diagnostics: Diagnostics
    draws: Draws
    algorithms: tuple[str, ...]
    datasets: tuple[str, ...]
    dropped: tuple[str, ...]
    settings: dict[str, Any] = field(default_factory=dict)

    #: The model's name in the charts and in ``compare``.
    model_label: ClassVar[str] = "ranking model"

    def compare(self, bbt: Any) -> pd.DataFrame:
        """P(best) and expected rank from BBT and from this model, tidy.

        ``bbt`` is a :class:`bbt_widget.BBTResult` (its ``ranking()`` gives ``p_best`` and
        ``expected_rank``) fitted on the same results. Columns: ``algorithm, model,
        p_best, expected_rank``; this model's P(best) is its P(first). The two models' rows
        hold different quantities under one name (BBT: the ability is the largest; this
        model: ranked first on a new data set): compare their orderings, not their values,
        as :meth:`chart_vs_bbt` does.
        """
        theirs = bbt.ranking()
        missing = sorted(set(self.algorithms) - set(theirs["algorithm"]))
        if missing:
            raise ValueError(
                f"the BBT result does not rank {_preview(missing)}; fit it on the same results"
            )
        bbt_part = theirs[["algorithm", "p_best", "expected_rank"]].assign(model="BBT")
        own = self.ranking.rename(columns={"p_first": "p_best"})[
            ["algorithm", "p_best", "expected_rank"]
        ].assign(model=self.model_label)
        out = pd.concat([bbt_part, own], ignore_index=True)
        return out[["algorithm", "model", "p_best", "expected_rank"]]

    def chart_top_k(self) -> alt.FacetChart:
        """P(top-k) per algorithm with HDIs, one panel per k (Rojas-Delgado et al. 2022,
        Fig. 3): every k below the number of algorithms up to :data:`TOP_K_PANELS` panels,
        else the k of :data:`TOP_K_SHOWN`; :data:`TOP_K_COLUMNS` panels a row."""
        import altair as alt

        from ..charts.encodings import inline_rows

        order = list(self.ranking["algorithm"])
        ks = top_k_shown(len(order))
        frame = self.top_k[self.top_k["k"].isin(ks)]
        base = alt.Chart(inline_rows(frame)).encode(
            x=alt.X("algorithm:N", sort=order, title=None),
        )
        bars = base.mark_rule().encode(y=alt.Y("low:Q", title="P(in top k)"), y2=alt.Y2("high:Q"))
        points = base.mark_point(filled=True).encode(
            y=alt.Y("p:Q", scale=alt.Scale(domain=[0, 1])),
            tooltip=[alt.Tooltip(f) for f in ("algorithm:N", "k:Q", "p:Q", "low:Q", "high:Q")],
        )
        # sizes given as the layer is made: .properties() would copy both layers again
        return alt.layer(bars, points, width=max(160, 14 * len(order)), height=160).facet(
            facet=alt.Facet(
                "k:O", title="top k", header=alt.Header(labelExpr="'top ' + datum.value")
            ),
            columns=TOP_K_COLUMNS,
        )

    def chart_vs_bbt(self, bbt: Any) -> alt.HConcatChart:
        """BBT's P(highest ability) and expected rank beside this model's P(ranked first on
        a new data set) and expected rank, each on its own axis: different quantities
        (:func:`._vs_bbt.chart_vs_bbt`)."""
        from ._vs_bbt import chart_vs_bbt

        return chart_vs_bbt(self, bbt)

    def chart_ppc(self) -> alt.FacetChart:
        """Observed rank frequencies (dots) against posterior-predictive HDIs (bars)."""
        import altair as alt

        from ..charts.encodings import inline_rows

        base = alt.Chart(inline_rows(self.ppc)).encode(x=alt.X("rank:O", title="rank"))
        bars = base.mark_rule(strokeWidth=4, opacity=0.5).encode(
            y=alt.Y("low:Q", title="share of data sets"), y2=alt.Y2("high:Q")
        )
        dots = base.mark_point(filled=True, color="black").encode(y=alt.Y("observed:Q"))
        return alt.layer(bars, dots, width=140, height=100).facet(
            facet=alt.Facet("algorithm:N", sort=list(self.ranking["algorithm"])), columns=4
        )
