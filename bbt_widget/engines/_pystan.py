"""The PyStan engine: Stan models compiled by httpstan, sampled in a killable subprocess.

PyStan (``pystan`` + ``httpstan``, the ``stan`` extra) installs from PyPI alone and compiles
with the system C++ compiler, so it is the Stan engine that works on a fresh machine with a
compiler (the default, numpy engine needs neither). Its public API does not suit an
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
  kept to serve the next one (see :meth:`PyStanEngine._keep_laplace_worker`).

:class:`PyStanEngine` holds the worker processes (idle ones per compiled model, the kept
Laplace worker) and the constants that tune them; ``bbt_widget.engines.get("pystan")``
returns its one instance.

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
import weakref
from functools import cache, partial
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from typing import IO, Any, ClassVar

import numpy as np

from ..core.draws import Array, Draws, ModelName, ProgressCallback, SamplerSettings, fresh_seed
from . import _procs, _toolchain
from ._cache import cache_root, check_private, discard, ensure_built, unusable_build
from ._cache_loaded import loadable
from ._programs import add_empty_outputs, program_hash, split_outputs, stan_program
from .base import EngineError, FitCancelled

_BUILD_SCRIPT = Path(__file__).with_name("_pystan_build.py")
_WORKER_SCRIPT = Path(__file__).with_name("_pystan_worker.py")

#: What a worker wrote: (params, sampler outputs, Stan's messages).
_Outputs = tuple[dict[str, Array], dict[str, Array], list[str]]


@cache
def _httpstan_version() -> str:
    return importlib.metadata.version("httpstan")


def _module_file(directory: Path) -> Path | None:
    try:
        return next(p for p in directory.iterdir() if p.suffix in EXTENSION_SUFFIXES)
    except (OSError, StopIteration):
        return None


class _Worker:
    """A ``_pystan_worker.py`` process: model loaded, waiting on stdin for one fit."""

    def __init__(self, module: Path) -> None:
        self.module = module
        #: Requests this worker has taken: a Laplace worker serves several (one at a time).
        self.requests = 0
        self._log_start = 0
        # The worker imports the very file checked now, linked into a folder of this process
        # (the cache's path could name another file by the time the worker reads it).
        try:
            private = loadable(module)
        except FileNotFoundError as gone:  # the cache was cleared: rebuilt, as a broken one
            raise _LoadFailed(str(gone)) from None
        read_fd, write_fd = os.pipe()
        # its output (and that of Stan's C++, which may print) goes to an unnamed temp file
        self.log: IO[bytes] = tempfile.TemporaryFile(prefix="bbt-widget-worker-")
        try:
            self.proc = _procs.spawn(
                [sys.executable, str(_WORKER_SCRIPT), str(private), str(write_fd)],
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


def _collect(out_dir: Path, chains: int) -> _Outputs:
    metas = [json.loads((out_dir / f"chain-{c}.json").read_text()) for c in range(1, chains + 1)]
    # one chain in memory at a time, copied into the final arrays: the peak stays near the size
    # of the draws themselves (a memory map would add every page it touched)
    loads = (np.load(out_dir / f"chain-{c}.npy") for c in range(1, chains + 1))
    params, sampler = split_outputs(metas[0]["names"], loads, chains)
    messages: list[str] = []
    for c, meta in enumerate(metas, start=1):
        messages.extend(f"chain {c}: {m}" for m in meta["messages"])
    return params, sampler, messages


def _collect_laplace(out_dir: Path) -> _Outputs:
    meta = json.loads((out_dir / "laplace.json").read_text())
    params, sampler = split_outputs(meta["names"], [np.load(out_dir / "laplace.npy")], 1)
    return params, sampler, []


class PyStanEngine:
    """The PyStan engine: compiles with httpstan, samples and approximates in worker processes.

    One instance per process (``bbt_widget.engines.get("pystan")``) holds the workers: per
    compiled model, idle ones with the model loaded, and one kept Laplace worker. The class
    attributes tune them (and the compiler); a test may set them on the instance.
    """

    name: str = "pystan"
    #: Whether a fit's end starts idle workers for the next fits (:meth:`_after_fit`); off in
    #: a process that makes its fits and exits (``engines.spare_workers(False)``).
    spare_workers: bool = True

    #: Flags for httpstan's compile of a model, after Python's own CFLAGS (so they win).
    #: httpstan's defaults are ("-O3", "-std=c++14", "-Wno-sign-compare"); with Python's "-g"
    #: they make a newcomer's first compile slow. "-g0" (no debug information, which nobody
    #: reads in a cached model) and "-O2" compile faster while sampling as fast ("-O1" compiles
    #: faster still but samples slower): see benchmarks/bench_cold.py and
    #: benchmarks/results/cold.json.
    COMPILE_ARGS: ClassVar[tuple[str, ...]] = ("-O2", "-g0", "-std=c++14", "-Wno-sign-compare")
    #: Worker processes kept per compiled model, the kept Laplace worker among them: three.
    #: The widget's first preview and its full fit take two, so both start on a loaded model
    #: instead of one waiting for a new process, and the third is still there when the full
    #: fit ends, so that its end starts no process (a process start takes CPU, see
    #: TOP_UP_DELAY) while the widget builds its chart data: with two, the full result came
    #: later (benchmarks/bench_widget.py). Later previews use the kept Laplace worker, so two
    #: idle ones do the same. Each worker holds a loaded model in memory.
    IDLE_WORKERS: ClassVar[int] = 3
    #: Seconds after a fit before the idle workers beyond the first are started. A worker's
    #: start-up takes CPU; right after a fit the caller has work of its
    #: own (the result's diagnostics, the widget's chart data), and two start-ups at once took
    #: both cores from it (benchmarks/bench_widget.py). One worker is started at once, so that
    #: the next fit of a loop still starts on a loaded model.
    TOP_UP_DELAY: ClassVar[float] = 0.5
    #: Seconds a cancelled Laplace approximation has to end before its worker is killed: in a
    #: burst of changes the widget cancels a preview when the next change comes, and one
    #: ending (a few hundredths of a second) keeps its worker for the next preview.
    LAPLACE_FINISH_WITHIN: ClassVar[float] = 0.25

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: Idle workers per compiled model, for NUTS fits.
        self._idle: dict[Path, list[_Worker]] = {}
        #: Fits of each model running now: idle workers are replaced only once none is, so
        #: that starting a process never competes with a running
        #: fit's chains.
        self._active: collections.Counter[Path] = collections.Counter()
        #: The pending delayed top-ups by model (see :meth:`_after_fit`), and the count of
        #: :meth:`shutdown` calls: a top-up scheduled before a shutdown starts nothing.
        self._top_ups: dict[Path, threading.Timer] = {}
        self._shutdowns = 0
        #: One kept Laplace worker per model: a worker serves Laplace approximations one after
        #: the other for as long as it lives. A widget asks one per control change; when they
        #: took a new worker each, a burst of changes (a key held on a slider, a script's loop)
        #: used up the idle workers by the third and then started a process per change, and
        #: few of the previews were shown. A worker that approximated is never handed a NUTS
        #: fit: it would fork chains after numpy's linear algebra may have started threads.
        self._laplace_workers: dict[Path, _Worker] = {}
        _INSTANCES.add(self)

    # ------------------------------------------------------------------ installation

    def available(self) -> bool:
        """Whether PyStan can run here (httpstan has no Windows build)."""
        return sys.platform != "win32" and importlib.util.find_spec("httpstan") is not None

    def problem(self) -> str | None:
        """None: an installed PyStan either imports and runs or is not found."""
        return None

    def version(self) -> str:
        """``"pystan X, httpstan Y"``."""
        return _engine_version()

    def _target(self, model: ModelName) -> Path:
        # The extension module depends on the program, httpstan's Stan headers, the Python
        # ABI, and the compiler and its flags (a toolchain upgrade or new flags rebuild).
        abi = sys.implementation.cache_tag
        toolchain = _toolchain.tag(self.COMPILE_ARGS)
        tag = f"{model}-{program_hash(model)}-httpstan{_httpstan_version()}-{abi}-cc{toolchain}"
        return cache_root() / "pystan" / tag

    def _build(self, model: ModelName, scratch: Path, *, verbose: bool) -> None:
        absent = _toolchain.missing()
        if absent:  # said at once, instead of a compile's traceback a second later
            raise EngineError(
                f"Compiling the Stan model {model!r} with PyStan needs a C++ compiler, and "
                f"none was found ({', '.join(absent)} not on PATH): install one (e.g. `apt "
                "install g++`, or `xcode-select --install` on macOS), or use CmdStan. The "
                "BBT fits with ties 'spread', 'add' or 'forget' need none (the numpy engine)."
            )
        stan_path = scratch / f"{model}.stan"
        stan_path.write_text(stan_program(model), encoding="utf-8")
        with tempfile.TemporaryDirectory(prefix="bbt-widget-build-") as cwd:
            proc = _procs.spawn(
                [
                    sys.executable,
                    str(_BUILD_SCRIPT),
                    str(stan_path),
                    str(scratch),
                    json.dumps(list(self.COMPILE_ARGS)),
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
                f"(exit code {proc.returncode}). PyStan needs a working C++ compiler (g++ or "
                "clang++; e.g. `apt install g++`, or `xcode-select --install` on macOS). "
                f"Last lines of the compiler output:\n{tail}"
            )

    def compile(
        self,
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
        target = self._target(model)
        seconds = ensure_built(
            target,
            lambda t: _module_file(t) is not None,
            partial(self._build, model, verbose=verbose),
            progress=progress,
            cancel=cancel,
        )
        module = _module_file(target)
        if module is None:  # removed between the build and now (cache cleared)
            raise EngineError(f"compiled model vanished from {target}; please retry")
        check_private(module)
        return module, seconds

    def compiled(self, model: ModelName) -> Path | None:
        """The cached extension module of ``model`` if it is built, else None (nothing is
        built).

        Raises :class:`~._cache.UnsafeCacheError` as :meth:`compile` does.
        """
        module = _module_file(self._target(model))
        if module is not None:
            check_private(module)
        return module

    # ------------------------------------------------------------------ the workers

    def _take_worker(self, module: Path) -> _Worker:
        with self._lock:
            ready = self._idle.get(module, [])
            worker = ready.pop(0) if ready else None
        if worker is not None and worker.proc.poll() is None:
            return worker
        if worker is not None:
            worker.close()
        return _Worker(module)

    def _take_laplace_worker(self, module: Path) -> tuple[_Worker, int]:
        """The model's kept Laplace worker if it is alive, else an idle (or new) one; and the
        shutdown count now (a worker taken before a shutdown is not kept after it)."""
        with self._lock:
            worker = self._laplace_workers.pop(module, None)
            shutdowns = self._shutdowns
        if worker is not None and worker.proc.poll() is None:
            return worker, shutdowns
        if worker is not None:
            worker.close()
        return self._take_worker(module), shutdowns

    def _keep_laplace_worker(self, module: Path, worker: _Worker, shutdowns: int) -> bool:
        """Keep ``worker`` (its Laplace approximation done) for the model's next one; False
        when it is not kept (the engine was shut down meanwhile, or another is kept already)."""
        with self._lock:
            if (
                shutdowns != self._shutdowns
                or module in self._laplace_workers
                or worker.proc.poll() is not None
            ):
                return False
            self._laplace_workers[module] = worker
            return True

    def keep_warm(self, compiled: Path, count: int | None = None) -> None:
        """Have ``count`` (default :attr:`IDLE_WORKERS`) worker processes for the extension
        module ``compiled`` ready for the next fits (its kept Laplace worker, if any, among
        them).

        Not while a fit of the model runs, so that the workers' start-up does not compete with
        the chains for the CPU: the last fit to end does it (:meth:`_after_fit`). Best effort:
        a failure here only means the next fit starts its own worker, which reports any real
        problem.
        """
        with self._lock:
            self._keep_processes_locked(compiled, self.IDLE_WORKERS if count is None else count)

    def prestart(self, compiled: Path) -> None:
        """Start the worker a coming fit of ``compiled`` will take, unless one is idle already:
        its start-up then overlaps with the caller's own work (see ``engines.prestart``)."""
        self.keep_warm(compiled, 1)

    def _keep_processes_locked(self, module: Path, count: int) -> None:
        """``count`` worker processes for ``module``: its kept Laplace worker and idle ones."""
        self._keep_warm_locked(module, count - int(module in self._laplace_workers))

    def _keep_warm_locked(self, module: Path, count: int) -> None:
        """At least ``count`` idle workers for NUTS fits of ``module`` (none while one runs)."""
        if self._active[module] > 0:
            return
        ready = self._idle.setdefault(module, [])
        for dead in [w for w in ready if w.proc.poll() is not None]:
            ready.remove(dead)
            dead.close()
        while len(ready) < count:
            try:
                ready.append(_Worker(module))
            except (OSError, EngineError):  # best effort: the next fit reports it
                break

    def _after_fit(self, module: Path, shutdowns: int) -> None:
        """After a fit: one idle worker at once, the others ``TOP_UP_DELAY`` seconds later.
        None without :attr:`spare_workers`, or when :meth:`shutdown` was called since the fit
        started (``shutdowns`` is the count then): e.g. the last widget was closed while its
        cancelled fit was still ending, and nothing would stop workers started now."""
        with self._lock:
            if shutdowns != self._shutdowns or not self.spare_workers:
                return
            self._keep_warm_locked(module, 1)
            pending = self._top_ups.pop(module, None)
            if pending is not None:
                pending.cancel()  # the newest fit's delay counts
            timer = threading.Timer(
                self.TOP_UP_DELAY, self._delayed_top_up, (module, self._shutdowns)
            )
            timer.daemon = True  # never holds up the interpreter's exit
            self._top_ups[module] = timer
            timer.start()

    def _delayed_top_up(self, module: Path, shutdowns: int) -> None:
        with self._lock:
            if self._top_ups.get(module) is threading.current_thread():
                del self._top_ups[module]
            if shutdowns == self._shutdowns:  # not stopped meanwhile (e.g. the widget closed)
                self._keep_processes_locked(module, self.IDLE_WORKERS)

    def idle_workers(self) -> list[_Worker]:
        """The idle workers of every model, in one list (the kept Laplace workers last)."""
        return [worker for ready in self._idle.values() for worker in ready] + list(
            self._laplace_workers.values()
        )

    def shutdown(self) -> None:
        """Stop the idle worker processes (they are restarted by the next fit)."""
        with self._lock:
            self._shutdowns += 1
            for timer in self._top_ups.values():
                timer.cancel()
            self._top_ups.clear()
            workers = self.idle_workers()
            self._idle.clear()
            self._laplace_workers.clear()
        for worker in workers:
            worker.close()

    def _forget_workers(self) -> None:
        """In a forked child: the idle workers (their stdin pipes) are the parent's to use."""
        self._idle.clear()
        self._laplace_workers.clear()
        self._active.clear()
        self._top_ups.clear()  # the parent's timer threads do not exist here
        self._lock = threading.Lock()  # a thread of the parent may have held it at the fork

    # ------------------------------------------------------------------ one request

    def _run(
        self,
        module: Path,
        request: dict[str, Any],
        out_dir: Path,
        progress: ProgressCallback | None,
        cancel: threading.Event | None,
        verbose: bool,
    ) -> tuple[dict[str, Array], dict[str, Array], list[str], dict[str, float]]:
        request_path = out_dir / "request.json"
        request_path.write_text(json.dumps(request))
        events = {"start": time.perf_counter()}
        laplace = request.get("method") == "laplace"
        shutdowns = 0
        if laplace:
            worker, shutdowns = self._take_laplace_worker(module)
        else:
            worker = self._take_worker(module)
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
            finish = self.LAPLACE_FINISH_WITHIN if laplace else 0.0
            status = _follow(worker, total, progress, cancel, events, laplace, finish)
            events["exited"] = time.perf_counter()
            if laplace and status == "done":  # its files are complete: kept for the next one
                output, returncode = worker.output(), 0
                kept = self._keep_laplace_worker(module, worker, shutdowns)
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
        self,
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
        with self._lock:
            stale = self._idle.pop(module, [])
            kept = self._laplace_workers.pop(module, None)
        for worker in [*stale, *([kept] if kept is not None else [])]:
            worker.close()
        discard(self._target(model))
        return self.compile(model, progress=progress, cancel=cancel, verbose=verbose)

    def _ended(self, module: Path) -> None:
        with self._lock:
            self._active[module] -= 1

    def _serve(
        self,
        model: ModelName,
        request: dict[str, Any],
        progress: ProgressCallback | None,
        cancel: threading.Event | None,
        verbose: bool,
    ) -> tuple[dict[str, Array], dict[str, Array], list[str], dict[str, float], Path, float]:
        """Compile (if needed), hand ``request`` to a worker, and return what it wrote:
        (params, sampler outputs, Stan's messages, event times, the extension module, compile
        seconds)."""
        module, compile_seconds = self.compile(
            model, progress=progress, cancel=cancel, verbose=verbose
        )
        if progress is not None:
            progress("sampling", 0.0)
        out_dir = Path(tempfile.mkdtemp(prefix="bbt-widget-fit-"))
        counted = module  # a rebuild below may give another path
        with self._lock:
            self._active[counted] += 1
            shutdowns = self._shutdowns
        try:
            request["out_dir"] = str(out_dir)
            try:
                params, sampler, messages, events = self._run(
                    module, request, out_dir, progress, cancel, verbose
                )
            except _LoadFailed as broken:
                module, seconds = self._rebuild(model, module, broken, progress, cancel, verbose)
                compile_seconds += seconds
                try:
                    params, sampler, messages, events = self._run(
                        module, request, out_dir, progress, cancel, verbose
                    )
                except _LoadFailed as still:
                    error = unusable_build(
                        f"the compiled Stan model {model!r}",
                        self._target(model),
                        still,
                        "the C++ compiler or the httpstan installation",
                    )
                    if still.crashed:  # a fresh build that crashes as it loads: the platform
                        error = EngineError(
                            f"{error} If it crashes after every build, {CRASH_ADVICE}."
                        )
                    raise error from None
        except Exception:
            self._ended(counted)
            self._after_fit(module, shutdowns)  # e.g. a cancelled fit: the next one starts at once
            raise
        except BaseException:
            self._ended(counted)  # KeyboardInterrupt or exit: no new process then
            raise
        else:
            self._ended(counted)
            self._after_fit(module, shutdowns)
        finally:
            shutil.rmtree(out_dir, ignore_errors=True)
        if verbose and messages:
            sys.stderr.write("Stan messages:\n" + "\n".join(messages) + "\n")
        add_empty_outputs(model, params, request["data"])
        if progress is not None:
            progress("sampling", 1.0)
        return params, sampler, messages, events, module, compile_seconds

    def sample(
        self,
        model: ModelName,
        data: dict[str, Any],
        settings: SamplerSettings,
        *,
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
        verbose: bool = False,
    ) -> Draws:
        """Compile (if needed) and sample ``model``; ``data`` is already validated."""
        seed = fresh_seed(settings.seed)
        request = {
            "out_dir": "",
            "data": data,
            "chains": settings.chains,
            "seed": seed,
            "num_warmup": settings.iter_warmup,
            "num_samples": settings.iter_sampling,
            "max_depth": settings.max_treedepth,
            "delta": settings.adapt_delta,
            "refresh": max(1, settings.iterations // 25),  # ~25 reports per chain
        }
        params, sampler, messages, events, module, compile_seconds = self._serve(
            model, request, progress, cancel, verbose
        )
        start = events["start"]  # after the compile
        ready = max(events.get("ready", events["start"]), events["start"])
        return Draws(
            params=params,
            sampler=sampler,
            engine=self.name,
            max_treedepth=settings.max_treedepth,
            timings={
                "compile": compile_seconds,
                "sample": time.perf_counter() - start,
                # waiting for the worker to load (0 when warm), the chains, reading the draws
                "sample_startup": ready - events["start"],
                "sample_chains": events["exited"] - ready,
                "sample_collect": time.perf_counter() - events["exited"],
            },
            info={
                "engine_version": self.version(),
                "stan_hash": program_hash(model),
                "model": model,
                "compiled_module": str(module),
                "seed": seed,
                "chains": settings.chains,
                "iter_warmup": settings.iter_warmup,
                "iter_sampling": settings.iter_sampling,
                "adapt_delta": settings.adapt_delta,
                "messages": messages,
            },
        )

    def laplace(
        self,
        model: ModelName,
        data: dict[str, Any],
        *,
        draws: int,
        seed: int | None,
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
        verbose: bool = False,
    ) -> Draws:
        """Draws of the Laplace approximation of ``model``'s posterior (``_laplace.py``),
        computed by a worker that has the model loaded; ``data`` is already validated."""
        seed = fresh_seed(seed)
        request: dict[str, Any] = {
            "out_dir": "",
            "method": "laplace",
            "model": model,
            "data": data,
            "draws": draws,
            "seed": seed,
        }
        params, sampler, _, events, module, compile_seconds = self._serve(
            model, request, progress, cancel, verbose
        )
        return Draws(
            params=params,
            sampler=sampler,
            engine=self.name,
            timings={"compile": compile_seconds, "sample": time.perf_counter() - events["start"]},
            info={
                "engine_version": self.version(),
                "stan_hash": program_hash(model),
                "model": model,
                "compiled_module": str(module),
                "seed": seed,
                "method": "laplace",
                "draws": draws,
            },
        )


@cache
def _engine_version() -> str:
    parts = []
    for dist in ("pystan", "httpstan"):
        try:
            parts.append(f"{dist} {importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            parts.append(f"{dist} (not installed)")
    return ", ".join(parts)


#: Every PyStan engine of this process (one, from ``engines.get``, outside the tests), for the
#: hooks below.
_INSTANCES: weakref.WeakSet[PyStanEngine] = weakref.WeakSet()


def _shutdown_all() -> None:
    for engine in list(_INSTANCES):
        engine.shutdown()


def _forget_all_workers() -> None:
    for engine in list(_INSTANCES):
        engine._forget_workers()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_forget_all_workers)

# At exit, close the idle workers properly (their processes would be killed anyway, by
# _procs's exit handler, but their log files would be left to the garbage collector, which
# reports them as "ResourceWarning: unclosed file"). Registered after _procs's handler, so it
# runs before it.
atexit.register(_shutdown_all)
