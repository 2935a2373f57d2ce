"""The background fit scheduler: newest request wins, stale results dropped, cache hits.

A controllable fake ``fit`` stands in for Stan here (the scheduler's logic does not depend on
what is fitted); ``tests/unit/test_widget.py`` drives the same runner with real fits.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from bbt_widget.core.run_context import QUIET, RunContext
from bbt_widget.widget.runner import FitEvent, FitRunner, kernel_dispatcher


class Cancelled(RuntimeError):
    pass


class FakeFit:
    """A fit that samples in small steps, honours ``cancel`` and can be held or made to fail."""

    def __init__(self, steps: int = 20, step_seconds: float = 0.01) -> None:
        self.steps = steps
        self.step_seconds = step_seconds
        self.calls: list[dict[str, Any]] = []
        self.cancelled: list[Any] = []
        self.release = threading.Event()
        self.release.set()
        self.started = threading.Event()
        self.active = 0
        self.max_active = 0
        self._lock = threading.Lock()

    def __call__(self, *, value: Any, fail: str = "", context: RunContext = QUIET) -> Any:
        progress, cancel = context.progress, context.cancel
        with self._lock:
            self.calls.append({"value": value})
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        self.started.set()
        try:
            self.release.wait(10)
            if fail:
                raise ValueError(fail)
            for i in range(self.steps):
                if cancel is not None and cancel.is_set():
                    self.cancelled.append(value)
                    raise Cancelled(value)
                time.sleep(self.step_seconds)
                if progress is not None:
                    progress("sampling", (i + 1) / self.steps)
            return {"value": value}
        finally:
            with self._lock:
                self.active -= 1


def make_runner(
    fit: Callable[..., Any], dispatcher=None, **kwargs: Any
) -> tuple[FitRunner, list[FitEvent]]:
    events: list[FitEvent] = []
    runner = FitRunner(
        fit, events.append, dispatcher=dispatcher, cancelled_types=(Cancelled,), **kwargs
    )
    return runner, events


def kinds(events: list[FitEvent]) -> list[str]:
    return [e.kind for e in events]


def test_one_fit_delivers_progress_and_result_on_wait() -> None:
    fit = FakeFit()
    runner, events = make_runner(fit, progress_interval=0.0)
    job = runner.submit("a", {"value": "a"})
    assert kinds(events) == ["queued"]  # nothing else until the owner drains
    assert runner.wait(10)
    done = events[-1]
    assert done.kind == "done" and done.job == job and done.result == {"value": "a"}
    assert not done.cached and done.seconds > 0
    # progress was coalesced while nobody drained: only the latest one is kept
    assert [e.kind for e in events[1:-1]] == ["progress"]
    assert events[1].fraction == pytest.approx(1.0)
    runner.close()


def test_newer_request_cancels_running_fit_and_drops_stale_result() -> None:
    fit = FakeFit(steps=200, step_seconds=0.01)
    runner, events = make_runner(fit)
    runner.submit("a", {"value": "a"})
    assert fit.started.wait(5)
    time.sleep(0.05)
    runner.submit("b", {"value": "b"})
    assert runner.wait(20)
    results = [e.result for e in events if e.kind == "done"]
    assert results == [{"value": "b"}]
    assert fit.cancelled == ["a"]
    assert runner.stats["cancelled"] == 1
    runner.close()


def test_burst_of_requests_runs_first_and_last_only() -> None:
    """Rapid slider moves: the fit running is cancelled, the waiting ones never start."""
    fit = FakeFit(steps=50, step_seconds=0.01)
    fit.release.clear()  # hold the first fit at its start
    runner, events = make_runner(fit)
    runner.submit(0, {"value": 0})
    assert fit.started.wait(5)
    for i in range(1, 30):
        runner.submit(i, {"value": i})
    fit.release.set()
    assert runner.wait(20)
    assert [c["value"] for c in fit.calls] == [0, 29]
    assert [e.result for e in events if e.kind == "done"] == [{"value": 29}]
    assert fit.max_active == 1  # one worker: never two samplers at once
    assert runner.stats["superseded"] == 28
    runner.close()


def test_result_finishing_after_a_newer_request_is_cached_not_shown() -> None:
    """An engine may finish before it sees the cancel: the result is kept for later, unshown."""

    def uncancellable(*, value: Any, context: RunContext = QUIET) -> Any:
        time.sleep(0.2)
        return {"value": value}

    runner, events = make_runner(uncancellable)
    runner.submit("a", {"value": "a"})
    time.sleep(0.05)
    runner.submit("b", {"value": "b"})
    assert runner.wait(10)
    assert [e.result for e in events if e.kind == "done"] == [{"value": "b"}]
    assert runner.cached("a") == {"value": "a"}
    runner.close()


def test_cache_hit_is_instant_and_cancels_running_fit() -> None:
    fit = FakeFit(steps=5)
    runner, events = make_runner(fit)
    runner.submit("a", {"value": "a"})
    runner.wait(10)
    fit2_steps = FakeFit(steps=500)
    runner._fit = fit2_steps  # the next fit is long
    runner.submit("b", {"value": "b"})
    assert fit2_steps.started.wait(5)
    events.clear()
    started = time.perf_counter()
    runner.submit("a", {"value": "a"})  # back to a: from the cache, in this thread
    elapsed = time.perf_counter() - started
    assert kinds(events) == ["done"] and events[0].cached and events[0].result == {"value": "a"}
    assert elapsed < 0.05
    assert runner.wait(10)
    assert kinds(events) == ["done"]  # b was cancelled: nothing more arrives
    assert fit2_steps.cancelled == ["b"]
    assert runner.stats["cache_hits"] == 1
    runner.close()


def test_cache_is_bounded_lru() -> None:
    runner, _ = make_runner(FakeFit(steps=1), cache_size=2)
    for key in ("a", "b", "c"):
        runner.submit(key, {"value": key})
        runner.wait(10)
    assert runner.cached("a") is None
    assert runner.cached("b") is not None and runner.cached("c") is not None
    runner.close()


def test_same_settings_while_running_adopt_the_running_fit() -> None:
    fit = FakeFit(steps=30)
    runner, events = make_runner(fit)
    runner.submit("a", {"value": "a"})
    assert fit.started.wait(5)
    runner.submit("a", {"value": "a"})
    assert runner.wait(10)
    assert len(fit.calls) == 1
    assert [e.result for e in events if e.kind == "done"] == [{"value": "a"}]
    runner.close()


def test_error_is_delivered_as_event_not_raised() -> None:
    runner, events = make_runner(FakeFit())
    runner.submit("bad", {"value": "x", "fail": "the model could not compile"})
    assert runner.wait(10)
    assert events[-1].kind == "error"
    assert str(events[-1].error) == "the model could not compile"
    # the worker survives an error
    runner.submit("good", {"value": "y"})
    assert runner.wait(10)
    assert events[-1].kind == "done"
    runner.close()


def test_dispatcher_receives_drain_calls_from_the_worker() -> None:
    """In a kernel, the worker asks the kernel's loop to deliver; here a list stands in."""
    scheduled: list[Callable[[], None]] = []
    lock = threading.Lock()

    def dispatcher(fn: Callable[[], None]) -> None:
        with lock:
            scheduled.append(fn)

    runner, events = make_runner(FakeFit(steps=3), dispatcher=dispatcher)
    runner.submit("a", {"value": "a"})
    deadline = time.monotonic() + 10
    while runner.busy and time.monotonic() < deadline:
        time.sleep(0.01)
    assert scheduled, "the worker never asked for delivery"
    assert kinds(events) == ["queued"]  # nothing delivered from the worker thread itself
    for fn in list(scheduled):
        fn()  # what the kernel loop would do, on the owner's thread
    assert events[-1].kind == "done"
    runner.close()


