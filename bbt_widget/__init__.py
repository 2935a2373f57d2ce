"""bbt-widget: Bayesian Bradley-Terry comparison of ML algorithms, in one line.

>>> import bbt_widget as bbt
>>> res = bbt.fit(bbt.datasets.load_base(), dataset="db")  # doctest: +SKIP
>>> res.summary()  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import importlib.metadata as _metadata
from typing import TYPE_CHECKING, Any

from . import datasets
from .core import data, options
from .core.audit import Audit, DataWarning, audit
from .core.data import DEFAULT_SEED, tidy_results
from .core.group_result import GroupedBBTResult
from .core.result import BBTResult
from .core.tidy import TidyResults
from .core.wintable import win_table
from .fitting import DiagnosticsWarning, DisconnectedWarning, fit
from .lab.calibration import Calibration, calibration
from .lab.influence import Influence, influence
from .lab.metrics import MetricsResult, compare_metrics
from .lab.sweep import sweep
from .lab.sweep_groups import GroupedSweepResult
from .lab.sweep_result import SweepResult

if TYPE_CHECKING:
    from .ranking._plackett_luce import ranking_model
    from .widget.app import BBTWidget


def _version() -> str:
    """The installed distribution's version; a source tree that was never installed says so."""
    try:
        return _metadata.version("bbt-widget")
    except _metadata.PackageNotFoundError:
        return "0+unknown"


__version__ = _version()

__all__ = [
    "DEFAULT_SEED",
    "Audit",
    "BBTResult",
    "BBTWidget",
    "Calibration",
    "DataWarning",
    "DiagnosticsWarning",
    "DisconnectedWarning",
    "GroupedBBTResult",
    "GroupedSweepResult",
    "Influence",
    "MetricsResult",
    "SweepResult",
    "TidyResults",
    "__version__",
    "audit",
    "baselines",
    "calibration",
    "charts",
    "compare_metrics",
    "data",
    "datasets",
    "export",
    "fit",
    "influence",
    "options",
    "ranking",
    "ranking_model",
    "report",
    "sweep",
    "tidy_results",
    "win_table",
]


#: Submodules imported on first use: they pull in Altair or SciPy-heavy code that a plain
#: ``fit`` does not need.
_LAZY_MODULES = {
    "baselines": "baselines",
    "charts": "charts",
    "ranking": "ranking",
    "export": "outputs.export",
    "report": "outputs.report",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY_MODULES:
        # import_module, not "from . import": that form would look the attribute up on this
        # package first and recurse into __getattr__
        return importlib.import_module(f"{__name__}.{_LAZY_MODULES[name]}")
    if name == "ranking_model":
        from .ranking._plackett_luce import ranking_model

        return ranking_model
    if name == "BBTWidget":
        # the widget pulls in anywidget/ipywidgets: only import it when asked for
        from .widget.app import BBTWidget

        return BBTWidget
    raise AttributeError(f"module 'bbt_widget' has no attribute {name!r}")


def __dir__() -> list[str]:
    """Only the public API: submodules imported along the way are implementation details."""
    return sorted(__all__)
