"""Monte Carlo precision of a BBT fit's reported probabilities, and the claims it leaves
unsettled.

Every probability the summary reports is an average over posterior draws: the mean of
P(a > b), and ``above_50`` and ``in_rope``, the means of the indicators "P(a > b) > 0.5" and
"P(a > b) in the ROPE". Its Monte Carlo standard error is ``sd / sqrt(ESS)``, with the
effective sample size of that average over the chains (:func:`~.convergence.ess_mean`;
ArviZ's ``mcse(method="mean")``). A claim whose deciding quantity lies within ``z`` MCSE of
its threshold could change with the seed: it is *unsettled at this precision*, and the
summary makes no claim for it (:func:`settled_decisions`).

Where the fit allows it (the plain model's MCMC draws: :mod:`bbt_widget.engines._conditional`),
the quantities of the pairs near a threshold are estimated again as averages of their
expectations given the rest of each posterior draw (Rao-Blackwellised: :func:`refined`): the
same posterior means, with a Monte Carlo error a hundred times smaller or more, so that
almost no claim is left to the seed.

Computing every pair's MCSE costs three autocorrelation estimates per pair (seconds at 50
algorithms, a minute at 200). Only pairs whose quantities lie near a threshold need one: a
quantity farther from every threshold than ``z`` times its MCSE at the fit's measured
effective sample size (the smallest bulk or tail ESS of its parameters: the tail ESS is that
of the 5% and 95% quantiles' indicators, averages like ``above_50``; :data:`ESS_SHARE_FLOOR`
of the draws where none is known) is settled whatever its exact MCSE, so
:func:`near_thresholds` screens the pairs first.

Which pairs get the conditional estimate does not depend on the seed: those whose values
under the normal approximation of the posterior at its mode (a function of the data alone)
lie within :data:`APPROXIMATE_REACH` of a threshold, and, so that no claim is left to
chance, any other the screen finds near one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import pandas as pd

from . import posterior
from .convergence import ess_mean

#: Standard errors between a claim's deciding quantity and its threshold for the claim to
#: count as settled (a two-sided 0.3% chance of the other side, were the error normal).
DEFAULT_Z = 3.0
#: The share of the draws the effective sample size of a reported average is taken to reach
#: when screening pairs of a fit whose ESS is not known (the fit's convergence checks ask
#: the bulk ESS of every ability for 100 per chain, a tenth of the default 1000 draws).
ESS_SHARE_FLOOR = 0.1
#: Pairs whose normal-approximation values (:meth:`ConditionalDraws.approximate`) lie within
#: this many of the indicators' MCSE (at the fit's ESS) of a threshold, plus the
#: approximation's own error, get the conditional estimate whatever the seed: the screen's
#: ``z``. A wider band makes the screen's own additions rarer still, but every pair in it costs
#: a quadrature, and at a hundred algorithms twice ``z`` sends hundreds of pairs to them.
APPROXIMATE_REACH = DEFAULT_Z
#: The effective sample size, as a share of the draws, of those MCSE: a fixed share, not the
#: fit's measured ESS, which changes with the seed (the samplers reach a third to 0.9).
APPROXIMATE_ESS_SHARE = 0.25
#: The normal approximation's largest error seen (the shipped results and simulated ones of
#: 50 algorithms: 0.0016 on the mean, 0.003 on ``in_rope``), with room: on the mean and on
#: the two indicators' averages.
_APPROXIMATION_ERROR = {"mean": 0.002, "above_50": 0.005, "in_rope": 0.005}
#: Pairs whose draws of P(a > b) are computed at once (chains x draws x this many floats).
_BLOCK = 64


def mcse(ary: np.ndarray) -> float:
    """Monte Carlo standard error of the mean of ``ary`` (chains, draws); 0 where every draw
    is the same (a value pinned at 0 or 1: no draw varies, so no seed would give another
    mean of these draws)."""
    ary = np.asarray(ary, dtype=float)
    n = ary.size
    sd = float(ary.std(ddof=1)) if n > 1 else np.nan
    if sd == 0.0:
        return 0.0
    return sd / float(np.sqrt(ess_mean(ary)))


def column_sd(draws: np.ndarray) -> np.ndarray:
    """The standard deviation (ddof 1) of each column of ``draws`` (draws, pairs), a block of
    columns at a time: ``np.std`` would hold a temporary as large as the draws (gigabytes
    at a few hundred algorithms)."""
    out = np.empty(draws.shape[1])
    width = max(1, (1 << 22) // max(draws.shape[0], 1))
    for start in range(0, draws.shape[1], width):
        out[start : start + width] = draws[:, start : start + width].std(axis=0, ddof=1)
    return out


def pair_precision(
    beta: np.ndarray, pairs: Sequence[tuple[int, int]], rope: tuple[float, float]
) -> pd.DataFrame:
    """Per pair (in ``pairs`` order): the MCSE of the mean of P(a > b), of ``above_50`` and
    of ``in_rope``, from ``beta`` shaped (chains, draws, algorithms) (or (draws,
    algorithms): one sequence of draws, as a group's abilities come)."""
    if beta.ndim == 2:
        beta = beta[np.newaxis]
    chains, draws, n_alg = beta.shape
    flat = beta.reshape(chains * draws, n_alg)
    rows = []
    for start in range(0, len(pairs), _BLOCK):
        block = list(pairs[start : start + _BLOCK])
        p = posterior.pair_probabilities(flat, block).reshape(chains, draws, len(block))
        for k in range(len(block)):
            x = p[..., k]
            inside = (x >= rope[0]) & (x <= rope[1])
            rows.append((mcse(x), mcse(x > 0.5), mcse(inside)))
    return pd.DataFrame(rows, columns=["mcse_mean", "mcse_above_50", "mcse_in_rope"])


class ConditionalDraws(Protocol):
    """``conditional(pairs, rope, look="fine")``: per draw and pair, the expectations of
    P(a > b), of "P(a > b) > 0.5" and of "P(a > b) in the ROPE" given the rest of the draw,
    shaped (3, chains, draws, pairs) in that order (averaged over the draws they estimate the
    summary's ``mean``, ``above_50`` and ``in_rope``); ``look`` (:data:`LOOKS`): over a
    share of the draws, coarsest and cheapest first. What a fit binds as
    :attr:`.BBTResult.conditional_draws` (see :mod:`bbt_widget.engines._conditional`)."""

    def __call__(
        self, pairs: Sequence[tuple[int, int]], rope: tuple[float, float], *, look: str = "fine"
    ) -> np.ndarray: ...

    def approximate(
        self, pairs: Sequence[tuple[int, int]], rope: tuple[float, float]
    ) -> np.ndarray | None:
        """The pairs' ``mean``, ``above_50`` and ``in_rope`` (3, pairs) under a normal
        approximation of the posterior that does not depend on the draws (None: none)."""
        ...

    def share(self, look: str) -> float:
        """The share of the draws a look uses (1 for ``"all"``)."""
        ...

    def finest(self, pair: tuple[int, int]) -> str:
        """The finest look computed so far for ``pair`` (at any ROPE; the first when
        none)."""
        ...

    def joined(self, beta: np.ndarray, sigma: np.ndarray) -> ConditionalDraws:
        """These conditionals with another round's draws after the earlier ones'."""
        ...


#: The conditional estimates' looks, coarsest first: each pair starts with the first, and
#: goes on to the next while its estimate lies near a threshold.
LOOKS = ("coarse", "fine", "all")


#: A coarse conditional estimate stands where it lies farther than this many of its Monte
#: Carlo errors from every threshold (settled at ``z`` up to this many); nearer, the pair is
#: estimated again over all the draws the fine look uses; and where the fine estimate is
#: still within ``z`` of its errors (an open claim), over every draw the fit made.
_COARSE_REACH = 2 * DEFAULT_Z
#: Room over the draws a claim seems to need (its distance and error are estimates too).
_MARGIN = 1.25


def refined(
    summary: pd.DataFrame,
    precision: pd.DataFrame,
    conditional: ConditionalDraws,
    pairs: Sequence[tuple[int, int]],
    rope: tuple[float, float],
    known: dict[int, tuple[float, ...]] | None = None,
    keys: np.ndarray | None = None,
    z: float = DEFAULT_Z,
    n_draws: int | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``summary`` and ``precision`` with some rows estimated by their conditional
    expectations (``conditional``: :data:`ConditionalDraws`), their values, MCSE and
    decisions: the rows whose normal-approximation values lie within
    :data:`APPROXIMATE_REACH` of a threshold (whatever the seed), and those that have an
    MCSE (near a threshold: :func:`screened_precision`); the other rows, settled whatever
    their exact MCSE, as they are.

    ``pairs`` holds each row's pair; ``known`` and ``keys`` a caller's cache across calls,
    as for :func:`screened_precision`; ``z`` the MCSE within which a claim is open (its
    pair then estimated over every draw); ``n_draws`` the fit's number of draws (None: the
    approximation is not used).
    """
    quantities = ("mean", "above_50", "in_rope")
    compared = summary["weak"].to_numpy() != posterior.NOT_COMPARED
    chosen = precision["mcse_mean"].notna().to_numpy().copy()
    thresholds = [_thresholds(rope)[q] for q in quantities]
    if n_draws is not None and len(pairs):
        ess = APPROXIMATE_ESS_SHARE * n_draws
        chosen |= _approximately_near(conditional.approximate(pairs, rope), rope, ess)
    rows = np.flatnonzero(chosen & compared)
    if not len(rows):
        return summary, precision
    keys = np.arange(len(summary)) if keys is None else np.asarray(keys)
    known = {} if known is None else known
    todo = [int(r) for r in rows if int(keys[r]) not in known]
    for start in range(0, len(todo), _BLOCK):
        block = todo[start : start + _BLOCK]
        # a coarse look first; the pairs it leaves near a threshold again, finely; those
        # still open, over every draw where that many draws could settle them. A pair
        # looked at more finely before (at another ROPE) starts there: its value never
        # goes back to a coarser estimate.
        begin = {r: LOOKS.index(conditional.finest(pairs[r])) for r in block}
        active: list[int] = []
        for index, look in enumerate(LOOKS):
            active += [r for r in block if begin[r] == index]
            if not active:
                continue
            draws = conditional([pairs[r] for r in active], rope, look=look)
            near = []
            if index + 1 < len(LOOKS):
                # the errors of the next look's estimate, were it this one's: they fall as
                # one over the square root of the draws (with room for the estimates' noise)
                after = conditional.share(LOOKS[index + 1])
                falls = np.sqrt(_MARGIN * conditional.share(look) / after)
            for k, r in enumerate(active):
                means = [float(draws[q, ..., k].mean()) for q in range(3)]
                errors = [mcse(draws[q, ..., k]) for q in range(3)]
                known[int(keys[r])] = (*means, *errors)
                if index + 1 == len(LOOKS):
                    continue
                reach = _COARSE_REACH if look == "coarse" else z
                for m, e, ts in zip(means, errors, thresholds):
                    gap = min(abs(m - t) for t in ts)
                    if gap < reach * e and (look == "coarse" or gap >= z * e * falls):
                        near.append(r)
                        break
            active = near
    found = np.array([known[int(keys[r])] for r in rows])
    summary, precision = summary.copy(), precision.copy()
    for q, name in enumerate(quantities):
        summary.loc[summary.index[rows], name] = found[:, q]
        precision.loc[precision.index[rows], f"mcse_{name}"] = found[:, 3 + q]
    values = {q: summary[q].to_numpy(dtype=float) for q in quantities}
    weak = posterior.weak_decision(values["above_50"], values["in_rope"])
    strong = posterior.strong_decision(values["mean"], rope)
    summary["weak"] = np.where(compared, weak, summary["weak"])
    summary["strong"] = np.where(compared, strong, summary["strong"])
    return summary, precision


def _approximately_near(
    approximate: np.ndarray | None, rope: tuple[float, float], ess: float
) -> np.ndarray | bool:
    """Per pair, whether its normal-approximation values (:meth:`ConditionalDraws.
    approximate`) lie within :data:`APPROXIMATE_REACH` indicators' MCSE at ``ess`` (and the
    approximation's error) of a threshold; False where there is no approximation."""
    if approximate is None:
        return False
    near = np.zeros(approximate.shape[1], dtype=bool)
    for q, (name, thresholds) in enumerate(
        (name, _thresholds(rope)[name]) for name in ("mean", "above_50", "in_rope")
    ):
        value = approximate[q]
        sd = approximate[3] if name == "mean" else np.sqrt(value * (1 - value))
        reach = APPROXIMATE_REACH * sd / np.sqrt(max(ess, 1.0)) + _APPROXIMATION_ERROR[name]
        for t in thresholds:
            near |= np.abs(value - t) < reach
    return near


def _thresholds(rope: tuple[float, float]) -> dict[str, tuple[float, ...]]:
    """The thresholds each reported quantity is compared with by a rule."""
    weak = (posterior.WEAK_THRESHOLD, 1 - posterior.WEAK_THRESHOLD)
    return {
        "in_rope": (posterior.WEAK_THRESHOLD,),
        "above_50": weak,
        "mean": (*rope, posterior.STRONG_THRESHOLD, 1 - posterior.STRONG_THRESHOLD),
    }


def near_thresholds(
    summary: pd.DataFrame,
    sd_mean: np.ndarray,
    n_draws: int,
    rope: tuple[float, float],
    z: float,
    ess: float | None = None,
) -> np.ndarray:
    """Which rows of ``summary`` might hold a quantity within ``z`` MCSE of a threshold: the
    MCSE taken at an effective sample size of ``ess`` (the fit's measured ESS, at most the
    ``n_draws`` draws; None: :data:`ESS_SHARE_FLOOR` of them), ``sd_mean`` the posterior
    sd of each pair's P(a > b) (an indicator's sd follows from its mean). The rows left out
    are settled; the others need their MCSE."""
    if ess is None or not np.isfinite(ess):
        ess = ESS_SHARE_FLOOR * n_draws
    ess = max(min(float(ess), float(n_draws)), 1.0)
    near = np.zeros(len(summary), dtype=bool)
    for quantity, thresholds in _thresholds(rope).items():
        value = summary[quantity].to_numpy(dtype=float)
        if quantity == "mean":
            sd = np.asarray(sd_mean, dtype=float)
        else:
            sd = np.sqrt(value * (1 - value))
        # an indicator that never changed: a band of one draw's share (another seed could
        # move it by that)
        bound = z * np.maximum(sd / np.sqrt(ess), 1.0 / n_draws)
        for t in thresholds:
            near |= np.abs(value - t) < bound
    return near


def screened_precision(
    summary: pd.DataFrame,
    p_draws: np.ndarray,
    beta: np.ndarray,
    pairs: Sequence[tuple[int, int]],
    rope: tuple[float, float],
    z: float,
    known: dict[int, tuple[float, ...]] | None = None,
    keys: np.ndarray | None = None,
    ess: float | None = None,
) -> pd.DataFrame:
    """The MCSE of ``summary``'s rows where a quantity may lie within ``z`` MCSE of a
    threshold (:func:`near_thresholds`, at the fit's measured ``ess``), NaN in the rows
    settled whatever their exact MCSE.

    ``p_draws`` holds the draws of P(a > b) of the rows (draws, rows; in any order, e.g.
    sorted), ``beta`` the abilities (chains, draws, algorithms) and ``pairs`` each row's
    pair. ``known`` keeps the MCSE computed, by ``keys`` (one per row, default the row
    number): a caller's cache across calls.
    """
    columns = ["mcse_mean", "mcse_above_50", "mcse_in_rope"]
    near = near_thresholds(summary, column_sd(p_draws), p_draws.shape[0], rope, z, ess)
    rows = np.flatnonzero(near)
    keys = np.arange(len(summary)) if keys is None else np.asarray(keys)
    known = {} if known is None else known
    todo = [int(r) for r in rows if int(keys[r]) not in known]
    if todo:
        found = pair_precision(beta, [pairs[r] for r in todo], rope)
        rows_found = found[columns].itertuples(index=False, name=None)
        known.update(zip((int(keys[r]) for r in todo), rows_found))
    out = np.full((len(summary), len(columns)), np.nan)
    if len(rows):
        out[rows] = [known[int(keys[r])] for r in rows]
    return pd.DataFrame(out, columns=columns)


def settled_decisions(
    summary: pd.DataFrame, precision: pd.DataFrame, rope: tuple[float, float], z: float
) -> pd.DataFrame:
    """``summary`` with each rule's claim kept only where it holds for every value within
    ``z`` MCSE of the estimates (``precision``: rows aligned with ``summary``, NaN where
    not computed, i.e. settled), else ``"no claim"``: a claim the seed could flip is not
    made."""
    out = summary.copy()
    compared = out["weak"].to_numpy() != posterior.NOT_COMPARED
    weak_same, strong_same = settled_rules(summary, precision, rope, z)
    out["weak"] = np.where(~compared | weak_same, out["weak"], "no claim")
    out["strong"] = np.where(~compared | strong_same, out["strong"], "no claim")
    return out


def settled_rules(
    summary: pd.DataFrame, precision: pd.DataFrame, rope: tuple[float, float], z: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``summary``, whether the weak and the strong rule decide the same for
    every value within ``z`` MCSE (``precision``, NaN: settled) of the estimates."""
    band = {
        q: z * np.nan_to_num(precision[f"mcse_{q}"].to_numpy(dtype=float))
        for q in ("mean", "above_50", "in_rope")
    }
    value = {q: summary[q].to_numpy(dtype=float) for q in band}
    corners = [
        posterior.weak_decision(
            value["above_50"] + sa * band["above_50"], value["in_rope"] + si * band["in_rope"]
        )
        for sa in (-1, 1)
        for si in (-1, 1)
    ]
    weak_same = np.logical_and.reduce([c == corners[0] for c in corners])
    ends = [posterior.strong_decision(value["mean"] + s * band["mean"], rope) for s in (-1, 1)]
    strong_same = ends[0] == ends[1]
    return np.asarray(weak_same, dtype=bool), np.asarray(strong_same, dtype=bool)


def unsettled(
    summary: pd.DataFrame, precision: pd.DataFrame, rope: tuple[float, float], z: float
) -> pd.DataFrame:
    """The claims of ``summary`` (its rows, with ``precision``'s in the same order) whose
    deciding quantity lies within ``z`` MCSE of one of its rule's thresholds: one row per
    pair, rule and quantity, with the value, the threshold and the MCSE."""
    thresholds_of = _thresholds(rope)
    checks = (("weak", "in_rope"), ("weak", "above_50"), ("strong", "mean"))
    rows = []
    for row, err in zip(summary.itertuples(index=False), precision.itertuples(index=False)):
        if row.weak == posterior.NOT_COMPARED:
            continue
        for rule, quantity in checks:
            thresholds = thresholds_of[quantity]
            value, error = float(getattr(row, quantity)), float(getattr(err, f"mcse_{quantity}"))
            if np.isnan(error):  # screened out: settled
                continue
            near = [t for t in thresholds if abs(value - t) < z * error]
            if near:
                claim = getattr(row, rule)
                rows.append(
                    (row.pair, row.alg_a, row.alg_b, rule, claim, quantity, value, near[0], error)
                )
    columns = ["pair", "alg_a", "alg_b", "rule", "claim", "quantity", "value", "threshold"]
    columns.append("mcse")
    return pd.DataFrame(rows, columns=columns)
