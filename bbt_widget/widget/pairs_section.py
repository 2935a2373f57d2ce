"""The pairwise view's rows and the highlighted pair's panel: which pairs the interval chart
lists (:mod:`.pair_filters`: a filter, "Show pairs of", a search, pages) and the pair's wins,
losses and ties per data set (:mod:`.pair_panel`).

:func:`pair_view_traits` makes the traits the front end syncs for them (the widget class
holds them); :class:`PairsSection` is one of the section objects
:class:`~bbt_widget.widget.app.BBTWidget` composes. A filter, search or page change cuts the
frames already built to other rows: no re-summary.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import traitlets as t

from ..charts.frames import VIEW_DATASETS, to_columns
from ..charts.pairs import pair_key
from ..core.posterior import algorithm_order
from ..core.result import BBTResult
from .keys import pair_of
from .pair_filters import (
    PAIR_FILTERS,
    PairSelection,
    default_filter,
    reveal,
    select_pairs,
    shown_frames,
)
from .pair_panel import pair_panel

__all__ = ["PairsSection", "pair_view_traits"]


def pair_view_traits() -> tuple[t.TraitType[Any, Any], ...]:
    """The widget's traits ``pair_filter``, ``pair_search``, ``pair_page`` (set by the front
    end, or from Python), ``pair_rows`` and ``pair_panel`` (set here), in that order."""
    return (
        t.Unicode(
            "all",
            help="pairs listed: " + ", ".join(f"'{k}' ({v})" for k, v in PAIR_FILTERS.items()),
        ).tag(sync=True),
        t.Unicode("", help="list only the pairs whose names hold these words").tag(sync=True),
        t.Int(0, help="page of the pairwise view shown (from 0)").tag(sync=True),
        t.Dict(help="pairs shown, matched, total; page and pages").tag(sync=True),
        t.Dict(help="the highlighted pair's wins/ties per data set").tag(sync=True),
    )


class PairsSection:
    """The rows of the pairwise view and the pair panel of one widget (see the module doc)."""

    def __init__(self, widget: Any) -> None:
        self.w = widget
        #: The full frames of the pairwise view last built, and the result they came from.
        self.frames: dict[str, pd.DataFrame] = {}
        self.result: BBTResult | None = None
        self.ranking: list[str] = []
        # a validator, as the controls': an unknown filter is refused with the list of them
        widget._register_validator(self._valid_filter, ("pair_filter",))
        widget.pair_filter = default_filter(len(widget.algorithms))
        widget.observe(self.on_rows_setting, names=["pair_filter", "pair_search", "focus"])
        widget.observe(lambda _change: self.show(), names=["pair_page"])
        widget.observe(self.on_selected_pair, names=["selected_pair"])
        #: What the last click in a chart showed, in words (``pair_rows["note"]``): cleared
        #: by the next change of the list made otherwise.
        self.note = ""
        widget.on_msg(self.on_front_end_message)

    @staticmethod
    def _valid_filter(_widget: Any, proposal: t.Bunch) -> str:
        value = proposal["value"]
        if value not in PAIR_FILTERS:
            raise t.TraitError(
                f"pair_filter {value!r} is not one of {list(PAIR_FILTERS)}; e.g. "
                "w.pair_filter = 'undecided_neighbours'"
            )
        return str(value)

    def view_data(
        self, frames: dict[str, pd.DataFrame], result: BBTResult
    ) -> dict[str, dict[str, list[Any]]]:
        """The pairwise view's data for ``frames`` (every pair) of ``result``: the rows the
        filter keeps; also sets ``pair_rows``, and the panel when the result is new."""
        self.frames = frames
        if result is not self.result:
            self.result = result
            self.ranking = [result.algorithms[i] for i in algorithm_order(result.beta)]
            self.update_panel()
        return self._rows()

    def show(self) -> None:
        """Cut the frames already built to the rows asked for now (none while the view is
        empty: a preview dropped before any full fit leaves frames that are no longer shown)."""
        if self.frames and self.w.view_data:
            self.w.view_data = self._rows()

    def listed(self, frames: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
        """``frames`` (every dataset of the linked view, of any fit of these algorithms) with
        the pairwise view's ones cut to the pairs listed now: what the user sees, for export."""
        cut = shown_frames({k: frames[k] for k in VIEW_DATASETS}, self._select(frames).keys)
        return {**frames, **cut}

    def _select(self, frames: dict[str, pd.DataFrame]) -> PairSelection:
        w = self.w
        return select_pairs(
            frames["intervals"],
            self.ranking,
            how=w.pair_filter,
            focus=w.focus if w.focus in w.algorithms else "",
            search=w.pair_search,
            pinned=w.selected_pair,
            page=w.pair_page,
        )

    def _rows(self) -> dict[str, dict[str, list[Any]]]:
        w = self.w
        selection = self._select(self.frames)
        w.pair_rows = {**selection.as_dict(w.pair_filter), "note": self.note}
        if selection.page != w.pair_page:
            w.pair_page = selection.page  # clamped to the pages there are
        cut = shown_frames(self.frames, selection.keys)
        return {name: to_columns(frame) for name, frame in cut.items()}

    def on_rows_setting(self, _change: dict[str, Any]) -> None:
        """Another filter, search or algorithm: its first page."""
        self.note = ""
        if self.w.pair_page != 0:
            self.w.pair_page = 0  # its observer redraws
        else:
            self.show()

    def on_selected_pair(self, _change: dict[str, Any]) -> None:
        self.update_panel()
        keys = set(self.frames["intervals"]["key"]) if self.frames else set()
        shown = set(self.w.view_data.get("intervals", {}).get("key", []))
        if self.w.selected_pair in keys and self.w.selected_pair not in shown:
            self.show()  # the highlighted pair joins the page (see select_pairs' pinned)

    def on_front_end_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        # a click on a pair (a matrix cell) or an algorithm (a ranking row, a CD point)
        if isinstance(content, dict) and content.get("action") == "show":
            self.show_clicked(str(content.get("pair") or ""), str(content.get("algorithm") or ""))

    def show_clicked(self, pair: str = "", algorithm: str = "") -> None:
        """Show the pair ``pair`` (a pair key: highlighted) or the pairs of ``algorithm`` in
        the pairwise view, changing "Show pairs of" and the search as needed, and say so
        (:func:`.pair_filters.reveal`). Names that are not the widget's are ignored."""
        w = self.w
        names = pair_of(pair) if pair else (algorithm,)
        if not names or not all(name in w.algorithms for name in names):
            return
        focus = w.focus if w.focus in w.algorithms else ""
        shown = reveal(names, self.ranking or w.algorithms, focus=focus, search=w.pair_search)
        with w.hold_sync():
            w.focus, w.pair_search = shown.focus, shown.search  # their observers clear the note
            self.note = shown.text
            if len(names) == 2:
                w.selected_pair = pair_key(*names)
            self.show()  # the rows with the note (and the pair pinned on the page)

    def update_panel(self) -> None:
        # the panel shown before: what a change of the counting settings did to the pair
        self.w.pair_panel = pair_panel(self.result, self.w.selected_pair, self.w.pair_panel)
