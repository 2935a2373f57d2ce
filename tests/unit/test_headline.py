"""The headline sentence, on hand-built summaries whose answer is known."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

from bbt_widget.outputs.headline import headline


def _summary(order: list[str], decisions: dict[tuple[str, str], str], rule: str = "weak"):
    """Every pair of ``order`` (a before b in ranking order); ``decisions`` gives some
    pairs' decision from a's side, the rest are "no claim"."""
    rows = []
    for a, b in itertools.combinations(order, 2):
        rows.append({"alg_a": a, "alg_b": b, rule: decisions.get((a, b), "no claim")})
    ranking = pd.DataFrame({"algorithm": order})
    return pd.DataFrame(rows), ranking


def _beats_all_below(order: list[str], winners: list[str]) -> dict[tuple[str, str], str]:
    return {(a, b): "a better" for a in winners for b in order[order.index(a) + 1 :]}


def test_one_algorithm_better_than_every_other() -> None:
    order = ["a", "b", "c", "d"]
    summary, ranking = _summary(order, _beats_all_below(order, ["a"]))
    assert headline(summary, ranking, "weak") == (
        "a is better than every other algorithm; 3 of 6 pairs decided under the weak rule"
    )


def test_equivalent_leaders_then_the_next_group() -> None:
    # lgbm ~ rf lead and beat everyone; then xgb beats everyone left; then svm beats half
    order = ["lgbm", "rf", "xgb", "svm", "dt", "lda"]
    decisions = {("lgbm", "rf"): "equivalent"}
    decisions |= _beats_all_below(order, ["lgbm", "rf", "xgb"])
    decisions[("svm", "dt")] = "a better"
    decisions.pop(("lgbm", "rf"))  # _beats_all_below wrote it; the pair is equivalent
    decisions[("lgbm", "rf")] = "equivalent"
    summary, ranking = _summary(order, decisions, "strong")
    assert headline(summary, ranking, "strong") == (
        "lgbm and rf are practically equivalent and better than every other algorithm; "
        "then xgb, better than every remaining algorithm; "
        "then svm, better than dt; "
        "13 of 15 pairs decided under the strong rule"
    )


def test_b_better_counts_for_the_second_algorithm() -> None:
    # the pairs are written worse-first: the claims are "b better"
    summary = pd.DataFrame(
        {"alg_a": ["y", "z", "z"], "alg_b": ["x", "x", "y"], "weak": ["b better"] * 3}
    )
    ranking = pd.DataFrame({"algorithm": ["x", "y", "z"]})
    assert headline(summary, ranking).startswith(
        "x is better than every other algorithm; then y, better than every remaining"
    )


def test_partial_claims_stop_the_sentence() -> None:
    order = ["a", "b", "c", "d"]
    summary, ranking = _summary(order, {("a", "d"): "a better", ("b", "c"): "a better"})
    assert headline(summary, ranking) == (
        "a is better than d; 2 of 6 pairs decided under the weak rule"
    )


def test_no_claims_at_all() -> None:
    summary, ranking = _summary(["a", "b", "c"], {})
    assert headline(summary, ranking) == (
        "a ranks first, not decided better than any other algorithm; "
        "0 of 3 pairs decided under the weak rule"
    )


def test_not_compared_pairs_are_not_decided_and_max_groups_caps_the_sentence() -> None:
    order = ["a", "b", "c", "d"]
    decisions = _beats_all_below(order, ["a", "b", "c"])
    decisions[("c", "d")] = "not compared"
    summary, ranking = _summary(order, decisions)
    assert headline(summary, ranking, max_groups=2) == (
        "a is better than every other algorithm; then b, better than every remaining "
        "algorithm; 5 of 6 pairs decided under the weak rule"
    )


def test_names_are_given_back_as_they_are() -> None:
    # no escaping here: the display layer escapes (HTML) or isolates (bidi) for its medium
    order = ["<b>x</b>", "a > b"]
    summary, ranking = _summary(order, {("<b>x</b>", "a > b"): "equivalent"})
    assert headline(summary, ranking).startswith("<b>x</b> and a > b are practically equivalent")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"interpretation": "medium"}, "interpretation must be one of"),
        ({"max_groups": 0}, "max_groups must be at least 1"),
    ],
)
def test_bad_arguments_are_named(kwargs: dict, match: str) -> None:
    summary, ranking = _summary(["a", "b"], {})
    with pytest.raises(ValueError, match=match):
        headline(summary, ranking, **kwargs)


def test_a_summary_without_the_decision_column_is_refused() -> None:
    summary, ranking = _summary(["a", "b"], {}, rule="weak")
    with pytest.raises(ValueError, match="no column 'strong'"):
        headline(summary, ranking, "strong")


def test_a_name_with_a_bidi_override_cannot_reverse_the_sentence() -> None:
    from bbt_widget.core.bidi import FSI, PDI

    evil = "x\u202eyz"
    ranking = pd.DataFrame({"algorithm": [evil, "b"]})
    summary = pd.DataFrame(
        {
            "pair": [f"{evil} > b"],
            "alg_a": [evil],
            "alg_b": ["b"],
            "weak": ["a better"],
            "strong": ["a better"],
        }
    )
    text = headline(summary, ranking, "weak")
    start = text.index(FSI)
    # the override stays inside the name's isolate, which closes before the sentence goes on
    assert text[start + 1 : text.index(PDI, start)].startswith("x\u202eyz")
    assert text.count(FSI) == text.count(PDI) >= 1
