"""``ranking_model``: a Plackett-Luce model of the per-data-set rankings (Rojas-Delgado et
al. 2022, doi:10.1109/TEVC.2022.3208110).

Each data set ranks the algorithms by their mean score over folds, with the direction and
missing-data rules of :func:`bbt_widget.win_table`: scores are oriented by
``lower_is_better``; an algorithm without a result on a data set is left out of that
data set's ranking (the Plackett-Luce probability of a ranking of a subset is the model's
marginal on that subset, Luce's choice axiom); a data set with fewer than two results is
dropped. Means equal up to floating-point noise are ties (``win_table``'s tolerance).

Ties (``ties=``):

* ``"split"`` (default): a ranking with ties stands for all the orderings that break them,
  each with weight 1 / (their number); the log-likelihood of each ordering is multiplied by
  its weight. This is the ranking analogue of BBT's ``"spread"`` policy (a tie counts half a
  win each way): symmetric, no algorithm favoured, no randomness. When a ranking has more
  than :data:`MAX_SPLIT` orderings (e.g. ten algorithms all at accuracy 1.0), a seeded
  random sample of ``MAX_SPLIT`` of them stands in, each with weight ``1 / MAX_SPLIT``
  (an unbiased estimate of the split log-likelihood).
* ``"random"``: each tie broken at random (seeded), one ordering per data set, weight 1.

Model: Plackett-Luce with the Dirichlet prior on the normalised weights of paper 003
(Sec. III-B, "PLD", after Calvo et al.), ``theta ~ Dirichlet(prior, ..., prior)``, flat for
``prior=1`` (the paper's choice); ``theta_i`` is the probability that algorithm i is ranked
first (Sec. III-A). Summaries per posterior draw, then their mean and HDI:

* P(first) = theta_i;
* P(a ranked before b) = theta_a / (theta_a + theta_b) (exact);
* expected rank = 1 + sum_{j != i} theta_j / (theta_i + theta_j) (exact);
* P(top-k) for every k: Monte Carlo, rankings simulated from each draw (Gumbel keys);
* PPC: observed frequency of each (algorithm, rank) against the same frequency in
  rankings replicated from the posterior on the same data sets.

Layer: like :mod:`bbt_widget.baselines` (it uses their tie snapping), above the core.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from itertools import permutations, product
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from .. import engines
from ..core.checks import Diagnostics, draws_diagnostics
from ..core.data import TidyResults, tidy_results
from ..core.posterior import hdi_sorted
from ..core.validation import DEFAULT_SEED, _preview, check_count, check_hdi, check_seed
from ..engines.base import Draws, ProgressCallback
from ._common import snap_ties

MODELS = ("plackett-luce",)
TIE_RULES = ("split", "random")
#: Most orderings a tied ranking is split into before a random sample of them stands in.
MAX_SPLIT = 120
#: Rankings simulated per posterior draw for P(top-k) (Monte Carlo error <= 0.5 / sqrt(this
#: times the draws used)).
TOPK_SIMULATIONS = 200
#: Posterior draws used for P(top-k) and the PPC (evenly thinned).
SUMMARY_DRAWS = 1000


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


@dataclass(frozen=True)
class RankingModelResult:
    """A Plackett-Luce fit of the per-data-set rankings.

    Attributes
    ----------
    ranking
        Per algorithm, best first (by P(first)): ``algorithm``, ``p_first`` with its HDI
        ``p_first_low``, ``p_first_high``; ``expected_rank`` (1 = best) with its HDI
        ``rank_low``, ``rank_high``.
    top_k
        Tidy: ``algorithm, k, p, low, high`` for k = 1..n (P(algorithm in the top k)).
    before
        Tidy, one row per pair in ranking order: ``pair`` ("a > b"), ``alg_a``, ``alg_b``,
        ``p`` = P(a ranked before b), ``low``, ``high``.
    ppc
        Tidy: ``algorithm, rank, observed, predicted, low, high``: the share of data sets
        where the algorithm took that rank, observed and replicated (mean and HDI).
    diagnostics
        Convergence diagnostics of the Stan fit.
    draws
        The Stan draws (``theta``: chains x draws x algorithms).
    algorithms, datasets
        Input order; ``datasets`` are those ranked.
    dropped
        Data sets with fewer than two results (nothing to rank).
    settings
        Model, ties, prior, sampler settings.
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

    def compare(self, bbt: Any) -> pd.DataFrame:
        """P(best) and expected rank from BBT and from Plackett-Luce, tidy.

        ``bbt`` is a :class:`bbt_widget.BBTResult` (its ``ranking()`` gives ``p_best`` and
        ``expected_rank``) fitted on the same results. Columns: ``algorithm, model,
        p_best, expected_rank``.
        """
        theirs = bbt.ranking()
        missing = sorted(set(self.algorithms) - set(theirs["algorithm"]))
        if missing:
            raise ValueError(
                f"the BBT result does not rank {_preview(missing)}; fit it on the same results"
            )
        bbt_part = theirs[["algorithm", "p_best", "expected_rank"]].assign(model="BBT")
        pl_part = self.ranking.rename(columns={"p_first": "p_best"})[
            ["algorithm", "p_best", "expected_rank"]
        ].assign(model="Plackett-Luce")
        out = pd.concat([bbt_part, pl_part], ignore_index=True)
        return out[["algorithm", "model", "p_best", "expected_rank"]]

    def chart_top_k(self) -> alt.FacetChart:
        """P(top-k) per algorithm with HDIs, one panel per k (Rojas-Delgado et al. 2022,
        Fig. 3): every k below the number of algorithms up to :data:`TOP_K_PANELS` panels,
        else the k of :data:`TOP_K_SHOWN`; :data:`TOP_K_COLUMNS` panels a row."""
        order = list(self.ranking["algorithm"])
        ks = top_k_shown(len(order))
        frame = self.top_k[self.top_k["k"].isin(ks)]
        base = alt.Chart(frame).encode(
            x=alt.X("algorithm:N", sort=order, title=None),
        )
        bars = base.mark_rule().encode(y=alt.Y("low:Q", title="P(in top k)"), y2="high:Q")
        points = base.mark_point(filled=True).encode(
            y=alt.Y("p:Q", scale=alt.Scale(domain=[0, 1])),
            tooltip=["algorithm", "k", "p", "low", "high"],
        )
        return (
            alt.layer(bars, points)
            .properties(width=max(160, 14 * len(order)), height=160)
            .facet(
                facet=alt.Facet(
                    "k:O", title="top k", header=alt.Header(labelExpr="'top ' + datum.value")
                ),
                columns=TOP_K_COLUMNS,
            )
        )

    def chart_vs_bbt(self, bbt: Any) -> alt.HConcatChart:
        """Side by side: P(best) and expected rank from BBT and from Plackett-Luce."""
        frame = self.compare(bbt)
        order = list(self.ranking["algorithm"])
        color = alt.Color("model:N", title="model")
        best = (
            alt.Chart(frame)
            .mark_point(filled=True, size=60)
            .encode(
                y=alt.Y("algorithm:N", sort=order, title=None),
                x=alt.X("p_best:Q", title="P(best)", scale=alt.Scale(domain=[0, 1])),
                color=color,
                tooltip=["algorithm", "model", "p_best"],
            )
            .properties(title="P(best)", width=220)
        )
        rank = (
            alt.Chart(frame)
            .mark_point(filled=True, size=60)
            .encode(
                y=alt.Y("algorithm:N", sort=order, title=None),
                x=alt.X("expected_rank:Q", title="expected rank (1 = best)"),
                color=color,
                tooltip=["algorithm", "model", "expected_rank"],
            )
            .properties(title="expected rank", width=220)
        )
        return alt.hconcat(best, rank).properties(title="BBT vs Plackett-Luce")

    def chart_ppc(self) -> alt.FacetChart:
        """Observed rank frequencies (dots) against posterior-predictive HDIs (bars)."""
        base = alt.Chart(self.ppc).encode(x=alt.X("rank:O", title="rank"))
        bars = base.mark_rule(strokeWidth=4, opacity=0.5).encode(
            y=alt.Y("low:Q", title="share of data sets"), y2="high:Q"
        )
        dots = base.mark_point(filled=True, color="black").encode(y="observed:Q")
        return (
            alt.layer(bars, dots)
            .properties(width=140, height=100)
            .facet(facet=alt.Facet("algorithm:N", sort=list(self.ranking["algorithm"])), columns=4)
        )


