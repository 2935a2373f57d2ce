"""Background fit scheduler for the widget: one worker, newest request wins.

A control that needs a new fit calls :meth:`FitRunner.submit`. The runner

* answers from its cache when these settings were fitted before (instantly, in the caller's
  thread);
* otherwise cancels the fit in progress (sets the ``threading.Event`` passed to
  ``fit(context=...)``, :class:`~bbt_widget.core.run_context.RunContext`, so the engine
  stops its sampler) and queues the new request; only the
  newest request is kept, so a burst of slider moves costs one fit, not one per move;
* runs fits on a single daemon worker thread, so the kernel stays responsive. PyStan also
  needs this: ``stan.build`` calls ``asyncio.run``, which fails on the kernel's running loop;
* hands every event (progress, result, error) to a *dispatcher* that runs it on the kernel's
  own event loop (``kernel.io_loop.add_callback`` is thread-safe), so widget traits are only
  ever changed on the main thread; an event whose request has been superseded by the time
  it runs is dropped there.

Outside a kernel (scripts, tests) nothing drives a loop: events wait in an outbox until
:meth:`FitRunner.wait` (or :meth:`FitRunner.drain`) runs them in the caller's thread.
"""

from __future__ import annotations

import collections
import itertools
import logging
import threading
import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from ..core.run_context import RunContext

__all__ = [
    "FitEvent",
    "FitRunner",
    "kernel_dispatcher",
]

log = logging.getLogger(__name__)

R = TypeVar("R")
EventKind = Literal["queued", "progress", "done", "error", "cancelled"]
#: Runs a callable "soon" on the thread that owns the widget; must be thread-safe.
Dispatcher = Callable[[Callable[[], None]], None]


@dataclass(frozen=True)
class FitEvent(Generic[R]):
    """Something that happened to a fit request.

    Attributes
    ----------
    kind
        ``"queued"``, ``"progress"``, ``"done"``, ``"error"`` or ``"cancelled"``.
    job
        Request number (increasing); the widget only ever sees events of its newest one.
    key
        The settings key the request was submitted with.
    stage, fraction
        For progress: ``"compiling"`` or ``"sampling"`` and a fraction in [0, 1] (NaN when
        unknown). For an error: ``"display"`` when the fit succeeded but the listener failed
        on its result (the error is then the listener's exception), else ``""``.
    result
        For ``done``: the fit result.
    error
        For ``error``: the exception.
    seconds
        For ``done``/``error``: wall time of the fit (0 for a cache hit).
    cached
        For ``done``: whether the result came from the cache.
    at
        ``time.monotonic()`` when it happened (it may be delivered later, when the owner's
        loop is free), e.g. for the elapsed time of a compile.
    """

    kind: EventKind
    job: int
    key: Hashable
    stage: str = ""
    fraction: float = float("nan")
    result: R | None = None
    error: BaseException | None = None
    seconds: float = 0.0
    cached: bool = False
    at: float = field(default_factory=time.monotonic)


@dataclass
class _Job:
    id: int
    key: Hashable
    kwargs: dict[str, Any]
    cancel: threading.Event = field(default_factory=threading.Event)
    started: float = 0.0
    #: Set (under the runner's lock) once ``fit`` has returned or raised.
    ended: bool = False


def kernel_dispatcher() -> Dispatcher | None:
    """A dispatcher onto the running IPython kernel's event loop, or None outside a kernel.

    ipykernel (6 and 7) runs its shell on a tornado ``IOLoop`` in the main thread;
    ``IOLoop.add_callback`` is the documented thread-safe way to get a call onto it. The
    callback runs when the kernel is between messages, i.e. not in the middle of a cell.
    """
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return None
    shell = get_ipython()
    kernel = getattr(shell, "kernel", None)
    loop = getattr(kernel, "io_loop", None)
    if loop is None or not hasattr(loop, "add_callback"):
        return None
    returned: Dispatcher | None = loop.add_callback
    return returned


