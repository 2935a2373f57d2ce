"""Tidy frames of the posterior predictive check: pure pandas and numpy, no Altair.

:func:`ppc_frame` lays out the widget's PPC panels, worst-fitting pairs first;
:func:`ppc_fit_frame` and :func:`worst_ppc_frame` pick the pairs a report shows. Both order the
pairs by one tail probability, :func:`predictive_p`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

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
    frame = ppc_histogram.reset_index(drop=True).copy()
    alg1 = frame["alg1"].astype(str).to_numpy()
    alg2 = frame["alg2"].astype(str).to_numpy()
    quantity = frame["quantity"].astype(str).to_numpy()
    # Thousands of rows but few panels: key, title and rank once per (pair, quantity), then
    # mapped onto the rows (pair_key is a json.dumps; one per row cost half of this frame).
    panel_of: dict[tuple[str, str, str], int] = {}
    codes = np.fromiter(
        (panel_of.setdefault(p, len(panel_of)) for p in zip(alg1, alg2, quantity, strict=True)),
        dtype=np.intp,
        count=len(frame),
    )
    panels = list(panel_of)
    keys = {pair: pair_key(*pair) for pair in dict.fromkeys((a, b) for a, b, _ in panels)}
    frame["key"] = np.array([keys[a, b] for a, b, _ in panels], dtype=object)[codes]
    frame["alg_a"] = alg1
    frame["alg_b"] = alg2
    titles = distinct_labels(
        [f"{a} wins vs {b}" if q == "win1" else f"ties {a}–{b}" for a, b, q in panels], panels
    )
    frame["panel"] = np.array(titles, dtype=object)[codes]
    names = list(order) if order is not None else list(pd.unique(np.concatenate([alg1, alg2])))
    rank = {name: i for i, name in enumerate(names)}
    k = len(names)
    ranks = np.array([(rank.get(a, k), rank.get(b, k)) for a, b, _ in panels], dtype=int)
    ranks = ranks.reshape(-1, 2)[codes]
    first, second = ranks.min(axis=1), ranks.max(axis=1)
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
    """Bar and observed-line positions on [0, 1] within each panel, for
    :func:`bbt_widget.outputs.charts.ppc_chart`.

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
    :func:`bbt_widget.outputs.charts.ppc_chart` ``(frame, max_pairs=n_pairs)`` draws exactly them.

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
