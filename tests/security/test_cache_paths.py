"""The way to the model cache: links and the folders above it, and loading what was checked.

The ownership checks of ``test_cache_ownership`` looked at the folders from the cache root
down, through whatever links the path held, and a fit then loaded the module by its path
again. So another user could still get their code run: through a symbolic link of theirs on
the way to the root (pointing at the user's own private cache while it was checked, and at
their folder when the module was loaded), or through a folder above the root that they may
write (renaming the cache folder aside and putting theirs in its place between the check and
the load). These tests make that swap between the check and the load, as the second user
``nobody`` (through ``setpriv``: CI runs as root), and show that the fit refuses instead,
names the link or folder, runs nothing planted and deletes nothing of the user's. The unit
tests below show the rules (every folder up to ``/``, no link of another user's) and that
what is loaded is the file that was checked.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from test_cache_ownership import _fit, _needs_second_user, _planted_module, as_nobody

from bbt_widget import engines
from bbt_widget.engines import EngineError, _cache, _cache_checks, _cache_loaded
from bbt_widget.engines import _cmdstan as cmdstan_engine

NOBODY = 65534


def _private_cache(root: Path, good_build: Path) -> Path:
    """A cache of the user's own at ``root`` holding a copy of ``good_build``; its module."""
    _cache.make_private_dirs(root / "pystan")
    shutil.copytree(good_build, root / "pystan" / good_build.name)
    (root / "pystan" / good_build.name).chmod(0o700)
    return next(p for p in (root / "pystan" / good_build.name).iterdir() if p.suffix == ".so")


def _swap_after_compile(monkeypatch, engine: str, swap: Callable[[], None]) -> None:
    """Run ``swap`` right after the engine's compile (its checks passed), before the load."""
    chosen = engines.get(engine)
    compile_model = chosen.compile

    def compile_then_swap(*args, **kwargs):
        found = compile_model(*args, **kwargs)
        swap()
        return found

    monkeypatch.setattr(chosen, "compile", compile_then_swap)


def _nobody_folder(shared: Path) -> Path:
    home = shared / "nobody"
    home.mkdir()
    os.chown(home, NOBODY, NOBODY)
    return home


# ----------------------------------------------------------------------------- PyStan


@pytest.mark.stan
@pytest.mark.parametrize("way", ["link", "folder above"])
def test_a_module_swapped_in_after_the_check_is_never_loaded(shared, good_build, monkeypatch, way):
    """The cache is the user's own and private, but the way to it is another user's: a link
    of theirs (flipped to their folder after the check), or a folder above it that all users
    may write (the cache renamed aside and theirs put in its place after the check)."""
    _needs_second_user()
    marker = shared / "marker"
    library = _planted_module(shared, marker)
    library.chmod(0o755)
    mine = shared / ("open" if way == "folder above" else "mine") / "cache"
    mine.parent.mkdir()
    module = _private_cache(mine, good_build)
    planted = f"{good_build.name}/{module.name}"  # where the engine looks, in their folder
    if way == "link":
        mine.parent.chmod(0o711)
        home = _nobody_folder(shared)
        as_nobody(
            'mkdir -p "$1/theirs/pystan/$(dirname "$2")" && cp "$3" "$1/theirs/pystan/$2" '
            '&& ln -s "$4" "$1/link"',
            *(str(home), planted, str(library), str(mine)),
        )
        monkeypatch.setenv("BBT_WIDGET_CACHE", str(home / "link"))
        _swap_after_compile(
            monkeypatch, "pystan", lambda: as_nobody('cd "$1" && ln -sfn theirs link', str(home))
        )
        named, words = home / "link", ["a symbolic link that belongs to nobody"]
    else:
        mine.parent.chmod(0o777)  # a team's folder, not sticky
        monkeypatch.setenv("BBT_WIDGET_CACHE", str(mine))
        swap = (
            'cd "$1" && mv cache aside && mkdir -p "cache/pystan/$(dirname "$2")" '
            '&& cp "$3" "cache/pystan/$2"'
        )
        _swap_after_compile(
            monkeypatch,
            "pystan",
            lambda: as_nobody(swap, str(mine.parent), planted, str(library)),
        )
        named, words = mine.parent, ["writable by all users", "not sticky", "chmod go-w"]
    with pytest.raises(EngineError) as info:
        _fit("pystan")
    engines.shutdown()
    assert not marker.exists(), "the planted code ran"
    message = str(info.value)
    assert f"{named} " in message or f"{named}," in message, message
    for word in words:
        assert word in message, message
    assert module.exists(), "the user's own compiled model was deleted"


