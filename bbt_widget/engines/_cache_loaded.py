"""What a fit loads from the model cache: the very file it checked, in a folder of its own.

A check of a path and a later load of that path are two lookups; between them the path could
come to name another file. So :func:`loadable` opens the compiled model as the checks walk to
it (:func:`._cache_checks.walk`), then hard-links what it opened (the same inode: the
``fstat`` it checked) into a folder that this process creates private (``0700``) under
``<cache>/loaded/``, or copies it from the opened descriptor where a link cannot be made.
The PyStan worker imports, and the CmdStan worker runs, that private path. It lives in the
cache rather than in the temporary folder because the cache is where compiled code already
runs (``/tmp`` is often mounted ``noexec``), and a link needs the same file system.

Each process has one such folder, reused for as long as the file it checked is the same, and
removed when the process exits; a process killed before it could remove its own is cleaned
up by the next one (each holds a lock on its folder while it lives). On Windows, where the
cache is not checked (permissions are access lists), the path is returned as it is.
"""

from __future__ import annotations

import atexit
import os
import shutil
import stat
import tempfile
import threading
import time
from pathlib import Path

from . import _cache_checks
from ._cache import make_private_dirs, root_of
from ._cache_checks import UnsafeCacheError

try:
    import fcntl
except ImportError:  # Windows: nothing is linked there
    fcntl = None  # type: ignore[assignment]

#: A folder whose lock file is younger than this is never taken for a dead process's: its
#: process may be between making it and locking it.
_STALE_AFTER = 60.0
_LOCK = ".lock"

_lock = threading.Lock()
#: Per cache root: (this process's id, its private folder, the descriptor holding its lock).
_folders: dict[Path, tuple[int, Path, int]] = {}
#: Per checked file: (its identity when linked, the private path).
_linked: dict[Path, tuple[tuple[int, ...], Path]] = {}


def loadable(path: Path) -> Path:
    """The path from which to load or run the cached file ``path``: the file as checked.

    Checks the folders from ``/`` down to ``path`` and the file itself
    (:func:`._cache.check_private`'s rules, in the cache that holds ``path``:
    :func:`._cache.root_of`), opening each on the way, and returns a private path to the very
    file opened: a hard link (or copy) in this process's own folder under ``<cache>/loaded/``.
    The same file checked again gives the same path.

    Raises
    ------
    UnsafeCacheError
        As :func:`._cache.check_private`, or when ``path`` is not a regular file.
    FileNotFoundError
        ``path`` does not exist (e.g. the cache was cleared).
    """
    if not _cache_checks.supported() or fcntl is None:
        return path
    root = root_of(path)
    with _cache_checks.walk(root, path) as opened:
        if opened is None:
            raise FileNotFoundError(f"the compiled model {path} is gone")
        info = opened.info
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeCacheError(f"the bbt-widget cache file {path} is not a regular file")
        # not st_ctime: making the link changes it
        identity = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
        with _lock:
            known = _linked.get(path)
            if known is not None and known[0] == identity and known[1].exists():
                return known[1]
            folder = Path(tempfile.mkdtemp(dir=_own_folder(root)))
            private = folder / path.name
            _link_or_copy(opened, info, private)
            if known is not None:  # the file was rebuilt: the old one is no longer loaded
                shutil.rmtree(known[1].parent, ignore_errors=True)
            _linked[path] = (identity, private)
            return private


def _link_or_copy(opened: _cache_checks.Opened, info: os.stat_result, private: Path) -> None:
    """Make ``private`` the file ``opened`` (``info`` its ``fstat``): a hard link to the same
    inode where it can be made, else a copy read from the descriptor."""
    try:
        os.link(opened.path.name, private, src_dir_fd=opened.folder_fd, follow_symlinks=False)
        linked = os.lstat(private)
        if (linked.st_dev, linked.st_ino) == (info.st_dev, info.st_ino):
            return
        os.unlink(private)  # the name was replaced meanwhile: copy what was checked
    except OSError:  # another file system, a file of root's (protected_hardlinks), no links
        pass
    mode = 0o700 if info.st_mode & 0o100 else 0o600  # a CmdStan executable stays one
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    with os.fdopen(os.dup(opened.fd), "rb") as source:
        source.seek(0)
        with os.fdopen(os.open(private, flags, mode), "wb") as target:
            shutil.copyfileobj(source, target, 1 << 20)


def _own_folder(root: Path) -> Path:
    """This process's private folder under ``<root>/loaded/`` (made, checked and locked on
    first use; a forked child makes its own)."""
    known = _folders.get(root)
    if known is not None and known[0] == os.getpid() and known[1].is_dir():
        return known[1]
    parent = root / "loaded"
    make_private_dirs(parent)
    with _cache_checks.walk(root, parent) as opened:  # made by another process meanwhile?
        if opened is None:
            raise FileNotFoundError(f"{parent} vanished")
    _remove_dead(parent)
    folder = Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=parent))
    fd = os.open(folder / _LOCK, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)  # held while this process lives
    _folders[root] = (os.getpid(), folder, fd)
    return folder


def _remove_dead(parent: Path) -> None:
    """Remove the folders under ``parent`` of processes that ended without removing theirs:
    those whose lock nobody holds any more."""
    for folder in parent.iterdir():
        lock = folder / _LOCK
        try:
            if time.time() - lock.lstat().st_mtime < _STALE_AFTER:
                continue
            fd = os.open(lock, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held: its process is alive
            continue
        finally:
            os.close(fd)
        shutil.rmtree(folder, ignore_errors=True)


def _remove_own() -> None:
    """At exit: remove this process's folders (a forked child leaves its parent's alone)."""
    for pid, folder, fd in list(_folders.values()):
        if pid == os.getpid():
            shutil.rmtree(folder, ignore_errors=True)
            os.close(fd)
    _folders.clear()
    _linked.clear()


atexit.register(_remove_own)
