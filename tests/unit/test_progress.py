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
