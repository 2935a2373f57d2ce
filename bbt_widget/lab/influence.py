"""Which data sets drive each claim: leave-one-data-set-out by importance sampling.

Leaving data set ``d`` out changes the win table from ``W`` to ``W - W_d`` (its games, counted
with the same local ROPE, then the same tie policy). The posterior without it is the full
posterior reweighted by

    log w(draw) = log p(W - W_d | draw) - log p(W | draw),

which needs no refit. Pareto-smoothed importance sampling (ArviZ's ``psislw``) stabilises the
weights and its shape estimate ``k`` says when they cannot be trusted: where ``k > 0.7`` the
model is refitted without ``d`` through :mod:`bbt_widget.lab.batch` (local cores or Dask). The
likelihood is the one in ``stan/``: binomial (Eq. 2) after the spread/add/forget policies,
multinomial (Davidson, Eq. 7) with ties; the count coefficients cancel in the weights.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..core import posterior
from ..core.draws import ProgressCallback
from ..core.group_result import GroupedBBTResult
from ..core.options import DEFAULT_ROPE, Rule
from ..core.result import BBTResult
from ..core.run_context import RunContext
from ..core.tidy import TidyResults
from ..core.validation import WIN_TABLE_COLUMNS, check_interpretation, check_rope
from ..core.wintable import apply_ties, count_wins
from .batch import FitRequest, check_executor, run_batch

if TYPE_CHECKING:
    import altair as alt

#: PSIS reliability threshold (Vehtari et al. 2024): above it, refit exactly.
K_THRESHOLD = 0.7
#: Leaving one data set out needs at least one other.
MIN_DATASETS = 2
_COUNTS = list(WIN_TABLE_COLUMNS[2:])  # win1, win2, ties


def data_set_counts(
    tidy: TidyResults, d_min: float | None, paired: bool, tie_threshold: float | None = None
) -> np.ndarray:
    """Raw win/loss/tie counts contributed by each data set: shape (datasets, pairs, 3).

    Counted by :func:`~bbt_widget.core.wintable.count_wins` on each data set alone, so the local
    ROPE and the tie threshold are applied exactly as in the full table (which is their sum),
    pairs in its order.
    """
    count: dict[str, Any] = {"d_min": d_min, "paired": paired, "tie_threshold": tie_threshold}
    return np.stack(
        [
            count_wins(tidy_subset(tidy, [name]), **count)[_COUNTS].to_numpy()
            for name in tidy.datasets
        ]
    )


def tidy_subset(tidy: TidyResults, datasets: Sequence[str]) -> TidyResults:
    """The same results restricted to some data sets; every algorithm is kept (so win tables
    of subsets have the same pairs in the same order as the full one)."""
    keep = tidy.frame["dataset"].isin(set(datasets))
    return TidyResults(
        tidy.frame[keep].reset_index(drop=True),
        tidy.algorithms,
        tuple(d for d in tidy.datasets if d in set(datasets)),
        tidy.lower_is_better,
    )


def _log_probs(result: BBTResult, alg1: list[str], alg2: list[str]) -> list[np.ndarray]:
    """Per draw and pair, log P(win1), log P(win2) (and log P(tie) under Davidson)."""
    idx = {a: k for k, a in enumerate(result.algorithms)}
    b1 = result.beta[:, [idx[a] for a in alg1]]
    b2 = result.beta[:, [idx[a] for a in alg2]]
    if result.settings["ties"] != "davidson":
        x = b1 - b2
        return [-np.logaddexp(0.0, -x), -np.logaddexp(0.0, x)]
    nu = result.draws.params["nu"].reshape(-1, 1)
    eta_tie = nu + 0.5 * (b1 + b2)
    norm = np.logaddexp(np.logaddexp(b1, b2), eta_tie)
    return [b1 - norm, b2 - norm, eta_tie - norm]


#: The summary's columns that :func:`_summaries` estimates, in its order.
_ESTIMATES = ("mean", "above_50", "in_rope")


def _summaries(
    weights: np.ndarray, p: np.ndarray, rope: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weighted mean, above_50 and in_rope of P(a > b): (sets, pairs) each.

    The same events as :func:`bbt_widget.core.posterior.summarise` (p >= 0.5; low <= p <= high).
    """
    mean = weights @ p
    above = weights @ (p >= 0.5).astype(float)
    in_rope = weights @ ((p >= rope[0]) & (p <= rope[1])).astype(float)
    return mean, above, in_rope