# ----------------------------------------------------------------------------- CmdStan


def test_a_cmdstan_executable_swapped_in_through_a_link_is_never_run(
    shared, fake_cmdstan_home, monkeypatch
):
    _needs_second_user()
    marker = shared / "marker"
    mine = shared / "mine" / "cache"
    mine.parent.mkdir(mode=0o711)
    monkeypatch.setenv("BBT_WIDGET_CACHE", str(mine))
    exe = engines.get("cmdstanpy")._target("bbt") / "bbt"
    _cache.make_private_dirs(exe.parent)
    exe.write_text("#!/bin/sh\nexit 1\n")  # the user's own build
    exe.chmod(0o755)
    home = _nobody_folder(shared)
    tag = exe.parent.name
    as_nobody(
        'mkdir -p "$1/theirs/cmdstan/$2" && printf "#!/bin/sh\\necho planted > %s\\n" "$3" '
        '> "$1/theirs/cmdstan/$2/bbt" && chmod 755 "$1/theirs/cmdstan/$2/bbt" '
        '&& ln -s "$4" "$1/link"',
        str(home),
        tag,
        str(marker),
        str(mine),
    )
    monkeypatch.setenv("BBT_WIDGET_CACHE", str(home / "link"))
    _swap_after_compile(
        monkeypatch, "cmdstanpy", lambda: as_nobody('cd "$1" && ln -sfn theirs link', str(home))
    )
    try:
        _fit("cmdstanpy")
    except Exception as exc:  # whatever a planted executable leads to, it must not run
        error: Exception | None = exc
    else:
        error = None
    engines.shutdown()
    assert not marker.exists(), "the planted executable ran"
    assert isinstance(error, EngineError), error
    assert f"{home / 'link'}, a symbolic link that belongs to nobody" in str(error)
    assert exe.exists()


def test_cmdstan_runs_a_private_link_to_the_executable_it_checked(tmp_path, monkeypatch):
    monkeypatch.setenv("BBT_WIDGET_CACHE", str(tmp_path / "cache"))
    exe = tmp_path / "cache" / "cmdstan" / "bbt-1234" / "bbt"
    _cache.make_private_dirs(exe.parent)
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    runnable = cmdstan_engine._runnable(exe)
    assert runnable != exe and runnable.name == "bbt"
    assert runnable.is_relative_to(tmp_path / "cache" / "loaded")
    assert os.path.samefile(runnable, exe) and os.access(runnable, os.X_OK)
    exe.unlink()
    with pytest.raises(cmdstan_engine._ExeBroken):  # rebuilt, as a broken executable
        cmdstan_engine._runnable(exe)


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
        _cache_loaded.loadable(exe)
    with pytest.raises(_cache.UnsafeCacheError, match="symbolic link"):
        _cache.discard(exe.parent)
    assert (elsewhere / "bbt").exists()


def test_looping_links_are_refused(tmp_path, monkeypatch):
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    with pytest.raises(_cache.UnsafeCacheError, match="loops"):
        _cache_checks.resolve(tmp_path / "a" / "cache")


def test_discard_refuses_a_cache_others_could_swap(tmp_path, monkeypatch):
    """A failed load removes the broken build only where no other user could have put
    another folder in its place."""
    above = tmp_path / "open"
    root = above / "cache"
    target = root / "pystan" / "bbt-1234"
    _cache.make_private_dirs(target)
    above.chmod(0o777)
    monkeypatch.setenv("BBT_WIDGET_CACHE", str(root))
    with pytest.raises(_cache.UnsafeCacheError, match="not sticky"):
        _cache.discard(target)
    assert target.is_dir()
    above.chmod(0o755)
    _cache.discard(target)
    assert not target.exists()


