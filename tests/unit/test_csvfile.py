"""Reading results files: the separator and the decimal mark detected or given (``--sep``,
``--decimal``), and errors that say which separator a file seems to use."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget import cli

#: As a spreadsheet in much of Europe saves it: ';' between columns, decimal commas.
EUROPEAN = (
    "db;rf;svm;knn;dt;lr\n"
    "iris;0,85;0,9;0,8;0,7;0,75\n"
    "wine;0,95;0,92;0,9;0,85;0,88\n"
    "glass;0,7;0,72;0,65;0,6;0,66\n"
)
EXPECTED = pd.DataFrame(
    {
        "db": ["iris", "wine", "glass"],
        "rf": [0.85, 0.95, 0.7],
        "svm": [0.9, 0.92, 0.72],
        "knn": [0.8, 0.9, 0.65],
        "dt": [0.7, 0.85, 0.6],
        "lr": [0.75, 0.88, 0.66],
    }
)


def read_results(path, **kwargs):
    """The Python reader the command uses (imported here: the tests of the command run on
    their own without it)."""
    from bbt_widget.core.csvfile import read_results

    return read_results(path, **kwargs)


def sniff_separator(lines):
    from bbt_widget.core.csvfile import sniff_separator

    return sniff_separator(lines)


def _write(tmp_path: Path, text: str, name: str = "r.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _same(df: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(df, EXPECTED, check_dtype=False)
    assert all(pd.api.types.is_float_dtype(df[c]) for c in EXPECTED.columns[1:])


def test_a_european_csv_is_read_with_its_separator_and_decimal_commas(tmp_path):
    # it was "line 2: 6 fields, but the header has 1"
    path = _write(tmp_path, EUROPEAN)
    _same(cli.read_results(str(path)))
    _same(read_results(path, sep=";", decimal=","))
    _same(read_results(path, sep=";"))  # the decimal comma detected for the given separator


@pytest.mark.parametrize(
    ("text", "name"),
    [
        (EUROPEAN.replace(",", "."), "r.csv"),  # ';' with decimal points
        (EUROPEAN.replace(";", "\t"), "r.csv"),  # tabs in a .csv, decimal commas
        (EUROPEAN.replace(",", ".").replace(";", "|"), "r.txt"),
        (EUROPEAN.replace(",", ".").replace(";", ","), "r.csv"),  # the plain CSV
    ],
)
def test_other_separators_are_detected(tmp_path, text, name):
    _same(read_results(_write(tmp_path, text, name)))


def test_a_tab_can_be_given_by_name(tmp_path):
    _same(read_results(_write(tmp_path, EUROPEAN.replace(";", "\t")), sep="tab"))


def test_a_comma_file_stays_a_comma_file():
    # a name holding ';' and a quoted field: ',' still splits every line alike
    lines = ["db,a,b\n", '"x;y",0.5,0.6\n', "z;w,0.4,0.3\n"]
    assert sniff_separator(lines) == ","
    # where ',' splits the lines unevenly, the separator that splits them alike is taken
    assert sniff_separator(["db;a;b\n", "x;0.5;0,6\n"]) == ";"
    assert sniff_separator(["one column\n", "x\n"]) is None


def test_mixed_decimal_marks_keep_the_point(tmp_path):
    path = _write(tmp_path, "db;a;b\nx;0.5;0,6\ny;0.25;0.5\n")
    df = read_results(path)
    assert df["a"].tolist() == [0.5, 0.25] and df["b"].tolist() == ["0,6", "0.5"]


def test_a_file_read_with_the_wrong_separator_names_the_one_it_seems_to_use(tmp_path):
    path = _write(tmp_path, EUROPEAN)
    with pytest.raises(
        cli.InputError,
        match=r"header has 1 \(with separator ','\); it seems to use ';' \(pass --sep ';'\)",
    ):
        cli.read_results(str(path), sep=",")
    header_only = _write(tmp_path, "db;rf;svm\n", "h.csv")
    with pytest.raises(
        ValueError,
        match=r"reads as 1 column with separator '\|'; it seems to use ';' \(pass sep=';'\)",
    ):
        read_results(header_only, sep="|")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--sep", "ab"], "--sep 'ab': give the one character that separates the columns"),
        (["--sep", "x"], "--sep 'x': give the one character"),
        (["--sep", ",", "--decimal", ","], "the decimal mark cannot also separate the columns"),
    ],
)
def test_bad_separator_options_fail_before_the_fit(tmp_path, capsys, monkeypatch, options, message):
    monkeypatch.setattr(bbt, "fit", lambda *a, **k: pytest.fail("fitted"))
    path = _write(tmp_path, EUROPEAN)
    assert cli.main(["report", str(path), "-o", str(tmp_path / "r.html"), *options]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("options", [[], ["--sep", ";", "--decimal", ","], ["--sep", ";"]])
def test_the_report_command_reads_a_european_csv(tmp_path, monkeypatch, options):
    seen = {}

    def record(data, **kwargs):
        seen["data"] = data
        raise KeyboardInterrupt  # stop before sampling

    monkeypatch.setattr(bbt, "fit", record)
    path = _write(tmp_path, EUROPEAN)
    code = cli.main(["report", str(path), "-o", str(tmp_path / "r.html"), *options])
    assert code == 130
    # the fit is given the results as the command read them, once (long form)
    scores = seen["data"].frame.set_index(["dataset", "algorithm"])["score"]
    for row in EXPECTED.itertuples(index=False):
        for algorithm in EXPECTED.columns[1:]:
            assert np.isclose(scores[(row.db, algorithm)], getattr(row, algorithm))
    assert np.isclose(scores.xs("rf", level="algorithm").sum(), 2.5)


@pytest.mark.skipif(not Path("/dev/fd").is_dir(), reason="no /dev/fd")
def test_a_pipe_is_read_once():
    """A pipe (/dev/stdin, <(zcat results.csv.gz), here /dev/fd/N as bash's process
    substitution gives it) gives its text once: each of the reader's passes (detection, layout
    check, pandas) went on mid-file, and a correct file failed with "line 2: 4 fields, but the
    header has 1"."""
    rows = [f"d{i},{a},{f},0.{i:03d}{f}" for i in range(200) for a in "xyz" for f in range(4)]
    text = "db,alg,fold,acc\n" + "\n".join(rows) + "\n"
    # more than one read's buffer, less than the pipe's (the writer never blocks)
    assert 3 * 8192 < len(text) < 65536
    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "w") as w:
        w.write(text)
    try:
        df = read_results(f"/dev/fd/{read_end}")
    finally:
        os.close(read_end)
    assert df.shape == (len(rows), 4)
    assert df["db"].iloc[-1] == "d199" and df["acc"].iloc[-1] == pytest.approx(0.1993)


