"""The CmdStan engine: cmdstanpy's public ``CmdStanModel`` in a killable child process.

Used when cmdstanpy finds a CmdStan installation (``cmdstanpy.cmdstan_path()``: ``$CMDSTAN``
or ``python -m cmdstanpy.install_cmdstan``'s). Each compile, fit or Laplace approximation
runs ``_cmdstan_child.py`` in a child process (:mod:`._child`); the program is written into
the package's private cache (:mod:`._cache`), one folder per CmdStan installation, and
cmdstanpy compiles its executable beside it, once per machine, in the background (a
cancelled fit stops waiting for it, not the compile). The folder is checked before anything
in it runs.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import time
from pathlib import Path
from typing import Any

from ..core.draws import Draws, ModelName, SamplerSettings, fresh_seed
from ..core.run_context import QUIET, RunContext
from . import _child
from ._cache import cache_root, check_tree, make_private_dirs
from ._programs import INTEGER_OUTPUTS, add_empty_outputs, program_hash, stan_program
from ._pystan import split
from .base import EngineError

#: The child's script, beside this module.
_SCRIPT = "_cmdstan_child.py"


def _cmdstan_path() -> str | None:
    """The CmdStan installation cmdstanpy finds (None: cmdstanpy or CmdStan is missing)."""
    if importlib.util.find_spec("cmdstanpy") is None:
        return None
    import cmdstanpy

    try:
        return str(cmdstanpy.cmdstan_path())
    except ValueError:  # cmdstanpy found no installation
        return None


class CmdStanEngine:
    """The CmdStan engine (``bbt_widget.engines.get("cmdstanpy")``)."""

    name: str = "cmdstanpy"

    def available(self) -> bool:
        """Whether cmdstanpy is installed and finds a CmdStan installation."""
        return _cmdstan_path() is not None

    def problem(self) -> str | None:
        """None: a CmdStan that cmdstanpy finds either compiles or says why it does not."""
        return None

    def version(self) -> str:
        """cmdstanpy's version and the CmdStan installation used."""
        try:
            cmdstanpy = importlib.metadata.version("cmdstanpy")
        except importlib.metadata.PackageNotFoundError:
            cmdstanpy = "(not installed)"
        return f"cmdstanpy {cmdstanpy}, {Path(_cmdstan_path() or 'CmdStan (not found)').name}"

    def _stan_file(self, model: ModelName) -> Path:
        """The program in the cache, in the folder of the CmdStan installation found."""
        install = hashlib.sha256(str(_cmdstan_path()).encode()).hexdigest()[:12]
        return cache_root() / "cmdstan" / install / f"{model}-{program_hash(model)[:16]}.stan"

    def _env(self, folder: Path) -> dict[str, str]:
        make_private_dirs(folder)
        check_tree(folder)  # nothing planted there is run
        return _child.child_env()

    def compiled(self, model: ModelName) -> Path | None:
        """The cached executable of ``model``, or None (nothing is built)."""
        stan_file = self._stan_file(model)
        exe = stan_file.with_suffix(".exe" if os.name == "nt" else "")
        return exe if exe.is_file() and stan_file.is_file() else None

    def compile(
        self,
        model: ModelName,
        *,
        context: RunContext = QUIET,
        verbose: bool = False,
    ) -> tuple[Path, float]:
        """Compile ``model`` unless cached; return the executable and seconds spent."""
        start = time.perf_counter()
        built = self.compiled(model)
        if built is not None:
            return built, 0.0
        stan_file = self._stan_file(model)

        def build() -> None:
            env = self._env(stan_file.parent)
            stan_file.write_text(stan_program(model))
            request = {"method": "build", "stan_file": str(stan_file), "data": {}, "seed": 0}
            _child.run(_SCRIPT, request, env=env, verbose=verbose, what="CmdStan compile")

        _child.ensure_built(f"cmdstanpy {stan_file}", build, context)
        built = self.compiled(model)
        if built is None:
            raise EngineError(f"cmdstanpy built {model!r} but no executable is in the cache")
        return built, time.perf_counter() - start

    def _run(
        self,
        model: ModelName,
        request: dict[str, Any],
        context: RunContext,
        verbose: bool,
    ) -> tuple[Draws, Path]:
        exe, compile_seconds = self.compile(model, context=context, verbose=verbose)
        start = time.perf_counter()
        context.report("sampling", 0.0)
        arrays, _ = _child.run(
            _SCRIPT,
            {
                **request,
                "stan_file": str(self._stan_file(model)),
                "integers": sorted(INTEGER_OUTPUTS),
            },
            env=self._env(exe.parent),
            context=context,
            verbose=verbose,
            what="CmdStan sampling" if request["method"] == "sample" else "Laplace approximation",
        )
        params, sampler = split(arrays)
        add_empty_outputs(model, params, request["data"])
        context.report("sampling", 1.0)
        timings = {"compile": compile_seconds, "sample": time.perf_counter() - start}
        info = {
            "engine_version": self.version(),
            "stan_hash": program_hash(model),
            "model": model,
            "compiled_module": str(exe),
            "seed": request["seed"],
        }
        draws = Draws(params=params, sampler=sampler, engine=self.name, timings=timings, info=info)
        return draws, exe

    def sample(
        self,
        model: ModelName,
        data: dict[str, Any],
        settings: SamplerSettings,
        *,
        context: RunContext = QUIET,
        verbose: bool = False,
    ) -> Draws:
        """Compile (if needed) and sample ``model`` with NUTS; ``data`` is already validated."""
        request = {
            "method": "sample",
            "data": data,
            "seed": fresh_seed(settings.seed),
            "chains": settings.chains,
            "iter_warmup": settings.iter_warmup,
            "iter_sampling": settings.iter_sampling,
            "adapt_delta": settings.adapt_delta,
            "max_treedepth": settings.max_treedepth,
        }
        draws, _ = self._run(model, request, context, verbose)
        draws.max_treedepth = settings.max_treedepth
        draws.info.update(
            chains=settings.chains,
            iter_warmup=settings.iter_warmup,
            iter_sampling=settings.iter_sampling,
            adapt_delta=settings.adapt_delta,
            messages=[],
        )
        return draws

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
        """Draws of CmdStan's Laplace approximation of ``model``'s posterior (its ``laplace``
        method, CmdStan 2.32 or later)."""
        request = {"method": "laplace", "data": data, "draws": draws, "seed": fresh_seed(seed)}
        result, _ = self._run(model, request, context, verbose)
        result.info.update(method="laplace", draws=draws)
        return result

    def shutdown(self) -> None:
        """Nothing kept between fits: each runs in a child of its own."""
