"""The probability simplex of a Bayesian pairwise test (Benavoli et al. 2017, Figs. 8-13).

A test with a ROPE has, per posterior draw, three probabilities that sum to 1:
``(theta_left, theta_rope, theta_right)`` (a practically better, practically equivalent, b
practically better). Each draw is a point of the triangle with these three as barycentric
coordinates: the vertex "a better" at the bottom left, "b better" at the bottom right (the
orientation of the paper's figures and of baycomp's ``plot_simplex``) and "rope" at the top.
The triangle splits into three regions, where one of the three is the largest; ``p_left``,
``p_rope`` and ``p_right`` are the shares of draws in each region.

The frames (:func:`barycentric`, :func:`simplex_points`, :func:`region_frame`) are pure numpy
and pandas; :func:`simplex_chart` draws them with Altair, imported on first use. They live
beside the tests, on the shared palette: :class:`SimplexTestResult`, the result base of the
sign and signed-rank tests, draws a pair's draws with its ``simplex()``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..core.draws import round_seed
from ..core.options import SETTLE_BUDGET
from ..core.palette import SWEEP_DECISION_COLORS
from ..core.precision import DEFAULT_Z
from ._common import TableSummary, find_pair

#: Benavoli et al.: a test decides when one region's posterior probability reaches 0.95.
DECISION_THRESHOLD = 0.95
#: Most draws a chart shows (evenly thinned beyond): enough to see the shape, a small spec.
MAX_POINTS = 3000
#: Decimals of the plotted coordinates and thetas: 1e-4 of the triangle's side is far below
#: a pixel, and the spec (sent to the browser, inlined in reports) is half the size.
POINT_DECIMALS = 4
#: Names longer than this many characters (code points) end in an ellipsis on the chart.
NAME_MAX_CHARS = 40
REGIONS = ("left", "rope", "right")
#: Region -> the decision it stands for, whose colour it gets.
_REGION_DECISIONS = {"left": "a better", "rope": "equivalent", "right": "b better"}
_H = np.sqrt(3) / 2  # height of the unit triangle
#: Vertices in barycentric order: left (a better), rope, right (b better).
VERTICES = np.array([[0.0, 0.0], [0.5, _H], [1.0, 0.0]])
#: Distance between a vertex and its label lines, in units of the triangle's side.
_LABEL_GAP = 0.065


def barycentric(theta: np.ndarray) -> np.ndarray:
    """Plane coordinates ``(x, y)`` of points with barycentric coordinates ``theta``.

    ``theta`` has shape (n, 3), columns (left, rope, right), rows summing to 1; the result
    has shape (n, 2): left -> (0, 0), rope -> (1/2, sqrt(3)/2), right -> (1, 0).
    """
    theta = np.asarray(theta, dtype=float)
    if theta.ndim != 2 or theta.shape[1] != 3:
        raise ValueError(f"theta must have shape (n, 3), got {theta.shape}")
    return np.asarray(theta @ VERTICES)


def winning_region(theta: np.ndarray) -> np.ndarray:
    """Per row, the region whose probability is the largest (the first of equal ones)."""
    return np.asarray(np.asarray(REGIONS)[np.argmax(np.asarray(theta, dtype=float), axis=1)])


def region_decisions(
    p_left: Any,
    p_rope: Any,
    p_right: Any,
    mcse: Sequence[Any] | None = None,
    z: float = DEFAULT_Z,
) -> np.ndarray:
    """Per pair, the decision of a test with a ROPE from its three region probabilities.

    ``"equivalent"``, ``"a better"`` or ``"b better"`` when that region's probability reaches
    :data:`DECISION_THRESHOLD`, else ``"no claim"`` (also for NaN probabilities). With
    ``mcse`` (the Monte Carlo standard errors of the three, in that order) a region must
    reach it by ``z`` of them: a claim that another seed could flip is not made.
    """
    probs = [np.asarray(p, dtype=float) for p in (p_left, p_rope, p_right)]
    if mcse is not None:
        probs = [p - z * np.nan_to_num(np.asarray(e, dtype=float)) for p, e in zip(probs, mcse)]
    p_left, p_rope, p_right = probs
    return np.select(
        [p_rope >= DECISION_THRESHOLD, p_left >= DECISION_THRESHOLD, p_right >= DECISION_THRESHOLD],
        ["equivalent", "a better", "b better"],
        default="no claim",
    )


def iid_mcse(p: Any, n: int | np.ndarray) -> np.ndarray:
    """The Monte Carlo standard error of a probability estimated as the share ``p`` of ``n``
    independent draws: ``sqrt(p (1 - p) / n)``, at least one draw's share ``1 / n`` (a share
    of 0 or 1 cannot tell a probability below ``1 / n`` from 0)."""
    p = np.asarray(p, dtype=float)
    return np.asarray(np.maximum(np.sqrt(p * (1 - p) / n), 1.0 / n))


def settled_shares(
    table: pd.DataFrame,
    n_samples: int,
    seed: int,
    draws: str,
    shares_of: Callable[[list[int], int, int], pd.DataFrame],
) -> pd.DataFrame:
    """``table`` (``p_left, p_rope, p_right`` per row, each a share of ``n_samples``
    independent draws) with their Monte Carlo standard errors and the decisions they allow
    (:func:`with_region_mcse`).

    With ``draws="auto"`` the rows where a region's share lies within ``DEFAULT_Z`` of its
    errors of :data:`DECISION_THRESHOLD` (a claim the seed could flip) are drawn again first:
    ``shares_of(rows, n, seed)`` gives their shares in ``n`` more draws, ``(SETTLE_BUDGET -
    1) x n_samples`` of them seeded from ``seed``'s next round, pooled with the first; the
    whole budget in one round, as a BBT fit's ``draws="auto"`` (the precision a claim is
    judged at does not depend on the seed). ``draws="fixed"``: the first draws only.
    """
    n = np.full(len(table), float(n_samples))
    errors = [iid_mcse(table[f"p_{region}"], n) for region in REGIONS]
    if draws == "auto":
        near = np.zeros(len(table), dtype=bool)
        for region, error in zip(REGIONS, errors):
            near |= np.abs(table[f"p_{region}"].to_numpy(float) - DECISION_THRESHOLD) < (
                DEFAULT_Z * error
            )
        rows = np.flatnonzero(near).tolist()
        if rows:
            extra = (SETTLE_BUDGET - 1) * n_samples
            more = shares_of(rows, extra, round_seed(seed, 1))
            table = table.copy()
            for region in REGIONS:
                column = f"p_{region}"
                first = table[column].to_numpy(float)[rows]
                pooled = (first * n_samples + more[column].to_numpy(float) * extra) / (
                    n_samples + extra
                )
                table.loc[table.index[rows], column] = pooled
            n[rows] += extra
            errors = [iid_mcse(table[f"p_{region}"], n) for region in REGIONS]
    return with_region_mcse(table, errors)


def unsettled_regions(
    p_left: Any, p_rope: Any, p_right: Any, mcse: Sequence[Any], z: float = DEFAULT_Z
) -> np.ndarray:
    """Per pair, whether another seed could change its decision: some region's probability
    lies within ``z`` Monte Carlo standard errors of :data:`DECISION_THRESHOLD`."""
    near = [
        np.abs(np.asarray(p, dtype=float) - DECISION_THRESHOLD)
        < z * np.nan_to_num(np.asarray(e, dtype=float))
        for p, e in zip((p_left, p_rope, p_right), mcse)
    ]
    return np.asarray(np.logical_or.reduce(near), dtype=bool)


def with_region_mcse(table: pd.DataFrame, mcse: Sequence[Any]) -> pd.DataFrame:
    """``table`` (with ``p_left, p_rope, p_right``) with their Monte Carlo standard errors
    ``mcse_left, mcse_rope, mcse_right``, the ``decision`` they allow and ``unsettled``: the
    pairs whose decision another seed could change ("no claim" at this precision)."""
    for region, error in zip(REGIONS, mcse):
        table[f"mcse_{region}"] = np.asarray(error, dtype=float)
    table["decision"] = region_decisions(
        table["p_left"], table["p_rope"], table["p_right"], mcse=mcse
    )
    table["unsettled"] = unsettled_regions(table["p_left"], table["p_rope"], table["p_right"], mcse)
    return table


@dataclass(frozen=True)
class SimplexTestResult(TableSummary):
    """What the Bayesian sign and signed-rank tests' results share: the per-pair ``table``
    of region probabilities, the settings behind it, and the chart of a pair's draws.

    Attributes
    ----------
    table
        One row per pair: ``pair``, ``alg_a``, ``alg_b``, ``n`` (data sets where both have
        a result), ``p_left``, ``p_rope``, ``p_right``, ``decision`` and their Monte Carlo
        errors (see each test's result).
    rope
        Half-width ``r`` of the ROPE ``[-r, r]`` on the scores' scale.
    prior_strength
        The Dirichlet process prior's strength ``s``.
    n_samples
        Monte Carlo draws per pair.
    seed
        The seed used (drawn when none was given), so the table can be reproduced.
    medians
        Median of the per-data-set means per algorithm, best first.
    """

    table: pd.DataFrame
    rope: float
    prior_strength: float
    n_samples: int
    seed: int
    medians: pd.Series

    #: The test's name in the chart's title.
    test_name: ClassVar[str] = "Bayesian test"

    def posterior(self, a: str | None = None, b: str | None = None) -> pd.DataFrame:
        """The draws of ``theta_left`` (a better), ``theta_rope``, ``theta_right`` of a
        pair: those behind ``p_*`` in the table (each test computes them)."""
        raise NotImplementedError

    def simplex(
        self, a: str | None = None, b: str | None = None, *, max_points: int = MAX_POINTS
    ) -> Any:
        """The posterior draws of a pair in the probability simplex (Benavoli et al. 2017,
        Fig. 8 for the sign test, Fig. 9 for the signed-rank test): vertices "a better",
        "rope", "b better", the regions where each is the most probable shaded, at most
        ``max_points`` draws shown (evenly thinned).

        ``a`` and ``b`` name the pair in either order (left is then ``a``); they may be left
        out when the result holds one pair.

        Raises
        ------
        ValueError
            The pair has no data set in common: there is no posterior to draw.
        """
        row, swapped = find_pair(self.table, a, b)
        if row["n"] == 0:
            raise ValueError(
                f"{row['alg_a']!r} and {row['alg_b']!r} have no data set in common: "
                "there is no posterior to draw"
            )
        theta = self.posterior(a, b).to_numpy()
        probs = row[["p_left", "p_rope", "p_right"]].to_numpy(dtype=float)
        first, second = row["alg_a"], row["alg_b"]
        if swapped:
            probs, first, second = probs[::-1], second, first
        title = (
            f"{self.test_name}, {row['n']} data sets, ROPE +-{self.rope:g}: {self.n_samples} draws"
        )
        return simplex_chart(
            theta, first, second, prob_notes(probs), title=title, max_points=max_points
        )


def thinning_step(n: int, max_points: int = MAX_POINTS) -> int:
    """Keep every ``step``-th of ``n`` draws so that at most ``max_points`` remain."""
    return max(1, -(-n // max_points))


def simplex_points(
    theta: np.ndarray, max_points: int = MAX_POINTS, labels: Sequence[str] | None = None
) -> pd.DataFrame:
    """The draws to plot: ``x, y``, the three thetas (rounded to ``POINT_DECIMALS``) and
    ``region`` (where the draw falls, from the unrounded thetas), evenly thinned to at most
    ``max_points`` rows; ``labels`` (one per draw, e.g. data set names) become a ``label``
    column."""
    theta = np.asarray(theta, dtype=float)
    step = thinning_step(len(theta), max_points)
    kept = theta[::step]
    xy = barycentric(kept).round(POINT_DECIMALS)
    shown = kept.round(POINT_DECIMALS)
    frame = pd.DataFrame(
        {
            "x": xy[:, 0],
            "y": xy[:, 1],
            "theta_left": shown[:, 0],
            "theta_rope": shown[:, 1],
            "theta_right": shown[:, 2],
            "region": winning_region(kept),
        }
    )
    if labels is not None:
        frame.insert(0, "label", [str(v) for v in list(labels)[::step]])
    return frame


def region_frame() -> pd.DataFrame:
    """The three regions as areas over x (``x, y`` the upper edge, ``y2`` the lower).

    A region is where its probability is the largest: the quadrilateral between its vertex,
    the midpoints of the two sides at that vertex and the centre of the triangle.
    """
    c = _H / 3  # the centre (1/2, sqrt(3)/6): all three equal
    m = _H / 2  # midpoints of the slanted sides, at x = 1/4 and 3/4
    rows = [
        ("left", [0.0, 0.25, 0.5], [0.0, m, c], [0.0, 0.0, 0.0]),
        ("rope", [0.25, 0.5, 0.75], [m, _H, m], [m, c, m]),
        ("right", [0.5, 0.75, 1.0], [c, m, 0.0], [0.0, 0.0, 0.0]),
    ]
    return pd.DataFrame(
        [
            {"region": r, "x": x, "y": y, "y2": y2}
            for r, xs, ys, y2s in rows
            for x, y, y2 in zip(xs, ys, y2s)
        ]
    )


def short_name(name: object, max_chars: int = NAME_MAX_CHARS) -> str:
    """A name cut to ``max_chars`` code points (never inside a character) with an ellipsis."""
    text = str(name)
    return text if len(text) <= max_chars else text[:max_chars] + "…"


def prob_notes(probs: Sequence[float]) -> list[str]:
    """The vertex notes of a test: each region's posterior probability."""
    return [f"P = {p:.3f}" if np.isfinite(p) else "P = n/a" for p in probs]


def vertex_frame(a: str, b: str, notes: Sequence[str]) -> pd.DataFrame:
    """The vertex labels: ``region``, ``name`` ("<a> better", "rope", "<b> better") and
    ``note`` (e.g. the region's posterior probability) with their positions ``x``,
    ``name_y`` and ``note_y``: below the bottom vertices, above the top one."""
    names = [f"{short_name(a)} better", "rope", f"{short_name(b)} better"]
    return pd.DataFrame(
        {
            "x": VERTICES[:, 0],
            "region": list(REGIONS),
            "name": names,
            "note": [str(n) for n in notes],
            "name_y": [-_LABEL_GAP, _H + 2 * _LABEL_GAP, -_LABEL_GAP],
            "note_y": [-2 * _LABEL_GAP, _H + _LABEL_GAP, -2 * _LABEL_GAP],
        }
    )


def simplex_chart(
    theta: np.ndarray,
    a: str,
    b: str,
    notes: Sequence[str],
    *,
    title: str,
    max_points: int = MAX_POINTS,
    labels: Sequence[str] | None = None,
    size: int = 320,
) -> Any:
    """An Altair chart of posterior draws in the probability simplex.

    Parameters
    ----------
    theta
        Draws of ``(theta_left, theta_rope, theta_right)``, shape (n, 3).
    a, b
        The pair: *left* means ``a`` is practically better.
    notes
        A line of text under each vertex name, in the order left, rope, right: e.g.
        :func:`prob_notes` of ``(p_left, p_rope, p_right)`` (computed from every draw, not
        only the ones shown).
    title
        The chart's title (plain text).
    max_points
        Most draws drawn (evenly thinned beyond).
    labels
        Optional tooltip label per draw (e.g. a data set name).
    size
        Width of the chart in pixels.

    Returns
    -------
    altair.LayerChart
        Shaded regions, the triangle's outline, the draws coloured by region and the vertex
        labels, with plain x/y scales hidden (the triangle is drawn to scale).
    """
    import altair as alt

    colors = [SWEEP_DECISION_COLORS[_REGION_DECISIONS[r]] for r in REGIONS]
    color = alt.Color("region:N", scale=alt.Scale(domain=list(REGIONS), range=colors), legend=None)
    pad_x, pad_low, pad_high = 0.22, 2.6 * _LABEL_GAP, 2.6 * _LABEL_GAP
    x = alt.X("x:Q", axis=None, scale=alt.Scale(domain=[-pad_x, 1 + pad_x], nice=False))
    y_scale = alt.Scale(domain=[-pad_low, _H + pad_high], nice=False)
    y = alt.Y("y:Q", axis=None, scale=y_scale)
    height = round(size * (_H + pad_low + pad_high) / (1 + 2 * pad_x))
    regions = (
        alt.Chart(region_frame())
        .mark_area(opacity=0.12, interpolate="linear")
        .encode(x=x, y=y, y2="y2:Q", color=color, detail="region:N")
    )
    outline_xy = np.vstack([VERTICES, VERTICES[:1]])
    outline = (
        alt.Chart(pd.DataFrame({"x": outline_xy[:, 0], "y": outline_xy[:, 1], "k": range(4)}))
        .mark_line(color="#555555", strokeWidth=1)
        .encode(x=x, y=y, order="k:Q")
    )
    centre = np.array([0.5, _H / 3])
    spokes = pd.DataFrame(
        [
            {"spoke": i, "k": k, "x": p[0], "y": p[1]}
            for i, mid in enumerate((VERTICES[[0, 1]], VERTICES[[1, 2]], VERTICES[[0, 2]]))
            for k, p in enumerate((mid.mean(axis=0), centre))
        ]
    )
    borders = (
        alt.Chart(spokes)
        .mark_line(color="#555555", strokeWidth=0.8, strokeDash=[3, 3])
        .encode(x=x, y=y, detail="spoke:N", order="k:Q")
    )
    points_frame = simplex_points(theta, max_points, labels)
    tooltip = ["theta_left:Q", "theta_rope:Q", "theta_right:Q"]
    if labels is not None:
        tooltip = ["label:N", *tooltip]
    points = (
        alt.Chart(points_frame)
        .mark_circle(size=9 if labels is None else 40, opacity=0.35 if labels is None else 0.8)
        .encode(x=x, y=y, color=color, tooltip=tooltip)
    )
    vertex = alt.Chart(vertex_frame(a, b, notes)).encode(x=x, color=color)
    name_text = vertex.mark_text(fontSize=12, fontWeight="bold").encode(
        y=alt.Y("name_y:Q", axis=None, scale=y_scale), text="name:N"
    )
    note_text = vertex.mark_text(fontSize=11).encode(
        y=alt.Y("note_y:Q", axis=None, scale=y_scale), text="note:N"
    )
    return alt.layer(regions, outline, borders, points, name_text, note_text).properties(
        title=title, width=size, height=height, view={"stroke": None}
    )
