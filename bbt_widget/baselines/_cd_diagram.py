"""Critical-difference diagrams as pure Altair charts (paper Figure 6; Demšar 2006, Fig. 1-2).

Layout (Demšar 2006, Fig. 1): an axis on top, best on the left; each algorithm hangs from its
position by an elbow line to its label, the better half on the left and the worse half on the
right; thick bars join algorithms that are not told apart; a bar of length CD shows the
critical difference when there is one. With a control (Fig. 2) a bar joins the control to each
algorithm not significantly different from it, and the CD interval is centred on the control.
Algorithms named in ``highlight`` are drawn in their own colour, with a legend. Every mark
reads inline data (no URL), so the spec renders offline.

:func:`cd_diagram` draws Nemenyi's (or Bonferroni-Dunn's) and the Wilcoxon-Holm tests;
:func:`critical_difference_chart` is the drawing itself, which the BBT diagram
(``bbt.charts.cd_diagram``) shares.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import altair as alt
import pandas as pd

from ..core.bidi import isolate
from ..core.palette import HIGHLIGHT_COLORS, NEUTRAL_COLORS
from ..core.validation import check_algorithms, check_count
from ._common import check_alpha, check_choice, check_control, dataset_means
from ._demsar import NemenyiResult, complete_blocks, mean_ranks, nemenyi, significance_groups
from ._wilcoxon import ADJUSTMENTS, WilcoxonResult, wilcoxon_from_means

_STEP = 1.0  # vertical distance between label rows, in y units
_ROW_PX = 22  # pixels per y unit
#: Names longer than this many characters (code points) end in an ellipsis in the labels.
LABEL_MAX_CHARS = 40
#: The tests whose diagram :func:`cd_diagram` draws.
TESTS = ("nemenyi", "wilcoxon")
_CONTROL_MARK = "#000000"


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
    test: str = "nemenyi",
    adjust: str = "holm",
    control: str | None = None,
    highlight: str | Iterable[str] | None = None,
    width: int = 480,
    title: str | None = None,
) -> alt.LayerChart:
    """Draw the critical-difference diagram of Nemenyi's or the Wilcoxon-Holm tests.

    Parameters
    ----------
    data
        Results in any layout :func:`bbt_widget.win_table` accepts, or a
        :class:`NemenyiResult` already computed (then the data keywords, ``alpha``, ``test``
        and ``control`` must be left out).
    dataset, algorithm, fold, score, sd, lower_is_better
        As for :func:`nemenyi`.
    alpha
        Significance level (default 0.05).
    test
        ``"nemenyi"``: bars join algorithms whose mean ranks are within the critical
        difference (Demšar 2006). ``"wilcoxon"``: the same mean-rank axis, bars join the
        maximal runs of algorithms with no significant pairwise Wilcoxon test after the
        ``adjust`` correction (Benavoli et al. 2016's recommendation; no CD bar, as there is
        no single critical difference).
    adjust
        The Wilcoxon tests' adjustment, ``"holm"`` or ``"hochberg"``.
    control
        Compare this algorithm with each other one only (Bonferroni-Dunn for
        ``"nemenyi"``, ``k - 1`` adjusted Wilcoxon tests): a bar joins the control to each
        algorithm not significantly different from it.
    highlight
        Algorithms to draw in their own colour (e.g. the methods a paper proposes), with a
        legend.
    width
        Width of the rank axis in pixels (labels are drawn beside it).
    title
        Chart title; by default the test, CD, alpha, number of data sets and Friedman's p.

    Returns
    -------
    altair.LayerChart
        A self-contained chart (data inline).

    Raises
    ------
    ValueError
        Unknown ``test`` or ``adjust``, a ``control`` or ``highlight`` that is not an
        algorithm, or data keywords next to a ready result.
    """
    width = check_count(width, "width")
    test = check_choice(test, "test", TESTS)
    adjust = check_choice(adjust, "adjust", ADJUSTMENTS)
    if isinstance(data, WilcoxonResult):
        raise TypeError(
            "a WilcoxonResult holds no mean ranks to place the algorithms; pass the results "
            "themselves with test='wilcoxon'"
        )
    if isinstance(data, NemenyiResult):
        given = {"dataset": dataset, "algorithm": algorithm, "fold": fold, "score": score}
        extra = [k for k, v in given.items() if v is not None]
        extra += ["sd"] if sd is not None else []
        extra += ["lower_is_better"] if lower_is_better else []
        extra += ["alpha"] if alpha is not None else []
        extra += ["control"] if control is not None else []
        extra += ["test"] if test != "nemenyi" else []
        if extra:
            raise ValueError(
                f"data is already a Nemenyi result, so {', '.join(extra)} cannot apply; pass "
                "the raw results instead to read them with these settings"
            )
        return _nemenyi_chart(data, highlight, width, title)
    layout = {"dataset": dataset, "algorithm": algorithm, "fold": fold, "score": score}
    if test == "nemenyi":
        res = nemenyi(
            data,
            **layout,
            sd=sd,
            lower_is_better=lower_is_better,
            alpha=0.05 if alpha is None else alpha,
            control=control,
        )
        return _nemenyi_chart(res, highlight, width, title)
    alpha = check_alpha(0.05 if alpha is None else alpha)
    means = dataset_means(data, **layout, sd=sd, lower_is_better=lower_is_better)
    control = check_control(control, means.algorithms)
    complete, _ = complete_blocks(means, "The Wilcoxon diagram (its mean-rank axis)")
    ranks = mean_ranks(complete)
    wil = wilcoxon_from_means(means, alpha, adjust, control)
    if title is None:
        vs = f" vs {control}" if control is not None else ""
        title = (
            f"Wilcoxon-{adjust.capitalize()}{vs} (alpha = {alpha:g}); mean ranks over "
            f"{len(complete.datasets)} data sets"
        )
    return critical_difference_chart(
        ranks,
        significance_groups(ranks, wil.table, control),
        axis_title="mean rank",
        control=control,
        highlight=highlight,
        width=width,
        title=title,
    )


def _nemenyi_chart(
    res: NemenyiResult, highlight: str | Iterable[str] | None, width: int, title: str | None
) -> alt.LayerChart:
    if title is None:
        f = res.friedman
        name = "Nemenyi" if res.control is None else f"Bonferroni-Dunn vs {res.control}"
        title = (
            f"{name} CD = {res.cd:.3f} (alpha = {res.alpha:g}, {res.n_datasets} data sets; "
            f"Friedman p = {f.pvalue:.2g})"
        )
    return critical_difference_chart(
        res.mean_ranks,
        res.groups(),
        axis_title="mean rank",
        cd=res.cd,
        control=res.control,
        highlight=highlight,
        width=width,
        title=title,
    )


def critical_difference_chart(
    positions: pd.Series,
    groups: Sequence[Sequence[str]],
    *,
    axis_title: str,
    higher_is_better: bool = False,
    cd: float | None = None,
    control: str | None = None,
    highlight: str | Iterable[str] | None = None,
    width: int = 480,
    title: str | Any = "",
    max_chars: int = LABEL_MAX_CHARS,
) -> alt.LayerChart:
    """A critical-difference diagram of any positions and groups.

    Parameters
    ----------
    positions
        Position of each algorithm on the axis (its index), best first: mean ranks
        (1 = best) or, with ``higher_is_better``, abilities.
    groups
        The bars: each a run of algorithms not told apart (with a ``control``: pairs
        ``(control, x)``).
    axis_title
        Title of the axis on top.
    higher_is_better
        The best position is the largest (abilities); the axis then runs from the largest on
        the left. Otherwise ranks: the axis runs from 1 to ``k``, one tick per rank.
    cd
        The critical difference, drawn as a bar of that length (from rank 1, or centred on
        the control); ``None``: none.
    control
        The control algorithm, drawn with a larger mark.
    highlight
        Algorithms drawn in their own colour (:data:`HIGHLIGHT_COLORS`), with a legend.
    width
        Width of the axis in pixels.
    title
        Chart title (a string or ``alt.TitleParams``).
    max_chars
        Names longer than this end in an ellipsis.
    """
    names = [str(a) for a in positions.index]
    chosen = set(_highlighted(highlight, names))
    segments, labels, points = diagram_frames(
        positions,
        groups,
        higher_is_better=higher_is_better,
        cd=cd,
        control=control,
        max_chars=max_chars,
    )
    labels["role"] = [
        "highlighted" if a in chosen else "other" for a in labels["algorithm"].fillna("")
    ]
    points["role"] = ["highlighted" if a in chosen else "other" for a in points["algorithm"]]
    depth = float(-segments["y2"].min()) + _STEP
    best, worst = _ends(positions.to_numpy(dtype=float), higher_is_better)
    k = len(names)
    axis = alt.Axis(orient="top", grid=False, title=axis_title)
    if not higher_is_better:
        axis = alt.Axis(orient="top", values=list(range(1, k + 1)), grid=False, title=axis_title)
    # a domain from best to worst: abilities run from the largest on the left
    x = alt.X("x:Q", scale=alt.Scale(domain=[best, worst], nice=False, zero=False), axis=axis)
    y = alt.Y("y:Q", scale=alt.Scale(domain=[-depth, 0], nice=False, zero=False), axis=None)
    color = alt.Color(
        "role:N",
        scale=alt.Scale(domain=list(HIGHLIGHT_COLORS), range=list(HIGHLIGHT_COLORS.values())),
        legend=alt.Legend(title=None, orient="bottom") if chosen else None,
    )
    base = alt.Chart(segments).encode(x=x, x2="x2:Q", y=y, y2="y2:Q")
    layers: list[Any] = [
        base.transform_filter(alt.datum.kind == kind).mark_rule(
            strokeWidth=width_px, color=line_color, strokeCap="round"
        )
        for kind, width_px, line_color in (
            ("line", 1, NEUTRAL_COLORS["reference"]),
            ("group", 5, HIGHLIGHT_COLORS["other"]),
        )
    ]
    layers.append(
        base.transform_filter(alt.datum.kind == "cd").mark_rule(
            strokeWidth=2, color=NEUTRAL_COLORS["text"]
        )
    )
    tooltip = ["algorithm:N", alt.Tooltip("position:Q", title=axis_title, format=".3f")]
    layers.append(
        alt.Chart(points)
        .mark_point(filled=True, size=50)
        .encode(x=x, y=y, color=color, tooltip=tooltip)
    )
    if control is not None:
        layers.append(
            alt.Chart(points)
            .transform_filter(alt.datum.algorithm == control)
            .mark_point(shape="diamond", size=160, filled=False, color=_CONTROL_MARK)
            .encode(x=x, y=y)
        )
    for side, align in (("left", "right"), ("right", "left")):
        layers.append(
            alt.Chart(labels)
            .transform_filter(alt.datum.side == side)
            .mark_text(align=align, baseline="middle", dx=-4 if align == "right" else 4)
            .encode(x=x, y=y, text="text:N", color=color)
        )
    layers.append(
        alt.Chart(labels)
        .transform_filter(alt.datum.side == "cd")
        .mark_text(align="left", baseline="middle", dx=4, color=NEUTRAL_COLORS["text"])
        .encode(x=x, y=y, text="text:N")
    )
    return alt.layer(*layers).properties(
        width=width,
        height=int(depth * _ROW_PX),
        title=title,
        view=alt.ViewBackground(stroke=None),  # no frame: the axis on top is the only scale
    )


def _highlighted(highlight: str | Iterable[str] | None, names: Sequence[str]) -> list[str]:
    if highlight is None:
        return []
    return check_algorithms(highlight, names, "highlight")


def _ends(values: Any, higher_is_better: bool) -> tuple[float, float]:
    """The axis ends, best first: ranks 1 and k, or the abilities with a margin."""
    if not higher_is_better:
        return 1.0, float(max(len(values), 2))
    lo, hi = float(values.min()), float(values.max())
    pad = 0.05 * (hi - lo or 1.0)
    return hi + pad, lo - pad


def _cut(name: str, max_chars: int) -> str:
    return name if len(name) <= max_chars else name[:max_chars] + "…"


def diagram_frames(
    positions: pd.Series | NemenyiResult,
    groups: Sequence[Sequence[str]] | None = None,
    *,
    higher_is_better: bool = False,
    cd: float | None = None,
    control: str | None = None,
    max_chars: int = LABEL_MAX_CHARS,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The diagram's geometry: segments (x, x2, y, y2, kind), labels and points.

    y is 0 at the axis and negative below it; the left half of the labels sits at the best
    end of the axis, the right half at the worst, each algorithm on its own row so no lines
    cross. A :class:`NemenyiResult` gives its mean ranks, groups, CD and control.
    """
    if isinstance(positions, NemenyiResult):
        res = positions
        positions, groups, cd, control = res.mean_ranks, res.groups(), res.cd, res.control
    groups = list(groups or [])
    names = [str(a) for a in positions.index]
    r = positions.to_numpy(dtype=float)
    k = len(names)
    best, worst = _ends(r, higher_is_better)
    span = abs(worst - best)
    n_left = (k + 1) // 2
    top = -_STEP * (len(groups) + 1) * 0.5  # group bars live between the axis and here
    segs, labels = [], []
    for i, (name, value) in enumerate(zip(names, r)):
        left = i < n_left
        row = i if left else k - 1 - i  # outermost labels on the first row
        y = top - _STEP * (row + 0.5)
        edge = best if left else worst
        segs.append({"x": value, "x2": value, "y": 0.0, "y2": y, "kind": "line"})
        segs.append({"x": value, "x2": edge, "y": y, "y2": y, "kind": "line"})
        labels.append(
            {
                "x": edge,
                "y": y,
                "text": f"{isolate(_cut(name, max_chars))} ({value:.2f})",
                "side": "left" if left else "right",
                "algorithm": name,
            }
        )
    where = dict(zip(names, r))
    pad = 0.03 * span / max(k - 1, 1)
    for g, members in enumerate(groups):
        values = [where[m] for m in members]
        y = -_STEP * 0.5 * (g + 1)
        lo, hi = min(values), max(values)
        if higher_is_better:  # the bar runs from the best (largest) to the worst
            lo, hi = hi + pad, lo - pad
        else:
            lo, hi = lo - pad, hi + pad
        segs.append({"x": lo, "x2": hi, "y": y, "y2": y, "kind": "group"})
    if cd is not None:
        bottom = min(s["y2"] for s in segs) - _STEP
        start = 1.0 if control is None else max(1.0, where[control] - cd)
        end = 1.0 + cd if control is None else min(worst, where[control] + cd)
        segs.append({"x": start, "x2": end, "y": bottom, "y2": bottom, "kind": "cd"})
        labels.append(
            {"x": end, "y": bottom, "text": f"CD = {cd:.2f}", "side": "cd", "algorithm": None}
        )
    points = pd.DataFrame({"x": r, "y": 0.0, "algorithm": names, "position": r})
    return pd.DataFrame(segs), pd.DataFrame(labels), points
