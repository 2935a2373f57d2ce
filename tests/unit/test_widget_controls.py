"""The widget's summary controls refuse a value they cannot show (the trait keeps its last good
value, the one the charts use, and the message says why), and the diagnostics badge says when
the last fit failed instead of "diagnostics fine" (the charts show the last good fit).

Real fits of the paper's base results on the numpy engine (about a second each).
"""

from __future__ import annotations

from typing import Any

import pytest

import bbt_widget as bbt
from bbt_widget.fitting import PreparedFit
from bbt_widget.widget.app import BBTWidget
from bbt_widget.widget.fitted import failed_fit_badge

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


@pytest.mark.parametrize(
    ("name", "value", "reason"),
    [
        ("rope_low", 0.7, "rope low must be below rope high"),  # above rope_high
        ("rope_high", 0.45, "rope low must be below rope high"),  # at rope_low
        ("rope_low", -0.1, "must lie in [0, 1]"),
        ("rope_high", 1.2, "must lie in [0, 1]"),
        ("hdi", 1.2, "hdi mass must lie strictly between 0 and 1"),
        ("hdi", float("nan"), "hdi mass must lie strictly between 0 and 1"),
    ],
)
def test_an_invalid_summary_setting_is_refused(w: BBTWidget, name: str, value: float, reason: str):
    """The trait keeps the value the charts show; the message names the value and why."""
    kept, view, summary = getattr(w, name), w.view_data, w.summary
    setattr(w, name, value)
    assert getattr(w, name) == kept
    assert w.view_data is view and w.summary.equals(summary)
    assert f"{name} = {value!r} not applied" in w.message and reason in w.message
    assert f"it stays {kept!r}" in w.message
    # the next valid value of that setting clears the message
    setattr(w, name, kept)
    assert w.message == ""


def test_a_refusal_is_listed_per_setting_and_cleared_by_the_next_good_value(w: BBTWidget):
    w.rope_low = 0.7
    w.hdi = 1.2
    assert "rope_low = 0.7" in w.message and "hdi = 1.2" in w.message  # both listed
    w.rope_high = 0.6  # a valid ROPE: its refusal is gone, the HDI's stays
    assert "rope_low" not in w.message and "hdi = 1.2" in w.message
    assert (w.rope_low, w.rope_high) == (0.45, 0.6)
    w.hdi = 0.9
    assert w.message == "" and w.hdi == 0.9
    assert w.summary.equals(w.result.summary(rope=(0.45, 0.6), hdi=0.9))


def test_both_rope_bounds_move_past_each_other_at_once(w: BBTWidget) -> None:
    """Set together, the bounds are checked as a pair: (0.6, 0.7) from (0.45, 0.55) is fine,
    though 0.6 alone is above the high bound."""
    w.rope_low = 0.6
    assert w.rope_low == 0.45 and "rope_low = 0.6 not applied" in w.message
    with w.hold_trait_notifications():
        w.rope_low, w.rope_high = 0.6, 0.7
    assert (w.rope_low, w.rope_high) == (0.6, 0.7) and w.message == ""
    rope = w.view_data["rope"]  # one row per threshold line, each with the band's bounds
    assert set(rope["low"]) == {0.6} and set(rope["high"]) == {0.7}
    assert {0.6, 0.7} <= set(rope["x"])


def test_a_value_refused_from_the_front_end_is_sent_back(
    w: BBTWidget, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A value typed in the browser and refused: after ipywidgets' echo of the value typed,
    the kept one goes back, so the input and the model show what the charts show."""
    sent: list[dict[str, Any]] = []
    monkeypatch.setattr(w, "_send", lambda msg, buffers=None: sent.append(msg))
    w.set_state({"rope_low": 0.8})
    assert w.rope_low == 0.45
    updates = [m["state"] for m in sent if m["method"] == "update"]
    assert {"rope_low": 0.45} in updates
    echo = next(i for i, m in enumerate(sent) if m["method"] == "echo_update")
    assert echo < sent.index({"method": "update", "state": {"rope_low": 0.45}, "buffer_paths": []})
    assert any("rope_low = 0.8 not applied" in u.get("message", "") for u in updates)


def test_a_failed_fit_is_on_the_badge_until_a_fit_is_shown_again(
    w: BBTWidget, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = dict(w.diagnostics)
    assert good["label"] == "diagnostics fine"

    def fails(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the sampler exploded")

    monkeypatch.setattr(PreparedFit, "sample", fails)
    w.prior_scale = 0.9
    w.wait(FIT_TIMEOUT)
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
    # a failure, then a new fit that works: its badge
    monkeypatch.setattr(PreparedFit, "sample", fails)
    w.prior_scale = 0.8
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
    w.error = "Fit failed: the sampler exploded"
    try:
        check.show(w._result_key)
        assert w.diagnostics["label"] == "fit failed: last good fit shown"
        assert any("Stan (NUTS) agrees" in m for m in w.diagnostics["messages"])
        w.error = ""
        check.show(w._result_key)
        assert w.diagnostics["label"] == "diagnostics fine; Stan agrees"
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
