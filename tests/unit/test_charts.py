"""Chart builders: tidy frames in, valid Vega-Lite out, nothing remote.

The frame helpers are checked on small frames written by hand (numbers worked out in the
test); the builders are checked by validating their Vega-Lite against Altair's schema.
``test_widget.py`` runs the same builders on real fits.
"""

from __future__ import annotations

import json
import warnings

import altair as alt
import numpy as np
import pandas as pd
import pytest

from bbt_widget import charts
from bbt_widget.charts import spec_cache
from bbt_widget.charts.frames import (
    FIT_DATASETS,
    ROBUSTNESS_DATASETS,
    VIEW_DATASETS,
    coverage_frame,
    interval_frame,
    matrix_frame,
    overlap_frame,
    range_frame,
    rope_frame,
    to_columns,
    to_records,
)
from bbt_widget.charts.frames_decisions import flips_frame, influence_frame
from bbt_widget.charts.frames_ppc import ppc_frame
from bbt_widget.charts.pairs import verdict_kind
from bbt_widget.charts.spec_cache import (
    checks_spec,
    groups_spec,
    robustness_spec,
    view_spec,
)
from bbt_widget.charts.specs import linked_chart
from bbt_widget.charts.specs_robustness import robustness_chart


@pytest.fixture
def summary() -> pd.DataFrame:
    """Two pairs as Result.summary() gives them (best > worse order)."""
    return pd.DataFrame(
        {
            "pair": ["xgb > lda", "lda > dt"],
            "alg_a": ["xgb", "lda"],
            "alg_b": ["lda", "dt"],
            "mean": [0.72, 0.52],
            "median": [0.73, 0.52],
            "low": [0.62, 0.41],
            "high": [0.81, 0.63],
            "delta": [0.19, 0.22],
            "above_50": [1.0, 0.6],
            "in_rope": [0.01, 0.5],
            "weak": ["a better", "no claim"],
            "strong": ["a better", "equivalent"],
        }
    )


@pytest.fixture
def pair_draws() -> pd.DataFrame:
    return pd.DataFrame({"xgb > lda": [0.6, 0.7, 0.9, 0.8], "lda > dt": [0.3, 0.5, 0.52, 0.7]})


@pytest.fixture
def rope_mass() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "pair": ["lda > dt", "xgb > lda"],  # any order: matched by pair
            "below": [0.25, 0.0],
            "inside": [0.5, 0.01],
            "above": [0.25, 0.99],
        }
    )


@pytest.fixture
def win_table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "alg1": ["dt", "dt", "lda"],
            "alg2": ["lda", "xgb", "xgb"],
            "win1": [6, 2, 5],
            "win2": [13, 18, 14],
            "ties": [1, 0, 1],
        }
    )


@pytest.fixture
def ppc_histogram() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "alg1": ["dt", "dt", "lda", "dt"],
            "alg2": ["lda", "lda", "xgb", "xgb"],
            "quantity": ["win1"] * 4,
            "value": [5, 6, 5, 2],
            "count": [1000, 3000, 4000, 4000],
            "observed": [6, 6, 5, 2],
        }
    )


def test_decision_text_names_the_algorithm() -> None:
    assert charts.decision_text("a better", "xgb", "dt") == "xgb better"
    assert charts.decision_text("b better", "xgb", "dt") == "dt better"
    assert charts.decision_text("equivalent", "xgb", "dt") == "equivalent"


def test_pair_key_is_unordered() -> None:
    assert charts.pair_key("xgb", "lda") == charts.pair_key("lda", "xgb") == '["lda", "xgb"]'


