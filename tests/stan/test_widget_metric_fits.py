"""The widget with two metrics and real fits: it fits both (the chosen one first, the other in
the background), its dominance view and results are those of ``compare_metrics`` on the same
data and seed, and switching to the metric fitted in the background needs no new fit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget.lab.batch import spawn_seeds
from bbt_widget.widget.app import BBTWidget

pytestmark = pytest.mark.stan

#: Small: 4 algorithms x 12 data sets, 2 folds, short chains (the machine has 2 cores).
OPTIONS = {
    "dataset": "ds",
    "algorithm": "alg",
    "fold": "fold",
    "engine": "pystan",
    "chains": 2,
    "iter_warmup": 300,
    "iter_sampling": 300,
    "seed": 7,
}
TIMEOUT = 600  # the first fit on a new machine compiles the Stan model


def two_metrics() -> pd.DataFrame:
    """acc: slow > mid > fast > bad; time (lower is better): fast < mid < bad < slow. So mid
    and fast dominate bad, and the Pareto set is {fast, slow, mid}."""
    rng = np.random.default_rng(4)
    acc = {"fast": 0.0, "slow": 0.06, "mid": 0.03, "bad": -0.04}
    time = {"fast": 1.0, "slow": 5.0, "mid": 2.0, "bad": 3.0}
    rows = [
        {
            "ds": f"d{d}",
            "fold": f,
            "alg": a,
            "acc": 0.7 + acc[a] + rng.normal(0, 0.02),
            "time": time[a] * (1 + rng.normal(0, 0.1)),
        }
        for d in range(12)
        for f in range(2)
        for a in acc
    ]
    return pd.DataFrame(rows)


def test_a_two_metric_widget_shows_what_compare_metrics_gives() -> None:
    data = two_metrics()
    w = BBTWidget(data, score=["acc", "time"], lower_is_better=["time"], previews=False, **OPTIONS)
    try:
        assert w.wait(TIMEOUT), w.error
        assert w.wait_background(TIMEOUT)
        assert w.fit_count == 1  # the shown metric; time was fitted in the background
        assert w.dominance_data["fitted"] == ["acc", "time"] and w.dominance_text == ""
        compared = bbt.compare_metrics(
            data, metrics=["acc", "time"], lower_is_better=["time"], **OPTIONS
        )
        shown = w.metrics_result
        assert shown is not None
        for m in ("acc", "time"):  # the same seed per metric: the same draws
            np.testing.assert_array_equal(
                shown.results[m].pair_draws(), compared.results[m].pair_draws()
            )
        for rule in ("weak", "strong"):
            w.interpretation = rule
            assert w.dominance_data["rows"] == compared.dominance(rule).to_dict("records")
            assert w.dominance_data["pareto"] == compared.pareto(rule)
        w.interpretation = "weak"
        assert w.dominance_data["pareto"] == ["fast", "slow", "mid"]
        dominated = {(r["alg_a"], r["alg_b"]) for r in w.dominance_data["rows"] if r["dominates"]}
        assert {("fast", "bad"), ("mid", "bad")} <= dominated
        # the metric fitted in the background is shown at once, with its direction
        w.metric = "time"
        assert w.wait(TIMEOUT) and w.status_text == "done (cached, instant)"
        assert w.lower_is_better is True and w.fit_count == 1
        assert w.result is shown.results["time"]
        assert w.summary is not None
        pd.testing.assert_frame_equal(w.summary, compared.results["time"].summary())
        # the robustness views of "time" (not the first metric): its column, its direction
        # and the seed compare_metrics gives it
        sweep_run = {"grid": {"ties": ["spread", "add"]}, "chains": 2, "iter_sampling": 200}
        w.sweep_options = {**w.sweep_options, **sweep_run}
        w.run_sweep()
        assert w.wait_background(TIMEOUT) and w.sweep_status == "done", w.sweep_text
        seed = spawn_seeds(OPTIONS["seed"], 2)[1]
        assert w.sweep_options["seed"] == seed
        run = {**OPTIONS, **sweep_run, "seed": seed}
        direct = bbt.sweep(data, score="time", lower_is_better=True, **run)
        pd.testing.assert_frame_equal(w.sweep.frame, direct.frame)
        assert "this is the sweep of" not in w.sweep_text
        keys = w.view_data["intervals"]["key"]
        w.selected_pair = keys[0]
        assert w.wait_background(TIMEOUT) and w.influence is not None, w.influence_text
        expected = bbt.influence(compared.results["time"], interpretation="weak")
        pd.testing.assert_frame_equal(w.influence.table, expected.table)
        # back to acc: the sweep shown says it is of time
        w.metric = "acc"
        assert w.wait(TIMEOUT)
        assert "this is the sweep of time: run it again for acc" in w.sweep_text
    finally:
        w.close()
