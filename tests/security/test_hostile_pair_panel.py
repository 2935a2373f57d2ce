"""The pair panel's texts (the reasons per data set, the local ROPE's note, the tie policy's
arithmetic, the "what changed" line) hold no name: hostile algorithm and data-set names reach
the front end only as the pair's and the rows' own fields, which it shows as text."""

from __future__ import annotations

import json
import warnings

import pytest
from hostile import BIDI_DATASET, HOSTILE, hostile_results

import bbt_widget as bbt
from bbt_widget.charts.pairs import pair_key
from bbt_widget.widget.pair_panel import pair_panel

#: HTML, names that read like the panel's own words, and every bidi name, as neighbours in
#: skill (so the local ROPE makes ties between them).
NAMES = (*HOSTILE[:2], *HOSTILE[14:])
FAST = {"engine": "numpy", "seed": 1, "draws": "fixed", "iter_warmup": 20, "iter_sampling": 50}


@pytest.fixture(scope="module")
def before_and_after() -> tuple[bbt.BBTResult, bbt.BBTResult]:
    data = hostile_results(NAMES)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bbt.DiagnosticsWarning)  # short chains
        off = bbt.fit(data, dataset="db", **FAST)
        on = bbt.fit(data, dataset="db", d_min=2.0, tie_threshold=0.025, **FAST)
    return off, on


@pytest.mark.parametrize(("first", "second"), [(0, 1), (2, 3), (4, 5), (6, 7)])
def test_the_panel_texts_carry_names_as_data_only(before_and_after, first: int, second: int):
    off, on = before_and_after
    key = pair_key(NAMES[first], NAMES[second])
    panel = pair_panel(on, key, pair_panel(off, key))
    assert panel["changed"]["moves"]  # neighbours in skill: the local ROPE made ties
    assert any(r["reason"].endswith("\u2192 tie") for r in panel["rows"])
    texts = [panel["note"], panel["arithmetic"], json.dumps(panel["changed"], ensure_ascii=False)]
    texts += [r["reason"] + r["effect"] for r in panel["rows"]]
    for text in texts:
        for name in (*NAMES, BIDI_DATASET):
            assert name not in text, (name, text)
    # the names travel as the pair's and the data sets' own fields, unchanged
    assert {panel["a"], panel["b"]} == {NAMES[first], NAMES[second]}
    assert [r["dataset"] for r in panel["rows"]].count(BIDI_DATASET) == 1
