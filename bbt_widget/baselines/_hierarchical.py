"""Bayesian hierarchical correlated t-test (Corani et al. 2017; paper 001, Sec. 4.3).

Model (``stan/hierarchical_ttest.stan``, Eq. 12-19): the fold differences ``x_i = b - a``
of data set i are multivariate normal with mean ``mu_i``, sd ``sigma_i`` and correlation
``rho`` (1/k, Nadeau and Bengio); ``mu_i ~ t(mu_0, sigma_0, nu)``; ``sigma_i ~ unif(0, 1000
mean sd)``; ``nu ~ Gamma(alpha, beta)``, ``alpha ~ unif(0.5, 5)``, ``beta ~ unif(0.05,
0.15)``; ``mu_0 ~ unif(-1, 1)`` (the paper's bound for scores within [-1, 1]; wider when the
differences are larger, see :func:`hierarchical`); ``sigma_0 ~ unif(0, 1000 sd(xbar))``.

Decision the paper's way (Sec. 4.3.2): for each posterior draw of ``(mu_0, sigma_0, nu)``
the next data set's mean difference is ``t(mu_0, sigma_0, nu)``; its masses left of
``-rope``, inside the ROPE and right of ``rope`` are ``(theta_left, theta_rope,
theta_right)``; ``p_left``, ``p_rope``, ``p_right`` are the shares of draws in which each is
the largest (the counts of the paper's Table 12 and Fig. 13, as for the signed-rank test).
The means of the thetas (the posterior predictive probabilities for the next data set) and
the posterior of ``mu_0`` against the ROPE are reported next to them.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from .. import engines
from ..core.bidi import pair_label
from ..core.checks import Diagnostics, draws_diagnostics
from ..core.fitting import DiagnosticsWarning
from ..core.posterior import hdi_sorted, ordered_pairs
from ..core.validation import DEFAULT_SEED, check_count, check_hdi, check_seed
from ..engines.base import Draws, ProgressCallback
from ._common import Means, pair_frame, snap_ties
from ._correlated import DECISION_THRESHOLD, student_regions
from ._cv import (
    FoldDifferences,
    check_rope_width,
    fold_differences,
    fold_results,
    pair_differences,
)
from ._signed_rank import _winners
from ._simplex import MAX_POINTS, prob_notes, simplex_chart

#: Fewest data sets the hierarchical model is fitted on (it estimates their spread).
MIN_DATASETS = 2
#: sigma_i's floor as a fraction of the ROPE. A data set whose differences are all equal
#: (sd 0, common with few folds and easy data) makes the likelihood grow without bound as
#: sigma_i -> 0, and a floor far below the ROPE leaves a funnel NUTS cannot explore; at a
#: tenth of the ROPE, mu_i is still resolved far more finely than any decision needs.
SIGMA_FLOOR = 0.1
_PARAMS = ("mu0", "sigma0", "nu", "mu", "sigma")


@dataclass(frozen=True)
class HierarchicalResult:
    """The hierarchical correlated t-test of one pair.

    Attributes
    ----------
    table
        One row: ``pair`` ("a > b"), ``alg_a``, ``alg_b``, ``n_datasets``; ``p_left`` (a
        practically better on the next data set), ``p_rope``, ``p_right`` (b better): the
        paper's counts of the draws in which each region is the most probable; ``next_left``,
        ``next_rope``, ``next_right``: the posterior predictive probabilities of the regions
        for the next data set (means of the thetas); ``mu0_mean``, ``mu0_low``,
        ``mu0_high`` (HDI) and ``mu0_left``, ``mu0_rope``, ``mu0_right``: the posterior of the
        mean difference mu_0 against the ROPE; ``sigma0_mean``, ``nu_mean``; ``decision``
        from ``p_*`` at 0.95 (``"a better"``, ``"equivalent"``, ``"b better"``, ``"no
        claim"``).
    shrinkage
        One row per data set: ``dataset, n, rho``, the observed ``mean`` and ``sd`` of the
        differences ``b - a``, the shrunk estimate ``shrunk`` (posterior mean of mu_i) and
        its HDI ``low``, ``high``.
    diagnostics
        Convergence diagnostics of the Stan fit (R-hat, ESS, divergences...).
    theta
        Per draw ``theta_left, theta_rope, theta_right`` (e.g. for a simplex plot, Fig. 13).
    draws
        The Stan draws (``mu0, sigma0, nu, mu, sigma`` in the scores' units).
    rope, hdi
        ROPE half-width on the scores' scale, HDI mass.
    dropped
        Data sets where both algorithms have a result but fewer than two common folds.
    settings
        Sampler and prior settings used.
    """

    table: pd.DataFrame
    shrinkage: pd.DataFrame
    diagnostics: Diagnostics
    theta: pd.DataFrame
    draws: Draws
    rope: float
    hdi: float
    dropped: tuple[str, ...]
    settings: dict[str, Any] = field(default_factory=dict)

    def chart(self) -> alt.LayerChart:
        """Observed and shrunk mean difference per data set, with HDIs and the ROPE band."""
        row = self.table.iloc[0]
        frame = self.shrinkage.assign(
            label=lambda f: f["dataset"].astype(str),
        )
        y = alt.Y("label:N", sort=alt.EncodingSortField("shrunk"), title=None)
        band = (
            alt.Chart(pd.DataFrame({"low": [-self.rope], "high": [self.rope]}))
            .mark_rect(opacity=0.2, color="orange")
            .encode(x="low:Q", x2="high:Q")
        )
        rule = alt.Chart(frame).mark_rule().encode(x="low:Q", x2="high:Q", y=y)
        shrunk = (
            alt.Chart(frame)
            .mark_point(filled=True)
            .encode(
                x=alt.X("shrunk:Q", title=f"mean difference {row['alg_b']} - {row['alg_a']}"),
                y=y,
                tooltip=["dataset", "n", "mean", "shrunk", "low", "high"],
            )
        )
        observed = alt.Chart(frame).mark_point(color="gray").encode(x="mean:Q", y=y)
        title = (
            f"{row['pair']}: P(left) {row['p_left']:.3f}, P(rope) {row['p_rope']:.3f}, "
            f"P(right) {row['p_right']:.3f}"
        )
        return alt.layer(band, rule, observed, shrunk).properties(
            title=title, width=360, height=alt.Step(12)
        )

    def simplex(self, *, max_points: int = MAX_POINTS) -> alt.LayerChart:
        """The draws of ``theta`` in the probability simplex (paper 001, Fig. 13): vertices
        "a better", "rope", "b better", the regions where each is the most probable shaded,
        at most ``max_points`` draws shown (evenly thinned)."""
        row = self.table.iloc[0]
        theta = self.theta[["theta_left", "theta_rope", "theta_right"]].to_numpy(dtype=float)
        probs = row[["p_left", "p_rope", "p_right"]].to_numpy(dtype=float)
        title = (
            f"Hierarchical correlated t-test, {row['n_datasets']} data sets, "
            f"ROPE +-{self.rope:g}: {len(theta)} draws"
        )
        return simplex_chart(
            theta,
            row["alg_a"],
            row["alg_b"],
            prob_notes(probs),
            title=title,
            max_points=max_points,
        )


@dataclass(frozen=True)
class HierarchicalPairsResult:
    """Hierarchical correlated t-tests of every pair.

    Attributes
    ----------
    table
        One row per pair, ordered by median as :func:`bayesian_signed_rank` (``"a > b"``: a
        has the higher median): the columns of :attr:`HierarchicalResult.table`, plus
        ``max_rhat`` and ``divergences`` of each fit.
    fits
        The single-pair results by ``(alg_a, alg_b)``.
    medians
        Median of the per-data-set means per algorithm, best first.
    rope
        ROPE half-width on the scores' scale.
    """

    table: pd.DataFrame
    fits: dict[tuple[str, str], HierarchicalResult]
    medians: pd.Series
    rope: float


def hierarchical(
    data: pd.DataFrame,
    *,
    a: str,
    b: str,
    dataset: str | None = None,
    algorithm: str | None = None,
    fold: str | None = None,
    score: str | None = None,
    run: str | None = None,
    sd: pd.DataFrame | None = None,
    lower_is_better: bool = False,
    rope: float = 0.01,
    rho: float | None = None,
    hdi: float = 0.95,
    engine: str = "auto",
    chains: int = 4,
    iter_warmup: int = 1000,
    iter_sampling: int = 1000,
    adapt_delta: float = 0.95,
    seed: int | None = DEFAULT_SEED,
    progress: ProgressCallback | None = None,
) -> HierarchicalResult:
    """Bayesian hierarchical correlated t-test of ``a`` vs ``b`` over all data sets.

    Parameters
    ----------
    data
        Fold-level results in any layout :func:`bbt_widget.win_table` accepts.
    a, b
        The pair; the differences are ``b - a``, so *left* means a is better.
    dataset, algorithm, fold, score, lower_is_better
        How to read the results; see :func:`bbt_widget.core.data.tidy_results`.
    run
        Column numbering the repetitions of cross-validation; with ``fold=`` (the fold
        within a run) it gives ``k`` and ``rho = 1/k`` per data set.
    sd
        Not usable (the model needs fold-level scores); passing it raises ValueError.
    rope
        Half-width of the ROPE on the scores' scale (0.01: one point of accuracy).
    rho
        ``n_test / n_total`` (Nadeau and Bengio; paper 001 Eq. 1-2), ``1/k`` for k-fold
        cross-validation. Sec. 4.3 of the paper writes ``n_te / n_tr`` once; Eq. 1-2 and
        its example (rho = 1/10 for 10 runs of 10 folds) use ``n_te / n_tot``, as here.
        Required unless ``run=`` and ``fold=`` identify the folds.
    hdi
        Mass of the HDIs of mu_0 and of the shrunk means.
    engine, chains, iter_warmup, iter_sampling, adapt_delta, seed, progress
        Stan settings; see :func:`bbt_widget.engines.sample`. ``adapt_delta`` is 0.95 as
        hierarchical models need smaller steps than Stan's default 0.8.

    Returns
    -------
    HierarchicalResult
        ``table`` (one row), ``shrinkage`` (per data set), ``diagnostics``, ``chart()``.

    Notes
    -----
    ``mu_0``'s uniform prior spans [-1, 1] as in the paper, widened to the largest
    absolute fold difference when that is larger (scores not bounded by 1). A data set
    whose differences are all equal has sd 0; its ``sigma_i`` is floored at
    ``0.1 * rope`` (differences finer than that are not resolved) to keep the posterior
    proper.

    With few folds per data set (e.g. 4) sigma_i is weakly identified, and the posterior of
    an outlying data set can have two modes (its mean explained by mu_i, or by a large
    sigma_i), and nu mixes slowly; the diagnostics then flag the fit (a
    ``DiagnosticsWarning``). Longer chains help only partly (pmlb16's rf vs svm, 132 data
    sets x 4 folds: R-hat 1.06 with 4 x 1000 draws, 1.05 with 4 x 2000): read the
    probabilities as approximate there. With 10 runs of 10 folds (the paper's setting) the
    chains agree (54 data sets: R-hat 1.005, bulk ESS > 1000, a divergence or two in 4000
    transitions; ``benchmarks/results/methods.json``).

    Raises
    ------
    ValueError
        Before any fit: fewer than 2 data sets with 2 common folds, rope <= 0, rho outside
        (0, 1), a == b, unknown algorithms, rho unknown.
    """
    rope = check_rope_width(rope)
    hdi = check_hdi(hdi)
    settings = _sampler_settings(chains, iter_warmup, iter_sampling, adapt_delta, seed)
    diffs = fold_differences(
        data,
        a=a,
        b=b,
        dataset=dataset,
        algorithm=algorithm,
        fold=fold,
        score=score,
        run=run,
        sd=sd,
        lower_is_better=lower_is_better,
        rho=rho,
    )
    _check_enough(diffs)
    return _fit(diffs, rope, hdi, engine, settings, progress)


def hierarchical_pairs(
    data: pd.DataFrame,
    *,
    algorithms: list[str] | None = None,
    dataset: str | None = None,
    algorithm: str | None = None,
    fold: str | None = None,
    score: str | None = None,
    run: str | None = None,
    sd: pd.DataFrame | None = None,
    lower_is_better: bool = False,
    rope: float = 0.01,
    rho: float | None = None,
    hdi: float = 0.95,
    engine: str = "auto",
    chains: int = 4,
    iter_warmup: int = 1000,
    iter_sampling: int = 1000,
    adapt_delta: float = 0.95,
    seed: int | None = DEFAULT_SEED,
) -> HierarchicalPairsResult:
    """:func:`hierarchical` for every pair of ``algorithms`` (default: all), in one table.

    Pairs are ordered as in :func:`bayesian_signed_rank` (by median, ``"a > b"``), so the
    table lines up with the other baselines and can be passed to :func:`agreement`
    (``hierarchical=``). Every pair is checked before the first fit. Each pair is one Stan
    fit with the same seed. Parameters as :func:`hierarchical`.
    """
    rope = check_rope_width(rope)
    hdi = check_hdi(hdi)
    settings = _sampler_settings(chains, iter_warmup, iter_sampling, adapt_delta, seed)
    medians, pairs, all_diffs = check_pairs(
        data,
        algorithms=algorithms,
        dataset=dataset,
        algorithm=algorithm,
        fold=fold,
        score=score,
        run=run,
        sd=sd,
        lower_is_better=lower_is_better,
        rho=rho,
    )
    names = list(medians.index)
    fits, rows = {}, []
    for (i, j), diffs in zip(pairs, all_diffs):
        res = _fit(diffs, rope, hdi, engine, settings, None)
        fits[(names[i], names[j])] = res
        row = res.table.iloc[0].to_dict()
        row["max_rhat"] = res.diagnostics.max_rhat
        row["divergences"] = res.diagnostics.divergences
        rows.append(row)
    table = pd.DataFrame(rows)
    table = pd.concat(
        [pair_frame(names, pairs), table.drop(columns=["pair", "alg_a", "alg_b"])], axis=1
    )
    return HierarchicalPairsResult(table=table, fits=fits, medians=medians, rope=rope)


def check_pairs(
    data: pd.DataFrame,
    *,
    algorithms: list[str] | None = None,
    dataset: str | None = None,
    algorithm: str | None = None,
    fold: str | None = None,
    score: str | None = None,
    run: str | None = None,
    sd: pd.DataFrame | None = None,
    lower_is_better: bool = False,
    rho: float | None = None,
) -> tuple[pd.Series, list[tuple[int, int]], list[FoldDifferences]]:
    """Every pair :func:`hierarchical_pairs` would fit, checked in milliseconds before any
    (slow) fit: the medians that order the algorithms, the pairs (indices into them) and each
    pair's fold differences.

    Raises
    ------
    ValueError
        Fewer than 2 algorithms, or a pair with fewer than :data:`MIN_DATASETS` data sets of
        2 or more common folds (the message names the pair).
    """
    results = fold_results(
        data,
        dataset=dataset,
        algorithm=algorithm,
        fold=fold,
        score=score,
        run=run,
        sd=sd,
        lower_is_better=lower_is_better,
        rho=rho,
    )
    tidy = results.tidy
    means = Means(snap_ties(tidy.means), tidy.algorithms, tidy.datasets, tidy.lower_is_better)
    if algorithms is not None:
        means = means.subset(algorithms)
    if len(means.algorithms) < 2:
        raise ValueError(f"need at least 2 algorithms to compare, got {list(means.algorithms)}")
    medians = means.medians()
    names = list(medians.index)
    pairs = ordered_pairs(list(range(len(names))))
    all_diffs = [pair_differences(results, names[i], names[j]) for i, j in pairs]
    for diffs in all_diffs:
        _check_enough(diffs)
    return medians, pairs, all_diffs


def _sampler_settings(
    chains: int, iter_warmup: int, iter_sampling: int, adapt_delta: float, seed: int | None
) -> dict[str, Any]:
    if not 0.0 < adapt_delta < 1.0:
        raise ValueError(
            f"adapt_delta must lie strictly between 0 and 1 (e.g. 0.95); got {adapt_delta}"
        )
    return {
        "chains": check_count(chains, "chains"),
        "iter_warmup": check_count(iter_warmup, "iter_warmup"),
        "iter_sampling": check_count(iter_sampling, "iter_sampling"),
        "adapt_delta": float(adapt_delta),
        "seed": check_seed(seed),
    }


def _check_enough(diffs: FoldDifferences) -> None:
    if len(diffs.datasets) < MIN_DATASETS:
        extra = (
            f"; {len(diffs.dropped)} more have fewer than 2 folds where both have a result"
            if diffs.dropped
            else ""
        )
        raise ValueError(
            f"the hierarchical test of {diffs.a!r} vs {diffs.b!r} needs at least "
            f"{MIN_DATASETS} data sets with 2 or more common folds; found "
            f"{len(diffs.datasets)}{extra}. For one data set use correlated_ttest"
        )


def stan_data(diffs: FoldDifferences, rope: float) -> dict[str, Any]:
    """The data of ``stan/hierarchical_ttest.stan`` for these fold differences."""
    n, mean, sd, rho = diffs.n, diffs.mean, diffs.sd, diffs.rho
    mean_sd = float(sd.mean())
    scale = mean_sd if mean_sd > 0 else rope  # all differences constant: the ROPE's units
    spread = float(mean.std(ddof=1))
    # centre mu_i where its folds pin it down (standard error se_i) more tightly than the
    # data sets differ (sigma_0, estimated robustly, as the Student top level ignores
    # outlying data sets: MAD^2 of the xbar = sigma_0^2 + median se^2)
    se = np.maximum(sd, SIGMA_FLOOR * rope) * np.sqrt((1 + (n - 1) * rho) / n)
    mad = 1.4826 * float(np.median(np.abs(mean - np.median(mean))))
    sigma0_hat = np.sqrt(max(mad**2 - float(np.median(se**2)), 0.0))
    centred = (se < sigma0_hat).astype(int)
    return {
        "q": len(n),
        "n": n.tolist(),
        "xbar": mean.tolist(),
        "ss": ((n - 1) * sd**2).tolist(),
        "rho": rho.tolist(),
        "scale": scale,
        "sigma_low": SIGMA_FLOOR * rope,
        "sigma_high": 1000 * scale,
        "sigma0_high": 1000 * (spread if spread > 0 else scale),
        "mu0_bound": max(1.0, float(max(np.abs(x).max() for x in diffs.diffs))),
        "centred": centred.tolist(),
    }


def _fit(
    diffs: FoldDifferences,
    rope: float,
    hdi: float,
    engine: str,
    settings: dict[str, Any],
    progress: ProgressCallback | None,
) -> HierarchicalResult:
    draws = engines.sample(
        "hierarchical_ttest",
        stan_data(diffs, rope),
        engine=engine,
        progress=progress,
        **settings,
    )
    p = {k: draws.params[k].reshape(-1, *draws.params[k].shape[2:]) for k in _PARAMS}
    theta = np.vstack(student_regions(p["mu0"], p["sigma0"], p["nu"], rope))
    wins = _winners(theta) / theta.shape[1]
    mu0_sorted = np.sort(p["mu0"])[:, None]
    mu0_low, mu0_high = hdi_sorted(mu0_sorted, hdi)
    mu0_regions = [
        float(np.mean(p["mu0"] < -rope)),
        float(np.mean(np.abs(p["mu0"]) <= rope)),
        float(np.mean(p["mu0"] > rope)),
    ]
    row = {
        "pair": pair_label(diffs.a, diffs.b),
        "alg_a": diffs.a,
        "alg_b": diffs.b,
        "n_datasets": len(diffs.datasets),
        "p_left": wins[0],
        "p_rope": wins[1],
        "p_right": wins[2],
        "next_left": theta[0].mean(),
        "next_rope": theta[1].mean(),
        "next_right": theta[2].mean(),
        "mu0_mean": p["mu0"].mean(),
        "mu0_low": mu0_low[0],
        "mu0_high": mu0_high[0],
        "mu0_left": mu0_regions[0],
        "mu0_rope": mu0_regions[1],
        "mu0_right": mu0_regions[2],
        "sigma0_mean": p["sigma0"].mean(),
        "nu_mean": p["nu"].mean(),
    }
    table = pd.DataFrame([row])
    table["decision"] = np.select(
        [
            table["p_rope"] >= DECISION_THRESHOLD,
            table["p_left"] >= DECISION_THRESHOLD,
            table["p_right"] >= DECISION_THRESHOLD,
        ],
        ["equivalent", "a better", "b better"],
        default="no claim",
    )
    low, high = hdi_sorted(np.sort(p["mu"], axis=0), hdi)
    shrinkage = pd.DataFrame(
        {
            "dataset": list(diffs.datasets),
            "n": diffs.n,
            "rho": diffs.rho,
            "mean": diffs.mean,
            "sd": diffs.sd,
            "shrunk": p["mu"].mean(axis=0),
            "low": low,
            "high": high,
        }
    )
    diag = draws_diagnostics(draws, list(_PARAMS))
    if not diag.ok:
        warnings.warn(
            f"hierarchical test {diffs.a} vs {diffs.b}: diagnostics failed: "
            + "; ".join(diag.messages),
            DiagnosticsWarning,
            stacklevel=3,
        )
    return HierarchicalResult(
        table=table,
        shrinkage=shrinkage,
        diagnostics=diag,
        theta=pd.DataFrame(theta.T, columns=["theta_left", "theta_rope", "theta_right"]),
        draws=draws,
        rope=rope,
        hdi=hdi,
        dropped=diffs.dropped,
        settings=settings | {"engine": draws.engine, "lower_is_better": diffs.lower_is_better},
    )
