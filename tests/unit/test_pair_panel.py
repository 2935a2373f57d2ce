"""The highlighted pair's panel (widget/pair_panel.py) and the per-data-set counter under it
(core/wintable.dataset_outcomes): its counts are the win table's, before and after the local
ROPE; the counts given to the model are the fitted table's; hostile names pass as data."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget.charts.pairs import pair_key
from bbt_widget.core.data import as_tidy
from bbt_widget.core.options import TIE_POLICIES
from bbt_widget.core.terms import TERMS, TIE_RULES
from bbt_widget.core.wintable import OUTCOMES, apply_ties, count_wins, dataset_outcomes
from bbt_widget.widget.pair_panel import decimals_apart, pair_panel, tie_arithmetic
from bbt_widget.widget.pairs_section import PairsSection

pytestmark = pytest.mark.filterwarnings("ignore::bbt_widget.DiagnosticsWarning")

HOSTILE = "<img src=x onerror=alert(1)>"
RTL = "\u202eevil"

#: A short fit: the panel reads the fitted win table and the ranking, not the draws' detail
#: (so short chains may miss the ESS targets).
FAST = {"engine": "numpy", "seed": 1, "draws": "fixed", "iter_warmup": 20, "iter_sampling": 50}


@pytest.fixture(scope="module")
def fitted() -> Callable[..., bbt.BBTResult]:
    """Fits of the paper's base results with the settings given, each made once."""
    base = bbt.datasets.load_base()
    made: dict[tuple[tuple[str, Any], ...], bbt.BBTResult] = {}

    def fit(**settings: Any) -> bbt.BBTResult:
        key = tuple(sorted(settings.items()))
        if key not in made:
            made[key] = bbt.fit(base, dataset="db", **FAST, **settings)
        return made[key]

    return fit


@pytest.mark.parametrize(
    "counting",
    [
        {},
        {"d_min": 0.4},
        {"d_min": 0.4, "paired": False},
        {"tie_threshold": 0.01},
    ],
)
def test_dataset_outcomes_add_up_to_the_win_table(base: pd.DataFrame, counting: dict):
    tidy = as_tidy(base, dataset="db")
    table = count_wins(tidy, **counting).set_index(["alg1", "alg2"])
    for a, b in [("dt", "lda"), ("xgb", "lgbm"), ("svm", "dt")]:
        outcomes = dataset_outcomes(tidy, a, b, **counting)
        assert outcomes["dataset"].tolist() == list(tidy.datasets)
        counts = outcomes["outcome"].value_counts()
        row = table.loc[(a, b)] if (a, b) in table.index else None
        if row is None:  # stored the other way round
            row = table.loc[(b, a)].rename({"win1": "win2", "win2": "win1"})
        assert counts.get("a wins", 0) == row["win1"]
        assert counts.get("b wins", 0) == row["win2"]
        assert counts.get("tie", 0) == row["ties"]


def test_dataset_outcomes_give_the_means_as_given_for_a_lower_is_better_metric(
    base: pd.DataFrame,
):
    error = base.copy()
    error[["dt", "lda"]] = 1 - error[["dt", "lda"]]
    tidy = as_tidy(error, dataset="db", lower_is_better=True)
    outcomes = dataset_outcomes(tidy, "dt", "lda")
    means = error.groupby("db", sort=False)[["dt", "lda"]].mean()
    given = means.loc[outcomes["dataset"]]
    assert outcomes["mean_a"].to_numpy() == pytest.approx(given["dt"].to_numpy())
    assert outcomes["mean_b"].to_numpy() == pytest.approx(given["lda"].to_numpy())
    # the lower error wins
    lower = outcomes["mean_a"] < outcomes["mean_b"]
    assert (outcomes.loc[lower, "outcome"] == "a wins").all()


def test_dataset_outcomes_refuse_unknown_or_equal_algorithms(base: pd.DataFrame):
    tidy = as_tidy(base, dataset="db")
    with pytest.raises(ValueError, match="not one of the algorithms"):
        dataset_outcomes(tidy, "dt", "nope")
    with pytest.raises(ValueError, match="two different algorithms"):
        dataset_outcomes(tidy, "dt", "dt")


