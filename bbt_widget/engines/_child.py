"""One Stan job in a killable child process: the Stan engines' only way to run Stan.

The child (``_pystan_child.py`` or ``_cmdstan_child.py``, run as ``python <script>``) gets a
request as JSON and writes its draws into a scratch folder, which is also its working
directory, so that nothing it leaves (PyStan's ``build/``) reaches the caller's. It runs in a
session of its own: a cancel, an error, Ctrl-C or the interpreter's exit kills it with every
process it started (the sampler's chains). Its output (stdout and stderr) is read here for
progress and error messages and shown only when verbose. Nothing here uses asyncio, changes
the working directory or touches the process's stdio, so a fit runs from any thread, in or out
of Jupyter's running event loop.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import IO, Any

import numpy as np

from ..core.run_context import QUIET, RunContext
from .base import EngineError, FitCancelled

#: PyStan's progress line ("Sampling:  37% (1480/4000)", all chains together).
_PYSTAN_PROGRESS = re.compile(r"Sampling:.*\((\d+)/(\d+)\)")
#: CmdStan's, per chain ("Chain [2] Iteration:  300 / 2000 [ 15%]  (Warmup)").
_CMDSTAN_PROGRESS = re.compile(r"Chain \[(\d+)\] Iteration:\s*(\d+)\s*/\s*(\d+)")
#: How often the caller's thread checks the cancel event and reports progress (seconds).
POLL = 0.1
#: What a child that died abruptly (a signal, or a sampler process of its pool lost) means.
CRASH_ADVICE = (
    "a Stan process was killed or crashed. If the machine ran out of memory (the system then "
    "kills the largest process), fit fewer chains or draws; if it happens on every fit, the "
    "PyStan engine crashed on this platform: install CmdStan "
    '(`python -m cmdstanpy.install_cmdstan`) and fit with engine="cmdstanpy"'
)
_ABRUPT = ("terminated abruptly", "BrokenProcessPool")

#: The children running now, and their scratch folders (removed when they are killed).
_live: dict[subprocess.Popen[bytes], Path] = {}
_live_lock = threading.Lock()


def child_env(**extra: str) -> dict[str, str]:
    """The child's environment: ours, one BLAS thread (numpy's threads would compete with the
    chains on a small machine), and ``extra``. :func:`run` adds ``TMPDIR``."""
    env = {**os.environ, **extra}
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    return env


def _kill(proc: subprocess.Popen[bytes], *, remove: bool = True) -> None:
    """Kill ``proc`` and every process it started, then reap it; ``remove``: its scratch
    folder too."""
    if hasattr(os, "killpg"):  # POSIX: the child leads its own session
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    elif proc.poll() is None:  # Windows: its process tree
        subprocess.run(["taskkill", "/T", "/F", "/PID", str(proc.pid)], capture_output=True)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()
    proc.wait()
    with _live_lock:
        scratch = _live.pop(proc, None)
    if remove and scratch is not None:  # the interpreter may be ending (a signal)
        shutil.rmtree(scratch, ignore_errors=True)


def stop_all() -> None:
    """Kill every child running now (the fits they serve raise)."""
    with _live_lock:
        running = list(_live)
    for proc in running:
        _kill(proc)


class _Output:
    """The child's output lines, read by a thread, and the progress they report."""

    def __init__(self, proc: subprocess.Popen[bytes], chains: int, verbose: bool) -> None:
        self.lines: list[str] = []
        #: Each progress line's share of all chains' iterations done, in order.
        self.fractions: list[float] = []
        self._chains: dict[str, tuple[int, int]] = {}
        self._n_chains = chains
        self._verbose = verbose
        self._thread = threading.Thread(target=self._read, args=(proc,), daemon=True)
        self._thread.start()

    def _read(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        with proc.stdout:  # closed at the end of the output, not when collected
            self._read_lines(proc.stdout)

    def _read_lines(self, stream: IO[bytes]) -> None:
        for raw in stream:
            line = raw.decode(errors="replace").rstrip()
            if self._verbose:
                sys.stderr.write(line + "\n")
            self.lines.append(line)
            if match := _PYSTAN_PROGRESS.search(line):
                self.fractions.append(int(match[1]) / max(1, int(match[2])))
            elif match := _CMDSTAN_PROGRESS.search(line):
                self._chains[match[1]] = (int(match[2]), int(match[3]))
                done = sum(i for i, _ in self._chains.values())
                total = max(n for _, n in self._chains.values()) * self._n_chains
                self.fractions.append(done / max(1, total))

    def wait_read(self) -> None:
        """Wait (a few seconds at most) until every line the child wrote has been read."""
        self._thread.join(timeout=5.0)

    def join(self) -> str:
        """The last lines of the output, without Python tracebacks (httpstan's server logs
        the errors it returns with theirs; the reason is in the error)."""
        self._thread.join(timeout=5.0)
        kept = [
            line
            for line in self.lines
            if line.strip() and not line.startswith(("Traceback", "  ", "Error handling"))
        ]
        return "\n".join(kept[-20:])


def _follow(
    proc: subprocess.Popen[bytes],
    output: _Output,
    context: RunContext,
) -> None:
    """Wait for the child in the caller's thread: report progress, kill it on cancel. The
    lines read after the last look are reported once the child has ended (a chain that ends
    just before the child does is reported too)."""
    reported = 0  # progress lines reported
    ended = False
    while not ended:
        try:
            proc.wait(timeout=POLL)
            output.wait_read()
            ended = True
        except subprocess.TimeoutExpired:
            if context.cancelled:
                _kill(proc)
                raise FitCancelled("fit cancelled") from None
        fractions = output.fractions[reported:]
        reported += len(fractions)
        for fraction in fractions:
            context.report("sampling", min(1.0, fraction))


def run(
    script: str,
    request: dict[str, Any],
    *,
    env: dict[str, str],
    context: RunContext = QUIET,
    verbose: bool = False,
    what: str = "Stan",
) -> tuple[dict[str, np.ndarray], str]:
    """Run ``script`` (beside this module) on ``request``; return the arrays it saved and
    the contents of its ``built.txt`` (the compiled model's place). Progress is reported
    from the sampler's lines, as ``("sampling", fraction of all chains' iterations)``.

    Raises
    ------
    FitCancelled
        The context's cancel was set (the child is killed).
    EngineError
        The child failed: its reason and the end of its output.
    """
    context.check("cancelled before it started")
    scratch = Path(tempfile.mkdtemp(prefix="bbt"))  # short: httpstan binds sockets in it
    try:
        request_path = scratch / "request.json"
        request_path.write_text(json.dumps({**request, "out_dir": str(scratch)}))
        args = [sys.executable, str(Path(__file__).with_name(script)), str(request_path)]
        kwargs: dict[str, Any] = {}
        if sys.platform == "win32":  # Ctrl+C in the console does not reach it
            kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP
        proc = subprocess.Popen(
            args,
            cwd=scratch,
            env=_with_tmpdir(env, scratch),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            **kwargs,
        )
        with _live_lock:
            _live[proc] = scratch
        try:
            output = _Output(proc, int(request.get("chains", 1)), verbose)
            _follow(proc, output, context)
        finally:
            # already ended, or an interrupt while following: its chains too; its files are
            # read below, then removed
            _kill(proc, remove=False)
        tail = output.join()
        error = scratch / "error.txt"
        if proc.returncode != 0 or error.exists():
            reason = error.read_text().strip() if error.exists() else _died(proc.returncode)
            if proc.returncode < 0 or any(word in reason for word in _ABRUPT):
                reason += f": {CRASH_ADVICE}"
            raise EngineError(f"{what} failed: {reason}" + (f"; output:\n{tail}" if tail else ""))
        built = scratch / "built.txt"
        draws = scratch / "draws.npz"
        arrays: dict[str, np.ndarray] = {}
        if draws.exists():
            with np.load(draws) as saved:  # closed here, not when collected
                arrays = {name: saved[name] for name in saved.files}
        return arrays, built.read_text() if built.exists() else ""
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


#: The longest TMPDIR a child gets in its scratch folder: httpstan binds Unix sockets there,
#: whose paths (TMPDIR + "/httpstan_XXXXXXXX.sock") must stay within 107 bytes.
_MAX_TMPDIR = 80


def _with_tmpdir(env: dict[str, str], scratch: Path) -> dict[str, str]:
    """``env`` with the scratch folder as ``TMPDIR``, so that what the compiler and httpstan
    leave there (a killed compile's files) goes with it; unless its path is too long for a
    socket's, when the child keeps ours."""
    return {**env, "TMPDIR": str(scratch)} if len(str(scratch)) <= _MAX_TMPDIR else env


def _died(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = str(-returncode)
        return f"the process was killed by signal {name}"
    return f"the process ended with exit code {returncode}"


atexit.register(stop_all)


_builds: dict[str, Future[None]] = {}
_builds_lock = threading.Lock()


def _build_thread(key: str, future: Future[None], build: Callable[[], None]) -> None:
    failed: BaseException | None = None
    try:
        build()
    except BaseException as error:  # handed to every fit waiting for it
        failed = error
    # forgotten before anyone waiting hears the outcome: a call right after a failed build
    # starts a new build instead of joining the finished one (and its stale error)
    with _builds_lock:
        _builds.pop(key, None)
    if failed is None:
        future.set_result(None)
    else:
        future.set_exception(failed)


def ensure_built(
    key: str,
    build: Callable[[], None],
    context: RunContext,
) -> None:
    """Run ``build`` once for ``key`` (joining a build of it already under way) in a thread of
    its own, and wait for it: progress ``("compiling", nan)`` about once a second, and a
    cancel stops the waiting, not the build, which goes on for the next fit (a compile takes
    up to a minute, and the widget cancels its fits at every change of a control).

    Raises
    ------
    FitCancelled
        The context's cancel was set.
    EngineError
        The build failed (the next call tries again).
    """
    with _builds_lock:
        future = _builds.get(key)
        if future is None:
            future = _builds[key] = Future()
            threading.Thread(
                target=_build_thread, args=(key, future, build), daemon=True, name="bbt-compile"
            ).start()
    waited = 0
    while True:
        context.check("cancelled while the Stan model was compiling")
        if waited % round(1 / POLL) == 0:
            context.report("compiling", math.nan)
        try:
            future.result(timeout=POLL)
            return
        except FutureTimeout:
            waited += 1