def test_pair_keys_and_labels_stay_distinct_with_separator_names() -> None:
    # issue 9 finding 11: "a > b" vs "c" and "a" vs "b > c" share the label "a > b > c",
    # "x vs y" vs "z" and "x" vs "y vs z" shared the old key "x vs y vs z"
    assert charts.pair_key("x vs y", "z") != charts.pair_key("x", "y vs z")
    assert json.loads(charts.pair_key("b > c", "a")) == ["a", "b > c"]
    summary = pd.DataFrame(
        {
            "pair": ["a > b > c", "a > b > c"],
            "alg_a": ["a > b", "a"],
            "alg_b": ["c", "b > c"],
            "mean": [0.7, 0.6],
            "median": [0.7, 0.6],
            "low": [0.6, 0.5],
            "high": [0.8, 0.7],
            "delta": [0.2, 0.2],
            "above_50": [1.0, 0.9],
            "in_rope": [0.0, 0.1],
            "weak": ["a better", "no claim"],
            "strong": ["a better", "a better"],
        }
    )
    draws = pd.DataFrame(np.array([[0.6, 0.5], [0.9, 0.8]]), columns=["a > b > c"] * 2)
    ranges = range_frame(draws, summary["alg_a"], summary["alg_b"])
    frame = interval_frame(summary, ranges)
    assert frame["key"].nunique() == 2 and frame["label"].nunique() == 2
    assert list(frame["max"]) == [0.9, 0.8]
    assert frame["label"][1].replace("\u200b", "") == "a > b > c"
    mass = pd.DataFrame(
        {"pair": ["a > b > c"] * 2, "below": [0.0, 0.1], "inside": [0.1, 0.2], "above": [0.9, 0.7]}
    )
    overlap = overlap_frame(summary, mass)  # same order as the summary: by position
    assert list(overlap["mass"]) == [0.0, 0.1, 0.9, 0.1, 0.2, 0.7]
    assert overlap["label"].nunique() == 2
    with pytest.raises(ValueError, match="same label"):  # ambiguous: refuse, never guess
        overlap_frame(summary.iloc[:1], mass)


@pytest.mark.parametrize(
    ("decision", "kind"),
    [("xgb better", "better"), ("equivalent", "equivalent"), ("no claim", "no claim")],
)
def test_verdict_kind(decision: str, kind: str) -> None:
    assert verdict_kind(decision) == kind


def test_range_frame_is_min_and_max_per_pair(pair_draws) -> None:
    ranges = range_frame(pair_draws)
    assert list(ranges["pair"]) == ["xgb > lda", "lda > dt"]
    assert list(ranges["min"]) == [0.6, 0.3] and list(ranges["max"]) == [0.9, 0.7]


def test_interval_frame_adds_order_range_and_decision(summary, pair_draws) -> None:
    # ranges of more pairs than shown (the widget computes them once, for all pairs)
    ranges = range_frame(pair_draws.assign(**{"xgb > dt": [0.9] * 4}))
    frame = interval_frame(summary, ranges, "weak")
    assert list(frame["order"]) == [0, 1]
    assert list(frame["key"]) == ['["lda", "xgb"]', '["dt", "lda"]']
    # full range = min/max of the draws, by hand from the fixture
    assert list(frame["min"]) == [0.6, 0.3]
    assert list(frame["max"]) == [0.9, 0.7]
    assert list(frame["decision"]) == ["xgb better", "no claim"]
    assert list(frame["verdict"]) == ["better", "no claim"]
    strong = interval_frame(summary, ranges, "strong")
    assert list(strong["verdict"]) == ["better", "equivalent"]
    with pytest.raises(ValueError, match="interpretation"):
        interval_frame(summary, ranges, "medium")


def test_overlap_frame_is_long_and_sums_to_one(summary, rope_mass) -> None:
    frame = overlap_frame(summary, rope_mass)
    assert len(frame) == 6
    first = frame[frame["pair"] == "xgb > lda"]
    assert list(first["region"]) == ["below ROPE", "in ROPE", "above ROPE"]
    assert list(first["mass"]) == [0.0, 0.01, 0.99]
    assert frame.groupby("pair")["mass"].sum().to_numpy() == pytest.approx([1.0, 1.0])
    assert list(frame["order"].unique()) == [0, 1]  # summary order, not rope_mass order


def test_matrix_frame_has_both_orientations(win_table) -> None:
    frame = matrix_frame(win_table, ["xgb", "lda", "dt"])
    assert len(frame) == 6
    cell = frame[(frame["row"] == "xgb") & (frame["col"] == "dt")].iloc[0]
    assert (cell["wins"], cell["losses"], cell["ties"]) == (18, 2, 0)
    assert cell["share"] == pytest.approx(18 / 20)
    assert cell["row_order"] == 0 and cell["col_order"] == 2
    cell = frame[(frame["row"] == "dt") & (frame["col"] == "lda")].iloc[0]
    assert cell["share"] == pytest.approx(6 / 20)


