"""The PyStan engine: Stan models compiled by httpstan, sampled in a killable subprocess.

PyStan (``pystan`` + ``httpstan``) installs from PyPI alone and compiles with the system C++
compiler, so it is the engine that works on a fresh machine. Its public API does not suit an
interactive widget, though: ``stan.build`` leaves ``build/`` in the working directory, writes to
stderr (redirecting the whole process's stderr while compiling), and calls ``asyncio.run``,
which fails inside Jupyter's running loop; sampling goes through an HTTP server and a shared
process pool whose tasks cannot be cancelled, and every draw travels as JSON through a socket,
a gzip file and an HTTP response before it is parsed.

So we use httpstan's two building blocks directly:

- compile: httpstan's own build function, run in a subprocess with a scratch working directory
  and its output captured (``_pystan_build.py``), into our cache (see :mod:`._cache`);
- sample: a subprocess (``_pystan_worker.py``) loads the compiled extension module, forks one
  process per chain and calls its ``hmc_nuts_diag_e_adapt_wrapper``, the same function PyStan's
  ``sample`` ends up calling with the same defaults. Cancelling kills that process group.
  A Laplace approximation (the widget's previews) runs in such a worker too, which is then
  kept to serve the next one (see :func:`_keep_laplace_worker`).

Nothing here uses asyncio, changes the working directory or touches the process's stdio, so it
runs from any thread, with or without an event loop.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import importlib.metadata
import importlib.util
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from functools import cache, partial
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from typing import Any

import numpy as np

from . import _procs, _toolchain
from ._cache import cache_root, check_private, discard, ensure_built, unusable_build
from ._programs import add_empty_outputs, program_hash, split_outputs, stan_program
from .base import Draws, EngineError, FitCancelled, ModelName, ProgressCallback, fresh_seed

_BUILD_SCRIPT = Path(__file__).with_name("_pystan_build.py")
#: Flags for httpstan's compile of a model, after Python's own CFLAGS (so they win).
#: httpstan's defaults are ("-O3", "-std=c++14", "-Wno-sign-compare"); with Python's "-g" they
#: cost a newcomer's first compile about 33 s of CPU here. "-g0" (no debug information, which
#: nobody reads in a cached model) and "-O2" cut that by about 27% while sampling as fast
#: (within the +-10% noise of two runs; "-O1" saves 6 points more but sampled up to 12%
#: slower): see benchmarks/bench_cold.py and benchmarks/results/cold.json.
COMPILE_ARGS: tuple[str, ...] = ("-O2", "-g0", "-std=c++14", "-Wno-sign-compare")
_WORKER_SCRIPT = Path(__file__).with_name("_pystan_worker.py")


def available() -> bool:
    """Whether PyStan can run here (httpstan has no Windows build)."""
    return sys.platform != "win32" and importlib.util.find_spec("httpstan") is not None


@cache
def engine_version() -> str:
    """``"pystan X, httpstan Y"``."""
    parts = []
    for dist in ("pystan", "httpstan"):
        try:
            parts.append(f"{dist} {importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            parts.append(f"{dist} (not installed)")
    return ", ".join(parts)


@cache
def _httpstan_version() -> str:
    return importlib.metadata.version("httpstan")


def _target(model: ModelName) -> Path:
    # The extension module depends on the program, httpstan's Stan headers, the Python ABI,
    # and the compiler and its flags (a toolchain upgrade or new flags rebuild).
    abi = sys.implementation.cache_tag
    toolchain = _toolchain.tag(COMPILE_ARGS)
    tag = f"{model}-{program_hash(model)}-httpstan{_httpstan_version()}-{abi}-cc{toolchain}"
    return cache_root() / "pystan" / tag


def _module_file(directory: Path) -> Path | None:
    try:
        return next(p for p in directory.iterdir() if p.suffix in EXTENSION_SUFFIXES)
    except (OSError, StopIteration):
        return None


def _build(model: ModelName, scratch: Path, *, verbose: bool) -> None:
    stan_path = scratch / f"{model}.stan"
    stan_path.write_text(stan_program(model), encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="bbt-widget-build-") as cwd:
        proc = _procs.spawn(
            [
                sys.executable,
                str(_BUILD_SCRIPT),
                str(stan_path),
                str(scratch),
                json.dumps(list(COMPILE_ARGS)),
            ],
            cwd=cwd,
            env={**_procs.child_env(), "TMPDIR": cwd},  # the compiler's temp files go too
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        try:
            output, _ = proc.communicate()
        finally:
            _procs.kill_group(proc)  # reaps it; also stops a compiler left running on error
    text = output.decode(errors="replace")
    (scratch / "build.log").write_text(text)
    if verbose:
        sys.stderr.write(text)
    if proc.returncode != 0 or _module_file(scratch) is None:
        tail = "\n".join(text.strip().splitlines()[-20:])
        raise EngineError(
            f"Compiling the Stan model {model!r} with PyStan (httpstan) failed "
            f"(exit code {proc.returncode}). PyStan needs a working C++ compiler (g++ or clang++; "
            "e.g. `apt install g++`, or `xcode-select --install` on macOS). "
            f"Last lines of the compiler output:\n{tail}"
        )


def compile_model(
    model: ModelName,
    *,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    verbose: bool = False,
) -> tuple[Path, float]:
    """Compile ``model`` unless cached; return the extension module and seconds spent.

    Raises :class:`~._cache.UnsafeCacheError` when another user could have written the
    module or a folder above it (it is then never loaded: loading runs its code).
    """
    target = _target(model)
    seconds = ensure_built(
        target,
        lambda t: _module_file(t) is not None,
        partial(_build, model, verbose=verbose),
        progress=progress,
        cancel=cancel,
    )
    module = _module_file(target)
    if module is None:  # removed between the build and now (cache cleared)
        raise EngineError(f"compiled model vanished from {target}; please retry")
    check_private(module)
    return module, seconds


def compiled(model: ModelName) -> Path | None:
    """The cached extension module of ``model`` if it is built, else None (nothing is built).

    Raises :class:`~._cache.UnsafeCacheError` as :func:`compile_model` does.
    """
    module = _module_file(_target(model))
    if module is not None:
        check_private(module)
    return module


class _Worker:
    """A ``_pystan_worker.py`` process: model loaded, waiting on stdin for one fit."""

    def __init__(self, module: Path) -> None:
        self.module = module
        #: Requests this worker has taken: a Laplace worker serves several (one at a time).
        self.requests = 0
        self._log_start = 0
        read_fd, write_fd = os.pipe()
        # its output (and that of Stan's C++, which may print) goes to an unnamed temp file
        self.log = tempfile.TemporaryFile(prefix="bbt-widget-worker-")
        try:
            self.proc = _procs.spawn(
                [sys.executable, str(_WORKER_SCRIPT), str(module), str(write_fd)],
                cwd=tempfile.gettempdir(),  # never the user's working directory
                stdin=subprocess.PIPE,
                stdout=self.log,
                stderr=subprocess.STDOUT,
                pass_fds=(write_fd,),
            )
        except BaseException:
            os.close(read_fd)
            self.log.close()
            raise
        finally:
            os.close(write_fd)  # the worker has its copy: EOF on read_fd means it is gone
        self.status_fd = read_fd

    def submit(self, request_path: Path, *, more: bool = False) -> bool:
        """Hand the fit to the worker; False if it has died meanwhile. With ``more`` its
        stdin stays open for the next request (Laplace approximations only)."""
        self.requests += 1
        self._log_start = self.log.seek(0, os.SEEK_END)  # this request's output starts here
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(f"{request_path}\n".encode())
            if more:
                self.proc.stdin.flush()
            else:
                self.proc.stdin.close()
        except OSError:
            return False
        return self.proc.poll() is None

    def output(self) -> str:
        """What the worker printed while serving its current request."""
        self.log.seek(self._log_start)
        return self.log.read().decode(errors="replace")

    def close(self) -> None:
        """Kill the worker and its chains (if still running) and release its resources."""
        if self.proc.returncode is None:
            _procs.kill_group(self.proc)
        else:
            _procs.forget(self.proc)
        if self.status_fd >= 0:  # close once: the number may be reused by another thread
            with contextlib.suppress(OSError):
                os.close(self.status_fd)
            self.status_fd = -1
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        self.log.close()


#: Worker processes kept per compiled model, the kept Laplace worker (see _laplace_workers)
#: among them: three. The widget's first preview and its full fit take two, so
#: both start on a loaded model instead of one waiting for a new process, and the third is
#: still there when the full fit ends, so that its end starts no process (a tenth of a second
#: of CPU, see TOP_UP_DELAY) while the widget builds its chart data: with two, the full result
#: came 5-8% later (benchmarks/bench_widget.py). Later previews use the kept Laplace worker,
#: so two idle ones do the same. A worker holds about 26 MB.
IDLE_WORKERS = 3
#: Seconds after a fit before the idle workers beyond the first are started. A worker's
#: start-up is a tenth of a second of CPU; right after a fit the caller has work of its own
#: (the result's diagnostics, the widget's chart data), and two start-ups at once took both
#: cores from it (benchmarks/bench_widget.py). One worker is started at once, so that the next
#: fit of a loop still starts on a loaded model.
TOP_UP_DELAY = 0.5
_idle: dict[Path, list[_Worker]] = {}
#: Fits of each model running now: idle workers are replaced only once none is, so that
#: starting a process (a tenth of a second of CPU) never competes with a running fit's chains.
_active: collections.Counter[Path] = collections.Counter()
_idle_lock = threading.Lock()
#: The pending delayed top-ups by model (see :func:`_after_fit`), and the count of
#: :func:`shutdown` calls: a top-up scheduled before a shutdown starts nothing.
_top_ups: dict[Path, threading.Timer] = {}
_shutdowns = 0
#: One kept Laplace worker per model: a worker serves Laplace approximations one after the
#: other for as long as it lives. A widget asks one per control change; when they took a new
#: worker each, a burst of changes (a key held on a slider, a script's loop) used up the idle
#: workers by the third and then started a process per change (a tenth of a second of CPU):
#: in a burst of changes 0.1 s apart, a preview was shown for 2 of 12 of them. A worker that
#: approximated is never handed a NUTS fit: it would fork chains after numpy's linear algebra
#: may have started threads.
_laplace_workers: dict[Path, _Worker] = {}
#: Seconds a cancelled Laplace approximation has to end before its worker is killed: in a
#: burst of changes the widget cancels a preview when the next change comes, and one ending
#: (a few hundredths of a second) keeps its worker for the next preview.
LAPLACE_FINISH_WITHIN = 0.25


def _take_worker(module: Path) -> _Worker:
    with _idle_lock:
        ready = _idle.get(module, [])
        worker = ready.pop(0) if ready else None
    if worker is not None and worker.proc.poll() is None:
        return worker
    if worker is not None:
        worker.close()
    return _Worker(module)


def _take_laplace_worker(module: Path) -> tuple[_Worker, int]:
    """The model's kept Laplace worker if it is alive, else an idle (or new) one; and the
    shutdown count now (a worker taken before a shutdown is not kept after it)."""
    with _idle_lock:
        worker = _laplace_workers.pop(module, None)
        shutdowns = _shutdowns
    if worker is not None and worker.proc.poll() is None:
        return worker, shutdowns
    if worker is not None:
        worker.close()
    return _take_worker(module), shutdowns


def _keep_laplace_worker(module: Path, worker: _Worker, shutdowns: int) -> bool:
    """Keep ``worker`` (its Laplace approximation done) for the model's next one; False when
    it is not kept (the engine was shut down meanwhile, or another is kept already)."""
    with _idle_lock:
        if shutdowns != _shutdowns or module in _laplace_workers or worker.proc.poll() is not None:
            return False
        _laplace_workers[module] = worker
        return True


def keep_warm(module: Path, count: int = IDLE_WORKERS) -> None:
    """Have ``count`` worker processes for ``module`` ready for the next fits (its kept
    Laplace worker, if any, among them).

    Not while a fit of the model runs, so that the workers' start-up does not compete with
    the chains for the CPU: the last fit to end does it (:func:`_after_fit`). Best effort: a
    failure here only means the next fit starts its own worker, which reports any real
    problem.
    """
    with _idle_lock:
        _keep_processes_locked(module, count)


def prestart(module: Path) -> None:
    """Start the worker a coming fit of ``module`` will take, unless one is idle already:
    its start-up then overlaps with the caller's own work (see ``engines.prestart``)."""
    keep_warm(module, 1)


