"""Whether anything in the model cache could have been written by another user.

Loading a compiled model runs its code as the user who fits, so a fit loads nothing that
another user could have put in the cache or swapped in on the way to it:

- :func:`resolve` turns the cache root into its real path once, following only symbolic
  links owned by this user or root (another user's link can be pointed elsewhere at any
  moment, between a check and a load);
- :func:`walk` opens every folder from ``/`` down to a path of the cache one at a time, each
  relative to the one above and never through a symbolic link (``O_NOFOLLOW``), and checks
  what it opened (``fstat``), not what a name pointed to a moment earlier. The folders above
  the root must belong to this user or root and be writable by no one else unless sticky
  (``/tmp``): otherwise whoever may write one could rename the cache folder in it and put
  another in its place. From the root down, folders and files must belong to this user or
  root and be writable by no one else, sticky or not (anyone may add files to a sticky
  folder). With every folder on the way private, what was checked is what a child loads.

A no-op on Windows, where permissions are access lists (:func:`supported`).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .base import EngineError

try:
    import pwd
except ImportError:  # Windows
    pwd = None  # type: ignore[assignment]

#: Symbolic links followed while resolving the root before giving up (Linux's own limit).
MAX_LINKS = 40
_PRIVATE = "set BBT_WIDGET_CACHE to a folder of your own (e.g. `mkdir -m 700 ~/bbt-cache`)"
_ELSEWHERE = (
    "set BBT_WIDGET_CACHE to a folder of your own whose parent folders are yours or root's "
    "(e.g. `mkdir -m 700 ~/bbt-cache`)"
)
# Opened one folder at a time, never through a link: O_NOFOLLOW refuses a link that replaced
# a folder between the check of its name and the open.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_OPEN_FOLDER = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW
# O_NONBLOCK: a FIFO in place of a module must not hang the open (it is then refused).
_OPEN_FILE = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | _NOFOLLOW


class UnsafeCacheError(EngineError):
    """A folder or file of the cache that another user could have written: nothing in it is
    loaded or run."""


def supported() -> bool:
    """Whether the checks apply here: POSIX owners and modes (not on Windows)."""
    return hasattr(os, "geteuid")


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name if pwd is not None else f"uid {uid}"
    except KeyError:
        return f"uid {uid}"


def _trusted(uid: int) -> bool:
    return uid in (os.geteuid(), 0)


def check_entry(path: Path, info: os.stat_result) -> None:
    """Raise :class:`UnsafeCacheError` unless ``path`` (``info`` its stat), at or below the
    cache root, is owned by this user or root and not writable by group or others."""
    me = os.geteuid()
    kind = "folder" if stat.S_ISDIR(info.st_mode) else "file"
    if not _trusted(info.st_uid):
        raise UnsafeCacheError(
            f"the bbt-widget cache {kind} {path} belongs to {_user(info.st_uid)}, not to you "
            f"({_user(me)}): another user could have put compiled code there, which a fit "
            f"would run as you, so nothing in it is loaded. Delete it "
            f"(`rm -rf {shlex.quote(str(path))}`), or {_PRIVATE}."
        )
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o022:
        who = "all users" if mode & 0o002 else "its group"
        if info.st_uid == me:
            chmod = "700" if kind == "folder" else "go-w"
            fix = f"make it private with `chmod {chmod} {shlex.quote(str(path))}`, or "
        else:
            fix = ""
        raise UnsafeCacheError(
            f"the bbt-widget cache {kind} {path} is writable by {who} (mode {mode:o}): "
            "another user could put compiled code there, which a fit would run as you, so "
            f"nothing in it is loaded. To fix it, {fix}{_PRIVATE}."
        )


def check_ancestor(path: Path, info: os.stat_result) -> None:
    """Raise :class:`UnsafeCacheError` unless the folder ``path`` (``info`` its stat) above
    the cache root is owned by this user or root and writable by no one else, or sticky."""
    quoted = shlex.quote(str(path))
    risk = (
        "could rename the bbt-widget cache folder in it and put another in its place, holding "
        "compiled code that a fit would run as you, so nothing in the cache is loaded"
    )
    if not _trusted(info.st_uid):
        raise UnsafeCacheError(
            f"the folder {path}, above the bbt-widget cache, belongs to "
            f"{_user(info.st_uid)}, not to you ({_user(os.geteuid())}) or root: its owner "
            f"{risk}. To fix it, {_ELSEWHERE}."
        )
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o022 and not mode & stat.S_ISVTX:
        who = "all users" if mode & 0o002 else "its group"
        sudo = "" if info.st_uid == os.geteuid() else "sudo "
        raise UnsafeCacheError(
            f"the folder {path}, above the bbt-widget cache, is writable by {who} (mode "
            f"{mode:o}) and not sticky: any of them {risk}. To fix it, "
            f"`{sudo}chmod go-w {quoted}` (or `{sudo}chmod +t {quoted}`, as for /tmp), or "
            f"{_ELSEWHERE}."
        )


def _foreign_link(path: Path, info: os.stat_result) -> UnsafeCacheError:
    return UnsafeCacheError(
        f"the path of the bbt-widget cache goes through {path}, a symbolic link that belongs "
        f"to {_user(info.st_uid)}, not to you ({_user(os.geteuid())}) or root: its owner can "
        "point it at a folder holding their compiled code at any moment, which a fit would "
        f"run as you, so the cache is not used through it. To fix it, {_ELSEWHERE}, reached "
        "without that link."
    )


def resolve(path: Path) -> Path:
    """The real path of the absolute ``path``, as :func:`os.path.realpath` gives it, following
    only the symbolic links owned by this user or root.

    The parts that do not exist yet are kept as written (the cache makes them with ``mkdir``,
    which never follows a link).

    Raises
    ------
    UnsafeCacheError
        Naming a link on the way that another user owns, or when the links loop.
    """
    if not supported():
        return Path(os.path.realpath(path))
    todo = list(reversed(path.parts[1:]))
    current = Path(path.anchor)
    followed = 0
    while todo:
        name = todo.pop()
        if name in ("", "."):
            continue
        if name == "..":
            current = current.parent
            continue
        step = current / name
        try:
            info = os.lstat(step)
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            # not made yet (or not readable: the checks of walk() say so)
            return Path(os.path.normpath(step.joinpath(*reversed(todo))))
        if not stat.S_ISLNK(info.st_mode):
            current = step
            continue
        if not _trusted(info.st_uid):
            raise _foreign_link(step, info)
        followed += 1
        if followed > MAX_LINKS:
            raise UnsafeCacheError(f"the path of the bbt-widget cache {path} loops ({step})")
        target = Path(os.readlink(step))
        if target.is_absolute():
            current = Path(target.anchor)
            todo.extend(reversed(target.parts[1:]))
        else:
            todo.extend(reversed(target.parts))
    return current


@dataclass(frozen=True)
class Opened:
    """A path of the cache as :func:`walk` opened and checked it."""

    path: Path
    #: ``fstat`` of what was opened.
    info: os.stat_result
    #: The descriptor of the file or folder itself, and of the folder holding it (closed
    #: when :func:`walk`'s block ends).
    fd: int
    folder_fd: int


@contextlib.contextmanager
def walk(root: Path, path: Path) -> Iterator[Opened | None]:
    """Open and check every folder from ``/`` down to ``path``, and ``path`` itself.

    The folders above ``root`` by :func:`check_ancestor`, ``root`` and everything below it by
    :func:`check_entry`. Each is opened relative to the folder above it, never through a
    symbolic link, and its ``fstat`` is checked: what a caller reads through :attr:`Opened.fd`
    is what was checked. Yields None when a part does not exist yet (nothing there to load).

    Parameters
    ----------
    root
        The cache root, a real path (:func:`resolve`).
    path
        A folder or file at or below ``root``.

    Raises
    ------
    UnsafeCacheError
        Naming the folder, file or link that another user could have written, and the fix.
    ValueError
        ``path`` is not below ``root``.
    """
    inside = path.relative_to(root).parts
    names = [*root.parts[1:], *inside]
    above = len(root.parts) - 2  # the folders between / and the root
    fds: list[int] = []
    try:
        fds.append(os.open(root.anchor, _OPEN_FOLDER))
        current = Path(root.anchor)
        info = os.fstat(fds[-1])
        (check_ancestor if above >= 0 else check_entry)(current, info)
        for index, name in enumerate(names):
            current = current / name
            opened = _open_in(fds[-1], name, current, last=index == len(names) - 1)
            if opened is None:
                break
            fds.append(opened)
            info = os.fstat(opened)  # what was opened, not what the name pointed to before
            (check_ancestor if index < above else check_entry)(current, info)
        else:
            yield Opened(current, info, fds[-1], fds[-2] if len(fds) > 1 else fds[-1])
            return
        yield None  # a part does not exist yet: nothing there to load
    finally:
        for fd in fds:
            os.close(fd)


def _open_in(folder_fd: int, name: str, path: Path, *, last: bool) -> int | None:
    """Open ``name`` in the folder ``folder_fd`` without following a link; None if it does
    not exist (or is a file where a folder should be)."""
    try:
        seen = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
        if stat.S_ISLNK(seen.st_mode):
            raise _link_inside(path, seen)
        if stat.S_ISDIR(seen.st_mode):
            return os.open(name, _OPEN_FOLDER, dir_fd=folder_fd)
        if not last:
            return None
        return os.open(name, _OPEN_FILE, dir_fd=folder_fd)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _link_inside(path: Path, info: os.stat_result) -> UnsafeCacheError:
    if not _trusted(info.st_uid):
        return _foreign_link(path, info)
    # The root is resolved when first used, and the cache itself makes no links: this one
    # was made since, and loading through it would load what it points to at that moment.
    return UnsafeCacheError(
        f"the path of the bbt-widget cache goes through {path}, a symbolic link made since "
        f"the cache was first used (or inside it), so nothing is loaded through it. Remove "
        f"it (`rm {shlex.quote(str(path))}`), or {_PRIVATE}."
    )