class FitRunner(Generic[R]):
    """Run fits one at a time in a background thread; newest request wins; cache by key.

    Parameters
    ----------
    fit
        ``fit(**kwargs, context=RunContext(callback, event)) -> result``; raises
        ``FitCancelled`` when the event is set.
    on_event
        Called with every :class:`FitEvent` that is still current, on the dispatcher's thread.
    dispatcher
        Schedules a callable on the owner's thread (see :func:`kernel_dispatcher`). ``None``
        queues events until :meth:`wait` or :meth:`drain`.
    cache_size
        Results kept (least recently used dropped). A 16-algorithm result holds some MB of
        draws.
    cancelled_types
        Exception types meaning "stopped on request" (dropped silently, never shown).
    progress_interval
        Minimum seconds between two progress events (the sampler reports far more often
        than a person can read).
    """

    def __init__(
        self,
        fit: Callable[..., R],
        on_event: Callable[[FitEvent[R]], None],
        *,
        dispatcher: Dispatcher | None = None,
        cache_size: int = 12,
        cancelled_types: tuple[type[BaseException], ...] = (),
        progress_interval: float = 0.1,
    ) -> None:
        self._fit = fit
        self._on_event = on_event
        self._dispatcher = dispatcher
        self._cache_size = cache_size
        self._cancelled_types = cancelled_types
        self._progress_interval = progress_interval

        self._lock = threading.Condition()
        self._ids = itertools.count(1)
        self._latest = 0  # id of the newest request; older events are stale
        self._pending: _Job | None = None
        self._running: _Job | None = None
        self._cache: collections.OrderedDict[Hashable, R] = collections.OrderedDict()
        self._outbox: collections.deque[FitEvent[R]] = collections.deque()
        self._closed = False
        self._thread: threading.Thread | None = None
        #: Fits started / finished / cancelled / dropped as stale (for tests and the badge).
        self.stats: collections.Counter[str] = collections.Counter()

    # ------------------------------------------------------------------ public API

    def submit(self, key: Hashable, kwargs: Mapping[str, Any]) -> int:
        """Ask for the result of ``fit(**kwargs)``; returns the request number.

        A cache hit is delivered at once, in the caller's thread (so going back to earlier
        settings is instant). Otherwise the fit in progress, if any, is cancelled and this
        request replaces any request still waiting.
        """
        with self._lock:
            if self._closed:
                raise RuntimeError("this FitRunner is closed")
            job = _Job(next(self._ids), key, dict(kwargs))
            self._latest = job.id
            self._outbox.clear()  # whatever was waiting is stale now
            hit = key in self._cache
            if hit:
                self._cache.move_to_end(key)
                result = self._cache[key]
                self.stats["cache_hits"] += 1
                self._cancel_locked()
            elif self._adoptable_locked(key):
                # The same settings are being fitted right now and that fit is still going
                # (e.g. a control set again to the value it has): adopt it as the current
                # request rather than restart it. A fit that has already ended (failed, or
                # done but not yet cached) is never adopted: it would deliver nothing more,
                # and a failed one must run again. A -> B -> A is not adopted either: B's
                # request cancelled A's fit, and a cancelled sampler cannot be resumed, so
                # A is fitted again from the start (B, superseded, never starts).
                running = self._running
                assert running is not None  # adoptable: a fit of these settings is running
                running.id = job.id
                self._pending = None
                self.stats["adopted"] += 1
                job = running
            else:
                self._cancel_locked()
                self._pending = job
                self._ensure_thread()
                self._lock.notify_all()
        if hit:
            self._emit_now(FitEvent("done", job.id, key, result=result, cached=True))
        else:
            self._emit_now(FitEvent("queued", job.id, key))
        return job.id

    def cached(self, key: Hashable) -> R | None:
        """The cached result for ``key``, or None."""
        with self._lock:
            return self._cache.get(key)

    def remember(self, key: Hashable, result: R) -> None:
        """Cache ``result`` under ``key`` as if this runner had fitted it (a fit of the same
        settings made elsewhere): a later :meth:`submit` of ``key`` is then a cache hit."""
        with self._lock:
            if self._closed or self._cache_size <= 0:
                return
            self._cache[key] = result
            self._cache.move_to_end(key)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)

    def is_fitting(self, key: Hashable) -> bool:
        """Whether a fit of ``key`` is running and would be adopted by :meth:`submit`."""
        with self._lock:
            return self._adoptable_locked(key)

    @property
    def busy(self) -> bool:
        """Whether a fit is running or waiting."""
        with self._lock:
            return self._running is not None or self._pending is not None

    def wait(self, timeout: float | None = None) -> bool:
        """Block until no fit is running or waiting, then deliver queued events here.

        Call it from the thread that owns the widget (the notebook's main thread). Returns
        False on timeout.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while self._running is not None or self._pending is not None:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    break
                self._lock.wait(remaining)
            idle = self._running is None and self._pending is None
        self.drain()
        return idle

    def drain(self) -> None:
        """Deliver the events waiting in the outbox (newest request's only)."""
        while True:
            with self._lock:
                if not self._outbox:
                    return
                event = self._outbox.popleft()
                current = event.job == self._latest
            if current:
                self._deliver(event)
            else:
                self.stats["stale_dropped"] += 1

    def cancel(self) -> None:
        """Cancel the running and the waiting fit (nothing is delivered for them)."""
        with self._lock:
            self._latest = next(self._ids)
            self._outbox.clear()
            self._cancel_locked()

    def close(self, timeout: float = 10.0) -> None:
        """Cancel everything, drop the cached results and stop the worker thread."""
        with self._lock:
            self._closed = True
            self._cache.clear()  # results hold MB of draws each: freed with the runner
            self._latest = next(self._ids)
            self._outbox.clear()
            self._cancel_locked()
            self._lock.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    # ------------------------------------------------------------------ internals

    def _adoptable_locked(self, key: Hashable) -> bool:
        running = self._running
        return (
            running is not None
            and running.key == key
            and not running.cancel.is_set()
            and not running.ended
        )

    def _cancel_locked(self) -> None:
        if self._running is not None and not self._running.cancel.is_set():
            self._running.cancel.set()
            self.stats["cancel_requests"] += 1
        if self._pending is not None:
            self.stats["superseded"] += 1
            self._pending = None

    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._work, name="bbt-fit-runner", daemon=True)
            self._thread.start()

    def _work(self) -> None:
        while True:
            with self._lock:
                while self._pending is None and not self._closed:
                    self._lock.wait()
                if self._closed:
                    self._running = None
                    self._lock.notify_all()
                    return
                job = self._pending
                assert job is not None  # the wait above ends on a request or on close
                self._pending = None
                self._running = job
            self._run(job)
            with self._lock:
                self._running = None
                self._lock.notify_all()

    def _run(self, job: _Job) -> None:
        job.started = time.perf_counter()
        last = [0.0]

        def progress(stage: str, fraction: float) -> None:
            now = time.perf_counter()
            if now - last[0] < self._progress_interval and not fraction >= 1.0:
                return
            last[0] = now
            self._post(FitEvent("progress", job.id, job.key, stage=stage, fraction=fraction))

        self.stats["started"] += 1
        try:
            result = self._fit(**job.kwargs, context=RunContext(progress, job.cancel))
        except self._cancelled_types:
            self._end(job)
            self.stats["cancelled"] += 1
            return
        except Exception as exc:  # the error is shown in the widget, never raised there
            self._end(job)
            seconds = time.perf_counter() - job.started
            if job.cancel.is_set():
                # an engine may fail in its own way when stopped mid-sample: still a cancel
                self.stats["cancelled"] += 1
                return
            self.stats["failed"] += 1
            log.debug("fit failed", exc_info=True)
            self._post(FitEvent("error", job.id, job.key, error=exc, seconds=seconds))
            return
        seconds = time.perf_counter() - job.started
        self.stats["finished"] += 1
        with self._lock:
            job.ended = True
            if not self._closed:  # a closed runner keeps nothing
                # Cached even when superseded: going back to these settings is then instant.
                self._cache[job.key] = result
                self._cache.move_to_end(job.key)
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        self._post(FitEvent("done", job.id, job.key, result=result, seconds=seconds))

    def _end(self, job: _Job) -> None:
        """Mark the job's fit as over, so that no new request adopts it."""
        with self._lock:
            job.ended = True

    def _post(self, event: FitEvent[R]) -> None:
        """From the worker: queue the event and ask the owner's loop to deliver it."""
        with self._lock:
            if event.job != self._latest:
                self.stats["stale_dropped"] += 1
                return
            if event.kind == "progress" and self._outbox and self._outbox[-1].kind == "progress":
                self._outbox[-1] = event  # the loop is busy: only the latest progress matters
            else:
                self._outbox.append(event)
        if self._dispatcher is not None:
            try:
                self._dispatcher(self.drain)
            except Exception:  # a closed kernel loop: keep the event for wait()
                log.debug("dispatcher failed", exc_info=True)

    def _emit_now(self, event: FitEvent[R]) -> None:
        """From the owner's thread: deliver at once."""
        self._deliver(event)

    def _deliver(self, event: FitEvent[R]) -> None:
        try:
            self._on_event(event)
        except Exception as exc:  # a listener bug must not kill the kernel loop or the worker
            self.stats["listener_failed"] += 1
            log.debug("FitRunner listener failed on %s", event.kind, exc_info=True)
            if event.kind == "error":
                # the listener cannot even show an error: the log is all that is left
                log.exception("FitRunner listener failed on an error event")
                return
            # Surfaced as the request's error, never only as a log line: otherwise the
            # owner would keep showing "sampling 100%" for a fit that is done.
            self._on_event_safely(
                FitEvent(
                    "error",
                    event.job,
                    event.key,
                    stage="display",
                    error=exc,
                    seconds=event.seconds,
                )
            )

    def _on_event_safely(self, event: FitEvent[R]) -> None:
        try:
            self._on_event(event)
        except Exception:
            log.exception("FitRunner listener failed on %s", event.kind)
