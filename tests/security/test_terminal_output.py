"""The command line never writes a control character from the data to the terminal.

A results file whose algorithm names hold ESC sequences could clear the screen, print fake
coloured lines ("FAKE: all claims verified"), set the window title or write the clipboard
(OSC 52) when the command printed its ranking and claims. Every line the command prints now
shows them as visible escapes (``\\x1b``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import bbt_widget as bbt
from bbt_widget import cli
from bbt_widget.cli_commands.terminal import escape_controls

HOSTILE = {
    "svm": "svm\x1b[2J\x1b]0;owned\x07",  # clear the screen, set the window title
    "lda": "FAKE\x1b[32m all claims verified\x1b[0m",  # a fake green line
    "dt": "dt\x1b]52;c;ZWNobyBvd25lZA==\x07",  # write the clipboard (OSC 52)
}


def test_escape_controls_keeps_text_and_shows_every_control():
    assert escape_controls("a\x1b[31mb\x07\x9bc\x7f") == "a\\x1b[31mb\\x07\\x9bc\\x7f"
    assert escape_controls("line\nnext\ttab") == "line\nnext\ttab"
    assert escape_controls("bar\r50%") == "bar\\x0d50%"
    assert escape_controls("bar\r50%", keep_cr=True) == "bar\r50%"
    assert escape_controls("café ∑ مرحبا") == "café ∑ مرحبا"


@pytest.mark.slow
def test_the_report_command_prints_hostile_names_escaped(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    data = bbt.datasets.load_base().rename(columns=HOSTILE)
    results = tmp_path / "hostile.csv"
    data.to_csv(results, index=False)
    code = cli.main(["report", str(results), "-o", str(tmp_path / "r.html")])
    out, err = capfd.readouterr()
    assert code == cli.EXIT_OK, err  # and the charts were drawn (exit 5 when they were not)
    for stream in (out, err):
        assert "\x1b" not in stream and "\x07" not in stream
    assert "svm\\x1b[2J\\x1b]0;owned\\x07" in out  # the ranking names them, visibly
    assert "FAKE\\x1b[32m all claims verified\\x1b[0m" in out


@pytest.mark.parametrize("char", ["\x1b", "\x07", "\x00", "\x0b", "\ufffe"])
def test_a_control_character_in_a_name_no_longer_drops_the_charts(char: str) -> None:
    """ESC, BEL, NUL, a vertical tab (Excel's line break in a cell) or U+FFFE in a name made
    the renderer (vl-convert) abort, and every chart of the report with it; the charts now
    show the character as a visible escape."""
    import altair as alt
    import pandas as pd

    from bbt_widget.outputs.export import render_charts

    frame = pd.DataFrame({"algorithm": [f"svm{char}x", "lgbm"], "p": [0.4, 0.6]})
    chart = alt.Chart(frame).mark_bar().encode(x="p:Q", y="algorithm:N")
    (svg,) = render_charts([chart], ["svg"])
    shown = escape_controls(f"svm{char}x")
    assert shown != f"svm{char}x" and shown.encode() in svg


def _outside_isolates(line: str) -> str:
    """``line`` without its isolated spans (FSI, LRI or RLI up to the matching PDI)."""
    out, depth = [], 0
    for ch in line:
        if ch in "\u2066\u2067\u2068":
            depth += 1
        elif ch == "\u2069" and depth:
            depth -= 1
        elif not depth:
            out.append(ch)
    return "".join(out)


def _assert_lines_isolate_bidi(text: str, where: str) -> None:
    """No bidi control and no right-to-left letter outside an isolate, on any line: a name
    holding U+202E mirrors the rest of its line, Hebrew turns the columns around."""
    import unicodedata

    reordering = {"R", "AL", "AN", "LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"}
    for line in text.splitlines():
        rest = _outside_isolates(line)
        left = [f"U+{ord(c):04X}" for c in rest if unicodedata.bidirectional(c) in reordering]
        assert not left, (where, left, line)


def test_every_terminal_table_isolates_bidi_names(hostile_res: bbt.BBTResult) -> None:
    """The tables the command prints (the report's ranking; demo's win table, summary and
    predictive checks) with right-to-left names and bidi controls: U+202E was printed raw in
    the ranking, where only the "better:" line isolated it."""
    from bbt_widget.cli_commands.common import fixed

    res = hostile_res
    tables = {
        "ranking": res.ranking(),
        "win table": res.win_table,
        "summary": res.summary(),
        "predictive checks": res.ppc_table(),
    }
    for where, frame in tables.items():
        text = fixed(frame)
        _assert_lines_isolate_bidi(text, where)
        if where != "predictive checks":  # a table of coverage, without names
            assert "\u05e2\u05d1\u05e8\u05d9\u05ea" in text, where  # the Hebrew name, isolated


def test_the_report_command_isolates_bidi_names_on_every_line(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    from hostile import BIDI

    data = bbt.datasets.load_base()
    data = data.rename(columns=dict(zip(["svm", "lda", "dt", "knn"], BIDI, strict=True)))
    results = tmp_path / "bidi.csv"
    data.to_csv(results, index=False)
    code = cli.main(["report", str(results), "-o", str(tmp_path / "r.md"), "--with", "none", "-q"])
    out, err = capfd.readouterr()
    assert code in (cli.EXIT_OK, cli.EXIT_CHARTS), err
    _assert_lines_isolate_bidi(out, "stdout")
    assert "P(right) override" in out  # the ranking names them
