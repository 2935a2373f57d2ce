"""The cmdstanpy engine: CmdStan executables built once into our cache.

Used when a CmdStan installation is found (``$CMDSTAN`` or ``~/.cmdstan``, as cmdstanpy looks
for it): CmdStan's sampler is the fastest way to run the models. The executable is compiled by
cmdstanpy in a subprocess (killable, and its output captured) from a copy of the program in the
cache directory, and lives beside it. Sampling runs ``CmdStanModel.sample`` in a helper thread
with a temporary output directory; cancelling kills the CmdStan processes of that fit (found
through ``/proc`` by their output directory), after which cmdstanpy returns with an error that
we turn into :class:`FitCancelled`. Progress is only reported at the start and the end of
sampling: cmdstanpy exposes per-iteration progress only through its own console progress bars.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from . import _procs
from ._cache import cache_root, ensure_built
from ._programs import INTEGER_OUTPUTS, add_empty_outputs, program_hash, stan_program
from .base import Draws, EngineError, FitCancelled, ModelName, ProgressCallback

INSTALL_HINT = (
    "Install CmdStan with `python -m cmdstanpy.install_cmdstan` (needs internet and a C++ "
    "toolchain) or point $CMDSTAN at an existing installation; or use engine='pystan'."
)

_BUILD_SCRIPT = Path(__file__).with_name("_cmdstan_build.py")


def cmdstan_path() -> str | None:
    """The CmdStan installation cmdstanpy would use, or None.

    Cheap when there is none: cmdstanpy looks at ``$CMDSTAN`` and then ``~/.cmdstan``, so
    without either we answer without importing it (its import takes most of a second).
    """
    if not os.environ.get("CMDSTAN") and not (Path.home() / ".cmdstan").is_dir():
        return None
    try:
        import cmdstanpy

        with cmdstanpy.disable_logging():
            return cmdstanpy.cmdstan_path()
    except Exception:  # cmdstanpy raises ValueError when not found; be lenient about the rest
        return None


def available() -> bool:
    """Whether a CmdStan installation is found (``cmdstanpy.cmdstan_path()`` works)."""
    return importlib.util.find_spec("cmdstanpy") is not None and cmdstan_path() is not None


def _cmdstan_version(path: str) -> str:
    try:
        import cmdstanpy

        with cmdstanpy.disable_logging():
            version = cmdstanpy.cmdstan_version()
        if version:
            return ".".join(map(str, version))
    except Exception:
        pass
    return Path(path).name.removeprefix("cmdstan-") or "unknown"


def engine_version() -> str:
    """``"cmdstanpy X, CmdStan Y"``."""
    path = cmdstan_path()
    cmdstan = _cmdstan_version(path) if path else "not found"
    return f"cmdstanpy {importlib.metadata.version('cmdstanpy')}, CmdStan {cmdstan}"


def _exe_name(model: ModelName) -> str:
    return model + (".exe" if sys.platform == "win32" else "")


def _target(model: ModelName) -> Path:
    path = cmdstan_path()
    if path is None:
        raise EngineError("CmdStan not found. " + INSTALL_HINT)
    # The executable depends on the program and on the CmdStan installation that built it.
    install = hashlib.sha256(os.path.realpath(path).encode()).hexdigest()[:8]
    tag = f"{model}-{program_hash(model)}-cmdstan{_cmdstan_version(path)}-{install}"
    return cache_root() / "cmdstan" / tag


def _build(model: ModelName, scratch: Path, *, verbose: bool) -> None:
    stan_file = scratch / f"{model}.stan"
    stan_file.write_text(stan_program(model), encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="bbt-widget-build-") as cwd:
        proc = _procs.spawn(
            [sys.executable, str(_BUILD_SCRIPT), str(stan_file)],
            cwd=cwd,
            env={**_procs.child_env(), "TMPDIR": cwd},  # the compiler's temp files go too
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        try:
            output, _ = proc.communicate()
        finally:
            _procs.kill_group(proc)
    text = output.decode(errors="replace")
    (scratch / "build.log").write_text(text)
    if verbose:
        sys.stderr.write(text)
    if proc.returncode != 0 or not (scratch / _exe_name(model)).exists():
        tail = "\n".join(text.strip().splitlines()[-20:])
        raise EngineError(
            f"Compiling the Stan model {model!r} with CmdStan failed (exit code "
            f"{proc.returncode}). Last lines of the output:\n{tail}"
        )


def compile_model(
    model: ModelName,
    *,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    verbose: bool = False,
) -> tuple[Path, float]:
    """Compile ``model`` unless cached; return the executable and the seconds spent."""
    target = _target(model)
    exe = target / _exe_name(model)
    seconds = ensure_built(
        target,
        lambda t: (t / _exe_name(model)).exists(),
        partial(_build, model, verbose=verbose),
        progress=progress,
        cancel=cancel,
    )
    return exe, seconds


def _kill_fit_processes(output_dir: str) -> None:
    # CmdStan is started by cmdstanpy's threads, so its processes are our children; the ones of
    # this fit write into output_dir, which appears in their command line.
    for pid in _procs.children():
        if any(output_dir in arg for arg in _procs.cmdline(pid)):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def _signal_note(detail: str) -> str:
    """ "chain 2 was killed by SIGKILL ...; " when cmdstanpy's message shows a chain that a
    signal ended (its return code is then negative), else ""."""
    found = re.search(r"retcodes=\[([-\d, ]*)\]", detail)  # from cmdstanpy's RunSet repr
    codes = [int(c) for c in found.group(1).split(",") if c.strip()] if found else []
    for chain, code in enumerate(codes, start=1):
        if code < 0:
            return f"chain {chain} {_procs.killed_by(-code)}. "
    return ""


def _to_draws_dict(array: np.ndarray, names: tuple[str, ...]) -> tuple[dict, dict]:
    # cmdstanpy: (draws, chains, columns), names like "lp__", "sigma", "beta[3]"
    by_chain = array.transpose(1, 0, 2)  # a view; each output is copied once, below
    groups: dict[str, list[int]] = {}
    for j, name in enumerate(names):
        groups.setdefault(name.split("[", 1)[0], []).append(j)
    params: dict[str, np.ndarray] = {}
    sampler: dict[str, np.ndarray] = {}
    for base, cols in groups.items():
        values = by_chain[:, :, cols[0] : cols[-1] + 1]
        if "[" not in names[cols[0]]:
            values = values[..., 0]
        dtype = np.int64 if base in INTEGER_OUTPUTS else np.float64
        (sampler if base.endswith("__") else params)[base] = np.ascontiguousarray(values, dtype)
    return params, sampler


def sample(
    model: ModelName,
    data: dict[str, Any],
    *,
    chains: int,
    iter_warmup: int,
    iter_sampling: int,
    seed: int | None,
    max_treedepth: int,
    adapt_delta: float,
    progress: ProgressCallback | None,
    cancel: threading.Event | None,
    verbose: bool,
) -> Draws:
    """Compile (if needed) and sample ``model`` with CmdStan; ``data`` is already validated."""
    import cmdstanpy

    exe, compile_seconds = compile_model(model, progress=progress, cancel=cancel, verbose=verbose)
    start = time.perf_counter()
    if progress is not None:
        progress("sampling", 0.0)
    if seed is None:
        seed = secrets.randbelow(2**31 - 1) + 1
    output_dir = tempfile.mkdtemp(prefix="bbt-widget-cmdstan-")
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            logging_off = contextlib.nullcontext() if verbose else cmdstanpy.disable_logging()
            with logging_off:
                stan_model = cmdstanpy.CmdStanModel(exe_file=str(exe))
                fit = stan_model.sample(
                    data=data,
                    chains=chains,
                    parallel_chains=min(chains, os.cpu_count() or 1),
                    seed=seed,
                    iter_warmup=iter_warmup,
                    iter_sampling=iter_sampling,
                    max_treedepth=max_treedepth,
                    adapt_delta=adapt_delta,
                    output_dir=output_dir,
                    show_progress=False,
                    show_console=verbose,
                )
                result["draws"] = fit.draws()  # reads the CSV files before they are removed
                result["names"] = fit.column_names
        except BaseException as exc:  # handed to the caller's thread
            result["error"] = exc

    worker = threading.Thread(target=run, name="bbt-widget-cmdstan", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.05)
            if cancel is not None and cancel.is_set():
                # cmdstanpy may start a chain after we killed the others: keep at it
                while worker.is_alive():
                    _kill_fit_processes(output_dir)
                    worker.join(0.05)
                raise FitCancelled("sampling cancelled")
    finally:
        if worker.is_alive():  # interrupted while waiting
            _kill_fit_processes(output_dir)
            worker.join()
        shutil.rmtree(output_dir, ignore_errors=True)
    if "error" in result:
        detail = str(result["error"])  # cmdstanpy's message: Stan's errors, then the commands
        raise EngineError(
            f"CmdStan sampling of the {model!r} model failed: {_signal_note(detail)}{detail[:3000]}"
        )
    params, sampler = _to_draws_dict(result["draws"], tuple(result["names"]))
    add_empty_outputs(model, params, data)
    if progress is not None:
        progress("sampling", 1.0)
    return Draws(
        params=params,
        sampler=sampler,
        engine="cmdstanpy",
        max_treedepth=max_treedepth,
        timings={"compile": compile_seconds, "sample": time.perf_counter() - start},
        info={
            "engine_version": engine_version(),
            "stan_hash": program_hash(model),
            "model": model,
            "executable": str(exe),
            "seed": seed,
            "chains": chains,
            "iter_warmup": iter_warmup,
            "iter_sampling": iter_sampling,
            "adapt_delta": adapt_delta,
        },
    )
