"""How the ``bbt-widget`` process ends once its command is done: at once, without the
interpreter's teardown.

A report's process has imported some thousand modules (pandas, Altair, SciPy, jinja2, ...);
Python's own exit then frees every module and object one by one, CPU time spent after the
report is written, when nothing is left to do (see the performance page). So the
command's process runs what an exit must run, the ``atexit`` handlers (the engines stop
their child processes and remove their temporary folders there, logging flushes), flushes
its output and ends with ``os._exit``. Every file the package writes is closed by then (all
are written in ``with`` blocks). A thread still at work other than a daemon (which an exit
would wait for) makes it exit the usual way instead.

Only the command's entry points use it (``python -m bbt_widget`` and the ``bbt-widget``
script): ``cli.main`` itself returns its exit code to a caller in Python.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
from typing import NoReturn


def exit_now(code: int) -> NoReturn:
    """End the process with exit code ``code`` (see the module documentation)."""
    others = [t for t in threading.enumerate() if t is not threading.main_thread()]
    if any(t.is_alive() and not t.daemon for t in others):
        sys.exit(code)  # the usual exit, which waits for them
    try:
        # what Python's exit runs before its teardown; a failing handler is printed, as there
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed pipe: nothing more to say there
                stream.flush()
        os._exit(code)
