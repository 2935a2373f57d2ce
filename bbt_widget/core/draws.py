"""The draws of a fit and the sampler settings that made them, whatever drew them.

Everything statistical (summaries, PPC, diagnostics, the other methods' samplers) reads
only :class:`Draws`, so the engines that fill them are interchangeable. Rounds of draws
(sampling by decision) join with :func:`joined`, each later round seeded by
:func:`round_seed`.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

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
from .run_context import ProgressCallback as ProgressCallback
from .validation import (
    check_adapt_delta,
    check_count,
    check_iter_sampling,
    check_max_treedepth,
    check_seed,
)

if TYPE_CHECKING:  # the views dict's own methods return
    from _collections_abc import dict_items, dict_keys, dict_values

#: Any numpy array: the draws of a parameter, a block of a CSV file.
Array = npt.NDArray[Any]

ModelName = Literal["bbt", "davidson", "bbt_groups"]


class Derivation(Protocol):
    """Quantities derived from a fit's draws (e.g. replicated wins and the pointwise
    log-likelihood): ``names``, and a call that gives them, the same arrays at every call."""

    @property
    def names(self) -> tuple[str, ...]: ...

    def __call__(self) -> dict[str, Array]: ...


@dataclass(frozen=True)
class _JoinedDerivation:
    """The derived quantities of rounds of draws joined as more chains: each round's, in
    order, concatenated along the chains."""

    parts: tuple[Derivation, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return self.parts[0].names

    def __call__(self) -> dict[str, Array]:
        found = [part() for part in self.parts]
        return {name: np.concatenate([f[name] for f in found]) for name in self.names}


class Params(dict[str, Array]):
    """A fit's draws by name, some derived only when first asked for (:class:`Derivation`).

    Why: the replicated wins and the log-likelihood of every draw and pair are the largest
    arrays of a fit and only the posterior predictive check, WAIC and LOO read them; drawn
    up front they cost a large share of a fit that never asks for them. Reading one of
    their names (``params["log_lik"]``, ``in``, iterating, ``get``) derives them all, once,
    from a copy of the generator's state the sampler left, so the numbers are those the fit
    would have drawn at once.
    """

    def __init__(self, values: dict[str, Array], derivation: Derivation | None = None) -> None:
        super().__init__(values)
        self._derivation = derivation

    @property
    def pending(self) -> Derivation | None:
        """The derivation not yet run (None once its quantities are in, or without one)."""
        return self._derivation

    def _derive(self) -> None:
        if self._derivation is not None:
            derived = self._derivation()
            self._derivation = None
            self.update(derived)

    def __missing__(self, key: str) -> Array:
        if self._derivation is None or key not in self._derivation.names:
            raise KeyError(key)
        self._derive()
        return self[key]

    def __contains__(self, key: object) -> bool:
        pending = self._derivation is not None and key in self._derivation.names
        return pending or super().__contains__(key)

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default

    def __iter__(self) -> Iterator[str]:
        self._derive()
        return super().__iter__()

    def __len__(self) -> int:
        self._derive()
        return super().__len__()

    def keys(self) -> dict_keys[str, Array]:
        self._derive()
        return super().keys()

    def values(self) -> dict_values[str, Array]:
        self._derive()
        return super().values()

    def items(self) -> dict_items[str, Array]:
        self._derive()
        return super().items()

    def copy(self) -> Params:
        return Params(dict(super().items()), self._derivation)

    def __reduce__(self) -> tuple[Any, ...]:
        # pickled as it stands (to a Dask worker and back): still lazy, no derivation run
        return (Params, (dict(super().items()), self._derivation))


@dataclass
class Draws:
    """Posterior draws of one fit, every array shaped (chains, draws, ...).

    Attributes
    ----------
    params
        Model parameters and generated quantities by Stan name: ``beta`` (chains, draws,
        n_alg), ``sigma`` (chains, draws), ``nu`` (Davidson only), ``win1_rep``,
        ``ties_rep`` (Davidson only) and ``log_lik`` (chains, draws, n_pairs). The numpy
        engine's are a :class:`Params`: the replicates and ``log_lik`` are drawn when first
        read.
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
    params = _joined_params(first.params, more.params)
    sampler = {k: np.concatenate((v, more.sampler[k])) for k, v in first.sampler.items()}
    timings = {k: v + more.timings.get(k, 0.0) for k, v in first.timings.items()}
    info = dict(first.info)
    for key, value in more.info.items():
        if key in info and info[key] != value and isinstance(value, str):
            parts = str(info[key]).split("+")
            info[key] = "+".join(parts if value in parts else [*parts, value])
    return Draws(params, sampler, first.engine, first.max_treedepth, timings, info)


def _joined_params(first: dict[str, Array], more: dict[str, Array]) -> dict[str, Array]:
    """Two rounds' parameters joined along the chains; quantities both rounds would derive
    when asked (:class:`Params`) stay underived, each round's from its own generator."""
    ours, theirs = (p.pending if isinstance(p, Params) else None for p in (first, more))
    if ours is None or theirs is None or ours.names != theirs.names:
        return {k: np.concatenate((v, more[k])) for k, v in first.items()}
    drawn = {k: np.concatenate((v, dict.__getitem__(more, k))) for k, v in dict.items(first)}
    return Params(drawn, _JoinedDerivation((ours, theirs)))


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
