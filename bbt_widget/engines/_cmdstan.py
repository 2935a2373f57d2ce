"""The cmdstanpy engine: CmdStan executables built once into our cache.

Used when a working CmdStan installation is found (``$CMDSTAN`` or ``~/.cmdstan``, as cmdstanpy
looks for it; built, and its ``stanc`` runs here: :func:`problem`): CmdStan's sampler is the
fastest way to run the models. The executable is compiled by cmdstanpy in a subprocess (killable,
and its output captured) from a copy of the program in the cache directory, and lives beside it.

Sampling does not go through cmdstanpy, whose chains run in threads of the caller's process and
cannot be stopped as a unit: a small worker process (``_cmdstan_worker.py``, stdlib only) runs
the chains as its children, relays CmdStan's ``Iteration: 100 / 2000`` lines as progress, and
kills its chains when told to (its stdin closes) or when the engine's process dies. Cancelling
a fit closes that pipe and then kills the worker's process group: the same on Linux, macOS and
Windows, with no ``/proc``. One worker is kept ready after each fit (and by ``compile_model``)
for the next one, which hands it the fit on its stdin. Each chain's CSV file is read as soon as
that chain ends, while the others still run, straight into the final arrays (parsed once,
copied once). Measured with CmdStan 2.35, a fit takes 1.0x the time of bare cmdstanpy sampling
on 5 x 20 and 16 x 132 (bench_engines.py).

The Laplace approximation (the widget's previews) is CmdStan's own: ``optimize jacobian=1``
then ``laplace`` around that mode, handed to the same worker as two commands run one after
the other, so that it is cancelled, cleaned up and reported as sampling is (CmdStan 2.32+).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from . import _procs, _toolchain
from ._cache import cache_root, check_private, discard, ensure_built, unusable_build
from ._programs import (
    OutputSplitter,
    add_empty_outputs,
    include_dir,
    program_hash,
    split_outputs,
    stan_source,
)
from .base import Draws, EngineError, FitCancelled, ModelName, ProgressCallback, fresh_seed

INSTALL_HINT = (
    "Install CmdStan with `python -m cmdstanpy.install_cmdstan` (needs internet and a C++ "
    "toolchain) or point $CMDSTAN at an existing installation; or use engine='pystan'."
)

_BUILD_SCRIPT = Path(__file__).with_name("_cmdstan_build.py")
_WORKER_SCRIPT = Path(__file__).with_name("_cmdstan_worker.py")

_T = TypeVar("_T")


def _version_key(name: str) -> tuple[int, int, int] | None:
    """Sort key of a ``cmdstan-<major>.<minor>.<patch>[-rc<n>]`` folder name (cmdstanpy's
    order: a release candidate sorts before its release), or None for other names."""
    found = re.fullmatch(r"cmdstan-(\d+)\.(\d+)\.(\d+)(?:-rc(\d+))?", name)
    if not found:
        return None
    major, minor, patch, rc = found.groups()
    return int(major), int(minor), int(rc) - 100 if rc else int(patch)


def cmdstan_path() -> str | None:
    """The CmdStan installation cmdstanpy would use, or None.

    cmdstanpy's rule, without importing it (its import takes most of a second, and leaves a
    temporary folder behind when the process is killed): ``$CMDSTAN``, else the newest
    ``~/.cmdstan/cmdstan-<version>`` (the only one, whatever its name, if there is one); a
    valid installation has a ``makefile``.
    """
    env = os.environ.get("CMDSTAN")
    if env:
        path = Path(env)
    else:
        home = Path.home() / ".cmdstan"
        try:
            folders = [d for d in home.iterdir() if d.is_dir() and d.name.startswith("cmdstan-")]
        except OSError:
            return None
        if len(folders) > 1:
            folders = sorted(
                (d for d in folders if _version_key(d.name)), key=lambda d: _version_key(d.name)
            )
        if not folders:
            return None
        path = folders[-1]
    if not (path / "makefile").is_file():
        return None
    return os.path.normpath(path)


def available() -> bool:
    """Whether a working CmdStan installation is found (see :func:`problem`), and cmdstanpy,
    which builds the models."""
    return (
        cmdstan_path() is not None
        and importlib.util.find_spec("cmdstanpy") is not None
        and problem() is None
    )


#: What to do about a CmdStan installation that was found but does not work.
REPAIR_HINT = (
    "Reinstall it with `python -m cmdstanpy.install_cmdstan --overwrite` (needs internet and a "
    "C++ toolchain) or point $CMDSTAN at a working installation; or use engine='pystan'."
)


def problem() -> str | None:
    """Why the CmdStan installation found does not work here, or None (also when none is found).

    A working installation is built (an interrupted ``install_cmdstan`` leaves a makefile
    but no ``bin/stanc``) and its Stan compiler runs on this machine: ``bin/stanc --version``
    is run once per process (a few milliseconds), and again only when that file changes.
    """
    path = cmdstan_path()
    if path is None:
        return None
    stanc = Path(path) / "bin" / ("stanc.exe" if sys.platform == "win32" else "stanc")
    try:
        info = stanc.stat()
    except OSError:
        return f"The CmdStan installation {path} is not built (it has no {stanc}). " + REPAIR_HINT
    return _stanc_fails(str(stanc), (info.st_ino, info.st_size, info.st_mtime_ns))


@functools.lru_cache(maxsize=8)
def _stanc_fails(stanc: str, version: tuple[int, int, int]) -> str | None:
    """What ``stanc --version`` did wrong, or None if it ran (``version``: the file's inode,
    size and time, so that a rebuilt stanc is run again)."""
    try:
        proc = subprocess.run(
            [stanc, "--version"], stdin=subprocess.DEVNULL, capture_output=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        why = f"could not run ({exc})"
    else:
        if proc.returncode == 0:
            return None
        if proc.returncode < 0:
            why = _procs.killed_by(-proc.returncode)
        else:
            why = f"failed (exit code {proc.returncode})"
    installation = Path(stanc).parents[1]
    return (
        f"The CmdStan installation {installation} does not work here: `{stanc} --version` "
        f"{why}. " + REPAIR_HINT
    )


def _cmdstan_version(path: str) -> str:
    """``CMDSTAN_VERSION`` from the installation's makefile (else from its folder name)."""
    try:
        text = (Path(path) / "makefile").read_text(errors="replace")
    except OSError:
        text = ""
    found = re.search(r"^CMDSTAN_VERSION\s*:?=\s*(\S+)", text, re.MULTILINE)
    if found:
        return found.group(1)
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
    toolchain = _toolchain.tag()  # a compiler upgrade rebuilds too
    tag = f"{model}-{program_hash(model)}-cmdstan{_cmdstan_version(path)}-{install}-cc{toolchain}"
    return cache_root() / "cmdstan" / tag


