"""The highlighted pair's panel (widget/pair_panel.py) and the per-data-set counter under it
(core/wintable.dataset_outcomes): its counts are the win table's, before and after the local
ROPE; the counts given to the model are the fitted table's; hostile names pass as data."""

from __future__ import annotations

import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget.charts.pairs import pair_key
from bbt_widget.core.data import as_tidy
from bbt_widget.core.wintable import apply_ties, count_wins, dataset_outcomes
from bbt_widget.widget.pair_panel import pair_panel

HOSTILE = "<img src=x onerror=alert(1)>"
RTL = "\u202eevil"


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
    result = bbt.fit(data, dataset="db", d_min=0.4, engine="numpy", seed=1)
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
    assert "Sec. 6.1" in panel["note"] and "Sec. 6.2" in panel["note"]


def test_the_panel_without_a_pair_a_result_or_per_data_set_results(base: pd.DataFrame):
    result = bbt.fit(base, dataset="db", engine="numpy", seed=1)
    assert pair_panel(None, pair_key("dt", "lda")) == {}
    assert pair_panel(result, "") == {}
    assert pair_panel(result, "not json") == {}
    assert pair_panel(result, pair_key("dt", "nope")) == {}
    off = pair_panel(result, pair_key("dt", "lda"))
    assert not off["local_rope"] and "Local ROPE off" in off["note"]
    assert off["before"] == off["after"]
    table = bbt.win_table(base, dataset="db")[["alg1", "alg2", "win1", "win2", "ties"]]
    given = bbt.fit(table, engine="numpy", seed=1)
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
