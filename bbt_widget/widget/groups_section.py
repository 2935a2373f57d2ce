"""The widget's groups section: data sets in groups (``BBTWidget(data, group="family")``).

With ``group`` (a column of the results giving each data set's group, or a dict data set ->
group, exactly as ``bbt.fit(group=)`` takes it) every fit of the widget is the group model
that ``bbt.fit(data, ..., group=...)`` fits, in the background as any fit. The "Group"
selector (trait ``selected_group``: ``None`` for all data sets pooled, or one of the groups)
is a view control: it switches the pairwise view, the headline and the ranking view between
the pooled abilities and the chosen group's (``GroupedBBTResult.in_group``, whose summary is
``group_summary()``'s rows of the group), re-summarising the draws already there. The pairs x
groups heatmap shows every pair's decision pooled and in each group, under the current
interpretation, the pairs whose claim changes between groups first. The trait ``group_view``
carries what the front end draws: ``groups`` (the names, in order), ``spec`` (the heatmap's
Vega-Lite spec, data by name) and ``cells`` (its data, by column); ``{}`` without groups.

The widget's Laplace preview does not serve the group model: a grouped widget shows no
preview, and its status line says so while it samples.

:class:`GroupsSection` is one of the section objects :class:`~bbt_widget.widget.app.BBTWidget`
composes; the front end's half is ``js/src/groups_view.js``.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Mapping
from dataclasses import replace
from typing import Any

import pandas as pd

from ..charts.frames import to_columns
from ..charts.frames_groups import group_cells
from ..charts.spec_cache import groups_spec
from ..core.bidi import isolate
from ..core.group_result import GroupedBBTResult
from ..core.groups import GroupSpec, assign_groups, check_group_request, results_only
from ..core.result import BBTResult
from ..core.run_context import QUIET, RunContext
from ..core.tidy import TidyResults
from ..fitting import fit
from .fitted import Fitted, fit_ranges, own_copy

__all__ = ["NO_PREVIEW_NOTE", "GroupsSection"]

#: Said on the status line while a grouped widget samples (no preview is shown meanwhile).
NO_PREVIEW_NOTE = " (group model: no preview; the charts wait for the full fit)"


class GroupsSection:
    """The groups of one widget (see the module doc).

    Built before the widget's traits: it checks ``group`` against the data at once, so that a
    bad grouping raises before anything is shown.

    Parameters
    ----------
    widget
        The :class:`~bbt_widget.widget.app.BBTWidget` whose traits it sets.
    data
        The caller's results, with the group column when ``group`` names one.
    group
        ``None`` (no groups: the section does nothing), a column of ``data`` or a mapping
        data set -> group.
    dataset
        The data-set column (``None``: the index), as for ``fit``.
    ties
        The first tie policy (the group model has no Davidson ties).

    Raises
    ------
    ValueError
        The core's message (``bbt_widget.core.groups``) for a group that is neither a column
        name nor a mapping, a column missing from ``data`` or Davidson ties.
    """

    def __init__(
        self,
        widget: Any,
        data: pd.DataFrame | TidyResults,
        group: GroupSpec | None,
        *,
        dataset: str | None,
        ties: str,
    ) -> None:
        self.w = widget
        self.spec = group
        self.dataset = dataset
        if group is not None:
            check_group_request(group, ties, data)
        #: The results without the group column: what every other part of the widget reads.
        self.results = data if group is None else results_only(data, group)
        # the widget's own copy (see BBTWidget's constructor), group column kept for the fits
        self._data = own_copy(data) if group is not None else None
        self._lens_lock = threading.Lock()
        #: The fit the group views below were made from, and the views by group.
        self._lens_of: Fitted | None = None
        self._lens: dict[str, Fitted] = {}

    @property
    def active(self) -> bool:
        """Whether the data sets are in groups (the widget fits the group model)."""
        return self.spec is not None

    def initial(self, tidy: TidyResults, first: Mapping[str, Any]) -> dict[str, Any]:
        """The section's first trait values, after checking the grouping against the results
        read (``tidy``) and the first counting settings (``first``: the controls' first
        values), as ``fit`` does before its fit.

        Raises
        ------
        ValueError
            The core's message (``assign_groups``), naming the column or value and the fix: a
            data set with no group or with several, a single group, a group with no games.
        """
        if self.spec is None:
            return {}
        counting = {
            "ties": first["ties"],
            "d_min": first["d_min"] if first["local_rope"] else None,
            "paired": first["paired"],
            "tie_threshold": first["tie_threshold"] or None,
        }
        grouping = assign_groups(
            tidy, self._data, self.spec, dataset=self.dataset, counting=counting
        )
        return {"group_view": {"groups": list(grouping.groups), "spec": groups_spec()}}

    def check_ties(self, ties: str) -> None:
        """Raise the core's ValueError when the group model cannot count ``ties`` (Davidson's
        ties): the widget shows it beside the controls and starts no fit."""
        if self.spec is not None:
            check_group_request(self.spec, ties, self._data)

    @property
    def data(self) -> pd.DataFrame | None:
        """The widget's copy of the caller's results, group column included, for the group
        model's fits and sweeps (``None`` without groups)."""
        return self._data

    @property
    def fit_keywords(self) -> dict[str, Any]:
        """What the widget's ``fit_settings`` add: ``group`` ({} without groups)."""
        return {} if self.spec is None else {"group": self.spec}

    def fit(self, context: RunContext = QUIET, **settings: Any) -> BBTResult:
        """The group model's fit of ``settings`` (the widget's ``fit_settings``, ``group``
        among them): exactly ``bbt.fit(data, **settings)`` on the caller's results, group
        column included. Runs on the fit runner's thread."""
        return fit(self._data, progress=context.progress, cancel=context.cancel, **settings)

    @property
    def status_note(self) -> str:
        """What the status line adds while a fit samples ('' without groups)."""
        return NO_PREVIEW_NOTE if self.active else ""

    def shown(self, fitted: Fitted | None) -> Fitted | None:
        """What the decisions views show of ``fitted``: the chosen group's view of it
        (``in_group``, with its own ranges), else ``fitted`` itself."""
        name = self.w.selected_group
        if fitted is None or name is None or not isinstance(fitted.result, GroupedBBTResult):
            return fitted
        if name not in fitted.result.groups:
            return fitted  # the problem is shown (on_selected_group)
        with self._lens_lock:
            if self._lens_of is not fitted:
                self._lens_of, self._lens = fitted, {}
            lens = self._lens.get(name)
            if lens is None:
                view = fitted.result.in_group(name)
                lens = self._lens[name] = replace(fitted, result=view, ranges=fit_ranges(view))
            return lens

    def view_key(self, key: Hashable) -> Hashable:
        """The cache key of the views of the fit of ``key`` as shown: ``key`` itself for the
        pooled abilities, with the chosen group otherwise."""
        name = self.w.selected_group
        return key if name is None else (key, "group", name)

    def refresh(self) -> None:
        """After the views were re-summarised from the full fit: the heatmap's cells at the
        current ROPE, HDI and interpretation, and the headline naming the chosen group."""
        w = self.w
        fitted = w._fitted
        if fitted is None or not isinstance(fitted.result, GroupedBBTResult):
            return
        rope = (w.rope_low, w.rope_high)
        cells = group_cells(fitted.result, interpretation=w.interpretation, rope=rope, hdi=w.hdi)
        w.group_view = {**w.group_view, "cells": to_columns(cells)}
        if w.selected_group in fitted.result.groups and w.headline:
            w.headline = f"In group {isolate(w.selected_group)}: {w.headline}"

    def problem(self) -> str:
        """What is wrong with the group selector's value ('' when nothing is)."""
        value = self.w.selected_group
        groups = self.w.group_view.get("groups", [])
        if value is None or value in groups:
            return ""
        if not groups:
            return (
                f"selected_group: {value!r}, but this widget's data sets are not in groups; "
                'make it with group= (e.g. BBTWidget(data, group="family"))'
            )
        known = ", ".join(repr(g) for g in groups)
        return (
            f"selected_group: {value!r} is not one of the groups ({known}); "
            "None shows all data sets (pooled)"
        )
