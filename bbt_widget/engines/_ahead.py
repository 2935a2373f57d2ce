"""Fits started ahead of the call that needs them (:func:`bbt_widget.engines.sample_ahead`,
:func:`bbt_widget.engines.start_ahead`).

A caller that knows a fit will be asked for later (the report's Plackett-Luce fit, while the
BBT fit runs) starts it now in a thread: a Stan fit's chains run in the engine's own
processes, so they use the cores the caller's Python does not, and a numpy fit uses the
caller's process while it waits for Stan. The later call with the same request (for Stan:
:func:`~bbt_widget.engines.sample` with the same model, data, engine and settings) takes the
started fit's result instead of fitting again: the same request, with the same seed, gives
the same result.

Each started fit is taken at most once; one never asked for runs to its end in its daemon
thread (or is stopped with the engine's processes when the interpreter exits).
"""

from __future__ import annotations

import dataclasses
import json
import math
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from .base import FitCancelled, ProgressCallback, SamplerSettings


@dataclasses.dataclass
class _Started:
    """A fit running in its thread: its result to come (a Stan fit's ``Draws``, or
    what the caller's fit returns) and the share of it done so far."""

    future: Future[Any]
    fraction: float = 0.0


_lock = threading.Lock()
_started: dict[str, _Started] = {}
#: The threads running started fits (until :func:`join` sees them end).
_threads: list[threading.Thread] = []


def request_key(
    model: str, stan_data: dict[str, Any], engine: str, settings: SamplerSettings
) -> str:
    """What makes two requests the same fit: the model, its data as Stan reads them, the
    engine and the sampler settings (the seed among them), as canonical JSON."""

    def plain(value: Any) -> Any:
        if hasattr(value, "tolist"):  # numpy arrays and scalars
            return value.tolist()
        raise TypeError(f"not JSON: {type(value).__name__}")

    what = [model, engine, dataclasses.asdict(settings), stan_data]
    return json.dumps(what, sort_keys=True, default=plain)


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

    thread = threading.Thread(target=target, name="bbt-widget-ahead", daemon=True)
    with _lock:
        _threads.append(thread)
    thread.start()


def take(
    key: Callable[[], str], progress: ProgressCallback | None, cancel: threading.Event | None
) -> Any | None:
    """The result of the fit started under the key ``key()`` (made only when some fit was
    started), once it ends (its error raised here), or None when none was started. While
    waiting, ``progress`` gets ``("sampling", f)`` from this thread; ``cancel`` stops the
    wait (the started fit runs on, unused)."""
    with _lock:
        started = _started.pop(key(), None) if _started else None
    if started is None:
        return None
    shown = -1.0
    while True:
        if cancel is not None and cancel.is_set():
            raise FitCancelled("sampling cancelled")
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
    settings, before taking its draws): each runs to its end unused, and a later request
    samples afresh instead of finding a stale fit."""
    with _lock:
        _started.clear()


def join(timeout: float) -> None:
    """Wait up to ``timeout`` seconds for the threads of started fits to end: after their
    worker processes were stopped they remove their temporary folders and end, which a
    program about to exit must let them do (they are daemon threads)."""
    deadline = time.monotonic() + timeout
    with _lock:
        threads = list(_threads)
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    with _lock:
        _threads[:] = [t for t in _threads if t.is_alive()]