def _build(model: ModelName, scratch: Path, *, verbose: bool) -> None:
    stan_file = scratch / f"{model}.stan"
    # The program as written: stanc resolves its #include lines in the package's stan folder.
    stan_file.write_text(stan_source(model), encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="bbt-widget-build-") as cwd:
        proc = _procs.spawn(
            [sys.executable, str(_BUILD_SCRIPT), str(stan_file), str(include_dir(model))],
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
    """Compile ``model`` unless cached; return the executable and the seconds spent.

    Raises :class:`~._cache.UnsafeCacheError` when another user could have written the
    executable or a folder above it (it is then never run).
    """
    target = _target(model)
    exe = target / _exe_name(model)
    seconds = ensure_built(
        target,
        lambda t: (t / _exe_name(model)).exists(),
        partial(_build, model, verbose=verbose),
        progress=progress,
        cancel=cancel,
    )
    check_private(exe)
    return exe, seconds


def compiled(model: ModelName) -> Path | None:
    """The cached executable of ``model`` if it is built, else None (nothing is built).

    Raises :class:`~._cache.UnsafeCacheError` as :func:`compile_model` does.
    """
    exe = _target(model) / _exe_name(model)
    if not exe.exists():
        return None
    check_private(exe)
    return exe


class _ExeBroken(EngineError):
    """The cached executable does not run (e.g. a truncated file)."""


# How an executable that cannot run ends: it cannot be started at all (exec-failed), the
# shell or the dynamic loader gives up ("cannot execute" 126, "not found" 127: CmdStan itself
# never returns these), or it crashes before printing its first line (a truncated file gives
# SIGBUS when a page beyond its end is touched).
_NOT_RUNNING_CODES = {126, 127}
_LOAD_CRASHES = {
    -getattr(signal, name) for name in ("SIGBUS", "SIGSEGV", "SIGILL") if hasattr(signal, name)
}


def _commands(exe: Path, data_file: Path, out_dir: Path, settings: dict[str, Any]) -> list:
    """CmdStan's command line for each chain (as cmdstanpy writes it, progress included)."""
    total = settings["iter_warmup"] + settings["iter_sampling"]
    return [
        [
            str(exe),
            f"id={chain}",
            "random",
            f"seed={settings['seed']}",  # with id, CmdStan gives each chain its own stream
            "data",
            f"file={data_file}",
            "output",
            f"file={out_dir / f'chain-{chain}.csv'}",
            f"refresh={max(1, total // 25)}",  # ~25 progress lines per chain
            "method=sample",
            f"num_samples={settings['iter_sampling']}",
            f"num_warmup={settings['iter_warmup']}",
            "algorithm=hmc",
            "engine=nuts",
            f"max_depth={settings['max_treedepth']}",
            "adapt",
            f"delta={settings['adapt_delta']}",
        ]
        for chain in range(1, settings["chains"] + 1)
    ]


class _Worker:
    """A ``_cmdstan_worker.py`` process, waiting on stdin for the fit whose chains it runs; its
    status lines are read by a thread into a queue (pipes cannot be polled on Windows)."""

    def __init__(self) -> None:
        self.proc = _procs.spawn(
            [sys.executable, str(_WORKER_SCRIPT)],
            cwd=tempfile.gettempdir(),  # never the user's working directory
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, name="bbt-widget-cmdstan-status", daemon=True).start()

    def submit(self, request: dict[str, Any]) -> bool:
        """Hand the fit to the worker (one line of JSON); False if it has died meanwhile.

        Its stdin stays open: closing it is how the fit is stopped.
        """
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(request).encode() + b"\n")
            self.proc.stdin.flush()
        except OSError:
            return False
        return self.proc.poll() is None

    def _read(self) -> None:
        assert self.proc.stdout is not None
        with self.proc.stdout:
            for raw in self.proc.stdout:
                self.lines.put(raw.decode(errors="replace").rstrip())
        self.lines.put(None)

    def stop(self, grace: float = 2.0) -> None:
        """Stop the fit, the same way on every platform, and reap the worker.

        Closing its stdin makes the worker kill its chains and exit; should it not within
        ``grace`` seconds, its process group is killed (on POSIX, chains included).
        """
        if self.proc.returncode is None:
            with contextlib.suppress(OSError):
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(grace)
        _procs.kill_group(self.proc)  # whatever is left; also forgets it
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()


