"""Altair builders for the widget's charts: tidy frames in, charts out.

Two layers, both pure:

* frame helpers (``interval_frame``, ``overlap_frame``, ``ppc_frame``, ``matrix_frame``,
  ``coverage_frame``) reshape what :class:`bbt_widget.core.result.Result` returns into the tidy
  frames the charts draw. They add presentation columns only (labels, order, a pair key);
  every statistic comes from the core.
* chart builders (``intervals_chart``, ``rope_overlap_chart``, ``ppc_chart``,
  ``coverage_chart``, ``win_matrix_chart``, ``linked_chart``) turn frames into Altair charts.
  Each accepts either a DataFrame (data inlined: for export, ``w.charts``) or the *name* of
  a dataset (for the widget, which sends data separately so that a ROPE change only swaps
  data in the live view).

Linking: every frame carries ``key`` (the unordered pair as a JSON array of the two sorted
names, unique whatever the names contain) and ``alg_a``/``alg_b``. Labels such as ``"a > b"``
are for display only: names containing ``" > "`` or ``" vs "`` can give two pairs the same
label, so rows and panels are told apart by key and such labels are made distinct with
zero-width spaces. Two Vega parameters drive the highlight: ``sel_pair`` (a key, or
``""``) and ``sel_focus`` (an algorithm, or ``""``). The widget's front end sets them from
clicks and from the ``selected_pair``/``focus`` traits, so one click highlights a pair in
every chart and choosing an algorithm shows only its pairs.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import importlib
import importlib.metadata
import json
import os
import tempfile
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd


class _Lazy:
    """A module imported on first attribute access.

    Altair takes longer to import than everything else the widget needs together (seconds on
    a busy machine), yet the widget needs it only for the view spec -- cached on disk, see
    :func:`view_spec` -- and for ``w.charts``. So the first charts do not wait for it.
    """

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        module: ModuleType = importlib.import_module(self._name)
        return getattr(module, attr)


alt: Any = _Lazy("altair")

__all__ = [
    "DECISION_COLORS",
    "FOCUS_PARAM",
    "HDI_PARAM",
    "PAIR_PARAM",
    "ChartFrames",
    "build_frames",
    "chart_set",
    "coverage_chart",
    "coverage_frame",
    "decision_text",
    "flips_chart",
    "flips_frame",
    "influence_chart",
    "influence_frame",
    "interval_frame",
    "intervals_chart",
    "linked_chart",
    "matrix_frame",
    "overlap_frame",
    "pair_key",
    "ppc_chart",
    "ppc_frame",
    "range_frame",
    "result_charts",
    "robustness_chart",
    "robustness_spec",
    "rope_frame",
    "rope_overlap_chart",
    "to_columns",
    "to_records",
    "view_spec",
    "win_matrix_chart",
]

#: Vega parameter holding the highlighted pair key ("" = none).
PAIR_PARAM = "sel_pair"
#: Vega parameter holding the algorithm whose pairs are shown ("" = all).
FOCUS_PARAM = "sel_focus"
#: Vega parameter holding the HDI mass (for titles), so an HDI change needs no new spec.
HDI_PARAM = "hdi_mass"

#: Colour per verdict kind, the same in every chart.
DECISION_COLORS: dict[str, str] = {
    "better": "#1b7837",
    "equivalent": "#5e3c99",
    "no claim": "#8c8c8c",
}
_REGIONS = ["below ROPE", "in ROPE", "above ROPE"]
_REGION_COLORS = ["#d6604d", "#bdbdbd", "#4393c3"]

#: PPC panels drawn before an algorithm is chosen (7 algorithms have 21 pairs).
PPC_MAX_PAIRS = 21

#: Names of the datasets in the widget's spec; "fit" ones change only with a new fit.
VIEW_DATASETS = ("intervals", "overlap", "rope")
FIT_DATASETS = ("ppc", "coverage", "matrix")

_HIGHLIGHT = f"({PAIR_PARAM} == '' || datum.key == {PAIR_PARAM})"
_FOCUS = f"({FOCUS_PARAM} == '' || datum.alg_a == {FOCUS_PARAM} || datum.alg_b == {FOCUS_PARAM})"

Data = pd.DataFrame | str


# --------------------------------------------------------------------------- frame helpers


def pair_key(a: str, b: str) -> str:
    """Key of the unordered pair {a, b}: the same whichever algorithm is better.

    A JSON array of the two names, sorted: unique for every pair whatever the names contain
    (``" vs "``, ``" > "``, quotes), and readable back with ``json.loads``.
    """
    return json.dumps(sorted((str(a), str(b))), ensure_ascii=False)


def _distinct_labels(labels: Sequence[str], keys: Sequence[Hashable]) -> list[str]:
    """Display labels, made distinct where two keys share one label.

    Names containing ``" > "`` can give two different pairs the same label (``"a > b"`` vs
    ``"c"`` and ``"a"`` vs ``"b > c"``); a chart that encodes the label would draw both on one
    row. The later one gets zero-width spaces appended: it reads the same, but is its own row.
    """
    owner: dict[str, Hashable] = {}
    first_label: dict[Hashable, str] = {}
    out = []
    for label, key in zip(labels, keys, strict=True):
        if key in first_label:
            out.append(first_label[key])
            continue
        text = str(label)
        while text in owner and owner[text] != key:
            text += "\u200b"
        owner[text] = key
        first_label[key] = text
        out.append(text)
    return out


def decision_text(decision: str, alg_a: str, alg_b: str) -> str:
    """Readable decision: the core's ``"a better"`` / ``"b better"`` name the algorithm."""
    text = str(decision)
    if text == "a better":
        return f"{alg_a} better"
    if text == "b better":
        return f"{alg_b} better"
    return text


