"""Bayesian hierarchical correlated t-test.

References: G. Corani, A. Benavoli, J. Demšar, F. Mangili and M. Zaffalon (2017),
"Statistical comparison of classifiers through Bayesian hierarchical modelling", Machine
Learning 106(11), 1817-1837, doi:10.1007/s10994-017-5641-9; A. Benavoli, G. Corani, J.
Demšar and M. Zaffalon (2017), "Time for a change: a tutorial for comparing multiple
classifiers through Bayesian analysis", Journal of Machine Learning Research 18(77), 1-36,
Sec. 4.3 (paper 001). The reference implementation is baycomp's ``HierarchicalTest``
(by the same authors).

Model (Eq. 12-19): the fold differences ``x_i = b - a``
of data set i are multivariate normal with mean ``mu_i``, sd ``sigma_i`` and correlation
``rho`` (1/k, Nadeau and Bengio); ``mu_i ~ t(mu_0, sigma_0, nu)``; ``sigma_i ~ unif(0, 1000
mean sd)``; ``nu - shift ~ Gamma(alpha, beta)`` with ``alpha`` and ``beta`` uniform (see
:data:`NU_PRIORS`: the paper's printed bounds, or baycomp's, the default); ``mu_0 ~ unif(-1,
1)`` (the paper's bound for scores within [-1, 1]; wider when the differences are larger);
``sigma_0 ~ unif(0, 1000 sd(xbar))``. A data set whose differences are all equal gets the sd
of differences spread over the ROPE, as in baycomp (:func:`model_data`).

The sampler integrates each data set's ``mu_i`` and ``sigma_i`` out numerically and draws the
remaining ``(mu_0, sigma_0, nu)`` with an independence Metropolis-Hastings sampler
(:mod:`._hierarchical_marginal`, :mod:`._hierarchical_sampler`; numpy only): with few folds
per data set an outlying data set gives ``(mu_i, sigma_i)`` two modes that NUTS does not
cross. The same posterior written in Stan for NUTS (``tests/oracles/hierarchical_ttest.stan``)
is the tests' oracle.

Decision the paper's way (Sec. 4.3.2) and baycomp's (``Posterior.probs``): for each
posterior draw of ``(mu_0, sigma_0, nu)`` the next data set's mean difference is ``t(mu_0,
sigma_0, nu)``; its masses left of ``-rope``, inside the ROPE and right of ``rope`` are
``(theta_left, theta_rope, theta_right)``; ``p_left``, ``p_rope``, ``p_right`` are the
shares of draws in which each is the largest (the counts of the paper's Table 12 and Fig.
13). The means of the thetas (the posterior predictive probabilities for the next data
set) and the posterior of ``mu_0`` against the ROPE are reported next to them.
"""

from __future__ import annotations

import threading
import warnings
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import altair as alt
import numpy as np
import pandas as pd

from ..core.bidi import pair_label
from ..core.data import TidyResults
from ..core.diagnostics import Diagnostics, draws_diagnostics
from ..core.draws import Draws, ProgressCallback, fresh_seed, joined, round_seed
from ..core.options import (
    DEFAULT_CHAINS,
    DEFAULT_DRAWS,
    SETTLE_BUDGET,
    TTEST_HDI,
    DrawsMode,
)
from ..core.posterior import hdi_sorted
from ..core.precision import DEFAULT_Z, mcse
from ..core.run_context import RunContext
from ..core.settling import STAGE, chains_to_add, check_draws
from ..core.tidy import Layout, Unpack
from ..core.validation import DEFAULT_SEED, check_count, check_hdi, check_seed
from ..fitting import DiagnosticsWarning
from ._common import TableSummary
from ._correlated import student_regions
from ._cv import (
    FoldDifferences,
    check_rope_width,
    fold_differences,
)
from ._hierarchical_marginal import marginal
from ._hierarchical_sampler import sample as quadrature_sample
from ._simplex import (
    DECISION_THRESHOLD,
    MAX_POINTS,
    prob_notes,
    simplex_chart,
    with_region_mcse,
)

if TYPE_CHECKING:  # typing.Unpack is Python 3.11; the checker knows it on 3.10 too
    from ..core.tidy import LayoutKeywords

