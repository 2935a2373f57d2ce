"""The PyStan engine: PyStan's public API (``stan.build``, ``posterior.sample``) in a child.

PyStan (the ``stan`` extra) installs from PyPI alone and compiles with the system C++
compiler. Each compile, fit or Laplace approximation runs ``_pystan_child.py`` in a killable
child process (:mod:`._child`), with httpstan's model cache (``$XDG_CACHE_HOME``) pointed at
the package's private cache (:mod:`._cache`), checked before every run. A model compiles once
per machine, in the background: a cancelled fit stops waiting for it, not the compile.
Progress comes from PyStan's own lines, which report a chain's iterations when it ends, so
it moves in steps of one chain (CmdStan's moves every few percent).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import platform
import sys
import time
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from ..core.draws import Draws, ModelName, SamplerSettings, fresh_seed
from ..core.run_context import QUIET, RunContext
from . import _child
from ._cache import cache_root, check_tree, make_private_dirs
from ._programs import (
    INTEGER_OUTPUTS,
    add_empty_outputs,
    prepare_data,
    program_hash,
    stan_program,
)
from .base import EngineError

#: The child's script, beside this module.
_SCRIPT = "_pystan_child.py"
#: Data for a compile without a fit: ``stan.build`` reads the program's parameters with it.
_BUILD_DATA = {"n_alg": 2, "i1": [1], "i2": [2], "win1": [1], "win2": [1], "ties": [0]}


def _folder() -> Path:
    """httpstan's cache (its ``$XDG_CACHE_HOME``) in ours."""
    return cache_root() / "stan"


def _marker(model: ModelName) -> Path:
    """The file naming httpstan's folder of ``model`` once built: keyed by the program and
    what httpstan keys its models by (its version, the interpreter)."""
    key = f"{program_hash(model)} {_engine_version()} {sys.executable} {platform.machine()}"
    return _folder() / f"{model}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.txt"


def split(arrays: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """(parameters, sampler outputs) of a child's arrays, integer outputs as int64."""
    params: dict[str, np.ndarray] = {}
    sampler: dict[str, np.ndarray] = {}
    for name, values in arrays.items():
        dtype = np.int64 if name in INTEGER_OUTPUTS else np.float64
        (sampler if name.endswith("__") else params)[name] = values.astype(dtype, copy=False)
    return params, sampler


class PyStanEngine:
    """The PyStan engine (``bbt_widget.engines.get("pystan")``)."""

    name: str = "pystan"

    def available(self) -> bool:
        """Whether PyStan is installed (it runs on Linux and macOS only)."""
        return sys.platform != "win32" and importlib.util.find_spec("stan") is not None

    def problem(self) -> str | None:
        """None: an installed PyStan either compiles or says why when it does not."""
        return None

    def version(self) -> str:
        """PyStan's and httpstan's versions."""
        return _engine_version()

    def _env(self) -> dict[str, str]:
        folder = _folder()
        make_private_dirs(folder)
        check_tree(folder)  # nothing planted there is loaded
        # no debug information (Python's CFLAGS have -g): nobody reads it in a cached model,
        # and it makes the first compile much slower
        cflags = f"{os.environ.get('CFLAGS', '')} -g0".strip()
        return _child.child_env(XDG_CACHE_HOME=str(folder), CFLAGS=cflags)

    def compiled(self, model: ModelName) -> Path | None:
        """httpstan's folder of ``model`` if it was built here (nothing is built)."""
        marker = _marker(model)
        if not marker.is_file():
            return None
        folder = Path(marker.read_text().strip())
        return folder if folder.is_dir() and folder.is_relative_to(_folder()) else None

    def compile(
        self,
        model: ModelName,
        *,
        context: RunContext = QUIET,
        verbose: bool = False,
    ) -> tuple[Path, float]:
        """Compile ``model`` unless cached; return httpstan's folder of it and seconds spent."""
        start = time.perf_counter()
        built = self.compiled(model)
        if built is not None:
            return built, 0.0

        def build() -> None:
            data = prepare_data(model, {**_BUILD_DATA, "n_groups": 2, "group": [1]})
            request = {"method": "build", "program": stan_program(model), "data": data, "seed": 0}
            _, folder = _child.run(
                _SCRIPT, request, env=self._env(), verbose=verbose, what="PyStan compile"
            )
            _marker(model).write_text(folder)

        _child.ensure_built(f"pystan {model}", build, context)
        built = self.compiled(model)
        if built is None:
            raise EngineError(f"PyStan built {model!r} but its folder is not in the cache")
        return built, time.perf_counter() - start

    def _run(
        self,
        model: ModelName,
        request: dict[str, Any],
        context: RunContext,
        verbose: bool,
    ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, float], Path]:
        compiled, compile_seconds = self.compile(model, context=context, verbose=verbose)
        start = time.perf_counter()
        context.report("sampling", 0.0)
        try:
            arrays, _ = _child.run(
                _SCRIPT,
                {**request, "program": stan_program(model), "integers": sorted(INTEGER_OUTPUTS)},
                env=self._env(),
                context=context,
                verbose=verbose,
                what="PyStan sampling"
                if request["method"] == "sample"
                else "Laplace approximation",
            )
        except EngineError as error:
            raise EngineError(
                f"{error}\nIf every fit fails so, the cached model may be damaged: delete the "
                f"folder {compiled} (the next fit compiles it again)."
            ) from None
        params, sampler = split(arrays)
        add_empty_outputs(model, params, request["data"])
        context.report("sampling", 1.0)
        timings = {"compile": compile_seconds, "sample": time.perf_counter() - start}
        return params, sampler, timings, compiled

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
        seed = fresh_seed(settings.seed)
        request = {
            "method": "sample",
            "data": data,
            "seed": seed,
            "chains": settings.chains,
            "num_warmup": settings.iter_warmup,
            "num_samples": settings.iter_sampling,
            "delta": settings.adapt_delta,
            "max_depth": settings.max_treedepth,
        }
        params, sampler, timings, compiled = self._run(model, request, context, verbose)
        return Draws(
            params=params,
            sampler=sampler,
            engine=self.name,
            max_treedepth=settings.max_treedepth,
            timings=timings,
            info={
                "engine_version": self.version(),
                "stan_hash": program_hash(model),
                "model": model,
                "compiled_module": str(compiled),
                "seed": seed,
                "chains": settings.chains,
                "iter_warmup": settings.iter_warmup,
                "iter_sampling": settings.iter_sampling,
                "adapt_delta": settings.adapt_delta,
                "messages": [],
            },
        )

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
        """Draws of the Laplace approximation of ``model``'s posterior (``_laplace.py``,
        through PyStan's ``log_prob``, ``grad_log_prob`` and ``constrain_pars``)."""
        seed = fresh_seed(seed)
        request = {"method": "laplace", "model": model, "data": data, "draws": draws, "seed": seed}
        params, sampler, timings, compiled = self._run(model, request, context, verbose)
        return Draws(
            params=params,
            sampler=sampler,
            engine=self.name,
            timings=timings,
            info={
                "engine_version": self.version(),
                "stan_hash": program_hash(model),
                "model": model,
                "compiled_module": str(compiled),
                "seed": seed,
                "method": "laplace",
                "draws": draws,
            },
        )

    def shutdown(self) -> None:
        """Nothing kept between fits: each runs in a child of its own."""


@cache
def _engine_version() -> str:
    parts = []
    for dist in ("pystan", "httpstan"):
        try:
            parts.append(f"{dist} {importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            parts.append(f"{dist} (not installed)")
    return ", ".join(parts)
