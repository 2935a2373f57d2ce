"""``ranking_model``: a Plackett-Luce model of the per-data-set rankings (Rojas-Delgado et
al. 2022, doi:10.1109/TEVC.2022.3208110); ``model="mallows"`` hands over to the Mallows model
of :mod:`._mallows`.

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

Model: Plackett-Luce with the Dirichlet prior on the normalised weights of Rojas-Delgado et al.
(Sec. III-B, "PLD", after Calvo et al.), ``theta ~ Dirichlet(prior, ..., prior)``, flat for
``prior=1`` (the paper's choice); ``theta_i`` is the probability that algorithm i is ranked
first (Sec. III-A). Summaries per posterior draw, then their mean and HDI:

* P(first) = theta_i;
* P(a ranked before b) = theta_a / (theta_a + theta_b) (exact);
* expected rank = 1 + sum_{j != i} theta_j / (theta_i + theta_j) (exact);
* P(top-k) for every k: Monte Carlo, rankings simulated from each draw (Gumbel keys);
* PPC: observed frequency of each (algorithm, rank) against the same frequency in
  rankings replicated from the posterior on the same data sets.

Layer: a sibling of :mod:`bbt_widget.baselines` (the same tie snapping, the core's
:func:`bbt_widget.core.wintable.snap_ties`), above the core.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from itertools import permutations, product
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from ..core.data import TidyResults, as_tidy
from ..core.diagnostics import draws_diagnostics
from ..core.draws import ProgressCallback, fresh_seed, joined, round_seed
from ..core.options import (
    DEFAULT_CHAINS,
    DEFAULT_DRAWS,
    DEFAULT_HDI,
    DEFAULT_ITER_SAMPLING,
    DEFAULT_ITER_WARMUP,
    DrawsMode,
)
from ..core.run_context import RunContext
from ..core.settling import STAGE, check_draws
from ..core.tidy import Layout, Unpack
from ..core.validation import DEFAULT_SEED, check_count, check_hdi, check_seed
from ._common import (
    RankedMeans,
    RankingResult,
    before_table,
    ppc_table,
    ranked_means,
    ranking_table,
    top_k_table,
)
from ._common import top_k_shown as top_k_shown  # re-exported: the top-k chart's panels
from ._plackett_luce_gibbs import sample as gibbs_sample
from ._settling import draws_settings, more_chains, order_claims, with_settled

if TYPE_CHECKING:
    from ..core.tidy import LayoutKeywords
    from ._mallows import MallowsResult

MODELS = ("plackett-luce", "mallows")
TIE_RULES = ("split", "random")
#: Most orderings a tied ranking is split into before a random sample of them stands in.
MAX_SPLIT = 120
#: Rankings simulated per posterior draw for P(top-k) (Monte Carlo error <= 0.5 / sqrt(this
#: times the draws used)).
TOPK_SIMULATIONS = 200
#: Posterior draws used for P(top-k) and the PPC (evenly thinned).
SUMMARY_DRAWS = 1000


@dataclass(frozen=True)
class RankingModelResult(RankingResult):
    """A Plackett-Luce fit of the per-data-set rankings.

    Attributes
    ----------
    ranking, top_k, before, ppc, algorithms, datasets, dropped
        As for every ranking model (:class:`._common.RankingResult`).
    diagnostics
        Convergence diagnostics of the fit (R-hat and ESS of ``theta``).
    draws
        The posterior draws (``theta``: chains x draws x algorithms).
    settings
        Model, ties, prior, the sampler (``"gibbs"``) and its settings; ``draws`` (the
        mode), ``rounds``, ``chains_drawn`` and ``total_draws`` (kept draws in all).
    """

    model_label: ClassVar[str] = "Plackett-Luce"

    def first_draws(self) -> np.ndarray:
        """Per draw (chains, draws, algorithms), each algorithm's probability of being ranked
        first on a new data set: ``theta``, whose means are ``ranking["p_first"]``."""
        return np.asarray(self.draws.params["theta"], dtype=float)


def ranking_model(
    data: pd.DataFrame | TidyResults,
    *,
    model: str = "plackett-luce",
    ties: str = "split",
    prior: float | None = None,
    hdi: float = DEFAULT_HDI,
    chains: int = DEFAULT_CHAINS,
    iter_warmup: int = DEFAULT_ITER_WARMUP,
    iter_sampling: int = DEFAULT_ITER_SAMPLING,
    seed: int | None = DEFAULT_SEED,
    progress: ProgressCallback | None = None,
    thin: int | None = None,
    leap: int | None = None,
    draws: DrawsMode = DEFAULT_DRAWS,
    **layout: Unpack[LayoutKeywords],
) -> RankingModelResult | MallowsResult:
    """Fit a Plackett-Luce or a Mallows model to the rankings of the algorithms on each
    data set.

    Parameters
    ----------
    data
        Results in any layout :func:`bbt_widget.win_table` accepts (each data set is ranked
        by the mean over its folds).
    model
        ``"plackett-luce"`` (default) or ``"mallows"`` (Mallows with Kendall's distance:
        :func:`bbt_widget.ranking._mallows.mallows`).
    ties
        ``"split"`` (default) or ``"random"``; see the module documentation.
    prior
        The prior's hyper-parameter: Plackett-Luce, the Dirichlet concentration of every
        weight (default 1, flat, as Rojas-Delgado et al.); Mallows, the rate of the truncated
        exponential prior on the dispersion (default 0.1, as Rojas-Delgado et al.).
    hdi
        Mass of the HDIs.
    chains, iter_warmup, iter_sampling, seed, progress
        Plackett-Luce: chains, warm-up and kept sweeps of its Gibbs sampler with latent Gamma
        variables, in numpy (Caron and Doucet 2012; :mod:`._plackett_luce_gibbs`); Mallows:
        chains, burn-in and kept draws of its Metropolis-Hastings sampler. ``seed`` also
        seeds the tie sampling and the Monte Carlo summaries.
    thin, leap
        Mallows only: iterations per kept draw and the reach of the leap-and-shift proposal.
    draws
        ``"auto"`` (default): a second round of chains when an order the ``ranking`` table
        claims lies within 3 Monte Carlo standard errors (:mod:`._settling`); ``"fixed"``:
        exactly ``chains * iter_sampling`` draws.
    **layout
        How to read the results: :class:`~bbt_widget.core.tidy.LayoutKeywords` (``sd`` is
        accepted and not needed).

    Returns
    -------
    RankingModelResult or MallowsResult
        ``ranking``, ``top_k``, ``before``, ``ppc``, ``diagnostics``; ``compare(bbt)`` and
        the charts ``chart_top_k()``, ``chart_vs_bbt(bbt)``, ``chart_ppc()``. A Mallows
        result also has ``consensus``, ``dispersion`` and ``rank_probabilities``.

    Raises
    ------
    ValueError
        Before any fit: an unknown model or tie rule, prior <= 0, ``thin`` or ``leap`` with
        Plackett-Luce, fewer than 2 algorithms, fewer than 2 data sets with at least 2
        results.
    """
    asked = Layout.from_keywords(layout)  # not passed on unchecked: each model has more keywords
    if model not in MODELS:
        raise ValueError(f"unknown model {model!r}; use one of {', '.join(map(repr, MODELS))}")
    # what both models take alike; each keeps its own default prior when none is given
    common: dict[str, Any] = {
        **asked.as_dict(),
        "ties": ties,
        "hdi": hdi,
        "chains": chains,
        "iter_sampling": iter_sampling,
        "draws": draws,
        "seed": seed,
        "progress": progress,
    }
    if model == "mallows":
        from ._mallows import mallows

        if prior is not None:
            common["rate"] = prior
        return mallows(data, **common, burn_in=iter_warmup, thin=thin, leap=leap)
    for name, value in (("thin", thin), ("leap", leap)):
        if value is not None:
            raise ValueError(f"{name} is a setting of model='mallows'; leave it out here")
    if prior is not None:
        common["concentration"] = prior
    return plackett_luce(data, **common, iter_warmup=iter_warmup)


def plackett_luce(
    data: pd.DataFrame | TidyResults,
    *,
    ties: str = "split",
    concentration: float = 1.0,
    hdi: float = DEFAULT_HDI,
    chains: int = DEFAULT_CHAINS,
    iter_warmup: int = DEFAULT_ITER_WARMUP,
    iter_sampling: int = DEFAULT_ITER_SAMPLING,
    seed: int | None = DEFAULT_SEED,
    progress: ProgressCallback | None = None,
    draws: DrawsMode = DEFAULT_DRAWS,
    **layout: Unpack[LayoutKeywords],
) -> RankingModelResult:
    """Fit the Plackett-Luce model to the rankings of the algorithms on each data set.

    Parameters
    ----------
    data
        Results in any layout :func:`bbt_widget.win_table` accepts (each data set is ranked
        by the mean over its folds), or the :class:`~bbt_widget.TidyResults` read from them.
    ties
        ``"split"`` (default) or ``"random"``; see the module documentation.
    concentration
        The Dirichlet concentration of every normalised weight (default 1, flat, as
        Rojas-Delgado et al.).
    hdi
        Mass of the HDIs.
    chains, iter_warmup, iter_sampling, seed, progress
        Chains, warm-up and kept sweeps of the Gibbs sampler with latent Gamma variables,
        in numpy (Caron and Doucet 2012; :mod:`._plackett_luce_gibbs`). ``seed`` also seeds
        the tie sampling and the Monte Carlo summaries.
    draws
        ``"auto"`` (default): when the gap in P(first) between two adjacent algorithms of
        ``ranking`` lies within 3 Monte Carlo standard errors of 0, one more round of chains
        (up to 4 times the first round's draws; :mod:`._settling`), seeded from ``seed``;
        ``"fixed"``: exactly ``chains * iter_sampling`` draws.
    **layout
        How to read the results: :class:`~bbt_widget.core.tidy.LayoutKeywords` (``sd`` is
        accepted and not needed).

    Returns
    -------
    RankingModelResult
        ``ranking``, ``top_k``, ``before``, ``ppc``, ``diagnostics``; ``compare(bbt)`` and
        the charts ``chart_top_k()``, ``chart_vs_bbt(bbt)``, ``chart_ppc()``.

    Raises
    ------
    ValueError, TypeError
        Before any fit: an unknown tie rule or ``draws`` mode, a concentration that is not a
        number > 0, fewer than 2 algorithms, fewer than 2 data sets with at least 2 results.

    Examples
    --------
    >>> import bbt_widget as bbt
    >>> pl = bbt.ranking.plackett_luce(bbt.datasets.load_base(), dataset="db", seed=1)
    >>> list(pl.ranking.columns[:3])
    ['algorithm', 'p_first', 'p_first_low']
    """
    if ties not in TIE_RULES:
        raise ValueError(f"unknown ties {ties!r}; use one of {', '.join(map(repr, TIE_RULES))}")
    check_draws(draws)
    prior = concentration
    named = "concentration (ranking_model's prior)"
    if isinstance(prior, bool) or not isinstance(prior, (int, float, np.number)):
        raise TypeError(f"{named} must be a number > 0, got {prior!r}")
    if not (np.isfinite(prior) and prior > 0):
        raise ValueError(
            f"{named} must be a finite number > 0 (Rojas-Delgado et al.: 1, flat); got {prior}"
        )
    hdi = check_hdi(hdi)
    settings: dict[str, Any] = {
        "chains": check_count(chains, "chains"),
        "iter_warmup": check_count(iter_warmup, "iter_warmup"),
        "iter_sampling": check_count(iter_sampling, "iter_sampling"),
        "seed": check_seed(seed),
    }
    ranked, orders, weights, counts, rng = _prepared(
        as_tidy(data, **layout), ties, prior, settings["seed"]
    )
    means, datasets, dropped = ranked.means, ranked.datasets, ranked.dropped
    n_alg = len(ranked.algorithms)
    settings["seed"] = fresh_seed(settings["seed"])
    names = list(ranked.algorithms)
    context = RunContext(progress)
    sampled = gibbs_sample(counts, context=context, **settings)
    rounds = 1
    if draws == "auto":
        more = more_chains(sampled.params["theta"], names, settings["iter_sampling"])
        if more:
            extra = settings | {"chains": more, "seed": round_seed(settings["seed"], 1)}
            sampled = joined(
                sampled,
                gibbs_sample(counts, context=context.relabelled("sampling", STAGE), **extra),
            )
            rounds = 2
    chains_drawn = int(sampled.params["theta"].shape[0])
    theta = sampled.params["theta"].reshape(-1, n_alg)
    diag = draws_diagnostics(sampled, ["theta"])
    if not diag.ok:
        from ..fitting import DiagnosticsWarning

        warnings.warn(
            "Plackett-Luce fit diagnostics failed: " + "; ".join(diag.messages),
            DiagnosticsWarning,
            stacklevel=2,
        )
    ranking = _ranking(theta, names, hdi, chains=chains_drawn)
    claims = order_claims(sampled.params["theta"], names, list(ranking["algorithm"]))
    ranking = with_settled(ranking, claims)
    order = [names.index(a) for a in ranking["algorithm"]]
    thinned = theta[np.linspace(0, len(theta) - 1, min(SUMMARY_DRAWS, len(theta))).astype(int)]
    return RankingModelResult(
        ranking=ranking,
        top_k=_top_k(thinned, names, hdi, rng),
        before=_before(theta, names, order, hdi),
        ppc=_ppc(thinned, names, orders, weights, np.isfinite(means), hdi, rng),
        diagnostics=diag,
        draws=sampled,
        algorithms=tuple(names),
        datasets=datasets,
        dropped=dropped,
        settings=settings
        | {
            "model": "plackett-luce",
            "ties": ties,
            "prior": float(prior),
            "sampler": "gibbs",
            "engine": sampled.engine,
            "lower_is_better": ranked.lower_is_better,
        }
        | draws_settings(rounds, chains_drawn, settings["iter_sampling"], draws),
    )


def _prepared(
    tidy: TidyResults,
    ties: str,
    prior: float,
    seed: int | None,
) -> tuple[RankedMeans, list[np.ndarray], list[float], dict[str, Any], np.random.Generator]:
    """The rankings of the results, their orderings and weights, the model's data
    (:func:`pl_data`), and the generator seeded with ``seed`` as the tie splitting left it
    (the summaries go on with it)."""
    ranked = ranked_means(tidy)
    rng = np.random.default_rng(seed)
    orders, weights = expand_rankings(ranked.means, ties, rng)
    counts = pl_data(orders, weights, len(ranked.algorithms), prior)
    return ranked, orders, weights, counts, rng


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
    """The model's data, the rankings reduced to weighted counts, as the Gibbs sampler reads
    them (and the model's Stan program, ``tests/oracles/plackett_luce.stan``, the tests'
    oracle).

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


def _expected_ranks(theta: np.ndarray) -> np.ndarray:
    """Per draw, 1 + sum_j P(j before i) = 1 + sum_{j != i} theta_j / (theta_i + theta_j)."""
    before = theta[:, None, :] / (theta[:, :, None] + theta[:, None, :])  # [d, i, j]: j before i
    return np.asarray(1.0 + before.sum(axis=2) - 0.5)  # the j = i term is 1/2


def _ranking(theta: np.ndarray, names: list[str], hdi: float, chains: int) -> pd.DataFrame:
    return ranking_table(names, theta, _expected_ranks(theta), hdi, chains)


def _simulated_positions(
    theta: np.ndarray, n_sim: int, rng: np.random.Generator, present: np.ndarray | None = None
) -> np.ndarray:
    """Positions (0 = first) of each algorithm in rankings drawn from PL(theta).

    Exponential race: each algorithm finishes at ``E_i / theta_i`` with ``E_i`` standard
    exponential, and the order of finishing is a PL ranking (the Gumbel trick, sorting
    ``log theta_i - log E_i``, without the logarithms). Shape (draws, n_sim, algorithms);
    absent algorithms (``present`` False, shape (n_sim, algorithms)) come last.
    """
    keys = rng.standard_exponential(size=(len(theta), n_sim, theta.shape[1]))
    keys /= theta[:, None, :]
    if present is not None:
        keys[:, ~present] = np.inf
    order = np.argsort(keys, axis=2, kind="stable")  # the algorithm at each place
    positions = np.empty_like(order)  # its inverse: the place of each algorithm
    places = np.broadcast_to(np.arange(order.shape[2]), order.shape)
    np.put_along_axis(positions, order, places, axis=2)
    return positions


def _place_counts(positions: np.ndarray, counted: np.ndarray | None = None) -> np.ndarray:
    """How many rankings (axis 1 of ``positions``, shape (draws, rankings, algorithms)) put
    each algorithm at each place: shape (draws, algorithms, places); with ``counted``
    (rankings x algorithms), only the entries it marks."""
    draws, _, n = positions.shape
    cell = (np.arange(draws)[:, None, None] * n + np.arange(n)) * n + positions
    weights = None if counted is None else np.broadcast_to(counted, positions.shape).ravel()
    found = np.bincount(cell.ravel(), weights=weights, minlength=draws * n * n)
    return found.reshape(draws, n, n)


def _top_k(
    theta: np.ndarray, names: list[str], hdi: float, rng: np.random.Generator
) -> pd.DataFrame:
    n = len(names)
    counts = np.zeros((len(theta), n, n))  # [draw, algorithm, position]
    for start in range(0, len(theta), 100):  # chunks keep the simulated keys small
        pos = _simulated_positions(theta[start : start + 100], TOPK_SIMULATIONS, rng)
        counts[start : start + 100] = _place_counts(pos) / TOPK_SIMULATIONS
    return top_k_table(names, counts, hdi)


def _before(theta: np.ndarray, names: list[str], order: list[int], hdi: float) -> pd.DataFrame:
    return before_table(names, order, lambda i, j: theta[:, i] / (theta[:, i] + theta[:, j]), hdi)


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
        replicated[start : start + 100] = _place_counts(pos, present) / n_data
    return ppc_table(names, observed, replicated, hdi)
