"""Monte Carlo precision of a BBT fit's reported probabilities, and the claims it leaves
unsettled.

Every probability the summary reports is an average over posterior draws: the mean of
P(a > b), and ``above_50`` and ``in_rope``, the means of the indicators "P(a > b) > 0.5" and
"P(a > b) in the ROPE". Its Monte Carlo standard error is ``sd / sqrt(ESS)``, with the
effective sample size of that average over the chains (:func:`~.convergence.ess_mean`;
ArviZ's ``mcse(method="mean")``). A claim whose deciding quantity lies within ``z`` MCSE of
its threshold could change with the seed: it is *unsettled at this precision*.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from . import posterior
from .convergence import ess_mean

#: Standard errors between a claim's deciding quantity and its threshold for the claim to
#: count as settled (a two-sided 0.3% chance of the other side, were the error normal).
DEFAULT_Z = 3.0
#: Pairs whose draws of P(a > b) are computed at once (chains x draws x this many floats).
_BLOCK = 64


def mcse(ary: np.ndarray) -> float:
    """Monte Carlo standard error of the mean of ``ary`` (chains, draws); at least one draw's
    share ``1 / draws`` for an indicator that never changed (its mean is 0 or 1 exactly,
    but that many draws cannot tell a probability below that apart from 0)."""
    ary = np.asarray(ary, dtype=float)
    n = ary.size
    sd = float(ary.std(ddof=1)) if n > 1 else np.nan
    if sd == 0.0:
        return 1.0 / n
    return sd / float(np.sqrt(ess_mean(ary)))


def pair_precision(
    beta: np.ndarray, pairs: Sequence[tuple[int, int]], rope: tuple[float, float]
) -> pd.DataFrame:
    """Per pair (in ``pairs`` order): the MCSE of the mean of P(a > b), of ``above_50`` and
    of ``in_rope``, from ``beta`` shaped (chains, draws, algorithms)."""
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


def unsettled(
    summary: pd.DataFrame, precision: pd.DataFrame, rope: tuple[float, float], z: float
) -> pd.DataFrame:
    """The claims of ``summary`` (its rows, with ``precision``'s in the same order) whose
    deciding quantity lies within ``z`` MCSE of one of its rule's thresholds: one row per
    pair, rule and quantity, with the value, the threshold and the MCSE."""
    weak = (posterior.WEAK_THRESHOLD, 1 - posterior.WEAK_THRESHOLD)
    strong = (*rope, posterior.STRONG_THRESHOLD, 1 - posterior.STRONG_THRESHOLD)
    checks = (
        ("weak", "in_rope", "mcse_in_rope", (posterior.WEAK_THRESHOLD,)),
        ("weak", "above_50", "mcse_above_50", weak),
        ("strong", "mean", "mcse_mean", strong),
    )
    rows = []
    for row, err in zip(summary.itertuples(index=False), precision.itertuples(index=False)):
        if row.weak == posterior.NOT_COMPARED:
            continue
        for rule, quantity, error_name, thresholds in checks:
            value, error = float(getattr(row, quantity)), float(getattr(err, error_name))
            near = [t for t in thresholds if abs(value - t) < z * error]
            if near:
                claim = getattr(row, rule)
                rows.append(
                    (row.pair, row.alg_a, row.alg_b, rule, claim, quantity, value, near[0], error)
                )
    columns = ["pair", "alg_a", "alg_b", "rule", "claim", "quantity", "value", "threshold"]
    columns.append("mcse")
    return pd.DataFrame(rows, columns=columns)
