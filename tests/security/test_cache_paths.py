"""The way to the model cache: links and the folders above it.

Checking the folders from the cache root down is not enough: another user could still get
their code run through a symbolic link of theirs on the way to the root (pointing at the
user's own private cache while it is checked, and at their folder when the module is loaded),
or through a folder above the root that they may write (renaming the cache folder aside and
putting theirs in its place between the check and the load). With every folder up to ``/``
checked and no link of another user's followed, no one else can swap anything between the
check and the load. These tests show those rules.
"""

from __future__ import annotations

import os

import pytest

from bbt_widget.engines import _cache, _cache_checks

NOBODY = 65534


# ----------------------------------------------------------------------------- the rules


@pytest.mark.parametrize(
    ("mode", "owner", "words"),
    [
        (0o777, 0, ["writable by all users", "not sticky", "chmod go-w"]),
        (0o775, 0, ["writable by its group", "not sticky"]),
        (0o755, NOBODY, ["belongs to nobody", "BBT_WIDGET_CACHE"]),
        (0o1777, 0, None),  # sticky, as /tmp: others cannot rename the cache folder in it
        (0o755, 0, None),
    ],
)
def test_every_folder_above_the_root_is_checked(tmp_path, monkeypatch, mode, owner, words):
    above = tmp_path / "above"
    root = above / "deeper" / "cache"
    _cache.make_private_dirs(root / "pystan")
    if owner and os.geteuid() != 0:
        pytest.skip("giving a folder away needs root")
    above.chmod(mode)
    if owner:
        os.chown(above, owner, owner)
    monkeypatch.setenv("BBT_WIDGET_CACHE", str(root))
    if words is None:
        _cache.check_private(root / "pystan")
        return
    with pytest.raises(_cache.UnsafeCacheError) as info:
        _cache.check_private(root / "pystan")
    message = str(info.value)
    assert f"folder {above}, above the bbt-widget cache" in message, message
    for word in words:
        assert word in message, message


def test_links_of_ones_own_are_resolved_once(tmp_path, monkeypatch):
    """A link of the user's own (or root's) is followed, once: the root is its real path,
    written back to the environment the workers inherit, and changing the link later moves
    nothing."""
    real = tmp_path / "real"
    other = tmp_path / "other"
    real.mkdir(mode=0o700)
    other.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to("real")
    monkeypatch.setenv("BBT_WIDGET_CACHE", str(tmp_path / "link" / "sub" / ".." / "cache"))
    assert _cache.cache_root() == real / "cache"
    assert os.environ["BBT_WIDGET_CACHE"] == str(real / "cache")
    (tmp_path / "link").unlink()
    (tmp_path / "link").symlink_to("other")
    monkeypatch.setenv("BBT_WIDGET_CACHE", str(tmp_path / "link" / "sub" / ".." / "cache"))
    assert _cache.cache_root() == real / "cache"  # resolved when first read


def test_a_link_inside_the_cache_is_refused(tmp_path, monkeypatch):
    """The cache makes no links; one found on the way (made since the root was resolved, or
    put in the cache) is never followed."""
    monkeypatch.setenv("BBT_WIDGET_CACHE", str(tmp_path / "cache"))
    elsewhere = tmp_path / "elsewhere" / "bbt-1234"
    _cache.make_private_dirs(elsewhere)
    (elsewhere / "bbt").write_text("#!/bin/sh\n")
    _cache.make_private_dirs(tmp_path / "cache" / "cmdstan")
    (tmp_path / "cache" / "cmdstan" / "bbt-1234").symlink_to(elsewhere)
    exe = tmp_path / "cache" / "cmdstan" / "bbt-1234" / "bbt"
    with pytest.raises(_cache.UnsafeCacheError, match="a symbolic link made since"):
        _cache.check_private(exe)
    with pytest.raises(_cache.UnsafeCacheError, match="symbolic link"):
        _cache.check_tree(tmp_path / "cache" / "cmdstan")  # what runs before a child
    assert (elsewhere / "bbt").exists()


def test_looping_links_are_refused(tmp_path, monkeypatch):
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    with pytest.raises(_cache.UnsafeCacheError, match="loops"):
        _cache_checks.resolve(tmp_path / "a" / "cache")