def test_listener_errors_do_not_kill_the_runner() -> None:
    calls: list[str] = []

    def listener(event: FitEvent) -> None:
        calls.append(event.kind)
        raise RuntimeError("listener bug")

    runner = FitRunner(FakeFit(steps=2), listener, cancelled_types=(Cancelled,))
    runner.submit("a", {"value": "a"})
    assert runner.wait(10)
    assert calls[-2:] == ["done", "error"]  # the failure was offered as an error too
    runner.submit("b", {"value": "b"})  # and the runner still works
    assert runner.wait(10)
    assert calls[-2:] == ["done", "error"]
    runner.close()


def test_listener_failure_on_a_result_is_delivered_as_the_requests_error() -> None:
    # issue 9 finding 11: the widget's listener failed on a result and the failure went only
    # to the log, so the widget stayed at "sampling 100%"
    events: list[FitEvent] = []

    def listener(event: FitEvent) -> None:
        events.append(event)
        if event.kind == "done":
            raise ValueError("All arrays must be of the same length")

    runner = FitRunner(FakeFit(steps=2), listener, cancelled_types=(Cancelled,))
    job = runner.submit("a", {"value": "a"})
    assert runner.wait(10)
    error = events[-1]
    assert error.kind == "error" and error.job == job and error.key == "a"
    assert error.stage == "display"
    assert "same length" in str(error.error)
    assert runner.stats["listener_failed"] == 1
    runner.close()