def test_ppc_frame_numbers_pairs_in_summary_order(ppc_histogram) -> None:
    frame = ppc_frame(ppc_histogram, ["xgb", "lda", "dt"])
    # pairs best first: (xgb, lda)=0, (xgb, dt)=1, (lda, dt)=2
    order = dict(zip(frame["key"], frame["pair_order"], strict=False))
    assert order == {'["lda", "xgb"]': 0, '["dt", "xgb"]': 1, '["dt", "lda"]': 2}
    assert frame["panel"].iloc[0] == "dt wins vs lda"


def test_ppc_frame_does_not_depend_on_the_order_of_the_histograms_rows(ppc_histogram) -> None:
    """Issue 10: the frame is built per panel (a panel looked up once per run of its rows),
    not per row; rows of one panel that are not together must still make one panel."""
    mixed = ppc_histogram.iloc[[0, 2, 1, 3]]  # dt-lda's rows apart
    expected = ppc_frame(ppc_histogram, ["xgb", "lda", "dt"])
    frame = ppc_frame(mixed, ["xgb", "lda", "dt"])
    pd.testing.assert_frame_equal(frame.iloc[[0, 2, 1, 3]].reset_index(drop=True), expected)
    assert frame["panel"].nunique() == 3


def test_a_ppc_panel_without_replicates_has_no_p_and_no_height_and_no_warning() -> None:
    """A panel whose counts are all zero (hand-made input) has NaN ``ppp`` and heights, and the
    other panels keep theirs, without numpy's division warnings (they were issued before)."""
    hist = pd.DataFrame(
        {
            "alg1": ["a", "a", "c"],
            "alg2": ["b", "b", "d"],
            "quantity": ["win1"] * 3,
            "value": [1, 2, 3],
            "count": [0, 0, 5],
            "observed": [1, 1, 3],
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame = ppc_frame(hist, ["a", "b", "c", "d"])
    assert frame["ppp"].isna().tolist() == [True, True, False]
    assert frame["h"].isna().tolist() == [True, True, False]
    assert frame["ppp"].iloc[2] == 1.0 and frame["h"].iloc[2] == 1.0
    # the pair with a p comes first, the one without last
    assert frame.set_index("alg_a")["pair_order"].to_dict() == {"c": 0, "a": 1}


def test_ppc_frame_places_bars_on_a_fixed_unit_scale_per_panel(ppc_histogram) -> None:
    """Issue 12: fixed scale domains (no per-panel extent: no "Infinite extent" warnings when
    a panel empties) and bars one count wide (binned bars were 0 px at 16 algorithms)."""
    frame = ppc_frame(ppc_histogram, ["xgb", "lda", "dt"])
    dt_lda = frame[frame["key"] == charts.pair_key("dt", "lda")]
    # counts 5 and 6, observed 6: the panel spans 4.5 .. 6.5, each bar half of it
    assert list(dt_lda["x0"]) == [0.0, 0.5] and list(dt_lda["x1"]) == [0.5, 1.0]
    assert list(dt_lda["h"]) == pytest.approx([1 / 3, 1.0])  # 1000 and 3000 draws
    assert list(dt_lda["obs_x"]) == [0.75, 0.75]
    assert list(dt_lda["range_low"]) == [5, 5] and list(dt_lda["range_high"]) == [6, 6]
    spec = json.dumps(charts.ppc_chart("ppc").to_dict(validate=False))
    assert '"bin"' not in spec and '"independent"' not in spec
    assert '"domain": [0, 1]' in spec


def test_coverage_frame_accepts_core_wide_form_with_ties() -> None:
    wide = pd.DataFrame(
        {
            "hdi": [0.5, 0.9, 0.95, 1.0],
            "proportion": [0.8, 1, 1, 1],
            "proportion_ties": [0.4, 0.7, 0.9, 1],
        }
    )
    frame = coverage_frame(wide)
    assert len(frame) == 8
    assert set(frame["quantity"]) == {"wins", "ties"}
    assert list(frame["hdi_label"][:4]) == ["50% HDI", "90% HDI", "95% HDI", "100% HDI"]
    plain = coverage_frame(wide[["hdi", "proportion"]])
    assert list(plain["quantity"].unique()) == ["wins"]


def test_to_records_is_json_safe() -> None:
    frame = pd.DataFrame({"a": [1.0, np.nan], "b": [np.int64(3), np.int64(4)], "c": ["x", None]})
    rows = to_records(frame)
    assert rows == [{"a": 1.0, "b": 3, "c": "x"}, {"a": None, "b": 4, "c": None}]
    json.dumps(rows, allow_nan=False)


def test_to_columns_is_json_safe_and_lossless() -> None:
    frame = pd.DataFrame(
        {"a": [1.0, np.nan], "b": [np.int64(3), np.int64(4)], "c": ["x", None], "d": [True, False]}
    )
    cols = to_columns(frame)
    assert cols == {"a": [1.0, None], "b": [3, 4], "c": ["x", None], "d": [True, False]}
    assert all(type(v) is int for v in cols["b"])
    json.dumps(cols, allow_nan=False)


def _frames(summary, pair_draws, rope_mass, ppc_histogram, win_table) -> dict[str, pd.DataFrame]:
    return {
        "intervals": interval_frame(summary, range_frame(pair_draws)),
        "overlap": overlap_frame(summary, rope_mass),
        "rope": rope_frame((0.45, 0.55)),
        "ppc": ppc_frame(ppc_histogram, ["xgb", "lda", "dt"]),
        "coverage": coverage_frame(
            pd.DataFrame({"hdi": [0.5, 0.9, 0.95, 1.0], "proportion": [0.8, 1, 1, 1]})
        ),
        "matrix": matrix_frame(win_table, ["xgb", "lda", "dt"]),
    }


def test_every_builder_gives_valid_vega_lite(
    summary, pair_draws, rope_mass, ppc_histogram, win_table
) -> None:
    f = _frames(summary, pair_draws, rope_mass, ppc_histogram, win_table)
    built = [
        charts.intervals_chart(f["intervals"], f["rope"], hdi=0.89),
        charts.rope_overlap_chart(f["overlap"]),
        charts.ppc_chart(f["ppc"]),
        charts.coverage_chart(f["coverage"]),
        charts.win_matrix_chart(f["matrix"]),
    ]
    for chart in built:
        chart.to_dict(validate=True)  # raises on a schema error
    linked = linked_chart(f, hdi=0.89, selected_pair=charts.pair_key("lda", "xgb"), focus="xgb")
    spec = linked.to_dict(validate=True)
    params = {p["name"]: p["value"] for p in spec["params"]}
    assert params == {"sel_pair": '["lda", "xgb"]', "sel_focus": "xgb", "hdi_mass": 0.89}


@pytest.mark.parametrize(
    ("name", "datasets", "kind"),
    [
        ("view_spec", VIEW_DATASETS, alt.HConcatChart),
        ("checks_spec", FIT_DATASETS, alt.VConcatChart),
    ],
)
def test_widget_view_specs_are_data_free_and_constant(name, datasets, kind) -> None:
    """The pairwise view and the model checks: two specs, each with its own datasets."""
    build = getattr(spec_cache, name)
    spec = build()
    text = json.dumps(spec)
    assert "$schema" not in spec
    assert "http" not in text  # no schema URL, no remote data
    assert "values" not in text  # data travels separately, by dataset name
    named = {m for m in VIEW_DATASETS + FIT_DATASETS if f'"name": "{m}"' in text}
    assert named == set(datasets)
    # the same object every time (built once), but a copy the caller may change
    again = build()
    assert again == spec and again is not spec
    kind.from_dict(spec)  # and it is valid Vega-Lite


def test_linked_view_links_through_parameters() -> None:
    text = json.dumps(view_spec()) + json.dumps(checks_spec())
    # every chart reads the highlighted pair and the focus algorithm
    assert text.count("datum.key == sel_pair") >= 4
    assert text.count("sel_focus") >= 4


# ---------------------------------------------------------------------------- issue 8: PPC


def test_ppc_frame_puts_the_worst_fitting_pairs_first() -> None:
    """Issue 8: with many pairs the PPC panel shows the pairs whose observed count is least
    likely under the model, not the first pairs of the ranking."""
    hist = pd.DataFrame(
        {
            "alg1": ["xgb", "xgb", "xgb", "xgb", "lda", "lda"],
            "alg2": ["lda", "lda", "dt", "dt", "dt", "dt"],
            "quantity": ["win1"] * 6,
            "value": [5, 6, 5, 6, 5, 6],
            "count": [2000, 2000, 3900, 100, 2000, 2000],
            # xgb-lda: observed in the middle; xgb-dt: in the upper tail; lda-dt: beyond it
            "observed": [5, 5, 6, 6, 9, 9],
        }
    )
    frame = ppc_frame(hist, ["xgb", "lda", "dt"])
    ppp = frame.groupby("key")["ppp"].first()
    # by hand: 2 * min(P(rep <= obs), P(rep >= obs)), at most 1
    assert ppp[charts.pair_key("xgb", "lda")] == 1.0
    assert ppp[charts.pair_key("xgb", "dt")] == pytest.approx(2 * 100 / 4000)
    assert ppp[charts.pair_key("lda", "dt")] == 0.0
    order = frame.groupby("key")["pair_order"].first().sort_values()
    assert list(order.index) == [
        charts.pair_key("lda", "dt"),
        charts.pair_key("xgb", "dt"),
        charts.pair_key("xgb", "lda"),
    ]
    # the ranking order is kept alongside
    assert frame.groupby("key")["rank_order"].first()[charts.pair_key("xgb", "lda")] == 0
    assert "worst-fitting pairs first" in json.dumps(charts.ppc_chart("ppc").to_dict())


# ---------------------------------------------------------------------------- issue 7: robustness


def _sweep_table() -> tuple[pd.DataFrame, list[str]]:
    rows = []
    for setting, decisions in (
        ("ties=spread", ["a better", "no claim"]),
        ("ties=add", ["a better", "equivalent"]),
    ):
        for (a, b), d in zip([("xgb", "dt"), ("lda", "dt")], decisions, strict=True):
            rows.append(
                {
                    "ties": setting.split("=")[1],
                    "pair": f"{a} > {b}",
                    "alg_a": a,
                    "alg_b": b,
                    "mean": 0.7,
                    "above_50": 0.99,
                    "in_rope": 0.1,
                    "weak": d,
                    "strong": "a better",
                    "error": None,
                }
            )
    table = pd.DataFrame(rows)
    return table, [f"ties={t}" for t in table["ties"]]


def test_flips_frame_marks_the_pairs_whose_decision_changes() -> None:
    table, labels = _sweep_table()
    frame = flips_frame(table, labels, "weak")
    flips = frame.groupby("key")["flips"].first()
    assert not flips[charts.pair_key("xgb", "dt")] and flips[charts.pair_key("lda", "dt")]
    assert list(frame["decision"][:2]) == ["xgb better", "no claim"]
    assert list(frame["setting_order"]) == [0, 0, 1, 1]
    assert frame["shown"].all()  # few pairs: every one is drawn
    assert not flips_frame(table, labels, "strong")["flips"].any()
    with pytest.raises(ValueError, match="one label per row"):
        flips_frame(table, labels[:2])
    # a failed fit is no flip
    failed = table.copy()
    failed.loc[3, ["weak", "error"]] = ["failed", "RuntimeError: boom"]
    assert not flips_frame(failed, labels)["flips"].any()


def test_influence_frame_is_the_top_data_sets_of_one_pair_or_a_note() -> None:
    table = pd.DataFrame(
        {
            "dataset": ["d1", "d2", "d3", "d1"],
            "pair": ["xgb > dt", "xgb > dt", "xgb > dt", "lda > dt"],
            "alg_a": ["xgb", "xgb", "xgb", "lda"],
            "alg_b": ["dt", "dt", "dt", "dt"],
            "delta_mean": [0.01, -0.05, 0.03, 0.2],
            "mean_loo": [0.71, 0.65, 0.73, 0.9],
            "decision_loo": ["a better", "no claim", "a better", "a better"],
            "changed": [False, True, False, False],
            "pareto_k": [0.1, 0.2, 0.3, 0.1],
            "method": ["psis"] * 4,
        }
    )
    frame = influence_frame(table, charts.pair_key("dt", "xgb"), n=2)
    assert list(frame["dataset"]) == ["d2", "d3"]  # by size of the change
    assert list(frame["effect"]) == ["decision changes", "decision holds"]
    assert list(frame["decision_loo"]) == ["no claim", "xgb better"]
    empty = influence_frame(None, "")
    assert len(empty) == 1 and empty["delta_mean"][0] == 0.0 and "click a pair" in empty["note"][0]
    assert influence_frame(None, "x", note="computing")["note"][0] == "computing"


def test_robustness_view_is_linked_by_the_pair_parameter() -> None:
    spec = robustness_spec()
    text = json.dumps(spec)
    assert "values" not in text and "http" not in text
    for name in ROBUSTNESS_DATASETS:
        assert f'"name": "{name}"' in text
    assert "datum.key == sel_pair" in text  # the highlighted pair is shown and emphasised
    assert {p["name"] for p in spec["params"]} == {"sel_pair", "sel_focus"}
    alt.HConcatChart.from_dict(spec)
    table, labels = _sweep_table()
    frames = {
        "flips": flips_frame(table, labels),
        "influence": influence_frame(None, ""),
    }
    robustness_chart(frames).to_dict(validate=True)


def test_flips_frame_beyond_ten_algorithms_shows_only_the_flipping_pairs() -> None:
    names = [f"alg{i}" for i in range(11)]  # 55 pairs
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    rows = [
        {
            "pair": f"{a} > {b}",
            "alg_a": a,
            "alg_b": b,
            "mean": 0.7,
            "above_50": 0.99,
            "in_rope": 0.0,
            "weak": "no claim" if (k == 0 and setting == "add") else "a better",
            "error": None,
        }
        for setting in ("spread", "add")
        for k, (a, b) in enumerate(pairs)
    ]
    labels = [f"ties={setting}" for setting in ("spread", "add") for _ in pairs]
    frame = flips_frame(pd.DataFrame(rows), labels)
    assert set(frame.loc[frame["shown"], "key"]) == {charts.pair_key("alg0", "alg1")}


def test_influence_chart_and_table_order_equal_effects_alike() -> None:
    """Data sets that move a pair by the same amount came in different orders in the widget's
    chart (a stable sort) and ``Influence.top`` (pandas' default quicksort): both keep the
    data sets' order now."""
    from bbt_widget.lab.influence import Influence

    n = 60
    names = [f"d{i:02d}" for i in range(n)]
    effects = np.random.default_rng(0).choice([0.01, 0.02, 0.03, -0.02, -0.03], n)
    table = pd.DataFrame(
        {
            "dataset": names,
            "pair": ["xgb > dt"] * n,
            "alg_a": ["xgb"] * n,
            "alg_b": ["dt"] * n,
            "delta_mean": effects,
            "mean_loo": [0.7] * n,
            "decision_loo": ["a better"] * n,
            "changed": [False] * n,
            "pareto_k": [0.1] * n,
            "method": ["psis"] * n,
        }
    )
    top = Influence(table, pd.Series(0.1, index=names), "weak").top("xgb > dt", 10)
    frame = influence_frame(table, charts.pair_key("dt", "xgb"), n=10)
    largest = [name for name, e in zip(names, effects, strict=True) if abs(e) == 0.03]
    assert list(top["dataset"]) == largest[:10]  # ties in the data sets' order
    assert list(frame["dataset"]) == list(top["dataset"])


def test_ppc_frame_builds_one_key_per_pair_not_per_row(monkeypatch) -> None:
    """The PPC frame of 16 algorithms has thousands of rows but 120 pairs: the key (a
    json.dumps) and the panel title are made once per pair and mapped onto the rows."""
    from bbt_widget.charts import frames_ppc

    rng = np.random.default_rng(5)
    rows = []
    for a, b in [("dt", "lda"), ("dt", "xgb"), ("lda", "xgb")]:
        for quantity in ("win1", "ties"):
            values = np.sort(rng.choice(np.arange(20), size=9, replace=False))
            for v in values:
                rows.append((a, b, quantity, int(v), int(rng.integers(1, 500)), 7))
    hist = pd.DataFrame(rows, columns=["alg1", "alg2", "quantity", "value", "count", "observed"])
    calls = []

    def counting_key(a: str, b: str) -> str:
        calls.append((a, b))
        return charts.pair_key(a, b)

    monkeypatch.setattr(frames_ppc, "pair_key", counting_key)
    frame = ppc_frame(hist, ["xgb", "lda", "dt"])
    assert len(calls) == 3 and len(frame) == len(hist) == 54
    # every row still carries its own pair's key, title and summary-order number
    for row in frame.itertuples(index=False):
        assert row.key == charts.pair_key(row.alg_a, row.alg_b)
        title = f"{row.alg_a} wins vs {row.alg_b}" if row.quantity == "win1" else None
        assert row.panel == (title or f"ties {row.alg_a}–{row.alg_b}")
    order = {k: v for k, v in zip(frame["key"], frame["rank_order"], strict=True)}
    assert order == {'["lda", "xgb"]': 0, '["dt", "xgb"]': 1, '["dt", "lda"]': 2}


def test_win_matrix_says_its_counts_are_the_models(win_table) -> None:
    """The matrix shows the counts after the tie policy; its labels say so (they said only
    "wins", read as data sets won)."""
    spec = charts.win_matrix_chart(matrix_frame(win_table, ["xgb", "lda", "dt"]))
    text = json.dumps(spec.to_dict())
    assert "counts given to the model, after the tie policy" in text
    for name in ("wins", "losses", "ties"):
        assert f'"title": "{name} (given to the model)"' in text


# ------------------------------------------------------- one visual language, leading answer

#: Every name a chart gives a decision (or the region of P(a > b) that argues for it), by the
#: decision it stands for.
_DECISION_NAMES = {
    "better": "better",
    "a better": "better",
    "row better": "better",
    "above ROPE": "better",
    "b better": "worse",
    "column better": "worse",
    "below ROPE": "worse",
    "equivalent": "equivalent",
    "in ROPE": "equivalent",
    "no claim": "no claim",
    "not compared": "not compared",
}


def _colours(spec: object, scales: list, literals: list) -> None:
    """Collect (domain, range) of every colour scale and every literal mark colour."""
    if isinstance(spec, list):
        for item in spec:
            _colours(item, scales, literals)
        return
    if not isinstance(spec, dict):
        return
    for key, value in spec.items():
        if key in ("color", "fill", "stroke") and isinstance(value, str):
            literals.append(value.lower())
        if key == "color" and isinstance(value, dict):
            scale = value.get("scale") or {}
            if isinstance(scale.get("range"), list):
                scales.append((scale.get("domain") or [], [c.lower() for c in scale["range"]]))
            if isinstance(value.get("value"), str):
                literals.append(value["value"].lower())
        _colours(value, scales, literals)


def _every_widget_spec(summary, pair_draws, rope_mass, ppc_histogram, win_table) -> list:
    f = _frames(summary, pair_draws, rope_mass, ppc_histogram, win_table)
    ranking = pd.DataFrame(
        {
            "algorithm": ["xgb", "lda", "dt"],
            "mean_beta": [0.5, 0.0, -0.5],
            "low": [0.2, -0.3, -0.8],
            "high": [0.8, 0.3, -0.2],
            "p_best": [0.9, 0.1, 0.0],
            "expected_rank": [1.1, 1.9, 3.0],
        }
    )
    decisions = charts.decision_frame(summary, ["xgb", "lda", "dt"])
    return [
        view_spec(),
        checks_spec(),
        robustness_spec(),
        groups_spec(),
        linked_chart(f).to_dict(validate=False),
        charts.ranking_chart(ranking, hdi=0.89).to_dict(validate=False),
        charts.decision_matrix_chart(decisions, charts.claim_counts(summary)).to_dict(
            validate=False
        ),
    ]


def test_one_colour_per_decision_across_every_chart(
    summary, pair_draws, rope_mass, ppc_histogram, win_table
) -> None:
    """A decision has one colour in every chart (intervals, ROPE overlap, decision matrix,
    sweep), the decisions differ, and nothing that is not a decision wears a decision's
    colour (ranking marks, PPC counts, win shares, influence)."""
    scales: list = []
    literals: list = []
    for spec in _every_widget_spec(summary, pair_draws, rope_mass, ppc_histogram, win_table):
        _colours(spec, scales, literals)
    by_decision: dict[str, set[str]] = {}
    other: set[str] = set(literals)
    for domain, colours in scales:
        for name, colour in zip(domain, colours):
            if name in _DECISION_NAMES:
                by_decision.setdefault(_DECISION_NAMES[name], set()).add(colour)
            else:
                other.add(colour)
        if not domain or not any(name in _DECISION_NAMES for name in domain):
            other.update(colours)
    assert {k: len(v) for k, v in by_decision.items()} == {
        "better": 1,
        "worse": 1,
        "equivalent": 1,
        "no claim": 1,
        "not compared": 1,
    }, by_decision
    claims = {next(iter(by_decision[k])) for k in ("better", "worse", "equivalent")}
    assert len(claims) == 3
    assert not claims & other, claims & other


def test_intervals_zoom_to_the_data_and_carry_a_top_axis(
    summary, pair_draws, rope_mass, ppc_histogram, win_table
) -> None:
    """With 120 pairs the intervals chart is thousands of pixels tall: an x axis at the top
    too, and the x range zoomed to the data (the ROPE band shares the scale, so it stays)."""
    f = _frames(summary, pair_draws, rope_mass, ppc_histogram, win_table)
    spec = charts.intervals_chart(f["intervals"], f["rope"]).to_dict(validate=True)
    text = json.dumps(spec)
    assert '"orient": "top"' in text
    assert spec["resolve"]["axis"]["x"] == "independent"
    assert '"domain": [0, 1]' not in text
    scales = [layer["encoding"]["x"].get("scale") for layer in spec["layer"]]
    assert {"zero": False, "nice": False, "padding": 8} in scales


@pytest.mark.parametrize("n", [3, 5, 16])
def test_decision_matrix_headers_do_not_overlap(n: int) -> None:
    """The weak and strong panels stand at least a header line apart: at 5 algorithms the
    matrices (18 px cells) are narrower than their headers, which printed over each other."""
    algorithms = [f"algorithm{i}" for i in range(n)]
    rows = [
        {"alg_a": a, "alg_b": b, "mean": 0.8, "weak": "a better", "strong": "equivalent"}
        for i, a in enumerate(algorithms)
        for b in algorithms[i + 1 :]
    ]
    summary = pd.DataFrame(rows)
    decisions = charts.decision_frame(summary, algorithms)
    spec = charts.decision_matrix_chart(decisions, charts.claim_counts(summary)).to_dict(
        validate=True
    )
    header = spec["facet"]["column"]["header"]
    assert "split" in header["labelExpr"]  # "weak (Sec. 9.2)" above "n better, ..."
    cell = spec["spec"]["width"]["step"]
    labels = charts.claim_counts(summary)
    longest = max(
        len(part)
        for r in labels.itertuples(index=False)
        for part in (f"{r.interpretation} (Sec. 9.x)", f"{r.better} better, {r.equivalent} eq")
    )
    # 12 px labels: about 6.5 px per character
    assert n * cell + spec["spacing"] >= 6.5 * longest, (n, cell, spec["spacing"])


def test_robustness_view_names_the_pair_and_says_only_what_is_true() -> None:
    """The influence chart's title names the highlighted pair, its axis stays hidden until a
    pair is picked and its ticks keep distinct labels; the sweep's columns are two short
    lines; the "beyond 45 pairs" title only when the sweep has more pairs."""
    spec = robustness_spec()
    flips, influence = spec["hconcat"]
    title = influence["title"]["text"]["expr"]
    assert "'Influence on '" in title and "sel_pair" in title
    axis = influence["layer"][0]["encoding"]["x"]["axis"]
    assert axis["format"] == "+.2~r"  # not "+.2f": -0.004 and +0.003 read "-0.00, +0.00"
    assert "sel_pair == ''" in axis["labelOpacity"]["expr"]
    x_axis = flips["encoding"]["x"]["axis"]
    assert x_axis["labelAngle"] == 0 and "split(" in x_axis["labelExpr"]
    assert "n_pairs > 45" in flips["title"]["text"]["expr"]
    table, labels = _sweep_table()
    assert set(flips_frame(table, labels)["n_pairs"]) == {2}
