"""The small interface every Stan engine implements: :class:`Engine`.

An engine turns (model name, Stan data, :class:`SamplerSettings`) into posterior draws.
Everything statistical downstream (summaries, PPC, diagnostics) reads only :class:`Draws`, so
the engines are interchangeable and tested for agreement. Each engine is a class;
``bbt_widget.engines.get(name)`` returns the one instance per name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..core.draws import Draws, ModelName, SamplerSettings
from ..core.run_context import QUIET, FitCancelled, RunContext

__all__ = ["Engine", "EngineError", "FitCancelled", "RunContext"]


class EngineError(RuntimeError):
    """A Stan engine could not compile or sample; the message says what to do."""


@runtime_checkable
class Engine(Protocol):
    """What every Stan engine provides (``bbt_widget.engines.get(name)`` returns one).

    The front door, :mod:`bbt_widget.engines`, checks the model, the data and the settings;
    an engine receives them checked (``data`` as :func:`~._programs.prepare_data` returns it).
    ``compiled`` paths are what :meth:`compile` returns: the engine's compiled program.
    """

    #: ``"cmdstanpy"`` or ``"pystan"``: the name ``engine=`` takes and ``Draws.engine`` holds.
    name: str

    def available(self) -> bool:
        """Whether the engine can run here (cheap: nothing is compiled or started)."""
        ...

    def problem(self) -> str | None:
        """Why an installation of the engine, found here, does not work (None: it works, or
        none is found)."""
        ...

    def version(self) -> str:
        """The engine's libraries and their versions, for reports."""
        ...

    def compile(
        self,
        model: ModelName,
        *,
        context: RunContext = QUIET,
        verbose: bool = False,
    ) -> tuple[Path, float]:
        """Compile ``model`` unless cached; return the compiled program and seconds spent."""
        ...

    def compiled(self, model: ModelName) -> Path | None:
        """The cached compiled program of ``model``, or None (nothing is built)."""
        ...

    def sample(
        self,
        model: ModelName,
        data: dict[str, Any],
        settings: SamplerSettings,
        *,
        context: RunContext = QUIET,
        verbose: bool = False,
    ) -> Draws:
        """Compile (if needed) and sample ``model`` with NUTS."""
        ...

    def laplace(
        self,
        model: ModelName,
        data: dict[str, Any],
        *,
        draws: int,
        seed: int | None,
        context: RunContext = QUIET,
        verbose: bool = False,
    ) -> Draws:
        """Draws of the Laplace approximation of ``model``'s posterior."""
        ...

    def shutdown(self) -> None:
        """Stop what the engine keeps between fits (the next fit starts what it needs)."""
        ...
