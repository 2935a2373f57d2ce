"""The widget's Stan cross-check while it is under way and in a script: the badge walks
through waiting, compiling and running to its verdict, ``w.stan_verdict`` says the same in
words, and ``w.wait_background(stan=True)`` waits for it.

No Stan here: the engines' ``sample`` the check calls is replaced by a stand-in that reports
the stages a Stan engine reports (compiling, then sampling) when the test lets it, then
samples on the numpy engine; the check's start delay is zero.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

import pytest

import bbt_widget as bbt
from bbt_widget.engines.base import FitCancelled
from bbt_widget.widget import stan_check
from bbt_widget.widget.app import BBTWidget
from bbt_widget.widget.runner import FitEvent

TIMEOUT = 60


class FakeStan:
    """``engines.sample`` for the check: each stage waits for the test's go-ahead."""

    def __init__(self, fail: str = "") -> None:
        self.fail = fail
        self.reached: queue.Queue[str] = queue.Queue()
        self.go = threading.Semaphore(0)
        self.real = stan_check.engines.sample
        #: the cancel event each check was given, in order
        self.cancels: list[threading.Event] = []

    def __call__(self, model: str, data: Any, *, engine: str, **kwargs: Any) -> Any:
        if engine == "numpy":  # the shown fit samples through the same function
            return self.real(model, data, engine=engine, **kwargs)
        assert engine == "pystan"
        progress = kwargs.pop("progress")
        cancel = kwargs["cancel"]
        self.cancels.append(cancel)
        for stage, fraction in (("compiling", float("nan")), ("sampling", 0.4)):
            progress(stage, fraction)
            self.reached.put(stage)
            assert self.go.acquire(timeout=TIMEOUT)
            if cancel.is_set():  # as a Stan engine stops on it
                raise FitCancelled("stopped")
        if self.fail:
            raise RuntimeError(self.fail)
        # short chains: the verdict's comparison is the test's own stand-in where it matters
        kwargs |= {"iter_warmup": 100, "iter_sampling": 100}
        return self.real(model, data, engine="numpy", **kwargs)


@pytest.fixture
def fake_stan(monkeypatch: pytest.MonkeyPatch) -> FakeStan:
    fake = FakeStan()
    monkeypatch.setattr(stan_check.engines, "sample", fake)
    monkeypatch.setattr(stan_check, "DELAY", 0.0)
    monkeypatch.setattr(stan_check.StanCheck, "stan_engine", lambda self: "pystan")
    return fake


@pytest.fixture
def w(fake_stan: FakeStan) -> Iterator[Any]:
    widget: Any = BBTWidget(bbt.datasets.load_base(), dataset="db", seed=7, engine="numpy")
    widget._stan_runner._progress_interval = 0.0  # every stage the stand-in reports
    try:
        assert widget.wait(TIMEOUT), widget.error
        yield widget
    finally:
        fake_stan.go.release(5)  # nothing left waiting
        widget.close()


def _step(w: Any, fake: FakeStan, stage: str) -> None:
    """Let the stand-in report ``stage`` and deliver its event, as the kernel's loop would."""
    assert fake.reached.get(timeout=TIMEOUT) == stage
    w._stan_runner.drain()


def test_the_badge_walks_through_the_check_and_the_verdict_follows(
    w: Any, fake_stan: FakeStan, monkeypatch: pytest.MonkeyPatch
) -> None:
    # queued at once when the numpy fit is shown: not a bare "diagnostics fine"
    assert w.diagnostics["stan"] == "waiting" and w.stan_verdict == "waiting"
    assert w.diagnostics["label"] == "diagnostics fine; Stan check: waiting"
    _step(w, fake_stan, "compiling")
    assert w.diagnostics["label"] == "diagnostics fine; Stan check: compiling"
    assert w.stan_verdict == "compiling"
    assert any("compiling the Stan model" in m for m in w.diagnostics["messages"])
    fake_stan.go.release()
    _step(w, fake_stan, "sampling")
    assert w.diagnostics["label"] == "diagnostics fine; Stan check: running (40%)"
    assert w.stan_verdict == "running" and w.diagnostics["ok"]
    # an event of another fit's check never reaches the badge of the fit shown
    shown = dict(w.diagnostics)
    other = FitEvent("progress", 0, ("other settings",), stage="sampling", fraction=0.9)
    w._fits.stan_check._on_event(other)
    assert w.diagnostics == shown
    monkeypatch.setattr(bbt.BBTResult, "disagreements", lambda *a, **k: [])
    fake_stan.go.release()
    # a script: wait_background(stan=True) waits for the check and delivers its verdict
    assert w.wait_background(TIMEOUT, stan=True)
    assert w.stan_verdict == "agrees"
    assert w.diagnostics["label"] == "diagnostics fine; Stan check: agrees"


