"""The widget with data sets in groups (``BBTWidget(data, group="family")``): the group
selector, the views of one group, the pairs x groups decision heatmap and the errors.

The tests not marked ``stan`` run on a grouped result built by hand (known draws, no Stan);
the ``stan`` one checks a real grouped widget against ``bbt.fit(group=...)``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget import charts
from bbt_widget.charts.frames_decisions import flips_frame
from bbt_widget.charts.frames_groups import GROUP_CELLS, group_cells, group_cells_frame
from bbt_widget.charts.spec_cache import groups_spec
from bbt_widget.charts.specs_groups import groups_chart
from bbt_widget.core.draws import Draws
from bbt_widget.core.group_result import GroupedBBTResult
from bbt_widget.core.palette import SWEEP_DECISION_COLORS
from bbt_widget.core.result import BBTResult
from bbt_widget.widget import app
from bbt_widget.widget.app import BBTWidget
from bbt_widget.widget.checks import SettingRefused
from bbt_widget.widget.fitted import Fitted, fit_ranges
from bbt_widget.widget.groups_section import NO_PREVIEW_NOTE
from bbt_widget.widget.views import summary_spec

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "security"))
from hostile import HOSTILE

FIT_TIMEOUT = 900  # a first fit on a new machine compiles the group model


def results(
    algorithms: tuple[str, ...] = ("X", "Y", "Z"),
    families: tuple[str, ...] = ("A", "B"),
    n: int = 4,
    seed: int = 0,
) -> pd.DataFrame:
    """Wide by fold (2 folds), ``n`` data sets per family, a ``family`` column: the second
    algorithm beats the first in the first family and loses in the others."""
    rng = np.random.default_rng(seed)
    rows = []
    for k, family in enumerate(families):
        shift = 1.5 if k == 0 else -1.5
        for d in range(n):
            base = rng.normal(0, 1)
            for fold in range(2):
                row = {"db": f"{family}-{d}", "family": family, "fold": fold}
                for j, name in enumerate(algorithms):
                    row[name] = base - 0.5 * j + rng.normal(0, 0.3)
                row[algorithms[0]] -= shift / 2
                row[algorithms[1]] += shift / 2
                rows.append(row)
    return pd.DataFrame(rows)


def hand_made(
    algorithms: tuple[str, ...] = ("X", "Y", "Z"),
    groups: tuple[str, ...] = ("A", "B"),
    draws: int = 400,
) -> GroupedBBTResult:
    """A grouped result from known draws: pooled abilities 1, 0, -1, ...; in the first group
    the first two algorithms swap places, in the others they stay."""
    rng = np.random.default_rng(1)
    n = len(algorithms)
    pooled = np.linspace(1.0, -1.0, n)
    beta = pooled + rng.normal(0, 0.3, (2, draws, n))
    per_group = []
    for g in range(len(groups)):
        mu = pooled.copy()
        if g == 0:
            mu[[0, 1]] = mu[[1, 0]]
        per_group.append(mu + rng.normal(0, 0.2, (2, draws, n)))
    params = {
        "beta": beta,
        "beta_group": np.concatenate(per_group, axis=-1),
        "sigma": np.ones((2, draws)),
        "tau": np.ones((2, draws)),
    }
    pairs = [(a, b) for i, a in enumerate(algorithms) for b in algorithms[i + 1 :]]
    table = pd.DataFrame(
        {
            "alg1": [a for a, _ in pairs],
            "alg2": [b for _, b in pairs],
            "win1": 3.0,
            "win2": 1.0,
            "ties": 0.0,
        }
    )
    base = BBTResult(
        Draws(params=params, sampler={}, engine="pystan"),
        table,
        list(algorithms),
        {"ties": "spread", "model": "bbt_groups"},
        np.ones(len(table), dtype=bool),
    )
    tables = {g: table.copy() for g in groups}
    return GroupedBBTResult(base, groups, tables, {g: [f"{g}-0"] for g in groups})


def show(w: BBTWidget, result: BBTResult) -> None:
    """Show ``result`` as the widget's full fit (what a finished fit does, without Stan)."""
    w._fitted = Fitted(
        result=result,
        frames={},
        data={},
        data_json=b"{}",
        ranges=fit_ranges(result),
        badge={},
        audit={},
    )
    w._result_key = w._requested_key = ("by hand",)
    assert w._decisions.refresh(strict=True)


