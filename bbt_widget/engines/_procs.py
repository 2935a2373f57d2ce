"""Child processes the engines start: each in its own process group, killed as a group.

Compiles and samplers run in subprocesses so that they can be stopped at any moment
(cancellation) and so that their output, working files and crashes never reach the user's
process. Every group still alive when the interpreter exits is killed then. On POSIX a group is
a session (``setsid``) killed with ``killpg``; on Windows, which has no such groups, a process is
started in a new console process group (so that Ctrl+C in the user's console does not reach it)
and its tree is killed with ``taskkill /T``. Nothing here reads ``/proc``.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import sys
import threading
from typing import Any

_live: dict[int, subprocess.Popen[bytes]] = {}
_live_lock = threading.Lock()


def child_env() -> dict[str, str]:
    """Environment for engine subprocesses.

    One BLAS thread each: numpy's OpenBLAS otherwise starts a thread per core in every worker,
    and their spinning measurably slows the samplers on a small machine.
    """
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    return env


def spawn(args: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """Start ``args`` as the leader of a new process group and remember it for cleanup."""
    kwargs.setdefault("stdin", subprocess.DEVNULL)
    kwargs.setdefault("env", child_env())
    if sys.platform == "win32":
        kwargs.setdefault("creationflags", subprocess.CREATE_NEW_PROCESS_GROUP)
    proc = subprocess.Popen(args, start_new_session=True, **kwargs)  # POSIX: setsid
    with _live_lock:
        _live[proc.pid] = proc
    return proc


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill ``proc`` and everything it started (its process group), then reap it."""
    if hasattr(os, "killpg"):  # POSIX; spawn() made proc the leader of its group
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    elif proc.poll() is None:  # Windows: the tree, while proc's pid is still its own
        kill_tree_windows(proc.pid)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()
    proc.wait()
    forget(proc)


def kill_tree_windows(pid: int) -> None:
    """Windows: kill ``pid`` and its descendants with the system's ``taskkill /T``."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(
            ["taskkill", "/F", "/T", "/PID", str(pid)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=30,
        )


def forget(proc: subprocess.Popen[bytes]) -> None:
    """Stop tracking ``proc`` (it has exited and been waited for)."""
    with _live_lock:
        _live.pop(proc.pid, None)


def kill_all() -> None:
    """Kill every process group the engines started that is still tracked (or its leftovers)."""
    with _live_lock:
        procs = list(_live.values())
    for proc in procs:
        if proc.poll() is None:
            kill_group(proc)
        elif hasattr(os, "killpg"):
            # the leader exited, but a forked chain could still be running in its group
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)


def _forget_all() -> None:
    """In a forked child: the groups are the parent's, not the child's to kill at its exit."""
    global _live_lock
    _live.clear()
    _live_lock = threading.Lock()  # a thread of the parent may have held it at the fork


atexit.register(kill_all)
if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_forget_all)


def killed_by(signum: int) -> str:
    """Why a process ended by signal ``signum`` died, in words for an error message."""
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    text = f"was killed by {name} (signal {signum})"
    if signum == getattr(signal, "SIGKILL", None):
        text += (
            "; the likely cause is memory: the system's out-of-memory killer sends SIGKILL. "
            "Free memory, or use fewer draws (iter_sampling) or chains, or fewer algorithms"
        )
    return text
