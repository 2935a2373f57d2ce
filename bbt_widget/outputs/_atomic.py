"""Writing outputs so that a failure loses nothing: whole files and whole folders, or none.

Every file is written under a temporary name in its own folder and renamed over the old one
only once it is complete (a rename within one file system replaces the name in one step).
When the write fails (a full disk, a quota, a permission, Ctrl-C), the temporary file is
removed, the old file is left byte for byte as it was, and the error names the file the
caller asked for. A folder of figures is replaced as a whole the same way: the new one is
written under a temporary name, then the old one is renamed away, the new one renamed in and
the old one deleted.

Temporary names start with a dot and end in ``.tmp`` (``.report.html.1f2e3d4c.tmp``), so a
listing hides them and a process killed mid-write leaves them easy to recognise. A replaced
file keeps the permission bits of the file it replaces; a new one gets the umask's.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shlex
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_path", "atomic_replace_dir", "atomic_write_bytes", "atomic_write_text"]


def missing_folder(path: str | Path) -> str | None:
    """Why ``path`` cannot be written for want of its folder (None when the folder exists):
    the nearest existing part of the path is a file (a slip of the path, not a folder to
    create), or the folder does not exist. Checked before any fit, so that nothing is
    computed for a file that cannot be written."""
    folder = Path(path).parent
    if folder.is_dir():
        return None
    found = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if found is not None and not found.is_dir():
        return (
            f"{str(found)!r} is a file, not a folder; give a path in a folder, e.g. "
            f"{str(found.parent / Path(path).name)!r}"
        )
    return (
        f"folder {str(folder)!r} does not exist; create it first (mkdir -p "
        f"{shlex.quote(str(folder))}) or give a path in an existing folder"
    )


def _temporary_name(path: Path) -> Path:
    return path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")


def _target(path: str | Path) -> Path:
    """The file to replace: a symbolic link is followed (its target is rewritten, as an
    ordinary write would), so the link itself stays."""
    path = Path(path)
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _reraise(err: BaseException, tmp: Path, path: Path) -> None:
    """Raise ``err`` again; an ``OSError`` about the temporary file or folder ``tmp`` (or
    about no file) names ``path``, the caller's file, instead."""
    if (
        isinstance(err, OSError)
        and err.errno is not None
        and (err.filename is None or str(err.filename).startswith(str(tmp)))
    ):
        raise OSError(err.errno, os.strerror(err.errno), str(path)) from err
    raise err


def _fsync(path: Path) -> None:
    """Flush a written file to the disk, so that a full disk shows now and a crash after
    the rename cannot leave an empty file under the old name."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary file beside ``path`` to write to; renamed to ``path`` when the block ends.

    For writers that take a file name (``DataFrame.to_csv``, ``to_netcdf``). The temporary
    file exists (empty) when the block starts.

    Raises
    ------
    OSError
        When the block or the rename fails with an ``OSError``; it names ``path``. The
        temporary file is removed and ``path`` is untouched. Other exceptions pass through
        after the same clean-up.
    """
    target = _target(path)
    tmp = _temporary_name(target)
    try:
        # 0o666 and the umask, as open(path, "w") would give a new file
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    except OSError as err:  # e.g. a folder without write permission
        _reraise(err, tmp, target)
    try:
        yield tmp
        _fsync(tmp)
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
        os.replace(tmp, target)
    except BaseException as err:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        _reraise(err, tmp, target)


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` whole or not at all (see :func:`atomic_path`)."""
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        fh.write(data)
    return Path(path)


def atomic_write_text(path: str | Path, text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` whole or not at all (see :func:`atomic_path`)."""
    return atomic_write_bytes(path, text.encode(encoding))


@contextlib.contextmanager
def atomic_replace_dir(folder: str | Path) -> Iterator[Path]:
    """A new, empty folder beside ``folder`` to fill; it replaces ``folder`` as a whole when
    the block ends (files in the old folder that the new one lacks are gone with it).

    Raises
    ------
    FileExistsError
        ``folder`` is a file (nothing is written).
    OSError
        When filling or swapping fails; it names ``folder``, the temporary folder is removed
        and the old one is left as it was.
    """
    target = _target(folder)
    if target.exists() and not target.is_dir():
        raise FileExistsError(
            f"{str(target)!r} is a file where the folder for the figures goes; move it away "
            "or choose another name"
        )
    tmp = _temporary_name(target)
    try:
        os.mkdir(tmp)
    except OSError as err:
        _reraise(err, tmp, target)
    old: Path | None = None
    try:
        yield tmp
        for file in tmp.rglob("*"):
            if file.is_file():
                _fsync(file)
        if target.is_dir():
            os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
            old = target.with_name(f"{tmp.name[:-4]}.old")
            os.rename(target, old)
        try:
            os.rename(tmp, target)
        except BaseException:
            if old is not None:
                os.rename(old, target)
                old = None
            raise
    except BaseException as err:
        shutil.rmtree(tmp, ignore_errors=True)
        _reraise(err, tmp, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