#: A ranking model needs this many data sets that rank 2 or more algorithms.
MIN_RANKED_DATASETS = 2


def ranked_data_sets(tidy: TidyResults) -> tuple[np.ndarray, np.ndarray]:
    """The data sets' mean scores (equal up to floating-point noise snapped together) and,
    per data set, whether it ranks 2 or more algorithms: the data sets a ranking model uses."""
    means = snap_ties(tidy.means)
    return means, np.isfinite(means).sum(axis=1) >= 2


def ranking_model(
    data: pd.DataFrame,
    *,
    dataset: str | None = None,
    algorithm: str | None = None,
    fold: str | None = None,
    score: str | None = None,
    sd: pd.DataFrame | None = None,
    lower_is_better: bool = False,
    model: str = "plackett-luce",
    ties: str = "split",
    prior: float = 1.0,
    hdi: float = 0.89,
    engine: str = "auto",
    chains: int = 4,
    iter_warmup: int = 1000,
    iter_sampling: int = 1000,
    seed: int | None = DEFAULT_SEED,
    progress: ProgressCallback | None = None,
) -> RankingModelResult:
    """Fit a Plackett-Luce model to the rankings of the algorithms on each data set.

    Parameters
    ----------
    data
        Results in any layout :func:`bbt_widget.win_table` accepts (each data set is ranked
        by the mean over its folds).
    dataset, algorithm, fold, score, sd, lower_is_better
        How to read the results; see :func:`bbt_widget.core.data.tidy_results` (``sd`` is
        accepted and not needed).
    model
        ``"plackett-luce"`` (the only one so far).
    ties
        ``"split"`` (default) or ``"random"``; see the module documentation.
    prior
        Dirichlet concentration of every weight (paper 003: 1, flat).
    hdi
        Mass of the HDIs.
    engine, chains, iter_warmup, iter_sampling, seed, progress
        Stan settings; see :func:`bbt_widget.engines.sample`. ``seed`` also seeds the tie
        sampling and the Monte Carlo summaries.

    Returns
    -------
    RankingModelResult
        ``ranking``, ``top_k``, ``before``, ``ppc``, ``diagnostics``; ``compare(bbt)`` and
        the charts ``chart_top_k()``, ``chart_vs_bbt(bbt)``, ``chart_ppc()``.

    Raises
    ------
    ValueError
        Before any fit: an unknown model or tie rule, prior <= 0, fewer than 2 algorithms,
        fewer than 2 data sets with at least 2 results.
    """
    if model not in MODELS:
        raise ValueError(f"unknown model {model!r}; use one of {', '.join(map(repr, MODELS))}")
    if ties not in TIE_RULES:
        raise ValueError(f"unknown ties {ties!r}; use one of {', '.join(map(repr, TIE_RULES))}")
    if isinstance(prior, bool) or not isinstance(prior, (int, float, np.number)):
        raise TypeError(f"prior must be a number > 0 (Dirichlet concentration), got {prior!r}")
    if not (np.isfinite(prior) and prior > 0):
        raise ValueError(f"prior must be a finite number > 0 (paper 003: 1, flat); got {prior}")
    hdi = check_hdi(hdi)
    settings = {
        "chains": check_count(chains, "chains"),
        "iter_warmup": check_count(iter_warmup, "iter_warmup"),
        "iter_sampling": check_count(iter_sampling, "iter_sampling"),
        "seed": check_seed(seed),
    }
    tidy = tidy_results(
        data,
        dataset=dataset,
        algorithm=algorithm,
        fold=fold,
        score=score,
        sd=sd,
        lower_is_better=lower_is_better,
    )
    means, kept = ranked_data_sets(tidy)
    datasets = tuple(d for d, k in zip(tidy.datasets, kept) if k)
    dropped = tuple(d for d, k in zip(tidy.datasets, kept) if not k)
    if len(datasets) < MIN_RANKED_DATASETS:
        raise ValueError(
            f"need at least {MIN_RANKED_DATASETS} data sets where 2 or more algorithms have a "
            f"result to fit a ranking model; found {len(datasets)}"
        )
    rng = np.random.default_rng(settings["seed"])
    orders, weights = expand_rankings(means[kept], ties, rng)
    n_alg = len(tidy.algorithms)
    stan_data = pl_data(orders, weights, n_alg, prior)
    draws = engines.sample("plackett_luce", stan_data, engine=engine, progress=progress, **settings)
    theta = draws.params["theta"].reshape(-1, n_alg)
    diag = draws_diagnostics(draws, ["theta"])
    if not diag.ok:
        from ..core.fitting import DiagnosticsWarning

        warnings.warn(
            "Plackett-Luce fit diagnostics failed: " + "; ".join(diag.messages),
            DiagnosticsWarning,
            stacklevel=2,
        )
    names = list(tidy.algorithms)
    ranking = _ranking(theta, names, hdi)
    order = [names.index(a) for a in ranking["algorithm"]]
    thin = theta[np.linspace(0, len(theta) - 1, min(SUMMARY_DRAWS, len(theta))).astype(int)]
    return RankingModelResult(
        ranking=ranking,
        top_k=_top_k(thin, names, hdi, rng),
        before=_before(theta, names, order, hdi),
        ppc=_ppc(thin, names, orders, weights, np.isfinite(means[kept]), hdi, rng),
        diagnostics=diag,
        draws=draws,
        algorithms=tuple(names),
        datasets=datasets,
        dropped=dropped,
        settings=settings
        | {
            "model": model,
            "ties": ties,
            "prior": float(prior),
            "engine": draws.engine,
            "lower_is_better": tidy.lower_is_better,
        },
    )


