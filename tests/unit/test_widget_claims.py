"""The note of flipped claims (widget/claims.py) and the words of the decision matrix's
tooltips (charts.pairs.pair_words), hostile names included."""

from __future__ import annotations

import pandas as pd

from bbt_widget.charts import decision_frame, pair_key
from bbt_widget.core.bidi import isolate
from bbt_widget.widget.claims import claim_changes, claims_of

HOSTILE = "<img src=x onerror=alert(1)>"
RTL = "\u202eevil\u200f"


def _summary(decisions: list[tuple[str, str, str]], rule: str = "weak") -> pd.DataFrame:
    rows = [
        {
            "pair": f"{a} > {b}",
            "alg_a": a,
            "alg_b": b,
            "mean": 0.8,
            "median": 0.8,
            "low": 0.7,
            "high": 0.9,
            "delta": 0.1,
            "above_50": 0.97,
            "in_rope": 0.01,
            "weak": d,
            "strong": d,
        }
        for a, b, d in decisions
    ]
    return pd.DataFrame(rows)


def test_no_change_no_note() -> None:
    s = _summary([("a", "b", "a better"), ("a", "c", "no claim")])
    assert claim_changes(claims_of(s, "weak"), claims_of(s, "weak")) == {}


def test_changed_pairs_named_with_before_and_after() -> None:
    before = claims_of(_summary([("a", "b", "a better"), ("a", "c", "no claim")]), "weak")
    after = claims_of(_summary([("a", "b", "no claim"), ("a", "c", "no claim")]), "weak")
    note = claim_changes(before, after)
    assert note["count"] == 1
    assert note["keys"] == [pair_key("a", "b")]
    assert note["text"] == "1 claim changed: a vs b now no claim (was a better)"


def test_same_claim_with_pair_reversed_is_no_change() -> None:
    before = claims_of(_summary([("a", "b", "a better")]), "weak")
    after = claims_of(_summary([("b", "a", "b better")]), "weak")
    assert claim_changes(before, after) == {}


def test_unsettled_pair_says_so() -> None:
    before = claims_of(_summary([("a", "b", "a better")]), "weak")
    after = claims_of(_summary([("a", "b", "no claim")]), "weak")
    note = claim_changes(before, after, {pair_key("a", "b")})
    assert "now no claim (unsettled at this precision) (was a better)" in note["text"]


def test_note_capped_with_and_more() -> None:
    names = [f"x{i}" for i in range(9)]
    before = claims_of(_summary([("a", n, "a better") for n in names]), "weak")
    after = claims_of(_summary([("a", n, "equivalent") for n in names]), "weak")
    note = claim_changes(before, after, limit=5)
    assert note["count"] == 9
    assert note["text"].startswith("9 claims changed: ")
    assert note["text"].endswith(", and 4 more")
    assert note["text"].count(" now equivalent") == 5


def test_hostile_names_isolated_in_note() -> None:
    before = claims_of(_summary([(HOSTILE, RTL, "a better")]), "weak")
    after = claims_of(_summary([(HOSTILE, RTL, "b better")]), "weak")
    text = claim_changes(before, after)["text"]
    # the names as they are (the front end writes text, never HTML), each isolated so an RTL
    # override cannot reorder the sentence around it
    assert isolate(RTL) in text and isolate(RTL) != RTL
    assert HOSTILE in text
    assert f"now {isolate(RTL)} better (was {isolate(HOSTILE)} better)" in text


def test_matrix_tooltips_in_words() -> None:
    s = _summary([(HOSTILE, RTL, "a better"), (HOSTILE, "c", "no claim")])
    frame = decision_frame(s, [HOSTILE, RTL, "c"], {(pair_key(HOSTILE, "c"), "weak")})
    weak = frame[frame["interpretation"] == "weak"]
    cell = weak[(weak["row"] == RTL) & (weak["col"] == HOSTILE)].iloc[0]
    assert cell["key"] == pair_key(HOSTILE, RTL)
    assert cell["p_text"] == f"P({isolate(HOSTILE)} > {isolate(RTL)}) = 0.800, HDI 0.700 to 0.900"
    assert cell["above_text"] == "0.970" and cell["rope_text"] == "0.010"
    assert cell["rule_text"] == "weak (0.95 rule)"
    assert cell["verdict_text"] == f"{isolate(HOSTILE)} better"
    open_claim = weak[(weak["row"] == "c")].iloc[0]
    assert open_claim["verdict_text"] == "no claim (unsettled at this precision)"
    strong = frame[(frame["interpretation"] == "strong") & (frame["row"] == "c")].iloc[0]
    assert strong["verdict_text"] == "no claim"  # unsettled under the weak rule only


def test_interval_rows_name_an_unsettled_claim() -> None:
    from bbt_widget.charts.frames import interval_frame

    s = _summary([("a", "b", "no claim"), ("a", "c", "no claim")])
    ranges = pd.DataFrame({"pair": s["pair"], "alg_a": s["alg_a"], "alg_b": s["alg_b"]})
    ranges["min"], ranges["max"] = 0.1, 0.9
    frame = interval_frame(s, ranges, "weak", {(pair_key("a", "b"), "weak")})
    assert list(frame["decision"]) == ["no claim (unsettled at this precision)", "no claim"]
    assert list(frame["verdict"]) == ["no claim", "no claim"]  # its colour unchanged
    strong = interval_frame(s, ranges, "strong", {(pair_key("a", "b"), "weak")})
    assert list(strong["decision"]) == ["no claim", "no claim"]
