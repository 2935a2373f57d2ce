"""How the charts hand a frame to Altair (``charts.encodings.inline_rows``): as its rows,
converted once to the values Altair's own conversion gives, kept by reference by every
layer and copy of a chart; and handed over as the frame wherever Altair would treat it
otherwise (another data transformer, more rows than its limit, dates or categories). The
rows are ``charts.to_records``, the widget's columns ``charts.to_columns``: one conversion."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys

import altair as alt
import numpy as np
import pandas as pd
import pytest
from altair.utils.data import MaxRowsError, to_values

from bbt_widget import charts
from bbt_widget.charts.encodings import inline_rows
from bbt_widget.charts.frames import to_columns, to_records


def _mixed() -> pd.DataFrame:
    """Every column type a chart frame has, with the missing and non-finite values Altair
    turns into None."""
    return pd.DataFrame(
        {
            "name": pd.Series(["a", None, "c > d"], dtype="str"),
            "text": pd.Series(["x", "y", None], dtype="string"),
            "obj": pd.Series(["p", np.nan, np.float64(0.5)], dtype=object),
            "arr": pd.Series([np.array([1, 2]), None, "z"], dtype=object),
            "n": np.array([1, 2, 3], dtype=np.int64),
            "u": np.array([1, 2, 3], dtype=np.uint8),
            "x": [0.25, np.nan, np.inf],
            "y": [-np.inf, 1.5, 2.0],
            "flag": [True, False, True],
        }
    )


def test_rows_are_the_values_altairs_conversion_gives():
    frame = _mixed()
    rows = inline_rows(frame)
    assert isinstance(rows, alt.InlineData)
    assert rows.values == to_values(frame)["values"]
    assert rows.values[1] == {
        "name": None,
        "text": "y",
        "obj": None,
        "arr": None,
        "n": 2,
        "u": 2,
        "x": None,
        "y": 1.5,
        "flag": False,
    }
    # Python values only: the spec goes to JSON as it is
    assert {type(v) for row in rows.values for v in row.values()} <= {
        type(None),
        str,
        int,
        float,
        bool,
        list,
    }


def test_records_and_columns_are_json_for_every_missing_or_non_finite_value():
    """The widget's columns and the charts' rows are one conversion: NA (a nullable text
    column) and infinities are None, as NaN always was."""
    frame = _mixed()
    columns = to_columns(frame)
    assert columns["text"] == ["x", "y", None]
    assert columns["x"] == [0.25, None, None] and columns["y"] == [None, 1.5, 2.0]
    assert to_records(frame) == [dict(zip(columns, row)) for row in zip(*columns.values())]
    json.dumps(to_records(frame), allow_nan=False)
    assert to_records(pd.DataFrame(index=range(2))) == [{}, {}]


def test_a_chart_of_rows_gives_the_spec_a_chart_of_the_frame_gives():
    frame = _mixed().drop(columns="arr")
    for chart_of in (lambda d: alt.Chart(d).mark_point(), lambda d: alt.Chart(d).mark_text()):
        from_rows = chart_of(inline_rows(frame)).encode(x=alt.X("x:Q"), text=alt.Text("name:N"))
        from_frame = chart_of(frame).encode(x=alt.X("x:Q"), text=alt.Text("name:N"))
        assert from_rows.to_dict() == from_frame.to_dict()  # same dataset name and values


@pytest.mark.parametrize(
    "column",
    [
        pd.to_datetime(["2024-01-01", "2024-01-02"]),
        pd.Categorical(["a", "b"]),
        pd.array([1, None], dtype="Int64"),
        pd.to_timedelta([1, 2], unit="s"),
    ],
    ids=["datetime", "category", "nullable-int", "timedelta"],
)
def test_a_frame_with_columns_altair_converts_its_own_way_is_handed_over(column):
    frame = pd.DataFrame({"v": column, "w": [1.0, 2.0]})
    assert inline_rows(frame) is frame


def test_a_frame_without_text_column_names_is_handed_over():
    assert isinstance(inline_rows(pd.DataFrame([[1, 2]])), pd.DataFrame)  # 0, 1: Altair says
    frame = pd.DataFrame({("a", "b"): [1.0]})
    assert inline_rows(frame) is frame


def test_another_data_transformer_gets_the_frame():
    frame = pd.DataFrame({"x": [1.0, 2.0]})
    alt.data_transformers.register("bbt-test-plain", alt.data_transformers.get())
    with alt.data_transformers.enable("bbt-test-plain"):
        assert inline_rows(frame) is frame
    assert isinstance(inline_rows(frame), alt.InlineData)


def test_a_frame_over_altairs_row_limit_is_drawn_whole():
    """The package's charts are built for their rows: over Altair's row limit (5000) they
    are passed inline, not refused with MaxRowsError (a report of 51 algorithms died of it
    after its fit); a frame of other columns too, by Altair's own conversion."""
    big = pd.DataFrame({"x": np.arange(5001.0)})
    chart = alt.Chart(inline_rows(big)).mark_point().encode(x=alt.X("x:Q"))
    assert len(next(iter(chart.to_dict()["datasets"].values()))) == 5001
    dated = big.assign(day=pd.Timestamp("2026-01-01"))  # not a plain column
    spec = alt.Chart(inline_rows(dated)).mark_point().encode(x=alt.X("x:Q")).to_dict()
    assert len(next(iter(spec["datasets"].values()))) == 5001
    assert isinstance(alt.Chart(big).mark_point().encode(x="x:Q"), alt.Chart)
    with pytest.raises(MaxRowsError):  # Altair's own limit stays for frames given to it
        alt.Chart(big).mark_point().encode(x=alt.X("x:Q")).to_dict()