def _keep_processes_locked(module: Path, count: int) -> None:
    """``count`` worker processes for ``module``: its kept Laplace worker and idle ones."""
    _keep_warm_locked(module, count - int(module in _laplace_workers))


def _keep_warm_locked(module: Path, count: int) -> None:
    """At least ``count`` idle workers for NUTS fits of ``module`` (none while one runs)."""
    if _active[module] > 0:
        return
    ready = _idle.setdefault(module, [])
    for dead in [w for w in ready if w.proc.poll() is not None]:
        ready.remove(dead)
        dead.close()
    while len(ready) < count:
        try:
            ready.append(_Worker(module))
        except OSError:
            break


def _after_fit(module: Path, shutdowns: int) -> None:
    """After a fit: one idle worker at once, the others ``TOP_UP_DELAY`` seconds later. None
    when :func:`shutdown` was called since the fit started (``shutdowns`` is the count then):
    e.g. the last widget was closed while its cancelled fit was still ending, and nothing
    would stop workers started now."""
    with _idle_lock:
        if shutdowns != _shutdowns:
            return
        _keep_warm_locked(module, 1)
        pending = _top_ups.pop(module, None)
        if pending is not None:
            pending.cancel()  # the newest fit's delay counts
        timer = threading.Timer(TOP_UP_DELAY, _delayed_top_up, (module, _shutdowns))
        timer.daemon = True  # never holds up the interpreter's exit
        _top_ups[module] = timer
        timer.start()