@pytest.fixture
def grouped() -> BBTWidget:
    w = BBTWidget(results(), dataset="db", fold="fold", group="family", autostart=False)
    yield w
    w.close()


def intervals(w: BBTWidget) -> pd.DataFrame:
    return pd.DataFrame(w.view_data["intervals"])


# ---------------------------------------------------------------------------- the core's view


def test_a_groups_view_summarises_that_groups_abilities() -> None:
    result = hand_made()
    for g in result.groups:
        view = result.in_group(g)
        summary = view.summary(rope=(0.4, 0.6), hdi=0.8)
        per = result.group_summary(rope=(0.4, 0.6), hdi=0.8)
        rows = per[per["group"] == g].drop(columns="group").reset_index(drop=True)
        pd.testing.assert_frame_equal(summary[rows.columns], rows)
        # pairs keep the pooled orientation, so a group's row reads as the pooled one does
        assert list(summary["pair"]) == list(result.summary()["pair"])
        ranking = result.group_ranking()
        ranking = ranking[ranking["group"] == g].drop(columns="group").reset_index(drop=True)
        pd.testing.assert_frame_equal(view.ranking(), ranking)
        assert view.win_table is result.group_tables[g]
    # the first group swaps X and Y: its view says so, the pooled summary does not
    assert result.in_group("A").pair("Y", "X")["weak"] == "a better"
    assert result.summary().set_index("pair").loc["X > Y", "weak"] == "a better"
    with pytest.raises(ValueError, match="unknown group 'C'"):
        result.in_group("C")


# ---------------------------------------------------------------------------- construction


def test_without_group_the_widget_is_unchanged() -> None:
    w = BBTWidget(results().drop(columns="family"), dataset="db", fold="fold", autostart=False)
    try:
        assert w.group_view == {} and w.selected_group is None
        assert w._previews is True and not w._groups.active
        assert "group" not in w.fit_settings
        assert w.algorithms == ["X", "Y", "Z"]
    finally:
        w.close()


def test_the_selector_offers_each_group_and_the_group_column_is_no_algorithm(
    grouped: BBTWidget,
) -> None:
    w = grouped
    assert w.algorithms == ["X", "Y", "Z"]  # "family" is not read as an algorithm
    assert w.group_view["groups"] == ["A", "B"]
    assert w.selected_group is None  # all data sets, pooled
    # the heatmap's spec reads its cells by name and has the three linking parameters
    spec = w.group_view["spec"]
    assert spec["data"] == {"name": GROUP_CELLS}
    assert {p["name"] for p in spec["params"]} == {"sel_pair", "sel_focus", "sel_group"}
    assert "https://" not in json.dumps(spec)
    # the group model has no preview: the full fit is the first thing shown
    assert w._previews is False


def test_davidson_ties_are_refused_beside_the_controls_without_a_fit(grouped: BBTWidget) -> None:
    w = grouped
    w.set_state({"ties": "davidson"})  # from the browser: refused, the reason beside it
    assert w.ties == "spread" and "ties" in w.input_errors
    assert "no tie parameter; use ties='spread', 'add' or 'forget' with group=" in w.message
    assert w._requested_key is None and w.fit_stats.get("started", 0) == 0
    w.ties = "spread"
    assert w.message == ""


def test_a_mapping_gives_the_groups_as_a_column_does() -> None:
    data = results()
    mapping = dict(zip(data["db"], data["family"]))
    w = BBTWidget(
        data.drop(columns="family"), dataset="db", fold="fold", group=mapping, autostart=False
    )
    try:
        assert w.group_view["groups"] == ["A", "B"]
    finally:
        w.close()


def _without(data: pd.DataFrame, dataset: str) -> dict[str, str]:
    return {d: f for d, f in zip(data["db"], data["family"]) if d != dataset}


