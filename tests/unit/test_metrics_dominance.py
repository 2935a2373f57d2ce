"""Several metrics at once without Stan: the checks of ``compare_metrics`` (before any fit),
and the decisions, dominance and Pareto set of a ``MetricsResult`` whose fits have made-up
draws with a known structure (the real fits are in tests/stan/test_compare_metrics.py)."""

from __future__ import annotations

from xml.etree import ElementTree

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget.core.bidi import FSI, PDI
from bbt_widget.core.draws import Draws
from bbt_widget.fitting import prepare_fit
from bbt_widget.lab import metrics as metrics_module
from bbt_widget.lab.metrics import MetricsResult, dominance_table, pareto_set


def _long(n: int = 6) -> pd.DataFrame:
    """Long-form results: n data sets x algorithms A, B, C, columns acc, f1, time."""
    rows = []
    for d in range(n):
        for alg, acc, f1, time in (
            ("A", 0.9, 0.8, 1.0),
            ("B", 0.8, 0.8, 1.0),
            ("C", 0.85, 0.9, 2.0),
        ):
            rows.append({"db": f"d{d}", "alg": alg, "acc": acc + d / 100, "f1": f1, "time": time})
    return pd.DataFrame(rows)


def _result(data: pd.DataFrame, metric: str, abilities: dict[str, float]) -> bbt.BBTResult:
    """A result of ``metric``'s prepared fit whose draws put each ability at the given value
    (spread 0.01): P(a > b) is then logistic(beta_a - beta_b) within a hair."""
    job = prepare_fit(
        data, dataset="db", algorithm="alg", score=metric, ties="spread", size=(2, 200)
    )
    rng = np.random.default_rng(0)
    centre = np.array([abilities[a] for a in job.algorithms])
    beta = centre + rng.normal(0, 0.01, size=(2, 200, len(centre)))
    pairs = int(job.stan_data["n_pairs"])
    draws = Draws(
        params={
            "beta": beta,
            "sigma": np.ones((2, 200)),
            "win1_rep": np.zeros((2, 200, pairs)),
            "log_lik": np.zeros((2, 200, pairs)),
        },
        sampler={},
        engine="pystan",
    )
    run = {"chains": 2, "iter_warmup": 200, "iter_sampling": 200, "seed": 1}
    result = job.result(draws, {**run, "adapt_delta": 0.8, "max_treedepth": 10})
    # the conditional estimates integrate the data's likelihood given the other draws: exact
    # for posterior draws, meaningless for made-up ones, whose indicators are the point here
    result.conditional_draws = None
    return result


@pytest.fixture
def known() -> MetricsResult:
    """acc: A > C > B (clear); f1: C > A = B (A and B equivalent); time (lower is better):
    A = B, both better than C. So A dominates B (better on acc, worse on nothing); A and C,
    C and B each win somewhere: the Pareto set is {A, C}."""
    data = _long()
    return MetricsResult(
        {
            "acc": _result(data, "acc", {"A": 2.0, "B": -2.0, "C": 0.0}),
            "f1": _result(data, "f1", {"A": -1.0, "B": -1.0, "C": 2.0}),
            "time": _result(data, "time", {"A": 1.0, "B": 1.0, "C": -2.0}),
        },
        ["acc", "f1", "time"],
        ["time"],
    )


def test_decisions_are_a_pair_by_metric_table(known):
    got = known.decisions("weak").set_index("pair")
    assert list(got.columns) == ["alg_a", "alg_b", "acc", "f1", "time"]
    assert got.loc["A > B"].tolist() == ["A", "B", "a better", "equivalent", "equivalent"]
    assert got.loc["A > C"].tolist() == ["A", "C", "a better", "b better", "a better"]
    assert got.loc["B > C"].tolist() == ["B", "C", "b better", "b better", "a better"]


def test_dominance_and_the_pareto_set_of_a_known_structure(known):
    dom = known.dominance("weak").set_index(["alg_a", "alg_b"])
    assert len(dom) == 6  # every ordered pair
    assert dom.loc[("A", "B")].tolist() == [["acc"], [], True]
    assert dom.loc[("B", "A")].tolist() == [[], ["acc"], False]
    assert dom.loc[("A", "C")].tolist() == [["acc", "time"], ["f1"], False]
    assert dom.loc[("C", "B")].tolist() == [["acc", "f1"], ["time"], False]
    assert dom["dominates"].sum() == 1
    assert known.pareto("weak") == ["A", "C"]
    assert known.pareto() == ["A", "C"]  # "auto" is the weak rule for 3 algorithms


