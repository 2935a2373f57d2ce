"""Progress on stderr for the command: a line per stage, live percentages and elapsed time."""

from __future__ import annotations

import math
import sys
import threading
import time
from typing import TextIO


class Progress:
    """Progress on stderr: a line per stage, live percentages and elapsed seconds.

    The compile step reports no fraction, so a ticker thread shows its elapsed time (every
    second on a terminal, every 15 s in a log) instead of one static line for minutes.
    """

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr  # looked up now: tests and notebooks replace stderr
        self.tty = self.stream.isatty()
        self.stage: str | None = None
        self.started = time.perf_counter()
        self.shown = -1
        self.every = 1.0 if self.tty else 15.0  # seconds between elapsed-time lines
        self._lock = threading.Lock()
        self._stop = threading.Event()

    def __call__(self, stage: str, fraction: float) -> None:
        with self._lock:
            if stage != self.stage:
                self._end_stage()
                self.stage, self.started, self.shown = stage, time.perf_counter(), -1
                compiling = stage.startswith("compiling")
                note = " (first run on this machine, then cached)" if compiling else ""
                self._write(f"{stage}{note}...", newline=not self.tty)
                if compiling:
                    self._stop.clear()
                    threading.Thread(target=self._tick, args=(stage,), daemon=True).start()
            pct = int(fraction * 100) if fraction == fraction else -1  # NaN: unknown
            if self.tty and pct >= 0 and pct != self.shown:
                self._write(f"\r{stage}... {pct:3d}%", newline=False)
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

    def _end_stage(self) -> None:
        self._stop.set()
        if self.stage is not None:
            took = time.perf_counter() - self.started
            if self.tty:
                self._write(f"\r{self.stage}... done in {took:.1f} s", newline=True)
            elif took >= 0.5:
                self._write(f"{self.stage}: done in {took:.1f} s", newline=True)

    def _tick(self, stage: str) -> None:
        while not self._stop.wait(self.every):
            with self._lock:
                if self.stage != stage or self._stop.is_set():
                    return
                took = time.perf_counter() - self.started
                # the engines' own stage is "compiling": say what
                what = "compiling the Stan model" if stage == "compiling" else stage
                if self.tty:
                    self._write(f"\r{what}... {took:.0f} s", newline=False)
                else:
                    self._write(f"{what}... {took:.0f} s", newline=True)

    def _write(self, text: str, *, newline: bool) -> None:
        self.stream.write(text + ("\n" if newline else ""))
        self.stream.flush()


class Silent(Progress):
    """``--quiet``: the same calls, nothing written."""

    def _write(self, text: str, *, newline: bool) -> None:
        pass