def _delayed_top_up(module: Path, shutdowns: int) -> None:
    with _idle_lock:
        if _top_ups.get(module) is threading.current_thread():
            del _top_ups[module]
        if shutdowns == _shutdowns:  # not stopped meanwhile (e.g. the last widget closed)
            _keep_processes_locked(module, IDLE_WORKERS)


def idle_workers() -> list[_Worker]:
    """The idle workers of every model, in one list (the kept Laplace workers last)."""
    return [worker for ready in _idle.values() for worker in ready] + list(
        _laplace_workers.values()
    )


def shutdown() -> None:
    """Stop the idle worker processes (they are restarted by the next fit)."""
    global _shutdowns
    with _idle_lock:
        _shutdowns += 1
        for timer in _top_ups.values():
            timer.cancel()
        _top_ups.clear()
        workers = idle_workers()
        _idle.clear()
        _laplace_workers.clear()
    for worker in workers:
        worker.close()


def _forget_idle_workers() -> None:
    """In a forked child: the idle workers (their stdin pipes) are the parent's to use."""
    global _idle_lock
    _idle.clear()
    _laplace_workers.clear()
    _active.clear()
    _top_ups.clear()  # the parent's timer threads do not exist here
    _idle_lock = threading.Lock()  # a thread of the parent may have held it at the fork


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_forget_idle_workers)

