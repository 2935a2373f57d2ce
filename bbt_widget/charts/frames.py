"""Tidy frames of the widget's linked view: pure pandas and numpy, no Altair.

The helpers reshape what :class:`bbt_widget.core.result.BBTResult` returns into the frames that
:mod:`bbt_widget.charts.specs` draws. They add presentation columns only (labels, order, the
pair key of :mod:`.pairs`); every statistic comes from the core. The widget sends these frames
to its front end by column (:func:`to_columns`) without importing Altair.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..core.options import DEFAULT_HDI, DEFAULT_ROPE, Rule
from ..core.palette import ROPE_REGION_COLORS
from ..core.posterior import STRONG_THRESHOLD
from .frames_ppc import ppc_frame
from .pairs import (
    keys_and_labels,
    match_rows,
    pair_key,
    verdict_kind,
    verdict_words,
)

__all__ = [
    "FIT_DATASETS",
    "ROBUSTNESS_DATASETS",
    "VIEW_DATASETS",
    "ChartFrames",
    "build_frames",
    "coverage_frame",
    "interval_frame",
    "matrix_frame",
    "overlap_frame",
    "range_frame",
    "rope_frame",
    "to_columns",
    "to_records",
]

#: Names of the datasets in the widget's spec; "fit" ones change only with a new fit.
VIEW_DATASETS = ("intervals", "overlap", "rope")
FIT_DATASETS = ("ppc", "coverage", "matrix")
#: Names of the datasets of the robustness view (:func:`bbt_widget.charts.robustness_spec`).
ROBUSTNESS_DATASETS = ("flips", "influence")


def range_frame(
    pair_draws: pd.DataFrame,
    alg_a: Sequence[str] | None = None,
    alg_b: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Full range of the draws of P(a > b) per pair: pair, [alg_a, alg_b,] min, max.

    ``pair_draws`` is ``Result.pair_draws()``, in draw order or ``sort=True`` (the same
    extremes, without computing the draws again).

    It depends on the fit only (not on ROPE, HDI or control), so the widget computes it once
    per fit, for all pairs. ``alg_a``/``alg_b`` (the two algorithms of each column, e.g. the
    columns of ``Result.summary()`` in the same order) let :func:`interval_frame` match pairs
    by algorithms rather than by label, which names containing ``" > "`` can make ambiguous.
    """
    values = pair_draws.to_numpy()
    empty = len(values) == 0
    frame = pd.DataFrame(
        {
            "pair": list(pair_draws.columns),
            "min": np.full(values.shape[1], np.nan) if empty else values.min(axis=0),
            "max": np.full(values.shape[1], np.nan) if empty else values.max(axis=0),
        }
    )
    if alg_a is not None and alg_b is not None:
        if not len(alg_a) == len(alg_b) == values.shape[1]:
            raise ValueError(
                f"range_frame: {values.shape[1]} pair columns but {len(alg_a)} alg_a and "
                f"{len(alg_b)} alg_b names; pass one name each per column"
            )
        frame.insert(1, "alg_a", [str(a) for a in alg_a])
        frame.insert(2, "alg_b", [str(b) for b in alg_b])
    return frame


def interval_frame(
    summary: pd.DataFrame,
    ranges: pd.DataFrame,
    interpretation: Rule = "weak",
    unsettled: set[tuple[str, str]] | frozenset[tuple[str, str]] = frozenset(),
) -> pd.DataFrame:
    """Rows of the P(a > b) interval chart, one per pair in summary order.

    Parameters
    ----------
    summary
        ``Result.summary()``: pair, alg_a, alg_b, mean, median, low, high, delta, above_50,
        in_rope and the decision columns ``weak`` and ``strong``.
    ranges
        :func:`range_frame` of ``Result.pair_draws()`` (any superset of the pairs): the full
        range (min, max) of each pair's draws.
    interpretation
        ``"weak"`` or ``"strong"``: which decision column colours the pairs.
    unsettled
        ``(pair key, rule)`` of the claims the Monte Carlo screen left open
        (:func:`~.pairs.unsettled_keys`): their decision says "unsettled at this precision".

    Returns
    -------
    pandas.DataFrame
        The summary columns plus ``order``, ``key``, ``label`` (the pair label, made
        distinct), ``min``, ``max``, ``decision`` and ``verdict`` (better / equivalent /
        no claim).
    """
    if interpretation not in ("weak", "strong"):
        raise ValueError(f"interpretation must be 'weak' or 'strong', not {interpretation!r}")
    frame = summary.reset_index(drop=True)
    alg_a, alg_b = frame["alg_a"].to_numpy(), frame["alg_b"].to_numpy()
    keys, labels = keys_and_labels(frame)
    rows = match_rows(frame, ranges, "the range frame")
    decisions = [
        verdict_words(d, a, b, (key, interpretation) in unsettled)
        for d, a, b, key in zip(frame[interpretation].to_numpy(), alg_a, alg_b, keys, strict=True)
    ]
    # made at once from the columns: built on every ROPE change, where adding them one by one
    # would copy the frame each time
    return pd.DataFrame(
        {
            **{name: frame[name] for name in frame.columns},
            "order": np.arange(len(frame)),
            "key": keys,
            "label": labels,
            "min": ranges["min"].to_numpy()[rows],
            "max": ranges["max"].to_numpy()[rows],
            "decision": decisions,
            "verdict": [verdict_kind(d) for d in decisions],
        },
        index=frame.index,
    )