def verdict_kind(decision: str) -> str:
    """Map a core decision string ("xgb better", "equivalent", "no claim") to its colour kind."""
    text = str(decision)
    if text.endswith(" better"):
        return "better"
    if text == "equivalent":
        return "equivalent"
    return "no claim"


def range_frame(
    pair_draws: pd.DataFrame,
    alg_a: Sequence[str] | None = None,
    alg_b: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Full range of the draws of P(a > b) per pair: pair, [alg_a, alg_b,] min, max.

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


def _match_rows(target: pd.DataFrame, source: pd.DataFrame, what: str) -> np.ndarray:
    """Row of ``source`` for each row of ``target``: by (alg_a, alg_b) when both have them,
    by position when the pair labels agree row for row, else by (unique) pair label."""
    if {"alg_a", "alg_b"} <= set(source.columns):
        where = {
            (a, b): i for i, (a, b) in enumerate(zip(source["alg_a"], source["alg_b"], strict=True))
        }
        wanted = list(zip(target["alg_a"].astype(str), target["alg_b"].astype(str), strict=True))
        missing = [f"{a} > {b}" for a, b in wanted if (a, b) not in where]
        if missing:
            raise ValueError(f"{what} has no row for the pairs {missing[:5]}")
        return np.array([where[p] for p in wanted], dtype=int)
    labels = source["pair"].to_numpy()
    wanted = target["pair"].to_numpy()
    if len(labels) == len(wanted) and (labels == wanted).all():
        return np.arange(len(wanted))
    if pd.Index(labels).has_duplicates:
        raise ValueError(
            f"{what} has two pairs with the same label (algorithm names containing ' > '); "
            "give it alg_a and alg_b columns, or the pairs in the summary's order"
        )
    position = pd.Index(labels).get_indexer(wanted)
    if (position < 0).any():
        raise ValueError(f"{what} has no row for the pairs {list(wanted[position < 0][:5])}")
    return position


def interval_frame(
    summary: pd.DataFrame, ranges: pd.DataFrame, interpretation: str = "weak"
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

    Returns
    -------
    pandas.DataFrame
        The summary columns plus ``order``, ``key``, ``label`` (the pair label, made
        distinct), ``min``, ``max``, ``decision`` and ``verdict`` (better / equivalent /
        no claim).
    """
    if interpretation not in ("weak", "strong"):
        raise ValueError(f"interpretation must be 'weak' or 'strong', not {interpretation!r}")
    frame = summary.reset_index(drop=True).copy()
    frame["order"] = np.arange(len(frame))
    frame["key"] = [pair_key(a, b) for a, b in zip(frame["alg_a"], frame["alg_b"], strict=True)]
    frame["label"] = _distinct_labels(frame["pair"].astype(str), frame["key"])
    rows = _match_rows(frame, ranges, "the range frame")
    frame["min"] = ranges["min"].to_numpy()[rows]
    frame["max"] = ranges["max"].to_numpy()[rows]
    frame["decision"] = [
        decision_text(d, a, b)
        for d, a, b in zip(frame[interpretation], frame["alg_a"], frame["alg_b"], strict=True)
    ]
    frame["verdict"] = [verdict_kind(d) for d in frame["decision"]]
    return frame


def rope_frame(rope: tuple[float, float]) -> pd.DataFrame:
    """One row with the ROPE bounds (drawn as the gray band)."""
    low, high = rope
    return pd.DataFrame({"low": [float(low)], "high": [float(high)]})


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
    rows = _match_rows(summary, rope_mass, "the ROPE mass table")
    mass = rope_mass[["below", "inside", "above"]].to_numpy(float)[rows]
    keys = [pair_key(a, b) for a, b in zip(summary["alg_a"], summary["alg_b"], strict=True)]
    labels = _distinct_labels(summary["pair"].astype(str), keys)
    # pair-major: (pair 0: below, in, above), (pair 1: ...), ...
    return pd.DataFrame(
        {
            "pair": np.repeat(pairs, 3),
            "key": np.repeat(keys, 3),
            "label": np.repeat(np.array(labels, dtype=object), 3),
            "alg_a": np.repeat(summary["alg_a"].to_numpy(), 3),
            "alg_b": np.repeat(summary["alg_b"].to_numpy(), 3),
            "order": np.repeat(np.arange(n), 3),
            "region": np.tile(_REGIONS, n),
            "region_order": np.tile(np.arange(3), n),
            "mass": mass.ravel(),
        }
    )


def ppc_frame(ppc_histogram: pd.DataFrame, order: Sequence[str] | None = None) -> pd.DataFrame:
    """Rows of the PPC histograms, with a panel title, the pair key and the pair's rank.

    Parameters
    ----------
    ppc_histogram
        ``Result.ppc_histogram()``: alg1, alg2, quantity ("win1" or "ties"), value, count,
        observed.
    order
        Algorithms best first (``Result.ranking()``): ``rank_order`` numbers the pairs as
        the summary does (best vs each worse one, then the second best, ...).

    Returns
    -------
    pandas.DataFrame
        The histogram plus ``key``, ``panel``, ``ppp`` (two-sided posterior predictive p of
        the panel's observed count), ``rank_order`` and ``pair_order``: pairs numbered worst
        fit first (smallest ``ppp`` of the pair's panels; ties in ranking order), so that
        with many pairs the view shows the ones worth checking, not the first ones.
    """
    frame = ppc_histogram.reset_index(drop=True).copy()
    alg1 = frame["alg1"].astype(str).to_numpy()
    alg2 = frame["alg2"].astype(str).to_numpy()
    frame["key"] = [pair_key(a, b) for a, b in zip(alg1, alg2, strict=True)]
    frame["alg_a"] = alg1
    frame["alg_b"] = alg2
    quantity = frame["quantity"].astype(str).to_numpy()
    frame["panel"] = _distinct_labels(
        [
            f"{a} wins vs {b}" if q == "win1" else f"ties {a}–{b}"
            for a, b, q in zip(alg1, alg2, quantity, strict=True)
        ],
        list(zip(alg1, alg2, quantity, strict=True)),
    )
    names = list(order) if order is not None else list(pd.unique(np.concatenate([alg1, alg2])))
    rank = {name: i for i, name in enumerate(names)}
    k = len(names)
    first = np.array([min(rank.get(a, k), rank.get(b, k)) for a, b in zip(alg1, alg2, strict=True)])
    second = np.array(
        [max(rank.get(a, k), rank.get(b, k)) for a, b in zip(alg1, alg2, strict=True)]
    )
    # index of pair (i, j), i < j, in the enumeration (0,1), (0,2), ..., (1,2), ...
    frame["rank_order"] = first * k - first * (first + 1) // 2 + (second - first - 1)
    frame["ppp"] = _predictive_p(frame)
    # worst-fitting pairs first (smallest predictive p of either panel), ranking order
    # among equals: with many pairs, the panels shown are the ones worth checking
    worst = frame.groupby("key", sort=False)["ppp"].transform("min")
    pairs = frame.assign(worst=worst).groupby("key", sort=False)[["worst", "rank_order"]].min()
    rank = pairs.sort_values(["worst", "rank_order"], kind="stable").index
    frame["pair_order"] = frame["key"].map({key: i for i, key in enumerate(rank)})
    # panels run in pair order, each pair's ties panel right after its wins panel
    frame["panel_order"] = 2 * frame["pair_order"] + (frame["quantity"] != "win1")
    return _panel_positions(frame)


def _predictive_p(frame: pd.DataFrame) -> np.ndarray:
    """:func:`predictive_p` of each row of a PPC frame, its panels as the groups."""
    if frame.empty:
        return np.zeros(0)
    return predictive_p(
        frame["value"].to_numpy(float),
        frame["observed"].to_numpy(float),
        frame["count"].to_numpy(float),
        frame["panel"].to_numpy(),  # distinct per (pair, quantity)
    )


def predictive_p(
    value: np.ndarray, observed: np.ndarray, count: np.ndarray, groups: np.ndarray
) -> np.ndarray:
    """Two-sided posterior predictive p-value of each group's observed count, per row.

    Rows are histogram bins (replicated ``value`` seen ``count`` times) of one observed count
    per group. ``2 * min(P(rep <= observed), P(rep >= observed))``, capped at 1: small when the
    observed count lies in a tail of its replicates, i.e. when the pair falls outside the HDIs
    that the coverage table counts.
    """

    def per_group(weights: np.ndarray) -> np.ndarray:
        return pd.Series(weights).groupby(groups, sort=False).transform("sum").to_numpy()

    total = per_group(count)
    tail = np.minimum(
        per_group(count * (value <= observed)), per_group(count * (value >= observed))
    )
    return np.minimum(1.0, 2.0 * tail / total)


def _panel_positions(frame: pd.DataFrame) -> pd.DataFrame:
    """Bar and observed-line positions on [0, 1] within each panel (see :func:`ppc_chart`).

    A panel spans its lowest to its highest count, replicated or observed, each count a bar
    of width one; bar heights are relative to the panel's tallest bar.
    """
    if frame.empty:
        for name in ("x0", "x1", "h", "obs_x", "range_low", "range_high"):
            frame[name] = pd.Series(dtype=float)
        return frame
    panel = frame.groupby("panel_order", sort=False)
    value = frame["value"].to_numpy(float)
    observed = frame["observed"].to_numpy(float)
    low = np.minimum(panel["value"].transform("min"), panel["observed"].transform("min"))
    high = np.maximum(panel["value"].transform("max"), panel["observed"].transform("max"))
    start, span = low.to_numpy(float) - 0.5, (high - low).to_numpy(float) + 1.0
    frame["x0"] = (value - 0.5 - start) / span
    frame["x1"] = (value + 0.5 - start) / span
    frame["h"] = frame["count"].to_numpy(float) / panel["count"].transform("max").to_numpy(float)
    frame["obs_x"] = (observed - start) / span
    frame["range_low"] = low.to_numpy()
    frame["range_high"] = high.to_numpy()
    return frame


def coverage_frame(ppc_table: pd.DataFrame) -> pd.DataFrame:
    """The PPC coverage table (paper Table 5; Table 12 under Davidson) in long form.

    Accepts the core's wide form (``hdi, proportion[, proportion_ties]``) or a long form
    with a ``quantity`` column; returns ``hdi, hdi_label, quantity, proportion`` with
    quantity ``"wins"`` or ``"ties"``.
    """
    if "quantity" in ppc_table.columns:
        frame = ppc_table[["hdi", "quantity", "proportion"]].copy()
        frame["quantity"] = frame["quantity"].replace({"win1": "wins"})
    else:
        columns = {"proportion": "wins", "proportion_ties": "ties"}
        present = [c for c in columns if c in ppc_table.columns]
        frame = (
            ppc_table[["hdi", *present]]
            .rename(columns=columns)
            .melt(id_vars="hdi", var_name="quantity", value_name="proportion")
        )
    frame = frame.reset_index(drop=True)
    frame["hdi_label"] = [f"{h:.0%} HDI" for h in frame["hdi"]]
    return frame[["hdi", "hdi_label", "quantity", "proportion"]]


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
    cells: list[dict[str, Any]] = []
    for rec in win_table.itertuples(index=False):
        for row, col, wins, losses in (
            (rec.alg1, rec.alg2, rec.win1, rec.win2),
            (rec.alg2, rec.alg1, rec.win2, rec.win1),
        ):
            total = float(wins) + float(losses) + float(rec.ties)
            cells.append(
                {
                    "row": str(row),
                    "col": str(col),
                    "alg_a": str(row),
                    "alg_b": str(col),
                    "key": pair_key(row, col),
                    "wins": float(wins),
                    "losses": float(losses),
                    "ties": float(rec.ties),
                    "share": float(wins) / total if total else np.nan,
                    "row_order": rank.get(str(row), len(rank)),
                    "col_order": rank.get(str(col), len(rank)),
                }
            )
    columns = [
        "row",
        "col",
        "alg_a",
        "alg_b",
        "key",
        "wins",
        "losses",
        "ties",
        "share",
        "row_order",
        "col_order",
    ]
    return pd.DataFrame(cells, columns=columns)


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


def build_frames(
    result: Any,
    *,
    rope: tuple[float, float] = (0.45, 0.55),
    hdi: float = 0.89,
    control: str | None = None,
    interpretation: str = "weak",
) -> ChartFrames:
    """All chart frames of one result (convenience for scripts and tests)."""
    summary = result.summary(rope=rope, hdi=hdi, control=control)
    draws = result.pair_draws(control=control)
    mass = result.rope_mass(rope=rope, control=control)
    order = list(result.ranking()["algorithm"])
    return ChartFrames(
        intervals=interval_frame(summary, range_frame(draws), interpretation),
        overlap=overlap_frame(summary, mass),
        rope=rope_frame(rope),
        ppc=ppc_frame(result.ppc_histogram(), order),
        coverage=coverage_frame(result.ppc_table()),
        matrix=matrix_frame(result.win_table, order),
    )


def to_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """JSON-ready rows: numpy scalars become Python numbers, NaN becomes None."""
    if frame.isna().to_numpy().any():
        frame = frame.astype(object).where(frame.notna(), None)
    return frame.to_dict(orient="records")


def to_columns(frame: pd.DataFrame) -> dict[str, list[Any]]:
    """JSON-ready columns (``{name: [values]}``), NaN as None.

    The widget sends data by column: several times faster to build and to serialise than
    records, and smaller; the front end turns columns back into rows.
    """
    out: dict[str, list[Any]] = {}
    for name in frame.columns:
        values = frame[name].to_numpy()
        if values.dtype.kind == "f" and np.isnan(values).any():
            out[str(name)] = [None if v != v else v for v in values.tolist()]
        elif values.dtype.kind == "O":
            out[str(name)] = [None if v is None or v != v else v for v in values.tolist()]
        else:
            out[str(name)] = values.tolist()
    return out


# --------------------------------------------------------------------------- chart builders


def _source(data: Data) -> alt.Data | pd.DataFrame:
    return alt.NamedData(name=data) if isinstance(data, str) else data


#: Axis labels longer than this many characters (code points) end in an ellipsis.
LABEL_MAX_CHARS = 40
#: Axis settings that cut long labels by code point. Vega's own ``labelLimit`` cuts by pixel
#: width in UTF-16 units, splitting an emoji's surrogate pair, and vl-convert then fails on
#: every export (issue 9, finding 12); the ``u`` flag makes the expression count whole code
#: points, and ``labelLimit: 0`` keeps Vega from cutting again.
LABEL_AXIS: dict[str, Any] = {
    "labelLimit": 0,
    "labelExpr": rf"replace(datum.label, /^([\s\S]{{{LABEL_MAX_CHARS}}})[\s\S]+$/u, '$1…')",
}


def _pair_axis(title: str | None = None) -> alt.Y:
    # "label" (distinct per pair), not "pair": two pairs may share a label
    return alt.Y(
        "label:N",
        sort=alt.EncodingSortField(field="order", op="min"),
        title=title,
        axis=alt.Axis(**LABEL_AXIS),
    )


def _verdict_color() -> alt.Color:
    # Every layer carries the same legend definition: Vega-Lite merges the layers' legends
    # and drops it altogether when some layers disable it.
    return alt.Color(
        "verdict:N",
        scale=alt.Scale(domain=list(DECISION_COLORS), range=list(DECISION_COLORS.values())),
        legend=alt.Legend(title="decision", orient="bottom"),
    )


def _highlight_opacity(dim: float = 0.2) -> alt.OpacityValue:
    return alt.when(_HIGHLIGHT).then(alt.value(1.0)).otherwise(alt.value(dim))


def intervals_chart(
    intervals: Data, rope: Data, *, hdi: float | None = 0.89, width: int = 360
) -> alt.LayerChart:
    """P(a > b) per pair (paper Figures 1 and 3).

    The dot is the median, the thick bar the HDI, the thin line the full range of the draws,
    the gray band the ROPE; pairs run best > worse from the top; colour is the decision.
    ``hdi=None`` takes the mass for the title from the ``hdi_mass`` parameter (linked view).
    """
    base = alt.Chart(_source(intervals)).transform_filter(_FOCUS)
    x_scale = alt.Scale(domain=[0, 1])
    tooltip = [
        alt.Tooltip("pair:N"),
        alt.Tooltip("decision:N"),
        alt.Tooltip("mean:Q", format=".3f"),
        alt.Tooltip("median:Q", format=".3f"),
        alt.Tooltip("low:Q", format=".3f", title="HDI low"),
        alt.Tooltip("high:Q", format=".3f", title="HDI high"),
        alt.Tooltip("delta:Q", format=".3f"),
        alt.Tooltip("above_50:Q", format=".3f", title="above.50"),
        alt.Tooltip("in_rope:Q", format=".3f", title="in.rope"),
    ]
    band = (
        alt.Chart(_source(rope))
        .mark_rect(color="#bdbdbd", opacity=0.35)
        .encode(
            x=alt.X("low:Q", scale=x_scale),
            x2="high:Q",
            tooltip=[
                alt.Tooltip("low:Q", title="ROPE low"),
                alt.Tooltip("high:Q", title="ROPE high"),
            ],
        )
    )
    half = alt.Chart().mark_rule(color="#636363", strokeDash=[3, 3]).encode(x=alt.datum(0.5))
    full = base.mark_rule(strokeWidth=1).encode(
        x=alt.X("min:Q", scale=x_scale, title="P(a > b)"),
        x2="max:Q",
        y=_pair_axis(),
        color=_verdict_color(),
        opacity=_highlight_opacity(),
        tooltip=tooltip,
    )
    thick = base.mark_rule(strokeWidth=6).encode(
        x="low:Q",
        x2="high:Q",
        y=_pair_axis(),
        color=_verdict_color(),
        opacity=_highlight_opacity(),
        tooltip=tooltip,
    )
    dot = base.mark_point(filled=True, size=70, stroke="white", strokeWidth=1).encode(
        x="median:Q",
        y=_pair_axis(),
        color=_verdict_color(),
        opacity=_highlight_opacity(),
        tooltip=tooltip,
    )
    return alt.layer(band, half, full, thick, dot).properties(
        width=width,
        title=alt.TitleParams(
            _hdi_title(hdi),
            subtitle="gray band: ROPE; pairs best > worse; click a pair to highlight it",
            anchor="start",
        ),
    )


def _hdi_title(hdi: float | None) -> str | alt.ExprRef:
    if hdi is not None:
        return f"P(a > b): median, {hdi:.0%} HDI, full range"
    return alt.ExprRef(
        expr=f"'P(a > b): median, ' + format({HDI_PARAM}, '.0%') + ' HDI, full range'"
    )


def rope_overlap_chart(overlap: Data, *, width: int = 220) -> alt.Chart:
    """Posterior mass of each pair below / inside / above the ROPE (stacked to one)."""
    return (
        alt.Chart(_source(overlap))
        .transform_filter(_FOCUS)
        .mark_bar()
        .encode(
            x=alt.X("mass:Q", stack="normalize", title="posterior mass", axis=alt.Axis(format="%")),
            y=_pair_axis(),
            color=alt.Color(
                "region:N",
                scale=alt.Scale(domain=_REGIONS, range=_REGION_COLORS),
                legend=alt.Legend(title="P(a > b) is", orient="bottom"),
            ),
            order=alt.Order("region_order:Q"),
            opacity=_highlight_opacity(),
            tooltip=[
                alt.Tooltip("pair:N"),
                alt.Tooltip("region:N"),
                alt.Tooltip("mass:Q", format=".3f"),
            ],
        )
        .properties(width=width, title=alt.TitleParams("ROPE overlap", anchor="start"))
    )


def ppc_chart(
    ppc: Data,
    *,
    columns: int = 5,
    width: int = 110,
    height: int = 60,
    max_pairs: int = PPC_MAX_PAIRS,
) -> alt.FacetChart:
    """Posterior predictive check (paper Figure 2): replicated counts per pair.

    Bars are the number of posterior draws giving each replicated count; the red rule is
    the observed count. Under Davidson there is a second panel per pair for the ties.
    Pairs run worst fit first (``ppc_frame``'s ``pair_order``): with more than ``max_pairs``
    pairs only the worst ones are drawn (plus the clicked pair) until an algorithm is chosen,
    as 120 panels would take seconds to lay out.
    """
    shown = (
        f"{FOCUS_PARAM} != '' ? (datum.alg_a == {FOCUS_PARAM} || datum.alg_b == {FOCUS_PARAM})"
        f" : (datum.pair_order < {max_pairs} || datum.key == {PAIR_PARAM})"
    )
    # Every position is precomputed per panel on [0, 1] (ppc_frame's x0/x1/h/obs_x), so the
    # scales have fixed domains: no per-panel extent for Vega to compute. A panel hidden by
    # the focus or a refit then empties without "Infinite extent" warnings, and the bars are
    # x/x2 spans (Vega-Lite's 1 px bin spacing left ~100 one-count bins 0 px wide).
    unit = alt.Scale(domain=[0, 1], nice=False, zero=False)
    base = alt.Chart()
    tooltip = [
        alt.Tooltip("panel:N", title="quantity"),
        alt.Tooltip("value:Q", title="replicated"),
        alt.Tooltip("count:Q", title="draws"),
        alt.Tooltip("observed:Q"),
        alt.Tooltip("ppp:Q", format=".3f", title="predictive p"),
    ]
    bars = base.mark_bar(color="#6baed6").encode(
        x=alt.X("x0:Q", scale=unit, axis=None),
        x2="x1:Q",
        y=alt.Y("h:Q", scale=unit, axis=None, stack=None),
        y2=alt.datum(0),  # with x/x2 spans Vega-Lite would otherwise draw thin ticks at h
        opacity=_highlight_opacity(0.25),
        tooltip=tooltip,
    )
    observed = base.mark_rule(color="#cb181d", strokeWidth=2).encode(
        x=alt.X("max(obs_x):Q", scale=unit),
        tooltip=[
            alt.Tooltip("panel:N", title="quantity"),
            alt.Tooltip("max(observed):Q", title="observed"),
        ],
    )
    # the panel's count range, as its x axis would give it: lowest left, highest right
    ends = base.mark_text(fontSize=9, baseline="top", dy=2, color="#636363").encode(
        y=alt.datum(0, scale=unit)
    )
    low = ends.mark_text(fontSize=9, baseline="top", dy=2, color="#636363", align="left").encode(
        x=alt.datum(0), text="min(range_low):Q"
    )
    high = ends.mark_text(fontSize=9, baseline="top", dy=2, color="#636363", align="right").encode(
        x=alt.datum(1), text="max(range_high):Q"
    )
    return (
        alt.layer(bars, observed, low, high, data=_source(ppc))
        .properties(width=width, height=height)
        .facet(
            facet=alt.Facet(
                "panel:N",
                title=None,
                header=alt.Header(labelFontSize=10),
                sort=alt.EncodingSortField("panel_order", op="min"),
            ),
            columns=columns,
        )
        # filtered before faceting, so that hidden pairs get no (empty) panel at all
        .transform_filter(shown)
        .properties(
            title=alt.TitleParams(
                "Posterior predictive check",
                subtitle=[
                    "bars: draws per replicated count (own scale per panel, count range below);"
                    " red: observed count",
                    f"worst-fitting pairs first (smallest predictive p); the {max_pairs} worst"
                    " unless an algorithm is chosen",
                ],
                anchor="start",
            )
        )
    )


def coverage_chart(coverage: Data) -> alt.Chart:
    """PPC coverage (paper Table 5): share of observed counts inside each HDI."""
    return (
        alt.Chart(_source(coverage))
        .mark_text(fontSize=12)
        .encode(
            y=alt.Y("hdi_label:N", sort=alt.EncodingSortField("hdi", op="min"), title=None),
            x=alt.X(
                "quantity:N",
                title=None,
                sort=["wins", "ties"],
                axis=alt.Axis(orient="top", labelAngle=0),
            ),
            text=alt.Text("proportion:Q", format=".2f"),
            tooltip=[
                alt.Tooltip("hdi:Q", title="HDI mass"),
                alt.Tooltip("quantity:N"),
                alt.Tooltip("proportion:Q", format=".3f", title="observed inside"),
            ],
        )
        .properties(width=100, title=alt.TitleParams("PPC coverage", anchor="start"))
    )


def win_matrix_chart(matrix: Data, *, cell: int = 28) -> alt.LayerChart:
    """Win/loss/tie matrix of the fitted table: cell (row, col) counts wins of row over col."""
    base = alt.Chart(_source(matrix)).encode(
        x=alt.X("col:N", sort=alt.EncodingSortField("col_order", op="min"), title="loser"),
        y=alt.Y("row:N", sort=alt.EncodingSortField("row_order", op="min"), title="winner"),
    )
    shown = f"{_HIGHLIGHT} && {_FOCUS}"
    tooltip = [
        alt.Tooltip("row:N", title="algorithm"),
        alt.Tooltip("col:N", title="versus"),
        alt.Tooltip("wins:Q"),
        alt.Tooltip("losses:Q"),
        alt.Tooltip("ties:Q"),
        alt.Tooltip("share:Q", format=".2f", title="win share"),
    ]
    rect = base.mark_rect(stroke="white").encode(
        color=alt.Color(
            "share:Q",
            scale=alt.Scale(scheme="blueorange", domain=[0, 1], reverse=True),
            legend=alt.Legend(title="win share", orient="right"),
        ),
        opacity=alt.when(shown).then(alt.value(1.0)).otherwise(alt.value(0.25)),
        tooltip=tooltip,
    )
    text = base.mark_text(fontSize=10).encode(
        text=alt.Text("wins:Q", format=".0f"),
        tooltip=tooltip,
    )
    return alt.layer(rect, text).properties(
        width=alt.Step(cell),
        height=alt.Step(cell),
        title=alt.TitleParams("Wins (row beats column)", anchor="start"),
    )


def _params(selected_pair: str, focus: str, hdi: float) -> list[alt.VariableParameter]:
    return [
        alt.VariableParameter(name=PAIR_PARAM, value=selected_pair),
        alt.VariableParameter(name=FOCUS_PARAM, value=focus),
        alt.VariableParameter(name=HDI_PARAM, value=hdi),
    ]


def chart_set(
    frames: Mapping[str, Data],
    *,
    hdi: float = 0.89,
    selected_pair: str = "",
    focus: str = "",
) -> dict[str, Any]:
    """Every chart of one view by name, data inlined (for export): ``intervals``,
    ``rope_overlap``, ``ppc``, ``coverage``, ``win_matrix`` and ``linked``."""
    params = _params(selected_pair, focus, hdi)
    standalone = {
        "intervals": intervals_chart(frames["intervals"], frames["rope"], hdi=hdi),
        "rope_overlap": rope_overlap_chart(frames["overlap"]),
        "ppc": ppc_chart(frames["ppc"]),
        "coverage": coverage_chart(frames["coverage"]),
        "win_matrix": win_matrix_chart(frames["matrix"]),
    }
    for chart in standalone.values():
        # the highlight expressions read these parameters: a chart on its own (exported,
        # saved) must define them itself, at its top level like linked_chart does
        own = [] if chart.params is alt.Undefined else list(chart.params)
        chart.params = own + params
    standalone["linked"] = linked_chart(frames, hdi=hdi, selected_pair=selected_pair, focus=focus)
    return standalone


def result_charts(
    result: Any,
    *,
    rope: tuple[float, float] = (0.45, 0.55),
    hdi: float = 0.89,
    control: str | None = None,
    interpretation: str = "weak",
) -> dict[str, Any]:
    """The widget's charts for a result, without a widget (scripts, reports, exports)."""
    frames = build_frames(
        result, rope=rope, hdi=hdi, control=control, interpretation=interpretation
    )
    return chart_set(frames.as_dict(), hdi=hdi)


def linked_chart(
    data: Mapping[str, Data],
    *,
    hdi: float = 0.89,
    selected_pair: str = "",
    focus: str = "",
) -> alt.VConcatChart:
    """All charts in one linked view (shared highlight and focus parameters).

    Parameters
    ----------
    data
        For each name in ``intervals, overlap, rope, ppc, coverage, matrix``: a frame
        (inlined) or a dataset name.
    hdi
        HDI mass, for titles (initial value of the ``hdi_mass`` parameter).
    selected_pair, focus
        Initial values of the highlight parameters.
    """
    top = alt.hconcat(
        intervals_chart(data["intervals"], data["rope"], hdi=None),
        rope_overlap_chart(data["overlap"]),
    ).resolve_scale(color="independent")
    middle = ppc_chart(data["ppc"])
    bottom = alt.hconcat(
        win_matrix_chart(data["matrix"]), coverage_chart(data["coverage"]), spacing=40
    )
    chart = (
        alt.vconcat(top, middle, bottom, spacing=24)
        .resolve_scale(color="independent", opacity="independent")
        .configure_view(stroke=None)
        .configure_axis(labelFontSize=11, titleFontSize=11)
    )
    # Plain (non-selection) parameters go straight on the top level; add_params() would push
    # them into every sub-chart.
    chart.params = _params(selected_pair, focus, hdi)
    # resize: re-run the layout on every update, so the view shrinks when "Show pairs of"
    # leaves fewer rows (Vega only ever grows a "pad" view otherwise: a blank tail).
    chart.autosize = alt.AutoSizeParams(type="pad", resize=True)
    return chart


# --------------------------------------------------------------------------- robustness

#: Colour per sweep decision ("a" is the pair's first algorithm), the verdict colours above
#: plus the other direction, uncompared pairs and failed fits.
SWEEP_DECISION_COLORS: dict[str, str] = {
    "a better": DECISION_COLORS["better"],
    "b better": "#e08214",
    "equivalent": DECISION_COLORS["equivalent"],
    "no claim": DECISION_COLORS["no claim"],
    "not compared": "#d9d9d9",
    "failed": "#f0f0f0",
}
#: Names of the datasets of the robustness view (:func:`robustness_spec`).
ROBUSTNESS_DATASETS = ("flips", "influence")
#: Data sets drawn in the influence chart of the highlighted pair.
INFLUENCE_TOP = 10
#: Up to this many pairs (10 algorithms) the flips chart shows every pair; beyond, only the
#: pairs whose decision changes (and the highlighted one).
FLIPS_ALL_PAIRS = 45


def flips_frame(
    table: pd.DataFrame, settings: Sequence[str], interpretation: str = "weak"
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
    keys = [pair_key(a, b) for a, b in zip(alg_a, alg_b, strict=True)]
    out = pd.DataFrame(
        {
            "key": keys,
            "label": _distinct_labels(frame["pair"].astype(str), keys),
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


def flips_chart(flips: Data, *, cell: int = 14) -> alt.Chart:
    """Pairs x settings of a sweep, coloured by decision (linked with the intervals chart).

    Beyond 10 algorithms only the pairs whose decision changes are drawn (``shown``), plus
    the highlighted pair whatever its decisions, so that clicking a pair anywhere shows its
    decision across settings.
    """
    shown = f"(datum.shown || datum.key == {PAIR_PARAM}) && {_FOCUS}"
    colors = SWEEP_DECISION_COLORS
    return (
        alt.Chart(_source(flips))
        .transform_filter(shown)
        .mark_rect(stroke="white", strokeWidth=0.5)
        .encode(
            x=alt.X(
                "setting:N",
                sort=alt.EncodingSortField("setting_order", op="min"),
                title=None,
                axis=alt.Axis(labelAngle=-40, labelLimit=180, orient="top"),
            ),
            y=_pair_axis(),
            color=alt.Color(
                "kind:N",
                scale=alt.Scale(domain=list(colors), range=list(colors.values())),
                legend=alt.Legend(title="decision (a = first of the pair)", orient="bottom"),
            ),
            opacity=_highlight_opacity(0.35),
            tooltip=[
                alt.Tooltip("label:N", title="pair"),
                alt.Tooltip("setting:N"),
                alt.Tooltip("decision:N"),
                alt.Tooltip("mean:Q", format=".3f"),
                alt.Tooltip("above_50:Q", format=".3f", title="above.50"),
                alt.Tooltip("in_rope:Q", format=".3f", title="in.rope"),
                alt.Tooltip("error:N"),
            ],
        )
        .properties(
            width=alt.Step(cell * 2),
            height=alt.Step(cell),
            title=alt.TitleParams(
                "Decisions across analysis settings",
                subtitle=(
                    f"beyond {FLIPS_ALL_PAIRS} pairs: those whose decision changes, and the"
                    " highlighted pair"
                ),
                anchor="start",
            ),
        )
    )


def influence_chart(influence: Data, *, width: int = 260) -> alt.LayerChart:
    """The most influential data sets for the highlighted pair (leave-one-data-set-out)."""
    colors = {"decision changes": "#e08214", "decision holds": DECISION_COLORS["no claim"]}
    base = alt.Chart(_source(influence))
    # not filtered: a layer filtered down to no rows warns of an infinite extent; the note
    # row is a bar of zero length on a blank row instead
    bars = base.mark_bar().encode(
        x=alt.X(
            "delta_mean:Q",
            title="change in mean P(a > b) when left out",
            axis=alt.Axis(format="+.2f"),
            stack=None,  # a stack of no rows (only the note) would have no extent
        ),
        y=alt.Y(
            "dataset:N",
            sort=alt.EncodingSortField("order", op="min"),
            title=None,
            axis=alt.Axis(**LABEL_AXIS),
        ),
        color=alt.Color(
            "effect:N",
            scale=alt.Scale(domain=list(colors), range=list(colors.values())),
            legend=alt.Legend(title=None, orient="bottom"),
        ),
        tooltip=[
            alt.Tooltip("dataset:N"),
            alt.Tooltip("delta_mean:Q", format="+.3f", title="change in mean"),
            alt.Tooltip("mean_loo:Q", format=".3f", title="mean without it"),
            alt.Tooltip("decision_loo:N", title="decision without it"),
            alt.Tooltip("pareto_k:Q", format=".2f", title="Pareto k"),
            alt.Tooltip("method:N"),
        ],
    )
    # the note row (no pair, or none computed yet) keeps the x scale finite and says why
    note = base.mark_text(align="left", color="#636363", fontSize=11).encode(
        x=alt.X("delta_mean:Q"), text="note:N"
    )
    return alt.layer(bars, note).properties(
        width=width,
        title=alt.TitleParams(
            "Most influential data sets for the highlighted pair",
            subtitle="leave-one-data-set-out (PSIS); orange: the decision changes",
            anchor="start",
        ),
    )


def robustness_chart(data: Mapping[str, Data], *, selected_pair: str = "", focus: str = ""):
    """The widget's robustness view: flips chart and influence chart, linked by ``sel_pair``."""
    chart = (
        alt.hconcat(flips_chart(data["flips"]), influence_chart(data["influence"]), spacing=30)
        .resolve_scale(color="independent", opacity="independent")
        .configure_view(stroke=None)
        .configure_axis(labelFontSize=11, titleFontSize=11)
    )
    chart.params = [
        alt.VariableParameter(name=PAIR_PARAM, value=selected_pair),
        alt.VariableParameter(name=FOCUS_PARAM, value=focus),
    ]
    chart.autosize = alt.AutoSizeParams(type="pad", resize=True)
    return chart


def robustness_spec() -> dict[str, Any]:
    """The robustness view's Vega-Lite spec, data by name (cached like :func:`view_spec`)."""
    return copy.deepcopy(_cached_spec("robustness"))


def view_spec() -> dict[str, Any]:
    """The widget's Vega-Lite spec: structure only, data referenced by dataset name.

    Everything that varies (frames, ROPE, HDI mass, highlight) is data or a parameter, so
    the spec is the same for every result. Building it needs Altair (an import of seconds
    plus most of a second to build), so it is built once per machine and kept in the user
    cache, keyed by this module's source and Altair's version; a new widget then reads a
    small JSON file. The ``$schema`` URL is dropped: the front end passes the mode
    explicitly, and the widget sends nothing that looks like a remote address.
    """
    return copy.deepcopy(_cached_spec("view"))


@functools.lru_cache(maxsize=4)
def _cached_spec(name: str) -> dict[str, Any]:
    path = _spec_cache_path(name)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        pass  # not built yet on this machine (or unreadable): build it
    spec = _build_spec(name)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # written whole, then renamed: a concurrent reader never sees half a file
        fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".partial", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(spec, fh)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache only costs the build next time
    return spec


def _build_spec(name: str) -> dict[str, Any]:
    if name == "robustness":
        chart = robustness_chart({n: n for n in ROBUSTNESS_DATASETS})
    else:
        chart = linked_chart({n: n for n in VIEW_DATASETS + FIT_DATASETS})
    spec = chart.to_dict(validate=False)
    spec.pop("$schema", None)
    return spec


def _spec_cache_path(name: str = "view") -> Path:
    from .engines._cache import cache_root

    source = Path(__file__).read_bytes()
    version = importlib.metadata.version("altair")
    digest = hashlib.sha256(source + b"\0altair " + version.encode()).hexdigest()[:16]
    return cache_root() / "specs" / f"{name}-{digest}.json"
