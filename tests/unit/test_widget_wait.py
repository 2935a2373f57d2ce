"""The time left of a fit (widget/wait.py), shown with its percentage in the status line:
nothing until the pace is known, then the time per fraction so far times the fraction left."""

from __future__ import annotations

from typing import Any

import pytest

import bbt_widget as bbt
from bbt_widget.widget.app import BBTWidget
from bbt_widget.widget.runner import FitEvent
from bbt_widget.widget.wait import WaitEstimate, time_left_text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.4, "almost done"),
        (12.4, "about 12 s left"),
        (89.0, "about 89 s left"),
        (150.0, "about 2 min left"),
        (float("nan"), ""),
        (-1.0, ""),
    ],
)
def test_time_left_in_words(seconds: float, text: str) -> None:
    assert time_left_text(seconds) == text


def test_estimate_from_the_pace_of_the_stage() -> None:
    wait = WaitEstimate()
    assert wait.text(1, "sampling", 100.0, 0.10) == ""  # the start: no pace yet
    assert wait.text(1, "sampling", 100.5, 0.20) == ""  # half a second: not trusted yet
    # 0.4 of the stage in 4 s: 0.5 left takes 5 s
    assert wait.text(1, "sampling", 104.0, 0.50) == "about 5 s left"
    assert wait.text(1, "sampling", 104.0, float("nan")) == ""  # the engine cannot tell
    # a new fit (or stage) starts over: its pace is its own
    assert wait.text(2, "sampling", 200.0, 0.0) == ""
    assert wait.text(2, "sampling", 210.0, 0.5) == "about 10 s left"
    wait.reset()
    assert wait.text(2, "sampling", 220.0, 0.6) == ""


def test_the_status_line_says_how_long_the_fit_still_takes() -> None:
    w: Any = BBTWidget(bbt.datasets.load_base(), dataset="db", seed=7, stan_check=False)
    try:
        assert w.wait(600), w.error
        # the events the runner posts for a slow fit
        for at, fraction in [(10.0, 0.0), (12.0, 0.2), (20.0, 0.6)]:
            w._fits.on_fit_event(
                FitEvent("progress", 99, "k", stage="sampling", fraction=fraction, at=at)
            )
        # 0.6 in 10 s: the 0.4 left takes about 7 s
        assert w.status_text.startswith("sampling 60%, about 7 s left"), w.status_text
        w._fits.on_fit_event(FitEvent("queued", 100, "k2"))
        w._fits.on_fit_event(FitEvent("progress", 100, "k2", stage="sampling", fraction=0.3))
        assert "left" not in w.status_text, w.status_text  # a new fit: no pace yet
    finally:
        w.close()