_idle: _Worker | None = None  # started after a fit, for the next one (of any model)
_idle_lock = threading.Lock()


def _take_worker() -> _Worker:
    """The idle worker if it is alive, else a new one."""
    global _idle
    with _idle_lock:
        worker, _idle = _idle, None
    if worker is not None and worker.proc.poll() is None:
        return worker
    if worker is not None:
        worker.stop()
    return _Worker()


def keep_warm(exe: Path | None = None) -> None:
    """Have an idle worker ready for the next fit (one; it serves every model, ``exe`` is not
    needed), so that a fit does not wait for an interpreter to start (~25 ms).

    :func:`sample` calls this after a fit, not during it, so that the worker's start-up does
    not compete with the chains for the CPU. Best effort: a failure here only means the next
    fit starts its own worker, which reports any real problem.
    """
    global _idle
    with _idle_lock:
        if _idle is None or _idle.proc.poll() is not None:
            with contextlib.suppress(OSError):
                _idle = _Worker()


def prestart(exe: Path) -> None:
    """Start the worker a coming fit will take, unless one is idle already (it serves every
    model: ``exe`` is not needed; see ``engines.prestart``)."""
    keep_warm(exe)


def shutdown() -> None:
    """Stop the idle worker (the next fit starts one)."""
    global _idle
    with _idle_lock:
        worker, _idle = _idle, None
    if worker is not None:
        worker.stop()


