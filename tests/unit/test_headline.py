"""The report's first sentence and its decision rule, from hand-made decisions (no fit)."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

from bbt_widget.core import options
from bbt_widget.outputs.headline import groups, headline


def _summary(order: list[str], claims: dict[tuple[str, str], str]) -> tuple[pd.DataFrame, ...]:
    """A summary and ranking of ``order`` (best first); ``claims[(a, b)]`` is the decision of
    the pair, a ranked above b; unnamed pairs carry no claim."""
    rows = [
        {"alg_a": a, "alg_b": b, "strong": claims.get((a, b), "no claim")}
        for a, b in itertools.combinations(order, 2)
    ]
    return pd.DataFrame(rows), pd.DataFrame({"algorithm": order})


def test_headline_names_the_equivalent_leaders_and_what_they_beat():
    order = ["lgbm", "rf", "xgb", "svm", "passive"]
    claims = {("lgbm", "rf"): "equivalent"}
    claims |= {(a, b): "a better" for a in ("lgbm", "rf") for b in ("xgb", "svm", "passive")}
    claims |= {("xgb", "passive"): "a better", ("svm", "passive"): "a better"}
    summary, ranking = _summary(order, claims)
    assert groups(summary, ranking, "strong") == [["lgbm", "rf"], ["xgb"], ["svm"], ["passive"]]
    assert headline(summary, ranking, "strong") == (
        "Under the strong interpretation, lgbm and rf are practically equivalent and each "
        "better than every other algorithm; then xgb, better than 1 of the 2 below it; then "
        "svm, better than every one below it; last, passive."
    )


def test_headline_without_claims_or_with_all_equivalent():
    summary, ranking = _summary(["a", "b", "c"], {})
    text = headline(summary, ranking, "strong")
    assert text.startswith("Under the strong interpretation, a is not claimed better than any")
    assert text.endswith("last, c.")
    equal = {p: "equivalent" for p in itertools.combinations("abc", 2)}
    summary, ranking = _summary(["a", "b", "c"], equal)
    assert headline(summary, ranking, "strong") == (
        "Under the strong interpretation, all 3 algorithms are practically equivalent."
    )


def test_headline_keeps_names_as_given_for_the_writers_to_escape():
    order = ["<b>x</b>", "a_b"]
    summary, ranking = _summary(order, {("<b>x</b>", "a_b"): "a better"})
    assert "<b>x</b> is better than every other algorithm; last, a_b." in headline(
        summary, ranking, "strong"
    )
    with pytest.raises(ValueError, match="interpretation"):
        headline(summary, ranking, "auto")


@pytest.mark.parametrize(
    ("given", "n", "rule", "requested", "words"),
    [
        ("auto", 16, "strong", False, "taken by default because with 16 algorithms"),
        ("auto", 10, "weak", False, "taken by default for 10 algorithms"),
        ("weak", 16, "weak", True, "as requested, although with 16 algorithms"),
        ("strong", 5, "strong", True, "as requested."),
    ],
)
def test_auto_interpretation_is_strong_beyond_ten_algorithms(given, n, rule, requested, words):
    got = options.resolve_interpretation(given, n)
    assert (got.rule, got.requested) == (rule, requested)
    assert words in got.reason
    assert ("as requested" in got.reason) == requested  # only when the user chose


def test_auto_is_the_default_and_other_values_are_refused():
    assert options.DEFAULT_INTERPRETATION == "auto"
    with pytest.raises(ValueError, match="interpretation must be one of 'auto', 'weak'"):
        options.resolve_interpretation("strongest", 3)
