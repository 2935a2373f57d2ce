"""Previews for the widget: a Laplace approximation of the same model, shown until the full fit
lands.

When a control needs a new fit, :class:`bbt_widget.BBTWidget` starts two fits of the same
settings: this preview (the Laplace approximation at the posterior mode,
:func:`bbt_widget.core.fitting.fit_laplace`, computed by an engine worker that has the model
loaded) and the full one (the widget's sampler settings, exactly what ``bbt_widget.fit`` runs).
The full fit waits until the approximation's draws are ready (:func:`wait_for_head_start`), a
few tens of milliseconds, so that the preview does not compete with the full fit's chains for
the cores; turning it into charts overlaps the full fit's sampling. On real data its P(a > b)
intervals are as close to the full fit's as a short NUTS run's (one chain per core, 150
warm-up iterations and 150 draws: the previews of version 0.x) at a fraction of the cost:
``benchmarks/bench_laplace.py``; the widget's latencies: ``benchmarks/bench_widget.py``.

A preview is marked as such everywhere it is shown (the diagnostics badge and the decisions in
the front end), is never cached as a result and never reaches ``BBTWidget.result``, the
summary table or the exports.
"""

from __future__ import annotations

import re
import threading
import time
import warnings
from collections.abc import Mapping
from typing import Any

import pandas as pd

from ..core.fitting import DiagnosticsWarning, DisconnectedWarning, fit_laplace
from ..core.result import BBTResult
from ..engines.base import FitCancelled, ProgressCallback

__all__ = [
    "PREVIEW_DRAWS",
    "fit_preview",
    "preview_badge",
    "preview_settings",
    "sample_after_head_start",
    "wait_for_head_start",
]

#: Draws of a preview's Laplace approximation (benchmarks/bench_laplace.py: as close to the full
#: fit as a short NUTS run's 300 draws; each costs a call into the model).
PREVIEW_DRAWS = 400
#: Longest the full fit waits for the preview's draws (a safety net: the preview opens the
#: gate when its draws are ready, when it compiles, fails or is cancelled).
MAX_HEAD_START_S = 5.0


def _quiet() -> None:
    """Keep a preview's warnings out of the notebook.

    The data's warnings (missing results, groups that never met) are the full fit's to
    report; a preview repeating them would say everything twice. The filter matches warnings
    attributed to this module only (``fit_laplace`` warns at its caller's line), so no other
    fit is silenced; it is (re)installed
    before every preview because ``warnings.catch_warnings`` elsewhere (a test runner, the
    batch layer) may have restored a filter list without it. Installing it again replaces it.
    """
    for category in (DiagnosticsWarning, DisconnectedWarning, UserWarning):
        warnings.filterwarnings("ignore", category=category, module=re.escape(__name__) + "$")


def preview_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The keywords of the preview of ``settings``: the same model, data and seed; the
    sampler settings give way to the approximation's number of draws."""
    sampler = ("chains", "iter_warmup", "iter_sampling", "adapt_delta", "max_treedepth")
    return {
        **{k: v for k, v in settings.items() if k not in sampler},
        "draws": PREVIEW_DRAWS,
    }


def fit_preview(
    data: pd.DataFrame,
    gate: threading.Event,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    **settings: Any,
) -> BBTResult:
    """Fit the preview of ``settings`` (see :func:`preview_settings`); sets ``gate`` once its
    draws are ready (or it compiles, fails or is cancelled), so the full fit can start."""

    def relay(stage: str, fraction: float) -> None:
        # compiling: the full fit must compile too, it joins that wait at once
        if stage != "sampling" or fraction >= 1.0:
            gate.set()
        if progress is not None:
            progress(stage, fraction)

    _quiet()
    try:
        return fit_laplace(data, progress=relay, cancel=cancel, **settings)
    finally:
        gate.set()


def wait_for_head_start(
    gate: threading.Event | None, cancel: threading.Event | None, timeout: float = MAX_HEAD_START_S
) -> None:
    """Block until the preview's draws are ready (``gate``), so that the approximation has the
    cores to itself; raise ``FitCancelled`` when ``cancel`` is set meanwhile."""
    if gate is None:
        return
    deadline = time.monotonic() + timeout
    while not gate.wait(0.005):
        if cancel is not None and cancel.is_set():
            raise FitCancelled("superseded before it started")
        if time.monotonic() >= deadline:
            return


def preview_badge(badge: Mapping[str, Any], result: BBTResult) -> dict[str, Any]:
    """The diagnostics badge of a preview: marked ``preview``, never a warning (an
    approximation has no sampler to check)."""
    run = f"a Laplace approximation ({result.settings['draws']} draws)"
    return {
        **badge,
        "ok": True,
        "preview": True,
        "label": "preview",
        "messages": [
            f"preview from {run}; the full fit replaces it",
            *[f"(preview) {m}" for m in badge.get("messages", [])],
        ],
    }


def sample_after_head_start(
    gate: threading.Event | None,
    cancel: threading.Event | None,
    progress: ProgressCallback | None,
) -> ProgressCallback:
    """A progress callback for the full fit that waits for the preview's head start
    (:func:`wait_for_head_start`) at the fit's first ``("sampling", 0.0)`` report.

    Engines report that just before they start sampling, after ``fit`` has read the data,
    counted the wins and built the Stan data: that work (a few hundredths of a second on
    16 x 132) overlaps the preview's approximation instead of following it.
    """
    waited = gate is None

    def relay(stage: str, fraction: float) -> None:
        nonlocal waited
        if not waited and stage == "sampling":
            waited = True
            wait_for_head_start(gate, cancel)
        if progress is not None:
            progress(stage, fraction)

    return relay
