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
from ..core.posterior import algorithm_order
from ..core.result import BBTResult
from .pair_filters import (
    PAIR_FILTERS,
    PairSelection,
    default_filter,
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
        w.pair_rows = selection.as_dict(w.pair_filter)
        if selection.page != w.pair_page:
            w.pair_page = selection.page  # clamped to the pages there are
        cut = shown_frames(self.frames, selection.keys)
        return {name: to_columns(frame) for name, frame in cut.items()}

    def on_rows_setting(self, _change: dict[str, Any]) -> None:
        """Another filter, search or algorithm: its first page."""
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

    def update_panel(self) -> None:
        self.w.pair_panel = pair_panel(self.result, self.w.selected_pair)