def test_no_claim_and_missing_count_on_neither_side():
    decisions = pd.DataFrame(
        {
            "pair": ["x > y", "x > z", "y > z"],
            "alg_a": ["x", "x", "y"],
            "alg_b": ["y", "z", "z"],
            "m1": ["a better", "no claim", "b better"],
            "m2": ["no claim", "missing", "failed"],
        }
    )
    dom = dominance_table(decisions, ["m1", "m2"]).set_index(["alg_a", "alg_b"])
    assert dom.loc[("x", "y"), "dominates"] and dom.loc[("z", "y"), "dominates"]
    assert not dom.loc[("x", "z"), "dominates"] and not dom.loc[("z", "x"), "dominates"]
    assert pareto_set(dom.reset_index(), ["x", "y", "z"]) == ["x", "z"]


def test_rankings_and_chart_mark_the_pareto_set(known):
    ranks = known.rankings()
    assert list(ranks["metric"].unique()) == ["acc", "f1", "time"]
    assert ranks.groupby("metric").size().tolist() == [3, 3, 3]
    spec = known.chart("weak").to_dict()
    assert "Pareto set under the weak interpretation: A, C" in str(spec)
    rows = spec["datasets"][next(iter(spec["datasets"]))]
    assert {(r["metric"], r["algorithm"]): r["set"] for r in rows}[("f1", "B")] == "dominated"
    assert {r["set"] for r in rows if r["algorithm"] in ("A", "C")} == {"Pareto set"}


def test_each_panel_of_the_chart_draws_its_own_metric_only(known):
    # a layer holding its own data is drawn whole in every panel of a facet: each panel
    # then showed all three metrics' abilities on one axis
    vlc = pytest.importorskip("vl_convert")
    svg = ElementTree.fromstring(vlc.vegalite_to_svg(known.chart("weak").to_dict()))
    marks = "{http://www.w3.org/2000/svg}g"
    points = [g for g in svg.iter(marks) if "child_layer_1_marks" in g.get("class", "")]
    rules = [g for g in svg.iter(marks) if "child_layer_0_marks" in g.get("class", "")]
    assert len(points) == len(rules) == 3  # one panel per metric
    for panel, metric in zip(points, ["acc", "f1", "time"]):
        labels = [p.get("aria-label", "") for p in panel.iter("{http://www.w3.org/2000/svg}path")]
        assert len(labels) == 3  # one point per algorithm
        assert all(f"metric: {metric};" in label for label in labels), labels
    assert all(len(list(panel)) == 3 for panel in rules)


def test_the_chart_subtitle_isolates_the_algorithm_names():
    # an algorithm named with a right-to-left override would mirror the rest of the subtitle
    evil = "\u202eA"
    data = _long().replace({"alg": {"A": evil}})
    abilities = {
        "acc": {evil: 2.0, "B": -2.0, "C": 0.0},
        "f1": {evil: -1.0, "B": -1.0, "C": 2.0},
        "time": {evil: 1.0, "B": 1.0, "C": -2.0},
    }
    compared = MetricsResult(
        {m: _result(data, m, a) for m, a in abilities.items()}, list(abilities), ["time"]
    )
    title = compared.chart("weak").to_dict()["title"]
    assert title["subtitle"] == (f"Pareto set under the weak interpretation: {FSI}{evil}{PDI}, C")