# ----------------------------------------------------------------------------- loading


@pytest.fixture
def cached_file(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("BBT_WIDGET_CACHE", str(tmp_path / "cache"))
    module = tmp_path / "cache" / "pystan" / "bbt-1234" / "model.so"
    _cache.make_private_dirs(module.parent)
    module.write_bytes(b"checked")
    return module


def test_what_is_loaded_is_a_private_link_to_the_checked_file(cached_file):
    private = _cache_loaded.loadable(cached_file)
    assert private.name == cached_file.name
    assert os.path.samefile(private, cached_file)  # a hard link: no copy of 30 MB
    for folder in (private.parent, private.parent.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert _cache_loaded.loadable(cached_file) == private  # one per file and process
    # a rebuild (a new file in its place) gives a new private path; the old one is removed
    replacement = cached_file.with_name("new.so")
    replacement.write_bytes(b"rebuilt")
    os.replace(replacement, cached_file)
    again = _cache_loaded.loadable(cached_file)
    assert again != private and again.read_bytes() == b"rebuilt"
    assert not private.exists()
    # a broken build discarded from the cache: what this process loads stays whole
    _cache.discard(cached_file.parent)
    assert again.read_bytes() == b"rebuilt"


def test_a_file_replaced_after_its_check_is_not_what_is_loaded(cached_file, monkeypatch):
    """The file is opened as it is checked; a name that comes to mean another file before
    the private link is made gives a copy of the checked file, read from its descriptor."""
    walk = _cache_checks.walk

    @contextlib.contextmanager
    def walk_then_replace(root: Path, path: Path) -> Iterator[_cache_checks.Opened | None]:
        with walk(root, path) as opened:
            if path == cached_file:
                planted = cached_file.with_name("planted.so")
                planted.write_bytes(b"planted")
                os.replace(planted, cached_file)
            yield opened

    monkeypatch.setattr(_cache_checks, "walk", walk_then_replace)
    private = _cache_loaded.loadable(cached_file)
    assert private.read_bytes() == b"checked"


def test_a_copy_where_no_link_can_be_made(cached_file, monkeypatch):
    cached_file.chmod(0o755)

    def no_links(*args, **kwargs):
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", no_links)
    private = _cache_loaded.loadable(cached_file)
    assert private.read_bytes() == b"checked" and not os.path.samefile(private, cached_file)
    assert stat.S_IMODE(private.stat().st_mode) == 0o700  # still runnable, by its owner only


def test_a_module_others_can_write_is_not_loaded(cached_file):
    cached_file.chmod(0o666)
    with pytest.raises(_cache.UnsafeCacheError, match="chmod go-w"):
        _cache_loaded.loadable(cached_file)
    cached_file.chmod(0o644)
    cached_file.parent.chmod(0o770)
    with pytest.raises(_cache.UnsafeCacheError, match="writable by its group"):
        _cache_loaded.loadable(cached_file)


def test_the_private_folders_of_ended_processes_are_removed(cached_file, monkeypatch):
    """Each process removes its folder at exit; one killed first is removed by the next."""
    script = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from bbt_widget.engines import _cache_loaded\n"
        "print(_cache_loaded.loadable(Path(sys.argv[1])), flush=True)\n"
        "os._exit(0) if sys.argv[2] == 'killed' else None\n"
    )
    run = [sys.executable, "-c", script, str(cached_file)]
    clean = subprocess.run([*run, "exits"], capture_output=True, text=True, check=True)
    assert not Path(clean.stdout.strip()).exists()  # removed at exit
    killed = subprocess.run([*run, "killed"], capture_output=True, text=True, check=True)
    left = Path(killed.stdout.strip()).parent.parent
    assert left.exists()  # its process ended without cleaning up
    monkeypatch.setattr(_cache_loaded, "_STALE_AFTER", 0.0)
    time.sleep(0.01)
    monkeypatch.setattr(_cache_loaded, "_folders", {})  # as a new process
    monkeypatch.setattr(_cache_loaded, "_linked", {})
    ours = _cache_loaded.loadable(cached_file)
    assert not left.exists() and ours.exists()
