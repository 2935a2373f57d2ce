"""The widget's summary controls refuse a value they cannot show (the trait keeps its last good
value, the one the charts use, and the message says why), and the diagnostics badge says when
the last fit failed instead of "diagnostics fine" (the charts show the last good fit).

Real fits of the paper's base results on the numpy engine (about a second each).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from traitlets import TraitError

import bbt_widget as bbt
from bbt_widget.fitting import PreparedFit
from bbt_widget.widget.app import BBTWidget
from bbt_widget.widget.checks import SETTING_OF, SettingRefused
from bbt_widget.widget.fitted import failed_fit_badge
from bbt_widget.widget.messages import FitFailed, LastGoodFitWarning

pytestmark = pytest.mark.stan

FIT_TIMEOUT = 600


@pytest.fixture(scope="module")
def widget(request: pytest.FixtureRequest) -> BBTWidget:
    w = BBTWidget(bbt.datasets.load_base(), dataset="db", seed=7, stan_check=False)
    request.addfinalizer(w.close)
    assert w.wait(FIT_TIMEOUT), (w.status_text, w.error)
    return w


@pytest.fixture
def w(widget: BBTWidget) -> Any:
    """The shared widget, its summary controls back at the defaults after the test."""
    yield widget
    with widget.hold_trait_notifications():
        widget.rope_low, widget.rope_high, widget.hdi = 0.45, 0.55, 0.89
        widget.interpretation = "weak"


#: Values no control can take, each with what the refusal says. The first ones come from a
#: review that found them kept (tie threshold, prior scale, d_min), accepted though the
#: control's range excludes them (HDI 0.3), or written raw into the code export
#: (interpretation, nan, inf).
INVALID = [
    ("rope_low", 0.7, "rope low must be below rope high"),  # above rope_high
    ("rope_high", 0.45, "rope low must be below rope high"),  # at rope_low
    ("rope_low", -0.1, "must lie in [0, 1]"),
    ("rope_high", 1.2, "must lie in [0, 1]"),
    ("hdi", 1.5, "hdi must lie in [0.5, 0.99]"),
    ("hdi", 0.3, "hdi must lie in [0.5, 0.99]"),
    ("hdi", float("nan"), "hdi must lie in [0.5, 0.99]"),
    ("tie_threshold", -1.0, "tie_threshold must be a finite number >= 0"),
    ("tie_threshold", float("nan"), "tie_threshold must be a finite number >= 0"),
    ("prior_scale", -1.0, "prior_scale must be a number from 1e-06 to 1e+06"),
    ("prior_scale", float("inf"), "prior_scale must be a number from 1e-06 to 1e+06"),
    ("prior_scale", 1e-300, "prior_scale must be a number from 1e-06 to 1e+06"),
    ("d_min", -0.5, "d_min must lie in [0.0, 1.5]"),
    ("d_min", 2.0, "d_min must lie in [0.0, 1.5]"),
    ("ties", "sometimes", "unknown tie policy"),
    ("hyperprior", "gamma", "unknown hyperprior"),
    ("interpretation", "weak\n__import__('os').system('id')\n#", "interpretation must be"),
    ("control", "not an algorithm", "is not an algorithm"),
    ("focus", "not an algorithm", "is not an algorithm"),
    ("selected_group", "g1", "not in groups"),
    ("metric", "acc", "one score column"),
    ("ranking_model", "elo", "ranking_model must be one of"),
]


@pytest.mark.parametrize(("name", "value", "reason"), INVALID)
def test_an_invalid_setting_from_python_raises_and_keeps_the_last_good_value(
    w: BBTWidget, name: str, value: Any, reason: str
) -> None:
    """One rule for every control, from code: the assignment raises, naming the control, why
    and the value kept; the trait, the views and the fits stay as they were."""
    kept, view, summary, fits = getattr(w, name), w.view_data, w.summary, dict(w.fit_stats)
    with pytest.raises(SettingRefused) as refused:
        setattr(w, name, value)
    text = str(refused.value)
    assert text.startswith(f"{name} = {value!r} not applied") and reason in text, text
    assert f"it stays {kept!r}" in text
    assert isinstance(refused.value, ValueError) and isinstance(refused.value, TraitError)
    assert getattr(w, name) == kept or (kept is None and getattr(w, name) is None)
    assert w.view_data is view and w.summary.equals(summary) and w.fit_stats == fits
    assert w.message == "" and w.input_errors == {}  # the caller got the error, not the page


@pytest.mark.parametrize(("name", "value", "reason"), INVALID)
def test_an_invalid_setting_from_the_front_end_is_sent_back_with_the_reason_beside_it(
    w: BBTWidget, name: str, value: Any, reason: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From the browser: nothing raises in the kernel; after ipywidgets' echo of the value
    typed, the kept one goes back, and the reason is shown beside the control (input_errors)
    and in the message until the setting is next set to a valid value."""
    kept, view, fits = getattr(w, name), w.view_data, dict(w.fit_stats)
    sent: list[dict[str, Any]] = []
    monkeypatch.setattr(w, "_send", lambda msg, buffers=None: sent.append(msg))
    w.set_state({name: value})
    assert getattr(w, name) == kept or (kept is None and getattr(w, name) is None)
    assert w.view_data is view and w.fit_stats == fits  # nothing redrawn
    text = w.input_errors[name]
    assert text.startswith(f"{name} = {value!r} not applied") and reason in text, text
    assert text in w.message
    updates = [m["state"] for m in sent if m["method"] == "update"]
    assert {name: kept} in updates  # the control shows the kept value again
    echo = next(i for i, m in enumerate(sent) if m["method"] == "echo_update")
    assert echo < sent.index({"method": "update", "state": {name: kept}, "buffer_paths": []})
    assert any(name in u.get("input_errors", {}) for u in updates)
    w._controls.set_problem(f"refused {SETTING_OF[name]}", "")  # the shared widget: next test clean
    w.input_errors = {}