# At exit, close the idle workers properly (their processes would be killed anyway, by
# _procs's exit handler, but their log files would be left to the garbage collector, which
# reports them as "ResourceWarning: unclosed file"). Registered after _procs's handler, so it
# runs before it.
atexit.register(shutdown)


def _follow(
    worker: _Worker,
    total: int,
    progress: ProgressCallback | None,
    cancel: threading.Event | None,
    events: dict[str, float],
    until_done: bool = False,
    finish_within: float = 0.0,
) -> str:
    """Relay the worker's progress until it ends; return its last status line.

    ``events`` receives the time the worker had loaded the model. With ``until_done`` it
    returns at the ``done`` line already (the worker wrote its files; its exit, a few
    hundredths of a second, need not be waited for). Raises FitCancelled (after killing the
    worker and its chains) when ``cancel`` is set; with ``finish_within`` (seconds), the
    worker first has that long to end its request, and if it does its last line is returned
    (the caller sees ``cancel`` set).
    """
    done_iterations: dict[str, int] = {}
    pending = b""
    last = ""
    deadline = None
    while True:
        if cancel is not None and cancel.is_set():
            now = time.perf_counter()
            deadline = now + finish_within if deadline is None else deadline
            if now >= deadline:
                worker.close()
                raise FitCancelled("sampling cancelled")
        ready, _, _ = select.select([worker.status_fd], [], [], 0.05 if deadline is None else 0.01)
        if not ready:
            continue
        chunk = os.read(worker.status_fd, 1 << 16)
        if not chunk:  # every writer (worker and chains) has exited
            return last
        *lines, pending = (pending + chunk).split(b"\n")
        for raw in lines:
            line = raw.decode()
            if line == "ready":
                events["ready"] = time.perf_counter()
            elif line.startswith("progress "):
                _, chain, iteration = line.split()
                done_iterations[chain] = int(iteration)
                if progress is not None:
                    progress("sampling", min(1.0, sum(done_iterations.values()) / total))
            elif line:
                last = line
                if until_done and line == "done":
                    return last