#: Fewest data sets the hierarchical model is fitted on (it estimates their spread).
MIN_DATASETS = 2
#: Hyperpriors of the degrees of freedom (Eq. 15-17): ``nu - shift ~ Gamma(alpha, beta)``,
#: ``alpha ~ unif(alpha)``, ``beta ~ unif(beta)``. ``"paper"``: Benavoli et al. (2017),
#: Eq. 15-17 as printed. ``"baycomp"``: the defaults of baycomp's ``HierarchicalTest``, the
#: authors' own implementation (nu at least 1).
#: ``nodes``: Gauss-Legendre nodes of the program's integral of nu's prior over alpha, enough
#: for a relative error below 1e-6 for nu in [0.01, 2000] (each node costs two incomplete
#: gamma functions per gradient, most of a fit's time).
NU_PRIORS: dict[str, dict[str, Any]] = {
    "paper": {"shift": 0.0, "alpha": (0.5, 5.0), "beta": (0.05, 0.15), "nodes": 12},
    "baycomp": {"shift": 1.0, "alpha": (1.0, 2.0), "beta": (0.01, 0.1), "nodes": 6},
}
DEFAULT_NU_PRIOR = "baycomp"
#: Kept iterations per chain (4 chains).
DEFAULT_ITER = 1000
#: Warm-up proposals per chain of the quadrature sampler (they only fit its proposal).
QUADRATURE_WARMUP = 200
_PARAMS = ("mu0", "sigma0", "nu", "mu", "sigma")


@dataclass(frozen=True)
class HierarchicalResult(TableSummary):
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
        claim"``); ``mcse_left``, ``mcse_rope``, ``mcse_right``: the Monte Carlo standard
        errors of ``p_*`` (with the chains' effective sample size); a region must reach
        0.95 by 3 of them to be claimed; ``unsettled``: a region within 3 of them of 0.95
        (another seed could change the decision: unsettled at this precision).
    shrinkage
        One row per data set: ``dataset, n, rho``, the observed ``mean`` and ``sd`` of the
        differences ``b - a``, the shrunk estimate ``shrunk`` (posterior mean of mu_i) and
        its HDI ``low``, ``high``.
    diagnostics
        Convergence diagnostics of the fit (R-hat, ESS, divergences...).
    theta
        Per draw ``theta_left, theta_rope, theta_right`` (e.g. for a simplex plot, Fig. 13).
    draws
        The draws of ``mu0, sigma0, nu, mu, sigma`` in the scores' units (``mu`` drawn from
        its normal conditional given the other parameters).
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
        returned: alt.LayerChart = alt.layer(band, rule, observed, shrunk).properties(
            title=title, width=360, height=alt.Step(12)
        )
        return returned

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
        returned: alt.LayerChart = simplex_chart(
            theta,
            row["alg_a"],
            row["alg_b"],
            prob_notes(probs),
            title=title,
            max_points=max_points,
        )
        return returned