def rope_frame(rope: tuple[float, float], interpretation: Rule = "weak") -> pd.DataFrame:
    """The ROPE bounds (``low``, ``high``: the gray band, drawn from the row with ``band``)
    and the thresholds of the ``interpretation``'s rule, one row each: ``x`` where its line
    is drawn and ``line``, what the legend says of it, naming the rule (0.5 and the ROPE's
    bounds; for the strong rule also 0.70, Sec. 9.3)."""
    low, high = (float(v) for v in rope)
    if interpretation == "strong":
        lines = [
            (0.5, "0.5: even odds"),
            (low, "ROPE bounds (strong rule: equivalent when the mean is inside)"),
            (high, "ROPE bounds (strong rule: equivalent when the mean is inside)"),
            (
                STRONG_THRESHOLD,
                f"{STRONG_THRESHOLD:.2f} (strong rule: better when the mean is above)",
            ),
        ]
    else:
        lines = [
            (0.5, "0.5 (weak rule: better when above it with probability ≥ 0.95)"),
            (low, "ROPE bounds (weak rule: equivalent when inside with probability ≥ 0.95)"),
            (high, "ROPE bounds (weak rule: equivalent when inside with probability ≥ 0.95)"),
        ]
    return pd.DataFrame(
        {
            "low": low,
            "high": high,
            "band": [i == 0 for i in range(len(lines))],
            "x": [x for x, _ in lines],
            "line": [text for _, text in lines],
        }
    )


def overlap_frame(summary: pd.DataFrame, rope_mass: pd.DataFrame) -> pd.DataFrame:
    """Posterior mass of P(a > b) below, inside and above the ROPE, per pair, long form.

    Parameters
    ----------
    summary
        ``Result.summary()`` (gives the pair order and the two algorithms).
    rope_mass
        ``Result.rope_mass()``: pair, below, inside, above (in the summary's order, or
        any order when the pair labels are unique or it has ``alg_a``/``alg_b``).
    """
    n = len(summary)
    pairs = summary["pair"].to_numpy()
    rows = match_rows(summary, rope_mass, "the ROPE mass table")
    mass = rope_mass[["below", "inside", "above"]].to_numpy(float)[rows]
    keys, labels = keys_and_labels(summary)
    # pair-major: (pair 0: below, in, above), (pair 1: ...), ...
    return pd.DataFrame(
        {
            "pair": np.repeat(pairs, 3),
            "key": np.repeat(keys, 3),
            "label": np.repeat(np.array(labels, dtype=object), 3),
            "alg_a": np.repeat(summary["alg_a"].to_numpy(), 3),
            "alg_b": np.repeat(summary["alg_b"].to_numpy(), 3),
            "order": np.repeat(np.arange(n), 3),
            "region": np.tile(list(ROPE_REGION_COLORS), n),
            "region_order": np.tile(np.arange(3), n),
            "mass": mass.ravel(),
        }
    )


def coverage_frame(ppc_table: pd.DataFrame) -> pd.DataFrame:
    """The PPC coverage table (paper Table 5; Table 12 under Davidson) in long form.

    Accepts the core's wide form (``hdi, proportion[, proportion_ties]``) or a long form
    with a ``quantity`` column; returns ``hdi, hdi_label, quantity, proportion`` with
    quantity ``"wins"`` or ``"ties"``.
    """
    if "quantity" in ppc_table.columns:
        hdi = ppc_table["hdi"].to_numpy()
        quantity = ppc_table["quantity"].replace({"win1": "wins"}).to_numpy()
        proportion = ppc_table["proportion"].to_numpy()
    else:
        columns = {"proportion": "wins", "proportion_ties": "ties"}
        present = [c for c in columns if c in ppc_table.columns]
        levels = ppc_table["hdi"].to_numpy()
        # long form, quantity by quantity (what melt gives, without its overhead on every fit)
        hdi = np.tile(levels, len(present))
        quantity = np.array([columns[c] for c in present for _ in range(len(levels))], object)
        proportion = np.concatenate([ppc_table[c].to_numpy() for c in present] or [np.zeros(0)])
    return pd.DataFrame(
        {
            "hdi": hdi,
            "hdi_label": [f"{h:.0%} HDI" for h in hdi],
            "quantity": pd.Series(quantity, dtype=str),
            "proportion": proportion,
        }
    )