def expand_rankings(
    means: np.ndarray, ties: str, rng: np.random.Generator
) -> tuple[list[np.ndarray], list[float]]:
    """Orderings (algorithm indices, best first) with their weights.

    ``means`` is (data sets, algorithms), higher is better, NaN for missing, ties already
    exact. Each data set gives its tied groups in decreasing order of mean.
    """
    orders, weights = [], []
    for values in means:
        idx = np.flatnonzero(np.isfinite(values))
        levels = np.unique(values[idx])[::-1]
        groups = [idx[values[idx] == v] for v in levels]
        count = math.prod(math.factorial(len(g)) for g in groups)
        if ties == "random" or count == 1:
            chosen = [np.concatenate([rng.permutation(g) for g in groups])]
        elif count <= MAX_SPLIT:
            chosen = [
                np.concatenate(p)
                for p in product(*(map(np.array, permutations(g)) for g in groups))
            ]
        else:
            chosen = [
                np.concatenate([rng.permutation(g) for g in groups]) for _ in range(MAX_SPLIT)
            ]
        orders.extend(chosen)
        weights.extend([1.0 / len(chosen)] * len(chosen))
    return orders, weights


def pl_data(
    orders: list[np.ndarray], weights: list[float], n_alg: int, prior: float
) -> dict[str, Any]:
    """The data of ``stan/plackett_luce.stan``: the rankings reduced to weighted counts.

    Position i of a ranking contributes ``log theta[o_i] - log(sum of theta over o_i..o_L)``;
    the last position contributes 0 and is skipped. Equal sets of remaining algorithms
    (frequent: every ordering of a split tie shares the sets outside the tie) are merged.
    """
    placed = np.zeros(n_alg)
    set_weight: dict[bytes, float] = {}
    for order, w in zip(orders, weights):
        mask = np.zeros(n_alg, dtype=np.uint8)
        for i in range(len(order) - 1, -1, -1):  # from the back: the remaining set grows
            mask[order[i]] = 1
            if i < len(order) - 1:
                placed[order[i]] += w
                key = mask.tobytes()
                set_weight[key] = set_weight.get(key, 0.0) + w
    sets = np.array([np.frombuffer(k, dtype=np.uint8) for k in set_weight], dtype=float)
    return {
        "n_alg": n_alg,
        "n_set": len(set_weight),
        "sets": sets.tolist(),
        "set_weight": list(set_weight.values()),
        "placed": placed.tolist(),
        "alpha": [float(prior)] * n_alg,
    }