def test_a_refusal_is_listed_per_setting_and_cleared_by_the_next_good_value(w: BBTWidget):
    w.set_state({"rope_low": 0.7})
    w.set_state({"hdi": 1.2})
    assert "rope_low = 0.7" in w.message and "hdi = 1.2" in w.message  # both listed
    assert set(w.input_errors) == {"rope_low", "hdi"}
    w.set_state({"rope_high": 0.6})  # a valid ROPE: its refusal is gone, the HDI's stays
    assert "rope_low" not in w.message and "hdi = 1.2" in w.message
    assert set(w.input_errors) == {"hdi"}
    assert (w.rope_low, w.rope_high) == (0.45, 0.6)
    w.hdi = 0.9  # from Python too
    assert w.message == "" and w.hdi == 0.9 and w.input_errors == {}
    assert w.summary.equals(w.result.summary(rope=(0.45, 0.6), hdi=0.9))


def test_accepted_values_are_stored_as_plain_python_values(w: BBTWidget) -> None:
    """A numpy scalar given from code is stored (and later written by w.code()) as the plain
    value; "auto" is resolved to the rule it picks, as the constructor does."""
    w.hdi = np.float64(0.8)
    w.interpretation = np.str_("strong")
    try:
        assert type(w.hdi) is float and type(w.interpretation) is str
        w.interpretation = "auto"  # 5 algorithms: the weak rule
        assert w.interpretation == "weak"
    finally:
        w.interpretation = "weak"


def test_both_rope_bounds_move_past_each_other_at_once(w: BBTWidget) -> None:
    """Set together, the bounds are checked as a pair: (0.6, 0.7) from (0.45, 0.55) is fine,
    though 0.6 alone is above the high bound."""
    with pytest.raises(SettingRefused, match=r"rope_low = 0\.6 not applied"):
        w.rope_low = 0.6
    assert w.rope_low == 0.45
    with w.hold_trait_notifications():
        w.rope_low, w.rope_high = 0.6, 0.7
    assert (w.rope_low, w.rope_high) == (0.6, 0.7) and w.message == ""
    rope = w.view_data["rope"]  # one row per threshold line, each with the band's bounds
    assert set(rope["low"]) == {0.6} and set(rope["high"]) == {0.7}
    assert {0.6, 0.7} <= set(rope["x"])
    # a refusal among values set together: none of them is applied
    with pytest.raises(SettingRefused, match="hdi"), w.hold_trait_notifications():
        w.rope_low, w.hdi = 0.5, 2.0
    assert (w.rope_low, w.hdi) == (0.6, 0.89)


def test_the_constructor_refuses_a_first_value_the_control_cannot_take() -> None:
    data = bbt.datasets.load_base()
    with pytest.raises(SettingRefused, match=r"hdi=0.3: hdi must lie in \[0.5, 0.99\]"):
        BBTWidget(data, dataset="db", hdi=0.3, autostart=False)
    with pytest.raises(ValueError, match=r"d_min=2.0: d_min must lie in \[0.0, 1.5\]"):
        BBTWidget(data, dataset="db", d_min=2.0, autostart=False)


