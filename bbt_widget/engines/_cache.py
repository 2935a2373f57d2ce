"""The private cache of compiled Stan models: where it lives, and the checks that keep it ours.

Compiled models go to ``platformdirs.user_cache_dir("bbt-widget")`` (or ``$BBT_WIDGET_CACHE``),
never next to the installed package (site-packages may be read-only): PyStan's (httpstan's
own cache, pointed here through ``$XDG_CACHE_HOME``) in ``stan/``, CmdStan's executables
(cmdstanpy's, compiled beside their program) in ``cmdstan/``.

Loading a compiled model runs its code as the user who fits, so the cache must be private: a
folder others can write (a team's shared ``BBT_WIDGET_CACHE`` of mode 777, say) would let them
plant a module that the next fit loads. The root is resolved to its real path once
(:func:`cache_root`); :func:`check_tree` refuses, before any fit loads or runs anything from
the cache, any folder above the root that another user could replace the cache in, any folder
or file from the root down that is not owned by this user (or root) or that group or others
may write, and any symbolic link on the way (:mod:`._cache_checks`). With every folder on the
way private, nobody else can swap a file between the check and the load. Every folder the
cache creates is made with mode 0700, whatever the umask, and the children that compile into
it run with umask 077.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from . import _cache_checks
from ._cache_checks import UnsafeCacheError as UnsafeCacheError  # raised by the checks
from .base import EngineError

#: ``$BBT_WIDGET_CACHE`` (or the default) as given -> the real path it named when first read.
_ROOTS: dict[str, Path] = {}


def cache_root() -> Path:
    """Root of the bbt-widget cache (``$BBT_WIDGET_CACHE`` overrides the platform default).

    The root is resolved to its real path once, when first read (a relative
    ``$BBT_WIDGET_CACHE`` against this process's working directory), following only the
    symbolic links owned by this user or root, and a ``$BBT_WIDGET_CACHE`` is written back
    to the environment resolved: the child processes, which run in other folders, inherit
    the real path, and a link changed later (or a ``chdir``) moves nothing. Resolving once is
    what makes the checks hold: a link another user owns could point at this user's cache
    while it is checked and at their own folder when a module is loaded.

    Raises
    ------
    UnsafeCacheError
        When the way to the root goes through a symbolic link of another user's.
    """
    given = os.environ.get("BBT_WIDGET_CACHE") or platformdirs.user_cache_dir("bbt-widget")
    root = _ROOTS.get(given)
    if root is None:
        root = _cache_checks.resolve(Path(os.path.abspath(Path(given).expanduser())))
        _ROOTS[given] = _ROOTS[str(root)] = root
    if os.environ.get("BBT_WIDGET_CACHE"):
        os.environ["BBT_WIDGET_CACHE"] = str(root)  # what every child process inherits
    return root


def check_private(path: Path) -> None:
    """Refuse ``path`` in the cache unless only this user (or root) can have written it.

    Every folder from ``/`` down to the cache root must belong to this user or root and be
    writable by no one else unless sticky; from the root down to ``path``, and ``path``
    itself, they must belong to this user or root and not be writable by group or others,
    sticky or not (others may still add files to a ``/tmp``-like folder). No symbolic link is
    followed on the way. Otherwise another user could have put a compiled model there, or
    replaced one (or a folder above it), whose code would run as this user when it is loaded.
    The check stops at the first that does not exist yet (the cache creates it private). A
    no-op on Windows, where permissions are access lists.

    Parameters
    ----------
    path
        A folder or file at or below :func:`cache_root`.

    Raises
    ------
    UnsafeCacheError
        Naming the folder, file or link, why it is unsafe and how to fix it.
    ValueError
        ``path`` is not in the cache.
    """
    if not _cache_checks.supported():
        return
    with _cache_checks.walk(cache_root(), path):
        pass


class NoExecCacheError(EngineError):
    """The model cache is on a file system mounted ``noexec``: no compiled model there can be
    loaded or run, so none is built, loaded or removed."""


def _mount_point(path: Path) -> Path:
    """The folder where the file system holding the existing ``path`` is mounted."""
    device = path.stat().st_dev
    while path.parent != path and path.parent.stat().st_dev == device:
        path = path.parent
    return path


def check_exec_mount(path: Path) -> None:
    """Refuse a cache ``path`` on a file system mounted ``noexec``.

    The kernel refuses to map a module or run an executable from such a mount, which looks
    like a broken build: checked before anything is loaded or built, so that a good cached
    model is not deleted and rebuilt only to fail the same way. The nearest existing folder
    at or above ``path`` is the one checked (the cache makes the rest on the same mount).

    Raises
    ------
    NoExecCacheError
        Naming the mount and the fix.
    """
    current = path
    while not current.exists() and current.parent != current:
        current = current.parent
    try:
        flags = os.statvfs(current).f_flag
    except (OSError, AttributeError):  # no statvfs (Windows): nothing to check
        return
    if flags & getattr(os, "ST_NOEXEC", 0):
        mount = _mount_point(current)
        raise NoExecCacheError(
            f"the bbt-widget model cache {cache_root()} is on {mount}, which is mounted "
            "noexec: compiled models cannot be loaded or run from it (nothing was built, "
            "loaded or deleted). Set BBT_WIDGET_CACHE to a folder on a file system that "
            "allows running programs (e.g. `export BBT_WIDGET_CACHE=~/.cache/bbt-widget`; "
            "`findmnt -T <folder>` shows a folder's mount options)."
        )


def make_private_dirs(folder: Path) -> None:
    """Create ``folder`` and its missing parents with mode 0700, whatever the umask (a plain
    ``mkdir(parents=True)`` gives the parents the umask's mode: 0777 under ``umask 000``)."""
    missing = []
    current = folder
    while not current.exists() and current.parent != current:
        missing.append(current)
        current = current.parent
    for path in reversed(missing):
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:  # made meanwhile by another process: checked as any other
            continue
        os.chmod(path, 0o700)  # the umask may have removed bits of the owner's too


def check_tree(folder: Path) -> None:
    """:func:`check_private` for ``folder`` and everything below it (links are not followed:
    one is refused), after :func:`check_exec_mount`. Run before a child loads or runs
    anything from ``folder``.

    Raises
    ------
    UnsafeCacheError, NoExecCacheError
        As those checks.
    """
    check_exec_mount(folder)
    check_private(folder)
    if not _cache_checks.supported():
        return
    for parent, folders, files in os.walk(folder):
        for name in folders + files:
            check_private(Path(parent) / name)
