"""The data of a BBT model as the numpy engine's samplers read it, and the log density of
its hyper-prior on ``log sigma`` (shared by the Gibbs sampler and the independence kernel)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[Any]


@dataclass(frozen=True)
class Design:
    """A model's data as the sampler reads it (0-based indices).

    Attributes
    ----------
    n_alg, n_groups
        Algorithms, and groups of data sets (1 for the plain model).
    i1, i2, group
        Per pair: its two algorithms and its group.
    wins, games
        Per pair: wins of ``i1`` and games (``win1 + win2``, real numbers allowed).
    hyperprior, prior_scale
        The hyper-prior of ``sigma`` (1 lognormal, 2 half-Cauchy, 3 half-normal) and its scale.
    tau_scale
        Scale of the half-normal prior of ``tau``; ``None`` for the plain model.
    """

    n_alg: int
    n_groups: int
    i1: Array
    i2: Array
    group: Array
    wins: Array
    games: Array
    hyperprior: int
    prior_scale: float
    tau_scale: float | None

    @classmethod
    def from_stan_data(cls, data: Mapping[str, Any]) -> Design:
        """The design of the Stan data of ``bbt`` or ``bbt_groups`` (as
        :func:`~._programs.prepare_data` returns it, or with real counts)."""
        grouped = "group" in data
        wins = np.asarray(data["win1"], dtype=float)
        return cls(
            n_alg=int(data["n_alg"]),
            n_groups=int(data["n_groups"]) if grouped else 1,
            i1=np.asarray(data["i1"], dtype=np.intp) - 1,
            i2=np.asarray(data["i2"], dtype=np.intp) - 1,
            group=(
                np.asarray(data["group"], dtype=np.intp) - 1
                if grouped
                else np.zeros(len(wins), dtype=np.intp)
            ),
            wins=wins,
            games=wins + np.asarray(data["win2"], dtype=float),
            hyperprior=int(data.get("hyperprior", 1)),
            prior_scale=float(data.get("prior_scale", 0.5)),
            tau_scale=float(data["tau_scale"]) if grouped else None,
        )

    @property
    def grouped(self) -> bool:
        """Whether this is the group model."""
        return self.tau_scale is not None


def log_prior_sigma(x: Array, design: Design) -> Array:
    """Log density of ``x = log sigma`` under the hyper-prior (the Jacobian ``sigma``
    included), up to a constant."""
    s = design.prior_scale
    if design.hyperprior == 1:  # lognormal(0, s): log sigma ~ Normal(0, s)
        return np.asarray(-0.5 * (x / s) ** 2)
    sigma = np.exp(x)
    if design.hyperprior == 2:  # half-Cauchy(0, s)
        return np.asarray(x - np.log1p((sigma / s) ** 2))
    return np.asarray(x - 0.5 * (sigma / s) ** 2)  # half-normal(0, s)


def softplus(x: Array) -> Array:
    """``log(1 + e^x)`` per element, stable at any ``x`` (``log1p(e^-|x|) + max(x, 0)``),
    computed in place in one new array: numpy's ``logaddexp(0, x)`` takes several times as
    long, which shows over the millions of draws and pairs of a large fit."""
    out = np.abs(x)
    np.negative(out, out=out)
    np.exp(out, out=out)
    np.log1p(out, out=out)
    out += np.maximum(x, 0.0)
    return out
