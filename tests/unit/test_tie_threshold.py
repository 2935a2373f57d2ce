"""The tie threshold in score units: two mean scores no further apart than it are a tie,
before any local ROPE (a tie under either rule is a tie). Counts computed by hand below."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget import cli
from bbt_widget.core.draws import Draws
from bbt_widget.fitting import prepare_fit
from bbt_widget.lab.sweep import _settings
from bbt_widget.outputs.methods_text import methods_text
from bbt_widget.outputs.report._meta import provenance_items
from bbt_widget.widget.checks import SettingRefused

#: One mean per data set (wide): A - B is 0.003 (d1), -0.005 (d2, equal to the threshold
#: up to floating point: 0.905 - 0.9 is 0.0050000000000000044), 0.05 (d3) and 0 (d4);
#: A - C is 0.006, 0.1, -0.004, -0.2; B - C is 0.003, 0.105, -0.054, -0.2.
MEANS = pd.DataFrame(
    {
        "db": ["d1", "d2", "d3", "d4"],
        "A": [0.800, 0.900, 0.700, 0.600],
        "B": [0.797, 0.905, 0.650, 0.600],
        "C": [0.794, 0.800, 0.704, 0.800],
    }
)

#: Three folds on two data sets, A against B. d1: fold differences 0.003, 0.004, 0.003
#: (mean 0.00333, sd 0.000577: d_z = 5.8 > 0.4, a win under d_min, a tie under a 0.005
#: threshold). d2: differences 0.3, -0.3, 0.2 (mean 0.0667, sd 0.3215: d_z = 0.21 < 0.4, a
#: tie under d_min, a win under the threshold).
FOLDS = pd.DataFrame(
    {
        "db": ["d1"] * 3 + ["d2"] * 3,
        "fold": [0, 1, 2] * 2,
        "A": [0.800, 0.810, 0.820, 0.9, 0.5, 0.7],
        "B": [0.797, 0.806, 0.817, 0.6, 0.8, 0.5],
    }
)


def _raw(table: pd.DataFrame) -> dict[tuple[str, str], tuple[int, int, int]]:
    return {(r.alg1, r.alg2): (r.raw_win1, r.raw_win2, r.raw_ties) for r in table.itertuples()}


def test_the_threshold_turns_close_means_into_ties():
    plain = _raw(bbt.win_table(MEANS, dataset="db", ties=None))
    assert plain == {("A", "B"): (2, 1, 1), ("A", "C"): (2, 2, 0), ("B", "C"): (2, 2, 0)}
    half_point = _raw(bbt.win_table(MEANS, dataset="db", ties=None, tie_threshold=0.005))
    # A-B: d1 (0.003) and d2 (0.005 up to rounding) become ties; A-C: d3 (0.004) does;
    # B-C: d1 (0.003) does
    assert half_point == {("A", "B"): (1, 0, 3), ("A", "C"): (2, 1, 1), ("B", "C"): (1, 2, 1)}


def test_a_difference_just_above_the_threshold_still_wins():
    got = _raw(bbt.win_table(MEANS, dataset="db", ties=None, tie_threshold=0.0049))
    assert got[("A", "B")] == (1, 1, 2)  # d2's 0.005 is above 0.0049; d1's 0.003 is not


def test_lower_is_better_flips_the_winners_not_the_ties():
    got = _raw(
        bbt.win_table(MEANS, dataset="db", ties=None, tie_threshold=0.005, lower_is_better=True)
    )
    assert got[("A", "B")] == (0, 1, 3) and got[("A", "C")] == (1, 2, 1)


@pytest.mark.parametrize("none", [None, 0, 0.0])
def test_no_threshold_counts_as_before(none):
    for data, extra in ((MEANS, {}), (FOLDS, {"fold": "fold", "d_min": 0.4})):
        want = bbt.win_table(data, dataset="db", **extra)
        pd.testing.assert_frame_equal(
            bbt.win_table(data, dataset="db", tie_threshold=none, **extra), want
        )


@pytest.mark.parametrize("paired", [True, False])
def test_a_tie_under_either_rule_is_a_tie(paired):
    def counts(**rule):
        table = bbt.win_table(FOLDS, dataset="db", fold="fold", ties=None, paired=paired, **rule)
        return _raw(table)[("A", "B")]

    assert counts() == (2, 0, 0)
    # unpaired, d1's Cohen's d is 0.0033 / 0.0100 = 0.33 (< 0.4, a tie) and d2's 0.0667 /
    # 0.178 = 0.37 (a tie): the threshold adds no tie there
    assert counts(d_min=0.4) == ((1, 0, 1) if paired else (0, 0, 2))
    assert counts(tie_threshold=0.005) == (1, 0, 1)
    assert counts(d_min=0.4, tie_threshold=0.005) == (0, 0, 2)


@pytest.mark.parametrize(
    ("value", "error", "match"),
    [
        (-0.01, ValueError, r"tie_threshold must be a finite number >= 0 in score units"),
        (float("nan"), ValueError, r"tie_threshold must be a finite number >= 0"),
        (float("inf"), ValueError, r"tie_threshold must be a finite number >= 0"),
        ("0.005", TypeError, r"tie_threshold must be a number in score units or None"),
        (True, TypeError, r"tie_threshold must be a number"),
    ],
)
def test_bad_thresholds_are_refused_before_any_fit(value, error, match, monkeypatch):
    from bbt_widget import engines

    monkeypatch.setattr(engines, "sample", lambda *a, **k: pytest.fail("engine started"))
    with pytest.raises(error, match=match):
        bbt.win_table(MEANS, dataset="db", tie_threshold=value)
    with pytest.raises(error, match=match):
        bbt.fit(MEANS, dataset="db", tie_threshold=value)
    with pytest.raises(ValueError, match=r"grid 'tie_threshold': invalid value"):
        bbt.sweep(MEANS, dataset="db", grid={"tie_threshold": [0, value]})


def test_a_ready_win_table_refuses_a_threshold():
    table = bbt.win_table(MEANS, dataset="db", ties=None)[["alg1", "alg2", "win1", "win2", "ties"]]
    with pytest.raises(ValueError, match=r"ready win table .* so tie_threshold cannot apply"):
        bbt.win_table(table, tie_threshold=0.005)


def test_prepared_fit_records_the_threshold_and_recounts_with_it():
    job = prepare_fit(MEANS, dataset="db", ties="spread", tie_threshold=0.005, size=(4, 1000))
    assert job.settings["tie_threshold"] == 0.005
    want = bbt.win_table(MEANS, dataset="db", tie_threshold=0.005)
    pd.testing.assert_frame_equal(job.table, want[job.table.columns])
    plain = prepare_fit(MEANS, dataset="db", ties="spread", size=(4, 1000))
    assert plain.settings["tie_threshold"] is None
    again = plain.recount(
        d_min=None,
        paired=True,
        ties="spread",
        tie_threshold=0.005,
        hyperprior="lognormal",
        prior_scale=None,
        size=(4, 1000),
    )
    pd.testing.assert_frame_equal(again.table, job.table)
    assert again.settings == job.settings


def test_the_threshold_is_a_sweep_dimension():
    base = {"ties": "spread", "d_min": None, "paired": True, "hyperprior": "lognormal"}
    settings = _settings({"tie_threshold": [0, 0.005]}, {**base, "prior_scale": None})
    assert [s["tie_threshold"] for s in settings] == [0.0, 0.005]


def test_a_sweep_counts_each_threshold_and_fits_each(monkeypatch):
    import importlib

    sweep_module = importlib.import_module("bbt_widget.lab.sweep")
    seen = []

    def record(requests, **kwargs):
        seen.extend(requests)
        raise KeyboardInterrupt  # stop before any fit

    monkeypatch.setattr(sweep_module, "run_batch", record)
    with pytest.raises(KeyboardInterrupt):
        bbt.sweep(MEANS, dataset="db", grid={"tie_threshold": [0, 0.005]})
    assert [r.meta["tie_threshold"] for r in seen] == [0.0, 0.005]
    ab = [r.win_table.iloc[0] for r in seen]  # the raw counts of A - B, ties not resolved
    assert [(t.alg1, t.alg2) for t in ab] == [("A", "B")] * 2
    assert [(t.win1, t.win2, t.ties) for t in ab] == [(2, 1, 1), (1, 0, 3)]
    # a threshold given to the sweep holds in every setting of the grid
    seen.clear()
    with pytest.raises(KeyboardInterrupt):
        bbt.sweep(MEANS, dataset="db", tie_threshold=0.005, grid={"ties": ["spread", "add"]})
    assert [r.meta["tie_threshold"] for r in seen] == [0.005, 0.005]
    assert all(r.win_table.iloc[0].ties == 3 for r in seen)


def _result(tie_threshold, d_min=None):
    """A result of the prepared fit with made-up draws (what the texts say of the draws is
    not tested here, only what they say of the settings)."""
    job = prepare_fit(
        FOLDS,
        dataset="db",
        fold="fold",
        ties="spread",
        d_min=d_min,
        tie_threshold=tie_threshold,
        size=(2, 10),
    )
    rng = np.random.default_rng(0)
    draws = Draws(
        params={
            "beta": rng.normal(size=(2, 10, 2)),
            "sigma": rng.gamma(2.0, size=(2, 10)),
            "win1_rep": rng.binomial(2, 0.5, size=(2, 10, 1)),
            "log_lik": rng.normal(-1.0, 0.1, size=(2, 10, 1)),
        },
        sampler={},
        engine="pystan",
    )
    run = {"chains": 2, "iter_warmup": 10, "iter_sampling": 10, "seed": 1}
    return job.result(draws, {**run, "adapt_delta": 0.8, "max_treedepth": 10})


def test_methods_text_and_provenance_state_the_threshold():
    text = methods_text(_result(0.005), format="md")
    assert "differing by at most 0.005 (the tie threshold, in score units) were a tie" in text
    assert "either rule" not in text
    both = methods_text(_result(0.005, d_min=0.4), format="md")
    assert "a tie under either rule was a tie" in both
    assert "tie threshold" not in methods_text(_result(None), format="md")
    kw = {"rope": (0.45, 0.55), "hdi": 0.89, "interpretation": "weak", "control": None}
    items = dict(provenance_items(_result(0.005), "r.md", {}, **kw))
    assert items["tie threshold"] == "0.005 (score units)"
    assert "tie_threshold=0.005" in items["command"]
    assert "tie threshold" not in dict(provenance_items(_result(None), "r.md", {}, **kw))


def test_the_command_line_option_reaches_the_fit(tmp_path, monkeypatch, capsys):
    path = tmp_path / "means.csv"
    MEANS.to_csv(path, index=False)
    seen = {}

    def record(data, **kwargs):
        seen.update(kwargs)
        raise KeyboardInterrupt  # stop before sampling

    monkeypatch.setattr(bbt, "fit", record)
    args = ["report", str(path), "-o", str(tmp_path / "r.html"), "--with", "none"]
    assert cli.main([*args, "--tie-threshold", "0.005"]) == 130
    assert seen["tie_threshold"] == 0.005
    assert cli.main([*args, "--tie-threshold", "-1"]) == cli.EXIT_INPUT
    assert "--tie-threshold must be a finite number >= 0" in capsys.readouterr().err


def test_the_widget_has_a_tie_threshold_control_with_a_tooltip():
    from pathlib import Path

    from bbt_widget.fitting import SAMPLER_SETTINGS
    from bbt_widget.widget.app import BBTWidget

    w = BBTWidget(MEANS, dataset="db", autostart=False, previews=False, tie_threshold=0.005)
    try:
        submitted = []
        w._runner.submit = lambda key, settings: submitted.append(settings)
        assert w.tie_threshold == 0.005 and "score units" in type(w).tie_threshold.help
        assert w.fit_settings["tie_threshold"] == 0.005
        assert w.option_lists["tie_threshold"] == {"min": 0.0, "step": 0.001}
        # a change refits with it; 0 is no threshold, the same fit as None
        w.tie_threshold = 0.01
        assert submitted[-1]["tie_threshold"] == 0.01
        w.tie_threshold = 0.0
        assert submitted[-1]["tie_threshold"] is None
        # a bad value is shown, not fitted
        n = len(submitted)
        with pytest.raises(SettingRefused, match="tie_threshold must be a finite number >= 0"):
            w.tie_threshold = -1.0
        assert len(submitted) == n and w.tie_threshold == 0.0
        # the inputs the widget prepares count the ties again when only the threshold moves
        base = {k: v for k, v in w.fit_settings.items() if k not in SAMPLER_SETTINGS}
        for value in (0.005, None):
            prepared = w._fits.prepared({**base, "tie_threshold": value})
            want = bbt.win_table(MEANS, dataset="db", tie_threshold=value)
            pd.testing.assert_frame_equal(prepared.table, want[prepared.table.columns])
    finally:
        w.close()
    source = (Path(__file__).parents[2] / "js" / "src" / "controls.js").read_text("utf-8")
    assert '"tie_threshold",' in source.split("CONTROL_HELP")[0]  # refreshed with the others
    help_text = source.split("tie_threshold:")[1].split("Refits.")[0]
    assert "units of the scores" in help_text and "either rule" in help_text
    assert 'number("tie_threshold"' in source and 'row("Tie threshold"' in source


def test_a_sweep_frame_has_the_threshold_as_a_setting_column():
    from bbt_widget.lab.sweep import SweepResult

    rng = np.random.default_rng(3)
    base = {"ties": "spread", "d_min": None, "paired": None, "hyperprior": "lognormal"}
    settings = [{**base, "prior_scale": 0.5, "tie_threshold": t} for t in (None, 0.005)]
    betas = [rng.normal([1.0, 0.0], 0.1, size=(400, 2)) for _ in settings]
    sw = SweepResult(settings, betas, [None, None], ["a", "b"], (0.45, 0.55), 0.89)
    assert list(sw.frame["tie_threshold"]) == [None, 0.005]  # None stays None, not NaN
    assert list(sw.setting_labels()) == ["tie_threshold=None", "tie_threshold=0.005"]
    # without a threshold the frame has no such column, as before
    plain = SweepResult(
        [{**base, "prior_scale": 0.5}], betas[:1], [None], ["a", "b"], (0.45, 0.55), 0.89
    )
    assert "tie_threshold" not in plain.frame.columns
