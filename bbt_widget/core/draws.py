"""The draws of a fit and the sampler settings that made them, whatever drew them.

Everything statistical (summaries, PPC, diagnostics, the other methods' samplers) reads
only :class:`Draws`, so the engines that fill them are interchangeable. Rounds of draws
(sampling by decision) join with :func:`joined`, each later round seeded by
:func:`round_seed`.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from .options import (
    DEFAULT_ADAPT_DELTA,
    DEFAULT_CHAINS,
    DEFAULT_ITER_SAMPLING,
    DEFAULT_ITER_WARMUP,
    DEFAULT_MAX_TREEDEPTH,
    DEFAULT_SEED,
)
from .validation import (
    check_adapt_delta,
    check_count,
    check_iter_sampling,
    check_max_treedepth,
    check_seed,
)

#: Any numpy array: the draws of a parameter, a block of a CSV file.
Array = npt.NDArray[Any]

ModelName = Literal["bbt", "davidson", "bbt_groups"]

#: ``progress(stage, fraction)``: stage is "compiling" or "sampling"; fraction in [0, 1]
#: (``nan`` when unknown). Called from the engine's thread.
ProgressCallback = Callable[[str, float], None]


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

    params: dict[str, Array]
    sampler: dict[str, Array]
    engine: str
    max_treedepth: int = 10
    timings: dict[str, float] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)


def joined(first: Draws, more: Draws) -> Draws:
    """The chains of ``first`` and of ``more`` (the same model's draws, as many per chain) as
    one set of draws: ``more``'s chains follow ``first``'s. Timings add up; where the two
    runs' details differ (e.g. the kernel the numpy engine chose), both are kept, joined by
    ``"+"``."""
    params = {k: np.concatenate((v, more.params[k])) for k, v in first.params.items()}
    sampler = {k: np.concatenate((v, more.sampler[k])) for k, v in first.sampler.items()}
    timings = {k: v + more.timings.get(k, 0.0) for k, v in first.timings.items()}
    info = dict(first.info)
    for key, value in more.info.items():
        if key in info and info[key] != value and isinstance(value, str):
            parts = str(info[key]).split("+")
            info[key] = "+".join(parts if value in parts else [*parts, value])
    return Draws(params, sampler, first.engine, first.max_treedepth, timings, info)


def round_seed(seed: int, round_index: int) -> int:
    """The seed of a later round of draws of a fit seeded ``seed``: distinct per round and
    independent of the first round's streams, in Stan's range [1, 2**31 - 1)."""
    state = np.random.SeedSequence([seed, round_index]).generate_state(1)[0]
    return int(state % (2**31 - 2)) + 1


def fresh_seed(seed: int | None) -> int:
    """``seed``, or a random one to record when there is none (Stan's range, not 0)."""
    return secrets.randbelow(2**31 - 1) + 1 if seed is None else seed


@dataclass(frozen=True)
class SamplerSettings:
    """NUTS settings of one fit, checked when built (a bad value raises before any fit).

    Attributes
    ----------
    chains
        Chains, run in parallel (an integer >= 1).
    iter_warmup, iter_sampling
        Warm-up (an integer >= 0: Stan's rule; 0 skips adaptation) and kept iterations (at
        least :data:`~bbt_widget.core.options.MIN_ITER_SAMPLING`) per chain.
    adapt_delta
        NUTS's target acceptance rate, strictly between 0 and 1.
    max_treedepth
        NUTS's tree-depth limit, an integer from 1 to 30.
    seed
        Random seed in [0, 2**31 - 1], or ``None``: the engine draws one and records it in
        ``Draws.info["seed"]``.

    Raises
    ------
    ValueError, TypeError
        From the checks of :mod:`bbt_widget.core.validation`, naming the setting and its range.
    """

    chains: int = DEFAULT_CHAINS
    iter_warmup: int = DEFAULT_ITER_WARMUP
    iter_sampling: int = DEFAULT_ITER_SAMPLING
    adapt_delta: float = DEFAULT_ADAPT_DELTA
    max_treedepth: int = DEFAULT_MAX_TREEDEPTH
    seed: int | None = DEFAULT_SEED

    def __post_init__(self) -> None:
        checked = {
            "chains": check_count(self.chains, "chains"),
            "iter_warmup": check_count(self.iter_warmup, "iter_warmup", least=0),
            "iter_sampling": check_iter_sampling(self.iter_sampling),
            "adapt_delta": check_adapt_delta(self.adapt_delta),
            "max_treedepth": check_max_treedepth(self.max_treedepth),
            "seed": None if self.seed is None else check_seed(self.seed),
        }
        for name, value in checked.items():  # plain int and float (numpy scalars converted)
            object.__setattr__(self, name, value)

    def as_dict(self) -> dict[str, Any]:
        """The settings as plain JSON-able data."""
        return asdict(self)

    @property
    def iterations(self) -> int:
        """Warm-up and kept iterations of one chain."""
        return self.iter_warmup + self.iter_sampling