def test_a_failed_fit_is_on_the_badge_until_a_fit_is_shown_again(
    w: BBTWidget, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = dict(w.diagnostics)
    assert good["label"] == "diagnostics fine"

    def fails(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the sampler exploded")

    monkeypatch.setattr(PreparedFit, "sample", fails)
    w.prior_scale = 0.9
    with pytest.raises(FitFailed, match="the sampler exploded") as failed:
        w.wait(FIT_TIMEOUT)  # a script stops here, with the fit's own error
    assert isinstance(failed.value.__cause__, RuntimeError)
    # what a notebook's next cell reads is said to be the last good fit's, not the new one's
    with pytest.warns(LastGoodFitWarning, match=r"last good fit's .* their fit failed"):
        assert w.result.settings["prior_scale"] == 0.5
    with pytest.warns(LastGoodFitWarning, match="w.summary is the last good fit's"):
        assert w.summary is not None
    assert w.status == "error"
    badge = w.diagnostics
    assert badge["failed"] is True and badge["ok"] is False
    assert badge["label"] == "fit failed: last good fit shown"
    assert badge["messages"][0] == w.error == "Fit failed: the sampler exploded"
    assert "last good fit" in badge["messages"][1] and "diagnostics fine" in badge["messages"][1]
    assert badge["max_rhat"] == good["max_rhat"]  # the numbers are the last good fit's
    # the last good settings again: that fit, from the cache, with its own badge
    monkeypatch.undo()
    w.prior_scale = 0.5
    assert w.status == "done" and w.error == "" and w.diagnostics == good
    with warnings.catch_warnings():
        warnings.simplefilter("error", LastGoodFitWarning)  # the fit shown is the current one
        assert w.result is not None and w.summary is not None
    # a failure, then a new fit that works: its badge
    monkeypatch.setattr(PreparedFit, "sample", fails)
    w.prior_scale = 0.8
    with pytest.raises(FitFailed):
        w.wait(FIT_TIMEOUT)
    assert w.diagnostics["failed"] is True
    monkeypatch.undo()
    w.prior_scale = 0.7
    assert w.wait(FIT_TIMEOUT), w.error
    assert "failed" not in w.diagnostics and w.diagnostics["label"] == "diagnostics fine"
    w.prior_scale = 0.5
    assert w.wait(FIT_TIMEOUT)


def test_a_stan_verdict_after_a_failed_fit_keeps_the_failure_on_the_badge(
    w: BBTWidget, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Stan cross-check of the fit shown may land after a later fit failed: the badge
    then carries the verdict and still says that the fit asked for failed."""
    check = w._fits.stan_check
    monkeypatch.setitem(check.verdicts, w._result_key, [])  # Stan agrees
    # as where a check runs (this widget has none: no verdict of its own would land)
    monkeypatch.setattr(check, "enabled", True)
    monkeypatch.setattr(check, "stan_engine", lambda: "pystan")
    w.error = "Fit failed: the sampler exploded"
    try:
        check.show(w._result_key)
        assert w.diagnostics["label"] == "fit failed: last good fit shown"
        assert any("Stan (NUTS) agrees" in m for m in w.diagnostics["messages"])
        w.error = ""
        check.show(w._result_key)
        assert w.diagnostics["label"] == "diagnostics fine; Stan check: agrees"
    finally:
        w.error = ""
        monkeypatch.undo()
        w.diagnostics = check.badge()


def test_failed_fit_badge() -> None:
    shown = {"ok": True, "label": "diagnostics fine", "messages": [], "max_rhat": 1.001}
    assert failed_fit_badge(shown, "") == shown
    badge = failed_fit_badge(shown, "Fit failed: out of memory")
    assert badge["label"] == "fit failed: last good fit shown" and not badge["ok"]
    assert badge["messages"][0] == "Fit failed: out of memory" and badge["max_rhat"] == 1.001
    assert shown["ok"] is True  # not changed in place
    # no fit yet: nothing to show but the failure
    assert failed_fit_badge({}, "Fit failed: x") == {
        "ok": False,
        "failed": True,
        "label": "fit failed: no results",
        "messages": ["Fit failed: x"],
    }
    assert failed_fit_badge({}, "") == {}


def test_a_view_change_says_it_ran_no_fit(w: BBTWidget) -> None:
    fits = w.fit_count
    w.rope_high = 0.6
    assert (w.status, w.status_text) == ("done", "ROPE changed: no refit")
    w.hdi = 0.95
    assert w.status_text == "HDI changed: no refit"
    w.interpretation = "strong"
    assert w.status_text == "rule changed: no refit"
    assert w.fit_count == fits


def test_a_fit_control_change_that_needs_no_fit_says_what_changed_and_why(w: BBTWidget) -> None:
    """d_min moved while the local ROPE is off asks for the fit already shown: the status
    says so, not a bare "done (no change)" that names neither the control nor the reason."""
    assert not w.local_rope
    fits, d_min = w.fit_count, w.d_min
    try:
        w.d_min = 0.3
        assert (w.status, w.status_text) == (
            "done",
            "d_min changed: no refit (the local ROPE is off)",
        )
        assert w.fit_count == fits
    finally:
        w.d_min = d_min
