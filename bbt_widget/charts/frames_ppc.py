"""Tidy frames of the posterior predictive check: pure pandas and numpy, no Altair.

:func:`ppc_frame` lays out the widget's PPC panels, worst-fitting pairs first;
:func:`ppc_fit_frame` and :func:`worst_ppc_frame` pick the pairs a report shows. Both order the
pairs by one tail probability, :func:`predictive_p`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..core.bidi import isolate
from .pairs import distinct_labels, pair_key

__all__ = ["ppc_fit_frame", "ppc_frame", "predictive_p", "worst_pairs_label", "worst_ppc_frame"]


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
    frame = ppc_histogram.reset_index(drop=True)
    alg1 = frame["alg1"].astype(str).to_numpy()
    alg2 = frame["alg2"].astype(str).to_numpy()
    quantity = frame["quantity"].astype(str).to_numpy()
    # Thousands of rows but few panels and pairs: everything per panel or per pair is computed
    # once on integer codes (bincount, ufunc.at) and mapped onto the rows, and the frame is
    # made once from the columns. It is built for every fit and preview the widget shows,
    # beside the chains of the next fit, so it avoids pandas' per-group and per-row work (a
    # groupby per statistic, a json.dumps per row) and adding its 14 columns one by one.
    # A histogram's rows run panel by panel: a panel is looked up once per run of rows (any
    # order of rows still works, with more runs).
    starts = np.ones(len(frame), dtype=bool)
    starts[1:] = (alg1[1:] != alg1[:-1]) | (alg2[1:] != alg2[:-1]) | (quantity[1:] != quantity[:-1])
    starts = np.flatnonzero(starts)
    panel_of: dict[tuple[str, str, str], int] = {}
    runs = [(alg1[i], alg2[i], quantity[i]) for i in starts]
    run_panel = np.array([panel_of.setdefault(p, len(panel_of)) for p in runs], dtype=np.intp)
    codes = np.repeat(run_panel, np.diff(np.append(starts, len(frame))))
    panels = list(panel_of)
    pair_of: dict[tuple[str, str], int] = {}
    panel_pair = np.array([pair_of.setdefault((a, b), len(pair_of)) for a, b, _ in panels], int)
    pairs = list(pair_of)
    row_pair = panel_pair[codes]
    titles = distinct_labels(
        [
            f"{isolate(a)} wins vs {isolate(b)}"
            if q == "win1"
            else f"ties {isolate(a)}–{isolate(b)}"
            for a, b, q in panels
        ],
        panels,
    )
    names = list(order) if order is not None else list(pd.unique(np.concatenate([alg1, alg2])))
    rank = {name: i for i, name in enumerate(names)}
    k = len(names)
    ranks = np.array([(rank.get(a, k), rank.get(b, k)) for a, b in pairs], dtype=int)
    first, second = ranks.reshape(-1, 2).min(axis=1), ranks.reshape(-1, 2).max(axis=1)
    # index of pair (i, j), i < j, in the enumeration (0,1), (0,2), ..., (1,2), ...
    pair_rank_order = first * k - first * (first + 1) // 2 + (second - first - 1)
    value = frame["value"].to_numpy(float)
    observed = frame["observed"].to_numpy(float)
    count = frame["count"].to_numpy(float)
    panel_ppp = _panel_predictive_p(value, observed, count, codes, len(panels))
    # worst-fitting pairs first (smallest predictive p of either panel), ranking order
    # among equals, then first seen: with many pairs, the panels shown are the ones worth checking
    worst = np.full(len(pairs), np.inf)
    np.fmin.at(worst, panel_pair, panel_ppp)  # fmin: a NaN p (no replicates) sorts last
    worst[np.isinf(worst)] = np.nan
    pair_order = np.empty(len(pairs), dtype=int)
    pair_order[np.lexsort((pair_rank_order, worst))] = np.arange(len(pairs))
    row_pair_order = pair_order[row_pair]
    columns = {
        **{name: frame[name] for name in frame.columns},
        "key": np.array([pair_key(a, b) for a, b in pairs], dtype=object)[row_pair],
        "alg_a": alg1,
        "alg_b": alg2,
        "panel": np.array(titles, dtype=object)[codes],
        "rank_order": pair_rank_order[row_pair],
        "ppp": panel_ppp[codes],
        "pair_order": row_pair_order,
        # panels run in pair order, each pair's ties panel right after its wins panel
        "panel_order": 2 * row_pair_order + (quantity != "win1"),
        **_panel_positions(frame, codes, len(panels)),
    }
    return pd.DataFrame(columns, index=frame.index)


def _panel_predictive_p(
    value: np.ndarray, observed: np.ndarray, count: np.ndarray, codes: np.ndarray, n: int
) -> np.ndarray:
    """:func:`predictive_p` of each of ``n`` panels, its rows marked by ``codes``."""

    def per_panel(weights: np.ndarray) -> np.ndarray:
        return np.bincount(codes, weights=weights, minlength=n)

    total = per_panel(count)
    tail = np.minimum(
        per_panel(count * (value <= observed)), per_panel(count * (value >= observed))
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.minimum(1.0, 2.0 * tail / total))


def predictive_p(
    value: np.ndarray, observed: np.ndarray, count: np.ndarray, groups: np.ndarray
) -> np.ndarray:
    """Two-sided posterior predictive p-value of each group's observed count, per row.

    Rows are histogram bins (replicated ``value`` seen ``count`` times) of one observed count
    per group. ``2 * min(P(rep <= observed), P(rep >= observed))``, capped at 1: small when the
    observed count lies in a tail of its replicates, i.e. when the pair falls outside the HDIs
    that the coverage table counts.
    """
    codes, uniques = pd.factorize(np.asarray(groups), sort=False)
    return np.asarray(_panel_predictive_p(value, observed, count, codes, len(uniques))[codes])


def _panel_positions(frame: pd.DataFrame, codes: np.ndarray, n: int) -> dict[str, np.ndarray]:
    """Bar and observed-line positions on [0, 1] within each panel (rows marked by ``codes``,
    ``n`` panels), for :func:`bbt_widget.charts.ppc_chart`: the columns ``x0, x1, h,
    obs_x, range_low, range_high`` of ``frame``'s rows.

    A panel spans its lowest to its highest count, replicated or observed, each count a bar
    of width one; bar heights are relative to the panel's tallest bar.
    """
    if frame.empty:
        return {name: np.zeros(0) for name in ("x0", "x1", "h", "obs_x", "range_low", "range_high")}
    value = frame["value"].to_numpy(float)
    observed = frame["observed"].to_numpy(float)
    count = frame["count"].to_numpy(float)
    low, high, tallest = np.full(n, np.inf), np.full(n, -np.inf), np.full(n, -np.inf)
    np.minimum.at(low, codes, np.minimum(value, observed))
    np.maximum.at(high, codes, np.maximum(value, observed))
    np.maximum.at(tallest, codes, count)
    low, high = low[codes], high[codes]
    start, span = low - 0.5, high - low + 1.0
    with np.errstate(invalid="ignore"):  # a panel of zero counts has no height: NaN
        h = count / tallest[codes]
    # in the counts' own type (integers from a histogram), as the chart's axis labels show them
    kind = np.result_type(frame["value"].dtype, frame["observed"].dtype)
    return {
        "x0": (value - 0.5 - start) / span,
        "x1": (value + 0.5 - start) / span,
        "h": h,
        "obs_x": (observed - start) / span,
        "range_low": low.astype(kind),
        "range_high": high.astype(kind),
    }


def ppc_fit_frame(ppc_histogram: pd.DataFrame) -> pd.DataFrame:
    """How well each fitted pair's observed count sits in its replicated counts.

    Parameters
    ----------
    ppc_histogram
        ``BBTResult.ppc_histogram()`` (alg1, alg2, quantity, value, count, observed), or
        :func:`ppc_frame` of it.

    Returns
    -------
    pandas.DataFrame
        One row per pair and quantity, worst fit first: ``alg1, alg2, quantity, observed,
        replicated_mean, p_tail``. ``p_tail`` is the two-sided tail probability of the
        observed count among the replicates, 2 min(P(rep <= obs), P(rep >= obs)) capped at
        1: small values mean the observed count is unusual for the model.
    """
    h = ppc_histogram
    keys = ["alg1", "alg2", "quantity"]
    value = h["value"].to_numpy(float)
    count = h["count"].to_numpy(float)
    groups = h.groupby(keys, sort=False).ngroup().to_numpy()
    parts = pd.DataFrame(
        {
            **{k: h[k].to_numpy() for k in keys},
            "observed": h["observed"].to_numpy(float),
            "n": count,
            "weighted": count * value,
            "p_tail": predictive_p(value, h["observed"].to_numpy(float), count, groups),
        }
    )
    g = parts.groupby(keys, sort=False).agg(
        observed=("observed", "max"),
        n=("n", "sum"),
        weighted=("weighted", "sum"),
        p_tail=("p_tail", "first"),
    )
    frame = pd.DataFrame(
        {
            "observed": g["observed"].astype(int),
            "replicated_mean": g["weighted"] / g["n"],
            "p_tail": g["p_tail"],
        }
    ).reset_index()
    # worst first; among equal tails, the observed count farther from the replicates' mean
    frame["_gap"] = -(frame["observed"] - frame["replicated_mean"]).abs()
    frame = frame.sort_values(["p_tail", "_gap"], kind="stable").drop(columns="_gap")
    return frame.reset_index(drop=True)


def worst_ppc_frame(ppc: pd.DataFrame, fit: pd.DataFrame, n_pairs: int) -> pd.DataFrame:
    """The rows of :func:`ppc_frame` for the ``n_pairs`` worst-fitting pairs, numbered worst
    first (``pair_order``, ``panel_order``), so that
    :func:`bbt_widget.charts.ppc_chart` ``(frame, max_pairs=n_pairs)`` draws exactly them.

    Parameters
    ----------
    ppc
        ``ppc_frame(result.ppc_histogram(), order)``.
    fit
        :func:`ppc_fit_frame` of the same histogram (worst first).
    n_pairs
        How many pairs to keep.
    """
    worst: dict[tuple[str, str], int] = {}
    for rec in fit.itertuples(index=False):
        pair = (str(rec.alg1), str(rec.alg2))
        if pair not in worst and len(worst) < n_pairs:
            worst[pair] = len(worst)
    pairs = list(zip(ppc["alg_a"].astype(str), ppc["alg_b"].astype(str), strict=True))
    rank = np.array([worst.get(p, -1) for p in pairs])
    frame = ppc[rank >= 0].copy()
    frame["pair_order"] = rank[rank >= 0]
    frame["panel_order"] = 2 * frame["pair_order"] + (frame["quantity"] != "win1")
    return frame.reset_index(drop=True)


def worst_pairs_label(n_shown: int, n_pairs: int) -> str:
    """How a report names the pairs its PPC shows: "the 12 worst-fitting pairs", or "all 10
    pairs, worst fit first" when it shows them all."""
    if n_shown < n_pairs:
        return f"the {n_shown} worst-fitting pairs"
    return f"all {n_pairs} pair{'s' if n_pairs != 1 else ''}, worst fit first"