def hierarchical(
    data: pd.DataFrame | TidyResults,
    *,
    a: str,
    b: str,
    run: str | None = None,
    rope: float = 0.01,
    rho: float | None = None,
    hdi: float = TTEST_HDI,
    nu_prior: str = DEFAULT_NU_PRIOR,
    chains: int = DEFAULT_CHAINS,
    iter_warmup: int = QUADRATURE_WARMUP,
    iter_sampling: int = DEFAULT_ITER,
    draws: DrawsMode = DEFAULT_DRAWS,
    seed: int | None = DEFAULT_SEED,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    **layout: Unpack[LayoutKeywords],
) -> HierarchicalResult:
    """Bayesian hierarchical correlated t-test of ``a`` vs ``b`` over all data sets.

    Parameters
    ----------
    data
        Fold-level results in any layout :func:`bbt_widget.win_table` accepts.
    a, b
        The pair; the differences are ``b - a``, so *left* means a is better.
    run
        Column numbering the repetitions of cross-validation; with ``fold=`` (the fold
        within a run) it gives ``k`` and ``rho = 1/k`` per data set.
    rope
        Half-width of the ROPE on the scores' scale (0.01: one point of accuracy).
    rho
        ``n_test / n_total`` (Nadeau and Bengio; paper 001 Eq. 1-2), ``1/k`` for k-fold
        cross-validation. Sec. 4.3 of the paper writes ``n_te / n_tr`` once; Eq. 1-2 and
        its example (rho = 1/10 for 10 runs of 10 folds) use ``n_te / n_tot``, as here.
        Required unless ``run=`` and ``fold=`` identify the folds.
    hdi
        Mass of the HDIs of mu_0 and of the shrunk means.
    nu_prior
        Hyperprior of the degrees of freedom nu, a key of :data:`NU_PRIORS`: ``"baycomp"``
        (default: ``nu - 1 ~ Gamma(alpha, beta)``, ``alpha ~ unif(1, 2)``, ``beta ~
        unif(0.01, 0.1)``, as baycomp's ``HierarchicalTest``) or ``"paper"`` (``nu ~
        Gamma(alpha, beta)``, ``alpha ~ unif(0.5, 5)``, ``beta ~ unif(0.05, 0.15)``, Eq.
        15-17 as printed).
    chains, iter_warmup, iter_sampling, seed, progress, cancel
        Chains and their lengths, of the sampler: each data set's ``mu_i`` and ``sigma_i``
        integrated out numerically, an independence Metropolis-Hastings sampler over
        ``(mu_0, sigma_0, nu)``, then ``mu_i`` and ``sigma_i`` drawn from their conditionals
        (pure numpy; see Notes). Its warm-up only fits the proposal, hence the short
        default.
    draws
        ``"auto"`` (default): when a region's probability lies within 3 Monte Carlo
        standard errors of the 0.95 threshold and more draws could settle it, one more
        round of chains (seeded from ``seed``) up to 4 times the first round's draws, as
        :func:`bbt_widget.fit` does; ``"fixed"``: the first round only. The table's
        decision needs 3 MCSE clearance either way (``mcse_left/rope/right``).
    **layout
        How to read the results: :class:`~bbt_widget.core.tidy.LayoutKeywords`. Not ``sd``
        (the model needs fold-level scores): passing it raises ValueError.

    Returns
    -------
    HierarchicalResult
        ``table`` (one row), ``shrinkage`` (per data set), ``diagnostics``, ``chart()``.

    Notes
    -----
    ``mu_0``'s uniform prior spans [-1, 1] as in the paper, widened to the largest
    absolute fold difference when that is larger (scores not bounded by 1). A data set
    whose differences are all equal (sd 0) gets the sd ``rope / sqrt(3)`` of differences
    spread over the ROPE, as baycomp does (else sigma_i's likelihood is unbounded at 0).

    Why this sampler: with few folds per data set (e.g. 4) sigma_i is weakly
    identified, and the posterior of an outlying data set has two modes (its mean
    explained by a heavy-tailed mu_i, or by a large sigma_i). NUTS, on any parametrisation
    tried, rarely crosses between them and its chains disagree (pmlb16's rf vs svm, 132
    data sets x 4 folds: R-hat 1.04). With ``mu_i`` and ``sigma_i`` integrated out (sigma_i
    exactly, mu_i by Gauss-Legendre quadrature with a relative error near 1e-5) the
    posterior of ``(mu_0, sigma_0, nu)`` is smooth and three-dimensional, and the chains
    agree on 115 of the 120 pairs of the shipped 16 x 132 results with the defaults
    (``benchmarks/results/methods.json``; the other 5 fall just short of a tail ESS of 400
    and say so). It is the same model: it agrees with NUTS on the Stan program where NUTS
    mixes (10 runs of 10 folds, the paper's setting), and both match baycomp's
    ``HierarchicalTest`` within 0.03 there (``tests/stan/test_hierarchical.py``). The
    diagnostics (R-hat <= 1.01, bulk and tail ESS >= 100 per chain) flag a fit that did not
    converge (a ``DiagnosticsWarning``, ``diagnostics_ok`` in
    :func:`hierarchical_pairs`).

    Raises
    ------
    ValueError
        Before any fit: fewer than 2 data sets with 2 common folds, rope <= 0, rho outside
        (0, 1), a == b, unknown algorithms, rho unknown.
    """
    asked = Layout.from_keywords(layout)
    rope = check_rope_width(rope)
    hdi = check_hdi(hdi)
    nu_prior = check_nu_prior(nu_prior)
    settings = sampler_settings(chains, iter_warmup, iter_sampling, seed, draws)
    diffs = fold_differences(data, asked, a=a, b=b, run=run, rho=rho)
    check_enough(diffs)
    return fit_pair(diffs, rope, hdi, settings, RunContext(progress, cancel), nu_prior)


