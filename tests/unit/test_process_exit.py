"""How the command's process ends (``cli_commands.process_exit.exit_now``): with the command's
exit code and all of its output, after the ``atexit`` handlers (the engines clean up there),
without the interpreter's teardown of every module; a thread still at work is waited for."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

_PROGRAM = textwrap.dedent(
    """
    import atexit, sys, threading, time


    class Teardown:
        def __del__(self):
            print("teardown ran", flush=True)


    kept = Teardown()  # freed by the interpreter's teardown, if it runs
    atexit.register(lambda: print("atexit ran"))
    if sys.argv[1] == "thread":
        threading.Thread(target=lambda: (time.sleep(0.5), print("thread done"))).start()
    print("x" * 100_000)  # more than a pipe's buffer: flushed before the end
    if sys.argv[2] == "exit_now":
        from bbt_widget.cli_commands.process_exit import exit_now

        exit_now(3)
    sys.exit(3)
    """
)


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", _PROGRAM, *args], capture_output=True, text=True, timeout=120
    )


def test_exit_now_runs_the_atexit_handlers_and_skips_the_teardown():
    plain = _run("alone", "sys.exit")
    assert plain.returncode == 3 and "teardown ran" in plain.stdout  # what it skips
    fast = _run("alone", "exit_now")
    assert fast.returncode == 3, fast.stderr
    assert "x" * 100_000 in fast.stdout and "atexit ran" in fast.stdout
    assert "teardown ran" not in fast.stdout


def test_exit_now_waits_for_a_thread_at_work_as_an_exit_does():
    done = _run("thread", "exit_now")
    assert done.returncode == 3, done.stderr
    assert "thread done" in done.stdout and "atexit ran" in done.stdout


@pytest.mark.parametrize(
    "entry", [["-m", "bbt_widget"], ["-c", "from bbt_widget.__main__ import run; run()"]]
)
def test_the_command_entry_points_end_with_the_commands_code(entry, tmp_path):
    """``python -m bbt_widget`` and the ``bbt-widget`` script (``__main__.run``) give the
    command's exit code and its whole message."""
    missing = tmp_path / "no such file.csv"
    out = subprocess.run(
        [sys.executable, *entry, "report", str(missing), "-o", str(tmp_path / "r.html")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 2, out.stderr
    assert "no such file.csv" in out.stderr
