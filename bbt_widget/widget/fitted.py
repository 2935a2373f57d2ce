"""One fit made ready for the widget's charts: the frames, their JSON, the diagnostics badge
and the full range of every pair's draws, none of which the ROPE, HDI or control change.

Built on a runner's thread (so the kernel is not blocked for it) and cached with the result.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..charts.frames import coverage_frame, matrix_frame, range_frame, to_columns
from ..charts.frames_ppc import ppc_frame
from ..core.posterior import algorithm_order
from ..core.result import BBTResult
from .preview import preview_badge
from .sync import chart_data_json
from .views import audit_badge

__all__ = ["Fitted", "diagnostics_badge", "failed_fit_badge", "fit_ranges"]

#: Diagnostics message keywords -> what the badge names.
_DIAG_NAMES = (
    ("R-hat", "R-hat"),
    ("ESS", "ESS"),
    ("divergent", "divergences"),
    ("tree depth", "tree depth"),
    ("E-BFMI", "E-BFMI"),
)


def fit_ranges(result: BBTResult) -> pd.DataFrame:
    """Full range of every pair's draws, keyed by (alg_a, alg_b): pair labels can collide.

    From the sorted draws the summaries use (the smallest and largest draw do not depend on
    the order): the draws of P(a > b) are computed once per fit, not once more here.
    """
    pairs = result.summary()  # all pairs, in the order of pair_draws()' columns
    return range_frame(result.pair_draws(sort=True), pairs["alg_a"], pairs["alg_b"])


@dataclass(frozen=True)
class Fitted:
    """A fit plus everything the charts need from it that ROPE/HDI/control do not change.

    Built on the runner's worker thread (so the kernel is not blocked for it) and cached with
    the result, so going back to earlier settings redraws without recomputing anything.
    """

    result: BBTResult
    frames: dict[str, pd.DataFrame]
    data: dict[str, dict[str, list[Any]]]
    #: ``data`` as the browser gets it (JSON bytes), encoded here rather than on the kernel
    data_json: bytes
    ranges: pd.DataFrame
    badge: dict[str, Any]
    audit: dict[str, Any]

    @property
    def preview(self) -> bool:
        """Whether this is a preview (an approximation shown until the full fit lands)."""
        return bool(self.badge.get("preview"))

    @classmethod
    def prepare(cls, result: BBTResult, *, preview: bool = False) -> Fitted:
        # The draws of P(a > b), sorted, for the ranges (and every summary after): numpy
        # work that lets go of the GIL, done on a second thread while this one builds the
        # PPC frames and their JSON (pandas, json); right after a fit the other core is idle.
        with ThreadPoolExecutor(1, thread_name_prefix="bbt-prepare") as helper:
            ranges = helper.submit(fit_ranges, result)
            # best first, as ranking() orders them (only the order: not its intervals)
            order = [result.algorithms[i] for i in algorithm_order(result.beta)]
            frames = {
                "ppc": ppc_frame(result.ppc_histogram(), order),
                "coverage": coverage_frame(result.ppc_table()),
                "matrix": matrix_frame(result.win_table, order),
            }
            badge = diagnostics_badge(result.diagnostics())
            data = {name: to_columns(frame) for name, frame in frames.items()}
            data_json = chart_data_json(data)
        return cls(
            result=result,
            frames=frames,
            data=data,
            data_json=data_json,
            ranges=ranges.result(),
            badge=preview_badge(badge, result) if preview else badge,
            # a preview's data are those of the full fit that follows: its audit is shown then
            audit={} if preview else audit_badge(result),
        )


def diagnostics_badge(diag: Any) -> dict[str, Any]:
    """The diagnostics badge: fine, or a warning naming what failed."""
    messages = [str(m) for m in getattr(diag, "messages", [])]
    ok = bool(diag["ok"])
    if ok:
        label = "diagnostics fine"
    else:
        failed = [name for key, name in _DIAG_NAMES if any(key in m for m in messages)]
        label = "check " + ", ".join(failed or ["diagnostics"])
    numbers = {
        k: _plain(diag[k])
        for k in (
            "max_rhat",
            "min_ess_bulk",
            "min_ess_tail",
            "divergences",
            "treedepth_saturated",
            "min_ebfmi",
        )
    }
    return {"ok": ok, "label": label, "messages": messages, **numbers}


def failed_fit_badge(shown: Mapping[str, Any], error: str) -> dict[str, Any]:
    """The badge while the last fit asked for has failed (``error``: what the widget's
    ``error`` says, '' when it did not fail): ``shown``, the badge of the fit the charts
    still show ({} when there is none), marked as the last good fit's, never "fine"."""
    if not error:
        return dict(shown)
    if not shown:
        return {"ok": False, "failed": True, "label": "fit failed: no results", "messages": [error]}
    return {
        **shown,
        "ok": False,
        "failed": True,
        "label": "fit failed: last good fit shown",
        "messages": [
            error,
            f"The charts show the last good fit; its diagnostics: {shown.get('label', '')}",
            *shown.get("messages", []),
        ],
    }


def _plain(value: Any) -> Any:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    return number if number == number else None


def own_copy(value: Any) -> Any:
    """A deep copy of a pandas object (the widget's own), else the value itself."""
    if isinstance(value, (pd.DataFrame, pd.Series)):
        return value.copy(deep=True)
    return value