def _exact(
    result: BBTResult,
    request: FitRequest,
    alg_a: list[str],
    alg_b: list[str],
    rope: tuple[float, float],
) -> np.ndarray:
    """A refit without one data set, reduced to (mean, above_50, in_rope) per pair."""
    idx = {a: k for k, a in enumerate(result.algorithms)}
    pairs = [(idx[a], idx[b]) for a, b in zip(alg_a, alg_b)]
    p = posterior.pair_probabilities(result.beta, pairs)
    uniform = np.full((1, p.shape[0]), 1.0 / p.shape[0])
    return np.vstack([s[0] for s in _summaries(uniform, p, rope)])


class Influence:
    """Leave-one-data-set-out influence on every pair's claim.

    Attributes
    ----------
    table
        One row per (data set, pair): ``dataset, pair, alg_a, alg_b, mean, mean_loo,
        delta_mean, above_50, above_50_loo, delta_above_50, decision, decision_loo, changed,
        pareto_k, method`` (``"psis"`` or ``"refit"``). ``decision`` follows
        ``interpretation``; ``changed`` says whether leaving the data set out changes it.
    pareto_k
        PSIS shape estimate per data set (above 0.7: refitted).
    interpretation
        ``"weak"`` or ``"strong"``.
    """

    def __init__(self, table: pd.DataFrame, pareto_k: pd.Series, interpretation: Rule) -> None:
        self.table = table
        self.pareto_k = pareto_k
        self.interpretation = interpretation

    @property
    def n_refits(self) -> int:
        """How many data sets were refitted exactly."""
        return int(self.table.groupby("dataset")["method"].first().eq("refit").sum())

    def summary(self) -> pd.DataFrame:
        """Per data set left out and pair, how the estimates and the decision move: the
        frame ``table`` holds."""
        return self.table

    def __repr__(self) -> str:
        changed = self.table[self.table["changed"]]
        return (
            f"<Influence: {self.pareto_k.size} data sets x {self.table['pair'].nunique()} "
            f"pairs, {self.n_refits} refitted; {len(changed)} (data set, pair) cases change "
            f"the {self.interpretation} decision>"
        )

    def top(self, pair: str, n: int = 10) -> pd.DataFrame:
        """The ``n`` data sets whose removal moves ``pair``'s mean P(a > b) the most."""
        rows = self.table[self.table["pair"] == pair]
        if rows.empty:
            pairs = ", ".join(repr(p) for p in self.table["pair"].unique()[:10])
            raise ValueError(f"unknown pair {pair!r}; pairs are written 'a > b', e.g. {pairs}")
        # stable: data sets that move the pair alike keep their input order, as in the
        # widget's chart (charts.influence_frame sorts the same way)
        order = rows["delta_mean"].abs().sort_values(ascending=False, kind="stable").index
        return rows.loc[order[:n]].reset_index(drop=True)

    def chart(self, pair: str, n: int = 10) -> alt.Chart:
        """Bars: the ``n`` most influential data sets for ``pair`` (change in mean P(a > b)
        when left out), coloured by whether the decision changes.

        Drawn by :func:`bbt_widget.charts.specs_robustness.influence_top_chart`,
        beside the widget's influence chart.
        """
        # here: the chart module loads Altair, slow to import, which only charts need
        from ..charts.specs_robustness import influence_top_chart

        top = self.top(pair, n)
        top = top.assign(
            effect=np.where(top["changed"], "decision changes", "decision holds"),
            order=np.arange(len(top)),
        )
        cols = ["dataset", "delta_mean", "mean_loo", "decision_loo", "pareto_k", "method"]
        returned: alt.Chart = influence_top_chart(
            top[[*cols, "effect", "order"]],
            title=f"Most influential data sets for {pair}",
            subtitle=f"{self.interpretation} interpretation; leave-one-data-set-out",
        )
        return returned


