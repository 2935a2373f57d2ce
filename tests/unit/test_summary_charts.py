"""Headline frames of the report (issue 8): the decision matrix, the counts of claims and the
PPC's worst-fitting pairs, on hand-made inputs; the headline charts at 5 and 50 algorithms."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from bbt_widget import charts
from bbt_widget.charts.frames_ppc import ppc_fit_frame, ppc_frame, worst_ppc_frame
from bbt_widget.core import posterior
from bbt_widget.outputs.report._meta import column_definitions


def _summary() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "alg_a": ["a", "a", "b"],
            "alg_b": ["b", "c", "c"],
            "mean": [0.6, 0.8, 0.5],
            "weak": ["a better", "a better", "equivalent"],
            "strong": ["no claim", "a better", "b better"],
        }
    )


def test_decision_frame_reads_each_cell_from_the_rows_side():
    frame = charts.decision_frame(_summary(), ["a", "b", "c"])
    cell = frame.set_index(["interpretation", "row", "col"])["decision"]
    assert cell["weak", "a", "b"] == "row better" and cell["weak", "b", "a"] == "column better"
    assert cell["weak", "b", "c"] == cell["weak", "c", "b"] == "equivalent"
    assert cell["strong", "b", "c"] == "column better" and cell["strong", "c", "b"] == "row better"
    assert len(frame) == 2 * 2 * 3  # both orientations, both interpretations
    p = frame.set_index(["interpretation", "row", "col"])["p_row_better"]
    assert p["weak", "b", "a"] == pytest.approx(0.4)


def test_claim_counts_per_interpretation():
    counts = charts.claim_counts(_summary()).set_index("interpretation")
    assert counts.loc["weak", ["better", "equivalent", "no claim"]].tolist() == [2, 1, 0]
    assert counts.loc["strong", ["better", "equivalent", "no claim"]].tolist() == [2, 0, 1]
    assert (counts["pairs"] == 3).all()


def _histogram() -> pd.DataFrame:
    # pair (x, y): observed 9, replicates 1..5 -> far out; pair (x, z): observed 3 in 1..5
    rows = [("x", "y", "win1", v, 10, 9) for v in range(1, 6)]
    rows += [("x", "z", "win1", v, 10, 3) for v in range(1, 6)]
    return pd.DataFrame(rows, columns=["alg1", "alg2", "quantity", "value", "count", "observed"])


def test_ppc_fit_frame_puts_the_worst_pair_first():
    fit = ppc_fit_frame(_histogram())
    assert fit[["alg1", "alg2"]].values.tolist() == [["x", "y"], ["x", "z"]]
    # x-y: no replicate reaches 9 -> tail 0; x-z: P(rep <= 3) = P(rep >= 3) = 0.6 -> capped 1
    assert fit["p_tail"].tolist() == [0.0, 1.0]
    assert fit["replicated_mean"].tolist() == [3.0, 3.0]


def test_worst_ppc_frame_keeps_and_numbers_the_worst_pairs():
    hist = _histogram()
    ppc = ppc_frame(hist, ["x", "z", "y"])  # x-z comes first in ranking order
    worst = worst_ppc_frame(ppc, ppc_fit_frame(hist), 1)
    assert set(worst["alg_b"]) == {"y"} and (worst["pair_order"] == 0).all()


def test_every_report_column_has_one_definition():
    columns = ["mean", "low", "mean", "in_rope", "weak", "strong", "p_tail"]
    defs = column_definitions(columns, hdi=0.89, rope=(0.45, 0.55))
    assert [name for name, _ in defs] == ["mean", "low", "in_rope", "weak", "strong", "p_tail"]
    text = dict(defs)
    assert "89% highest-density interval" in text["low"]
    assert "[0.45, 0.55]" in text["in_rope"] and "0.95" in text["weak"]
    assert "0.70" in text["strong"]
    with pytest.raises(KeyError):
        column_definitions(["no such column"], hdi=0.89, rope=(0.45, 0.55))


def _summary_of(beta: np.ndarray, names: list[str]) -> pd.DataFrame:
    """The summary a fit with these draws of beta gives (ROPE 0.45-0.55, 89% HDI)."""
    pairs = posterior.ordered_pairs(posterior.algorithm_order(beta))
    p = posterior.pair_probabilities(beta, pairs)
    p.sort(axis=0)
    return posterior.summarise(
        p,
        [f"{names[i]} > {names[j]}" for i, j in pairs],
        [names[i] for i, _ in pairs],
        [names[j] for _, j in pairs],
        (0.45, 0.55),
        0.89,
    )


@pytest.mark.slow
@pytest.mark.parametrize("n", [5, 50])
def test_headline_charts_fit_a_narrow_page_for_5_or_50_algorithms(n, tmp_path):
    from bbt_widget.outputs import export

    names = [f"algorithm_{k:02d}" for k in range(n)]
    beta = np.random.default_rng(1).normal(np.linspace(1, -1, n), 0.1, size=(1000, n))
    summary = _summary_of(beta, names)
    ranking = posterior.ranking(beta, names, 0.89)
    counts = charts.claim_counts(summary)
    decisions = charts.decision_frame(summary, list(ranking["algorithm"]))
    svgs = export.render_charts(
        [charts.ranking_chart(ranking, hdi=0.89), charts.decision_matrix_chart(decisions, counts)],
        ["svg", "svg"],
    )
    for svg in svgs:
        width = float(re.search(rb'<svg[^>]* width="([\d.]+)"', svg).group(1))
        assert width <= 760, width  # both matrices side by side, whatever n
    # one cell per ordered pair and interpretation
    assert svgs[1].count(b'aria-roledescription="rect mark"') == 2 * n * (n - 1)


def test_the_decision_matrix_of_51_algorithms_is_drawn_whole():
    """51 algorithms: 2 x 51 x 50 = 5100 cells, over Altair's default row limit (5000), which
    stopped the report after its fit with MaxRowsError. The charts are built for their rows:
    every cell is in the spec."""
    n = 51
    names = [f"alg{k}" for k in range(n)]
    beta = np.random.default_rng(2).normal(np.linspace(1, -1, n), 0.1, size=(400, n))
    summary = _summary_of(beta, names)
    decisions = charts.decision_frame(summary, names)
    assert len(decisions) == 5100
    spec = charts.decision_matrix_chart(decisions, charts.claim_counts(summary)).to_dict()
    rows = [r for values in spec["datasets"].values() for r in values]
    assert len(rows) == 5100