class _LoadFailed(EngineError):
    """The compiled model in the cache does not load (e.g. a truncated file); ``crashed``:
    the process loading it died by a signal."""

    def __init__(self, reason: str, crashed: bool = False) -> None:
        super().__init__(reason)
        self.crashed = crashed


# how a damaged extension module ends a process in dlopen: a truncated file gives SIGBUS
_LOAD_CRASHES = {-signal.SIGBUS, -signal.SIGSEGV, -signal.SIGILL}
#: Signals by which a chain crashed (rather than was killed from outside): PyStan's compiled
#: model can crash this way on some platforms (e.g. a gVisor sandbox loses every chain to
#: SIGSEGV), where CmdStan may still run.
_CRASHES = {signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE, signal.SIGABRT}
#: What to do when the PyStan engine crashed.
CRASH_ADVICE = (
    "the PyStan engine crashed on this platform; install CmdStan "
    '(`python -m cmdstanpy.install_cmdstan`) and use engine="cmdstanpy"'
)


def _failure(
    status: str, returncode: int, ready: bool, out_dir: Path, chains: int, output: str
) -> EngineError:
    """The error for a fit whose worker ended without ``done``, saying why as well as we know."""
    if status.startswith("load-failed") or (not ready and returncode in _LOAD_CRASHES):
        reason = status.removeprefix("load-failed").strip()
        if reason:
            return _LoadFailed(reason)
        return _LoadFailed(f"the process loading it {_procs.killed_by(-returncode)}", True)
    for chain in range(1, chains + 1):
        path = out_dir / f"chain-{chain}.error"
        if path.exists():
            return EngineError(f"PyStan sampling failed: chain {chain}: {path.read_text().strip()}")
    fields = status.split()
    signum = 0
    if len(fields) == 3 and fields[0] == "failed" and int(fields[2]) > 0:
        signum = int(fields[2])
        why = f"chain {fields[1]} {_procs.killed_by(signum)}"
    elif returncode < 0:
        signum = -returncode
        why = f"the sampler process {_procs.killed_by(signum)}"
    else:
        why = f"the sampler process failed (exit code {returncode})"
    if signum in _CRASHES:
        why += f": {CRASH_ADVICE}"
    tail = "\n".join(output.strip().splitlines()[-20:])
    return EngineError(f"PyStan sampling failed: {why}" + (f"; output:\n{tail}" if tail else ""))


def _collect(out_dir: Path, chains: int) -> tuple[dict, dict, list[str]]:
    metas = [json.loads((out_dir / f"chain-{c}.json").read_text()) for c in range(1, chains + 1)]
    # one chain in memory at a time, copied into the final arrays: the peak stays near the size
    # of the draws themselves (a memory map would add every page it touched)
    loads = (np.load(out_dir / f"chain-{c}.npy") for c in range(1, chains + 1))
    params, sampler = split_outputs(metas[0]["names"], loads, chains)
    messages: list[str] = []
    for c, meta in enumerate(metas, start=1):
        messages.extend(f"chain {c}: {m}" for m in meta["messages"])
    return params, sampler, messages


