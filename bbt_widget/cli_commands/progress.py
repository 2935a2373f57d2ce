"""Progress on stderr for the command: a stage at a time, its percentage and elapsed time.

On a terminal each stage is a tqdm bar (:func:`bbt_widget.lab.progress.stage_bar`), replaced
by a "done in" line when the stage ends; in a log (CI, a file) plain lines, never carriage
returns. A long stage that reports its fraction done also says how long it has left
(:func:`time_left`): on the bar, and in a log a line at every tenth done.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

from bbt_widget.core.sizing import duration
from bbt_widget.lab.progress import stage_bar

#: A stage's time left is shown once it has run this long: a fit of a few seconds needs none,
#: and the first seconds (warm-up's start, a worker's start) say little about the rest.
ETA_AFTER = 5.0
#: ... and once this much of it is done: extrapolating from less is noise.
ETA_FROM = 0.02


def time_left(fraction: float, elapsed: float) -> str | None:
    """ "about 1 min left" for a stage ``fraction`` done after ``elapsed`` seconds, at the pace
    so far; None for a short or barely started stage (:data:`ETA_AFTER`, :data:`ETA_FROM`),
    a finished one, or an unknown fraction (NaN)."""
    if elapsed < ETA_AFTER or not ETA_FROM <= fraction < 1.0:
        return None
    return f"about {duration(elapsed * (1.0 - fraction) / fraction)} left"


class Progress:
    """Progress on stderr: a line per stage, live percentages and elapsed seconds.

    The compile step reports no fraction, so a ticker thread shows its elapsed time (every
    second on a terminal, every 15 s in a log) instead of one static line for minutes. A long
    stage with a fraction says how long it has left (:func:`time_left`), from ``clock``'s
    seconds (``time.perf_counter`` unless a test gives another).
    """

    def __init__(
        self, stream: TextIO | None = None, clock: Callable[[], float] = time.perf_counter
    ) -> None:
        self.stream = stream or sys.stderr  # looked up now: tests and notebooks replace stderr
        self.tty = self.stream.isatty()
        self.clock = clock
        self.stage: str | None = None
        self.started = clock()
        self.shown = -1
        self.logged = 0  # the last tenth done that a log line gave the time left of
        self.every = 1.0 if self.tty else 15.0  # seconds between elapsed-time lines
        self._bar: Any = None  # the stage's tqdm bar, on a terminal
        self._lock = threading.Lock()
        self._stop = threading.Event()

    def __call__(self, stage: str, fraction: float) -> None:
        known = fraction == fraction  # NaN: the stage reports no fraction
        with self._lock:
            if stage != self.stage:
                self._end_stage()
                self.stage, self.started, self.shown = stage, self.clock(), -1
                self.logged = 0
                compiling = stage.startswith("compiling")
                note = " (first run on this machine, then cached)" if compiling else ""
                if self.tty:
                    # the engines' own stage is "compiling": say what
                    what = "compiling the Stan model" if stage == "compiling" else stage
                    self._open_bar(f"{what}{note}", fraction_known=known and not compiling)
                else:
                    self._write(f"{stage}{note}...", newline=True)
                if compiling:
                    self._stop.clear()
                    threading.Thread(target=self._tick, args=(stage,), daemon=True).start()
            pct = int(fraction * 100) if known else -1
            if pct < 0 or pct == self.shown:
                return
            left = time_left(fraction, self.clock() - self.started)
            if self._bar is not None:
                if self._bar.total is None:  # a stage that gave no fraction at first
                    self._open_bar(self._bar.desc, fraction_known=True)
                if left is not None:
                    self._bar.set_postfix_str(left, refresh=False)
                self._bar.update(pct - self._bar.n)
            elif not self.tty and left is not None and pct // 10 > self.logged:
                self.logged = pct // 10
                self._write(f"{stage} {pct}% - {left}", newline=True)
            self.shown = pct

    def step(self, stage: str) -> None:
        """Start a step that reports no fraction (writing the report)."""
        self(stage, math.nan)

    def done(self, message: str = "") -> None:
        """End the current stage, with a closing message such as "fitted in 1.2 s"."""
        with self._lock:
            self._end_stage()
            self.stage = None
        if message:
            self._write(message, newline=True)

    def _open_bar(self, label: str, *, fraction_known: bool) -> None:
        if self._bar is not None:
            self._bar.close()
        self._bar = stage_bar(label, self.stream, fraction_known=fraction_known, leave=False)

    def _end_stage(self) -> None:
        self._stop.set()
        if self._bar is not None:
            self._bar.close()  # not left on screen: the "done in" line takes its place
            self._bar = None
        if self.stage is not None:
            took = self.clock() - self.started
            if self.tty:
                self._write(f"{self.stage}... done in {took:.1f} s", newline=True)
            elif took >= 0.5:
                self._write(f"{self.stage}: done in {took:.1f} s", newline=True)

    def _tick(self, stage: str) -> None:
        while not self._stop.wait(self.every):
            with self._lock:
                if self.stage != stage or self._stop.is_set():
                    return
                if self._bar is not None:
                    self._bar.refresh()  # moves the bar's clock
                    continue
                took = self.clock() - self.started
                what = "compiling the Stan model" if stage == "compiling" else stage
                self._write(f"{what}... {took:.0f} s", newline=True)

    def _write(self, text: str, *, newline: bool) -> None:
        self.stream.write(text + ("\n" if newline else ""))
        self.stream.flush()


class Silent(Progress):
    """``--quiet``: the same calls, nothing written."""

    def __init__(self, stream: TextIO | None = None) -> None:
        super().__init__(stream)
        self.tty = False  # no bar either

    def _write(self, text: str, *, newline: bool) -> None:
        pass
