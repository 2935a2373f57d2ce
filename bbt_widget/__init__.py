"""bbt-widget: Bayesian Bradley-Terry comparison of ML algorithms, in one line.

>>> import bbt_widget as bbt
>>> res = bbt.fit(bbt.datasets.load_base(), dataset="db")  # doctest: +SKIP
>>> res.summary()  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import data, datasets
from .audit import Audit, DataWarning, audit
from .calibration import Calibration, calibration
from .data import DEFAULT_SEED, TidyResults, tidy_results
from .fitting import DiagnosticsWarning, DisconnectedWarning, fit
from .influence import Influence, influence
from .result import BBTResult
from .sweep import SweepResult, sweep
from .wintable import win_table

if TYPE_CHECKING:
    from .ranking import ranking_model
    from .widget import BBTWidget

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_SEED",
    "Audit",
    "BBTResult",
    "BBTWidget",
    "Calibration",
    "DataWarning",
    "DiagnosticsWarning",
    "DisconnectedWarning",
    "Influence",
    "SweepResult",
    "TidyResults",
    "__version__",
    "audit",
    "baselines",
    "calibration",
    "data",
    "datasets",
    "fit",
    "influence",
    "ranking_model",
    "sweep",
    "tidy_results",
    "win_table",
]


def __getattr__(name: str) -> Any:
    # the widget pulls in anywidget/ipywidgets: only import it when asked for
    if name == "baselines":
        # import_module, not "from . import": that form would look the attribute up on this
        # package first and recurse into __getattr__
        return importlib.import_module(f"{__name__}.baselines")
    if name == "ranking_model":
        from .ranking import ranking_model

        return ranking_model
    if name == "BBTWidget":
        from .widget import BBTWidget

        return BBTWidget
    raise AttributeError(f"module 'bbt_widget' has no attribute {name!r}")