def test_the_panel_counts_before_and_after_the_local_rope_and_the_model(base: pd.DataFrame):
    data = base.rename(columns={"dt": HOSTILE, "lda": RTL})
    data["db"] = data["db"].replace({"biomed": HOSTILE})
    result = bbt.fit(data, dataset="db", d_min=0.4, **FAST)
    panel = pair_panel(result, pair_key(HOSTILE, RTL))
    # the better ranked first, names as they are (the front end shows them as text)
    assert {panel["a"], panel["b"]} == {HOSTILE, RTL}
    assert HOSTILE in [row["dataset"] for row in panel["rows"]]
    tidy = result.tidy
    means = count_wins(tidy).set_index(["alg1", "alg2"])
    local = count_wins(tidy, d_min=0.4).set_index(["alg1", "alg2"])
    a, b = panel["a"], panel["b"]
    for name, table in (("before", means), ("after", local)):
        row = table.loc[(a, b)] if (a, b) in table.index else table.loc[(b, a)]
        first = (a, b) in table.index
        assert panel[name] == {
            "a": int(row["win1"] if first else row["win2"]),
            "b": int(row["win2"] if first else row["win1"]),
            "ties": int(row["ties"]),
        }
    # the tie policy (spread) applied to the counts after the local ROPE: the model's counts
    raw = pd.DataFrame(
        {"alg1": [a], "alg2": [b], **{k: [v] for k, v in panel["after"].items() if k != "ties"}}
    ).rename(columns={"a": "win1", "b": "win2"})
    raw["ties"] = panel["after"]["ties"]
    spread = apply_ties(raw, "spread").iloc[0]
    assert panel["model"] == {"a": spread["win1"], "b": spread["win2"], "ties": 0}
    # the data sets the local ROPE made ties: a tie after it, not on the means
    new = [r["dataset"] for r in panel["rows"] if r["new_tie"]]
    assert new == [
        r["dataset"] for r in panel["rows"] if r["after"] == "tie" and r["before"] != "tie"
    ]
    assert f"{len(new)} of {len(panel['rows'])} data sets became ties" in panel["note"]
    assert "Sec. 6.1" in panel["note"] and "Sec. 6.2" in panel["arithmetic"]