def influence(
    result: BBTResult,
    *,
    interpretation: Rule = "weak",
    rope: tuple[float, float] = DEFAULT_ROPE,
    refit: str = "auto",
    k_threshold: float = K_THRESHOLD,
    executor: Any = None,
    n_jobs: int | None = None,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
) -> Influence:
    """Leave each data set out in turn: how do mean P(a > b), above_50 and the decision move?

    Parameters
    ----------
    result
        A fit of raw results (a ready win table has no data sets to leave out), not of the
        group model (``fit(..., group=...)``, refused: see the error).
    interpretation
        Decision rule for ``decision`` / ``changed``: ``"weak"`` (Sec. 9.2) or ``"strong"``.
    rope
        ROPE for the decisions, as in :meth:`BBTResult.summary`.
    refit
        ``"auto"``: exact refits where Pareto k > ``k_threshold``; ``"all"``: refit every
        data set (the exact reference, slow); ``"none"``: importance sampling only.
    executor, n_jobs, progress, cancel
        How the refits run; see :func:`bbt_widget.lab.batch.run_batch`. Refits reuse the fit's
        sampler settings and derive their seeds from its seed.

    Returns
    -------
    Influence
    """
    from arviz import psislw

    check_interpretation(interpretation)
    if refit not in ("auto", "all", "none"):
        raise ValueError(f"refit must be 'auto', 'all' or 'none', got {refit!r}")
    if (
        isinstance(k_threshold, bool)
        or not isinstance(k_threshold, (int, float, np.number))
        or not np.isfinite(k_threshold)
    ):
        raise ValueError(
            f"k_threshold must be a finite number (data sets whose Pareto k exceeds it are "
            f"refitted; {K_THRESHOLD} is the usual limit), got {k_threshold!r}; for no refits "
            "pass refit='none'"
        )
    rope = check_rope(rope)
    check_executor(executor)
    if isinstance(result, GroupedBBTResult):
        raise ValueError(
            "influence does not follow the group model (group=): leaving a data set out "
            "changes its group's win table and the likelihood of that group's abilities, "
            "which these importance weights and refits (of the model without groups) ignore; "
            "fit without group= for the influence on the pooled claims"
        )
    tidy = result.tidy
    if tidy is None:
        raise ValueError(
            "influence needs the results per data set, but this fit was given a ready win "
            "table; fit the raw results (one row per data set or fold) instead"
        )
    if len(tidy.datasets) < MIN_DATASETS:
        raise ValueError(
            f"influence needs at least {MIN_DATASETS} data sets (one is left out at a time)"
        )
    s = result.settings
    # settings built without a tie threshold (e.g. by hand) count every difference
    count = {
        "d_min": s["d_min"],
        "paired": bool(s["paired"]),
        "tie_threshold": s.get("tie_threshold"),
    }
    per_set = data_set_counts(tidy, **count)
    raw = count_wins(tidy, **count)
    full = apply_ties(raw, s["ties"])
    tables = []
    for contribution in per_set:
        without = raw.copy()
        without[_COUNTS] = raw[_COUNTS].to_numpy() - contribution
        tables.append(without)
    # log w = log p(W - W_d | draw) - log p(W | draw): linear in the resolved counts
    counts = ["win1", "win2", "ties"] if s["ties"] == "davidson" else ["win1", "win2"]
    logp = _log_probs(result, list(full["alg1"]), list(full["alg2"]))
    full_counts = full[counts].to_numpy(dtype=float)
    resolved = np.stack([apply_ties(t, s["ties"])[counts].to_numpy() for t in tables])
    log_w = np.zeros((len(tables), result.beta.shape[0]))
    for c, lp in enumerate(logp):
        log_w += (resolved[:, :, c] - full_counts[:, c]) @ lp.T
    smoothed, k = psislw(log_w)
    weights = np.exp(smoothed)
    weights /= weights.sum(axis=1, keepdims=True)

    summary = result.summary(rope=rope)
    alg_a, alg_b = list(summary["alg_a"]), list(summary["alg_b"])
    p = result.pair_draws().to_numpy()
    mean, above, in_rope = _summaries(weights, p, rope)
    # the weighted estimates reuse the full fit's draws, hence share its Monte Carlo error:
    # their change from the same draws unweighted is added to the estimates the summary
    # reports (conditional ones near a threshold), so that a data set that changes nothing
    # moves nothing and delta_mean is not the gap between two estimators
    unweighted = _summaries(np.full((1, len(p)), 1.0 / len(p)), p, rope)
    for loo, full_draws, column in zip((mean, above, in_rope), unweighted, _ESTIMATES):
        loo += summary[column].to_numpy(dtype=float) - full_draws
        np.clip(loo, 0.0, 1.0, out=loo)
    method = np.full(len(tables), "psis", dtype=object)
    redo = {"all": np.ones(len(tables), bool), "none": np.zeros(len(tables), bool)}.get(
        refit, k > k_threshold
    )
    if redo.any():
        requests = [
            FitRequest(
                tables[d],
                ties=s["ties"],
                hyperprior=s["hyperprior"],
                prior_scale=s["prior_scale"],
                chains=s["chains"],
                iter_warmup=s["iter_warmup"],
                iter_sampling=s["iter_sampling"],
                engine=s["engine"],
                meta={"dataset": tidy.datasets[d]},
            )
            for d in np.flatnonzero(redo)
        ]
        outcomes = run_batch(
            requests,
            seed=s["seed"],
            executor=executor,
            n_jobs=n_jobs,
            reduce=partial(_exact, alg_a=alg_a, alg_b=alg_b, rope=rope),
            context=RunContext(progress, cancel),
        )
        for d, out in zip(np.flatnonzero(redo), outcomes):
            if out.ok:  # a failed refit keeps the PSIS estimate (its k says how far to trust)
                mean[d], above[d], in_rope[d] = out.value
                method[d] = "refit"
    return Influence(
        _frame(summary, tidy.datasets, mean, above, in_rope, k, method, rope, interpretation),
        pd.Series(k, index=list(tidy.datasets), name="pareto_k"),
        interpretation,
    )