def _summary(values: np.ndarray, hdi: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    low, high = hdi_sorted(np.sort(values, axis=0), hdi)
    return values.mean(axis=0), low, high


def _expected_ranks(theta: np.ndarray) -> np.ndarray:
    """Per draw, 1 + sum_j P(j before i) = 1 + sum_{j != i} theta_j / (theta_i + theta_j)."""
    before = theta[:, None, :] / (theta[:, :, None] + theta[:, None, :])  # [d, i, j]: j before i
    return 1.0 + before.sum(axis=2) - 0.5  # the j = i term is 1/2


def _ranking(theta: np.ndarray, names: list[str], hdi: float) -> pd.DataFrame:
    p, p_low, p_high = _summary(theta, hdi)
    r, r_low, r_high = _summary(_expected_ranks(theta), hdi)
    table = pd.DataFrame(
        {
            "algorithm": names,
            "p_first": p,
            "p_first_low": p_low,
            "p_first_high": p_high,
            "expected_rank": r,
            "rank_low": r_low,
            "rank_high": r_high,
        }
    )
    return table.sort_values("p_first", ascending=False, kind="stable").reset_index(drop=True)


def _simulated_positions(
    theta: np.ndarray, n_sim: int, rng: np.random.Generator, present: np.ndarray | None = None
) -> np.ndarray:
    """Positions (0 = first) of each algorithm in rankings drawn from PL(theta).

    Gumbel trick: sorting ``log theta + Gumbel noise`` in decreasing order draws a PL
    ranking. Shape (draws, n_sim, algorithms); absent algorithms (``present`` False, shape
    (n_sim, algorithms)) come last.
    """
    keys = np.log(theta)[:, None, :] + rng.gumbel(size=(len(theta), n_sim, theta.shape[1]))
    if present is not None:
        keys = np.where(present[None], keys, -np.inf)
    return np.argsort(np.argsort(-keys, axis=2, kind="stable"), axis=2, kind="stable")


def _top_k(
    theta: np.ndarray, names: list[str], hdi: float, rng: np.random.Generator
) -> pd.DataFrame:
    n = len(names)
    counts = np.zeros((len(theta), n, n))  # [draw, algorithm, position]
    for start in range(0, len(theta), 100):  # chunks keep the simulated keys small
        pos = _simulated_positions(theta[start : start + 100], TOPK_SIMULATIONS, rng)
        for p in range(n):
            counts[start : start + 100, :, p] = (pos == p).mean(axis=1)
    top = np.cumsum(counts, axis=2)  # P(position < k), monotone in k by construction
    rows = []
    for k in range(1, n + 1):
        p, low, high = _summary(top[:, :, k - 1], hdi)
        rows.append(pd.DataFrame({"algorithm": names, "k": k, "p": p, "low": low, "high": high}))
    return pd.concat(rows, ignore_index=True)


def _before(theta: np.ndarray, names: list[str], order: list[int], hdi: float) -> pd.DataFrame:
    rows = []
    for x, i in enumerate(order):
        for j in order[x + 1 :]:
            p, low, high = (
                float(v[0])
                for v in _summary((theta[:, i] / (theta[:, i] + theta[:, j]))[:, None], hdi)
            )
            rows.append(
                {
                    "pair": f"{names[i]} > {names[j]}",
                    "alg_a": names[i],
                    "alg_b": names[j],
                    "p": p,
                    "low": low,
                    "high": high,
                }
            )
    return pd.DataFrame(rows, columns=["pair", "alg_a", "alg_b", "p", "low", "high"])


def _ppc(
    theta: np.ndarray,
    names: list[str],
    orders: list[np.ndarray],
    weights: list[float],
    present: np.ndarray,
    hdi: float,
    rng: np.random.Generator,
) -> pd.DataFrame:
    """Share of data sets where each algorithm took each rank: observed vs replicated."""
    n_data, n = present.shape
    observed = np.zeros((n, n))
    for o, w in zip(orders, weights):
        observed[o, np.arange(len(o))] += w
    observed /= n_data
    replicated = np.zeros((len(theta), n, n))
    for start in range(0, len(theta), 100):
        pos = _simulated_positions(theta[start : start + 100], n_data, rng, present)
        for p in range(n):
            hit = (pos == p) & present[None]
            replicated[start : start + 100, :, p] = hit.sum(axis=1) / n_data
    rows = []
    for p in range(n):
        mean, low, high = _summary(replicated[:, :, p], hdi)
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