@pytest.fixture
def no_fits(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a fit started although an option was invalid")

    monkeypatch.setattr(metrics_module, "run_batch", refuse)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"metrics": []}, ValueError, r"metrics is empty"),
        ({"metrics": ["acc", "acc"]}, ValueError, r"metrics names 'acc' more than once"),
        ({"metrics": ["acc", "auc"]}, ValueError, r"metrics: 'auc' is not a column"),
        ({"metrics": 3}, TypeError, r"metrics must be a list of score columns"),
        (
            {"metrics": ["acc", "f1"], "lower_is_better": ["time"]},
            ValueError,
            r"lower_is_better names 'time', which is not one of the metrics",
        ),
        ({"metrics": ["acc", "time"], "lower_is_better": True}, TypeError, r"ambiguous"),
        ({"metrics": ["acc"], "score": "acc"}, ValueError, r"metrics=\[...\], not score="),
        ({"metrics": ["acc"], "d_mni": 0.4}, TypeError, r"unexpected keyword 'd_mni'"),
        ({"metrics": ["acc"], "tie_threshold": -1}, ValueError, r"metric 'acc': tie_threshold"),
        # a look-alike of a metric, and the columns of the layout, are no metrics
        ({"metrics": ["acc", "acc "]}, ValueError, r"names 'acc' and 'acc ', one name once"),
        ({"metrics": ["acc", "db"]}, ValueError, r"'db' is the data-set column \(dataset="),
        ({"metrics": ["acc", "alg"]}, ValueError, r"'alg' is the algorithm column"),
        ({"metrics": ["acc", "run"], "fold": "run"}, ValueError, r"'run' is the fold column"),
        # one tie threshold in score units for metrics on other scales (accuracy, seconds)
        (
            {"metrics": ["acc", "time"], "tie_threshold": 0.005},
            ValueError,
            r"tie_threshold=0.005 is in score units.*tie_threshold=\{'acc': 0.005, 'time': 0.005\}",
        ),
        (
            {"metrics": ["acc", "time"], "tie_threshold": {"acc": 0.005, "speed": 1}},
            ValueError,
            r"tie_threshold names 'speed', which is not one of the metrics",
        ),
        (
            {"metrics": ["acc", "time"], "tie_threshold": {"time": -1}},
            ValueError,
            r"metric 'time': tie_threshold must be a finite number >= 0",
        ),
        ({"metrics": ["acc"], "chains": 0}, ValueError, r"chains must be an integer >= 1"),
        ({"metrics": ["acc"], "group": "kind"}, ValueError, r"group='kind' is not a column"),
        ({"metrics": ["acc"], "group": 3}, ValueError, r"group must name a column"),
        (
            {"metrics": ["acc"], "group": "db", "ties": "davidson"},
            ValueError,
            r"no tie parameter",
        ),
    ],
)
def test_bad_options_fail_before_any_fit(no_fits, kwargs, error, match):
    data = _long().assign(**{"acc ": 0.5, "run": 0})
    with pytest.raises(error, match=match):
        bbt.compare_metrics(data, dataset="db", algorithm="alg", **kwargs)


def test_an_empty_lower_is_better_list_is_none(no_fits):
    """The command line passes ``lower_is_better=[]`` for several --score without
    --lower-is-better: no metric is lower-is-better (it was refused as an empty list)."""
    assert metrics_module.check_metrics(_long(), ["acc", "f1"], []) == (["acc", "f1"], [])


def test_each_metric_is_fitted_with_its_own_column_and_direction(monkeypatch):
    seen = []

    def record(jobs, **kwargs):
        seen.extend(jobs)
        raise KeyboardInterrupt  # stop before any fit

    monkeypatch.setattr(metrics_module, "run_batch", record)
    with pytest.raises(KeyboardInterrupt):
        bbt.compare_metrics(
            _long(),
            metrics=["acc", "f1", "time"],
            lower_is_better=["time"],
            dataset="db",
            algorithm="alg",
            tie_threshold={"acc": 0.005, "time": 0.5},
            chains=2,
        )
    got = [(j.meta["metric"], j.options["score"], j.options["lower_is_better"]) for j in seen]
    assert got == [("acc", "acc", False), ("f1", "f1", False), ("time", "time", True)]
    assert [j.options["tie_threshold"] for j in seen] == [0.005, None, 0.5]
    assert all(j.options["chains"] == 2 for j in seen)


@pytest.mark.parametrize("threshold", [None, 0, 0.0])
def test_no_tie_threshold_is_one_value_for_every_metric(no_fits, threshold):
    # only a threshold above 0 has a scale; one metric takes one number as before
    assert metrics_module.metric_thresholds(threshold, ["acc", "time"]) == {
        "acc": threshold,
        "time": threshold,
    }
    assert metrics_module.metric_thresholds(0.005, ["acc"]) == {"acc": 0.005}


@pytest.fixture
def long_csv(tmp_path):
    path = tmp_path / "metrics.csv"
    _long().to_csv(path, index=False)
    return path


