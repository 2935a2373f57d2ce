"""The small interface every Stan engine implements.

An engine turns (model name, Stan data) into posterior draws. Everything statistical
downstream (summaries, PPC, diagnostics) reads only :class:`Draws`, so the engines are
interchangeable and tested for agreement.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

ModelName = Literal["bbt", "davidson", "hierarchical_ttest", "plackett_luce"]

#: ``progress(stage, fraction)``: stage is "compiling" or "sampling"; fraction in [0, 1]
#: (``nan`` when unknown). Called from the engine's thread.
ProgressCallback = Callable[[str, float], None]


class EngineError(RuntimeError):
    """A Stan engine could not compile or sample; the message says what to do."""


class FitCancelled(RuntimeError):
    """Sampling was stopped because a newer request superseded it."""


@dataclass
class Draws:
    """Posterior draws of one fit, every array shaped (chains, draws, ...).

    Attributes
    ----------
    params
        Model parameters and generated quantities by Stan name: ``beta`` (chains, draws,
        n_alg), ``sigma`` (chains, draws), ``nu`` (Davidson only), ``win1_rep``,
        ``ties_rep`` (Davidson only) and ``log_lik`` (chains, draws, n_pairs).
    sampler
        Per-iteration sampler diagnostics by Stan name: ``divergent__``, ``treedepth__``,
        ``energy__``, ``accept_stat__``, ``n_leapfrog__``, ``stepsize__``, ``lp__``.
    engine
        ``"pystan"`` or ``"cmdstanpy"``.
    max_treedepth
        The sampler's tree-depth limit (to count saturated transitions).
    timings
        Seconds spent, e.g. ``{"compile": 0.0, "sample": 0.42}``.
    info
        Engine details worth reporting (versions, executable path, Stan program hash).
    """

    params: dict[str, np.ndarray]
    sampler: dict[str, np.ndarray]
    engine: str
    max_treedepth: int = 10
    timings: dict[str, float] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)


def fresh_seed(seed: int | None) -> int:
    """``seed``, or a random one to record when there is none (Stan's range, not 0)."""
    return secrets.randbelow(2**31 - 1) + 1 if seed is None else seed
