"""The settings of a fit, as typed objects checked once, when built.

A fit's keyword arguments fall into groups that change different things: how the wins are
counted (:class:`CountingSettings`), the hyper-prior on sigma (:class:`PriorSettings`) and the
sampler (:class:`~bbt_widget.core.draws.SamplerSettings`). Each group is a frozen dataclass
that validates itself on construction with the checks of :mod:`bbt_widget.core.validation`
(so a bad value raises the same message wherever it is given) and takes its defaults from
:mod:`bbt_widget.core.options`. The public functions keep their keyword arguments and build
these objects once; :class:`FitSettings`, a fit's whole record (``BBTResult.settings``), reads
like the plain dictionary it replaces.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from .draws import SamplerSettings
from .options import DEFAULT_HYPERPRIOR, DEFAULT_TIE_THRESHOLD, DEFAULT_TIES
from .tidy import LAYOUT_KEYS
from .validation import check_d_min, check_flag, check_hyperprior, check_tie_threshold, check_ties

__all__ = ["LAYOUT_KEYS", "CountingSettings", "FitSettings", "PriorSettings"]


@dataclass(frozen=True)
class CountingSettings:
    """How the wins are counted from the results (paper Sec. 5), checked when built.

    Attributes
    ----------
    ties
        Tie policy: ``"spread"`` (default), ``"add"``, ``"forget"`` or ``"davidson"``;
        ``None`` keeps the raw counts (``win_table`` only).
    d_min
        Local-ROPE threshold (Cohen's d, finite and >= 0), or ``None`` to compare means.
    paired
        Whether the local ROPE pairs the folds (``True`` or ``False``).
    tie_threshold
        Tie threshold in score units (finite and >= 0); ``None`` or 0: none.

    Raises
    ------
    ValueError, TypeError
        From the checks of :mod:`bbt_widget.core.validation`, naming the setting.
    """

    ties: str | None = DEFAULT_TIES
    d_min: float | None = None
    paired: bool = True
    tie_threshold: float | None = DEFAULT_TIE_THRESHOLD

    def __post_init__(self) -> None:
        checked = {
            "ties": check_ties(self.ties),
            "d_min": check_d_min(self.d_min),
            "paired": check_flag(self.paired, "paired"),
            "tie_threshold": check_tie_threshold(self.tie_threshold),
        }
        for name, value in checked.items():  # plain float and bool (numpy scalars converted)
            object.__setattr__(self, name, value)

    def as_dict(self) -> dict[str, Any]:
        """The settings under ``fit``'s keyword names, as plain JSON-able data."""
        return {
            "d_min": self.d_min,
            "paired": self.paired,
            "ties": self.ties,
            "tie_threshold": self.tie_threshold,
        }

    def key(self) -> Hashable:
        """What the counting depends on: equal for settings that count the same wins
        (``paired`` matters only with a local ROPE; a tie threshold of 0 is none)."""
        paired = self.paired if self.d_min is not None else None
        return ("counting", self.ties, self.d_min, paired, self.tie_threshold or None)


@dataclass(frozen=True)
class PriorSettings:
    """The hyper-prior on sigma, the spread of the abilities (paper Appendix A), checked when
    built.

    Attributes
    ----------
    family
        ``"lognormal"`` (default), ``"cauchy"`` or ``"normal"`` (other spellings such as
        ``"half-normal"`` are resolved to these).
    scale
        The family's scale, a finite number > 0; ``None`` resolves to the family's default
        (:data:`bbt_widget.core.options.HYPERPRIOR_SCALES`).

    Raises
    ------
    ValueError, TypeError
        From :func:`bbt_widget.core.validation.check_hyperprior`.
    """

    family: str = DEFAULT_HYPERPRIOR
    scale: float | None = None

    def __post_init__(self) -> None:
        family, scale = check_hyperprior(self.family, self.scale)
        object.__setattr__(self, "family", family)
        object.__setattr__(self, "scale", scale)

    def as_dict(self) -> dict[str, Any]:
        """The prior under ``fit``'s keyword names (``hyperprior``, ``prior_scale``)."""
        return {"hyperprior": self.family, "prior_scale": self.scale}

    @property
    def resolved_scale(self) -> float:
        """The scale as a number (construction resolved ``None`` to the family's default)."""
        assert self.scale is not None
        return self.scale

    def key(self) -> Hashable:
        """The prior as a hashable key (the scale resolved, so ``None`` and the family's
        default scale give one key)."""
        return ("prior", self.family, self.scale)


@dataclass(frozen=True, eq=False)
class FitSettings(Mapping[str, Any]):
    """Every setting of one fit (``BBTResult.settings``), readable as the plain dictionary
    of :meth:`as_dict`: ``settings["seed"]``, ``settings.get("ties")``, ``dict(settings)``
    and ``json.dumps(dict(settings))`` work as they did on a dict; new code reads the groups
    (:attr:`counting`, :attr:`prior`, :attr:`sampler`).

    Attributes
    ----------
    layout
        How the results were read (:data:`LAYOUT_KEYS`).
    counting, prior
        How the wins were counted, and the hyper-prior.
    model
        The Stan model fitted (``"bbt"``, ``"davidson"`` or ``"bbt_groups"``).
    seed
        The seed of the run (``None`` before an engine drew one).
    win_table_input
        Whether a ready win table was given rather than results.
    engine
        The engine that ran the fit (``None`` for inputs not yet fitted).
    run
        How the draws were made, as recorded (the NUTS settings and the seed, or a Laplace
        approximation's ``method``, ``draws`` and seed); empty for inputs not yet fitted.
    sampler
        The NUTS settings of ``run`` (``None`` for a Laplace approximation or unfitted inputs).
    extra
        A model variant's own settings (the grouped model: ``group``, ``tau_scale``).
    """

    layout: Mapping[str, Any]
    counting: CountingSettings
    prior: PriorSettings
    model: str
    seed: int | None
    win_table_input: bool
    engine: str | None = None
    run: Mapping[str, Any] = field(default_factory=dict)
    sampler: SamplerSettings | None = None
    #: Settings of a model variant beyond the plain fit's (the grouped model's ``group``
    #: column and ``tau_scale``), recorded after the prior.
    extra: Mapping[str, Any] = field(default_factory=dict)

    def fitted(self, engine: str, run: Mapping[str, Any]) -> FitSettings:
        """These settings with how an engine drew: ``run`` as :attr:`run` records it (a NUTS
        run's settings are checked into :attr:`sampler`)."""
        names = [f.name for f in fields(SamplerSettings)]
        nuts = "method" not in run and all(k in run for k in names)
        sampler = SamplerSettings(**{k: run[k] for k in names}) if nuts else None
        return replace(self, engine=engine, run=dict(run), sampler=sampler)

    def as_dict(self) -> dict[str, Any]:
        """The settings as plain JSON-able data, in the order the record always had."""
        counting = self.counting.as_dict()
        if self.counting.d_min is None:
            counting["paired"] = None  # the folds are paired only by a local ROPE
        head: dict[str, Any] = {
            **{k: self.layout[k] for k in LAYOUT_KEYS},
            **counting,
            "model": self.model,
            **self.prior.as_dict(),
            **self.extra,
        }
        if self.engine is None:
            return {**head, "seed": self.seed, "win_table_input": self.win_table_input}
        return {
            **head,
            "engine": self.engine,
            **self.run,
            "win_table_input": self.win_table_input,
        }

    def __getitem__(self, key: str) -> Any:
        return self.as_dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.as_dict())

    def __len__(self) -> int:
        return len(self.as_dict())

    def __repr__(self) -> str:
        return f"FitSettings({self.as_dict()!r})"