def _frame(
    summary: pd.DataFrame,
    datasets: tuple[str, ...],
    mean: np.ndarray,
    above: np.ndarray,
    in_rope: np.ndarray,
    k: np.ndarray,
    method: np.ndarray,
    rope: tuple[float, float],
    interpretation: Rule,
) -> pd.DataFrame:
    n_sets, n_pairs = mean.shape
    if interpretation == "weak":
        loo = posterior.weak_decision(above.ravel(), in_rope.ravel())
    else:
        loo = posterior.strong_decision(mean.ravel(), rope)
    full = np.tile(summary[interpretation].to_numpy(), n_sets)
    # pairs that never met stay uncompared without a data set (removing games cannot link them)
    loo = np.where(full == posterior.NOT_COMPARED, full, loo)
    frame = pd.DataFrame(
        {
            "dataset": np.repeat(list(datasets), n_pairs),
            "pair": np.tile(summary["pair"].to_numpy(), n_sets),
            "alg_a": np.tile(summary["alg_a"].to_numpy(), n_sets),
            "alg_b": np.tile(summary["alg_b"].to_numpy(), n_sets),
            "mean": np.tile(summary["mean"].to_numpy(), n_sets),
            "mean_loo": mean.ravel(),
            "above_50": np.tile(summary["above_50"].to_numpy(), n_sets),
            "above_50_loo": above.ravel(),
            "decision": full,
            "decision_loo": loo,
            "pareto_k": np.repeat(k, n_pairs),
            "method": np.repeat(method, n_pairs),
        }
    )
    frame["delta_mean"] = frame["mean_loo"] - frame["mean"]
    frame["delta_above_50"] = frame["above_50_loo"] - frame["above_50"]
    frame["changed"] = frame["decision"] != frame["decision_loo"]
    cols = ["dataset", "pair", "alg_a", "alg_b", "mean", "mean_loo", "delta_mean", "above_50"]
    cols += ["above_50_loo", "delta_above_50", "decision", "decision_loo", "changed"]
    return frame[[*cols, "pareto_k", "method"]]