atexit.register(shutdown)  # after _procs's handler, so it runs before it: a quiet exit


def _forget_idle_worker() -> None:
    """In a forked child: the parent's idle worker is the parent's (its stdin is the parent's
    pipe: a fit handed to it from here would be the parent's too)."""
    global _idle, _idle_lock
    _idle, _idle_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_forget_idle_worker)


def _follow(
    worker: _Worker,
    total: int,
    progress: ProgressCallback | None,
    cancel: threading.Event | None,
    finished: Callable[[int], None],
) -> tuple[str, list[str]]:
    """Relay progress until the worker's output ends; return its status and any other output.

    ``finished(chain)`` is called when a chain has ended well (its CSV file is complete).
    Raises FitCancelled (after stopping the worker and its chains) when ``cancel`` is set.
    """
    done_iterations: dict[str, int] = {}
    status, other = "", []
    while True:
        if cancel is not None and cancel.is_set():
            worker.stop()
            raise FitCancelled("sampling cancelled")
        try:
            line = worker.lines.get(timeout=0.05)
        except queue.Empty:
            continue
        if line is None:
            return status, other
        if line.startswith("progress "):
            _, chain, iteration = line.split()
            done_iterations[chain] = int(iteration)
            if progress is not None:
                progress("sampling", min(1.0, sum(done_iterations.values()) / total))
        elif line.startswith("finished "):
            finished(int(line.split()[1]))
        elif line == "done" or line.startswith(("failed ", "exec-failed ")):
            status = line
        elif line:
            other.append(line)


def _tail(text: str, lines: int = 20) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _chain_step(chain: str) -> str:
    return f"chain {chain}"


def _failure(
    model: ModelName,
    status: str,
    returncode: int,
    out_dir: Path,
    other: list[str],
    *,
    what: str = "sampling",
    step: Callable[[str], str] = _chain_step,
) -> EngineError:
    """The error for a fit that did not end with ``done``, saying why as well as we know.

    ``what`` names the fit ("sampling") and ``step(n)`` its n-th command ("chain 2").
    """
    fields = status.split(maxsplit=3)
    if fields and fields[0] == "exec-failed":
        return _ExeBroken(f"{step(fields[1])} could not start it: {' '.join(fields[2:])}")
    prefix = f"CmdStan {what} of the {model!r} model failed: "
    if fields and fields[0] == "failed":
        chain, code, n_lines = fields[1], int(fields[2]), int(fields[3])
        log = out_dir / f"chain-{chain}.log"
        output = _tail(log.read_text(errors="replace")) if log.exists() else ""
        if code in _NOT_RUNNING_CODES or (code in _LOAD_CRASHES and n_lines == 0):
            how = _procs.killed_by(-code) if code < 0 else f"ended with exit code {code}"
            return _ExeBroken(f"{step(chain)} {how}" + (f": {output}" if output else ""))
        if code < 0:
            why = f"{step(chain)} {_procs.killed_by(-code)}."
        else:
            why = f"{step(chain)} ended with exit code {code}."
        return EngineError(prefix + why + (f" CmdStan's output:\n{output}" if output else ""))
    if returncode < 0:
        why = f"the process running CmdStan {_procs.killed_by(-returncode)}."
    else:
        why = f"the process running CmdStan failed (exit code {returncode})."
    output = _tail("\n".join(other))
    return EngineError(prefix + why + (f" Output:\n{output}" if output else ""))


