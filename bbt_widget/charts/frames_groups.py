"""Tidy frame of the decisions by group: pure pandas, no Altair.

One row per pair and column of the pairs x groups heatmap (the pooled decision, then each
group's) of a fit with data sets in groups (``bbt.fit(..., group=...)``). Every statistic comes
from the core (``summary()``, ``group_summary()``, ``group_claims()``); this only aligns, labels
and orders them, the pairs whose claim changes between groups first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..core.options import DEFAULT_HDI, DEFAULT_ROPE, INTERPRETATIONS, Rule
from .pairs import decision_text, distinct_labels, keys_and_labels

__all__ = ["GROUP_CELLS", "GROUP_STATUS_MARKS", "POOLED_COLUMN", "group_cells", "group_cells_frame"]

#: Name of the heatmap's dataset in the widget's group view.
GROUP_CELLS = "group_cells"
#: Header of the pooled decision's column.
POOLED_COLUMN = "All (pooled)"
#: ``group_claims()``'s status of a pair, in drawing order, with the mark its row carries.
GROUP_STATUS_MARKS: dict[str, str] = {
    "changes between groups": "≠",
    "holds in every group": "=",
    "no claim in any group": "",
}


def group_cells_frame(
    pooled: pd.DataFrame,
    per_group: pd.DataFrame,
    status: Sequence[str],
    groups: Sequence[str],
    interpretation: Rule,
    hdi: float,
) -> pd.DataFrame:
    """Cells of the pairs x groups decision heatmap.

    Parameters
    ----------
    pooled
        ``GroupedBBTResult.summary()`` (every pair): pair, alg_a, alg_b, mean, low, high,
        above_50, in_rope and the decision columns ``weak``/``strong``.
    per_group
        ``GroupedBBTResult.group_summary()`` at the same ROPE and HDI: one row per pair and
        group, pairs in ``pooled``'s order, groups in ``groups``' order within each pair.
    status
        ``GroupedBBTResult.group_claims(interpretation)["status"]``, one per pair of
        ``pooled``.
    groups
        The group names, in order.
    interpretation
        ``"weak"`` or ``"strong"``: whose decisions colour the cells.
    hdi
        The HDI mass of ``low``-``high`` (for the tooltips).

    Returns
    -------
    pandas.DataFrame
        One row per pair and column: ``key, label, alg_a, alg_b`` (as every chart frame),
        ``column`` (its header: :data:`POOLED_COLUMN` or the group, made distinct), ``col``
        (0 pooled, k + 1 the k-th group), ``kind`` (the core's decision: ``"a better"`` ...),
        ``decision`` (readable), ``mean, low, high, above_50, in_rope, hdi, interval``,
        ``status``, ``changes`` (the pair's claim changes between groups), ``mark`` (its
        :data:`GROUP_STATUS_MARKS`), ``row`` (the mark and the label: the row's header),
        ``order`` (rows: changing pairs first, then those that hold, each in ``pooled``'s
        order) and ``interpretation``.

    Raises
    ------
    ValueError
        For an interpretation other than weak or strong, or tables that do not line up
        (``per_group`` not one row per pair and group in ``pooled``'s order).
    """
    if interpretation not in INTERPRETATIONS:
        raise ValueError(f"interpretation must be 'weak' or 'strong', not {interpretation!r}")
    n_pairs, n_groups = len(pooled), len(groups)
    status = [str(s) for s in status]
    if len(per_group) != n_pairs * n_groups or len(status) != n_pairs:
        raise ValueError(
            f"group_cells_frame: {n_pairs} pairs and {n_groups} groups need "
            f"{n_pairs * n_groups} group rows and {n_pairs} statuses, got {len(per_group)} "
            f"and {len(status)}; pass group_summary() and group_claims() of the same result"
        )
    pooled = pooled.reset_index(drop=True)
    per_group = per_group.reset_index(drop=True)
    # aligned by position (group_summary() keeps summary()'s pair order): pair labels can
    # repeat when names contain " > "
    expected_pairs = np.repeat(pooled["pair"].to_numpy(), n_groups)
    expected_groups = np.tile(np.asarray(groups, dtype=object), n_pairs)
    if not (
        (per_group["pair"].to_numpy() == expected_pairs).all()
        and (per_group["group"].astype(str).to_numpy() == expected_groups).all()
    ):
        raise ValueError(
            "group_cells_frame: the group rows are not in the pooled summary's pair order, "
            "groups in order within each pair; pass group_summary() of the same result"
        )
    keys, labels = keys_and_labels(pooled)
    headers = distinct_labels(
        [POOLED_COLUMN, *[str(g) for g in groups]],
        [("pooled",), *[("group", str(g)) for g in groups]],
    )
    rank = {s: k for k, s in enumerate(GROUP_STATUS_MARKS)}
    # rows: the pairs whose claim changes first, each status in the pooled summary's order
    order = np.argsort([rank.get(s, len(rank)) for s in status], kind="stable")
    row_order = np.empty(n_pairs, dtype=int)
    row_order[order] = np.arange(n_pairs)
    # the cells, pair by pair: the pooled one, then each group's
    cells = pd.concat(
        [pooled.assign(col=0), per_group.assign(col=np.tile(np.arange(1, n_groups + 1), n_pairs))],
        ignore_index=True,
    )
    pair_of_cell = np.concatenate([np.arange(n_pairs), np.repeat(np.arange(n_pairs), n_groups)])
    cells = cells.assign(pair_index=pair_of_cell).sort_values(["pair_index", "col"], kind="stable")
    k = cells["pair_index"].to_numpy()
    alg_a = pooled["alg_a"].astype(str).to_numpy()[k]
    alg_b = pooled["alg_b"].astype(str).to_numpy()[k]
    kind = cells[interpretation].astype(str).to_numpy()
    low, high = cells["low"].astype(float).to_numpy(), cells["high"].astype(float).to_numpy()
    pair_status = np.asarray(status, dtype=object)[k]
    marks = [GROUP_STATUS_MARKS.get(s, "") for s in pair_status]
    labels_of_cells = np.asarray(labels, dtype=object)[k]
    keys_of_cells = np.asarray(keys, dtype=object)[k]
    return pd.DataFrame(
        {
            "key": keys_of_cells,
            "label": labels_of_cells,
            "alg_a": alg_a,
            "alg_b": alg_b,
            "column": np.asarray(headers, dtype=object)[cells["col"].to_numpy()],
            "col": cells["col"].to_numpy(),
            "kind": kind,
            "decision": [decision_text(d, a, b) for d, a, b in zip(kind, alg_a, alg_b)],
            "mean": cells["mean"].astype(float).to_numpy(),
            "low": low,
            "high": high,
            "above_50": cells["above_50"].astype(float).to_numpy(),
            "in_rope": cells["in_rope"].astype(float).to_numpy(),
            "hdi": float(hdi),
            "interval": [f"[{lo:.3f}, {hi:.3f}]" for lo, hi in zip(low, high)],
            "status": pair_status,
            "changes": pair_status == "changes between groups",
            "mark": marks,
            "row": distinct_labels(
                [f"{m} {lab}" if m else lab for m, lab in zip(marks, labels_of_cells)],
                keys_of_cells,
            ),
            "order": row_order[k],
            "interpretation": interpretation,
        }
    )


def group_cells(
    result: Any,
    *,
    interpretation: Rule = "weak",
    rope: tuple[float, float] = DEFAULT_ROPE,
    hdi: float = DEFAULT_HDI,
) -> pd.DataFrame:
    """:func:`group_cells_frame` of a ``GroupedBBTResult`` at ``rope`` and ``hdi``, coloured by
    the ``interpretation``'s decisions (what the widget's heatmap draws)."""
    return group_cells_frame(
        result.summary(rope=rope, hdi=hdi),
        result.group_summary(rope=rope, hdi=hdi),
        result.group_claims(interpretation, rope=rope, hdi=hdi)["status"],
        result.groups,
        interpretation,
        hdi,
    )
