"""How many more data sets would settle a claim: a posterior predictive forecast.

For ``n`` more data sets like the ones fitted, each pair's claim under a rule is forecast by
simulation. One future is drawn per posterior draw (abilities and sigma from the fit): on each
new data set a pair met with the frequency it met on the old ones, tied at its own tie rate
(drawn from its Beta posterior, Jeffreys prior: the tie rate is data, not part of the model),
and otherwise was won by ``a`` with probability ``inv_logit(beta_a - beta_b)``. The grown
counts, under the fit's tie policy, get a posterior (by default the normal approximation of
the abilities given sigma, :func:`normal_update`; or any :data:`GrownPosterior`, e.g. full
refits), and the package's own rules (:func:`~.posterior.weak_decision`,
:func:`~.posterior.strong_decision`) give the claim. The forecast probability of a claim is
the share of futures that carry it, with its binomial Monte Carlo standard error.

The futures for the values of ``n`` are nested (the data sets added for 25 are those of 10
and 15 more), so the curves of P(claim) against ``n`` are smooth in ``n``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import posterior
from .options import DEFAULT_ROPE, RuleChoice, resolve_interpretation
from .validation import check_count, check_rope

__all__ = [
    "CLAIM_COLUMNS",
    "DEFAULT_FUTURES",
    "DEFAULT_N",
    "GrownPosterior",
    "Growth",
    "MoreData",
    "Remembered",
    "check_n",
    "forecast",
    "normal_update",
]

#: The numbers of more data sets forecast unless told otherwise.
DEFAULT_N: tuple[int, ...] = (10, 25, 50, 100, 200)
#: Futures simulated per value of ``n`` unless told otherwise: the Monte Carlo standard error of
#: a forecast probability is at most 0.5 / sqrt(futures), 0.016 here.
DEFAULT_FUTURES = 1000
#: The claims in the order of the forecast's columns (``p_<claim>``, ``mcse_<claim>``).
CLAIM_COLUMNS = {
    "a better": "a_better",
    "b better": "b_better",
    "equivalent": "equivalent",
    "no claim": "no_claim",
}
#: Gauss-Hermite nodes for the mean of inv_logit of a normal: exact to ~1e-8 at the spreads
#: a posterior of P(a > b) has.
_HERMITE = np.polynomial.hermite_e.hermegauss(12)
#: Newton steps of the normal update stop once no ability moves by more than this.
_NEWTON_TOL = 1e-7
_NEWTON_MAX = 50


@dataclass(frozen=True)
class Growth:
    """The win counts of the fitted pairs in every simulated future, tie policy applied.

    Attributes
    ----------
    i1, i2
        The algorithms (indices into the fit's algorithms) of each row of the win table.
    win1, win2
        Shape (futures, rows): old plus new wins of ``i1`` and of ``i2``.
    prior
        The prior's sigma the normal update conditions on (the fit's posterior mean).
    start
        Where the normal update starts: the fit's posterior mean of the abilities.
    counts
        Shape (futures, rows, 3): old plus new ``win1, win2, ties`` before the tie policy.
    """

    i1: np.ndarray
    i2: np.ndarray
    win1: np.ndarray
    win2: np.ndarray
    prior: float
    start: np.ndarray
    counts: np.ndarray


#: The posterior of grown counts: ``(growth, pairs, rope) -> (mean, above_50, in_rope)``, each
#: shaped (futures, pairs), as :func:`~.posterior.summarise` defines them for the pairs
#: ``(a, b)`` (algorithm indices).
GrownPosterior = Callable[
    [Growth, Sequence[tuple[int, int]], tuple[float, float]],
    tuple[np.ndarray, np.ndarray, np.ndarray],
]


@dataclass(frozen=True)
class MoreData:
    """The forecast of each pair's claim after more data sets (:meth:`BBTResult.more_data`).

    Attributes
    ----------
    table
        Per pair (summary order) and ``n``: ``alg_a, alg_b, n, p_a_better, p_b_better,
        p_equivalent, p_no_claim`` (summing to 1) and their Monte Carlo standard errors
        ``mcse_a_better, ...``; ``claim_now`` is the pair's claim in the fit's summary.
    settles
        Per pair with no claim now: ``alg_a, alg_b`` and ``smallest_n``, the smallest ``n``
        forecast at which some claim is more likely than not (``<NA>``: none within the
        largest ``n``), and ``label``, the same as text (``"50"`` or ``"not within 200"``).
    rule
        The rule the claims follow (``"weak"`` or ``"strong"``).
    rope
        The ROPE of the claims.
    n
        The numbers of more data sets forecast, ascending.
    futures
        Futures simulated per ``n``.
    method
        How the grown counts' posterior was computed (``"normal"``: :func:`normal_update`).
    """

    table: pd.DataFrame
    settles: pd.DataFrame
    rule: str
    rope: tuple[float, float]
    n: tuple[int, ...]
    futures: int
    method: str

    def p_claim(self) -> pd.Series:
        """P(some claim) per row of :attr:`table`: one minus ``p_no_claim``."""
        return 1.0 - self.table["p_no_claim"]


def check_n(n: int | Sequence[int]) -> tuple[int, ...]:
    """Validate the numbers of more data sets: positive integers, given once each.

    Raises
    ------
    ValueError
        For an empty list, a value that is not an integer >= 1, or a repeated value.
    """
    values = [n] if isinstance(n, (int, np.integer)) and not isinstance(n, bool) else n
    try:
        values = list(values)  # type: ignore[arg-type]
    except TypeError:
        raise ValueError(f"n must be an integer >= 1 or a list of them, got {n!r}") from None
    if not values:
        raise ValueError("n must name at least one number of more data sets, e.g. n=(50, 100)")
    checked = [check_count(v, "each n (more data sets)") for v in values]
    if len(set(checked)) != len(checked):
        raise ValueError(f"n lists a number twice: {checked}; give each number of data sets once")
    return tuple(sorted(checked))


def forecast(
    *,
    beta: np.ndarray,
    sigma: np.ndarray,
    raw: pd.DataFrame,
    algorithms: Sequence[str],
    ties: str | None,
    datasets: int | None,
    pairs: Sequence[tuple[int, int]],
    compared: np.ndarray,
    claims_now: Sequence[str],
    n: int | Sequence[int] = DEFAULT_N,
    rule: RuleChoice | None = None,
    rope: Sequence[float] = DEFAULT_ROPE,
    futures: int = DEFAULT_FUTURES,
    seed: int | Sequence[int] = 0,
    grown: GrownPosterior | None = None,
    method: str = "normal",
) -> MoreData:
    """Forecast each pair's claim after ``n`` more data sets (see the module's docstring).

    Parameters
    ----------
    beta, sigma
        Posterior draws of the abilities (draws, algorithms) and of sigma (draws,).
    raw
        The raw counts (``alg1, alg2, win1, win2, ties``: no tie policy applied) of the fit.
    algorithms
        The fit's algorithms (the columns of ``beta``).
    ties
        The fit's tie policy (``"spread"``, ``"add"``, ``"forget"`` or ``None``).
    datasets
        How many data sets the counts came from (``None``: the most games of any pair).
    pairs, compared, claims_now
        The summary's pairs (algorithm indices, ``a`` first), whether each is compared, and
        its claim now under ``rule``.
    n, rule, rope, futures, seed
        As for :meth:`BBTResult.more_data`; ``seed`` is the entropy of the futures.
    grown
        The posterior of the grown counts (default :func:`normal_update`), named ``method``.

    Returns
    -------
    MoreData
    """
    ns = check_n(n)
    rope = check_rope(rope)
    futures = check_count(futures, "draws (futures per n)")
    chosen = resolve_interpretation(rule or "auto", len(algorithms)).rule
    grown = grown or normal_update
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    index = {a: k for k, a in enumerate(algorithms)}
    i1 = raw["alg1"].map(index).to_numpy(dtype=int)
    i2 = raw["alg2"].map(index).to_numpy(dtype=int)
    old = raw[["win1", "win2", "ties"]].to_numpy(dtype=np.int64)
    games = old.sum(axis=1)
    per_set = max(int(games.max()), 1) if datasets is None else max(datasets, 1)
    # how often a pair meets on a data set (both have a result there)
    meets = np.clip(games / per_set, 0.0, 1.0)
    tie_rate = rng.beta(old[:, 2] + 0.5, games - old[:, 2] + 0.5, size=(futures, len(raw)))
    picks = rng.integers(0, beta.shape[0], size=futures)
    p_win = posterior.inv_logit(beta[picks][:, i1] - beta[picks][:, i2])
    counts = np.broadcast_to(old, (futures, *old.shape)).copy()
    start = beta.mean(axis=0)
    prior = float(np.mean(sigma))
    rows: list[pd.DataFrame] = []
    before = 0
    for size in ns:
        met = rng.binomial(size - before, np.broadcast_to(meets, tie_rate.shape))
        tied = rng.binomial(met, tie_rate)
        won = rng.binomial(met - tied, p_win)
        counts[..., 0] += won
        counts[..., 1] += met - tied - won
        counts[..., 2] += tied
        before = size
        win1, win2 = _with_policy(counts, ties)
        growth = Growth(i1, i2, win1, win2, prior, start, counts)
        mean, above, inside = grown(growth, pairs, rope)
        rows.append(_claim_shares(mean, above, inside, rope, chosen, compared, size))
    table = _named(pd.concat(rows, ignore_index=True), pairs, algorithms, claims_now)
    return MoreData(table, _settles(table, ns), chosen, rope, ns, futures, method)


class Remembered:
    """:func:`normal_update`, remembering its costly part (each pair's mean and sd of
    ``beta_a - beta_b`` in every future) for the last settings it was called with: a forecast
    under the other rule, of other pairs or at another ROPE (the same futures, ``n`` and seed)
    then costs no update, as when the widget draws both rules for one pair, then another pair
    or another ROPE.

    Parameters
    ----------
    store
        Where the answers are kept (one entry: the last settings).
    key
        The settings the futures depend on (not the rule, the pairs or the ROPE).
    every
        Every pair of the fit (algorithm indices, ``a`` first): the moments are kept for all
        of them, each call gets the pairs it asks for.
    """

    method = "normal"

    def __init__(
        self, store: dict[str, object], key: object, every: Sequence[tuple[int, int]]
    ) -> None:
        if store.get("key") != key:
            store.clear()
            store.update(key=key, answers=[])
        self.answers: list[tuple[np.ndarray, np.ndarray]] = store["answers"]  # type: ignore[assignment]
        self.every = list(every)
        self.calls = 0

    def __call__(
        self, growth: Growth, pairs: Sequence[tuple[int, int]], rope: tuple[float, float]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self.calls == len(self.answers):
            self.answers.append(_moments(growth, self.every))
        self.calls += 1
        column = {pair: k for k, pair in enumerate(self.every)}
        cols = [column[pair] for pair in pairs]
        mean_d, sd = self.answers[self.calls - 1]
        return _of_moments(mean_d[:, cols], sd[:, cols], rope)


def _with_policy(counts: np.ndarray, ties: str | None) -> tuple[np.ndarray, np.ndarray]:
    """The fitted wins of raw counts (futures, rows, [win1, win2, ties]) under a tie policy,
    as :func:`~.wintable.apply_ties` counts them."""
    win1, win2, tied = (counts[..., k].astype(float) for k in range(3))
    if ties == "spread":
        half = (counts[..., 2] + 1) // 2
        return win1 + half, win2 + half
    if ties == "add":
        return win1 + tied, win2 + tied
    return win1, win2


def normal_update(
    growth: Growth, pairs: Sequence[tuple[int, int]], rope: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The posterior of the pairs given grown counts, by the normal approximation of the
    abilities given sigma (at the fit's posterior mean of sigma), one per future.

    The mode is found by Newton's method from the fit's posterior mean; the covariance is the
    inverse Hessian there. For each pair, ``d = beta_a - beta_b`` is then normal, so
    ``above_50 = P(d >= 0)`` and ``in_rope = P(logit(low) <= d <= logit(high))`` are its CDF,
    and the mean of ``P(a > b) = inv_logit(d)`` is a Gauss-Hermite sum. With sigma fixed, the
    spread of the abilities' prior is not learnt anew: with tens of games per pair the data
    carry many times the prior's information about each ability (see the docs' statistics
    page for the check against full refits).

    Returns
    -------
    tuple of numpy.ndarray
        ``mean``, ``above_50`` and ``in_rope``, each (futures, pairs).
    """
    return _of_moments(*_moments(growth, pairs), rope)


