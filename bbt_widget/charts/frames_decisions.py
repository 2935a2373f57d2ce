"""Tidy frames of the decisions across pairs, rules and settings: pure pandas, no Altair.

The decision matrix and the claim counts of a fit (:func:`decision_frame`,
:func:`claim_counts`), the bars of its critical-difference diagram (:func:`cd_groups`), a
sweep's decision per pair and setting (:func:`flips_frame`) and the data sets whose removal
moves a pair the most (:func:`influence_frame`). Every statistic comes from the core; these
only count, order and label.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..core.options import INTERPRETATION_LABELS, INTERPRETATIONS, Rule
from ..core.posterior import maximal_runs
from .pairs import decision_text, keys_and_labels, pair_key, pair_words

__all__ = [
    "FLIPS_ALL_PAIRS",
    "INFLUENCE_TOP",
    "cd_groups",
    "claim_counts",
    "decision_frame",
    "flips_frame",
    "influence_frame",
]

#: Data sets drawn in the influence chart of the highlighted pair.
INFLUENCE_TOP = 10
#: Up to this many pairs (10 algorithms) the flips chart shows every pair; beyond, only the
#: pairs whose decision changes (and the highlighted one).
FLIPS_ALL_PAIRS = 45


def _cell(decision: str, flip: bool) -> str:
    if decision == "a better":
        return "column better" if flip else "row better"
    if decision == "b better":
        return "row better" if flip else "column better"
    return decision


def decision_frame(
    summary: pd.DataFrame,
    order: Sequence[str],
    unsettled: set[tuple[str, str]] | frozenset[tuple[str, str]] = frozenset(),
) -> pd.DataFrame:
    """Cells of the decision matrix: both orientations of every pair, both interpretations.

    Parameters
    ----------
    summary
        ``BBTResult.summary()``: alg_a, alg_b, mean, low, high, above_50, in_rope and the
        decision columns ``weak`` and ``strong``.
    order
        Algorithms best first; sets the row and column order.
    unsettled
        ``(pair key, rule)`` of the claims the Monte Carlo screen left open
        (:func:`~bbt_widget.charts.pairs.unsettled_keys`): their tooltips say so.

    Returns
    -------
    pandas.DataFrame
        ``interpretation, row, col, decision, p_row_better, row_order, col_order``; the
        decision reads from the row's side (``"row better"``, ``"column better"``,
        ``"equivalent"``, ``"no claim"``, ``"not compared"``); and for the tooltips, in the
        summary's orientation, the pair's ``key``, ``pair_text``, ``p_text``,
        ``above_text``, ``rope_text``, ``rule_text`` and ``verdict_text``
        (:func:`~bbt_widget.charts.pairs.pair_words`).
    """
    rank = {name: i for i, name in enumerate(order)}
    words = pair_words(summary, unsettled).to_dict("records")
    rows = []
    for interpretation in INTERPRETATIONS:
        rule = INTERPRETATION_LABELS[interpretation]
        for rec, said in zip(summary.itertuples(index=False), words, strict=True):
            decision = getattr(rec, interpretation)
            tip = (
                said["key"],
                said["pair_text"],
                said["p_text"],
                said["above_text"],
                said["rope_text"],
                rule,
                said[f"{interpretation}_text"],
            )
            for row, col, p, flip in (
                (rec.alg_a, rec.alg_b, rec.mean, False),
                (rec.alg_b, rec.alg_a, 1.0 - rec.mean, True),
            ):
                cell = (interpretation, str(row), str(col), _cell(decision, flip), float(p))
                rows.append(cell + tip)
    columns = ["interpretation", "row", "col", "decision", "p_row_better", *_TIP_COLUMNS]
    frame = pd.DataFrame(rows, columns=columns)
    frame["row_order"] = frame["row"].map(rank).fillna(len(rank)).astype(int)
    frame["col_order"] = frame["col"].map(rank).fillna(len(rank)).astype(int)
    return frame


#: The words of a decision-matrix cell's tooltip (:func:`decision_frame`).
_TIP_COLUMNS = (
    "key",
    "pair_text",
    "p_text",
    "above_text",
    "rope_text",
    "rule_text",
    "verdict_text",
)


def claim_counts(summary: pd.DataFrame) -> pd.DataFrame:
    """Number of pairs per decision under each interpretation.

    Returns
    -------
    pandas.DataFrame
        One row per interpretation: ``interpretation, better, equivalent, no claim,
        not compared, pairs``; ``better`` counts the pairs where one algorithm is claimed
        better than the other (either way round).
    """
    out = []
    for interpretation in INTERPRETATIONS:
        d = summary[interpretation].astype(str)
        out.append(
            {
                "interpretation": interpretation,
                "better": int(d.isin(["a better", "b better"]).sum()),
                "equivalent": int((d == "equivalent").sum()),
                "no claim": int((d == "no claim").sum()),
                "not compared": int((d == "not compared").sum()),
                "pairs": len(d),
            }
        )
    return pd.DataFrame(out)


def cd_groups(
    summary: pd.DataFrame, order: Sequence[str], interpretation: Rule
) -> list[tuple[str, ...]]:
    """The bars of a critical-difference diagram of BBT's decisions.

    Parameters
    ----------
    summary
        ``BBTResult.summary()``: alg_a, alg_b and the decision column ``interpretation``.
    order
        The algorithms in the diagram's order, best first.
    interpretation
        ``"weak"`` or ``"strong"``: whose claims separate the algorithms.

    Returns
    -------
    list of tuple of str
        The maximal runs of consecutive algorithms of ``order`` with no "better" claim
        (either way) between any two of them, as the bars of Demšar's diagram join
        algorithms not significantly different. An equivalence claim, no claim or a pair
        never compared does not separate two algorithms.
    """
    names = [str(a) for a in order]
    claims = {
        frozenset((str(a), str(b)))
        for a, b, d in zip(summary["alg_a"], summary["alg_b"], summary[interpretation])
        if d in ("a better", "b better")
    }
    return maximal_runs(names, lambda i, j: frozenset((names[i], names[j])) in claims)


def flips_frame(
    table: pd.DataFrame, settings: Sequence[str], interpretation: Rule = "weak"
) -> pd.DataFrame:
    """Rows of the flips chart: one per (pair, setting) of a sweep.

    Parameters
    ----------
    table
        ``SweepResult.table()`` (or ``.frame``): pair, alg_a, alg_b, mean, above_50,
        in_rope, the ``weak``/``strong`` decisions and error, one block of rows per setting.
    settings
        A short label per row of ``table`` naming its setting (``SweepResult.setting_labels()``).
    interpretation
        Which decision column to show.

    Returns
    -------
    pandas.DataFrame
        ``key, label, alg_a, alg_b, order, setting, setting_order, kind`` (the sweep's
        decision, ``"a better"`` ...), ``decision`` (readable), ``mean, above_50, in_rope,
        error``, ``flips``: whether the pair's decision differs between the settings whose
        fit succeeded, and ``shown``: drawn without a highlight (every pair up to
        ``FLIPS_ALL_PAIRS`` pairs, else the flipping ones).
    """
    if interpretation not in ("weak", "strong"):
        raise ValueError(f"interpretation must be 'weak' or 'strong', not {interpretation!r}")
    if len(settings) != len(table):
        raise ValueError(
            f"flips_frame: {len(table)} sweep rows but {len(settings)} setting labels; pass "
            "one label per row"
        )
    frame = table.reset_index(drop=True)
    alg_a, alg_b = frame["alg_a"].astype(str), frame["alg_b"].astype(str)
    keys, labels = keys_and_labels(frame)
    out = pd.DataFrame(
        {
            "key": keys,
            "label": labels,
            "alg_a": alg_a,
            "alg_b": alg_b,
            "setting": [str(x) for x in settings],
            "kind": frame[interpretation].astype(str),
            "mean": frame["mean"].astype(float),
            "above_50": frame["above_50"].astype(float),
            "in_rope": frame["in_rope"].astype(float),
            "error": frame["error"].astype(object).where(frame["error"].notna(), ""),
        }
    )
    out["order"] = pd.factorize(out["key"])[0]
    out["setting_order"] = pd.factorize(out["setting"])[0]
    out["decision"] = [
        decision_text(d, a, b) for d, a, b in zip(out["kind"], alg_a, alg_b, strict=True)
    ]
    ok = out[out["error"] == ""]
    flipped = ok.groupby("key", sort=False)["kind"].nunique() > 1
    out["flips"] = out["key"].map(flipped).fillna(False).astype(bool)
    out["shown"] = out["flips"] | (out["key"].nunique() <= FLIPS_ALL_PAIRS)
    out["n_pairs"] = out["key"].nunique()  # the chart's subtitle reads it
    return out


def influence_frame(
    table: pd.DataFrame | None, key: str, n: int = INFLUENCE_TOP, *, note: str = ""
) -> pd.DataFrame:
    """The ``n`` data sets whose removal moves the pair ``key``'s mean P(a > b) the most.

    ``table`` is ``Influence.table`` (``None``: not computed yet). Always at least one row:
    when there is nothing to draw, a ``note`` row with ``delta_mean`` 0 says why (``note``,
    or a default), so that the chart's scales are never empty (no "Infinite extent"
    warnings).
    """
    columns = ["dataset", "delta_mean", "mean_loo", "decision_loo", "pareto_k", "method"]
    rows = None
    if table is not None and key and len(table):
        keys = [pair_key(a, b) for a, b in zip(table["alg_a"], table["alg_b"], strict=True)]
        rows = table.loc[np.asarray(keys, dtype=object) == key]
    if rows is None or rows.empty:
        if not note:
            note = (
                "click a pair to see its most influential data sets"
                if not key
                else "no data set changes this pair"
            )
        return pd.DataFrame(
            {
                **{c: [None] for c in columns},
                "dataset": [""],
                "delta_mean": [0.0],
                "effect": [""],
                "order": [0],
                "note": [note],
            }
        )
    # stable, as Influence.top: equal effects keep the data sets' order in both
    top = rows.loc[rows["delta_mean"].abs().sort_values(ascending=False, kind="stable").index[:n]]
    out = top[columns].reset_index(drop=True)
    out["decision_loo"] = [
        decision_text(d, a, b)
        for d, a, b in zip(top["decision_loo"], top["alg_a"], top["alg_b"], strict=True)
    ]
    out["effect"] = np.where(top["changed"].to_numpy(), "decision changes", "decision holds")
    out["order"] = np.arange(len(out))
    out["note"] = ""
    return out