def matrix_frame(win_table: pd.DataFrame, order: Sequence[str]) -> pd.DataFrame:
    """Win/loss/tie matrix cells: one row per ordered (row, col) pair of the fitted table.

    Parameters
    ----------
    win_table
        The fitted table: alg1, alg2, win1, win2, ties.
    order
        Algorithms best first (ranking order); sets the row and column order.
    """
    rank = {name: i for i, name in enumerate(order)}
    alg1 = win_table["alg1"].astype(str).to_numpy(dtype=object)
    alg2 = win_table["alg2"].astype(str).to_numpy(dtype=object)
    win1 = win_table["win1"].to_numpy(float)
    win2 = win_table["win2"].to_numpy(float)
    ties = win_table["ties"].to_numpy(float)

    def interleave(first: np.ndarray, second: np.ndarray) -> np.ndarray:
        # each pair's two cells next to each other: (alg1 vs alg2), then (alg2 vs alg1)
        return np.stack([first, second], axis=1).reshape(-1)

    # built by column, not a dict per cell: this runs for every fit and preview
    row, col = interleave(alg1, alg2), interleave(alg2, alg1)
    wins, losses = interleave(win1, win2), interleave(win2, win1)
    tie_cells = np.repeat(ties, 2)  # both cells of a pair share its ties
    total = wins + losses + tie_cells
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(total > 0, wins / total, np.nan)
    return pd.DataFrame(
        {
            "row": row,
            "col": col,
            "alg_a": row,
            "alg_b": col,
            "key": np.array([pair_key(r, c) for r, c in zip(row, col)], dtype=object),
            "wins": wins,
            "losses": losses,
            "ties": tie_cells,
            "share": share,
            "row_order": np.array([rank.get(r, len(rank)) for r in row], dtype=np.int64),
            "col_order": np.array([rank.get(c, len(rank)) for c in col], dtype=np.int64),
        }
    )


@dataclass(frozen=True)
class ChartFrames:
    """Every tidy frame the linked view draws."""

    intervals: pd.DataFrame
    overlap: pd.DataFrame
    rope: pd.DataFrame
    ppc: pd.DataFrame
    coverage: pd.DataFrame
    matrix: pd.DataFrame

    def as_dict(self) -> dict[str, pd.DataFrame]:
        """Frames by dataset name."""
        return {name: getattr(self, name) for name in VIEW_DATASETS + FIT_DATASETS}


def check_fit(result: Any, caller: str, instead: str = "") -> None:
    """Refuse what is not a fit's result (e.g. the results table itself), naming the call
    that makes one; ``instead`` names a chart of the table, where there is one."""
    if hasattr(result, "summary") and hasattr(result, "algorithms"):
        return
    got = type(result).__name__
    hint = f"; {instead}" if instead else ""
    raise TypeError(
        f"{caller} draws a fit's result, got a {got}: fit the results first, "
        f"res = bbt.fit(data, dataset=...), then {caller}(res){hint}"
    )


def build_frames(
    result: Any,
    *,
    rope: tuple[float, float] = DEFAULT_ROPE,
    hdi: float = DEFAULT_HDI,
    control: str | None = None,
    interpretation: Rule = "weak",
) -> ChartFrames:
    """All chart frames of one result (convenience for scripts and tests)."""
    check_fit(result, "build_frames")
    summary = result.summary(rope=rope, hdi=hdi, control=control)
    draws = result.pair_draws(control=control, sort=True)  # the range only: no new draws
    mass = result.rope_mass(rope=rope, control=control)
    order = list(result.ranking()["algorithm"])
    return ChartFrames(
        intervals=interval_frame(summary, range_frame(draws), interpretation),
        overlap=overlap_frame(summary, mass),
        rope=rope_frame(rope, interpretation),
        ppc=ppc_frame(result.ppc_histogram(), order),
        coverage=coverage_frame(result.ppc_table()),
        matrix=matrix_frame(result.win_table, order),
    )


def to_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """JSON-ready rows (``[{name: value}]``), their values as :func:`to_columns` gives them:
    the values Altair's default data transformer gives a chart of ``frame``."""
    columns = to_columns(frame)
    if not columns:
        return [{} for _ in range(len(frame))]
    return [dict(zip(columns, row)) for row in zip(*columns.values())]


def to_columns(frame: pd.DataFrame) -> dict[str, list[Any]]:
    """JSON-ready columns (``{name: [values]}``): numpy numbers as Python ones, NaN and
    infinities (and in a column of objects None, NA and NaT) as None, arrays as lists.

    The widget sends data by column: one list per column is quicker to build and to serialise
    than a dict per row, and smaller; the front end turns columns back into rows.
    """
    return {str(name): _json_values(frame[name].to_numpy()) for name in frame.columns}


def _json_values(values: np.ndarray) -> list[Any]:
    if values.dtype.kind == "f":
        out = values.tolist()
        finite = np.isfinite(values)
        return out if finite.all() else [v if ok else None for v, ok in zip(out, finite)]
    if values.dtype.kind == "O":
        return [v if type(v) is str else _json_value(v) for v in values.tolist()]
    returned: list[Any] = values.tolist()
    return returned


def _json_value(value: Any) -> Any:
    # as Altair turns a value in a column of objects into JSON: an array is a list, a numpy
    # scalar a Python one, and missing (None, NaN, NA, NaT) is None
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    return None if isinstance(value, float) and value != value else value
