"""Altair imported ahead of time for a new widget.

The widget's first views come from a cached spec and tidy frames (no Altair), but its summary
charts (ranking, critical-difference diagram, decision matrices) are built with Altair on the
runner thread once the first fit is done, where a cold ``import altair`` would add seconds. A
widget's fit request (the first one as the widget is created) starts that import in a daemon
thread, so it overlaps the fit. ``import bbt_widget`` and ``bbt.fit`` still never import
Altair, nor does a widget created with ``autostart=False`` until it fits.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import threading

#: The module imported ahead of time.
MODULE = "altair"


def warm_altair() -> threading.Thread | None:
    """Start importing Altair in a daemon thread, unless it is imported (or being imported).

    An import that fails here is ignored: the chart that needs Altair imports it again and
    reports the error there.

    Returns
    -------
    threading.Thread or None
        The thread started, None when Altair was already in ``sys.modules``.
    """
    if MODULE in sys.modules:
        return None
    thread = threading.Thread(target=_import, name="bbt-widget-altair", daemon=True)
    thread.start()
    return thread


def _import() -> None:
    with contextlib.suppress(Exception):
        importlib.import_module(MODULE)