def _read_csv(path: Path) -> tuple[list[str], np.ndarray]:
    """Column names and draws of one chain's Stan CSV file (comment lines skipped)."""
    import pandas as pd  # the fastest CSV reader at hand; imported with bbt_widget anyway

    # low_memory=False: one pass over the file, not chunks concatenated afterwards (~15% faster)
    frame = pd.read_csv(path, comment="#", dtype=np.float64, engine="c", low_memory=False)
    return list(frame.columns), frame.to_numpy()


class _ChainReader:
    """The chains' CSV files, each read into the final arrays when asked (as its chain ends),
    so that reading overlaps the chains still running."""

    def __init__(self, csvs: list[Path]) -> None:
        self._csvs = csvs
        self._splitter: OutputSplitter | None = None
        self._done: set[int] = set()

    def read(self, chain: int) -> None:
        """Read chain ``chain`` (1-based, as CmdStan numbers them), once."""
        if chain in self._done:
            return
        names, block = _read_csv(self._csvs[chain - 1])
        if self._splitter is None:
            self._splitter = OutputSplitter(names, len(self._csvs))
        self._splitter.add(chain - 1, block)
        self._done.add(chain)

    def result(self) -> tuple[dict, dict]:
        """(params, sampler), reading the chains not read yet."""
        for chain in range(1, len(self._csvs) + 1):
            self.read(chain)
        assert self._splitter is not None
        return self._splitter.result()


def _execute(
    model: ModelName,
    commands: list[list[str]],
    parallel: int,
    out_dir: Path,
    *,
    total: int,
    progress: ProgressCallback | None,
    cancel: threading.Event | None,
    finished: Callable[[int], None],
    verbose: bool,
    what: str = "sampling",
    step: Callable[[str], str] = _chain_step,
) -> None:
    """Run CmdStan ``commands`` (``parallel`` at once, in order) in a worker process.

    ``total`` is the iterations of all commands (for progress), ``finished(n)`` is called as
    the n-th command ends well; ``what`` and ``step`` name the fit in errors (``_failure``).
    """
    request = {
        "commands": commands,
        "parallel": parallel,
        "out_dir": str(out_dir),
        "env": _procs.child_env(),  # now: the worker was started before the fit, maybe long ago
    }
    worker = _take_worker()
    if not worker.submit(request):  # died since it was started: start a fresh one
        worker.stop()
        worker = _Worker()
        worker.submit(request)  # a failure shows as the worker's exit, below
    try:
        status, other = _follow(worker, total, progress, cancel, finished)
        worker.proc.wait()
    finally:
        worker.stop()  # also stops it all after an error or interrupt while following
    if verbose:
        for log in sorted(out_dir.glob("chain-*.log")):
            sys.stderr.write(log.read_text(errors="replace"))
    if status != "done" or worker.proc.returncode != 0:
        returncode = worker.proc.returncode
        raise _failure(model, status, returncode, out_dir, other, what=what, step=step)


def _run(
    model: ModelName,
    exe: Path,
    out_dir: Path,
    settings: dict[str, Any],
    progress: ProgressCallback | None,
    cancel: threading.Event | None,
    verbose: bool,
) -> tuple[dict, dict]:
    """Run the chains of one fit in a worker process; return (params, sampler)."""
    reader = _ChainReader([out_dir / f"chain-{c}.csv" for c in range(1, settings["chains"] + 1)])
    _execute(
        model,
        _commands(exe, out_dir / "data.json", out_dir, settings),
        min(settings["chains"], os.cpu_count() or 1),
        out_dir,
        total=settings["chains"] * (settings["iter_warmup"] + settings["iter_sampling"]),
        progress=progress,
        cancel=cancel,
        finished=reader.read,
        verbose=verbose,
    )
    return reader.result()