@pytest.mark.parametrize(
    ("change", "kwargs", "match"),
    [
        (None, {"group": "familly"}, r"group='familly' is not a column .*columns: db, family"),
        (
            lambda d: d.drop(columns="family"),
            {"group": _without(results(), "B-2")},
            r"data sets with no group in the group mapping: 'B-2'; give every data set a group",
        ),
        (
            lambda d: d.assign(family="A"),
            {"group": "family"},
            r"every data set is in one group \('A'\) in column 'family'.*give at least two",
        ),
        (
            lambda d: d.assign(family=d["family"].where(d.index != 5)),
            {"group": "family"},
            r"column 'family' has no group for row 5 \(data set '[^']+'\); give every row its",
        ),
        (None, {"group": "family", "ties": "davidson"}, r"no tie parameter; use ties='spread'"),
        (None, {"group": 3}, r"group must name a column of the results or map each data set"),
    ],
)
def test_a_bad_grouping_is_refused_at_construction(change, kwargs, match) -> None:
    data = results()
    if change is not None:
        data = change(data)
    opened = len(app._OPEN)
    with pytest.raises(ValueError, match=match):
        BBTWidget(data, dataset="db", fold="fold", autostart=False, **kwargs)
    assert len(app._OPEN) == opened  # refused before it opened: no fit, no runner


# ---------------------------------------------------------------------------- the views


def test_choosing_a_group_shows_that_groups_decisions(grouped: BBTWidget) -> None:
    w, result = grouped, hand_made()
    show(w, result)
    pooled = result.summary()
    assert list(intervals(w)["pair"]) == list(pooled["pair"])
    assert intervals(w)["mean"].to_numpy() == pytest.approx(pooled["mean"].to_numpy())
    assert not w.headline.startswith("In group")
    fits = w.fit_stats.get("started", 0)

    w.selected_group = "A"
    per = result.group_summary()
    in_a = per[per["group"] == "A"].reset_index(drop=True)
    shown = intervals(w)
    assert list(shown["pair"]) == list(in_a["pair"])
    for column in ("mean", "low", "high"):
        assert shown[column].to_numpy() == pytest.approx(in_a[column].to_numpy()), column
    assert shown["decision"].iloc[0] == "Y better"  # X > Y turned round in group A
    pd.testing.assert_frame_equal(w.summary, result.in_group("A").summary())
    assert w.headline.startswith("In group A: ")
    assert w.message == "" and w.fit_stats.get("started", 0) == fits  # no fit
    # the ranking view (built in the background) is group A's, not the pooled one's
    assert w.wait_background(120)
    ranking_of = {
        g: summary_spec(result.in_group(g), (0.45, 0.55), 0.89, interpretation="weak")
        for g in ("A", "B")
    }
    assert w.summary_spec == ranking_of["A"] != ranking_of["B"]

    w.selected_group = None
    assert intervals(w)["mean"].to_numpy() == pytest.approx(pooled["mean"].to_numpy())
    assert not w.headline.startswith("In group")


def test_an_unknown_group_is_shown_as_a_problem_and_keeps_the_view(grouped: BBTWidget) -> None:
    w = grouped
    show(w, hand_made())
    w.selected_group = "B"
    before = w.view_data
    w.set_state({"selected_group": "C"})
    assert w.selected_group == "B"
    assert "selected_group = 'C' not applied (not one of the groups ('A', 'B')" in w.message
    assert w.view_data is before
    w.selected_group = None
    assert w.message == ""


def test_a_group_on_a_widget_without_groups_says_how_to_get_them() -> None:
    w = BBTWidget(results().drop(columns="family"), dataset="db", fold="fold", autostart=False)
    try:
        with pytest.raises(SettingRefused, match="not in groups; make it with group="):
            w.selected_group = "A"
    finally:
        w.close()


def test_the_heatmap_has_every_pair_pooled_and_by_group(grouped: BBTWidget) -> None:
    w, result = grouped, hand_made()
    show(w, result)
    cells = pd.DataFrame(w.group_view["cells"])
    expected = group_cells_frame(
        result.summary(),
        result.group_summary(),
        result.group_claims("weak")["status"],
        result.groups,
        "weak",
        0.89,
    )
    pd.testing.assert_frame_equal(cells, expected, check_dtype=False)
    assert len(cells) == 3 * 3  # 3 pairs x (pooled + 2 groups)
    assert list(cells.drop_duplicates("col")["column"]) == ["All (pooled)", "A", "B"]
    # X > Y changes between the groups: its row comes first and is marked
    first = cells[cells["order"] == 0]
    assert set(first["label"]) == {"X > Y"} and set(first["mark"]) == {"≠"}
    assert list(first["kind"]) == ["a better", "b better", "a better"]
    assert bool(first["changes"].all())
    # the interpretation recolours the cells (no fit): strong decisions now
    w.interpretation = "strong"
    cells = pd.DataFrame(w.group_view["cells"])
    strong = result.group_summary()["strong"]
    assert list(cells.loc[cells["col"] > 0, "kind"]) == list(strong)
    assert set(cells["interpretation"]) == {"strong"}


