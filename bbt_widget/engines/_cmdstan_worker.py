"""Run the CmdStan chains of one fit (run as a script, not imported).

Usage: ``python _cmdstan_worker.py``, then the request as one line of JSON on stdin. The
request holds ``commands`` (one CmdStan command line per chain), ``parallel`` (chains run at
once; they start in their order, each only while no chain has failed: with 1, each command
runs after the one before it has ended well, as the Laplace approximation's ``optimize`` then
``laplace`` need), ``out_dir`` (where each chain's console output goes, as
``chain-<c>.log``) and ``env`` (the chains' environment, as of the fit: this process may have
been started long before; absent, they inherit this process's). The engine starts a worker
ahead of the fit that will use it (after each fit, for the next one), so that the
interpreter's start-up is not part of a fit; an idle worker whose stdin closes before a
request exits quietly.

The cmdstanpy engine starts this script as the leader of a process group (a session on POSIX)
of its own, and the chains are its children, so the fit is one unit that can be stopped on
every platform:

- closing this process's stdin (or writing anything to it) stops the fit: the chains are
  killed, ``out_dir`` is removed and this process exits. That is how the engine cancels a
  fit, and it also happens by itself when the engine's process dies (its end of the pipe
  closes), on Linux, macOS and Windows alike, without ``/proc`` or process groups;
- should this process be killed instead, the chains die on their next progress line (their
  stdout is a pipe to us: SIGPIPE / EPIPE), and on POSIX the engine kills the group anyway.

Status lines on stdout, one per event: ``progress <chain> <iteration>`` (from CmdStan's
``Iteration: 100 / 2000 [  5%]`` lines), ``finished <chain>`` when a chain has ended well (its
CSV file is complete: the engine reads it while the other chains run), then ``done``, or
``failed <chain> <exit code> <lines of output>`` (a negative exit code is the signal that ended
the chain; the other chains are stopped at once: the fit is lost), or ``exec-failed <chain>
<reason>`` when the executable cannot be started at all.

Self-contained on purpose (stdlib only): it must not import bbt_widget, whose import is slow.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

#: How a chain ended: (exit code, lines of output), the error that stopped its start, or
#: None (not started: the fit was stopping).
_ChainResult = tuple[int, int] | str | None

_ITERATION = re.compile(rb"Iteration:\s*(\d+)\s*/\s*(\d+)")
_lock = threading.Lock()
_procs: list[subprocess.Popen[bytes]] = []
_stopping = threading.Event()
_cancelled = threading.Event()  # by the engine (or its death): _watch_stdin ends the process


def _send(text: str) -> None:
    with _lock:
        try:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()
        except OSError:  # the engine stopped listening (cancelled): it is stopping us
            pass


def _kill_chains() -> None:
    _stopping.set()
    with _lock:
        procs = list(_procs)
    for proc in procs:
        if proc.poll() is None:
            try:
                proc.kill()  # SIGKILL on POSIX, TerminateProcess on Windows
            except OSError:
                pass
    for proc in procs:
        proc.wait()


def _watch_stdin(out_dir: Path) -> None:
    """Stop everything when the engine says so, or when it is gone (its pipe closes); then
    remove the fit's folder, which a dead engine can no longer do."""
    try:
        # the raw descriptor, not sys.stdin: a daemon thread blocked in a buffered read would
        # keep the interpreter from finalizing ("could not acquire lock for <stdin>")
        os.read(sys.stdin.fileno(), 1)
    except OSError:
        pass
    _cancelled.set()
    _kill_chains()
    shutil.rmtree(out_dir, ignore_errors=True)
    os._exit(3)


def _relay(
    chain: int, proc: subprocess.Popen[bytes], log_path: Path, counts: dict[int, int]
) -> None:
    """Copy a chain's console output to its log, reporting the iteration lines as progress."""
    assert proc.stdout is not None
    with open(log_path, "wb") as log:
        for line in proc.stdout:
            counts[chain] += 1
            found = _ITERATION.search(line)
            if found:
                _send(f"progress {chain} {int(found.group(1))}")
            else:
                log.write(line)


def _first_to_stop() -> bool:
    """Whether this caller is the first to stop the fit (only the first failure is reported)."""
    with _lock:
        first = not _stopping.is_set()
        _stopping.set()
    return first


def _run_chain(
    chain: int,
    command: list[str],
    out_dir: Path,
    env: dict[str, str] | None,
) -> _ChainResult:
    """Run one chain; return (exit code, lines of output) or the error."""
    counts = {chain: 0}
    try:
        with _lock:  # so that _kill_chains either sees this chain or stops its start
            if _stopping.is_set():
                return None
            proc = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=out_dir,
                env=env,
            )
            _procs.append(proc)
    except OSError as exc:  # e.g. a truncated executable: "Exec format error"
        return f"{type(exc).__name__}: {exc}"
    _relay(chain, proc, out_dir / f"chain-{chain}.log", counts)
    return proc.wait(), counts[chain]


def _report(chain: int, result: _ChainResult) -> None:
    """Say how a chain ended (see the module's docstring); the first failure stops the fit."""
    failed = isinstance(result, str) or (isinstance(result, tuple) and result[0] != 0)
    if result is not None and not failed:
        _send(f"finished {chain}")
    if failed and _first_to_stop():
        # the fit is lost: do not make the user wait for the other chains
        if isinstance(result, str):
            _send(f"exec-failed {chain} {result}"[:2000].replace("\n", " "))
        elif result is not None:  # (exit code, lines of output)
            _send(f"failed {chain} {result[0]} {result[1]}")
        _kill_chains()


def _read_request() -> dict[str, Any]:
    """The request: the first line on stdin, read from the raw descriptor (see _watch_stdin)."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(sys.stdin.fileno(), 1 << 16)
        if not chunk:  # the engine shut us down, or died, before handing us a fit
            sys.exit(0)
        data += chunk
    request: dict[str, Any] = json.loads(data)
    return request


def main() -> int:
    request = _read_request()
    out_dir = Path(request["out_dir"])
    threading.Thread(target=_watch_stdin, args=(out_dir,), daemon=True).start()
    slots = threading.Semaphore(max(1, int(request["parallel"])))

    def run(chain: int, command: list[str]) -> None:
        try:
            _report(chain, _run_chain(chain, command, out_dir, request.get("env")))
        finally:
            # only now: a failure has stopped the fit before the next command can start
            slots.release()

    threads = []
    for chain, command in enumerate(request["commands"], start=1):
        # a slot is taken here, not in the chain's thread: the chains start in their order
        # (threads waiting on a semaphore wake in no set order), so that with parallel=1 a
        # command may use what the one before it wrote
        slots.acquire()
        thread = threading.Thread(target=run, args=(chain, command), daemon=True)
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join()
    if _cancelled.is_set():  # the chains ended because _watch_stdin killed them: let it finish
        threading.Event().wait(60)
    if _stopping.is_set():
        return 1
    _send("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
