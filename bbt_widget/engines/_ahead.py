"""Fits started ahead of the call that needs them (:func:`bbt_widget.engines.start_ahead`).

A caller that knows a fit will be asked for later (the report's Plackett-Luce fit, sampled in
numpy while the BBT fit waits for Stan's chains) starts it now in a thread, under a key that
says everything its result depends on; the later call with the same key takes the started
fit's result instead of fitting again.

Each started fit is taken at most once; one never asked for runs to its end in its daemon
thread, unused.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from .base import ProgressCallback


@dataclasses.dataclass
class _Started:
    """A fit running in its thread: its result to come and the share of it done so far."""

    future: Future[Any]
    fraction: float = 0.0


_lock = threading.Lock()
_started: dict[str, _Started] = {}


def start(key: str, run: Callable[[ProgressCallback], Any]) -> None:
    """Run ``run(progress)`` in a daemon thread, its result kept under ``key`` for
    :func:`take` (a fit already started under that key is left as it is)."""
    with _lock:
        if key in _started:
            return
        started = _started[key] = _Started(Future())

    def progress(stage: str, fraction: float) -> None:
        if stage == "sampling" and not math.isnan(fraction):
            started.fraction = fraction

    def target() -> None:
        if not started.future.set_running_or_notify_cancel():
            return
        try:
            started.future.set_result(run(progress))
        except BaseException as err:  # handed to the caller that takes the fit
            started.future.set_exception(err)

    threading.Thread(target=target, name="bbt-widget-ahead", daemon=True).start()


def take(key: str, progress: ProgressCallback | None) -> Any | None:
    """The result of the fit started under ``key``, once it ends (its error raised here), or
    None when none was started. While waiting, ``progress`` gets ``("sampling", f)`` from
    this thread."""
    with _lock:
        started = _started.pop(key, None)
    if started is None:
        return None
    shown = -1.0
    while True:
        if progress is not None and started.fraction != shown:
            shown = started.fraction
            progress("sampling", shown)
        try:
            done = started.future.result(timeout=0.1)
        except FutureTimeout:
            continue
        if progress is not None:
            progress("sampling", 1.0)
        return done


def forget() -> None:
    """Forget every fit started and not taken (a caller that failed, or chose other
    settings, before taking its result): each runs to its end unused, and a later request
    fits afresh instead of finding a stale fit."""
    with _lock:
        _started.clear()
