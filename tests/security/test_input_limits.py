"""The command against an input with no end: ``bbt-widget report /dev/zero`` grew until it
was killed, and ignored SIGTERM while it read. It now stops at the input limit (exit 2, the
message naming the limit and how to raise it), and a SIGTERM stops the reading at once.

Each run is under ``ulimit -v`` (RLIMIT_AS), so that a lost limit fails the test with a
MemoryError instead of eating the machine's memory."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bbt_widget.core.csvfile import MAX_INPUT_ENV

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero"),
]

#: Address space of the command: its imports and a report need well under this.
_MEMORY = 4 << 30
#: Resident memory that says the command is reading: it needs about a quarter of this before.
_READING = 300 << 20


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (_MEMORY, _MEMORY))


def _command(tmp_path: Path, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "bbt_widget", "report", "/dev/zero", "-o", str(tmp_path / "r.html")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
        preexec_fn=_limited,
    )


def test_an_endless_input_stops_at_the_limit_and_says_how_to_raise_it(tmp_path):
    run = _command(tmp_path, **{MAX_INPUT_ENV: "20"})
    _out, err = run.communicate(timeout=120)
    assert run.returncode == 2, err
    assert "'/dev/zero' is larger than the input limit of 20 MB" in err
    assert f"raise the limit with the environment variable {MAX_INPUT_ENV}" in err
    assert "Traceback" not in err and "MemoryError" not in err


def _resident(pid: int) -> int:
    """The resident memory of process ``pid``, in bytes (0 once it has ended)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    line = next((x for x in status.splitlines() if x.startswith("VmRSS:")), "VmRSS: 0 kB")
    return int(line.split()[1]) * 1024


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_sigterm_stops_the_command_while_it_reads(tmp_path):
    # a limit above what the address space allows: a reading deaf to signals went on until
    # the memory ran out, tens of seconds, and only then obeyed
    run = _command(tmp_path, **{MAX_INPUT_ENV: "3500"})
    deadline = time.monotonic() + 120
    while _resident(run.pid) < _READING and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    assert run.poll() is None, run.communicate()
    sent = time.monotonic()
    run.send_signal(signal.SIGTERM)
    _out, err = run.communicate(timeout=120)
    took = time.monotonic() - sent
    assert run.returncode == 128 + signal.SIGTERM, err
    assert "stopped by SIGTERM" in err and "Traceback" not in err
    assert took < 3, f"the command took {took:.1f} s to obey SIGTERM"