def check_nu_prior(nu_prior: str) -> str:
    """``nu_prior`` if it names an entry of :data:`NU_PRIORS`, else a ValueError."""
    if nu_prior not in NU_PRIORS:
        raise ValueError(
            f"nu_prior must be one of {', '.join(map(repr, NU_PRIORS))}; got {nu_prior!r}"
        )
    return nu_prior


def sampler_settings(
    chains: int,
    iter_warmup: int,
    iter_sampling: int,
    seed: int | None,
    draws: DrawsMode = DEFAULT_DRAWS,
) -> dict[str, Any]:
    """The checked sampler settings, and the sampler's name (for the record)."""
    check_draws(draws)
    return {
        "chains": check_count(chains, "chains"),
        "iter_warmup": check_count(iter_warmup, "iter_warmup"),
        "iter_sampling": check_count(iter_sampling, "iter_sampling"),
        "seed": check_seed(seed),
        "sampler": "quadrature",
        "draws": draws,
    }


def check_enough(diffs: FoldDifferences) -> None:
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


def model_data(
    diffs: FoldDifferences, rope: float, nu_prior: str = DEFAULT_NU_PRIOR
) -> dict[str, Any]:
    """The model's data for these fold differences: what the sampler reads
    (:func:`~._hierarchical_marginal.marginal`), and the data of the model's Stan program
    (``tests/oracles/hierarchical_ttest.stan``, the tests' oracle).

    A data set whose differences are all equal (sd 0, e.g. two algorithms with the same
    predictions) would give sigma_i's uniform prior an unbounded likelihood at 0; it gets
    the sd of a difference spread uniformly over the ROPE, ``rope / sqrt(3)``, as baycomp
    does (baycomp draws such differences; the sd is their expected spread).
    """
    n, mean, rho = diffs.n, diffs.mean, diffs.rho
    sd = np.where(diffs.sd > 0, diffs.sd, rope / np.sqrt(3.0))
    scale = float(sd.mean())
    spread = float(mean.std(ddof=1))
    prior = NU_PRIORS[nu_prior]
    (a_low, a_high), (b_low, b_high) = prior["alpha"], prior["beta"]
    nodes, weights = np.polynomial.legendre.leggauss(prior["nodes"])
    return {
        "q": len(n),
        "n": n.tolist(),
        "xbar": mean.tolist(),
        "ss": ((n - 1) * sd**2).tolist(),
        "rho": rho.tolist(),
        "scale": scale,
        "sigma_high": 1000 * scale,
        "sigma0_high": 1000 * (spread if spread > 0 else scale),
        "mu0_bound": max(1.0, float(max(np.abs(x).max() for x in diffs.diffs))),
        "nu_shift": prior["shift"],
        "beta_low": b_low,
        "beta_high": b_high,
        "n_nodes": prior["nodes"],
        "alpha_node": (a_low + (nodes + 1) * (a_high - a_low) / 2).tolist(),
        "alpha_weight": (weights / 2).tolist(),
    }


def in_score_units(draws: Draws, scale: float) -> Draws:
    """The draws of ``mu0, sigma0, nu, mu, sigma`` in the scores' units (the samplers draw
    ``mu0_s, sigma0_s, sigma_s`` in units of ``scale``); the other outputs are dropped."""
    p = draws.params
    params = {
        "mu0": p["mu0_s"] * scale,
        "sigma0": p["sigma0_s"] * scale,
        "nu": p["nu"],
        "mu": p["mu"],
        "sigma": p["sigma_s"] * scale,
    }
    return replace(draws, params=params)