def test_long_form_columns_are_recognised_and_wide_results_are_not():
    from bbt_widget.core.csvfile import long_form_columns

    long = pd.DataFrame(
        {
            "task": ["iris", "iris", "wine", "wine"],
            "model": ["OurNet", "rf", "OurNet", "rf"],
            "split": [0, 0, 0, 0],
            "accuracy": [0.9, 0.8, 0.7, 0.75],
        }
    )
    assert long_form_columns(long) == {
        "dataset": "task",
        "algorithm": "model",
        "score": "accuracy",
        "fold": "split",
    }
    # no fold column; the data-set column given
    no_fold = long.drop(columns="split")
    assert long_form_columns(no_fold, "task")["fold"] is None
    assert long_form_columns(no_fold, "model")["algorithm"] == "task"  # as the user says
    wide = pd.DataFrame({"db": ["iris", "wine"], "rf": [0.8, 0.7], "svm": [0.9, 0.6]})
    assert long_form_columns(wide) is None
    assert long_form_columns(wide, "db") is None


def test_a_file_over_the_input_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    from bbt_widget.core.csvfile import MAX_INPUT_ENV, read_results

    path = tmp_path / "big.csv"
    path.write_text("db,a,b\n" + "d,0.5,0.6\n" * 200)  # 2007 bytes
    monkeypatch.setenv(MAX_INPUT_ENV, "0.002")  # 2000 bytes
    with pytest.raises(ValueError) as err:
        read_results(path)
    message = str(err.value)
    assert "larger than the input limit of 0.002 MB (2007 bytes)" in message
    assert f"raise the limit with the environment variable {MAX_INPUT_ENV}" in message
    monkeypatch.setenv(MAX_INPUT_ENV, "0.0021")
    assert read_results(path).shape == (200, 3)


def _pipe(tmp_path: Path, text: str) -> tuple[Path, threading.Thread]:
    """A named pipe a thread writes ``text`` into (then closes), as ``<(zcat r.csv.gz)``."""
    fifo = tmp_path / "results.csv"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "w") as f, contextlib.suppress(BrokenPipeError):
            f.write(text)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    return fifo, writer


def test_a_pipe_is_read_in_chunks_up_to_the_input_limit(tmp_path, monkeypatch):
    # a device or a pipe has no size to check first: /dev/zero grew until the process was
    # killed (the command's test reads /dev/zero itself, in a subprocess)
    from bbt_widget.core.csvfile import MAX_INPUT_ENV, read_results

    monkeypatch.setenv(MAX_INPUT_ENV, "0.01")  # 10 kB
    fifo, writer = _pipe(tmp_path, "db,a,b\n" + "d,0.5,0.6\n" * 2000)  # 20 kB
    with pytest.raises(ValueError, match=r"csv' is larger than the input limit of 0\.01 MB"):
        read_results(fifo)
    writer.join(5)


def test_a_pipe_under_the_input_limit_is_read_whole(tmp_path, monkeypatch):
    from bbt_widget.core.csvfile import MAX_INPUT_ENV, read_results

    monkeypatch.setenv(MAX_INPUT_ENV, "0.01")
    fifo, writer = _pipe(tmp_path, "db,a,b\n" + "d,0.5,0.6\n" * 50)
    assert read_results(fifo).shape == (50, 3)  # read once, into memory
    writer.join(5)


@pytest.mark.parametrize("given", ["0", "-5", "lots", "inf", "nan"])
def test_a_bad_input_limit_is_named(tmp_path, monkeypatch, given):
    from bbt_widget.core.csvfile import MAX_INPUT_ENV, read_results

    path = tmp_path / "r.csv"
    path.write_text("db,a,b\nd,0.5,0.6\n")
    monkeypatch.setenv(MAX_INPUT_ENV, given)
    with pytest.raises(ValueError, match=rf"{MAX_INPUT_ENV}={given!r} must be a number of MB"):
        read_results(path)