def test_the_panel_without_a_pair_a_result_or_per_data_set_results(
    base: pd.DataFrame, fitted: Callable[..., Any]
):
    result = fitted()
    assert pair_panel(None, pair_key("dt", "lda")) == {}
    assert pair_panel(result, "") == {}
    assert pair_panel(result, "not json") == {}
    assert pair_panel(result, pair_key("dt", "nope")) == {}
    off = pair_panel(result, pair_key("dt", "lda"))
    assert not off["local_rope"] and "Local ROPE off" in off["note"]
    assert off["before"] == off["after"]
    table = bbt.win_table(base, dataset="db")[["alg1", "alg2", "win1", "win2", "ties"]]
    given = bbt.fit(table, **FAST)
    panel = pair_panel(given, pair_key("dt", "lda"))
    assert "win table" in panel["problem"] and "rows" not in panel
    assert panel["model"]["a"] + panel["model"]["b"] > 0


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore")
def test_the_panel_of_one_group_counts_that_groups_data_sets(base: pd.DataFrame):
    names = list(base["db"].unique())
    groups = {name: ("A" if i % 2 else "B") for i, name in enumerate(names)}
    result = bbt.fit(base, dataset="db", group=groups, engine="numpy", seed=1)
    view = result.in_group("A")
    panel = pair_panel(view, pair_key("xgb", "lgbm"))
    assert [r["dataset"] for r in panel["rows"]] == [n for n in names if groups[n] == "A"]
    # the group's own win table: the counts after the tie policy of the group's data sets
    after = panel["after"]
    assert panel["model"]["a"] + panel["model"]["b"] == (
        after["a"] + after["b"] + 2 * ((after["ties"] + 1) // 2)
    )


def test_the_means_show_the_digits_that_tell_the_winner(fitted: Callable[..., Any]):
    # buggyCrx, xgb vs lgbm: 0.866640 vs 0.866632, both "0.8666" at 4 decimals, yet xgb wins
    result = fitted()
    panel = pair_panel(result, pair_key("xgb", "lgbm"))
    rows = {r["dataset"]: r for r in panel["rows"]}
    crx = rows["buggyCrx"]
    assert crx["before"] != "tie" and crx["digits"] == 5
    assert f"{crx['mean_a']:.5f}" != f"{crx['mean_b']:.5f}"
    # every data set won on the means prints two different means; equal means keep 4 digits
    for row in panel["rows"]:
        digits = row["digits"]
        shown = {f"{row['mean_a']:.{digits}f}", f"{row['mean_b']:.{digits}f}"}
        assert len(shown) == (1 if row["before"] == "tie" else 2), row
        if row["reason"] == "equal means \u2192 tie":
            assert digits == 4  # 0.9613793103448276 vs ...273 is rounding, not a winner
    assert rows["breast_w"]["reason"] == "equal means \u2192 tie"
    assert all(r["effect"] == "" for r in panel["rows"])  # no local ROPE, no effect size
    with_rope = pair_panel(fitted(d_min=0.4, paired=True), pair_key("xgb", "lgbm"))
    # equal means have no effect: 0, whether the folds differ (breast_w) or agree (clean1)
    effects = {r["dataset"]: r["effect"] for r in with_rope["rows"]}
    assert effects["breast_w"] == effects["clean1"] == "0.00"
    assert decimals_apart(0.5, 0.25, 4) == 4 and decimals_apart(1.0, 1.0, 4) == 4


def _hand_effect(base: pd.DataFrame, dataset: str, a: str, b: str, paired: bool) -> float:
    folds = base[base["db"] == dataset]
    if paired:  # d_z: mean over SD of the fold differences (Eq. 6)
        d = folds[a] - folds[b]
        return float(d.mean() / d.std(ddof=1))
    pooled = math.sqrt((folds[a].var(ddof=1) + folds[b].var(ddof=1)) / 2)  # Eq. 4
    return float((folds[a].mean() - folds[b].mean()) / pooled)


@pytest.mark.parametrize("paired", [True, False])
def test_the_effect_size_is_the_one_the_counts_were_made_with(
    base: pd.DataFrame, fitted: Callable[..., Any], paired: bool
):
    d_min = 0.4
    result = fitted(d_min=d_min, paired=paired)
    tidy = result.tidy
    for a, b in [("xgb", "lgbm"), ("lgbm", "svm"), ("dt", "lda")]:
        panel = pair_panel(result, pair_key(a, b))
        a, b = panel["a"], panel["b"]
        outcomes = dataset_outcomes(tidy, a, b, d_min=d_min, paired=paired)
        # the core's effect decides the core's counts: beyond d_min a win, within it a tie
        effect = outcomes["effect"].abs()
        wins = outcomes["outcome"].isin(OUTCOMES[:2])
        decided = effect.notna() & ~outcomes["equal"]
        assert ((effect > d_min) == wins)[decided].all()
        for row, (_, got) in zip(panel["rows"], outcomes.iterrows(), strict=True):
            if not row["effect"] or got["equal"]:
                continue
            hand = abs(_hand_effect(base, row["dataset"], a, b, paired))
            assert float(row["effect"]) == pytest.approx(hand, abs=0.006), row
            assert got["effect"] * np.sign(got["difference"]) == pytest.approx(hand, rel=1e-9)
            # d_min with the decimals that tell it from the effect: 0.395 <= 0.400
            said = re.fullmatch(
                r"effect (\S+) (\u2264|>) d_min 0\.40*( \u2192 tie)?", row["reason"]
            )
            assert said, row
            assert said.group(1) == row["effect"]
            assert (said.group(2) == "\u2264") == (row["after"] == "tie") == bool(said.group(3))
        # the rows' outcomes are the fitted table's counts
        assert panel["after"]["ties"] == sum(r["after"] == "tie" for r in panel["rows"])


def test_a_tie_under_the_tie_threshold_says_so(fitted: Callable[..., Any]):
    result = fitted(tie_threshold=0.005)
    panel = pair_panel(result, pair_key("xgb", "svm"))
    rows = {r["dataset"]: r for r in panel["rows"]}
    # vote: 0.958673 vs 0.956316, 0.0024 apart
    assert rows["vote"]["reason"] == "difference 0.0024 \u2264 tie threshold 0.0050 \u2192 tie"
    assert rows["corral"]["reason"] == "equal means \u2192 tie"
    assert rows["colic"]["reason"] == "difference 0.1739 > tie threshold 0.0050"
    assert all(r["effect"] == "" for r in panel["rows"])  # no local ROPE, no effect size


def test_the_tie_arithmetic_by_hand():
    spread = tie_arithmetic("spread", {"a": 12, "b": 3, "ties": 67})
    assert spread["given"] == {"a": 46, "b": 37, "ties": 0}
    assert "67 ties \u2192 33.5 to each side, rounded up to 34" in spread["text"]
    assert "12 + 34 = 46 and 3 + 34 = 37 wins" in spread["text"]
    even = tie_arithmetic("spread", {"a": 2, "b": 1, "ties": 4})["text"]
    assert "4 ties \u2192 2 to each side: the model is given 2 + 2 = 4 and 1 + 2 = 3" in even
    assert "rounded" not in even.split(": ", 1)[1]


@pytest.mark.parametrize("ties", TIE_POLICIES)
def test_the_tie_arithmetic_is_what_the_model_is_given(fitted: Callable[..., Any], ties: str):
    result = fitted(d_min=0.4, ties=ties)
    panel = pair_panel(result, pair_key("xgb", "lgbm"))
    after, model = panel["after"], panel["model"]
    t = after["ties"]
    assert t > 0  # the pair has ties to share out (13 in the paper's base results)
    text = panel["arithmetic"]
    # the glossary's words for the policy, one text for both
    assert f"Tie policy {ties} (Sec. 6.2) = {TIE_RULES[ties]}: " in text
    assert f"{ties} = {TIE_RULES[ties]}" in TERMS["ties"].text
    numbers = [int(n) for n in re.findall(r"\d+", text.split(": ", 1)[1].replace("6.2", ""))]
    if ties == "spread":
        share = math.ceil(t / 2)
        assert model == {"a": after["a"] + share, "b": after["b"] + share, "ties": 0}
        rounded = f", rounded up to {share}" if t % 2 else ""  # 12 ties here: 6 each
        assert f"{t} ties \u2192 {t / 2:g} to each side{rounded}: " in text
    elif ties == "add":
        share = t
        assert model == {"a": after["a"] + t, "b": after["b"] + t, "ties": 0}
        assert f"{t} ties \u2192 all {t} to each side" in text
    elif ties == "forget":
        assert model == {"a": after["a"], "b": after["b"], "ties": 0}
        assert text.endswith(f"dropped: the model is given {model['a']} and {model['b']} wins.")
    else:
        assert model == after
        assert text.endswith(
            f"kept: the model is given {model['a']} and {model['b']} wins and {t} ties."
        )
    if ties in ("spread", "add"):
        sums = f"{after['a']} + {share} = {model['a']} and {after['b']} + {share} = {model['b']}"
        assert sums in text
    assert numbers[0] == t


def test_what_a_change_of_d_min_did_to_the_pair(fitted: Callable[..., Any]):
    key = pair_key("xgb", "lgbm")
    off, on = fitted(), fitted(d_min=0.4, paired=True)
    first = pair_panel(off, key)
    assert first["changed"] == {}
    panel = pair_panel(on, key, first)
    changed = panel["changed"]
    assert changed["settings"] == [["d_min", "off", "0.4"]]  # paired: no word while off
    # the moves are the data sets whose outcome the local ROPE changed, by the core's count
    was = {r["dataset"]: r["after"] for r in first["rows"]}
    flip = {"a": "b", "b": "a"} if first["a"] != panel["a"] else {}
    expected: dict[tuple[str, str], int] = {}
    for row in panel["rows"]:
        old = flip.get(was[row["dataset"]], was[row["dataset"]])
        if old != row["after"]:
            expected[(old, row["after"])] = expected.get((old, row["after"]), 0) + 1
    assert {(m[0], m[1]): m[2] for m in changed["moves"]} == expected
    assert sum(expected.values()) > 0 and all(now == "tie" for _, now in expected)
    assert sum(n for _, _, n in changed["moves"]) == sum(r["new_tie"] for r in panel["rows"])
    # the same settings again keep the line; another pair has none; back to off says so
    assert pair_panel(on, key, panel)["changed"] == changed
    assert pair_panel(on, pair_key("dt", "lda"), panel)["changed"] == {}
    back = pair_panel(off, key, panel)["changed"]
    assert back["settings"] == [["d_min", "0.4", "off"]]
    assert all(was == "tie" for was, _, _ in back["moves"])
    # the widget's section hands the panel shown before to the next one
    section = PairsSection.__new__(PairsSection)
    section.w = SimpleNamespace(selected_pair=key, pair_panel={})
    section.result = off
    section.update_panel()
    section.result = on
    section.update_panel()
    assert section.w.pair_panel["changed"] == changed
