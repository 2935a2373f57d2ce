"""The widget with several metrics, without Stan: the selector and its checks, the fit keys
and seeds per metric, the direction per metric, the errors at construction and at run time,
and the dominance payload of fits with a known structure (made-up draws of real results, as
in test_metrics_dominance.py; the real fits are in tests/stan/test_widget_metric_fits.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest

from bbt_widget.core.draws import Draws
from bbt_widget.fitting import prepare_fit
from bbt_widget.lab.batch import spawn_seeds
from bbt_widget.lab.metrics import MetricsResult
from bbt_widget.widget.app import BBTWidget
from bbt_widget.widget.fitted import Fitted
from bbt_widget.widget.keys import fit_keys
from bbt_widget.widget.runner import FitEvent, FitRunner

METRICS = ["acc", "f1", "time"]
SEED = 5


def _long(n: int = 6) -> pd.DataFrame:
    """Long-form results: n data sets x algorithms A, B, C, columns acc, f1, time."""
    rows = []
    for d in range(n):
        for alg, acc, f1, cost in (
            ("A", 0.9, 0.8, 1.0),
            ("B", 0.8, 0.8, 1.0),
            ("C", 0.85, 0.9, 2.0),
        ):
            rows.append({"db": f"d{d}", "alg": alg, "acc": acc + d / 100, "f1": f1, "time": cost})
    return pd.DataFrame(rows)


def _fitted(data: pd.DataFrame, metric: str, abilities: dict[str, float]) -> Fitted:
    """A real result of ``metric``'s prepared fit whose draws put each ability at the given
    value (spread 0.01), made ready for the charts as the widget's fits are."""
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
            "sigma": 1 + rng.normal(0, 0.01, size=(2, 200)),
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
    return Fitted.prepare(result)


#: acc: A > C > B; f1: C > A = B; time (lower is better): A = B, both better than C. So A
#: dominates B, and the Pareto set is {A, C} (as in test_metrics_dominance.py).
ABILITIES = {
    "acc": {"A": 2.0, "B": -2.0, "C": 0.0},
    "f1": {"A": -1.0, "B": -1.0, "C": 2.0},
    "time": {"A": 1.0, "B": 1.0, "C": -2.0},
}


@pytest.fixture(scope="module")
def fits() -> dict[str, Fitted]:
    data = _long()
    return {m: _fitted(data, m, ABILITIES[m]) for m in METRICS}


def _widget(data: pd.DataFrame | None = None, **kwargs: Any) -> BBTWidget:
    options: dict[str, Any] = {
        "dataset": "db",
        "algorithm": "alg",
        "score": METRICS,
        "lower_is_better": ["time"],
        "seed": SEED,
        "autostart": False,
        "previews": False,
        "stan_check": False,  # wait_background() would wait for a Stan check of each fit
    }
    return BBTWidget(_long() if data is None else data, **{**options, **kwargs})


@pytest.fixture
def w() -> Iterator[BBTWidget]:
    widget = _widget()
    yield widget
    widget.close()


