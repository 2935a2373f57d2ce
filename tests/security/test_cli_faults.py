"""The CLI on a failing machine: an output path it cannot write (issue 9, finding 15) and a
virtual memory limit that kills the chart renderer (finding 18)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import bbt_widget as bbt
from bbt_widget import cli

pytestmark = pytest.mark.stan


@pytest.fixture
def base_csv(base, tmp_path) -> Path:
    path = tmp_path / "base.csv"
    base.to_csv(path, index=False)
    return path


@pytest.fixture
def no_fit(monkeypatch) -> list:
    """Record any fit the CLI starts (none may start when the output is unwritable)."""
    calls: list = []
    monkeypatch.setattr(bbt, "fit", lambda *a, **k: calls.append(a) or pytest.fail("fitted"))
    return calls


def _read_only_folder(tmp_path: Path) -> Path:
    """A folder this process cannot create files in: a chmod 555 folder, or for root (who
    ignores modes) a read-only system folder."""
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError:
        return folder
    return Path("/sys")  # root: sysfs refuses new files


@pytest.mark.parametrize("suffix", ["html", "md", "tex"])
def test_output_onto_a_folder_fails_before_the_fit(base_csv, tmp_path, capsys, no_fit, suffix):
    folder = tmp_path / f"out.{suffix}"
    folder.mkdir()
    assert cli.main(["report", str(base_csv), "-o", str(folder), "-q"]) == cli.EXIT_INPUT
    err = capsys.readouterr().err
    assert "is a folder" in err and "report.html" in err
    assert no_fit == []


def test_output_into_a_read_only_folder_fails_before_the_fit(base_csv, tmp_path, capsys, no_fit):
    folder = _read_only_folder(tmp_path)
    out = folder / "report.md"
    assert cli.main(["report", str(base_csv), "-o", str(out), "-q"]) == cli.EXIT_INPUT
    err = capsys.readouterr().err
    assert f"cannot write to {str(folder)!r}" in err and "writable folder" in err
    assert no_fit == [] and not out.exists()


@pytest.mark.parametrize("below", ["r.html", "sub/r.html"])
def test_output_below_a_file_says_it_is_a_file(base_csv, tmp_path, capsys, no_fit, below):
    # the message was "folder '.../afile' does not exist", though it does, as a file
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    out = str(afile / below)
    assert cli.main(["report", str(base_csv), "-o", out, "-q"]) == cli.EXIT_INPUT
    err = capsys.readouterr().err
    assert f"{str(afile)!r} is a file, not a folder" in err and "does not exist" not in err
    assert no_fit == []


def test_output_in_a_missing_folder_says_to_create_it(base_csv, tmp_path, capsys, no_fit):
    out = str(tmp_path / "new" / "r.html")
    assert cli.main(["report", str(base_csv), "-o", out, "-q"]) == cli.EXIT_INPUT
    assert "does not exist; create it first (mkdir -p " in capsys.readouterr().err


@pytest.mark.parametrize("dataset", [["--dataset", "db"], []], ids=["given", "guessed"])
def test_group_naming_the_data_set_column_says_so(base_csv, tmp_path, capsys, no_fit, dataset):
    # the group column is taken out before the data sets are read: the message was
    # "--dataset 'db' is not a column", or that some algorithm column holds text
    out = str(tmp_path / "r.html")
    words = ["report", str(base_csv), *dataset, "--group", "db", "-o", out, "-q"]
    assert cli.main(words) == cli.EXIT_INPUT
    err = capsys.readouterr().err
    assert "--group 'db' is the" in err and "cannot be the data-set column" in err
    assert no_fit == []


@pytest.mark.parametrize("suffix", ["md", "tex"])
def test_figures_path_taken_by_a_file_fails_before_the_fit(
    base_csv, tmp_path, capsys, no_fit, suffix
):
    # the folder the report writes (the check looked at r_figures, which none writes)
    from bbt_widget.outputs.report._render import figures_folder

    in_the_way = tmp_path / f"r_{suffix}_figures"
    assert figures_folder(tmp_path / f"r.{suffix}") == in_the_way
    in_the_way.write_text("not a folder")
    out = str(tmp_path / f"r.{suffix}")
    assert cli.main(["report", str(base_csv), "-o", out]) == cli.EXIT_INPUT
    err = capsys.readouterr().err
    assert f"{str(in_the_way)!r} is a file where the report's figures folder goes" in err
    assert no_fit == [] and in_the_way.read_text() == "not a folder"


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS as on Linux HPC nodes")
def test_virtual_memory_limit_writes_the_report_without_charts(base_csv, tmp_path):
    import resource

    # 2 GiB of address space: Python, numpy, pandas and the PyStan fit run (they need about
    # 1 GiB), V8 cannot reserve its heap and aborts the renderer
    limit = 2 * 1024**3

    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    out = tmp_path / "report.md"
    env = {**os.environ, "PYTHONPATH": str(Path(bbt.__file__).parents[1])}
    short = ["--engine", "pystan", "--seed", "1", "--chains", "2", "--iter-warmup", "300"]
    proc = subprocess.run(
        [sys.executable, "-m", "bbt_widget", "report", str(base_csv), "-o", str(out), "-q", *short],
        preexec_fn=limit_memory,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == cli.EXIT_CHARTS, proc.stderr[-2000:]
    assert "could not render charts" in proc.stderr and "ulimit -v" in proc.stderr
    assert "wrote" in proc.stdout and "without charts" in proc.stdout
    text = out.read_text(encoding="utf-8")
    assert "Charts could not be rendered" in text
    assert "### P(a &gt; b) per pair" in text and "| xgb |" in text
    assert "## Methods and results" in text and "Bradley-Terry" in text


def test_python_write_to_a_missing_folder_says_so_before_any_fit(tmp_path, monkeypatch):
    """bbt.report.write checked its folder only when writing, after the fit and the charts:
    now it refuses before anything is computed, with the same reasons as the command."""
    from bbt_widget.fitting import PreparedFit

    no_fit: list = []
    monkeypatch.setattr(
        PreparedFit, "sample", lambda *a, **k: no_fit.append(a) or pytest.fail("fit")
    )
    data = bbt.datasets.load_base()
    with pytest.raises(ValueError, match="does not exist; create it first"):
        bbt.report.write(data, tmp_path / "new" / "r.html", dataset="db")
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    with pytest.raises(ValueError, match="is a file, not a folder"):
        bbt.report.write(data, afile / "r.html", dataset="db")
    assert no_fit == []
