"""The report's side fits, started before its BBT fit and taken when their section is built.

The report's Plackett-Luce fit (Gibbs, numpy) needs nothing the BBT fit gives, so the report
starts it in a thread before the BBT fit: it samples while the BBT fit waits for Stan's
chains (or, on the numpy engine, on the other core). The caller holds the started fit and
hands it to the section that needs it: nothing is registered anywhere, so a report that
fails or chooses other settings leaves nothing behind for a later one (a fit never taken
runs to its end in its daemon thread, unused).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from ...core.draws import ProgressCallback

__all__ = ["SideFit"]

#: Seconds between two looks at a side fit's progress while waiting for it.
_POLL = 0.1


class SideFit:
    """A fit running in its own thread, started with ``options``; :meth:`take` gives its
    result once it ends.

    Parameters
    ----------
    run
        ``run(progress)``: the fit, reporting ``(stage, fraction)`` to ``progress``.
    options
        What the fit was started with: :meth:`take` gives its result only to a caller that
        asks for the same.
    """

    def __init__(self, run: Callable[[ProgressCallback], Any], options: Mapping[str, Any]):
        self.options = dict(options)
        self.fraction = 0.0
        self._future: Future[Any] = Future()
        threading.Thread(
            target=self._run, args=(run,), name="bbt-widget-side-fit", daemon=True
        ).start()

    def _run(self, run: Callable[[ProgressCallback], Any]) -> None:
        if not self._future.set_running_or_notify_cancel():
            return
        try:
            self._future.set_result(run(self._progress))
        except BaseException as err:  # handed to the caller that takes the fit
            self._future.set_exception(err)

    def _progress(self, stage: str, fraction: float) -> None:
        if stage == "sampling" and not math.isnan(fraction):
            self.fraction = fraction

    def take(self, options: Mapping[str, Any], progress: ProgressCallback | None) -> Any | None:
        """The fit's result once it ends (its error raised here), or None when it was started
        with other ``options`` than these (the caller then fits afresh). While waiting,
        ``progress`` gets ``("sampling", fraction)`` from the calling thread."""
        if dict(options) != self.options:
            return None
        shown = -1.0
        while True:
            if progress is not None and self.fraction != shown:
                shown = self.fraction
                progress("sampling", shown)
            try:
                done = self._future.result(timeout=_POLL)
            except FutureTimeout:
                continue
            if progress is not None:
                progress("sampling", 1.0)
            return done
