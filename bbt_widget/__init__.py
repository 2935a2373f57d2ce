"""bbt-widget: Bayesian Bradley-Terry comparison of ML algorithms, in one line.

>>> import bbt_widget as bbt
>>> res = bbt.fit(bbt.datasets.load_base(), dataset="db")  # doctest: +SKIP
>>> res.summary()  # doctest: +SKIP
"""

from __future__ import annotations

from . import data, datasets
from .data import TidyResults, tidy_results
from .wintable import win_table

__version__ = "0.1.0"

__all__ = ["TidyResults", "__version__", "data", "datasets", "tidy_results", "win_table"]
