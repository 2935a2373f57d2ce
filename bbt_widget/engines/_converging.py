"""The numpy engine's draws are not finished until their diagnostics pass: where the first
round's R-hat or ESS fails, the same chains draw again, by Gibbs sweeps, thinned more each
round, until the diagnostics pass or the further rounds allowed are spent.

Why here and not above the engine: a default fit whose diagnostics fail tells its user that
its numbers may be wrong, and the fix (more draws, or the other kernel) is the engine's to
know. The rounds keep the draws' shape (chains, iter_sampling), so whatever comes after (the
claims' settling, which adds chains, and every summary) sees draws as from one round; what
was tried is recorded in ``Draws.info["convergence"]``, which a failed check's warning names.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

from ..core.diagnostics import Diagnostics, draws_diagnostics
from ..core.draws import Draws, ModelName, SamplerSettings
from . import _gibbs
from ._design import Array, Design

#: How many further rounds a fit may draw after a first round that failed its diagnostics.
#: Each keeps as many draws a chain as the first, after a warm-up as long as the first's,
#: and thins twice as much as the Gibbs round before it (a first Gibbs round after the
#: independence kernel keeps every sweep): at most 6 times the first round's kept sweeps in
#: all (after a Gibbs first round: thinned by 2, then by 4), spent only where the
#: diagnostics fail (about 1 fit in 20 on data simulated from the prior).
FURTHER_ROUNDS = 2


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
    cancel: threading.Event | None,
    names: Sequence[str],
) -> tuple[dict[str, Array], list[Round]]:
    """The draws to keep, and every round drawn (``first`` and those of :data:`FURTHER_ROUNDS`
    after it), each with its verdict: ``params`` if they pass their diagnostics, else the
    first further round's that do, else the last's."""
    diag = _diagnose(params, names)
    rounds = [Round(first.kernel, first.thin, _verdict(diag))]
    thin = 1 if first.kernel == "independence" else 2 * first.thin
    for _ in range(FURTHER_ROUNDS):
        if diag.ok:
            break
        params = run.more(settings.iter_warmup, settings.iter_sampling, thin, cancel)
        diag = _diagnose(params, names)
        rounds.append(Round("gibbs", thin, _verdict(diag)))
        thin *= 2
    return params, rounds


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
