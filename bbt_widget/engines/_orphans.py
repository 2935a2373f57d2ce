"""No orphans: helper processes that end, and clean up, when the process that started them dies.

Imported by the engines' helper scripts (``_pystan_build.py``, ``_cmdstan_build.py``,
``_pystan_worker.py``), which run as ``python <script>`` and so find this file beside them on
``sys.path``; stdlib only, and it must not import bbt_widget (slow, and not needed there).

The engine's process may die without running any cleanup: SIGTERM from ``timeout``, CI or a
Jupyter kernel shutdown, SIGKILL from the out-of-memory killer. Each helper leads its own
process group (the engine starts it so), so a watcher thread that sees the parent gone can
remove the helper's temporary folders and then kill the whole group, including the
grandchildren (``g++``, ``cc1plus``, forked chains) that no parent-death signal reaches.
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from collections.abc import Sequence


def die_with_parent() -> None:
    """Linux: get SIGKILL when the thread that started this process exits.

    For processes with nothing to clean up (forked chains). Tied to the starting *thread*, not
    its process, so only for processes whose starter waits for them.
    """
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _watch(parent: int, paths: Sequence[str], interval: float) -> None:
    while os.getppid() == parent:
        time.sleep(interval)
    for path in paths:
        shutil.rmtree(path, ignore_errors=True)
    if hasattr(os, "killpg"):
        os.killpg(0, signal.SIGKILL)  # we lead our group: this ends us and everything we started
    else:  # Windows: our tree, with the system's taskkill
        import subprocess

        subprocess.run(["taskkill", "/F", "/T", "/PID", str(os.getpid())], capture_output=True)
        os._exit(1)


def watch_parent(paths: Sequence[str] = (), interval: float = 0.2) -> None:
    """When our parent process dies, remove ``paths`` and kill our process group.

    Starts a daemon thread polling the parent pid (a dead parent's children are re-parented,
    so the pid changes). Call it early, before any grandchild starts.
    """
    thread = threading.Thread(
        target=_watch, args=(os.getppid(), list(paths), interval), daemon=True
    )
    thread.start()