def test_the_heatmap_spec_draws_decisions_in_the_widgets_colours() -> None:
    result = hand_made()
    frame = group_cells_frame(
        result.summary(),
        result.group_summary(),
        result.group_claims()["status"],
        result.groups,
        "weak",
        0.89,
    )
    spec = groups_chart(frame, column=2).to_dict(validate=True)
    encoding = spec["encoding"]
    colors = {k: v for k, v in SWEEP_DECISION_COLORS.items() if k != "failed"}
    assert encoding["color"]["field"] == "kind"
    assert encoding["color"]["scale"] == {"domain": list(colors), "range": list(colors.values())}
    tooltips = {t["field"] for t in encoding["tooltip"]}
    assert {"label", "column", "decision", "mean", "interval", "hdi", "status"} <= tooltips
    assert encoding["y"]["field"] == "row" and encoding["y"]["sort"]["field"] == "order"
    assert encoding["x"]["sort"]["field"] == "col"
    assert {p["name"]: p["value"] for p in spec["params"]}["sel_group"] == 2
    rows = next(iter(spec["datasets"].values()))
    assert rows[0]["interval"] == f"[{rows[0]['low']:.3f}, {rows[0]['high']:.3f}]"
    # the standalone chart (for export) is this one, its data inlined, nothing highlighted
    assert frame.equals(group_cells(result))
    standalone = charts.group_decisions_chart(result, interpretation="strong").to_dict()
    assert standalone["encoding"] == spec["encoding"]
    assert {p["name"]: p["value"] for p in standalone["params"]} == {
        "sel_pair": "",
        "sel_focus": "",
        "sel_group": 0,
    }
    cells = next(iter(standalone["datasets"].values()))
    assert [c["kind"] for c in cells if c["col"] > 0] == list(result.group_summary()["strong"])
    # the cached spec of the widget is this chart with its data by name
    cached = groups_spec()
    assert cached["encoding"] == groups_chart(GROUP_CELLS).to_dict()["encoding"]


def test_the_heatmap_frame_refuses_tables_that_do_not_line_up() -> None:
    result = hand_made()
    per = result.group_summary()
    status = result.group_claims()["status"]
    with pytest.raises(ValueError, match="need 6 group rows and 3 statuses, got 4"):
        group_cells_frame(result.summary(), per.iloc[:4], status, result.groups, "weak", 0.9)
    with pytest.raises(ValueError, match="not in the pooled summary's pair order"):
        group_cells_frame(result.summary(), per.iloc[::-1], status, result.groups, "weak", 0.9)
    with pytest.raises(ValueError, match="interpretation must be 'weak' or 'strong'"):
        group_cells_frame(result.summary(), per, status, result.groups, "medium", 0.9)


# ---------------------------------------------------------------------------- hostile names

#: Group names as hostile as the algorithm names, and two that collide with the pooled column.
HOSTILE_GROUPS = ('<img src=x onerror="alert(1)">', "All (pooled)", "", "x\ny", "🚀" * 60)


def test_hostile_algorithm_and_group_names_stay_data() -> None:
    algorithms = tuple(HOSTILE[:6])
    result = hand_made(algorithms, HOSTILE_GROUPS, draws=100)
    frame = group_cells_frame(
        result.summary(),
        result.group_summary(),
        result.group_claims()["status"],
        result.groups,
        "weak",
        0.89,
    )
    n_pairs = len(algorithms) * (len(algorithms) - 1) // 2
    assert len(frame) == n_pairs * (len(HOSTILE_GROUPS) + 1)
    # one column per group and one row per pair, whatever the names: the group named like
    # the pooled column, and the empty one, are columns of their own
    headers = frame.drop_duplicates("col")["column"].tolist()
    assert len(set(headers)) == len(HOSTILE_GROUPS) + 1
    assert [h.rstrip("\u200b") for h in headers] == ["All (pooled)", *HOSTILE_GROUPS]
    assert frame["row"].nunique() == n_pairs == frame["key"].nunique()
    # the names travel as they are (the front end draws them as text)
    assert set(frame["alg_a"]) | set(frame["alg_b"]) == set(algorithms)
    spec = groups_chart(frame).to_dict(validate=True)
    json.dumps(spec)


