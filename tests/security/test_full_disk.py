"""A full disk loses nothing: on a 1 MiB tmpfs, a report, its figures and the exported tables
are replaced whole or not at all, no temporary file is left, and the command says "no space
left on device: <path>" with exit code 2.

Mounting a tmpfs needs root and a machine that allows mounts (CI runs as root); elsewhere
these tests skip, and tests/unit/test_atomic_outputs.py covers the same paths with a simulated
full disk.
"""

from __future__ import annotations

import errno
import os
import subprocess
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

import bbt_widget as bbt
from bbt_widget import cli
from bbt_widget.outputs._atomic import atomic_replace_dir
from bbt_widget.outputs.export import export_all
from bbt_widget.outputs.methods_text import tables_folder
from bbt_widget.outputs.report import _render as report_render
from bbt_widget.outputs.report._render import figures_folder, write_report

pytestmark = pytest.mark.stan


@pytest.fixture(scope="module")
def result() -> bbt.BBTResult:
    with warnings.catch_warnings():  # short chains: the files, not the numbers, are tested
        warnings.simplefilter("ignore", bbt.DiagnosticsWarning)
        return bbt.fit(
            bbt.datasets.load_base(),
            dataset="db",
            engine="pystan",
            seed=5,
            chains=2,
            iter_warmup=300,
            iter_sampling=300,
        )


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs mounted on a fresh folder, unmounted afterwards."""
    where = tmp_path / "disk"
    where.mkdir()
    reason = "mounting a tmpfs needs root" if os.geteuid() != 0 else ""
    if not reason:
        proc = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(where)],
            capture_output=True,
            text=True,
            check=False,
        )
        reason = f"mount -t tmpfs failed: {proc.stderr.strip()}" if proc.returncode else ""
    if reason:
        # a container may forbid mounts even to root: the same paths then stay covered by the
        # simulated full disk of tests/unit/test_atomic_outputs.py
        pytest.skip(reason)
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=False)


def _fill(disk: Path, leave: int = 8192) -> None:
    """Fill the disk but for ``leave`` bytes."""
    fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT)
    written = 0
    try:
        while True:
            written += os.write(fd, b"\0" * 65536)
    except OSError as err:
        assert err.errno == errno.ENOSPC
    finally:
        os.close(fd)
    os.truncate(disk / "filler", max(0, written - leave))


def _snapshot(folder: Path) -> dict[str, bytes]:
    """Every file on the disk but the filler (hidden temporary files too), with its content."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "filler"
    }


def _report(result, monkeypatch, out: Path, capsys) -> tuple[int, str]:
    """``bbt-widget report`` on the base results (its fit replaced by the module's, which
    the outputs do not depend on), and its stderr."""
    data = out.parent.parent / "base.csv"
    bbt.datasets.load_base().to_csv(data, index=False)
    monkeypatch.setattr(bbt, "fit", lambda *a, **k: result)
    code = cli.main(["report", str(data), "-o", str(out), "-q"])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("suffix", ["html", "md"])
def test_report_on_a_full_disk_keeps_the_old_report(
    result, small_disk, monkeypatch, capsys, suffix
):
    out = small_disk / f"r.{suffix}"
    # the old report: other options, so the new one differs in every file
    write_report(result, out, hdi=0.95, rope=(0.4, 0.6))
    figures = figures_folder(out)
    if figures is not None:  # a figure only the old report wrote, as a report writes it
        with atomic_replace_dir(figures) as new:
            for old in figures.glob("*.svg"):
                (new / old.name).write_bytes(old.read_bytes())
            (new / "stale.svg").write_text("<svg/>")
    before = _snapshot(small_disk)
    # the report, its tables as CSV and their folder's manifest, and beside a .md one its
    # figures (headline and detail charts), the stale one and their manifest
    figure_count = len(report_render._HEADLINE_FIGURES + report_render._DETAIL_FIGURES)
    table_count = len(list(tables_folder(out).glob("*.csv")))
    assert table_count >= 7
    assert len(before) == table_count + 2 + (0 if suffix == "html" else figure_count + 2)
    _fill(small_disk)
    code, err = _report(result, monkeypatch, out, capsys)
    assert code == cli.EXIT_INPUT, err
    assert f"bbt-widget: error: no space left on device: {small_disk}/r" in err
    assert "unexpected" not in err
    # byte for byte the old files, and no temporary file beside them
    assert _snapshot(small_disk) == before
    # with room again, the new report replaces the old one, its figures folder as a whole
    (small_disk / "filler").unlink()
    code, err = _report(result, monkeypatch, out, capsys)
    assert code == cli.EXIT_OK, err
    after = _snapshot(small_disk)
    assert after[out.name] != before[out.name]
    assert not any("stale" in name or name.startswith(".") for name in after)


def test_report_on_a_full_disk_leaves_no_partial_file(result, small_disk, monkeypatch, capsys):
    out = small_disk / "r.md"
    _fill(small_disk)
    code, err = _report(result, monkeypatch, out, capsys)
    assert code == cli.EXIT_INPUT and "no space left on device" in err
    assert [p.name for p in small_disk.iterdir()] == ["filler"]


def test_export_all_on_a_full_disk_keeps_the_old_files(result, small_disk):
    folder = small_disk / "export"
    export_all(result, folder, hdi=0.95)
    before = _snapshot(small_disk)
    _fill(small_disk)
    with pytest.raises(OSError) as caught:
        export_all(result, folder)
    assert caught.value.errno == errno.ENOSPC
    assert str(caught.value.filename).startswith(str(folder))
    assert _snapshot(small_disk) == before
    # nothing existed: nothing is left, not even the folder made for the call
    with pytest.raises(OSError):
        export_all(result, small_disk / "new")
    assert sorted(p.name for p in small_disk.iterdir()) == ["export", "filler"]


def test_report_failing_midway_through_its_figures_keeps_them(result, tmp_path, monkeypatch):
    """The same without a tmpfs: the third figure finds the disk full."""
    out = tmp_path / "r.tex"
    write_report(result, out, hdi=0.95)
    before = _snapshot(tmp_path)
    written = []
    write_bytes = Path.write_bytes

    def third_fails(self: Path, data: bytes) -> int:
        written.append(self)
        if len(written) == 3:
            write_bytes(self, data[: len(data) // 2])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return write_bytes(self, data)

    monkeypatch.setattr(Path, "write_bytes", third_fails)
    with pytest.raises(OSError, match="No space left on device") as caught:
        write_report(result, out)
    assert caught.value.filename == str(figures_folder(out))
    assert len(written) == 3 and _snapshot(tmp_path) == before
