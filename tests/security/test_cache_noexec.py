"""A model cache on a file system mounted ``noexec``.

The kernel refuses to map a module or run an executable from such a mount, which looks like
a broken build. The cache's mount is checked before anything is built or loaded, and the error
names the mount and the fix (``BBT_WIDGET_CACHE`` on another file system).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from test_cache_ownership import BT_DATA

from bbt_widget import engines
from bbt_widget.engines import _cache


def _fake_noexec(monkeypatch, mount: Path) -> None:
    """``os.statvfs`` reports ``noexec`` for every path under ``mount``."""
    real = os.statvfs

    def statvfs(path):
        result = real(path)
        if Path(path).is_relative_to(mount):
            fields = list(result)
            fields[8] |= os.ST_NOEXEC  # f_flag
            return os.statvfs_result(fields)
        return result

    monkeypatch.setattr(os, "statvfs", statvfs)


def test_a_noexec_cache_is_refused_before_any_build(tmp_path, monkeypatch, no_child):
    monkeypatch.setenv("BBT_WIDGET_CACHE", str(tmp_path / "cache"))
    _fake_noexec(monkeypatch, tmp_path)
    for engine in ("pystan", "cmdstanpy"):
        with pytest.raises(_cache.NoExecCacheError) as info:
            engines.get(engine).compile("bbt")
        message = str(info.value)
        assert "noexec" in message and str(tmp_path) in message, message
        assert "BBT_WIDGET_CACHE" in message, message
    assert no_child == [], "a build started on a noexec mount"


def test_an_exec_mount_passes(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("BBT_WIDGET_CACHE", str(root))
    real = os.statvfs(tmp_path)
    if real.f_flag & os.ST_NOEXEC:
        pytest.skip("the temporary folder is itself mounted noexec here")
    _cache.check_exec_mount(root / "pystan" / "bbt-1234")  # nothing raised


@pytest.fixture
def noexec_mount(tmp_path) -> Path:
    """A tmpfs mounted ``noexec`` (needs root and a kernel that lets this process mount)."""
    mount = tmp_path / "noexec"
    mount.mkdir(mode=0o700)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "noexec,mode=700", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace')}")
    yield mount
    engines.shutdown()
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_fit_from_a_real_noexec_cache_keeps_the_model(noexec_mount, good_build, monkeypatch):
    """A PyStan fit whose cache holds a good build on a real noexec mount: refused at once,
    naming the mount, and the build is kept."""
    root = noexec_mount / "cache"
    kept = root / "stan" / good_build.relative_to(engines._pystan._folder())
    _cache.make_private_dirs(kept.parent)
    shutil.copytree(good_build, kept)
    kept.chmod(0o700)
    files = sorted(p.name for p in kept.iterdir())
    monkeypatch.setenv("BBT_WIDGET_CACHE", str(root))
    with pytest.raises(_cache.NoExecCacheError) as info:
        engines.sample("bbt", BT_DATA, engine="pystan", seed=1, iter_warmup=50, iter_sampling=50)
    message = str(info.value)
    assert f"{noexec_mount}," in message and "BBT_WIDGET_CACHE" in message, message
    assert sorted(p.name for p in kept.iterdir()) == files, "the cached model was touched"
