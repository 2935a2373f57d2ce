"""How long a fit still has to run, from its pace so far: the status line's "about 12 s left".

A stage (sampling, a preview) reports the fraction it has done; the time left is the time it
took per fraction so far times the fraction still to do. Nothing is said before the pace is
known (a second into the stage and a twentieth of it done): a guess from the first ticks, when
the sampler is still starting its chains, is wrong by far.

:func:`wait_all` waits for several of the widget's runners within one timeout.
"""

from __future__ import annotations

import math
import time
from collections.abc import Hashable, Iterable
from typing import Any

__all__ = ["WaitEstimate", "time_left_text", "wait_all"]

#: Seconds of a stage before its pace is trusted.
MIN_ELAPSED_S = 1.0
#: Fraction of a stage done before its pace is trusted.
MIN_DONE = 0.05


def time_left_text(seconds: float) -> str:
    """``seconds`` still to wait, in words: "about 12 s left", "about 3 min left"."""
    if not math.isfinite(seconds) or seconds < 0:
        return ""
    if seconds < 1:
        return "almost done"
    if seconds < 90:
        return f"about {seconds:.0f} s left"
    return f"about {seconds / 60:.0f} min left"


class WaitEstimate:
    """The time left of the stage in progress, from the progress events of one fit."""

    def __init__(self) -> None:
        #: (the fit's job and stage, when its first event came, the fraction done then)
        self._start: tuple[Hashable, float, float] | None = None

    def reset(self) -> None:
        """Forget the stage (a fit done, failed or queued behind another)."""
        self._start = None

    def text(self, job: Hashable, stage: str, at: float, fraction: float) -> str:
        """The time left of ``stage`` of fit ``job`` with ``fraction`` done at time ``at``
        (``time.monotonic()``), in words; "" while the pace is not known yet."""
        if not 0.0 <= fraction <= 1.0:
            return ""
        key = (job, stage)
        if self._start is None or self._start[0] != key:
            self._start = (key, at, fraction)
            return ""
        _, started, done_then = self._start
        elapsed, done = at - started, fraction - done_then
        if elapsed < MIN_ELAPSED_S or done < MIN_DONE:
            return ""
        return time_left_text(elapsed * (1.0 - fraction) / done)


def wait_all(runners: Iterable[Any], timeout: float | None = None) -> bool:
    """Wait for each runner (``FitRunner.wait``, which also delivers its events here) in
    turn, all within ``timeout`` seconds; False as soon as one is still busy at the end."""
    deadline = None if timeout is None else time.monotonic() + timeout
    for runner in runners:
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        if not runner.wait(left):
            return False
    return True