def test_close_cancels_and_stops_the_worker() -> None:
    fit = FakeFit(steps=1000)
    runner, _events = make_runner(fit)
    runner.submit("a", {"value": "a"})
    assert fit.started.wait(5)
    runner.close()
    assert runner._thread is not None and not runner._thread.is_alive()
    assert fit.cancelled == ["a"]
    with pytest.raises(RuntimeError, match="closed"):
        runner.submit("b", {"value": "b"})


def test_no_kernel_means_no_dispatcher() -> None:
    assert kernel_dispatcher() is None


class _HoldingDispatcher:
    """Holds the worker inside its first delivery request (just after a fit ended, before the
    runner marks it idle): the window in which a new request could adopt that fit."""

    def __init__(self) -> None:
        self.posted = threading.Event()
        self.release = threading.Event()
        self.calls = 0

    def __call__(self, fn: Callable[[], None]) -> None:
        self.calls += 1
        if self.calls == 1:
            self.posted.set()
            self.release.wait(10)


def test_a_failed_fit_is_never_adopted_the_same_settings_run_again() -> None:
    """Issue 10: the same settings asked for again right after their fit failed (the worker
    has not yet marked itself idle) are fitted again, and the request gets its own result,
    not silence or the old error."""
    calls: list[int] = []

    def flaky(*, value: Any, context: RunContext = QUIET) -> Any:
        calls.append(value)
        if len(calls) == 1:
            raise ValueError("transient failure")
        return {"value": value}

    dispatcher = _HoldingDispatcher()
    runner, events = make_runner(flaky, dispatcher=dispatcher)
    runner.submit("a", {"value": 1})
    assert dispatcher.posted.wait(5)  # the fit failed; the worker is still on that job
    assert runner._running is not None  # still marked as running
    second = runner.submit("a", {"value": 1})
    dispatcher.release.set()
    assert runner.wait(10)
    assert calls == [1, 1]
    assert runner.stats["adopted"] == 0
    assert events[-1].kind == "done" and events[-1].job == second
    assert events[-1].result == {"value": 1}
    runner.close()


def test_a_to_b_to_a_fits_a_again_and_never_starts_b() -> None:
    """What the comment in ``FitRunner.submit`` says: B's request cancels A's fit, so A asked
    for again is fitted from the start (not adopted); B, superseded while waiting, never runs."""
    fit = FakeFit(steps=200, step_seconds=0.01)
    runner, events = make_runner(fit)
    runner.submit("a", {"value": "a"})
    assert fit.started.wait(5)
    runner.submit("b", {"value": "b"})
    last = runner.submit("a", {"value": "a"})
    assert runner.wait(20)
    assert [c["value"] for c in fit.calls] == ["a", "a"]
    assert fit.cancelled == ["a"]
    assert runner.stats["adopted"] == 0 and runner.stats["superseded"] == 1
    assert [(e.job, e.result) for e in events if e.kind == "done"] == [(last, {"value": "a"})]
    runner.close()


@pytest.mark.slow
def test_close_drops_the_cache_and_cancels_the_running_fit() -> None:
    fit = FakeFit(steps=500, step_seconds=0.01)
    runner, _events = make_runner(fit)
    runner.submit("a", {"value": "a"})
    assert runner.wait(20)
    assert runner.cached("a") is not None
    runner.submit("b", {"value": "b"})
    assert fit.started.wait(5)
    time.sleep(0.05)
    runner.close()
    assert runner.cached("a") is None and not runner.busy
    assert fit.cancelled == ["b"] and runner.cached("b") is None
