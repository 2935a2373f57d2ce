"""Writing outputs so that a failure loses nothing: whole files and whole folders, or none.

Every file is written under a temporary name in its own folder and renamed over the old one
only once it is complete (a rename within one file system replaces the name in one step).
When the write fails (a full disk, a quota, a permission, Ctrl-C), the temporary file is
removed, the old file is left byte for byte as it was, and the error names the file the
caller asked for. A folder of figures is replaced as a whole the same way: the new one is
written under a temporary name, then the old one is renamed away, the new one renamed in and
the old one's files deleted.

Temporary names start with a dot and end in ``.tmp`` (``.report.html.1f2e3d4c.tmp``), so a
listing hides them and a process killed mid-write leaves them easy to recognise. A replaced
file keeps the permission bits of the file it replaces (when the same user owns it); a new one
gets the umask's.

Nothing the package did not write is touched. No output is written through a symbolic link:
a link where a file or folder goes is refused (:class:`OutputConflictError`), and the rename
replaces a name, never the file a link points at. Resolving a link here would bypass the
kernel's protection of links in shared, sticky folders such as ``/tmp`` (a link planted by
another user would make the package rewrite whatever it points at). A folder is replaced only
when it holds nothing but the files an earlier output wrote into it, unchanged: each folder
the package writes gets a manifest (:data:`MANIFEST`) listing its files and their SHA-256,
and a folder holding anything else (a user's notes, an edited table, a folder written before
manifests) is refused with its name and what to do, before anything is written.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import shlex
import shutil
import stat
import warnings
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "MANIFEST",
    "OutputConflictError",
    "atomic_path",
    "atomic_replace_dir",
    "atomic_write_bytes",
    "atomic_write_text",
    "owned_files",
    "refuse_link",
]

#: The file listing what the package wrote into a folder it replaces as a whole (a report's
#: figures and tables): ``{"written_by": "bbt-widget", "files": {name: sha256}}``.
MANIFEST = ".bbt-widget-manifest.json"

#: A manifest larger than this is no manifest the package wrote (it lists a few dozen files).
_MANIFEST_MAX_BYTES = 1 << 20

#: Files the system's file browser leaves in a folder it showed (macOS Finder, Windows
#: Explorer): no one's work, made again when needed, so they do not stop a folder being
#: replaced (or every report viewed in Finder would be refused the next time).
_OS_LITTER = frozenset({".DS_Store", "Thumbs.db", "desktop.ini"})

#: Opening a name without following a link there (no such flag on Windows).
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

#: Opening a file to read without following a link at its name, nor waiting on a FIFO.
_READ_NOFOLLOW = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0)


class OutputConflictError(FileExistsError, ValueError):
    """Where an output goes there is something the package did not write: a symbolic link,
    a file where a folder goes, or a folder holding files that no earlier output wrote.
    Nothing is written; the message names the path and what to do.

    An ``OSError`` (a file error, as a caller catching those expects) and a ``ValueError``
    (input the user can fix: the command line says so and exits with code 2).
    """


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


def refuse_link(path: str | Path, what: str = "an output file") -> None:
    """Raise :class:`OutputConflictError` when ``path`` is a symbolic link (``what`` says what
    goes there): an output replaces a name, never the file or folder a link points at."""
    if os.path.islink(path):
        raise OutputConflictError(
            f"{str(path)!r} is a symbolic link where {what} goes; bbt-widget writes nothing "
            "through a link (it could point at any file): remove the link or choose another name"
        )


def _sha256(path: Path) -> str:
    """The SHA-256 of the regular file ``path`` (a link or a FIFO there is an ``OSError``)."""
    fd = os.open(path, _READ_NOFOLLOW)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{str(path)!r} is not a regular file")
        digest = hashlib.sha256()
        while chunk := os.read(fd, 1 << 16):
            digest.update(chunk)
        return digest.hexdigest()
    finally:
        os.close(fd)


def _manifest_files(folder: Path) -> dict[str, str] | None:
    """The files the manifest of ``folder`` lists, with their SHA-256; None when it has no
    manifest, or one the package did not write (not a regular file, not the package's
    JSON, a name that is not a plain file name)."""
    try:
        fd = os.open(folder / MANIFEST, _READ_NOFOLLOW)
    except OSError:  # absent, or a link
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, _MANIFEST_MAX_BYTES + 1)
    finally:
        os.close(fd)
    try:
        manifest = json.loads(data.decode("utf-8"))
    except ValueError:  # not UTF-8, not JSON
        return None
    if len(data) > _MANIFEST_MAX_BYTES or not isinstance(manifest, dict):
        return None
    files = manifest.get("files")
    if manifest.get("written_by") != "bbt-widget" or not isinstance(files, dict):
        return None
    for name, digest in files.items():
        plain = name not in ("", ".", "..", MANIFEST) and not set(name) & {"/", os.sep, "\0"}
        if not (plain and isinstance(digest, str) and len(digest) == 64):
            return None
    return files


def _listed(names: list[str]) -> str:
    """Up to five names, quoted, and how many more."""
    shown = ", ".join(repr(n) for n in sorted(names)[:5])
    return shown + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def owned_files(folder: str | Path, what: str = "an output folder") -> list[str]:
    """The files in ``folder`` that an earlier output of the package wrote (its manifest
    lists them, unchanged): all the files it holds, so that replacing it loses nothing.
    An empty folder, or none, has none. ``what`` says in an error what goes there. The
    files a file browser leaves (``.DS_Store``, ``Thumbs.db``, ``desktop.ini``) count as
    the package's.

    Raises
    ------
    OutputConflictError
        ``folder`` is a symbolic link or a file, or holds anything else: a file its manifest
        does not list (or no manifest), a file changed since it was written, a subfolder.
    """
    folder = Path(folder)
    try:
        mode = os.lstat(folder).st_mode
    except FileNotFoundError:
        return []
    refuse_link(folder, what)
    if not stat.S_ISDIR(mode):
        raise OutputConflictError(
            f"{str(folder)!r} is a file where {what} goes; move it away or choose another name"
        )
    with os.scandir(folder) as entries:
        found = {e.name: e.is_file(follow_symlinks=False) for e in entries}
    has_manifest = found.pop(MANIFEST, None) is not None
    litter = [name for name, regular in found.items() if regular and name in _OS_LITTER]
    for name in litter:
        del found[name]
    if not found and not has_manifest:
        return litter
    listed = _manifest_files(folder)
    if listed is None:
        why = (
            f"its {MANIFEST} was not written by bbt-widget"
            if has_manifest
            else f"it has no {MANIFEST} listing what bbt-widget wrote there"
        )
        problems = [f"files bbt-widget may not have written ({why}): {_listed(list(found))}"]
        if not found:
            problems = [f"a {MANIFEST} bbt-widget did not write"]
    else:
        foreign = [name for name, regular in found.items() if not regular or name not in listed]
        changed = []
        for name in found.keys() - set(foreign):
            try:
                if _sha256(folder / name) != listed[name]:
                    changed.append(name)
            except OSError:  # replaced by a link or a FIFO since it was listed
                foreign.append(name)
        problems = [f"files bbt-widget did not write: {_listed(foreign)}"] if foreign else []
        if changed:
            problems.append(f"files changed since bbt-widget wrote them: {_listed(changed)}")
    if problems:
        raise OutputConflictError(
            f"{str(folder)!r} holds {'; '.join(problems)}. A report replaces this folder as "
            "a whole and would delete them: move them out of it (or delete the folder), or "
            "choose another name for the report"
        )
    return sorted(found) + litter


def _write_manifest(folder: Path) -> None:
    """List the files of ``folder`` (just written by the package) in its manifest."""
    with os.scandir(folder) as entries:
        files = {
            e.name: _sha256(Path(e.path))
            for e in entries
            if e.name != MANIFEST and e.is_file(follow_symlinks=False)
        }
    manifest = {"written_by": "bbt-widget", "files": dict(sorted(files.items()))}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")


def _remove_owned(folder: Path, names: list[str]) -> None:
    """Delete the files ``names`` (checked as the package's own) and the manifest from the
    replaced ``folder``, then the folder; anything else found there is kept, with a warning
    naming where (it appeared while the report was written)."""
    try:
        if os.unlink in os.supports_dir_fd:  # names within this very folder, even if moved
            fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW)
            try:
                for name in [*names, MANIFEST]:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(name, dir_fd=fd)
            finally:
                os.close(fd)
        else:  # Windows
            for name in [*names, MANIFEST]:
                (folder / name).unlink(missing_ok=True)
        os.rmdir(folder)
    except OSError:
        warnings.warn(
            f"the old output folder could not be removed whole (files appeared in it while "
            f"it was replaced); what is left is kept in {str(folder)!r}",
            stacklevel=4,
        )


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


def _keep_mode(tmp: Path, target: Path) -> None:
    """Give ``tmp`` the permission bits of ``target`` when ``target`` exists and is the
    user's own (a file another user left in a shared folder passes on no bits)."""
    with contextlib.suppress(FileNotFoundError):
        st = os.lstat(target)
        if not stat.S_ISLNK(st.st_mode) and st.st_uid == os.getuid():
            os.chmod(tmp, stat.S_IMODE(st.st_mode))


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
    OutputConflictError
        ``path`` is a symbolic link (nothing is written).
    OSError
        When the block or the rename fails with an ``OSError``; it names ``path``. The
        temporary file is removed and ``path`` is untouched. Other exceptions pass through
        after the same clean-up.
    """
    target = Path(path)
    refuse_link(target)
    tmp = _temporary_name(target)
    try:
        # 0o666 and the umask, as open(path, "w") would give a new file
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666))
    except OSError as err:  # e.g. a folder without write permission
        _reraise(err, tmp, target)
    try:
        yield tmp
        _fsync(tmp)
        _keep_mode(tmp, target)
        # replaces the name: a link put there since the check is replaced, not followed
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
    """A new, empty folder beside ``folder`` to fill with files (no subfolders); it replaces
    ``folder`` as a whole when the block ends (files in the old folder that the new one lacks
    are gone with it), with a manifest (:data:`MANIFEST`) listing what was written.

    ``folder`` is replaced only when it holds nothing but what an earlier call wrote there
    (:func:`owned_files`), checked before the block starts and again before the swap.

    Raises
    ------
    OutputConflictError
        ``folder`` is a symbolic link or a file, or holds files the package did not write
        (nothing is written).
    OSError
        When filling or swapping fails; it names ``folder``, the temporary folder is removed
        and the old one is left as it was.
    """
    target = Path(folder)
    owned_files(target)  # before anything is written
    tmp = _temporary_name(target)
    try:
        os.mkdir(tmp)
    except OSError as err:
        _reraise(err, tmp, target)
    old: Path | None = None
    owned: list[str] = []
    try:
        yield tmp
        _write_manifest(tmp)
        for file in tmp.iterdir():
            if file.is_file():
                _fsync(file)
        owned = owned_files(target)  # again: the block may have run for a while
        if os.path.lexists(target):
            _keep_mode(tmp, target)
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
        _remove_owned(old, owned)
