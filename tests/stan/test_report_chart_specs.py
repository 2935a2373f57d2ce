"""The report's charts on the shipped results (16 algorithms x 132 data sets): the specs
Altair gets are the ones it would make from the frames themselves, valid Vega-Lite with
the rows each chart draws, and building them asks Altair for no per-chart conversion of a
frame and no schema lookup of a shorthand (what made the report's charts slow)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import altair as alt
import altair.utils.data
import altair.utils.schemapi
import pytest

import bbt_widget as bbt
from bbt_widget.core.options import DEFAULT_HDI, DEFAULT_ROPE
from bbt_widget.outputs import export
from bbt_widget.outputs.report import _render as rr
from bbt_widget.outputs.report import _sections as rs

pytestmark = pytest.mark.stan


@pytest.fixture(scope="module")
def fits() -> tuple[Any, Any]:
    data = bbt.datasets.load_pmlb16()
    return bbt.fit(data, dataset="db", seed=4), bbt.ranking_model(data, dataset="db", seed=4)


def _report_charts(fits: tuple[Any, Any], highlight: list[str] | None = None) -> dict[str, Any]:
    """The charts of an HTML report of ``fits`` with its Plackett-Luce section, by name."""
    result, pl = fits
    _, shown, rule, rope, summary, ranking = rr._chart_options(
        result, "r.html", DEFAULT_ROPE, DEFAULT_HDI, "auto", None, highlight
    )
    builders, _, _ = rr._chart_builders(
        result, rope, DEFAULT_HDI, None, rule, ranking, summary, shown
    )
    built = {name: build() for name, build in builders.items()}
    section = rs.ranking_model_section(pl, result, interpretation=rule)
    return built | {name: chart for name, (chart, _) in section.charts.items()}


def _values(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for v in value.values():
            yield from _values(v)
    elif isinstance(value, list):
        for v in value:
            yield from _values(v)
    else:
        yield value


def test_the_specs_are_those_altair_makes_from_the_frames(fits):
    """Under another data transformer the charts hand Altair their frames, which it
    converts itself: the specs, dataset names and values included, are the same."""
    ours = {n: export._spec(c, False) for n, c in _report_charts(fits, ["lda"]).items()}
    alt.data_transformers.register("bbt-test-frames", alt.data_transformers.get())
    with alt.data_transformers.enable("bbt-test-frames"):
        plain = {n: export._spec(c, False) for n, c in _report_charts(fits, ["lda"]).items()}
    assert list(ours) == list(plain)
    for name in ours:
        assert json.dumps(ours[name], sort_keys=True) == json.dumps(plain[name], sort_keys=True)


def test_each_chart_is_valid_vega_lite_with_the_rows_it_draws(fits):
    result = fits[0]
    k = len(result.algorithms)
    pairs = k * (k - 1) // 2
    order = list(result.ranking(hdi=DEFAULT_HDI)["algorithm"])
    cells = bbt.charts.decision_frame(result.summary(rope=DEFAULT_ROPE, hdi=DEFAULT_HDI), order)
    # rows and fields of the datasets each chart draws (as the frames give them)
    expected = {
        "ranking": {(k, "p_best"), (1, None)},
        "cd_diagram": {(k, "role"), (k, "text")},
        "decisions": {(len(cells), "decision")},
        # the ROPE band and the rule's threshold lines: one row each (3 weak, 4 strong)
        "intervals": {(pairs, "median"), (None, "high"), (None, "line")},
        "rope_overlap": {(3 * pairs, "mass"), (1, "x")},
        "ppc": {(None, "x0")},
        "win_matrix": {(2 * pairs, "wins")},
        "bbt_vs_pl": {(k, "bbt_p_best")},  # one row per algorithm, a column per quantity
        "top_k": {(None, "k")},
    }
    charts = _report_charts(fits)
    assert list(charts) == list(expected)
    for name, chart in charts.items():
        spec = chart.to_dict(validate=True)  # raises on a spec the schema refuses
        assert spec == chart.to_dict(validate=False), name
        alt.Chart.from_dict(json.loads(json.dumps(spec)), validate=True)  # as JSON
        datasets = spec["datasets"]
        for rows, field in expected[name]:
            matching = [
                values
                for values in datasets.values()
                if (field is None and values == [{}]) or (field is not None and field in values[0])
            ]
            assert matching, f"{name}: no dataset with {field!r}"
            assert rows is None or any(len(v) == rows for v in matching), (name, field)
        for values in datasets.values():
            assert all(set(row) == set(values[0]) for row in values), name  # one set of fields
            assert not any(isinstance(v, float) and not math.isfinite(v) for v in _values(values))
    assert len(datasets) == 1  # the last, top_k: both layers draw the same rows, once


def test_building_the_charts_converts_no_frame_and_looks_up_no_shorthand(fits, monkeypatch):
    """Each frame is converted once, by the chart package, not by Altair per layer at every
    spec; every encoding is a channel object, not a string or dict Altair looks up in its
    schema (a table built anew at each lookup)."""
    calls: list[str] = []
    sanitize = altair.utils.data.sanitize_pandas_dataframe
    from_dict = altair.utils.schemapi._FromDict.__init__

    def count_sanitize(frame):
        calls.append("sanitize")
        return sanitize(frame)

    def count_from_dict(self, *args, **kwargs):
        calls.append("from_dict")
        from_dict(self, *args, **kwargs)

    monkeypatch.setattr(altair.utils.data, "sanitize_pandas_dataframe", count_sanitize)
    monkeypatch.setattr(altair.utils.schemapi._FromDict, "__init__", count_from_dict)
    for chart in _report_charts(fits, ["lda"]).values():
        export._spec(chart, False)
    assert calls == []
    alt.Chart(fits[1].top_k).mark_point().encode(x="k").to_dict()  # the counters count
    assert calls == ["from_dict", "sanitize"]