def _collect_laplace(out_dir: Path) -> tuple[dict, dict, list[str]]:
    meta = json.loads((out_dir / "laplace.json").read_text())
    params, sampler = split_outputs(meta["names"], [np.load(out_dir / "laplace.npy")], 1)
    return params, sampler, []


def _run(
    module: Path,
    request: dict[str, Any],
    out_dir: Path,
    progress: ProgressCallback | None,
    cancel: threading.Event | None,
    verbose: bool,
) -> tuple[dict, dict, list[str], dict[str, float]]:
    request_path = out_dir / "request.json"
    request_path.write_text(json.dumps(request))
    events = {"start": time.perf_counter()}
    laplace = request.get("method") == "laplace"
    if laplace:
        worker, shutdowns = _take_laplace_worker(module)
    else:
        worker = _take_worker(module)
    kept = False
    try:
        if worker.requests:  # a kept Laplace worker: it said "ready" for an earlier request
            events["ready"] = events["start"]
        if not worker.submit(request_path, more=laplace):  # it had died: start afresh
            worker.close()
            events.pop("ready", None)  # the new one says it
            worker = _Worker(module)
            # should this one die too, its status says why
            worker.submit(request_path, more=laplace)
        iterations = request.get("num_warmup", 0) + request.get("num_samples", 1)
        total = request.get("chains", 1) * iterations
        # a Laplace worker cancelled mid-request may end it (a few hundredths of a second)
        # and be kept, rather than be killed and the next approximation wait for a new one
        finish = LAPLACE_FINISH_WITHIN if laplace else 0.0
        status = _follow(worker, total, progress, cancel, events, laplace, finish)
        events["exited"] = time.perf_counter()
        if laplace and status == "done":  # its files are complete: kept for the next one
            output, returncode = worker.output(), 0
            kept = _keep_laplace_worker(module, worker, shutdowns)
            if cancel is not None and cancel.is_set():
                raise FitCancelled("approximation cancelled")
        else:
            worker.proc.wait()  # EOF came when the worker and all its chains had exited
            output, returncode = worker.output(), worker.proc.returncode
    finally:
        if not kept:
            worker.close()  # also stops it all after an error or interrupt while following
    if verbose:
        sys.stderr.write(output)
    if status != "done" or returncode != 0:
        ready = "ready" in events
        error = out_dir / "laplace.error"
        if laplace and error.exists():
            raise EngineError(f"Laplace approximation failed: {error.read_text().strip()}")
        chains = request.get("chains", 0)
        raise _failure(status, returncode, ready, out_dir, chains, output)
    if laplace:
        params, sampler, messages = _collect_laplace(out_dir)
    else:
        params, sampler, messages = _collect(out_dir, request["chains"])
    return params, sampler, messages, events


def _rebuild(
    model: ModelName,
    module: Path,
    broken: _LoadFailed,
    progress: ProgressCallback | None,
    cancel: threading.Event | None,
    verbose: bool,
) -> tuple[Path, float]:
    """Replace a cached model that does not load with a fresh build (once per fit)."""
    warnings.warn(
        f"the cached compiled model {module} does not load ({broken}); rebuilding it",
        RuntimeWarning,
        stacklevel=4,
    )
    with _idle_lock:
        stale = _idle.pop(module, [])
        kept = _laplace_workers.pop(module, None)
    for worker in [*stale, *([kept] if kept is not None else [])]:
        worker.close()
    discard(_target(model))
    return compile_model(model, progress=progress, cancel=cancel, verbose=verbose)


def _ended(module: Path) -> None:
    with _idle_lock:
        _active[module] -= 1