def _rebuild(
    model: ModelName,
    exe: Path,
    broken: _ExeBroken,
    progress: ProgressCallback | None,
    cancel: threading.Event | None,
    verbose: bool,
) -> tuple[Path, float]:
    """Replace a cached executable that does not run with a fresh build (once per fit)."""
    warnings.warn(
        f"the cached CmdStan executable {exe} does not run ({broken}); rebuilding it",
        RuntimeWarning,
        stacklevel=5,  # the caller of engines.sample (via _in_scratch and sample here)
    )
    discard(_target(model))
    return compile_model(model, progress=progress, cancel=cancel, verbose=verbose)


def _in_scratch(
    model: ModelName,
    data: dict[str, Any],
    run: Callable[[Path, Path], _T],
    progress: ProgressCallback | None,
    cancel: threading.Event | None,
    verbose: bool,
) -> tuple[_T, Path, float, float]:
    """Compile ``model`` if needed, then ``run(exe, out_dir)`` with ``data.json`` written in a
    fresh temporary ``out_dir`` (removed afterwards, whatever happens).

    An executable that does not run is rebuilt once and run again. Returns (what ``run``
    returned, the executable, compile seconds, seconds since compiling ended).
    """
    exe, compile_seconds = compile_model(model, progress=progress, cancel=cancel, verbose=verbose)
    start = time.perf_counter()
    if progress is not None:
        progress("sampling", 0.0)
    out_dir = Path(tempfile.mkdtemp(prefix="bbt-widget-cmdstan-"))
    try:
        (out_dir / "data.json").write_text(json.dumps(data))
        try:
            result = run(exe, out_dir)
        except _ExeBroken as broken:
            exe, seconds = _rebuild(model, exe, broken, progress, cancel, verbose)
            compile_seconds += seconds
            try:
                result = run(exe, out_dir)
            except _ExeBroken as still:
                raise unusable_build(
                    f"the compiled CmdStan model {model!r}",
                    _target(model),
                    still,
                    "the C++ toolchain or the CmdStan installation",
                ) from None
    except Exception:
        keep_warm()  # e.g. a cancelled fit: the next one starts at once
        raise
    else:
        keep_warm()  # not on KeyboardInterrupt or exit: no new process then
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    if progress is not None:
        progress("sampling", 1.0)
    return result, exe, compile_seconds, time.perf_counter() - start


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
    settings = {
        "chains": chains,
        "iter_warmup": iter_warmup,
        "iter_sampling": iter_sampling,
        "seed": fresh_seed(seed),
        "max_treedepth": max_treedepth,
        "adapt_delta": adapt_delta,
    }

    def run(exe: Path, out_dir: Path) -> tuple[dict, dict]:
        return _run(model, exe, out_dir, settings, progress, cancel, verbose)

    (params, sampler), exe, compile_seconds, seconds = _in_scratch(
        model, data, run, progress, cancel, verbose
    )
    add_empty_outputs(model, params, data)
    return Draws(
        params=params,
        sampler=sampler,
        engine="cmdstanpy",
        max_treedepth=max_treedepth,
        timings={"compile": compile_seconds, "sample": seconds},
        info={
            "engine_version": engine_version(),
            "stan_hash": program_hash(model),
            "model": model,
            "executable": str(exe),
            **settings,
        },
    )


#: The first CmdStan with the ``laplace`` method (and ``optimize jacobian=1``, its mode).
LAPLACE_SINCE = (2, 32)
#: The two commands of a Laplace approximation, as ``_failure`` names them.
_LAPLACE_STEPS = {
    "1": "the search for the mode (CmdStan's optimize)",
    "2": "the draws (CmdStan's laplace)",
}


