"""Previews for the widget: a short run of the same Stan model, shown until the full fit lands.

When a control needs a new fit, :class:`bbt_widget.BBTWidget` starts two fits of the same
settings: this short one (one chain per core, 150 warm-up iterations and 150 draws) and the full
one (the widget's sampler settings, exactly what ``bbt_widget.fit`` runs). The full fit waits
until the preview's chains are done (:func:`wait_for_head_start`), so the preview has both cores
while it samples, and turning it into charts overlaps the full fit's sampling. What it costs
and gains is measured by ``benchmarks/bench_widget.py``.

A preview is marked as such everywhere it is shown (the diagnostics badge and the decisions in
the front end), is never cached as a result and never reaches ``BBTWidget.result``, the
summary table or the exports.
"""

from __future__ import annotations

import os
import re
import threading
import time
import warnings
from collections.abc import Mapping
from typing import Any

import pandas as pd

from ..core.fitting import DiagnosticsWarning, DisconnectedWarning
from ..core.fitting import fit as core_fit
from ..core.result import BBTResult
from ..engines.base import FitCancelled, ProgressCallback

__all__ = [
    "PREVIEW_DRAWS",
    "PREVIEW_WARMUP",
    "fit_preview",
    "preview_badge",
    "preview_settings",
    "wait_for_head_start",
]

#: Warm-up iterations and draws per chain of a preview (benchmarks/bench_widget.py).
PREVIEW_WARMUP = 150
PREVIEW_DRAWS = 150
#: Longest the full fit waits for the preview's chains (a safety net: the preview opens the
#: gate when its chains are done, when it compiles, fails or is cancelled).
MAX_HEAD_START_S = 5.0


def _quiet() -> None:
    """Keep a preview's warnings out of the notebook.

    A short run's R-hat and ESS routinely miss the thresholds, and the full fit reports the
    data's problems itself. The filter matches warnings attributed to this module only
    (``fit`` warns at its caller's line), so no other fit is silenced; it is (re)installed
    before every preview because ``warnings.catch_warnings`` elsewhere (a test runner, the
    batch layer) may have restored a filter list without it. Installing it again replaces it.
    """
    for category in (DiagnosticsWarning, DisconnectedWarning, UserWarning):
        warnings.filterwarnings("ignore", category=category, module=re.escape(__name__) + "$")


def preview_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The ``fit`` keywords of the preview of ``settings``: the same model, data and seed, one
    chain per core (at most the full fit's chains) and a short run."""
    chains = int(settings.get("chains", 4))
    return {
        **settings,
        "chains": max(1, min(chains, os.cpu_count() or 1)),
        "iter_warmup": PREVIEW_WARMUP,
        "iter_sampling": PREVIEW_DRAWS,
    }


def fit_preview(
    data: pd.DataFrame,
    gate: threading.Event,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    **settings: Any,
) -> BBTResult:
    """Fit the preview of ``settings`` (see :func:`preview_settings`); sets ``gate`` once its
    chains are done (or it compiles, fails or is cancelled), so the full fit can start."""

    def relay(stage: str, fraction: float) -> None:
        # compiling: the full fit must compile too, it joins that wait at once
        if stage != "sampling" or fraction >= 1.0:
            gate.set()
        if progress is not None:
            progress(stage, fraction)

    _quiet()
    try:
        return core_fit(data, progress=relay, cancel=cancel, **settings)
    finally:
        gate.set()


def wait_for_head_start(
    gate: threading.Event | None, cancel: threading.Event | None, timeout: float = MAX_HEAD_START_S
) -> None:
    """Block until the preview's chains are done (``gate``), so that they have the cores to
    themselves; raise ``FitCancelled`` when ``cancel`` is set meanwhile."""
    if gate is None:
        return
    deadline = time.monotonic() + timeout
    while not gate.wait(0.005):
        if cancel is not None and cancel.is_set():
            raise FitCancelled("superseded before it started")
        if time.monotonic() >= deadline:
            return


def preview_badge(badge: Mapping[str, Any], result: BBTResult) -> dict[str, Any]:
    """The diagnostics badge of a preview: marked ``preview``, its numbers kept for the
    tooltip, never a warning (a short run is not meant to pass the thresholds)."""
    settings = result.settings
    run = (
        f"{settings['chains']} chain(s) x {settings['iter_warmup']} warm-up + "
        f"{settings['iter_sampling']} draws"
    )
    return {
        **badge,
        "ok": True,
        "preview": True,
        "label": "preview",
        "messages": [
            f"preview from a short run ({run}); the full fit replaces it",
            *[f"(preview) {m}" for m in badge.get("messages", [])],
        ],
    }
