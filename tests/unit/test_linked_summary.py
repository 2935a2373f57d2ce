"""The widget's summary views (ranking, CD diagram, decision matrices) are linked to the
highlighted pair and say their numbers in words."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

import bbt_widget as bbt
from bbt_widget.charts import fit_cd_diagram, pair_key
from bbt_widget.widget.views import summary_spec

pytestmark = pytest.mark.filterwarnings("ignore::bbt_widget.DiagnosticsWarning")

#: A name whose JSON ends like another name's JSON ('x"a' ends in '"a"'), and an RTL override.
QUOTED = 'x"a'
RTL = "\u202eevil"


@pytest.fixture(scope="module")
def result() -> Any:
    data = bbt.datasets.load_base().rename(columns={"dt": QUOTED, "lda": "a", "xgb": RTL})
    return bbt.fit(data, dataset="db", seed=1)


def _tooltips(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "tooltip" and isinstance(value, list):
                yield from (v for v in value if isinstance(v, dict))
            elif key == "tooltip" and isinstance(value, dict):
                yield value
            else:
                yield from _tooltips(value)
    elif isinstance(node, list):
        for value in node:
            yield from _tooltips(value)


def test_summary_spec_defines_the_highlight_once_and_keys_its_cells(result: Any) -> None:
    spec = summary_spec(result, (0.45, 0.55), 0.89, interpretation="weak", quiet=0)
    names = [p["name"] for p in spec.get("params", [])]
    assert names.count("sel_pair") == 1  # at the top: the front end sets it there
    text = json.dumps(spec, ensure_ascii=False)
    assert json.dumps(pair_key(QUOTED, "a"), ensure_ascii=False) in text
    tips = list(_tooltips(spec))
    assert len(tips) >= 8
    for tip in tips:
        shown = tip.get("title", tip.get("field"))
        assert shown not in ("above_50", "in_rope", "above.50", "in.rope"), tip
        assert not str(shown).endswith("_text"), tip  # a frame's column: titled in words


def _rings(chart: dict[str, Any], key: str) -> int:
    import vl_convert as vlc

    chart["params"][0]["value"] = key
    return vlc.vegalite_to_svg(chart).count('stroke-width="2.5"')


def test_cd_diagram_rings_exactly_the_highlighted_pair(result: Any) -> None:
    chart = fit_cd_diagram(result, "weak").to_dict()
    assert _rings(chart, "") == 0
    # 'a' is not in the pair of 'x"a', though '"a"' ends that name's JSON
    assert _rings(chart, pair_key(QUOTED, "svm")) == 2
    assert _rings(chart, pair_key("a", RTL)) == 2


@pytest.mark.parametrize("rule", ["weak", "strong"])
def test_interval_chart_draws_the_rules_thresholds_named_in_its_legend(
    result: Any, rule: str
) -> None:
    import vl_convert as vlc

    from bbt_widget.charts import result_charts
    from bbt_widget.charts.frames import rope_frame

    frame = rope_frame((0.42, 0.56), rule)
    assert sorted(frame["x"]) == sorted([0.5, 0.42, 0.56, *([0.70] if rule == "strong" else [])])
    assert frame["band"].sum() == 1  # the gray band drawn once
    assert all(f"{rule} rule" in line for line in frame["line"] if line.startswith("ROPE"))
    chart = result_charts(result, rope=(0.42, 0.56), interpretation=rule)["intervals"]
    svg = vlc.vegalite_to_svg(chart.to_dict())
    assert f"ROPE bounds ({rule} rule" in svg
    assert ("0.70 (strong rule" in svg) == (rule == "strong")


def test_matrices_outline_the_flipped_pairs_apart_from_the_highlighted_one(result: Any) -> None:
    import vl_convert as vlc

    spec = summary_spec(result, (0.45, 0.55), 0.89, interpretation="weak", quiet=0)
    params = {p["name"]: p for p in spec["params"]}
    assert params["flipped_pairs"]["value"] == []
    assert vlc.vegalite_to_svg(spec).count("#f08c00") == 0
    params["flipped_pairs"]["value"] = [pair_key(QUOTED, "a"), pair_key("svm", RTL)]
    params["sel_pair"]["value"] = pair_key(QUOTED, "a")
    svg = vlc.vegalite_to_svg(spec)
    # each pair has four cells (two orientations, two rules): the highlighted one in black
    assert svg.count('stroke="#f08c00"') == 4
