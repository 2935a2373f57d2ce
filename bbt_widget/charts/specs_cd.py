"""The critical-difference diagram of a BBT fit (frames: :func:`.frames_decisions.cd_groups`).

Demšar's diagram, drawn from BBT's decisions instead of a frequentist post-hoc test: the
algorithms at their expected rank (or mean ability), a bar joining each maximal run of
algorithms with no "better" claim between any two of them, and the algorithms the reader
names in ``highlight`` in their own colour. The drawing,
:func:`critical_difference_chart`, is also the baselines' (Nemenyi, Bonferroni-Dunn and
Wilcoxon-Holm), so the diagrams look alike and can be set side by side.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..core.bidi import isolate
from ..core.options import DEFAULT_HDI, DEFAULT_ROPE, RuleChoice, resolve_interpretation
from ..core.palette import HIGHLIGHT_COLORS, NEUTRAL_COLORS
from ..core.validation import check_algorithms, check_count
from .encodings import LABEL_MAX_CHARS, PAIR_PARAM, alt, highlight_params, inline_rows
from .frames import check_fit
from .frames_decisions import cd_groups

if TYPE_CHECKING:
    from ..core.result import BBTResult

__all__ = ["CD_POSITIONS", "critical_difference_chart", "diagram_frames", "fit_cd_diagram"]

#: Where :func:`fit_cd_diagram` places each algorithm: its posterior expected rank (1 = best) or
#: its posterior mean ability (sum-to-zero).
CD_POSITIONS = ("expected_rank", "ability")
_STEP = 1.0  # vertical distance between label rows, in y units
_ROW_PX = 22  # pixels per y unit
_CONTROL_MARK = "#000000"


def fit_cd_diagram(
    result: BBTResult,
    interpretation: RuleChoice = "strong",
    highlight: str | Iterable[str] | None = None,
    position: str = "expected_rank",
    *,
    rope: Sequence[float] = DEFAULT_ROPE,
    hdi: float = DEFAULT_HDI,
    width: int = 480,
    title: str | None = None,
) -> Any:
    """A critical-difference diagram of a BBT fit.

    Parameters
    ----------
    result
        The fit (:func:`bbt_widget.fit`).
    interpretation
        Whose "better" claims separate the algorithms: ``"strong"`` (paper Sec. 9.3, the
        default), ``"weak"`` (Sec. 9.2) or ``"auto"`` (strong beyond 10 algorithms).
    highlight
        Algorithms to draw in their own colour, with a legend (e.g. the methods a paper
        proposes, apart from the baselines).
    position
        ``"expected_rank"`` (posterior mean rank, 1 = best: the axis of Demšar's diagram) or
        ``"ability"`` (posterior mean ability, sum-to-zero; the best on the left).
    rope, hdi
        As for :meth:`~bbt_widget.BBTResult.summary`: the decisions depend on both.
    width
        Width of the axis in pixels (labels are drawn beside it).
    title
        Chart title; by default the rule and what the bars mean.

    Returns
    -------
    altair.LayerChart
        A self-contained chart (data inline), exported like every chart
        (:func:`bbt_widget.export.save_chart`: SVG, PNG, PDF).

    Raises
    ------
    ValueError
        An unknown ``interpretation`` or ``position``, or a ``highlight`` that is not an
        algorithm of the fit.
    """
    check_fit(
        result,
        "fit_cd_diagram",
        "for the critical-difference diagram of the scores themselves (Friedman and "
        "Nemenyi), bbt.baselines.scores_cd_diagram(data, dataset=...)",
    )
    width = check_count(width, "width")
    rule = resolve_interpretation(interpretation, len(result.algorithms)).rule
    if position not in CD_POSITIONS:
        raise ValueError(
            f"position must be one of {', '.join(map(repr, CD_POSITIONS))}, got {position!r}"
        )
    ranking = result.ranking(hdi=hdi).set_index("algorithm")
    ability = position == "ability"
    column = "mean_beta" if ability else "expected_rank"
    positions = ranking[column].sort_values(ascending=not ability, kind="stable")
    order = [str(a) for a in positions.index]
    groups = cd_groups(result.summary(rope=rope, hdi=hdi), order, rule)
    if title is None:
        title = alt.TitleParams(
            f"BBT critical-difference diagram ({rule} interpretation)",
            subtitle=f"bars join algorithms with no {rule} 'better' claim between any two",
            anchor="start",
        )
    axis = "mean ability (sum-to-zero)" if ability else "expected rank (1 = best)"
    return critical_difference_chart(
        positions,
        groups,
        outline_pair=True,
        axis_title=axis,
        higher_is_better=ability,
        highlight=highlight,
        width=width,
        title=title,
        max_chars=LABEL_MAX_CHARS,
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
    outline_pair: bool = False,
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
    outline_pair
        Ring the two algorithms of the highlighted pair (the Vega parameter ``sel_pair``, a
        pair key, which the chart then defines): the widget's linked views.
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
    # each frame converted once, for all the layers that draw it
    segment_rows, label_rows, point_rows = map(inline_rows, (segments, labels, points))
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
    base = alt.Chart(segment_rows).encode(x=x, x2=alt.X2("x2:Q"), y=y, y2=alt.Y2("y2:Q"))
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
    tooltip = [
        alt.Tooltip("algorithm:N"),
        alt.Tooltip("position:Q", title=axis_title, format=".3f"),
    ]
    layers.append(
        alt.Chart(point_rows)
        .mark_point(filled=True, size=50)
        .encode(x=x, y=y, color=color, tooltip=tooltip)
    )
    if outline_pair:
        layers.append(_pair_ring(points, x, y))
    if control is not None:
        layers.append(
            alt.Chart(point_rows)
            .transform_filter(alt.datum.algorithm == control)
            .mark_point(shape="diamond", size=160, filled=False, color=_CONTROL_MARK)
            .encode(x=x, y=y)
        )
    for side, align in (("left", "right"), ("right", "left")):
        layers.append(
            alt.Chart(label_rows)
            .transform_filter(alt.datum.side == side)
            .mark_text(align=align, baseline="middle", dx=-4 if align == "right" else 4)
            .encode(x=x, y=y, text=alt.Text("text:N"), color=color)
        )
    layers.append(
        alt.Chart(label_rows)
        .transform_filter(alt.datum.side == "cd")
        .mark_text(align="left", baseline="middle", dx=4, color=NEUTRAL_COLORS["text"])
        .encode(x=x, y=y, text=alt.Text("text:N"))
    )
    chart = alt.layer(
        *layers,
        width=width,
        height=int(depth * _ROW_PX),
        title=title,
        view=alt.ViewBackground(stroke=None),  # no frame: the axis on top is the only scale
    )
    if outline_pair:
        chart.params = highlight_params()
    return chart


def _pair_ring(points: pd.DataFrame, x: Any, y: Any) -> Any:
    """A ring around each algorithm of the highlighted pair. Its key is the JSON array of
    the two sorted names (:func:`~.pairs.pair_key`); a name is one of them exactly when the
    key starts with ``[`` and the name's JSON and ``, ``, or ends with ``, ``, the name's
    JSON and ``]``: a JSON string ends at its first unescaped quote, so neither can match
    inside the other name."""
    frame = points[["x", "y", "algorithm"]].copy()
    names = [json.dumps(str(a), ensure_ascii=False) for a in frame["algorithm"]]
    frame["pair_first"] = [f"[{n}, " for n in names]
    frame["pair_last"] = [f", {n}]" for n in names]
    chosen = (
        f"{PAIR_PARAM} != '' && (indexof({PAIR_PARAM}, datum.pair_first) == 0 || "
        f"slice({PAIR_PARAM}, -length(datum.pair_last)) == datum.pair_last)"
    )
    return (
        alt.Chart(inline_rows(frame))
        .transform_filter(chosen)
        .mark_point(shape="circle", size=260, filled=False, strokeWidth=2.5, color="#000000")
        .encode(x=x, y=y)
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
    positions: Any,
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
    cross. A ``NemenyiResult`` (``bbt_widget.baselines.nemenyi``) gives its mean ranks, groups,
    CD and control.
    """
    if hasattr(positions, "mean_ranks"):  # a NemenyiResult (its own layer is above this one)
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
