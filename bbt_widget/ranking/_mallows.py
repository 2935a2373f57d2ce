"""``ranking_model(model="mallows")``: the Bayesian Mallows model of the per-data-set
rankings with Kendall's distance (Rojas-Delgado et al. 2022, Sec. II-C and III), sampled with numpy.

Paper 003: J. Rojas-Delgado, J. Ceberio, B. Calvo and J. A. Lozano, "Bayesian Performance
Analysis for Algorithm Ranking Comparison", IEEE Transactions on Evolutionary Computation
26(6), 2022, doi:10.1109/TEVC.2022.3208110. Sampler: V. Vitelli, Ø. Sørensen, M. Crispino,
A. Frigessi and E. Arjas, "Probabilistic Preference Learning with the Mallows Rank Model",
Journal of Machine Learning Research 18(158):1-49, 2018,
https://jmlr.org/papers/v18/15-481.html.

Rankings: as Plackett-Luce (:func:`._common.ranked_means`), each data set ranks
its algorithms by mean score, with ``win_table``'s direction and tolerance rules.

* Ties, ``"split"`` (default): each tied pair counts half in each order, i.e. the average of
  the Kendall distance over all the orderings that break the ties (the same symmetric split
  as Plackett-Luce, here exact at any size: a tied pair is discordant in half of them).
  ``"random"``: each tie broken at random (seeded), once.
* Missing results: the full ranking of a data set where an algorithm has no result is latent
  and sampled with the parameters (data augmentation, Vitelli et al. Sec. 4.1), so the
  likelihood is the model's probability of the observed order of the algorithms present.

Model (Rojas-Delgado et al. 2022, Eq. 6-8, 14-15):
``P(pi) = exp(-beta d(pi, rho)) / psi_n(beta)`` with
Kendall's distance d, ``rho`` uniform over rankings, ``beta`` exponential with rate
:data:`RATE` = 0.1 truncated at :data:`BETA_MAX`. The paper prints the truncation as
1.0e-6; read as 1e6, the value of Vitelli et al. and their BayesMallows package: a
truncation at 1e-6 would pin beta at 0, every ranking equally likely, whatever the data.
Vitelli et al. write ``exp(-alpha d / n)``: their alpha is n beta.

Sampler settings (defaults; the sampler is in :mod:`._mallows_sampler`): 4 chains from
random consensus rankings and dispersions; ``thin`` = 20 iterations per kept draw; burn-in
1000 x 20 iterations, then 1000 kept draws per chain (1000 x 20 iterations); one iteration is
a leap-and-shift proposal for rho with reach ``leap`` = max(1, n // 5) (BayesMallows'
default) and a log-normal step for beta (its scale tuned in burn-in to accept 30%); with
missing results, once per kept draw, each latent ranking moves one of its missing algorithms
(a Gibbs step). Diagnostics: R-hat on beta and on the consensus rank of every algorithm that
moves, bulk and tail ESS on beta.

Summaries, per posterior draw (rho, beta) and then mean and HDI over draws, all exact (the
position of each algorithm in a ranking drawn from the model: :func:`position_probabilities`):
P(first) (Rojas-Delgado et al. 2022, Eq. 20), expected rank, P(top-k), P(a before b); the
posterior of the consensus itself: its mode and the probability of each algorithm's consensus rank.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import altair as alt
import numpy as np
import pandas as pd

from ..core.data import TidyResults, as_tidy
from ..core.diagnostics import ESS_PER_CHAIN, RHAT_MAX, Diagnostics, _az
from ..core.draws import Draws, ProgressCallback, fresh_seed, round_seed
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
from ..core.sizing import FitTooLargeError, LongRunWarning
from ..core.tidy import Unpack
from ..core.validation import DEFAULT_SEED, check_count, check_hdi, check_seed
from ._common import (
    RankingResult,
    before_table,
    ppc_table,
    ranked_means,
    ranking_table,
    summarise,
    top_k_table,
)
from ._mallows_sampler import (
    MallowsChains,
    before_probability,
    check_mallows_size,
    position_probabilities,
    run_chains,
    sample_rankings,
)
from ._settling import draws_settings, more_chains, order_claims, with_settled

if TYPE_CHECKING:  # typing.Unpack is Python 3.11; the checker knows it on 3.10 too
    from ..core.tidy import LayoutKeywords

__all__ = ["Consensus", "Dispersion", "MallowsResult", "mallows"]

TIE_RULES = ("split", "random")
#: Rate of the truncated exponential prior on beta (Rojas-Delgado et al. 2022, Sec. IV).
RATE = 0.1
#: Truncation of that prior (Rojas-Delgado et al. print 1.0e-6: see the module documentation).
BETA_MAX = 1e6
#: Iterations per kept draw (on the shipped 16 x 132 results, R-hat of the consensus ranks
#: stayed <= 1.008 over six seeds with 20; with 10 it passed 1.01 for two of them).
THIN = 20
#: Posterior draws used for the posterior-predictive check (evenly thinned).
PPC_DRAWS = 500


@dataclass(frozen=True)
class Consensus:
    """The posterior mode of the consensus ranking: ``order`` (algorithms, best first) and
    ``probability``, the share of posterior draws with exactly that order."""

    order: tuple[str, ...]
    probability: float

    def __str__(self) -> str:
        return f"{' > '.join(self.order)} (posterior probability {self.probability:.3f})"


@dataclass(frozen=True)
class Dispersion:
    """Posterior of the dispersion beta (larger: rankings closer to the consensus)."""

    mean: float
    low: float
    high: float
    hdi: float


@dataclass(frozen=True)
class MallowsResult(RankingResult):
    """A Bayesian Mallows fit (Kendall's distance) of the per-data-set rankings.

    Attributes
    ----------
    consensus
        :class:`Consensus`: the posterior-mode order and its posterior probability.
    dispersion
        :class:`Dispersion`: mean and HDI of beta.
    rank_probabilities
        Algorithms (rows, in the consensus order) x ranks 1..n (columns): the posterior
        probability that the algorithm holds that rank in the consensus.
    ranking, top_k, before, ppc
        As for every ranking model (:class:`._common.RankingResult`), for a ranking drawn
        from the model (a new data set): ``p_first`` = P(ranked first), ``expected_rank``,
        P(in the top k), P(a ranked before b), rank frequencies against their replicates.
    diagnostics
        R-hat (beta and consensus ranks), ESS (beta); no divergences or tree depths (not
        Hamiltonian Monte Carlo).
    draws
        ``beta`` (chains x draws) and ``rank`` (chains x draws x algorithms, 1 = first);
        ``draws.info`` holds the acceptance rates and the beta step.
    algorithms, datasets, dropped, settings
        As for every ranking model; ``settings`` adds ``thin``, ``leap``, ``rate``, ``beta_max``
        (and the rounds: ``draws``, ``rounds``, ``chains_drawn``, ``total_draws``).
    """

    # keyword-only: they follow the shared fields, the last of which has a default
    _: KW_ONLY
    consensus: Consensus
    dispersion: Dispersion
    rank_probabilities: pd.DataFrame

    model_label: ClassVar[str] = "Mallows"

    def first_draws(self) -> np.ndarray:
        """Per draw (chains, draws, algorithms), each algorithm's probability of being ranked
        first on a new data set, exactly from the draw's consensus and dispersion: the draws
        whose means are ``ranking["p_first"]``."""
        rank = np.asarray(self.draws.params["rank"], dtype=np.int64) - 1  # 0 = first
        return first_probabilities(np.asarray(self.draws.params["beta"], dtype=float), rank)

    def chart_rank_probabilities(self) -> alt.Chart:
        """Heat map: P(algorithm holds rank r in the consensus), algorithms in the
        consensus order."""
        from ..charts.encodings import inline_rows

        frame = self.rank_probabilities.reset_index().melt(
            id_vars="algorithm", var_name="rank", value_name="p"
        )
        chart: alt.Chart = (
            alt.Chart(inline_rows(frame))  # algorithms x ranks: 40,000 cells at 200 algorithms
            .mark_rect()
            .encode(
                x=alt.X("rank:O", title="rank in the consensus (1 = best)"),
                y=alt.Y("algorithm:N", sort=list(self.consensus.order), title=None),
                color=alt.Color("p:Q", title="probability", scale=alt.Scale(domain=[0, 1])),
                tooltip=[
                    alt.Tooltip("algorithm:N"),
                    alt.Tooltip("rank:O"),
                    alt.Tooltip("p:Q", format=".3f"),
                ],
            )
            .properties(title="Mallows: consensus rank probabilities")
        )
        return chart


def mallows(
    data: pd.DataFrame | TidyResults,
    *,
    ties: str = "split",
    rate: float = RATE,
    hdi: float = DEFAULT_HDI,
    chains: int = DEFAULT_CHAINS,
    burn_in: int = DEFAULT_ITER_WARMUP,
    iter_sampling: int = DEFAULT_ITER_SAMPLING,
    thin: int | None = None,
    leap: int | None = None,
    seed: int | None = DEFAULT_SEED,
    progress: ProgressCallback | None = None,
    cancel: Any = None,
    draws: DrawsMode = DEFAULT_DRAWS,
    **layout: Unpack[LayoutKeywords],
) -> MallowsResult:
    """Fit the Bayesian Mallows model (Kendall's distance) to the per-data-set rankings.

    ``bbt.ranking.mallows(data, ...)``; ``bbt.ranking_model(data, model="mallows", ...)``
    calls it (its ``prior`` is ``rate``, ``iter_warmup`` ``burn_in``).

    Parameters
    ----------
    data
        As :func:`bbt_widget.ranking_model`.
    ties
        ``"split"`` (default) or ``"random"``; see the module documentation.
    rate
        Rate of the exponential prior on beta (Rojas-Delgado et al.: 0.1).
    hdi
        Mass of the HDIs.
    chains, burn_in, iter_sampling, thin, leap
        ``chains`` chains; ``burn_in * thin`` iterations discarded, then ``iter_sampling``
        kept per chain, one every ``thin`` iterations (default :data:`THIN`); ``leap``: reach of the
        leap-and-shift proposal, 1..n-1 (default max(1, n // 5)).
    seed, progress, cancel
        Seed of the sampler, tie breaks and summaries; ``progress(stage, fraction)``;
        ``cancel.is_set()`` stops the sampler (``FitCancelled``).
    draws
        ``"auto"`` (default): when the gap in P(first) between two adjacent algorithms of
        ``ranking`` lies within 3 Monte Carlo standard errors of 0, one more round of chains
        (up to 4 times the first round's draws, fewer where their summaries would not fit in
        memory; :mod:`._settling`), seeded from ``seed``; ``"fixed"``: exactly ``chains *
        iter_sampling`` draws.
    **layout
        How to read the results: :class:`~bbt_widget.core.tidy.LayoutKeywords` (``sd`` is
        accepted and not needed).

    Raises
    ------
    ValueError
        Before sampling: an unknown tie rule or ``draws`` mode (an integer: the kept draws
        are ``iter_sampling``), rate <= 0, a bad count or leap, fewer than 2
        algorithms or data sets to rank; a :class:`~bbt_widget.core.sizing.FitTooLargeError`
        when the summaries would not fit in memory (memory grows with draws x algorithms^2;
        a fit estimated to take minutes gives its time and memory beforehand, a
        :class:`~bbt_widget.core.sizing.LongRunWarning`).
    """
    if ties not in TIE_RULES:
        raise ValueError(f"unknown ties {ties!r}; use one of {', '.join(map(repr, TIE_RULES))}")
    if isinstance(rate, bool) or not isinstance(rate, (int, float, np.number)):
        raise TypeError(
            f"rate (ranking_model's prior) must be a number > 0 (the rate of the prior on "
            f"the dispersion); got {rate!r}"
        )
    if not (np.isfinite(rate) and rate > 0):
        raise ValueError(
            f"rate (ranking_model's prior) must be a finite number > 0 (the rate of the "
            f"exponential prior on the dispersion; Rojas-Delgado et al.: 0.1); got {rate}"
        )
    if not isinstance(draws, str):
        raise TypeError(
            f"draws is the sampling mode, 'auto' or 'fixed'; the kept draws per chain are "
            f"iter_sampling (got draws={draws!r})"
        )
    check_draws(draws)
    hdi = check_hdi(hdi)
    settings: dict[str, Any] = {
        "chains": check_count(chains, "chains"),
        "iter_warmup": check_count(burn_in, "iter_warmup"),
        "iter_sampling": check_count(iter_sampling, "iter_sampling"),
        "thin": check_count(THIN if thin is None else thin, "thin"),
        "seed": check_seed(seed),
    }
    ranked = ranked_means(as_tidy(data, **layout))
    n = len(ranked.algorithms)
    leap = max(1, n // 5) if leap is None else check_count(leap, "leap")
    if leap > n - 1:
        raise ValueError(f"leap must be between 1 and n - 1 = {n - 1} algorithms; got {leap}")
    # the summaries hold every draw's (algorithm, place) probabilities: refused before sampling
    check_mallows_size(
        n, settings["chains"], settings["iter_warmup"], settings["iter_sampling"], settings["thin"]
    )
    settings["seed"] = fresh_seed(settings["seed"])
    rng = np.random.default_rng(settings["seed"])
    scores = ranked.means if ties == "split" else _break_ties(ranked.means, rng)
    start = time.perf_counter()

    def run(chains: int, rng: np.random.Generator, told: RunContext) -> MallowsChains:
        return run_chains(
            pair_counts(scores),
            scores[~np.isfinite(scores).all(axis=1)],
            n_rankings=len(scores),
            rate=float(rate),
            beta_max=BETA_MAX,
            chains=chains,
            burn_in=settings["iter_warmup"],
            draws=settings["iter_sampling"],
            thin=settings["thin"],
            leap=leap,
            rng=rng,
            context=told,
        )

    context = RunContext(progress, cancel)
    out = run(settings["chains"], rng, context)
    rounds = 1
    more = _more_chains(out, ranked.algorithms, settings) if draws == "auto" else 0
    if more:
        seeded = np.random.default_rng(round_seed(settings["seed"], 1))
        out = _joined(out, run(more, seeded, context.relabelled("sampling", STAGE)))
        rounds = 2
    elapsed = time.perf_counter() - start
    diag = mallows_diagnostics(out.rank, out.beta)
    if not diag.ok:
        from ..fitting import DiagnosticsWarning

        warnings.warn(
            "Mallows fit diagnostics failed: " + "; ".join(diag.messages),
            DiagnosticsWarning,
            stacklevel=3,
        )
    names = list(ranked.algorithms)
    rank = out.rank.reshape(-1, n).astype(np.int64)
    beta = out.beta.ravel()
    positions = np.take_along_axis(position_probabilities(beta, n), rank[:, :, None], axis=1)
    ranking = _ranking(positions, names, hdi, chains=out.rank.shape[0])
    first = positions[:, :, 0].reshape(out.rank.shape)
    ranking = with_settled(ranking, order_claims(first, names, list(ranking["algorithm"])))
    order = [names.index(a) for a in ranking["algorithm"]]
    consensus, rank_probabilities = _consensus(rank, names)
    mean, low, high = (float(v[0]) for v in summarise(beta[:, None], hdi))
    pick = np.linspace(0, len(beta) - 1, min(PPC_DRAWS, len(beta))).astype(int)
    return MallowsResult(
        consensus=consensus,
        dispersion=Dispersion(mean=mean, low=low, high=high, hdi=hdi),
        rank_probabilities=rank_probabilities,
        ranking=ranking,
        top_k=top_k_table(names, positions, hdi),
        before=_before(rank, beta, names, order, hdi),
        ppc=_ppc(rank[pick], beta[pick], names, scores, hdi, rng),
        diagnostics=diag,
        draws=Draws(
            params={"beta": out.beta, "rank": out.rank.astype(np.int64) + 1},
            sampler={},
            engine="numpy",
            timings={"compile": 0.0, "sample": elapsed},
            info={
                "accept_rho": out.accept_rho.tolist(),
                "accept_beta": out.accept_beta.tolist(),
                "beta_step": out.beta_step.tolist(),
            },
        ),
        algorithms=tuple(names),
        datasets=ranked.datasets,
        dropped=ranked.dropped,
        settings=settings
        | {
            "model": "mallows",
            "ties": ties,
            "prior": float(rate),
            "rate": float(rate),
            "beta_max": BETA_MAX,
            "leap": leap,
            "engine": "numpy",
            "lower_is_better": ranked.lower_is_better,
        }
        | draws_settings(rounds, int(out.rank.shape[0]), settings["iter_sampling"], draws),
    )


def first_probabilities(beta: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Per draw of the dispersion ``beta`` (chains, draws) and consensus ranks ``rank``
    (chains, draws, algorithms; 0 = first), each algorithm's probability of being ranked
    first on a new data set, exactly (same shape as ``rank``)."""
    n = rank.shape[-1]
    places = position_probabilities(beta.reshape(-1), n)  # [draw, consensus place, place]
    first = np.take_along_axis(places[:, :, 0], rank.reshape(-1, n), axis=1)
    return first.reshape(rank.shape)


def _more_chains(out: MallowsChains, algorithms: tuple[str, ...], settings: dict[str, Any]) -> int:
    """``draws="auto"``: the chains of a second round for the first round's draws ``out``
    (:func:`._settling.more_chains`), none when their summaries would not fit in memory."""
    first = first_probabilities(out.beta, out.rank.astype(np.int64))
    more = more_chains(first, list(algorithms), settings["iter_sampling"])
    if more:
        total = settings["chains"] + more
        try:  # the first round has warned of its own time; the second is as long per chain
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", LongRunWarning)
                check_mallows_size(
                    len(algorithms),
                    total,
                    settings["iter_warmup"],
                    settings["iter_sampling"],
                    settings["thin"],
                )
        except FitTooLargeError:
            return 0
    return more


def _joined(first: MallowsChains, more: MallowsChains) -> MallowsChains:
    """The chains of ``first`` and then those of ``more``, as one set of draws."""
    return MallowsChains(
        rank=np.concatenate((first.rank, more.rank)),
        beta=np.concatenate((first.beta, more.beta)),
        accept_rho=np.concatenate((first.accept_rho, more.accept_rho)),
        accept_beta=np.concatenate((first.accept_beta, more.accept_beta)),
        beta_step=np.concatenate((first.beta_step, more.beta_step)),
    )


def pair_counts(scores: np.ndarray) -> np.ndarray:
    """``W[i, j]``: the number of data sets ranking i before j, a tie counting 1/2 each way,
    over the data sets where both have a result (``scores``: higher is better, NaN none)."""
    above = scores[:, :, None] > scores[:, None, :]
    tied = scores[:, :, None] == scores[:, None, :]
    n = scores.shape[1]
    tied[:, np.arange(n), np.arange(n)] = False
    return np.asarray(above.sum(axis=0) + 0.5 * tied.sum(axis=0))


def _break_ties(means: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Scores with every tie broken at random: minus the rank after a random tie break."""
    out = np.full(means.shape, np.nan)
    for row, values in enumerate(means):
        idx = np.flatnonzero(np.isfinite(values))
        order = idx[np.lexsort((rng.random(len(idx)), -values[idx]))]
        out[row, order] = -np.arange(len(idx), dtype=float)
    return out


def mallows_diagnostics(rank: np.ndarray, beta: np.ndarray) -> Diagnostics:
    """R-hat on beta and on each algorithm's consensus rank (those that move), bulk and tail
    ESS on beta, with the thresholds of :func:`bbt_widget.core.diagnostics.diagnostics`."""
    az = _az()
    moving = [i for i in range(rank.shape[2]) if np.ptp(rank[:, :, i]) > 0]
    rhats = [float(az.rhat(beta))] + [float(az.rhat(rank[:, :, i].astype(float))) for i in moving]
    rhat = float(np.nanmax(rhats))
    ess_bulk = float(az.ess(beta, method="bulk"))
    ess_tail = float(az.ess(beta, method="tail"))
    need = ESS_PER_CHAIN * beta.shape[0]
    messages = []
    if not rhat <= RHAT_MAX:
        messages.append(
            f"R-hat {rhat:.3f} > {RHAT_MAX}: chains disagree; run longer chains "
            "(iter_sampling, iter_warmup or thin)"
        )
    if not ess_bulk >= need:
        messages.append(f"bulk ESS {ess_bulk:.0f} < {need}: increase iter_sampling or thin")
    if not ess_tail >= need:
        messages.append(f"tail ESS {ess_tail:.0f} < {need}: increase iter_sampling or thin")
    return Diagnostics(
        max_rhat=rhat,
        min_ess_bulk=ess_bulk,
        min_ess_tail=ess_tail,
        divergences=0,
        treedepth_saturated=0,
        min_ebfmi=float("nan"),
        ok=not messages,
        messages=messages,
    )


def _consensus(rank: np.ndarray, names: list[str]) -> tuple[Consensus, pd.DataFrame]:
    """The modal consensus order and the probability of each consensus rank."""
    rows, counts = np.unique(rank, axis=0, return_counts=True)
    mode = rows[np.argmax(counts)]
    order = [names[i] for i in np.argsort(mode)]
    n = len(names)
    probs = (rank[:, :, None] == np.arange(n)[None, None, :]).mean(axis=0)
    table = pd.DataFrame(probs, index=pd.Index(names, name="algorithm"), columns=range(1, n + 1))
    table.columns.name = "rank"
    return (
        Consensus(order=tuple(order), probability=float(counts.max() / len(rank))),
        table.loc[order],
    )


def _ranking(positions: np.ndarray, names: list[str], hdi: float, chains: int) -> pd.DataFrame:
    """P(first) and expected rank per draw from ``positions`` [draw, algorithm, place] (the
    draws of ``chains`` chains one after the other)."""
    expected = positions @ np.arange(1, len(names) + 1, dtype=float)
    return ranking_table(names, positions[:, :, 0], expected, hdi, chains)


def _before(
    rank: np.ndarray, beta: np.ndarray, names: list[str], order: list[int], hdi: float
) -> pd.DataFrame:
    def p_before(i: int, j: int) -> np.ndarray:
        gap = rank[:, j] - rank[:, i]
        near = before_probability(beta, np.abs(gap))
        return np.where(gap > 0, near, 1.0 - near)

    return before_table(names, order, p_before, hdi)


def _ppc(
    rank: np.ndarray,
    beta: np.ndarray,
    names: list[str],
    scores: np.ndarray,
    hdi: float,
    rng: np.random.Generator,
) -> pd.DataFrame:
    """Share of data sets where each algorithm took each rank among those with a result:
    observed (a tie spread over the ranks it spans) against rankings replicated from each
    draw on the same data sets."""
    n_data, n = scores.shape
    present = np.isfinite(scores)
    observed = np.zeros((n, n))
    for values, here in zip(scores, present):
        idx = np.flatnonzero(here)
        better = (values[idx][None, :] > values[idx][:, None]).sum(axis=1)
        level = (values[idx][None, :] == values[idx][:, None]).sum(axis=1)
        for i, b, t in zip(idx, better, level):
            observed[i, b : b + t] += 1.0 / t
    observed /= n_data
    replicated = np.zeros((len(beta), n, n))
    for start in range(0, len(beta), 100):
        sim = sample_rankings(rank[start : start + 100], beta[start : start + 100], n_data, rng)
        keys = np.where(present[None], sim, n)  # absent algorithms last
        pos = np.argsort(np.argsort(keys, axis=2, kind="stable"), axis=2, kind="stable")
        for p in range(n):
            hit = (pos == p) & present[None]
            replicated[start : start + 100, :, p] = hit.sum(axis=1) / n_data
    return ppc_table(names, observed, replicated, hdi)
