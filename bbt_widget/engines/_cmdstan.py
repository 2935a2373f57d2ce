"""The cmdstanpy engine: CmdStan executables built once into our cache.

Used when a working CmdStan installation is found (``$CMDSTAN`` or ``~/.cmdstan``, as cmdstanpy
looks for it; built, and its ``stanc`` runs here: :meth:`CmdStanEngine.problem`): CmdStan's
sampler is the fastest way to run the models. The executable is compiled by cmdstanpy in a
subprocess (killable, and its output captured) from a copy of the program in the cache
directory, and lives beside it.

Sampling does not go through cmdstanpy, whose chains run in threads of the caller's process and
cannot be stopped as a unit: a small worker process (``_cmdstan_worker.py``, stdlib only) runs
the chains as its children, relays CmdStan's ``Iteration: 100 / 2000`` lines as progress, and
kills its chains when told to (its stdin closes) or when the engine's process dies. Cancelling
a fit closes that pipe and then kills the worker's process group: the same on Linux, macOS and
Windows, with no ``/proc``. One worker is kept ready after each fit (and by ``compile_model``)
for the next one, which hands it the fit on its stdin. Each chain's CSV file is read as soon as
that chain ends, while the others still run, straight into the final arrays (parsed once,
copied once). The files are parsed by pandas' C reader rather than ``stanio.read_csv``
(cmdstanpy's own dependency, built on ``numpy.loadtxt``), which measured slower, and the last
chain's file is read while the caller waits: ``benchmarks/bench_csv.py`` compares the two, its
results are in ``benchmarks/results/csv.json``. A fit takes the time of bare cmdstanpy
sampling (``benchmarks/bench_engines.py``).

The Laplace approximation (the widget's previews) is CmdStan's own: ``optimize jacobian=1``
then ``laplace`` around that mode, handed to the same worker as two commands run one after
the other, so that it is cancelled, cleaned up and reported as sampling is (CmdStan 2.32+).

:class:`CmdStanEngine` holds the idle worker and the answers of the installation checks;
``bbt_widget.engines.get("cmdstanpy")`` returns its one instance. Finding the installation is
:mod:`._cmdstan_install`.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
import weakref
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ..core.draws import Array, Draws, ModelName, ProgressCallback, SamplerSettings, fresh_seed
from . import _procs, _toolchain
from ._cache import cache_root, check_private, discard, ensure_built, unusable_build
from ._cache_loaded import loadable
from ._cmdstan_install import (
    INSTALL_HINT,
    check_laplace_version,
    cmdstan_path,
    cmdstan_version,
    not_built,
    stanc_file,
    stanc_problem,
)
from ._programs import (
    OutputSplitter,
    add_empty_outputs,
    include_dir,
    program_hash,
    split_outputs,
    stan_source,
)
from .base import EngineError, FitCancelled

_BUILD_SCRIPT = Path(__file__).with_name("_cmdstan_build.py")
_WORKER_SCRIPT = Path(__file__).with_name("_cmdstan_worker.py")

_T = TypeVar("_T")


def _exe_name(model: ModelName) -> str:
    return model + (".exe" if sys.platform == "win32" else "")


class _ExeBroken(EngineError):
    """The cached executable does not run (e.g. a truncated file)."""


def _runnable(exe: Path) -> Path:
    """The path the worker runs: the very executable checked now, linked into a folder of
    this process (the cache's path could name another file by the time it is run)."""
    try:
        return loadable(exe)
    except FileNotFoundError as gone:  # the cache was cleared: rebuilt, as a broken one
        raise _ExeBroken(str(gone)) from None


# How an executable that cannot run ends: it cannot be started at all (exec-failed), the
# shell or the dynamic loader gives up ("cannot execute" 126, "not found" 127: CmdStan itself
# never returns these), or it crashes before printing its first line (a truncated file gives
# SIGBUS when a page beyond its end is touched).
_NOT_RUNNING_CODES = {126, 127}
_LOAD_CRASHES = {
    -getattr(signal, name) for name in ("SIGBUS", "SIGSEGV", "SIGILL") if hasattr(signal, name)
}


def _commands(
    exe: Path, data_file: Path, out_dir: Path, settings: SamplerSettings, seed: int
) -> list[list[str]]:
    """CmdStan's command line for each chain (as cmdstanpy writes it, progress included)."""
    return [
        [
            str(exe),
            f"id={chain}",
            "random",
            f"seed={seed}",  # with id, CmdStan gives each chain its own stream
            "data",
            f"file={data_file}",
            "output",
            f"file={out_dir / f'chain-{chain}.csv'}",
            f"refresh={max(1, settings.iterations // 25)}",  # ~25 progress lines per chain
            "method=sample",
            f"num_samples={settings.iter_sampling}",
            f"num_warmup={settings.iter_warmup}",
            "algorithm=hmc",
            "engine=nuts",
            f"max_depth={settings.max_treedepth}",
            "adapt",
            f"delta={settings.adapt_delta}",
        ]
        for chain in range(1, settings.chains + 1)
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
    status, other = "", list[str]()
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


def _read_csv(path: Path) -> tuple[list[str], Array]:
    """Column names and draws of one chain's Stan CSV file (comment lines skipped)."""
    # the fastest CSV reader at hand (see the module's docstring); imported with bbt_widget
    import pandas as pd  # type: ignore[import-untyped, unused-ignore]

    # low_memory=False: one pass over the file, not chunks concatenated afterwards (faster)
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

    def result(self) -> tuple[dict[str, Array], dict[str, Array]]:
        """(params, sampler), reading the chains not read yet."""
        for chain in range(1, len(self._csvs) + 1):
            self.read(chain)
        assert self._splitter is not None
        return self._splitter.result()


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


#: The two commands of a Laplace approximation, as ``_failure`` names them.
_LAPLACE_STEPS = {
    "1": "the search for the mode (CmdStan's optimize)",
    "2": "the draws (CmdStan's laplace)",
}


def _read_laplace(model: ModelName, path: Path) -> dict[str, Array]:
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


class CmdStanEngine:
    """The cmdstanpy engine: CmdStan executables built into our cache, run by a worker process.

    One instance per process (``bbt_widget.engines.get("cmdstanpy")``) keeps one idle worker
    (it serves every model) and the answers of ``stanc --version`` per ``stanc`` file.
    """

    name: str = "cmdstanpy"
    #: Whether a fit's end starts the idle worker for the next fit (:meth:`_start_idle`); off
    #: in a process that makes its fits and exits (``engines.spare_workers(False)``).
    spare_workers: bool = True

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: Started after a fit, for the next one (of any model).
        self._idle: _Worker | None = None
        #: How many times :meth:`shutdown` ran: a fit that ends after a shutdown that came
        #: while it ran starts no idle worker (nothing would stop it).
        self._shutdowns = 0
        #: What ``stanc --version`` said, by the file's path, inode, size and time (a rebuilt
        #: stanc is run again).
        self._stanc_checks: dict[tuple[str, int, int, int], str | None] = {}
        _INSTANCES.add(self)

    # ------------------------------------------------------------------ installation

    def available(self) -> bool:
        """Whether a working CmdStan installation is found (see :meth:`problem`), and
        cmdstanpy, which builds the models."""
        return (
            cmdstan_path() is not None
            and importlib.util.find_spec("cmdstanpy") is not None
            and self.problem() is None
        )

    def problem(self) -> str | None:
        """Why the CmdStan installation found does not work here, or None (also when none is
        found).

        A working installation is built (an interrupted ``install_cmdstan`` leaves a makefile
        but no ``bin/stanc``) and its Stan compiler runs on this machine: ``bin/stanc
        --version`` is run once per process (a few milliseconds), and again only when that
        file changes.
        """
        path = cmdstan_path()
        if path is None:
            return None
        stanc = stanc_file(path)
        try:
            info = stanc.stat()
        except OSError:
            return not_built(path)
        key = (str(stanc), info.st_ino, info.st_size, info.st_mtime_ns)
        with self._lock:
            if key in self._stanc_checks:
                return self._stanc_checks[key]
        found = stanc_problem(str(stanc))
        with self._lock:
            self._stanc_checks[key] = found
        return found

    def version(self) -> str:
        """``"cmdstanpy X, CmdStan Y"``."""
        path = cmdstan_path()
        cmdstan = cmdstan_version(path) if path else "not found"
        return f"cmdstanpy {importlib.metadata.version('cmdstanpy')}, CmdStan {cmdstan}"

    def _target(self, model: ModelName) -> Path:
        path = cmdstan_path()
        if path is None:
            raise EngineError("CmdStan not found. " + INSTALL_HINT)
        # The executable depends on the program and on the CmdStan installation that built it.
        install = hashlib.sha256(os.path.realpath(path).encode()).hexdigest()[:8]
        toolchain = _toolchain.tag()  # a compiler upgrade rebuilds too
        version = cmdstan_version(path)
        tag = f"{model}-{program_hash(model)}-cmdstan{version}-{install}-cc{toolchain}"
        return cache_root() / "cmdstan" / tag

    def _build(self, model: ModelName, scratch: Path, *, verbose: bool) -> None:
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

    def compile(
        self,
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
        target = self._target(model)
        exe = target / _exe_name(model)
        seconds = ensure_built(
            target,
            lambda t: (t / _exe_name(model)).exists(),
            partial(self._build, model, verbose=verbose),
            progress=progress,
            cancel=cancel,
        )
        check_private(exe)
        return exe, seconds

    def compiled(self, model: ModelName) -> Path | None:
        """The cached executable of ``model`` if it is built, else None (nothing is built).

        Raises :class:`~._cache.UnsafeCacheError` as :meth:`compile` does.
        """
        exe = self._target(model) / _exe_name(model)
        if not exe.exists():
            return None
        check_private(exe)
        return exe

    # ------------------------------------------------------------------ the worker

    def _take_worker(self) -> _Worker:
        """The idle worker if it is alive, else a new one."""
        with self._lock:
            worker, self._idle = self._idle, None
        if worker is not None and worker.proc.poll() is None:
            return worker
        if worker is not None:
            worker.stop()
        return _Worker()

    def keep_warm(self, compiled: Path) -> None:
        """Have an idle worker ready for the next fit (one; it serves every model, so
        ``compiled`` is not needed), so that a fit does not wait for an interpreter to start.

        :meth:`sample` does this after a fit, not during it, so that the worker's start-up
        does not compete with the chains for the CPU. Best effort: a failure here only means
        the next fit starts its own worker, which reports any real problem.
        """
        self._start_idle()

    def _start_idle(self, shutdowns: int | None = None) -> None:
        """Start the idle worker unless one is alive, or unless :meth:`shutdown` ran since
        ``shutdowns`` (the count when the fit began) was read; after a fit (``shutdowns``
        given), only with :attr:`spare_workers`."""
        with self._lock:
            if shutdowns is not None and (shutdowns != self._shutdowns or not self.spare_workers):
                return
            if self._idle is None or self._idle.proc.poll() is not None:
                with contextlib.suppress(OSError):
                    self._idle = _Worker()

    def prestart(self, compiled: Path) -> None:
        """Start the worker a coming fit will take, unless one is idle already (it serves
        every model; see ``engines.prestart``)."""
        self.keep_warm(compiled)

    def shutdown(self) -> None:
        """Stop the idle worker (the next fit starts one)."""
        with self._lock:
            self._shutdowns += 1
            worker, self._idle = self._idle, None
        if worker is not None:
            worker.stop()

    def _forget_workers(self) -> None:
        """In a forked child: the parent's idle worker is the parent's (its stdin is the
        parent's pipe: a fit handed to it from here would be the parent's too)."""
        self._idle, self._lock = None, threading.Lock()

    # ------------------------------------------------------------------ one fit

    def _execute(
        self,
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

        ``total`` is the iterations of all commands (for progress), ``finished(n)`` is called
        as the n-th command ends well; ``what`` and ``step`` name the fit in errors
        (``_failure``).
        """
        request = {
            "commands": commands,
            "parallel": parallel,
            "out_dir": str(out_dir),
            "env": _procs.child_env(),  # now: the worker was started before, maybe long ago
        }
        worker = self._take_worker()
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

    def _rebuild(
        self,
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
        discard(self._target(model))
        return self.compile(model, progress=progress, cancel=cancel, verbose=verbose)

    def _in_scratch(
        self,
        model: ModelName,
        data: dict[str, Any],
        run: Callable[[Path, Path], _T],
        progress: ProgressCallback | None,
        cancel: threading.Event | None,
        verbose: bool,
    ) -> tuple[_T, Path, float, float]:
        """Compile ``model`` if needed, then ``run(exe, out_dir)`` with ``data.json`` written in
        a fresh temporary ``out_dir`` (removed afterwards, whatever happens); ``exe`` is the
        private path of the executable checked then (:func:`._cache_loaded.loadable`).

        An executable that does not run is rebuilt once and run again. Returns (what ``run``
        returned, the executable, compile seconds, seconds since compiling ended).
        """
        exe, compile_seconds = self.compile(
            model, progress=progress, cancel=cancel, verbose=verbose
        )
        start = time.perf_counter()
        if progress is not None:
            progress("sampling", 0.0)
        out_dir = Path(tempfile.mkdtemp(prefix="bbt-widget-cmdstan-"))
        with self._lock:
            shutdowns = self._shutdowns
        try:
            (out_dir / "data.json").write_text(json.dumps(data))
            try:
                result = run(_runnable(exe), out_dir)
            except _ExeBroken as broken:
                exe, seconds = self._rebuild(model, exe, broken, progress, cancel, verbose)
                compile_seconds += seconds
                try:
                    result = run(_runnable(exe), out_dir)
                except _ExeBroken as still:
                    raise unusable_build(
                        f"the compiled CmdStan model {model!r}",
                        self._target(model),
                        still,
                        "the C++ toolchain or the CmdStan installation",
                    ) from None
        except Exception:
            self._start_idle(shutdowns)  # e.g. a cancelled fit: the next one starts at once
            raise
        else:
            self._start_idle(shutdowns)  # not on KeyboardInterrupt or exit: no new process
        finally:
            shutil.rmtree(out_dir, ignore_errors=True)
        if progress is not None:
            progress("sampling", 1.0)
        return result, exe, compile_seconds, time.perf_counter() - start

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
        """Compile (if needed) and sample ``model`` with CmdStan; ``data`` is already
        validated."""
        seed = fresh_seed(settings.seed)

        def run(exe: Path, out_dir: Path) -> tuple[dict[str, Array], dict[str, Array]]:
            """Run the chains of one fit in a worker process; return (params, sampler)."""
            csvs = [out_dir / f"chain-{c}.csv" for c in range(1, settings.chains + 1)]
            reader = _ChainReader(csvs)
            self._execute(
                model,
                _commands(exe, out_dir / "data.json", out_dir, settings, seed),
                min(settings.chains, os.cpu_count() or 1),
                out_dir,
                total=settings.chains * settings.iterations,
                progress=progress,
                cancel=cancel,
                finished=reader.read,
                verbose=verbose,
            )
            return reader.result()

        (params, sampler), exe, compile_seconds, seconds = self._in_scratch(
            model, data, run, progress, cancel, verbose
        )
        add_empty_outputs(model, params, data)
        return Draws(
            params=params,
            sampler=sampler,
            engine=self.name,
            max_treedepth=settings.max_treedepth,
            timings={"compile": compile_seconds, "sample": seconds},
            info={
                "engine_version": self.version(),
                "stan_hash": program_hash(model),
                "model": model,
                "executable": str(exe),
                **settings.as_dict(),
                "seed": seed,
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
        """Draws of CmdStan's Laplace approximation of ``model``'s posterior (``optimize`` then
        ``laplace``, one after the other in a worker, cancellable as sampling is); ``data`` is
        already validated."""
        check_laplace_version()
        drawn = fresh_seed(seed)

        def run(exe: Path, out_dir: Path) -> dict[str, Array]:
            def finished(step: int) -> None:
                if step == 1 and progress is not None:
                    progress("sampling", 0.5)  # the mode found; the draws take about as long

            self._execute(
                model,
                _laplace_commands(exe, out_dir, draws, drawn),
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

        params, exe, compile_seconds, seconds = self._in_scratch(
            model, data, run, progress, cancel, verbose
        )
        add_empty_outputs(model, params, data)
        return Draws(
            params=params,
            sampler={},
            engine=self.name,
            timings={"compile": compile_seconds, "sample": seconds},
            info={
                "engine_version": self.version(),
                "stan_hash": program_hash(model),
                "model": model,
                "executable": str(exe),
                "seed": drawn,
                "method": "laplace",
                "draws": draws,
            },
        )


#: Every CmdStan engine of this process (one, from ``engines.get``, outside the tests), for
#: the hooks below.
_INSTANCES: weakref.WeakSet[CmdStanEngine] = weakref.WeakSet()


def _shutdown_all() -> None:
    for engine in list(_INSTANCES):
        engine.shutdown()


def _forget_all_workers() -> None:
    for engine in list(_INSTANCES):
        engine._forget_workers()


atexit.register(_shutdown_all)  # after _procs's handler, so it runs before it: a quiet exit

if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_forget_all_workers)
