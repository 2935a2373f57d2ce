"""Outputs are written whole or not at all: a write that fails midway (a full disk) leaves the
old file byte for byte and no temporary file. The real full disk (a 1 MiB tmpfs) is in
tests/security/test_full_disk.py."""

from __future__ import annotations

import errno
import os
import warnings
from pathlib import Path

import pandas as pd
import pytest

from bbt_widget.outputs import export
from bbt_widget.outputs._atomic import (
    MANIFEST,
    atomic_path,
    atomic_replace_dir,
    atomic_write_bytes,
    atomic_write_text,
)

TABLE = pd.DataFrame({"algorithm": ["a", "b"], "p_best": [0.75, 0.25]})


def _snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (hidden ones too) with its content."""
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def _no_space(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _half_then_no_space(path_arg: int = 0):
    """A writer that writes half of a file, then finds the disk full (as write(2) does)."""

    def write(*args, **kwargs):
        target = Path(args[path_arg])
        target.write_bytes(b"half a fi")
        _no_space()

    return write


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "report.html"
    path.write_text("old report")
    before = _snapshot(tmp_path)
    with pytest.raises(OSError) as caught, atomic_path(path) as tmp:
        tmp.write_text("half a rep")
        _no_space()
    # the error names the caller's file, not the temporary one
    assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(path)
    assert _snapshot(tmp_path) == before


def test_a_new_file_is_not_left_half_written(tmp_path):
    path = tmp_path / "new.md"
    with pytest.raises(KeyboardInterrupt), atomic_path(path) as tmp:
        tmp.write_text("half")
        raise KeyboardInterrupt  # Ctrl-C mid-write: the same clean-up
    assert list(tmp_path.iterdir()) == []


def test_a_complete_write_replaces_the_file_and_keeps_its_mode(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("old")
    path.chmod(0o640)
    assert atomic_write_text(path, "new ✓") == path
    assert path.read_text(encoding="utf-8") == "new ✓" and path.stat().st_mode & 0o777 == 0o640
    atomic_write_bytes(tmp_path / "fresh.bin", b"\x00\x01")
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "fresh.bin").stat().st_mode & 0o777 == 0o666 & ~umask
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fresh.bin", "t.csv"]


def test_a_folder_is_replaced_whole_or_not_at_all(tmp_path):
    folder = tmp_path / "r_md_figures"
    with atomic_replace_dir(folder) as new:  # an older report's figures
        (new / "ranking.svg").write_text("old ranking")
        (new / "stale.svg").write_text("from an older report")
    before = _snapshot(tmp_path)
    with pytest.raises(OSError) as caught, atomic_replace_dir(folder) as new:
        (new / "ranking.svg").write_text("new ranking")
        _no_space()
    assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(folder)
    assert _snapshot(tmp_path) == before
    with atomic_replace_dir(folder) as new:
        (new / "ranking.svg").write_text("new ranking")
    # the old folder went as a whole: no stale figure survives, nothing else is left but
    # the list of what was written (which lets the next report replace the folder)
    after = _snapshot(tmp_path)
    assert after.pop(f"r_md_figures/{MANIFEST}").startswith(b"{")
    assert after == {"r_md_figures/ranking.svg": b"new ranking"}
    assert [p.name for p in tmp_path.iterdir()] == ["r_md_figures"]


def test_what_a_file_browser_leaves_in_a_folder_does_not_stop_its_replacement(tmp_path):
    folder = tmp_path / "r_md_figures"
    with atomic_replace_dir(folder) as new:
        (new / "ranking.svg").write_text("old")
    (folder / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")  # Finder showed the folder
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing is left behind to warn about
        with atomic_replace_dir(folder) as new:
            (new / "ranking.svg").write_text("new")
    assert sorted(_snapshot(tmp_path)) == [f"r_md_figures/{MANIFEST}", "r_md_figures/ranking.svg"]
    assert [p.name for p in tmp_path.iterdir()] == ["r_md_figures"]


def test_a_file_in_the_way_of_the_folder_is_left_alone(tmp_path):
    in_the_way = tmp_path / "r_tex_figures"
    in_the_way.write_text("mine")
    with pytest.raises(FileExistsError, match="r_tex_figures' is a file"):
        with atomic_replace_dir(in_the_way):
            pytest.fail("nothing may be written")
    assert in_the_way.read_text() == "mine" and len(list(tmp_path.iterdir())) == 1


@pytest.mark.parametrize("suffix", ["csv", "md", "tex"])
def test_save_table_on_a_full_disk_keeps_the_old_table(tmp_path, monkeypatch, suffix):
    path = tmp_path / f"summary.{suffix}"
    export.save_table(TABLE, path)
    before = _snapshot(tmp_path)
    monkeypatch.setattr(Path, "write_text", _half_then_no_space(0))
    with pytest.raises(OSError, match="No space left on device") as caught:
        export.save_table(TABLE.assign(p_best=[0.5, 0.5]), path)
    assert caught.value.filename == str(path)
    assert _snapshot(tmp_path) == before


def test_save_chart_on_a_full_disk_keeps_the_old_chart(tmp_path, monkeypatch):
    from bbt_widget.outputs import _atomic

    path = tmp_path / "chart.svg"
    path.write_bytes(b"<svg>old</svg>")
    monkeypatch.setattr(export, "render_charts", lambda *a, **k: [b"<svg>new</svg>"])
    # the disk reports the full disk when the data are flushed (delayed allocation, NFS)
    monkeypatch.setattr(_atomic.os, "fsync", _no_space)
    with pytest.raises(OSError, match="No space left on device"):
        export.save_chart({"mark": "point"}, path)
    assert _snapshot(tmp_path) == {"chart.svg": b"<svg>old</svg>"}
    monkeypatch.undo()
    monkeypatch.setattr(export, "render_charts", lambda *a, **k: [b"<svg>new</svg>"])
    export.save_chart({"mark": "point"}, path)
    assert _snapshot(tmp_path) == {"chart.svg": b"<svg>new</svg>"}


def test_a_folder_that_takes_no_file_is_named_by_the_callers_file(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    if os.access(folder, os.W_OK):  # root ignores modes; sysfs refuses new files even to it
        folder = Path("/sys")
    with pytest.raises(PermissionError) as caught:
        atomic_write_text(folder / "r.html", "report")
    assert caught.value.filename == str(folder / "r.html")
    with pytest.raises(PermissionError) as caught, atomic_replace_dir(folder / "r_md_figures"):
        pass
    assert caught.value.filename == str(folder / "r_md_figures")


def test_a_chart_spec_cache_write_that_fails_leaves_no_partial_file(tmp_path, monkeypatch):
    from bbt_widget.charts import spec_cache

    monkeypatch.setenv("BBT_WIDGET_CACHE", str(tmp_path / "cache"))

    def half_then_no_space(obj, fh, **kwargs):
        fh.write('{"half": ')
        _no_space()

    monkeypatch.setattr(spec_cache.json, "dump", half_then_no_space)
    spec_cache._cached_spec.cache_clear()
    try:
        spec = spec_cache.view_spec()  # built, served, and not cached
    finally:
        spec_cache._cached_spec.cache_clear()  # later tests read the default cache again
    assert "hconcat" in spec
    folder = spec_cache._spec_cache_path("view").parent
    assert folder.is_dir() and not list(folder.iterdir())