def test_a_new_fit_stops_the_check_of_the_fit_it_replaces(
    w: Any, fake_stan: FakeStan, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check's chains would take the cores the new fit needs: it is stopped when the new
    fit is asked for, not when that fit is shown, and the new fit's own check follows."""
    _step(w, fake_stan, "compiling")
    old = fake_stan.cancels[-1]
    assert not old.is_set()
    w.ties = "add"
    assert old.is_set()  # at once: the new fit is not shown yet
    assert w._result_key != w._requested_key
    fake_stan.go.release()  # the old check sees its cancel and stops
    assert w.wait(TIMEOUT), w.error
    _step(w, fake_stan, "compiling")  # the new fit's check
    assert len(fake_stan.cancels) == 2 and not fake_stan.cancels[-1].is_set()
    assert w.diagnostics["label"] == "diagnostics fine; Stan check: compiling"
    monkeypatch.setattr(bbt.BBTResult, "disagreements", lambda *a, **k: [])
    fake_stan.go.release(2)
    assert w.wait_background(TIMEOUT, stan=True)
    assert w.stan_verdict == "agrees"
    assert w._stan_runner.stats["cancelled"] == 1


def test_a_change_undone_before_its_fit_runs_the_check_again(
    w: Any, fake_stan: FakeStan, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A -> B -> A while B is fitted: B's request stopped A's check; back on A (shown all
    along, no fit needed) its check starts again, so its verdict still comes."""
    _step(w, fake_stan, "compiling")
    w.ties = "add"
    w.ties = "spread"  # back before "add" was shown
    assert w._result_key == w._requested_key
    assert fake_stan.cancels[0].is_set()
    fake_stan.go.release()  # the stopped check ends
    _step(w, fake_stan, "compiling")  # A's check again
    assert len(fake_stan.cancels) == 2
    monkeypatch.setattr(bbt.BBTResult, "disagreements", lambda *a, **k: [])
    fake_stan.go.release(2)
    assert w.wait_background(TIMEOUT, stan=True)
    assert w.stan_verdict == "agrees"


def test_a_disagreement_names_its_pairs_in_the_verdict(
    w: Any, fake_stan: FakeStan, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = ["xgb > svm: weak rule differs", "xgb > svm: strong rule differs", "dt > lda: x"]
    monkeypatch.setattr(bbt.BBTResult, "disagreements", lambda *a, **k: lines)
    fake_stan.go.release(2)
    assert w.wait_background(TIMEOUT, stan=True)
    assert w.stan_verdict == "differs on 2 pairs: " + "; ".join(lines)
    assert w.diagnostics["label"] == "Stan check: differs on 2 pairs"
    assert not w.diagnostics["ok"] and lines[0] in w.diagnostics["messages"]


def test_a_failed_check_says_why(w: Any, fake_stan: FakeStan) -> None:
    fake_stan.fail = "no C++ compiler found"
    fake_stan.go.release(2)
    assert w.wait_background(TIMEOUT, stan=True)
    assert w.stan_verdict.startswith("failed: ") and "no C++ compiler" in w.stan_verdict
    assert w.diagnostics["stan"] == "failed"
    assert w.diagnostics["label"] == "diagnostics fine; Stan check: failed"


def test_the_verdict_is_off_where_no_check_runs(
    fake_stan: FakeStan, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = bbt.datasets.load_base()
    quiet: Any = BBTWidget(base, dataset="db", engine="numpy", stan_check=False, autostart=False)
    try:
        assert quiet.stan_verdict == "off"
    finally:
        quiet.close()
    monkeypatch.setattr(stan_check.StanCheck, "stan_engine", lambda self: None)
    nowhere: Any = BBTWidget(base, dataset="db", seed=7, engine="numpy")
    try:
        assert nowhere.wait(TIMEOUT) and nowhere.stan_verdict == "off"
        assert "stan" not in nowhere.diagnostics
    finally:
        nowhere.close()
    assert fake_stan.reached.empty()  # no check started
