"""Fitting: the results read once, the win table counted, an engine run over it.

This layer sits above the engines (which draw) and the core (which counts wins and
summarises draws): :func:`fit` and :func:`prepare_fit` are where the two meet.
"""

from .entry_points import (
    COUNT_SETTINGS,
    FIT_KEYWORDS,
    LAYOUT_SETTINGS,
    PRIOR_SETTINGS,
    SAMPLER_SETTINGS,
    fit,
    fit_laplace,
)
from .prepared import (
    GROUP_LAPLACE_REFUSAL,
    DiagnosticsWarning,
    DisconnectedWarning,
    PreparedFit,
    prepare_fit,
    stan_inputs,
)

__all__ = [
    "COUNT_SETTINGS",
    "FIT_KEYWORDS",
    "GROUP_LAPLACE_REFUSAL",
    "LAYOUT_SETTINGS",
    "PRIOR_SETTINGS",
    "SAMPLER_SETTINGS",
    "DiagnosticsWarning",
    "DisconnectedWarning",
    "PreparedFit",
    "fit",
    "fit_laplace",
    "prepare_fit",
    "stan_inputs",
]