def _regions(draws: Draws, rope: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per draw the regions' probabilities (3, draws), and the share of the draws in which
    each region is the most probable with its Monte Carlo standard error (chains' ESS)."""
    p = {k: draws.params[k].reshape(-1) for k in ("mu0", "sigma0", "nu")}
    theta = np.vstack(student_regions(p["mu0"], p["sigma0"], p["nu"], rope))
    is_max = theta == theta.max(axis=0)
    shares = (is_max / is_max.sum(axis=0)).reshape(3, draws.params["mu0"].shape[0], -1)
    return theta, shares.mean(axis=(1, 2)), np.array([mcse(share) for share in shares])


def _more_chains(draws: Draws, rope: float, first: int) -> int:
    """``draws="auto"``: the chains to add (0: none) so that a region's probability within
    3 MCSE of the 0.95 threshold can settle, as :mod:`bbt_widget.core.settling` does for
    BBT: up to :data:`SETTLE_BUDGET` times the first round, in one round, when that could
    settle it."""
    _, wins, errors = _regions(draws, rope)
    near = pd.DataFrame({"value": wins, "threshold": DECISION_THRESHOLD, "mcse": errors})
    near = near[(near["value"] - DECISION_THRESHOLD).abs() < DEFAULT_Z * near["mcse"]]
    per_chain = first // int(draws.params["mu0"].shape[0])
    return chains_to_add(near, first, per_chain, SETTLE_BUDGET * first, DEFAULT_Z)


def fit_pair(
    diffs: FoldDifferences,
    rope: float,
    hdi: float,
    settings: dict[str, Any],
    context: RunContext,
    nu_prior: str = DEFAULT_NU_PRIOR,
    warn: bool = True,
    latent_every: int = 1,
) -> HierarchicalResult:
    """Fit one pair; ``warn``: a ``DiagnosticsWarning`` when the diagnostics fail;
    ``latent_every``: the sampler draws ``mu_i`` and ``sigma_i`` for every
    ``latent_every``-th kept draw only (they only feed ``shrinkage`` then, and the
    diagnostics are those of ``mu_0``, ``sigma_0`` and ``nu``)."""
    data = model_data(diffs, rope, nu_prior)

    def draw(chains: int, seed: int, told: RunContext) -> Draws:
        found = quadrature_sample(
            marginal(data),
            chains=chains,
            iter_warmup=settings["iter_warmup"],
            iter_sampling=settings["iter_sampling"],
            seed=seed,
            scale=data["scale"],
            context=told,
            latent_every=latent_every,
        )
        return in_score_units(found, data["scale"])

    checked = list(_PARAMS) if latent_every == 1 else ["mu0", "sigma0", "nu"]
    seed = fresh_seed(settings["seed"])
    draws = draw(settings["chains"], seed, context)
    rounds = 1
    if settings.get("draws", DEFAULT_DRAWS) == "auto":
        more = _more_chains(draws, rope, settings["chains"] * settings["iter_sampling"])
        if more:
            draws = joined(
                draws, draw(more, round_seed(seed, 1), context.relabelled("sampling", STAGE))
            )
            rounds = 2
    settings = settings | {"rounds": rounds, "chains_drawn": int(draws.params["mu0"].shape[0])}
    return pair_result(diffs, draws, rope, hdi, settings, checked, warn)


def pair_result(
    diffs: FoldDifferences,
    draws: Draws,
    rope: float,
    hdi: float,
    settings: dict[str, Any],
    checked: list[str] | None = None,
    warn: bool = True,
) -> HierarchicalResult:
    """The test's result from posterior draws of ``mu0, sigma0, nu, mu, sigma`` in the
    scores' units (:func:`in_score_units`); ``checked``: the parameters whose diagnostics
    count (default all five)."""
    p = {k: draws.params[k].reshape(-1, *draws.params[k].shape[2:]) for k in _PARAMS}
    theta, wins, errors = _regions(draws, rope)
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
    table = with_region_mcse(pd.DataFrame([row]), [[float(e)] for e in errors])
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
    diag = draws_diagnostics(draws, list(_PARAMS) if checked is None else checked)
    if warn and not diag.ok:
        warnings.warn(
            f"hierarchical test {diffs.a} vs {diffs.b}: diagnostics failed: "
            + "; ".join(diag.messages),
            DiagnosticsWarning,
            stacklevel=4,
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
