"""The numpy engine's draws are not finished until their diagnostics pass: where the first
round's R-hat or ESS fails, the same chains draw again, by Gibbs sweeps thinned as the ESS
measured says, until the diagnostics pass or the further sweeps allowed are spent.

Why here and not above the engine: a default fit whose diagnostics fail tells its user that
its numbers may be wrong, and the fix (more draws, or the other kernel) is the engine's to
know. The rounds keep the draws' shape (chains, iter_sampling), so whatever comes after (the
claims' settling, which adds chains, and every summary) sees draws as from one round; what
was tried is recorded in ``Draws.info["convergence"]``, which a failed check's warning names.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..core.convergence import MIN_CHAINS_RHAT
from ..core.diagnostics import ESS_PER_CHAIN, Diagnostics, draws_diagnostics
from ..core.draws import Draws, ModelName, SamplerSettings
from ..core.run_context import RunContext
from . import _gibbs
from ._design import Array, Design

#: What the further rounds after a first round that failed its diagnostics may draw in all:
#: this many times the first round's kept sweeps (each round also has a warm-up as long as
#: the first's). Each round keeps as many draws a chain as the first and thins as much as the
#: ESS it follows says is needed (with a quarter to spare; at least twice the last Gibbs
#: round's thinning; none in a first Gibbs round after the independence kernel, whose ESS says
#: nothing of Gibbs's). Spent only where the diagnostics fail (about 1 fit in 20 on data
#: simulated from the prior).
FURTHER_SWEEPS = 10
#: The share of effective draws the further rounds aim above what the check asks.
_SPARE = 1.25


@dataclass(frozen=True)
class Round:
    """One round of draws: its kernel ("independence" or "gibbs"), one step or sweep in
    ``thin`` kept, and the diagnostics' verdict (None until checked)."""

    kernel: str
    thin: int
    verdict: str | None = None

    def phrase(self) -> str:
        """The round in words, for ``Draws.info`` and the warning of a failed check."""
        name = "independence kernel" if self.kernel == "independence" else "Gibbs sampler"
        kept = f", one step in {self.thin} kept" if self.thin > 1 else ""
        return f"{name}{kept} ({self.verdict})"


def checked(model: ModelName) -> list[str]:
    """The parameters whose R-hat and ESS a fit of ``model`` is judged by (as its result
    judges them)."""
    if model == "bbt_groups":
        return ["beta", "sigma", "tau", "beta_group"]
    return ["beta", "sigma"]


def converge(
    design: Design,
    params: dict[str, Array],
    first: Round,
    run: _gibbs.Run,
    settings: SamplerSettings,
    context: RunContext,
    names: Sequence[str],
) -> tuple[dict[str, Array], list[Round]]:
    """The draws to keep, and every round drawn (``first`` and the further rounds that
    :data:`FURTHER_SWEEPS` allows after it), each with its verdict: ``params`` if they pass
    their diagnostics, else the first further round's that do, else the last's."""
    need = ESS_PER_CHAIN * settings.chains
    diag = _diagnose(params, names)
    rounds = [Round(first.kernel, first.thin, _verdict(diag))]
    left = FURTHER_SWEEPS
    thin = 1 if first.kernel == "independence" else _next_thin(diag, first.thin, need)
    last = 0  # the last Gibbs round's thinning: a round thinned less would not help
    while not _passed(diag, settings.chains, need) and min(thin, left) > last:
        thin = last = min(thin, left)
        left -= thin
        params = run.more(settings.iter_warmup, settings.iter_sampling, thin, context)
        diag = _diagnose(params, names)
        rounds.append(Round("gibbs", thin, _verdict(diag)))
        thin = _next_thin(diag, thin, need)
    return params, rounds


def _passed(diag: Diagnostics, chains: int, need: float) -> bool:
    """Whether the draws pass; a single chain (e.g. one more chain for a claim) has no R-hat
    to judge, and passes on its ESS alone: drawing more would never give it one."""
    if chains >= MIN_CHAINS_RHAT:
        return diag.ok
    return bool(diag.min_ess_bulk >= need and diag.min_ess_tail >= need)


def _next_thin(diag: Diagnostics, thin: int, need: float) -> int:
    """The thinning of the next Gibbs round after one thinned by ``thin`` whose diagnostics
    are ``diag``: enough for ``need`` effective draws if the ESS grows with the sweeps (at
    least twice ``thin``: where R-hat failed, longer chains)."""
    ess = min(diag.min_ess_bulk, diag.min_ess_tail)
    wanted = math.ceil(_SPARE * need / ess * thin) if ess > 0 else 2 * thin
    return max(2 * thin, wanted)


def tried(rounds: Sequence[Round]) -> str:
    """The rounds in words, first to last."""
    return "; then ".join(r.phrase() for r in rounds)


def _diagnose(params: dict[str, Array], names: Sequence[str]) -> Diagnostics:
    """The diagnostics every fit checks (:func:`~..core.diagnostics.draws_diagnostics`)."""
    return draws_diagnostics(Draws(params=params, sampler={}, engine="numpy"), names)


def _verdict(diag: Diagnostics) -> str:
    """ "passed", or what failed (the checks' numbers without their advice)."""
    if diag.ok:
        return "diagnostics passed"
    return "; ".join(m.split(":")[0] for m in diag.messages)