def test_several_scores_on_the_command_line_reach_compare_metrics(long_csv, tmp_path, monkeypatch):
    from bbt_widget import cli

    seen = {}

    def record(data, **kwargs):
        seen.update(kwargs)
        raise KeyboardInterrupt  # stop before any fit

    monkeypatch.setattr(bbt, "compare_metrics", record)
    words = ["report", str(long_csv), "--algorithm", "alg", "--dataset", "db"]
    words += ["--score", "acc", "--score", "f1", "--score", "time", "--lower-is-better", "time"]
    assert cli.main([*words, "--d-min", "0.4", "-o", str(tmp_path / "r.md")]) == 130
    assert seen["metrics"] == ["acc", "f1", "time"] and seen["lower_is_better"] == ["time"]
    assert seen["algorithm"] == "alg" and seen["dataset"] == "db"
    assert seen["d_min"] == 0.4 and seen["tie_threshold"] is None and "score" not in seen


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--lower-is-better"],
            "name the metrics where lower is better, e.g. --lower-is-better f1",
        ),
        (["--robustness"], "--robustness, --with and --rho apply to one --score"),
        (
            ["--tie-threshold", "0.005"],
            "--tie-threshold 0.005 is in score units, and the metrics acc, f1 may each have "
            "their own scale",
        ),
    ],
)
def test_several_scores_refuse_what_needs_one(
    long_csv, tmp_path, capsys, monkeypatch, extra, message
):
    from bbt_widget import cli

    monkeypatch.setattr(bbt, "compare_metrics", lambda *a, **k: pytest.fail("fitted"))
    words = ["report", str(long_csv), "--algorithm", "alg", "--score", "acc", "--score", "f1"]
    assert cli.main([*words, *extra, "-o", str(tmp_path / "r.md")]) == cli.EXIT_INPUT
    assert message in capsys.readouterr().err


def test_the_fold_column_as_a_metric_is_refused_on_the_command_line(
    long_csv, tmp_path, capsys, no_fits
):
    # it was fitted as one more metric
    from bbt_widget import cli

    words = ["report", str(long_csv), "--algorithm", "alg", "--dataset", "db", "--fold", "time"]
    words += ["--score", "acc", "--score", "time", "-o", str(tmp_path / "r.md")]
    assert cli.main(words) == cli.EXIT_INPUT
    assert "metrics: 'time' is the fold column (--fold 'time'), not a score" in (
        capsys.readouterr().err
    )


def test_one_score_keeps_the_lower_is_better_flag(long_csv, tmp_path, capsys, monkeypatch):
    from bbt_widget import cli

    seen = {}

    def record(data, **kwargs):
        seen.update(kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(bbt, "fit", record)
    out = ["-o", str(tmp_path / "r.md"), "--with", "none"]
    # the flag before the results file: the file stays the results, not a metric's name
    words = ["report", "--lower-is-better", str(long_csv), "--algorithm", "alg", "--score", "time"]
    assert cli.main([*words, *out]) == 130
    assert seen["score"] == "time" and seen["lower_is_better"] is True
    # naming the one score is the flag too; naming another column is refused
    seen.clear()
    words = ["report", str(long_csv), "--algorithm", "alg", "--score", "time"]
    assert cli.main([*words, "--lower-is-better", "time", *out]) == 130
    assert seen["lower_is_better"] is True
    assert cli.main([*words, "--lower-is-better", "acc", *out]) == cli.EXIT_INPUT
    assert "'acc' is not the --score column" in capsys.readouterr().err


def test_an_algorithm_without_results_on_a_metric_is_missing_there():
    data = _long()
    no_c = data[data["alg"] != "C"]
    compared = MetricsResult(
        {
            "acc": _result(data, "acc", {"A": 2.0, "B": -2.0, "C": 0.0}),
            "f1": _result(no_c, "f1", {"A": 0.0, "B": 0.0}),
        },
        pd.Index(["acc", "f1"]),
    )
    got = compared.decisions("weak").set_index("pair")
    assert got.loc["A > C", "f1"] == "missing" and got.loc["A > C", "acc"] == "a better"
    # missing counts on neither side: A still dominates C (better on acc, worse on nothing)
    assert compared.pareto("weak") == ["A"]


def test_metrics_may_be_any_list_of_columns(no_fits):
    data = _long()
    with pytest.raises(AssertionError, match="a fit started"):  # checked, then fitted
        bbt.compare_metrics(data, metrics=data.columns[2:], dataset="db", algorithm="alg")