def test_hostile_group_names_reach_the_selector_as_given() -> None:
    families = tuple(g for g in HOSTILE_GROUPS[:4] if g)  # a blank one is refused (below)
    data = results(algorithms=tuple(HOSTILE[:3]), families=families, n=2)
    w = BBTWidget(data, dataset="db", fold="fold", group="family", autostart=False)
    try:
        assert w.group_view["groups"] == list(families)
        w.selected_group = "All (pooled)"  # a group named so: chosen, not the pooled view
        assert w.message == ""
        w.set_state({"selected_group": "<b>"})
        assert "selected_group = '<b>' not applied (not one of the groups" in w.message
    finally:
        w.close()


def test_a_blank_group_name_is_refused_naming_its_data_set() -> None:
    # it would be a group printed as nothing in the selector, the heatmap and the report
    data = results(families=("A", ""), n=2)
    with pytest.raises(
        ValueError, match=r"the group name '' of data set '-0' in column 'family' is blank"
    ):
        BBTWidget(data, dataset="db", fold="fold", group="family", autostart=False)


# ---------------------------------------------------------------------------- a real fit

SAMPLER = {"chains": 2, "iter_warmup": 300, "iter_sampling": 300, "seed": 5}


@pytest.mark.stan
def test_a_grouped_widget_shows_what_fit_with_group_gives() -> None:
    """4 algorithms x 16 data sets in 2 families: the widget's heatmap cells, and the views of
    a chosen group, are those of ``bbt.fit(..., group="family")`` on the same data and seed."""
    data = results(algorithms=("W", "X", "Y", "Z"), n=8, seed=3)
    w = BBTWidget(data, dataset="db", fold="fold", group="family", **SAMPLER)
    said: list[str] = []
    w.observe(lambda change: said.append(change["new"]), names=["status_text"])
    try:
        assert w.wait(FIT_TIMEOUT), (w.status_text, w.error)
        # no preview: the status line said so while the chains ran
        assert any(text.endswith(NO_PREVIEW_NOTE) for text in said), said
        direct = bbt.fit(data, **w.fit_settings)  # what the widget fitted: group= too
        assert w.fit_settings["group"] == "family"
        assert isinstance(w.result, GroupedBBTResult)
        assert w.preview is False and w._preview_runner.stats.get("started", 0) == 0
        expected = group_cells_frame(
            direct.summary(),
            direct.group_summary(),
            direct.group_claims("weak")["status"],
            direct.groups,
            "weak",
            0.89,
        )
        cells = pd.DataFrame(w.group_view["cells"])
        pd.testing.assert_frame_equal(cells, expected, check_dtype=False)
        # the families disagree on W vs X: that pair is first, marked as changing
        first = cells[cells["order"] == 0]
        assert set(first["label"]) == {"W > X"} and set(first["mark"]) == {"≠"}

        w.selected_group = "B"
        per = direct.group_summary()
        in_b = per[per["group"] == "B"].reset_index(drop=True)
        assert list(intervals(w)["pair"]) == list(in_b["pair"])
        assert intervals(w)["mean"].to_numpy() == pytest.approx(in_b["mean"].to_numpy())
        assert w.headline.startswith("In group B: ")
        assert w.wait_background(120)
        assert w.summary_spec  # the ranking view of group B was drawn
    finally:
        w.close()


# ---------------------------------------------------------------------------- the other views


