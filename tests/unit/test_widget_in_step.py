"""The views behind the settings (widget/in_step.py, trait ``stale_views``): listed from a
change until they are redrawn, with the settings the kernel last saw; a failed fit leaves them
listed, a refused value (no setting changed) none; a setting that changes no view lists none.

Real fits of the paper's base results on the numpy engine (about a second each).
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

import bbt_widget as bbt
from bbt_widget.fitting import PreparedFit
from bbt_widget.widget.app import BBTWidget
from bbt_widget.widget.in_step import SETTINGS_TRAITS
from bbt_widget.widget.messages import FitFailed

pytestmark = pytest.mark.stan

FIT_TIMEOUT = 600


@pytest.fixture
def w() -> Any:
    widget = BBTWidget(bbt.datasets.load_base(), dataset="db", seed=7, stan_check=False)
    try:
        yield widget
    finally:
        widget.close()


def _behind(w: BBTWidget) -> list[str]:
    return list(w.stale_views["views"])


def test_every_view_behind_until_drawn(w: BBTWidget) -> None:
    # the settings the kernel saw, every one of them, as the front end compares them
    assert set(w.stale_views["settings"]) == set(SETTINGS_TRAITS)
    assert w.wait(FIT_TIMEOUT), w.error
    assert w.wait_background(FIT_TIMEOUT)
    assert _behind(w) == []
    assert w.stale_views["settings"]["hdi"] == w.hdi


def test_a_view_change_lists_the_summary_until_it_is_built(
    w: BBTWidget, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert w.wait(FIT_TIMEOUT) and w.wait_background(FIT_TIMEOUT)
    sent: list[list[str]] = []
    w.observe(lambda change: sent.append(list(change["new"]["views"])), names=["stale_views"])
    # the summary's build held until the test has looked
    release = threading.Event()
    build = w._summary_runner._fit

    def held(**kwargs: Any) -> Any:
        release.wait(FIT_TIMEOUT)
        return build(**kwargs)

    monkeypatch.setattr(w._summary_runner, "_fit", held)
    w.hdi = 0.8
    # marked at the change (both), then the intervals redrawn in the change's own message
    assert sent[0] == ["pairs", "summary"], sent
    assert _behind(w) == ["summary"]
    assert w.stale_views["settings"]["hdi"] == 0.8
    release.set()
    assert w.wait_background(FIT_TIMEOUT)
    assert _behind(w) == []
    # back to a summary already built: it comes with the headline, nothing left behind
    sent.clear()
    w.hdi = 0.89
    assert _behind(w) == []
    assert sent[-1] == []


def test_a_refit_lists_every_view_until_shown(w: BBTWidget) -> None:
    assert w.wait(FIT_TIMEOUT) and w.wait_background(FIT_TIMEOUT)
    w.ties = "add"
    assert _behind(w) == ["pairs", "summary"]  # at once, before the fit has run
    assert w.wait(FIT_TIMEOUT) and w.wait_background(FIT_TIMEOUT)
    assert _behind(w) == []
    # d_min with the local ROPE off: the same fit, nothing behind
    w.d_min = 0.3
    assert _behind(w) == []
    assert w.stale_views["settings"]["d_min"] == 0.3


def test_a_failed_fit_leaves_the_views_listed_a_refused_value_none(
    w: BBTWidget, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert w.wait(FIT_TIMEOUT) and w.wait_background(FIT_TIMEOUT)
    w.set_state({"control": "not an algorithm"})  # refused: the views keep the last one
    assert w.message and w.control == "" and _behind(w) == []

    def fails(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the sampler exploded")

    monkeypatch.setattr(PreparedFit, "sample", fails)
    w.prior_scale = 0.9
    with pytest.raises(FitFailed):
        w.wait(FIT_TIMEOUT)
    assert w.status == "error"
    assert _behind(w) == ["pairs", "summary"]  # the last good fit's views, said so
    monkeypatch.undo()
    w.prior_scale = 0.5  # the last good settings: from the cache, in step again
    assert w.wait_background(FIT_TIMEOUT)
    assert _behind(w) == []
