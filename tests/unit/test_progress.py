"""Progress on a text stream: tqdm bars on a terminal, plain lines in a log (CI, a file).

The command line's progress (``bbt_widget.cli_commands.progress``) and the batch functions'
``text_progress`` (``bbt_widget.lab.progress``) share the bar; what each writes in a log is
checked here line by line, what each draws on a terminal by its bar's parts.
"""

from __future__ import annotations

import io
import math
import re
import time

from bbt_widget import cli
from bbt_widget.cli_commands.progress import Silent
from bbt_widget.lab.batch import text_progress


class _Terminal(io.StringIO):
    """A stream that says it is a terminal, as stderr does in an interactive shell."""

    def isatty(self) -> bool:
        return True


def test_text_progress_writes_plain_lines_in_a_log():
    stream = io.StringIO()
    report = text_progress(stream)
    report("compiling", math.nan)
    for done in (0.0, 0.04, 0.33, 0.35, 0.5, 1.0):
        report("fitting", done)
    text = stream.getvalue()
    assert "\r" not in text  # a log keeps every line readable
    assert text.splitlines() == [
        "compiling the Stan model...",
        "fitting...",
        "fitting: 0%",
        "fitting: 30%",
        "fitting: 50%",
        "fitting: 100%",
    ]


def test_text_progress_draws_a_bar_on_a_terminal():
    stream = _Terminal()
    report = text_progress(stream, width=10)
    report("fitting", 0.0)
    report("fitting", 1.0)
    last = stream.getvalue().rstrip("\n").split("\r")[-1]
    assert last.startswith("fitting... 100% |##########| ")
    assert stream.getvalue().endswith("\n")  # the finished bar stays, the next line is free
    # the same stage run again (a second batch) draws a new bar
    report("fitting", 0.0)
    report("fitting", 1.0)
    assert stream.getvalue().count("100% |##########|") == 2


def test_cli_progress_draws_a_bar_on_a_terminal_then_a_done_line():
    stream = _Terminal()
    progress = cli._Progress(stream)
    progress("sampling", 0.0)
    time.sleep(0.15)  # past the bar's shortest redraw interval
    progress("sampling", 0.5)
    progress.done("fitted in 1.0 s")
    text = stream.getvalue()
    assert "sampling...  50% |" in text
    # the bar is cleared and a line says how long the stage took
    assert re.search(r"\rsampling\.\.\. done in \d+\.\d s\nfitted in 1\.0 s\n$", text)


def test_cli_progress_clock_moves_while_compiling_on_a_terminal():
    stream = _Terminal()
    progress = cli._Progress(stream)
    progress.every = 0.05
    progress("compiling", math.nan)
    time.sleep(1.2)
    progress.done()
    text = stream.getvalue()
    note = "compiling the Stan model (first run on this machine, then cached)... "
    assert note + "00:00" in text and note + "00:01" in text
    assert re.search(r"\rcompiling\.\.\. done in \d+\.\d s\n$", text)


def test_quiet_progress_writes_nothing_even_on_a_terminal():
    stream = _Terminal()
    quiet = Silent(stream)
    quiet("compiling", math.nan)
    quiet("sampling", 0.5)
    quiet.done("fitted in 1.0 s")
    assert stream.getvalue() == ""


class _Clock:
    """A clock that a test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_cli_progress_says_the_time_left_of_a_long_stage_in_a_log():
    stream, clock = io.StringIO(), _Clock()
    progress = cli._Progress(stream, clock=clock)
    # a stage at an even pace of 0.8 s per 1%, reported every 5%
    for pct in range(0, 101, 5):
        clock.now = 1000.0 + 0.8 * pct
        progress("sampling", pct / 100)
    progress.done()
    lines = stream.getvalue().splitlines()
    assert lines[0] == "sampling..."
    # one line per tenth done, the time left at the pace so far (none at 5%: 4 s < ETA_AFTER)
    left = [72, 64, 56, 48, 40, 32, 24, 16, 8]
    assert lines[1:-1] == [
        f"sampling {10 * tenth}% - about {s} s left" for tenth, s in enumerate(left, 1)
    ]
    assert lines[-1] == "sampling: done in 80.0 s"


def test_cli_progress_time_left_follows_the_pace():
    stream, clock = io.StringIO(), _Clock()
    progress = cli._Progress(stream, clock=clock)
    progress("sampling", 0.0)
    clock.now += 60
    progress("sampling", 0.2)  # 1 min for 20%: 4 min left
    clock.now += 6
    progress("sampling", 0.4)  # then faster: 66 s for 40%, 99 s (2 min) left
    assert stream.getvalue().splitlines()[1:] == [
        "sampling 20% - about 4 min left",
        "sampling 40% - about 2 min left",
    ]


def test_a_short_stage_shows_no_time_left():
    """A fit of a few seconds (or less) shows no estimate: too little to extrapolate from."""
    stream, clock = io.StringIO(), _Clock()
    progress = cli._Progress(stream, clock=clock)
    for pct in range(0, 101, 10):
        clock.now = 1000.0 + pct * 0.04  # 4 s in all
        progress("sampling", pct / 100)
    progress.done()
    assert "left" not in stream.getvalue()
    terminal = _Terminal()
    progress = cli._Progress(terminal, clock=clock)
    progress("sampling", 0.0)
    progress("sampling", 0.5)
    progress.done()
    assert "left" not in terminal.getvalue()


def test_cli_progress_shows_the_time_left_on_the_terminal_bar():
    stream, clock = _Terminal(), _Clock()
    progress = cli._Progress(stream, clock=clock)
    progress("sampling", 0.0)
    clock.now += 120
    time.sleep(0.15)  # past the bar's shortest redraw interval
    progress("sampling", 0.4)  # 2 min for 40%: 3 min left
    progress.done()
    assert re.search(r"sampling\.\.\.  40% \|.*\| \d\d:\d\d, about 3 min left", stream.getvalue())