def test_the_sweep_of_a_grouped_widget_sweeps_the_group_model(grouped: BBTWidget) -> None:
    """The robustness sweep gets ``group=`` (it swept the model without groups, on the data
    without the group column) and a default grid without Davidson ties."""
    w = grouped
    sent: list[dict] = []
    w._sweep_runner.submit = lambda key, options: sent.append(options)  # no fits here
    w.run_sweep()
    assert sent[0]["group"] == "family"
    assert sent[0]["grid"]["ties"] == ["spread", "add", "forget"]
    # a mapping travels as given, for bbt.sweep(group=mapping) to read
    data = results()
    mapping = dict(zip(data["db"], data["family"]))
    w2 = BBTWidget(
        data.drop(columns="family"), dataset="db", fold="fold", group=mapping, autostart=False
    )
    try:
        w2._sweep_runner.submit = lambda key, options: sent.append(options)
        w2.run_sweep()
        assert sent[1]["group"] == mapping
    finally:
        w2.close()


def test_the_influence_of_a_grouped_widget_is_not_started_and_says_why(
    grouped: BBTWidget,
) -> None:
    """``bbt.influence`` refuses the group model: the widget says so beside the kept views and
    starts no influence computation (it started one, which failed with the core's error)."""
    w = grouped
    result = hand_made()
    show(w, result)
    before = w.view_data
    w.selected_pair = charts.pair_key("X", "Y")
    assert w.influence_text.startswith("influence is not computed for the group model: ")
    assert "without group=" in w.influence_text
    assert w._influence_runner.stats.get("started", 0) == 0 and not w._influence_runner.busy
    said = w.influence_text
    assert w.wait_background(60)
    assert w.influence_text == said and w.influence is None
    shown = pd.DataFrame(w.influence_data)
    assert list(shown["note"]) == ["influence is not computed for the group model"]
    # the decisions stay as they were, with no error
    assert w.view_data is before and w.error == "" and w.message == ""
    # the core refuses it, as the note says
    with pytest.raises(ValueError, match="influence does not follow the group model"):
        bbt.influence(result)


@pytest.mark.slow
def test_the_ranking_model_and_ttest_of_a_grouped_widget_say_they_pool_the_groups() -> None:
    """Mallows (and Plackett-Luce) and the correlated t-test have no groups: they run on all
    data sets pooled, and their views say so."""
    import altair as alt

    from bbt_widget.baselines import bayesian_signed_rank, correlated_ttest
    from bbt_widget.widget.controls import TTEST_ROPE

    data = results()
    w = BBTWidget(
        data,
        dataset="db",
        fold="fold",
        group="family",
        autostart=False,
        rho=0.5,
        seed=5,
        chains=2,
        iter_warmup=500,
        iter_sampling=500,
    )
    try:
        show(w, hand_made())
        w.selected_group = "A"
        w.ranking_model = "mallows"
        assert w.wait_background(300), w.ranking_model_text
        assert w.ranking_model_text.startswith(
            "Mallows pools all data sets (it ignores the groups)"
        )
        assert w.ranking_model_spec and w.mallows is not None
        # fitted to every data set's ranking: the same as Mallows on the results pooled
        expected = bbt.ranking_model(
            data.drop(columns="family"),
            dataset="db",
            fold="fold",
            model="mallows",
            chains=2,
            iter_warmup=500,
            iter_sampling=500,
            seed=5,
        )
        pd.testing.assert_frame_equal(w.mallows.ranking, expected.ranking)

        w.selected_pair = charts.pair_key("X", "Y")
        w.clicked_dataset = "A-0"
        assert w.wait_background(120), w.ttest_text
        assert "the signed-rank test pools all data sets (it ignores the groups)" in w.ttest_text
        assert w.ttest_spec
        # this data set's t-test and the signed-rank test of every data set, groups ignored
        pooled = data.drop(columns="family")
        layout = {"dataset": "db", "fold": "fold", "a": "X", "b": "Y", "rope": TTEST_ROPE}
        test = correlated_ttest(pooled, **layout, on="A-0", rho=0.5)
        bsr = bayesian_signed_rank(pooled, **layout, seed=5)
        expected = alt.hconcat(test.chart("A-0"), bsr.simplex(), spacing=30).to_dict(validate=False)
        expected.pop("$schema", None)
        assert w.ttest_spec == expected
    finally:
        w.close()


