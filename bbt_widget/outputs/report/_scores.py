"""The report's "Scores" section: the scores themselves beside BBT's claims.

A table of each algorithm's mean and median score over the data sets with an interval, and
for every pair the report claims better or equivalent its effect size on the score scale
(the median paired difference with its interval, Cliff's delta with autorank's labels), from
:mod:`bbt_widget.baselines._effect_sizes`. The section says in words what "equivalent" means
under BBT, so that nobody reads it as "within one point of accuracy".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ...baselines._common import Means
from ...baselines._effect_sizes import (
    N_BOOTSTRAP,
    median_coverage,
    pair_effects,
    score_table,
)
from ...core.audit import MIN_DATASETS
from ...core.wintable import snap_ties
from ...core.wording import counted
from ._sections import Section, Table

if TYPE_CHECKING:
    from ...core.result import BBTResult

#: The claims whose effect sizes the section shows.
_CLAIMED = ("a better", "b better", "equivalent")


def table_digits(values: np.ndarray) -> int:
    """Decimals that show the typical magnitude of ``values`` (a pair's score difference, an
    algorithm's spread) with two significant digits: 3 for differences of about 0.01, 2 for
    ones of about 1; between 2 and 6."""
    finite = np.abs(values[np.isfinite(values) & (values != 0)])
    if not finite.size:
        return 3
    return int(min(6, max(2, 1 - math.floor(math.log10(float(np.median(finite)))))))


def scores_section(
    result: BBTResult,
    summary: pd.DataFrame,
    order: Sequence[str],
    *,
    rule: str,
    rope: tuple[float, float],
    hdi: float,
    prefix: str = "",
) -> Section | None:
    """The "Scores" section of the report of ``result``, or ``None`` for a fit of a win table
    (there are no scores).

    Parameters
    ----------
    result
        The fit.
    summary
        Its per-pair table (:meth:`BBTResult.summary`) at the report's ROPE and HDI.
    order
        The algorithms best first (the report's ranking): the order of the score table.
    rule
        The interpretation whose claims get effect sizes (``"weak"`` or ``"strong"``).
    rope, hdi
        The report's ROPE of P(a > b) and interval mass (of the score intervals too).
    prefix
        Put before the keys of the section and its tables (``scores``, ``effect-sizes``): a
        report of several metrics has one section per metric (``metric-1-scores``...).
    """
    tidy = result.tidy
    if tidy is None:
        return None
    means = Means(snap_ties(tidy.means), tidy.algorithms, tidy.datasets, tidy.lower_is_better)
    seed = int(result.settings.get("seed") or 0)
    rank = {name: k for k, name in enumerate(order)}
    scores = score_table(means, mass=hdi, seed=seed)
    scores = scores.sort_values(
        "algorithm", key=lambda s: s.map(lambda a: rank.get(a, len(rank))), kind="stable"
    ).reset_index(drop=True)
    few = _too_few(scores["n_datasets"], hdi)
    scores.loc[few, ["mean_low", "mean_high", "median_low", "median_high"]] = np.nan
    claimed = summary[summary[rule].astype(str).isin(_CLAIMED)]
    flip = (claimed[rule].astype(str) == "b better").to_numpy()
    a = np.where(flip, claimed["alg_b"], claimed["alg_a"])
    b = np.where(flip, claimed["alg_a"], claimed["alg_b"])
    effects = pair_effects(means, list(zip(map(str, a), map(str, b))), mass=hdi)
    effects.insert(2, "decision", np.where(claimed[rule] == "equivalent", "equivalent", "a better"))
    p = claimed["mean"].to_numpy(dtype=float)
    effects.insert(3, "mean", np.where(flip, 1.0 - p, p))
    effects = effects.sort_values(
        ["decision", "alg_a", "alg_b"],
        key=lambda s: s.map(rank) if s.name != "decision" else s != "a better",
        kind="stable",
    ).reset_index(drop=True)
    effects.loc[_too_few(effects["n_common"], hdi), ["advantage_low", "advantage_high"]] = np.nan
    spread = effects["advantage"].to_numpy(dtype=float)
    if not len(effects):
        spread = np.diff(np.sort(scores["mean_score"].to_numpy(dtype=float)))
    digits = table_digits(spread)
    metric = result.settings.get("score")
    scale = f" of {metric}" if metric else ""
    direction = "lower" if tidy.lower_is_better else "higher"
    mass = f"{hdi:.0%}"
    tables = [
        Table(
            f"{prefix}scores",
            f"Scores{scale} ({direction} is better) over the data sets, each the mean over its "
            f"folds: the mean with its {mass} percentile bootstrap interval ({N_BOOTSTRAP} "
            f"resamples of the data sets, seed {seed}) and the median with its {mass} "
            "distribution-free interval from the order statistics (binomial)",
            scores,
            digits,
        )
    ]
    text = [_equivalence_sentence(rope, rule)]
    if few.any():
        text.append(_few_sentence(scores.loc[few, "n_datasets"], hdi, "algorithm"))
    if len(effects):
        tables.append(
            Table(
                f"{prefix}effect-sizes",
                f"Effect sizes of the claimed pairs ({rule} rule) on the score scale: the "
                f"median advantage of a over b over their common data sets with its {mass} "
                "order-statistic interval, and Cliff's delta with autorank's magnitude labels",
                effects,
                digits,
            )
        )
        text += _aggregate(effects, hdi, direction, digits)
    else:
        text.append(f"No pair carries a claim under the {rule} rule: no effect sizes to show.")
    return Section(
        key=f"{prefix}scores",
        heading="Scores" + (f" ({metric})" if metric else ""),
        text=text,
        tables=tables,
    )


def _equivalence_sentence(rope: tuple[float, float], rule: str) -> str:
    """What "equivalent" means under BBT, and what it does not."""
    held = "at least 95% of its posterior lies" if rule == "weak" else "its posterior mean lies"
    return (
        'Under BBT, "equivalent" means that the two algorithms win about equally often: '
        "P(a > b), the probability that a beats b on a new data set, is close to 50% "
        f"({held} inside the ROPE [{rope[0]:g}, {rope[1]:g}]). It says how often each wins, "
        "not by how much: it does not mean that their scores lie within a point of each "
        "other. The score difference is therefore shown beside every claim: the median "
        "advantage of a over b (positive favours a) and Cliff's delta."
    )


def _aggregate(effects: pd.DataFrame, hdi: float, direction: str, digits: int) -> list[str]:
    """The effect sizes in a few sentences: how many claims of each magnitude, the range of
    the advantages, and the intervals that cover less than ``hdi`` (too few data sets)."""
    out = []
    for decision, what in (("a better", "claimed difference"), ("equivalent", "equivalence")):
        rows = effects[effects["decision"] == decision]
        if not len(rows):
            continue
        counts = rows["magnitude"].value_counts()
        labels = ("large", "medium", "small", "negligible")
        shown = [f"{m} for {int(counts[m])}" for m in labels if m in counts.index]
        listed = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
        adv = rows["advantage"].to_numpy(dtype=float)
        if len(rows) == 1:
            out.append(
                f"Of the one {what}, Cliff's delta is {listed.split(' for ')[0]}; the median "
                f"advantage is {adv[0]:.{digits}f} in score units ({direction} scores are "
                "better)."
            )
            continue
        out.append(
            f"Of the {counted(len(rows), what)}, Cliff's delta is "
            f"{listed}; the median advantage ranges from {np.nanmin(adv):.{digits}f} to "
            f"{np.nanmax(adv):.{digits}f} in score units ({direction} scores are better)."
        )
    few = _too_few(effects["n_common"], hdi)
    if few.any():
        out.append(_few_sentence(effects.loc[few, "n_common"], hdi, "pair"))
    return out


def _too_few(n: pd.Series, hdi: float) -> pd.Series:
    """Per row: whether its count of data sets ``n`` is too small for an interval over the
    data sets of mass ``hdi`` (fewer than :data:`~bbt_widget.core.audit.MIN_DATASETS`, where
    a bootstrap interval is little more than the range, or an order-statistic interval of
    the median cannot reach ``hdi``)."""
    counts = n.fillna(0).astype(int)
    return (counts < MIN_DATASETS) | counts.map(lambda k: median_coverage(int(k), hdi) < hdi)


def _few_sentence(n: pd.Series, hdi: float, what: str) -> str:
    """Why the intervals of the rows with these counts of data sets are left blank."""
    sizes = sorted({int(k) for k in n})
    listed = ", ".join(map(str, sizes[:-1])) + (" or " if len(sizes) > 1 else "") + str(sizes[-1])
    return (
        f"The intervals of each {what} with {listed} data sets are left blank: from so few "
        f"scores no interval over the data sets reaches {hdi:.0%} (a bootstrap or "
        "order-statistic interval would be about their range)."
    )
