"""Previews for the widget: a Laplace approximation of the same model, shown until the full fit
lands.

When a control needs a new fit, :class:`bbt_widget.BBTWidget` starts two fits of the same
settings at once, from one :func:`bbt_widget.fitting.prepare_fit` of them (the data read and
the wins counted once): this preview (the Laplace approximation at the posterior mode,
:meth:`~bbt_widget.fitting.PreparedFit.laplace`, by the numpy engine whatever the full fit's
engine: milliseconds in this process, where a Stan engine's approximation starts a process
and loads the model) and the full one (the widget's sampler settings, exactly what
``bbt_widget.fit`` runs). Only a Stan engine's fits get a preview: the numpy engine's exact
fit takes about what the preview would. The approximation is cheap next to the fit (one
core, no chains), so the full fit does not wait for it; a short NUTS run as the preview would
make the full fit wait for its chains (``benchmarks/bench_widget.py``). Its accuracy against
a full fit: ``benchmarks/bench_laplace.py``; the widget's latencies:
``benchmarks/bench_widget.py``.

A preview is marked as such everywhere it is shown (the diagnostics badge and the decisions in
the front end), is never cached as a result and never reaches ``BBTWidget.result``, the
summary table or the exports. Nor does it issue the data's warnings: they are the full fit's
to report (the widget never calls the shared inputs' ``warn`` for a preview).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.result import BBTResult
from ..fitting import SAMPLER_SETTINGS

__all__ = [
    "PREVIEW_DRAWS",
    "preview_badge",
    "preview_settings",
]

#: Draws of a preview's Laplace approximation (benchmarks/bench_laplace.py: about as close to the
#: fit as a short NUTS run's 300 draws).
PREVIEW_DRAWS = 400


def preview_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The keywords of the preview of ``settings``: the same model, data and seed; the
    sampler settings give way to the approximation's number of draws."""
    return {
        **{k: v for k, v in settings.items() if k not in SAMPLER_SETTINGS},
        "draws": PREVIEW_DRAWS,
    }


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