def test_layers_and_copies_of_a_chart_share_its_rows():
    matrix = pd.DataFrame(
        {
            "row": ["a", "b"],
            "col": ["b", "a"],
            "row_order": [0, 1],
            "col_order": [1, 0],
            "wins": [3, 1],
            "losses": [1, 3],
            "ties": [0, 0],
            "share": [0.75, 0.25],
            "key": ["k", "k"],
            "alg_a": ["a", "a"],
            "alg_b": ["b", "b"],
        }
    )
    chart = charts.win_matrix_chart(matrix)
    rows = chart.data  # both layers draw it: Altair moved it up to the layered chart
    assert isinstance(rows, alt.InlineData)
    assert chart.copy().data is rows
    assert chart.properties(width=100).data is rows
    spec = chart.to_dict()
    assert "data" not in spec["layer"][0] and len(spec["datasets"]) == 1


_UNPICKLE = """
import pickle, sys
chart = pickle.loads(sys.stdin.buffer.read())
print(len(chart.to_dict()["datasets"][chart.to_dict()["data"]["name"]]))
"""


@pytest.mark.slow
def test_a_chart_of_rows_unpickles_in_a_new_process():
    chart = alt.Chart(inline_rows(pd.DataFrame({"x": [1.0, 2.0, 3.0]}))).mark_point()
    again = pickle.loads(pickle.dumps(chart))
    assert again.to_dict() == chart.to_dict()
    out = subprocess.run(
        [sys.executable, "-c", _UNPICKLE],
        input=pickle.dumps(chart.encode(x=alt.X("x:Q"))),
        capture_output=True,
        check=True,
    )
    assert out.stdout.decode().split() == ["3"]


def test_the_heatmaps_of_many_groups_and_algorithms_are_drawn_whole():
    """A report of 20 algorithms in 200 groups died after its fit (MaxRowsError: its "by
    family" heatmap has a cell per pair and group, 38,190); the sweep's heatmap, the
    influence bars and Mallows' rank probabilities (algorithms x ranks) are drawn whole."""
    from types import SimpleNamespace

    from bbt_widget.charts.specs_robustness import influence_top_chart, sweep_chart
    from bbt_widget.ranking._mallows import MallowsResult

    pairs = [f"a{i} > a{j}" for i in range(20) for j in range(i + 1, 20)]
    cells = pd.DataFrame(
        [
            (pair, k, f"g{g}", "no claim", 0.5, 0.5, 0.5, "")
            for k, pair in enumerate(pairs)
            for g in range(201)
        ],
        columns=["pair", "order", "setting", "decision", "mean", "above_50", "in_rope", "error"],
    )
    spec = sweep_chart(cells, legend="decision", title="t", subtitle="s").to_dict()
    assert len(next(iter(spec["datasets"].values()))) == len(cells) == 38190
    top = pd.DataFrame(
        {
            "dataset": [f"d{k}" for k in range(5001)],
            "delta_mean": 0.0,
            "mean_loo": 0.5,
            "decision_loo": "no claim",
            "pareto_k": 0.1,
            "method": "psis",
            "effect": "none",
            "order": range(5001),
        }
    )
    influence_top_chart(top, title="t", subtitle="s").to_dict()
    names = [f"a{i}" for i in range(80)]
    probabilities = pd.DataFrame(
        np.full((80, 80), 1 / 80), index=pd.Index(names, name="algorithm"), columns=range(1, 81)
    )
    fit = SimpleNamespace(
        rank_probabilities=probabilities, consensus=SimpleNamespace(order=tuple(names))
    )
    spec = MallowsResult.chart_rank_probabilities(fit).to_dict()  # type: ignore[arg-type]
    assert len(next(iter(spec["datasets"].values()))) == 6400