def _serve(
    model: ModelName,
    request: dict[str, Any],
    progress: ProgressCallback | None,
    cancel: threading.Event | None,
    verbose: bool,
) -> tuple[dict, dict, list[str], dict[str, float], Path, float]:
    """Compile (if needed), hand ``request`` to a worker, and return what it wrote: (params,
    sampler outputs, Stan's messages, event times, the extension module, compile seconds)."""
    module, compile_seconds = compile_model(
        model, progress=progress, cancel=cancel, verbose=verbose
    )
    if progress is not None:
        progress("sampling", 0.0)
    out_dir = Path(tempfile.mkdtemp(prefix="bbt-widget-fit-"))
    counted = module  # a rebuild below may give another path
    with _idle_lock:
        _active[counted] += 1
        shutdowns = _shutdowns
    try:
        request["out_dir"] = str(out_dir)
        try:
            params, sampler, messages, events = _run(
                module, request, out_dir, progress, cancel, verbose
            )
        except _LoadFailed as broken:
            module, seconds = _rebuild(model, module, broken, progress, cancel, verbose)
            compile_seconds += seconds
            try:
                params, sampler, messages, events = _run(
                    module, request, out_dir, progress, cancel, verbose
                )
            except _LoadFailed as still:
                error = unusable_build(
                    f"the compiled Stan model {model!r}",
                    _target(model),
                    still,
                    "the C++ compiler or the httpstan installation",
                )
                if still.crashed:  # a fresh build that crashes as it loads: the platform
                    error = EngineError(f"{error} If it crashes after every build, {CRASH_ADVICE}.")
                raise error from None
    except Exception:
        _ended(counted)
        _after_fit(module, shutdowns)  # e.g. a cancelled fit: the next one starts at once
        raise
    except BaseException:
        _ended(counted)  # KeyboardInterrupt or exit: no new process then
        raise
    else:
        _ended(counted)
        _after_fit(module, shutdowns)
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    if verbose and messages:
        sys.stderr.write("Stan messages:\n" + "\n".join(messages) + "\n")
    add_empty_outputs(model, params, request["data"])
    if progress is not None:
        progress("sampling", 1.0)
    return params, sampler, messages, events, module, compile_seconds


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
    """Compile (if needed) and sample ``model``; ``data`` is already validated."""
    seed = fresh_seed(seed)
    request = {
        "out_dir": "",
        "data": data,
        "chains": chains,
        "seed": seed,
        "num_warmup": iter_warmup,
        "num_samples": iter_sampling,
        "max_depth": max_treedepth,
        "delta": adapt_delta,
        "refresh": max(1, (iter_warmup + iter_sampling) // 25),  # ~25 reports per chain
    }
    params, sampler, messages, events, module, compile_seconds = _serve(
        model, request, progress, cancel, verbose
    )
    start = events["start"]  # after the compile
    ready = max(events.get("ready", events["start"]), events["start"])
    return Draws(
        params=params,
        sampler=sampler,
        engine="pystan",
        max_treedepth=max_treedepth,
        timings={
            "compile": compile_seconds,
            "sample": time.perf_counter() - start,
            # waiting for the worker to load (0 when warm), the chains, reading the draws
            "sample_startup": ready - events["start"],
            "sample_chains": events["exited"] - ready,
            "sample_collect": time.perf_counter() - events["exited"],
        },
        info={
            "engine_version": engine_version(),
            "stan_hash": program_hash(model),
            "model": model,
            "compiled_module": str(module),
            "seed": seed,
            "chains": chains,
            "iter_warmup": iter_warmup,
            "iter_sampling": iter_sampling,
            "adapt_delta": adapt_delta,
            "messages": messages,
        },
    )


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
    """Draws of the Laplace approximation of ``model``'s posterior (``_laplace.py``), computed
    by a worker that has the model loaded; ``data`` is already validated."""
    seed = fresh_seed(seed)
    request = {"out_dir": "", "method": "laplace", "model": model, "data": data, "draws": draws}
    request["seed"] = seed
    params, sampler, _, events, module, compile_seconds = _serve(
        model, request, progress, cancel, verbose
    )
    return Draws(
        params=params,
        sampler=sampler,
        engine="pystan",
        timings={"compile": compile_seconds, "sample": time.perf_counter() - events["start"]},
        info={
            "engine_version": engine_version(),
            "stan_hash": program_hash(model),
            "model": model,
            "compiled_module": str(module),
            "seed": seed,
            "method": "laplace",
            "draws": draws,
        },
    )
