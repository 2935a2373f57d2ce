"""Demšar's critical-difference diagram as a pure Altair chart (paper Figure 6).

Layout (Demšar 2006, Fig. 1): a rank axis on top, best rank on the left; each algorithm
hangs from its mean rank by an elbow line to its label, the better half on the left and the
worse half on the right; thick bars join algorithms that are not significantly different;
a bar of length CD shows the critical difference. Every mark reads inline data (no URL), so
the spec renders offline.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from ..core.validation import check_count
from ._demsar import NemenyiResult, nemenyi

_STEP = 1.0  # vertical distance between label rows, in y units
_ROW_PX = 22  # pixels per y unit


def cd_diagram(
    data: pd.DataFrame | NemenyiResult,
    *,
    dataset: str | None = None,
    algorithm: str | None = None,
    fold: str | None = None,
    score: str | None = None,
    sd: pd.DataFrame | None = None,
    lower_is_better: bool = False,
    alpha: float | None = None,
    width: int = 480,
    title: str | None = None,
) -> alt.LayerChart:
    """Draw the critical-difference diagram of Nemenyi's test.

    Parameters
    ----------
    data
        Results in any layout :func:`bbt_widget.win_table` accepts, or a
        :class:`NemenyiResult` already computed (then the data keywords must be left out).
    dataset, algorithm, fold, score, sd, lower_is_better
        As for :func:`nemenyi`.
    alpha
        Significance level of the critical difference (default 0.05).
    width
        Width of the rank axis in pixels (labels are drawn beside it).
    title
        Chart title; by default the CD, alpha, number of data sets and Friedman's p.

    Returns
    -------
    altair.LayerChart
        A self-contained chart (data inline).
    """
    width = check_count(width, "width")
    if isinstance(data, NemenyiResult):
        given = {"dataset": dataset, "algorithm": algorithm, "fold": fold, "score": score}
        extra = [k for k, v in given.items() if v is not None]
        extra += ["sd"] if sd is not None else []
        extra += ["lower_is_better"] if lower_is_better else []
        extra += ["alpha"] if alpha is not None else []
        if extra:
            raise ValueError(
                f"data is already a Nemenyi result, so {', '.join(extra)} cannot apply; pass "
                "the raw results instead to read them with these settings"
            )
        res = data
    else:
        res = nemenyi(
            data,
            dataset=dataset,
            algorithm=algorithm,
            fold=fold,
            score=score,
            sd=sd,
            lower_is_better=lower_is_better,
            alpha=0.05 if alpha is None else alpha,
        )
    segments, labels, points = diagram_frames(res)
    depth = float(-segments["y2"].min()) + _STEP
    k = len(res.mean_ranks)
    x = alt.X(
        "x:Q",
        scale=alt.Scale(domain=[1, max(k, 2)], nice=False, zero=False),
        axis=alt.Axis(orient="top", values=list(range(1, k + 1)), grid=False, title="mean rank"),
    )
    y = alt.Y("y:Q", scale=alt.Scale(domain=[-depth, 0], nice=False, zero=False), axis=None)
    base = alt.Chart(segments).encode(x=x, x2="x2:Q", y=y, y2="y2:Q")
    layers = [
        base.transform_filter(alt.datum.kind == kind).mark_rule(
            strokeWidth=width_px, color=color, strokeCap="round"
        )
        for kind, width_px, color in (("line", 1, "#555555"), ("group", 5, "#222222"))
    ]
    layers.append(
        base.transform_filter(alt.datum.kind == "cd").mark_rule(strokeWidth=2, color="#b2182b")
    )
    layers.append(
        alt.Chart(points)
        .mark_point(filled=True, size=40, color="#222222")
        .encode(x=x, y=y, tooltip=["algorithm:N", alt.Tooltip("rank:Q", format=".3f")])
    )
    for side, align in (("left", "right"), ("right", "left"), ("cd", "left")):
        layers.append(
            alt.Chart(labels)
            .transform_filter(alt.datum.side == side)
            .mark_text(align=align, baseline="middle", dx=-4 if align == "right" else 4)
            .encode(x=x, y=y, text="text:N")
        )
    if title is None:
        f = res.friedman
        title = (
            f"Nemenyi CD = {res.cd:.3f} (alpha = {res.alpha:g}, {res.n_datasets} data sets; "
            f"Friedman p = {f.pvalue:.2g})"
        )
    return alt.layer(*layers).properties(
        width=width,
        height=int(depth * _ROW_PX),
        title=title,
        view=alt.ViewBackground(stroke=None),  # no frame: the rank axis is the only scale
    )


def diagram_frames(res: NemenyiResult) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The diagram's geometry: segments (x, x2, y, y2, kind), labels and rank points.

    y is 0 at the axis and negative below it; the left half of the labels sits at rank 1,
    the right half at rank k, each algorithm on its own row so no lines cross.
    """
    ranks = res.mean_ranks
    names, r = list(ranks.index), ranks.to_numpy()
    k = len(names)
    n_left = (k + 1) // 2
    groups = res.groups()
    top = -_STEP * (len(groups) + 1) * 0.5  # group bars live between the axis and here
    segs, labels = [], []
    for i, (name, rank) in enumerate(zip(names, r)):
        left = i < n_left
        row = i if left else k - 1 - i  # outermost labels on the first row
        y = top - _STEP * (row + 0.5)
        edge = 1.0 if left else float(max(k, 2))
        segs.append({"x": rank, "x2": rank, "y": 0.0, "y2": y, "kind": "line"})
        segs.append({"x": rank, "x2": edge, "y": y, "y2": y, "kind": "line"})
        labels.append(
            {"x": edge, "y": y, "text": f"{name} ({rank:.2f})", "side": "left" if left else "right"}
        )
    for g, members in enumerate(groups):
        lo, hi = ranks[list(members)].min(), ranks[list(members)].max()
        y = -_STEP * 0.5 * (g + 1)
        segs.append({"x": lo - 0.03, "x2": hi + 0.03, "y": y, "y2": y, "kind": "group"})
    bottom = min(s["y2"] for s in segs) - _STEP
    segs.append({"x": 1.0, "x2": 1.0 + res.cd, "y": bottom, "y2": bottom, "kind": "cd"})
    labels.append({"x": 1.0 + res.cd, "y": bottom, "text": f"CD = {res.cd:.2f}", "side": "cd"})
    points = pd.DataFrame({"x": r, "y": 0.0, "algorithm": names, "rank": r})
    return pd.DataFrame(segs), pd.DataFrame(labels), points