def _moments(growth: Growth, pairs: Sequence[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """The mean and sd of ``beta_a - beta_b`` per future and pair (:func:`normal_update`):
    the costly part, which the ROPE does not enter."""
    n_alg = growth.start.shape[0]
    design = np.zeros((growth.i1.shape[0], n_alg))
    rows = np.arange(design.shape[0])
    design[rows, growth.i1] = 1.0
    design[rows, growth.i2] = -1.0
    games = growth.win1 + growth.win2
    precision = 1.0 / growth.prior**2
    theta = np.broadcast_to(growth.start, (games.shape[0], n_alg)).copy()
    # the Hessian of the log-likelihood is sum_r w_r x_r x_r' over the table's rows: one
    # matrix product with the rows' outer products, for every future at once
    outer = (design[:, :, None] * design[:, None, :]).reshape(design.shape[0], -1)
    ridge = precision * np.eye(n_alg)

    def information(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p = posterior.inv_logit(theta @ design.T)
        weight = games * p * (1.0 - p)
        return p, (weight @ outer).reshape(-1, n_alg, n_alg) + ridge

    for _ in range(_NEWTON_MAX):
        p, hessian = information(theta)
        gradient = (growth.win1 - games * p) @ design - precision * theta
        step = np.linalg.solve(hessian, gradient[..., None])[..., 0]
        theta += step
        if np.abs(step).max() < _NEWTON_TOL:
            break
    cov = np.linalg.inv(information(theta)[1])
    a = np.array([i for i, _ in pairs], dtype=int)
    b = np.array([j for _, j in pairs], dtype=int)
    mean_d = theta[:, a] - theta[:, b]
    sd = np.sqrt(cov[:, a, a] + cov[:, b, b] - 2.0 * cov[:, a, b])
    return mean_d, sd


def _of_moments(
    mean_d: np.ndarray, sd: np.ndarray, rope: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``mean``, ``above_50`` and ``in_rope`` of pairs whose ``beta_a - beta_b`` is normal."""
    nodes, weights = _HERMITE
    mean = posterior.inv_logit(mean_d[..., None] + sd[..., None] * nodes) @ weights
    mean /= weights.sum()
    above = posterior.normal_cdf(mean_d / sd)
    low, high = np.log(np.array(rope) / (1.0 - np.array(rope)))
    inside = posterior.normal_cdf((high - mean_d) / sd) - posterior.normal_cdf((low - mean_d) / sd)
    return mean, above, inside


def _claim_shares(
    mean: np.ndarray,
    above: np.ndarray,
    inside: np.ndarray,
    rope: tuple[float, float],
    rule: str,
    compared: np.ndarray,
    n: int,
) -> pd.DataFrame:
    """Per pair, the share of futures carrying each claim, and its standard error."""
    if rule == "weak":
        claims = posterior.weak_decision(above.ravel(), inside.ravel())
    else:
        claims = posterior.strong_decision(mean.ravel(), rope)
    claims = claims.reshape(mean.shape)
    # pairs whose algorithms never met are never claimed (summary(): "not compared")
    claims[:, ~compared] = "no claim"
    futures = mean.shape[0]
    out: dict[str, object] = {"n": np.full(mean.shape[1], n)}
    for claim, column in CLAIM_COLUMNS.items():
        share = (claims == claim).mean(axis=0)
        out[f"p_{column}"] = share
        out[f"mcse_{column}"] = np.sqrt(share * (1.0 - share) / futures)
    return pd.DataFrame(out)


def _named(
    table: pd.DataFrame,
    pairs: Sequence[tuple[int, int]],
    algorithms: Sequence[str],
    claims_now: Sequence[str],
) -> pd.DataFrame:
    """The forecast rows with their pair's names and claim now, pair by pair, ``n`` ascending."""
    repeats = len(table) // max(len(pairs), 1)
    names = pd.DataFrame(
        {
            "alg_a": [algorithms[i] for i, _ in pairs] * repeats,
            "alg_b": [algorithms[j] for _, j in pairs] * repeats,
            "claim_now": list(claims_now) * repeats,
            "_pair": list(range(len(pairs))) * repeats,
        }
    )
    out = pd.concat([names, table], axis=1).sort_values(["_pair", "n"], kind="stable")
    p = [f"p_{c}" for c in CLAIM_COLUMNS.values()]
    mcse = [f"mcse_{c}" for c in CLAIM_COLUMNS.values()]
    return out[["alg_a", "alg_b", "n", *p, *mcse, "claim_now"]].reset_index(drop=True)


def _settles(table: pd.DataFrame, ns: tuple[int, ...]) -> pd.DataFrame:
    """Per pair open now, the smallest ``n`` at which a claim is more likely than not."""
    open_now = table[table["claim_now"] == "no claim"]
    likely = open_now[open_now["p_no_claim"] < 0.5]
    first = likely.groupby(["alg_a", "alg_b"], sort=False)["n"].min()
    pairs = open_now[["alg_a", "alg_b"]].drop_duplicates().reset_index(drop=True)
    smallest = pd.Series(
        [first.get((a, b)) for a, b in zip(pairs["alg_a"], pairs["alg_b"])], dtype="Int64"
    )
    label = [f"not within {ns[-1]}" if pd.isna(v) else str(int(v)) for v in smallest]
    return pairs.assign(smallest_n=smallest, label=label)
