"""Which of the widget's views are behind the settings: the trait ``stale_views`` the front end
reads to mark a view "updating" (dimmed, labelled) from a change until it is redrawn, so that
no view shows older settings than the others without saying so.

A view is behind when the settings it was drawn for differ from those asked for now: the fit
requested (``_requested_key``, which a fit control moves at once, before its fit has run), the
group shown and the view controls. The pairwise view (intervals, headline) is redrawn in the
change's own message; the ranking and decision matrices are built in the background
(:func:`~bbt_widget.widget.views.summary_spec`) and stay marked until they arrive. A fit that
failed leaves the views of the last good settings marked as behind: the error says why. A
value refused as invalid never becomes a setting (:mod:`~bbt_widget.widget.checks`): the
views stay in step with the last good value, which the control shows again.

The trait also holds the settings as the kernel last saw them: a control moved in the browser
differs from them until the kernel has handled the change, so the front end marks every view
at once, before this module's answer comes back.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from .controls import FIT_TRAITS, VIEW_TRAITS

__all__ = ["SETTINGS_TRAITS", "VIEWS", "InStep"]

#: The views whose settings are tracked: the pairwise view (its charts and the headline) and
#: the summary (ranking, critical-difference diagram, decision matrices).
VIEWS = ("pairs", "summary")
#: The traits a view's drawing depends on: the fit controls, the view controls and the metric.
SETTINGS_TRAITS = (*FIT_TRAITS, *VIEW_TRAITS, "metric")


class InStep:
    """The settings each view was drawn for, and the trait ``stale_views`` that lists the views
    behind the current settings (see the module doc).

    Parameters
    ----------
    widget
        The :class:`~bbt_widget.widget.app.BBTWidget` whose views these are.
    """

    def __init__(self, widget: Any) -> None:
        self.w = widget
        #: The key of the settings each view shows (None: nothing drawn yet).
        self.shown: dict[str, Hashable | None] = dict.fromkeys(VIEWS)

    def wanted(self, view: str, fit_key: Hashable | None = None) -> Hashable:
        """The key of the settings ``view`` should show: those of the fit ``fit_key`` (default:
        the one requested) at the current view controls. The summary's is its runner's key."""
        w = self.w
        fit = w._requested_key if fit_key is None else fit_key
        key = (w._groups.view_key(fit), (w.rope_low, w.rope_high), w.hdi, w.interpretation)
        return key if view == "summary" else (*key, w.control)

    def drawn(self, view: str, key: Hashable) -> None:
        """``view`` now shows the settings of ``key`` (a :meth:`wanted` key)."""
        self.shown[view] = key
        self.update()

    def update(self, _change: Any = None) -> None:
        """Send the views behind the current settings, with those settings (also an observer
        of every trait in :data:`SETTINGS_TRAITS`)."""
        w = self.w
        behind = [view for view in VIEWS if self.shown[view] != self.wanted(view)]
        settings = {name: getattr(w, name) for name in SETTINGS_TRAITS}
        w.stale_views = {"views": behind, "settings": settings}
