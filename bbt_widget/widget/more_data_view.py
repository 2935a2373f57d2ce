"""The widget's "More data sets" view: for the highlighted pair, the probability that ``n``
more data sets like these would leave it with a claim (:meth:`BBTResult.more_data`), against
``n``, under the weak and the strong rule, with the report's sentence for each rule
(:func:`~bbt_widget.outputs.report._more_data.more_data_sentence`). A teacher sees the weak
rule's claims grow with ``n`` while the strong rule's settle.

The forecast runs in the background on a runner of its own (newest request wins; a pair and
settings seen before come from its cache), and only while the section is open (trait
``more_data_open``): the first pair of a fit is a second of work at 16 algorithms and ten at
50, which nobody should pay for a view they did not open. Only the highlighted pair's claims
are counted; the futures' updates of the abilities, the costly part, are the same for every
pair and ROPE and are kept with the fit (:class:`~bbt_widget.core.more_data.Remembered`), so
the next pair or ROPE costs a fraction of that. It follows the full fit and the ROPE, as the
summary does (a preview has no forecast), and is seeded: the same pair and settings give the
same curves. While a newer forecast is on its way, the view says so (``pending``) and keeps
the last one drawn.

:class:`MoreDataView` is one of the section objects :class:`~bbt_widget.widget.app.BBTWidget`
composes; :func:`more_data_traits` makes the traits the widget class holds for it.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import traitlets as t

from ..charts.frames_more_data import more_data_frame
from ..core.bidi import isolate
from ..core.more_data import DEFAULT_N
from ..core.options import Rule
from ..core.result import BBTResult
from ..core.run_context import QUIET, RunContext
from ..engines.base import FitCancelled
from .keys import pair_of
from .messages import error_text
from .runner import Dispatcher, FitEvent, FitRunner
from .views import SUMMARY_DELAY, _plain_spec

__all__ = ["FUTURES", "MoreDataView", "forecast_view", "more_data_traits"]

#: Futures per number of more data sets: a probability's Monte Carlo standard error is at
#: most 0.5 / sqrt(400) = 0.025, fine for a curve read by eye, at 40% of the report's cost.
FUTURES = 400
#: Shown until a pair is highlighted.
NO_PAIR = "Click a pair (a matrix cell or an interval) to forecast what more data sets would do."
#: Shown instead of a forecast for data sets in groups.
GROUP_NOTE = (
    "no forecast for the group model: it simulates more data sets for the plain "
    "Bradley-Terry model; fit the data without group= to see it"
)
#: What the curves are, under them.
HOW = (
    "Each of {futures} simulated futures draws abilities from the posterior, adds n data "
    "sets like these (the pair meets and ties as often as before) and asks each rule for a "
    "claim; the band is 2 Monte Carlo standard errors. It assumes new data sets exchangeable "
    "with these."
)


def more_data_traits() -> tuple[t.TraitType[Any, Any], ...]:
    """The widget's traits ``more_data_open`` (set by the front end when the section is
    opened or closed) and ``more_data_view`` (set here), in that order."""
    return (
        t.Bool(False, help="whether the 'More data sets' section is open").tag(sync=True),
        t.Dict(help="the highlighted pair's forecast: names, spec, sentences, note").tag(sync=True),
    )


def forecast_view(
    result: BBTResult,
    pair: tuple[str, str],
    rope: tuple[float, float],
    *,
    quiet: float = 0.0,
    context: RunContext = QUIET,
) -> dict[str, Any]:
    """The forecast of ``pair`` under both rules, as the view shows it: ``a`` and ``b`` (the
    summary's orientation), ``spec`` (the chart of :mod:`~bbt_widget.charts.specs_more_data`,
    data inlined), ``sentences`` (one per rule), ``now`` (the pair's claims now) and ``note``.

    Built on the runner's thread once the settings have been quiet for ``quiet`` seconds
    (clicking through pairs costs one forecast); the ``context``'s cancel is set when a
    newer request replaces this one.
    """
    cancel = context.cancel
    if cancel is not None and quiet > 0 and cancel.wait(quiet):
        raise FitCancelled("a newer pair or setting came")
    # here, on the runner's thread: the report's modules import Altair, which the widget's
    # first charts must not wait for
    from ..charts.specs_more_data import more_data_chart
    from ..outputs.report._more_data import more_data_sentence

    forecasts = []
    for rule in ("weak", "strong"):
        if cancel is not None and cancel.is_set():
            raise FitCancelled("a newer pair or setting came")
        forecasts.append(result.more_data(DEFAULT_N, rule, rope=rope, draws=FUTURES, pairs=[pair]))
    table = forecasts[0].table
    a, b = str(table["alg_a"].iloc[0]), str(table["alg_b"].iloc[0])
    frame = more_data_frame(forecasts)
    title = "P(claim) with more data sets: weak rule solid, strong dashed"
    now = "; ".join(f"{f.rule} rule: {_claim(f.table, a, b)}" for f in forecasts)
    return {
        "a": a,
        "b": b,
        "spec": _plain_spec(more_data_chart(frame, title=title)),
        "sentences": [more_data_sentence(f.table, a, b, f.n, _rule(f.rule)) for f in forecasts],
        "now": f"Now, {now}.",
        "note": HOW.format(futures=FUTURES),
    }


def _rule(name: str) -> Rule:
    return "weak" if name == "weak" else "strong"


def _claim(table: Any, a: str, b: str) -> str:
    """The pair's claim now, in words, names isolated."""
    claim = str(table["claim_now"].iloc[0])
    words = {"a better": f"{isolate(a)} better", "b better": f"{isolate(b)} better"}
    return words.get(claim, claim)


class MoreDataView:
    """The highlighted pair's forecast (see the module doc).

    Parameters
    ----------
    widget
        The :class:`~bbt_widget.widget.app.BBTWidget` whose view this is.
    dispatcher
        Where the runner hands its events (the kernel's loop).
    """

    def __init__(self, widget: Any, dispatcher: Dispatcher | None) -> None:
        self.w = widget
        self.runner: FitRunner[dict[str, Any]] = FitRunner(
            forecast_view,
            self._on_event,
            dispatcher=dispatcher,
            cache_size=8,
            cancelled_types=(FitCancelled,),
        )
        widget.observe(lambda _change: self.update(), names=["selected_pair", "more_data_open"])

    # a runner to the widget, as its others: close() and wait_background() go through these
    def cancel(self) -> None:
        self.runner.cancel()

    def close(self, timeout: float = 10.0) -> None:
        self.runner.close(timeout)

    def wait(self, timeout: float | None = None) -> bool:
        return self.runner.wait(timeout)

    def key(self) -> Hashable:
        """The settings the forecast shown should be of: the full fit, the ROPE, the pair."""
        w = self.w
        return (w._result_key, (w.rope_low, w.rope_high), w.selected_pair)

    def update(self) -> None:
        """Show the forecast of the highlighted pair at the current settings: from the
        runner's cache, or computed in the background (nothing while the section is closed,
        or while a view setting is refused: the control says why)."""
        w = self.w
        if not w.more_data_open:
            return
        pair, fitted = w.selected_pair, w._fitted
        names = pair_of(pair)
        if fitted is None or len(names) != 2 or not set(names) <= set(fitted.result.algorithms):
            self._show({"pair": pair, "note": NO_PAIR if fitted is not None else ""})
            return
        if w._groups.active:
            self._show({"pair": pair, "note": GROUP_NOTE})
            return
        if w._controls.check_view_settings():
            return
        # the last forecast stays on screen, marked, until this one arrives
        self._show({**w.more_data_view, "pending": True})
        rope = (w.rope_low, w.rope_high)
        arguments = {"result": fitted.result, "pair": names, "rope": rope, "quiet": SUMMARY_DELAY}
        self.runner.submit(self.key(), arguments)

    def _show(self, view: dict[str, Any]) -> None:
        self.w.more_data_view = {"pending": False, **view}

    def _on_event(self, event: FitEvent[dict[str, Any]]) -> None:
        pair = event.key[-1] if isinstance(event.key, tuple) else ""
        if event.kind == "done" and event.result is not None:
            self._show({"pair": pair, **event.result})
        elif event.kind == "error":  # e.g. Davidson's ties: the core's message says what to do
            self._show({"pair": pair, "note": f"No forecast: {error_text(event.error)}"})