def test_several_metrics_with_groups_are_refused_before_anything_is_shown() -> None:
    data = results()
    long = data.melt(id_vars=["db", "family", "fold"], value_vars=["X", "Y", "Z"], var_name="alg")
    long = long.assign(acc=long["value"], f1=-long["value"]).drop(columns="value")
    opened = len(app._OPEN)
    with pytest.raises(ValueError, match=r"group=\) for one score; .*bbt.compare_metrics"):
        BBTWidget(
            long, dataset="db", algorithm="alg", fold="fold", score=["acc", "f1"], group="family"
        )
    assert len(app._OPEN) == opened  # refused before it opened: no fit, no runner


@pytest.mark.stan
def test_a_grouped_sweep_shows_pooled_flips_and_the_chosen_groups() -> None:
    """A real sweep of the group model through the widget: the flips chart is the pooled
    abilities' decisions, and the chosen group's (``GroupedSweepResult.group_table``) when
    the group selector names one; the summary line says whose."""
    from bbt_widget.lab.sweep_groups import GroupedSweepResult

    data = results(n=5, seed=2)
    w = BBTWidget(
        data,
        dataset="db",
        fold="fold",
        group="family",
        autostart=False,
        sweep_options={
            "grid": {"ties": ["spread", "add"]},
            "chains": 2,
            "iter_warmup": 200,
            "iter_sampling": 200,
            "seed": 3,
        },
    )
    try:
        show(w, hand_made())
        w.run_sweep()
        assert w.wait_background(FIT_TIMEOUT), w.sweep_text
        assert w.sweep_status == "done", w.sweep_text
        sweep = w.sweep
        assert isinstance(sweep, GroupedSweepResult) and sweep.groups == ["A", "B"]
        assert sweep.n_failed == 0
        labels = list(sweep.setting_labels())
        rope, hdi = (w.rope_low, w.rope_high), w.hdi
        pooled = flips_frame(sweep.table(rope=rope, hdi=hdi), labels, "weak")
        pd.testing.assert_frame_equal(pd.DataFrame(w.sweep_data), pooled, check_dtype=False)
        assert "(group model, pooled abilities)" in w.sweep_text
        # the same as bbt.sweep(group=) on the caller's data and the same options
        direct = bbt.sweep(data, dataset="db", fold="fold", group="family", **w.sweep_options)
        pd.testing.assert_frame_equal(direct.group_frame, sweep.group_frame)

        w.selected_group = "A"
        rows = sweep.group_table(rope=rope, hdi=hdi)
        in_a = rows[rows["group"] == "A"].drop(columns="group").reset_index(drop=True)
        expected = flips_frame(in_a, labels, "weak")
        pd.testing.assert_frame_equal(pd.DataFrame(w.sweep_data), expected, check_dtype=False)
        assert "in group A (group model)" in w.sweep_text
        flipped = set(sweep.group_flips("weak").query("group == 'A'")["pair"])
        shown = pd.DataFrame(w.sweep_data)
        assert set(shown.loc[shown["flips"], "label"].str.replace("\u200b", "")) == flipped
        w.selected_group = None
        pd.testing.assert_frame_equal(pd.DataFrame(w.sweep_data), pooled, check_dtype=False)
    finally:
        w.close()


def test_every_decision_in_the_heatmap_legend_has_a_visible_swatch() -> None:
    """ "not compared" is white: without an outline its legend swatch was white on white (the
    legend took the cells' white separating stroke), a label with nothing beside it."""
    import re

    vlc = pytest.importorskip("vl_convert")
    result = hand_made()
    frame = group_cells_frame(
        result.summary(),
        result.group_summary(),
        result.group_claims()["status"],
        result.groups,
        "weak",
        0.89,
    )
    svg = vlc.vegalite_to_svg(groups_chart(frame).to_dict())
    legend = svg[svg.index('aria-label="Symbol legend titled') :]
    swatches = re.findall(
        r'role-legend-symbol[^>]*><path[^>]*fill="([^"]+)" stroke="([^"]+)"', legend
    )
    labels = re.findall(r"role-legend-label[^>]*><text[^>]*>([^<]+)</text>", legend)
    drawn = dict(zip(labels, swatches, strict=True))
    colours = {k: v for k, v in SWEEP_DECISION_COLORS.items() if k != "failed"}
    assert list(drawn) == list(colours)
    for label, (fill, stroke) in drawn.items():
        assert fill == colours[label], label
        # an outline that shows on the white background, whatever the fill
        assert stroke.lower() not in ("#ffffff", "#fff", "white", "none", "transparent"), label
