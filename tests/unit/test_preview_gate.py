"""The full fit's wait for the preview (issue 10), without Stan: it waits at the engine's first
sampling report, so reading the data and counting wins overlap the preview's approximation."""

from __future__ import annotations

import math
import threading
import time

from bbt_widget.engines.base import FitCancelled
from bbt_widget.widget.preview import preview_settings, sample_after_head_start


def _in_thread(call) -> tuple[threading.Thread, dict]:
    outcome: dict = {}

    def run() -> None:
        try:
            call()
            outcome["returned"] = time.perf_counter()
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def test_sampling_waits_for_the_gate_and_compiling_does_not() -> None:
    gate, seen = threading.Event(), []
    relay = sample_after_head_start(gate, None, lambda stage, f: seen.append((stage, f)))
    relay("compiling", math.nan)  # returns at once: the full fit joins the compile
    thread, outcome = _in_thread(lambda: relay("sampling", 0.0))
    time.sleep(0.2)
    assert thread.is_alive() and "returned" not in outcome  # held at the gate
    opened = time.perf_counter()
    gate.set()
    thread.join(5)
    assert outcome["returned"] >= opened
    relay("sampling", 0.5)  # later reports pass straight through
    assert [s for s, _ in seen] == ["compiling", "sampling", "sampling"]


def test_a_cancel_while_waiting_raises_and_no_gate_means_no_wait() -> None:
    gate, cancel = threading.Event(), threading.Event()
    relay = sample_after_head_start(gate, cancel, None)
    thread, outcome = _in_thread(lambda: relay("sampling", 0.0))
    cancel.set()
    thread.join(5)
    assert isinstance(outcome.get("error"), FitCancelled)
    started = time.perf_counter()
    sample_after_head_start(None, None, None)("sampling", 0.0)
    assert time.perf_counter() - started < 0.05


def test_preview_settings_keep_the_model_and_drop_the_sampler() -> None:
    settings = {"ties": "davidson", "seed": 3, "chains": 4, "iter_sampling": 1000}
    settings |= {"iter_warmup": 1000, "adapt_delta": 0.9, "max_treedepth": 12, "d_min": 0.4}
    preview = preview_settings(settings)
    assert preview["ties"] == "davidson" and preview["seed"] == 3 and preview["d_min"] == 0.4
    assert preview["draws"] > 0
    for sampler in ("chains", "iter_sampling", "iter_warmup", "adapt_delta", "max_treedepth"):
        assert sampler not in preview