def _check_laplace_version() -> None:
    """Raise EngineError when the CmdStan installation predates the ``laplace`` method."""
    path = cmdstan_path()
    version = _cmdstan_version(path) if path else "unknown"
    found = re.match(r"(\d+)\.(\d+)", version)
    if found and (int(found.group(1)), int(found.group(2))) < LAPLACE_SINCE:
        since = ".".join(map(str, LAPLACE_SINCE))
        raise EngineError(
            f"CmdStan {version} ({path}) has no Laplace approximation, which needs CmdStan "
            f"{since} or newer: install a newer one with `python -m cmdstanpy.install_cmdstan` "
            "or use engine='pystan'."
        )


def _laplace_commands(exe: Path, out_dir: Path, draws: int, seed: int) -> list[list[str]]:
    """CmdStan's command lines for a Laplace approximation: the mode, then draws around it.

    Both with ``jacobian=1``: the mode of the density on the unconstrained scale, where
    ``laplace`` places its normal approximation (it refuses nothing else, but a mode without
    the Jacobian would put it in the wrong place). The search starts at the origin of the
    unconstrained scale, as the PyStan engine's does, so that it does not depend on the seed.
    """
    common = [str(exe), "random", f"seed={seed}", "data", f"file={out_dir / 'data.json'}"]
    mode = out_dir / "optimize.csv"
    return [
        [*common, "init=0", "output", f"file={mode}", "method=optimize", "jacobian=1"],
        [
            *common,
            "output",
            f"file={out_dir / 'laplace.csv'}",
            "method=laplace",
            f"mode={mode}",
            "jacobian=1",
            f"draws={draws}",
        ],
    ]


def _read_laplace(model: ModelName, path: Path) -> dict[str, np.ndarray]:
    """The parameters of CmdStan's laplace CSV file, shaped (1, draws, ...)."""
    names, block = _read_csv(path)
    # log_p__ and log_q__ (the densities of each draw) are no sampler diagnostics: dropped
    params, _ = split_outputs(names, [block], 1)
    for name, values in params.items():
        if values.dtype.kind == "f" and not np.isfinite(values).all():
            # Eigen's Cholesky factor of a Hessian that is not negative definite holds NaN
            raise EngineError(
                f"CmdStan's Laplace approximation of the {model!r} model failed: {name} has "
                "non-finite draws (the posterior is not curved at its mode: a flat direction)."
            )
    return params


def laplace(
    model: ModelName,
    data: dict[str, Any],
    *,
    draws: int,
    seed: int | None,
    progress: ProgressCallback | None,
    cancel: threading.Event | None,
    verbose: bool,
) -> Draws:
    """Draws of CmdStan's Laplace approximation of ``model``'s posterior (``optimize`` then
    ``laplace``, one after the other in a worker, cancellable as sampling is); ``data`` is
    already validated."""
    _check_laplace_version()
    seed = fresh_seed(seed)

    def run(exe: Path, out_dir: Path) -> dict[str, np.ndarray]:
        def finished(step: int) -> None:
            if step == 1 and progress is not None:
                progress("sampling", 0.5)  # the mode found; the draws take about as long

        _execute(
            model,
            _laplace_commands(exe, out_dir, draws, seed),
            1,  # one after the other: laplace reads the mode that optimize wrote
            out_dir,
            total=1,  # neither command prints "Iteration:" lines
            progress=progress,
            cancel=cancel,
            finished=finished,
            verbose=verbose,
            what="Laplace approximation",
            step=_LAPLACE_STEPS.__getitem__,
        )
        return _read_laplace(model, out_dir / "laplace.csv")

    params, exe, compile_seconds, seconds = _in_scratch(model, data, run, progress, cancel, verbose)
    add_empty_outputs(model, params, data)
    return Draws(
        params=params,
        sampler={},
        engine="cmdstanpy",
        timings={"compile": compile_seconds, "sample": seconds},
        info={
            "engine_version": engine_version(),
            "stan_hash": program_hash(model),
            "model": model,
            "executable": str(exe),
            "seed": seed,
            "method": "laplace",
            "draws": draws,
        },
    )
