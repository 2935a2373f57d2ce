"""Headline views of a fit, for 5 or 50 algorithms: the ranking, the pair x pair decision
matrix under both interpretations with the counts of claims, and the pairs the posterior
predictive check fits worst.

Two layers, both pure, as in :mod:`bbt_widget.charts`:

* frame helpers (``decision_frame``, ``claim_counts``, ``ppc_fit_frame``,
  ``worst_ppc_frame``) reshape what :class:`bbt_widget.core.result.BBTResult` returns into tidy
  frames; every statistic comes from the core (``posterior``), these only centre, count and
  order;
* chart builders (``ranking_chart``, ``decision_matrix_chart``) turn the frames into static
  Altair charts (no selection, no hints to click: they are made for reports).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from . import charts
from .charts import DECISION_COLORS
from .core.options import INTERPRETATIONS

__all__ = [
    "DECISIONS",
    "LONG_CHART_ROWS",
    "at_rest",
    "claim_counts",
    "decision_frame",
    "decision_matrix_chart",
    "ppc_fit_frame",
    "ranking_chart",
    "static_ppc_chart",
    "with_top_axis",
    "worst_pairs_label",
    "worst_ppc_frame",
]

#: The decision of a matrix cell (row vs column), in legend order, with its colour.
DECISIONS: dict[str, str] = {
    "row better": DECISION_COLORS["better"],
    "column better": "#d6604d",
    "equivalent": DECISION_COLORS["equivalent"],
    "no claim": "#d9d9d9",
    "not compared": "#ffffff",
}
#: Charts with more rows than this get their x axis at the top as well as at the bottom.
LONG_CHART_ROWS = 25
_ROW_STEP = 16


# --------------------------------------------------------------------------- frame helpers


def _cell(decision: str, flip: bool) -> str:
    if decision == "a better":
        return "column better" if flip else "row better"
    if decision == "b better":
        return "row better" if flip else "column better"
    return decision


def decision_frame(summary: pd.DataFrame, order: Sequence[str]) -> pd.DataFrame:
    """Cells of the decision matrix: both orientations of every pair, both interpretations.

    Parameters
    ----------
    summary
        ``BBTResult.summary()``: alg_a, alg_b, mean and the decision columns ``weak`` and
        ``strong``.
    order
        Algorithms best first; sets the row and column order.

    Returns
    -------
    pandas.DataFrame
        ``interpretation, row, col, decision, p_row_better, row_order, col_order``; the
        decision reads from the row's side (``"row better"``, ``"column better"``,
        ``"equivalent"``, ``"no claim"``, ``"not compared"``).
    """
    rank = {name: i for i, name in enumerate(order)}
    rows = []
    for interpretation in INTERPRETATIONS:
        for rec in summary.itertuples(index=False):
            decision = getattr(rec, interpretation)
            for row, col, p, flip in (
                (rec.alg_a, rec.alg_b, rec.mean, False),
                (rec.alg_b, rec.alg_a, 1.0 - rec.mean, True),
            ):
                rows.append((interpretation, str(row), str(col), _cell(decision, flip), float(p)))
    frame = pd.DataFrame(rows, columns=["interpretation", "row", "col", "decision", "p_row_better"])
    frame["row_order"] = frame["row"].map(rank).fillna(len(rank)).astype(int)
    frame["col_order"] = frame["col"].map(rank).fillna(len(rank)).astype(int)
    return frame


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


def ppc_fit_frame(ppc_histogram: pd.DataFrame) -> pd.DataFrame:
    """How well each fitted pair's observed count sits in its replicated counts.

    Parameters
    ----------
    ppc_histogram
        ``BBTResult.ppc_histogram()`` (alg1, alg2, quantity, value, count, observed), or
        :func:`bbt_widget.charts.ppc_frame` of it.

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
            "p_tail": charts.predictive_p(value, h["observed"].to_numpy(float), count, groups),
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
    """The rows of :func:`bbt_widget.charts.ppc_frame` for the ``n_pairs`` worst-fitting
    pairs, numbered worst first (``pair_order``, ``panel_order``), so that
    ``charts.ppc_chart(frame, max_pairs=n_pairs)`` draws exactly them, worst first.

    Parameters
    ----------
    ppc
        ``charts.ppc_frame(result.ppc_histogram(), order)``.
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


# --------------------------------------------------------------------------- chart builders


def at_rest(chart: Any) -> Any:
    """A chart of :mod:`bbt_widget.charts` made static: its highlight and focus parameters
    defined with nothing selected (its expressions read them), for export."""
    chart.params = [
        alt.VariableParameter(name=charts.PAIR_PARAM, value=""),
        alt.VariableParameter(name=charts.FOCUS_PARAM, value=""),
    ]
    return chart


def with_top_axis(
    chart: Any, *, domain: Sequence[float], title: str | None = None, fmt: str | None = None
) -> Any:
    """``chart`` with a second x axis at the top (same scale), for charts too long to read
    against their bottom axis alone.

    Parameters
    ----------
    chart
        A single-view or layered Altair chart with a quantitative x scale on ``domain``.
    domain
        The x scale's domain (the top axis is drawn on the same one).
    title
        Title of the top axis (``None``: none).
    fmt
        d3 format of its labels (e.g. ``"%"``), as on the bottom axis.
    """
    anchor = (
        alt.Chart(pd.DataFrame({"x": [float(domain[0])]}))
        .mark_point(opacity=0)
        .encode(
            x=alt.X(
                "x:Q",
                scale=alt.Scale(domain=list(domain)),
                axis=alt.Axis(orient="top", title=title, format=fmt or alt.Undefined),
            )
        )
    )
    return alt.layer(chart, anchor).resolve_axis(x="independent")


def _algorithm_axis(n: int, *, labels: bool = True) -> alt.Y:
    return alt.Y(
        "algorithm:N",
        sort=alt.EncodingSortField("order", op="min"),
        title=None,
        axis=alt.Axis(labels=labels, ticks=labels, domain=labels),
    )


def _long(panel: Any, n: int, domain: Sequence[float]) -> Any:
    return with_top_axis(panel, domain=domain) if n > LONG_CHART_ROWS else panel


def ranking_chart(ranking: pd.DataFrame, *, hdi: float, width: int = 220) -> alt.HConcatChart:
    """Ranking, best at the top: mean ability (sum-to-zero) with its HDI, P(best) and the
    expected rank, side by side on one algorithm axis.

    Parameters
    ----------
    ranking
        ``BBTResult.ranking()``: abilities centred per draw (sum-to-zero, paper Sec. 4),
        best first.
    hdi
        HDI mass (for the title).
    width
        Width of the ability panel; the two others are narrower.
    """
    frame = ranking.reset_index(drop=True).copy()
    frame["order"] = np.arange(len(frame))
    n = len(frame)
    height = alt.Step(_ROW_STEP)
    lo = float(min(frame["low"].min(), 0.0))
    hi = float(max(frame["high"].max(), 0.0))
    pad = 0.05 * (hi - lo or 1.0)
    ability_domain = [lo - pad, hi + pad]
    base = alt.Chart(frame)
    ability_x = alt.X(
        "low:Q",
        scale=alt.Scale(domain=ability_domain, nice=False),
        title=f"ability − mean ability, {hdi:.0%} HDI",
    )
    ability = alt.layer(
        alt.Chart().mark_rule(color="#636363", strokeDash=[3, 3]).encode(x=alt.datum(0)),
        base.mark_rule(strokeWidth=3, color="#4393c3").encode(
            x=ability_x, x2="high:Q", y=_algorithm_axis(n)
        ),
        base.mark_point(filled=True, size=50, color="#08306b").encode(
            x="mean_beta:Q", y=_algorithm_axis(n)
        ),
    ).properties(width=width, height=height)
    best = base.mark_bar(color="#1b7837").encode(
        x=alt.X("p_best:Q", scale=alt.Scale(domain=[0, 1]), title="P(best)"),
        y=_algorithm_axis(n, labels=False),
    )
    best = best.properties(width=110, height=height)
    rank = base.mark_point(filled=True, size=50, color="#5e3c99").encode(
        x=alt.X(
            "expected_rank:Q",
            scale=alt.Scale(domain=[1, max(n, 2)], nice=False),
            title="expected rank (1 = best)",
            axis=alt.Axis(tickMinStep=1, format="d"),
        ),
        y=_algorithm_axis(n, labels=False),
    )
    rank = rank.properties(width=130, height=height)
    return alt.hconcat(
        _long(ability, n, ability_domain),
        _long(best, n, [0, 1]),
        _long(rank, n, [1, max(n, 2)]),
        spacing=8,
    ).properties(
        title=alt.TitleParams(
            "Ranking: ability (sum-to-zero), P(best), expected rank",
            subtitle=f"dot: posterior mean; bar: {hdi:.0%} HDI; dashed: the average algorithm",
            anchor="start",
        )
    )


def _interpretation_label(counts: pd.DataFrame) -> dict[str, str]:
    return {
        r.interpretation: (
            f"{r.interpretation} ({'Sec. 9.2' if r.interpretation == 'weak' else 'Sec. 9.3'}): "
            f"{r.better} better, {r.equivalent} equivalent"
        )
        for r in counts.itertuples(index=False)
    }


def decision_matrix_chart(
    decisions: pd.DataFrame, counts: pd.DataFrame, *, size: int = 300
) -> alt.FacetChart:
    """Pair x pair decisions, weak and strong side by side: cell (row, column) says whether
    the row algorithm is claimed better, worse, equivalent or neither.

    Parameters
    ----------
    decisions
        :func:`decision_frame`.
    counts
        :func:`claim_counts` of the same summary (for the panel headers).
    size
        Target side of each matrix in pixels; cells are 5 to 18 px.
    """
    n = int(max(decisions["row_order"].max(), decisions["col_order"].max()) + 1)
    cell = int(min(18, max(5, size // max(n, 1))))
    frame = decisions.copy()
    frame["panel"] = frame["interpretation"].map(_interpretation_label(counts))
    font = 11 if cell >= 10 else 8
    matrix = (
        alt.Chart()
        .mark_rect(stroke="#bdbdbd", strokeWidth=0.5)
        .encode(
            x=alt.X(
                "col:N",
                sort=alt.EncodingSortField("col_order", op="min"),
                title="column",
                axis=alt.Axis(orient="top", labelAngle=-90, labelFontSize=font),
            ),
            y=alt.Y(
                "row:N",
                sort=alt.EncodingSortField("row_order", op="min"),
                title="row",
                axis=alt.Axis(labelFontSize=font),
            ),
            color=alt.Color(
                "decision:N",
                scale=alt.Scale(domain=list(DECISIONS), range=list(DECISIONS.values())),
                legend=alt.Legend(title="decision (row vs column)", orient="bottom"),
            ),
        )
        .properties(width=alt.Step(cell), height=alt.Step(cell))
    )
    order = [
        _interpretation_label(counts)[i]
        for i in INTERPRETATIONS
        if i in set(frame["interpretation"])
    ]
    return (
        matrix.facet(
            column=alt.Column(
                "panel:N", sort=order, title=None, header=alt.Header(labelFontSize=12)
            ),
            data=frame,
        )
        .resolve_axis(y="shared")
        .properties(
            title=alt.TitleParams(
                "Decisions per pair, weak and strong interpretation",
                subtitle="rows and columns best first; read a cell as 'row vs column'",
                anchor="start",
            )
        )
    )


def worst_pairs_label(n_shown: int, n_pairs: int) -> str:
    """How a report names the pairs its PPC shows: "the 12 worst-fitting pairs", or "all 10
    pairs, worst fit first" when it shows them all."""
    if n_shown < n_pairs:
        return f"the {n_shown} worst-fitting pairs"
    return f"all {n_pairs} pair{'s' if n_pairs != 1 else ''}, worst fit first"


def static_ppc_chart(worst: pd.DataFrame, label: str) -> Any:
    """The PPC panels of :func:`worst_ppc_frame`'s pairs, worst first, for a report: the
    widget's :func:`bbt_widget.charts.ppc_chart` with a title for static output (nothing to
    click or choose) and its highlight parameters defined at rest.

    Parameters
    ----------
    worst
        :func:`worst_ppc_frame`.
    label
        Which pairs these are (:func:`worst_pairs_label`), for the title.
    """
    n_pairs = int(worst["pair_order"].max()) + 1 if len(worst) else 0
    return at_rest(charts.ppc_chart(worst, max_pairs=n_pairs)).properties(
        title=alt.TitleParams(
            f"Posterior predictive check: {label}",
            subtitle=(
                "bars: draws per replicated count (own scale per panel, count range below); "
                "red: observed count"
            ),
            anchor="start",
        )
    )