@pytest.fixture
def refits(w: BBTWidget, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The fit settings of every refit the widget asks for (none runs)."""
    asked: list[dict[str, Any]] = []
    monkeypatch.setattr(w, "refit", lambda: asked.append(w.fit_settings))
    return asked


def test_the_selector_offers_the_metrics_and_starts_on_the_first(w: BBTWidget) -> None:
    assert w.metrics == METRICS and w.metric == "acc"
    assert w.lower_is_better is False
    settings = w.fit_settings
    # metric k is fitted with compare_metrics' seed for it
    assert settings["score"] == "acc" and settings["seed"] == spawn_seeds(SEED, 3)[0]
    assert "metric" in w.keys and "dominance_data" in w.keys  # synced with the front end


def test_a_single_score_keeps_the_widget_as_it_was() -> None:
    w = _widget(score="acc", lower_is_better=False)
    try:
        assert w.metrics == [] and w.metric == ""
        assert w.fit_settings["score"] == "acc" and w.fit_settings["seed"] == SEED
        assert w.metrics_result is None and w.dominance_data == {}
        w.set_state({"metric": "f1"})  # no metrics to choose from: said so, nothing changes
        assert "one score column" in w.message and "score=[...]" in w.message
        assert w.fit_settings["score"] == "acc"
    finally:
        w.close()


def test_switching_metric_refits_with_its_column_direction_and_seed(
    w: BBTWidget, refits: list[dict[str, Any]]
) -> None:
    seeds = spawn_seeds(SEED, 3)
    w.metric = "time"
    assert w.lower_is_better is True  # time: lower is better; the control follows
    assert len(refits) == 1  # one fit, though the direction changed too
    assert refits[0]["score"] == "time" and refits[0]["lower_is_better"] is True
    assert refits[0]["seed"] == seeds[2]
    w.metric = "f1"
    assert w.lower_is_better is False and len(refits) == 2
    assert (refits[1]["score"], refits[1]["seed"]) == ("f1", seeds[1])
    # the metric is part of the fit key: three metrics, three keys
    keys = {fit_keys(w._metrics.settings_for(m))[0] for m in METRICS}
    assert len(keys) == 3
    assert fit_keys(w.fit_settings)[0] == fit_keys(w._metrics.settings_for("f1"))[0]


def test_the_direction_control_is_each_metrics_own(
    w: BBTWidget, refits: list[dict[str, Any]]
) -> None:
    w.lower_is_better = True  # acc read as an error rate, say
    w.metric = "f1"
    assert w.lower_is_better is False
    w.metric = "acc"
    assert w.lower_is_better is True
    assert w._metrics.settings_for("acc")["lower_is_better"] is True
    assert w._metrics.settings_for("time")["lower_is_better"] is True


def test_an_unknown_metric_at_run_time_keeps_the_last_good_one(
    w: BBTWidget, refits: list[dict[str, Any]]
) -> None:
    w.set_state({"metric": "nope"})  # from the browser: refused, the reason shown
    assert "metric = 'nope' not applied (not one of the metrics (acc, f1, time))" in w.message
    assert refits == [] and w.fit_settings["score"] == "acc"
    w.metric = "f1"  # a good choice clears the message
    assert w.message == "" and refits[-1]["score"] == "f1"


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"score": ["acc", "nope"]}, ValueError, r"score: 'nope' is not a column.*columns: db"),
        (
            {"lower_is_better": ["auc"]},
            ValueError,
            r"lower_is_better names 'auc'.*must be a subset of score",
        ),
        ({"lower_is_better": True}, TypeError, r"ambiguous.*lower_is_better=\['time'\]"),
        ({"score": ["acc", "acc"]}, ValueError, r"score names 'acc' more than once"),
        (
            {"score": ["acc", "label"], "lower_is_better": []},
            TypeError,
            r"score 'label': .*must hold numbers",
        ),
        ({"sd": pd.DataFrame()}, ValueError, r"sd= .*one score; .*fold"),
    ],
)
def test_bad_metrics_are_refused_at_construction(kwargs: dict, error: type, match: str) -> None:
    data = _long().assign(label="x")
    with pytest.raises(error, match=match):
        _widget(data, **kwargs)


def test_no_metric_where_lower_is_better_may_be_an_empty_list() -> None:
    w = _widget(score=["acc", "f1"], lower_is_better=[])
    try:
        assert w.metrics == ["acc", "f1"]
        assert not any(w._metrics.settings_for(m)["lower_is_better"] for m in w.metrics)
    finally:
        w.close()


def _show(w: BBTWidget, fits: dict[str, Fitted], metrics: list[str]) -> None:
    """Put the fits of ``metrics`` in the widget's cache under their keys and show the
    current metric's, as a refit that finds it there does."""
    for m in metrics:
        w._runner.remember(fit_keys(w._metrics.settings_for(m))[0], fits[m])
    w.refit()
    w._runner.wait(5)


def test_dominance_payload_is_compare_metrics_rule_on_known_decisions(
    w: BBTWidget, fits: dict[str, Fitted]
) -> None:
    _show(w, fits, METRICS)
    data = w.dominance_data
    assert data["fitted"] == METRICS and data["pending"] == [] and w.dominance_text == ""
    assert data["lower"] == ["time"] and data["rule"] == "weak"
    assert data["pareto"] == ["A", "C"]
    rows = {(r["alg_a"], r["alg_b"]): r for r in data["rows"]}
    assert rows[("A", "B")]["metrics_better"] == ["acc"]
    assert rows[("A", "B")]["metrics_worse"] == [] and rows[("A", "B")]["dominates"]
    assert rows[("A", "C")]["metrics_better"] == ["acc", "time"]
    assert rows[("A", "C")]["metrics_worse"] == ["f1"] and not rows[("A", "C")]["dominates"]
    assert sum(r["dominates"] for r in data["rows"]) == 1
    # the same table as compare_metrics' result of these fits gives
    known = MetricsResult({m: fits[m].result for m in METRICS}, METRICS, ["time"])
    assert data["rows"] == known.dominance("weak").to_dict("records")
    res = w.metrics_result
    assert res is not None and res.pareto("weak") == known.pareto("weak")
    # the strong rule: redrawn from the same fits, no fit
    fits_before = w.fit_count
    w.interpretation = "strong"
    assert w.dominance_data["rule"] == "strong"
    assert w.dominance_data["rows"] == known.dominance("strong").to_dict("records")
    assert w.fit_count == fits_before


def test_an_invalid_view_setting_keeps_the_last_dominance_view(
    w: BBTWidget, fits: dict[str, Fitted]
) -> None:
    _show(w, fits, METRICS)
    before = w.dominance_data
    w.set_state({"hdi": 2.0})
    assert w.dominance_data is before and "hdi" in w.message.lower()


def test_the_other_metrics_are_fitted_in_the_background_one_by_one(
    w: BBTWidget, fits: dict[str, Fitted]
) -> None:
    section = w._metrics
    asked: list[str] = []

    def fit(metric: str, context: Any = None, **settings: Any) -> Fitted:
        # the fit a background request runs, for the metric's own settings
        assert settings["score"] == metric
        assert settings["seed"] == section.choice.seeds[metric]
        asked.append(metric)
        return fits[metric]

    section.runner.close()
    section.runner = FitRunner(fit, section._on_event)
    _show(w, fits, ["acc"])
    # acc is shown; f1 and time are still to come, and the view says so
    assert w.dominance_data["fitted"] == ["acc"]
    assert w.dominance_data["pending"] == ["f1", "time"]
    assert w.dominance_text.startswith("still fitting: f1, time")
    assert "over acc so far" in w.dominance_text
    assert w.wait_background(30)
    assert asked == ["f1", "time"]
    assert w.dominance_data["fitted"] == METRICS and w.dominance_text == ""
    assert w.dominance_data["pareto"] == ["A", "C"]
    # switching to a metric fitted in the background takes it from the cache: no new fit
    runs = w.fit_stats.get("started", 0)
    w.metric = "time"
    assert w.wait(5) and w.status_text == "done (cached, instant)"
    assert w.fit_stats.get("started", 0) == runs and w.result is fits["time"].result


def test_a_failed_metric_is_named_and_the_others_are_compared(
    w: BBTWidget, fits: dict[str, Fitted]
) -> None:
    section = w._metrics

    def fit(metric: str, context: Any = None, **settings: Any) -> Fitted:
        if metric == "f1":
            raise RuntimeError("sampler exploded")
        return fits[metric]

    section.runner.close()
    section.runner = FitRunner(fit, section._on_event)
    _show(w, fits, ["acc"])
    assert w.wait_background(30)
    assert w.dominance_data["fitted"] == ["acc", "time"]
    assert w.dominance_data["failed"] == {"f1": "sampler exploded"}
    assert "fit failed for f1: sampler exploded" in w.dominance_text


def test_a_control_change_that_needs_no_fit_keeps_the_background_fits_going(
    w: BBTWidget, fits: dict[str, Fitted], monkeypatch: pytest.MonkeyPatch
) -> None:
    section = w._metrics
    release = threading.Event()
    cancels: list[threading.Event] = []

    def fit(metric: str, context: Any = None, **settings: Any) -> Fitted:
        cancels.append(context.cancel)
        release.wait(10)
        return fits[metric]

    section.runner.close()
    section.runner = FitRunner(fit, section._on_event)
    _show(w, fits, ["acc"])  # f1 is being fitted in the background
    deadline = time.monotonic() + 10
    while not cancels and time.monotonic() < deadline:  # its fit has started
        time.sleep(0.01)
    asked: list[dict[str, Any]] = []
    monkeypatch.setattr(w, "refit", lambda: asked.append(w.fit_settings))
    w.d_min = 0.3  # the local ROPE is off: the same fits, nothing to stop
    assert cancels and not cancels[0].is_set()
    w.lower_is_better = True  # acc's direction: a new fit of acc, f1's is still good
    assert asked and not cancels[0].is_set()
    w.ties = "add"  # other fits for every metric: the background fit of the old ones stops
    assert cancels[0].is_set() and len(asked) == 3
    release.set()


def test_a_fit_landing_after_a_refused_value_is_shown_with_the_other_metrics(
    w: BBTWidget, fits: dict[str, Fitted]
) -> None:
    key = fit_keys(w.fit_settings)[0]
    w.set_state({"prior_scale": -1.0})  # refused (the message says why): no fit is asked for
    assert "prior_scale" in w.message and w.prior_scale == 0.5
    # the fit asked for before lands now, as the runner would deliver it: the settings did
    # not change, so it is the current one, and the other metrics follow under them
    w._fits.on_fit_event(FitEvent("done", 1, key, result=fits["acc"], cached=True))
    assert w.status == "done" and w.error == "" and w.result is fits["acc"].result
    assert w._metrics.keys["acc"] == key and set(w._metrics.keys) == set(METRICS)


def test_a_failed_fit_of_new_settings_stops_saying_still_fitting(
    w: BBTWidget, fits: dict[str, Fitted], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other metrics of the settings shown were "still fitting" for good once a fit of
    new settings failed: their background fit was stopped and none follows a failed fit."""
    section = w._metrics
    release = threading.Event()
    started = threading.Event()

    def fit(metric: str, context: Any = None, **settings: Any) -> Fitted:
        started.set()
        context.report("sampling", 0.4)
        release.wait(10)
        return fits[metric]

    section.runner.close()
    section.runner = FitRunner(fit, section._on_event)
    _show(w, fits, ["acc"])  # f1 is being fitted in the background
    assert started.wait(10)
    section.runner.drain()
    assert w.dominance_text.startswith("still fitting: f1, time (f1: sampling 40%)")
    monkeypatch.setattr(w._runner, "submit", lambda key, settings: 0)  # no Stan fit here
    w.ties = "add"  # new settings: the background fit of the old ones stops
    key = fit_keys(w.fit_settings)[0]
    assert w._requested_key == key != w._result_key
    # the fit of the new settings fails, as the runner would report it
    w._fits.on_fit_event(FitEvent("error", 1, key, error=RuntimeError("sampler exploded")))
    release.set()
    assert w.wait_background(30)
    assert w.error == "Fit failed: sampler exploded"
    assert "still fitting" not in w.dominance_text
    assert w.dominance_text.startswith("not fitted: f1, time (the fit of the new settings failed")
    assert "the dominance below is over acc under the settings shown" in w.dominance_text
    assert w.dominance_data["fitted"] == ["acc"] and w.result is fits["acc"].result
    # back to the settings shown (no fit needed): their other metrics are fitted again
    section.runner.close()
    section.runner = FitRunner(lambda metric, **_: fits[metric], section._on_event)
    w.ties = "spread"
    assert w.status_text == "tie policy changed: no refit (the fit shown has these settings)"
    assert w.wait_background(30)
    assert w.dominance_text == "" and w.dominance_data["fitted"] == METRICS


def test_the_sweep_and_ranking_views_use_the_metric_shown(
    w: BBTWidget, refits: list[dict[str, Any]]
) -> None:
    """With "time" shown (not the first metric), the sweep, the ranking models and the
    t-test read its column, its direction and the seed compare_metrics gives it (the sweep
    kept the first metric's seed)."""
    seed = spawn_seeds(SEED, 3)[2]
    w.metric = "time"
    sent: list[dict[str, Any]] = []
    w._sweep_runner.submit = lambda key, options: sent.append(options)  # no fits here
    w.run_sweep()
    assert sent[0]["score"] == "time" and sent[0]["lower_is_better"] is True
    assert sent[0]["seed"] == seed == w.sweep_options["seed"] == w.fit_settings["seed"]
    ranking = w._rankings._pl_settings()
    assert (ranking["score"], ranking["lower_is_better"], ranking["seed"]) == ("time", True, seed)
    # sweep options read back and set again keep following the metric shown
    w.sweep_options = {**w.sweep_options, "chains": 2}
    w.metric = "f1"
    assert w.sweep_options["seed"] == spawn_seeds(SEED, 3)[1]
    assert w.sweep_options["chains"] == 2
    # a seed of the sweep's own stays, whatever the metric
    w.sweep_options = {**w.sweep_options, "seed": 11}
    w.metric = "acc"
    w.run_sweep()
    assert sent[-1]["seed"] == 11 and sent[-1]["score"] == "acc"


def test_a_sweep_seed_given_at_construction_stays(monkeypatch: pytest.MonkeyPatch) -> None:
    w = _widget(sweep_options={"seed": 11, "chains": 2})
    try:
        monkeypatch.setattr(w, "refit", lambda: None)  # no fit here
        w.metric = "time"
        assert w.sweep_options["seed"] == 11 and w.sweep_options["chains"] == 2
    finally:
        w.close()
