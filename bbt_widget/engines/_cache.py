"""The compiled-model cache: where it lives, and building into it once per machine.

Compiled models go to ``platformdirs.user_cache_dir("bbt-widget")`` (or ``$BBT_WIDGET_CACHE``),
one directory per (engine, program hash, toolchain), never next to the installed package
(site-packages may be read-only). A build happens in a background thread, under a file lock so
that two processes never build the same model at once, into a scratch directory renamed into
place when complete, so that a half-built model is never seen. Callers only wait for the build:
a cancelled fit stops waiting while the build goes on, and the next fit picks it up.

Loading a compiled model runs its code as the user who fits, so the cache must be private: a
folder others can write (a team's shared ``BBT_WIDGET_CACHE`` of mode 777, say) would let them
plant a module that the next fit loads. The root is resolved to its real path once
(:func:`cache_root`); :func:`check_private` refuses any folder above it that another user
could replace the cache in, any folder from the root down, and any file, that is not owned by
this user (or root) or that group or others may write, and any symbolic link on the way
(:mod:`._cache_checks`); a fit loads a link to the very file it checked, in a folder of its
own (:mod:`._cache_loaded`). Every folder the cache creates is made with mode 0700, whatever
the umask.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import math
import os
import shutil
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

import platformdirs

try:
    import fcntl
except ImportError:  # Windows: only the cmdstanpy engine runs there; builds are not shared
    fcntl = None  # type: ignore[assignment]

from ..core.draws import ProgressCallback
from . import _cache_checks, _procs
from ._cache_checks import UnsafeCacheError as UnsafeCacheError  # raised by the checks
from .base import EngineError, FitCancelled

#: Build function: writes the compiled model into the given (empty) scratch directory.
Builder = Callable[[Path], None]

_jobs: dict[Path, Future[Path]] = {}
_jobs_lock = threading.Lock()


#: ``$BBT_WIDGET_CACHE`` (or the default) as given -> the real path it named when first read.
_ROOTS: dict[str, Path] = {}


def cache_root() -> Path:
    """Root of the bbt-widget cache (``$BBT_WIDGET_CACHE`` overrides the platform default).

    The root is resolved to its real path once, when first read (a relative
    ``$BBT_WIDGET_CACHE`` against this process's working directory), following only the
    symbolic links owned by this user or root, and a ``$BBT_WIDGET_CACHE`` is written back
    to the environment resolved: the worker processes, which run in other folders, inherit
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


def root_of(path: Path) -> Path:
    """The cache root that holds ``path``: of the roots this process has used (a fit may load
    a model compiled before ``$BBT_WIDGET_CACHE`` changed), the innermost; else
    :func:`cache_root`."""
    holding = [root for root in set(_ROOTS.values()) if path.is_relative_to(root)]
    return max(holding, key=lambda root: len(root.parts)) if holding else cache_root()


def check_private(path: Path) -> None:
    """Refuse ``path`` in the cache unless only this user (or root) can have written it.

    Every folder from ``/`` down to the cache root must belong to this user or root and be
    writable by no one else unless sticky; from the root down to ``path``, and ``path``
    itself, they must belong to this user or root and not be writable by group or others,
    sticky or not (others may still add files to a ``/tmp``-like folder). No symbolic link is
    followed on the way. Otherwise another user could have put a compiled model there, or
    replaced one (or a folder above it), whose code would run as this user when it is loaded.
    The check stops at the first that does not exist yet (the cache creates it private). A
    no-op on Windows, where permissions are access lists. The file a fit loads is checked
    again as it is opened (:func:`._cache_loaded.loadable`).

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


def _drop_others_write(folder: Path) -> None:
    """Clear the group and others write bits of everything in ``folder`` (a build's files
    get the umask's mode: a linker under ``umask 000`` writes a module of mode 777)."""
    for parent, folders, files in os.walk(folder):
        for name in folders + files:
            path = os.path.join(parent, name)
            info = os.lstat(path)
            if not stat.S_ISLNK(info.st_mode) and info.st_mode & 0o022:
                os.chmod(path, stat.S_IMODE(info.st_mode) & ~0o022)
    os.chmod(folder, 0o700)


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    make_private_dirs(path.parent)
    if fcntl is None:
        yield
        return
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)  # blocks this build thread only, never the caller
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _build(target: Path, is_built: Callable[[Path], bool], builder: Builder) -> None:
    with _file_lock(target.with_name(target.name + ".lock")):
        if is_built(target):  # another process finished it while we waited for the lock
            return
        # holding the lock, any scratch directory of this target is left over from a build
        # that was killed (e.g. the interpreter exited mid-compile)
        for stale in target.parent.glob(target.name + ".partial-*"):
            shutil.rmtree(stale, ignore_errors=True)
        scratch = Path(tempfile.mkdtemp(prefix=target.name + ".partial-", dir=target.parent))
        try:
            builder(scratch)
            _drop_others_write(scratch)
            if target.exists():  # a broken earlier build (is_built said no): replace it
                shutil.rmtree(target)
            try:
                scratch.rename(target)
            except OSError:
                if not is_built(target):  # (without file locks) another build won the race
                    raise
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


def _run_job(
    future: Future[Path], target: Path, is_built: Callable[[Path], bool], builder: Builder
) -> None:
    try:
        _build(target, is_built, builder)
    except BaseException as exc:  # delivered to every waiter
        future.set_exception(exc)
    else:
        future.set_result(target)


def ensure_built(
    target: Path,
    is_built: Callable[[Path], bool],
    builder: Builder,
    *,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
) -> float:
    """Make sure ``target`` holds a complete build; return the seconds spent waiting for it.

    First checks that the cache folders down to ``target`` are private (:func:`check_private`;
    the caller checks the built file it loads the same way) and not on a ``noexec`` mount
    (:func:`check_exec_mount`). Returns at once (0.0) when
    ``is_built(target)``. Otherwise starts the build (or joins the one already running in this
    process) and waits, reporting ``("compiling", nan)`` about once a second. Raises
    :class:`FitCancelled` if ``cancel`` is set meanwhile (the build goes on in the background,
    and the next call joins it) and re-raises the build's error if it fails (the next call
    retries).
    """
    check_private(target)
    check_exec_mount(target)
    if is_built(target):
        return 0.0
    try:
        make_private_dirs(target.parent)
    except OSError as exc:
        raise EngineError(
            f"cannot create the compiled-model cache {target.parent} ({exc}); "
            "set BBT_WIDGET_CACHE to a writable directory"
        ) from exc
    check_private(target)  # a folder another process made meanwhile is checked too
    with _jobs_lock:
        future = _jobs.get(target)
        # a finished job is stale here: it failed, or its result has since been removed
        if future is None or future.done():
            future = Future()
            _jobs[target] = future
            threading.Thread(
                target=_run_job,
                args=(future, target, is_built, builder),
                name=f"bbt-widget-build-{target.name}",
                daemon=True,  # the compiler's process group is killed at exit (see _procs)
            ).start()
    start = last_report = time.perf_counter()
    if progress is not None:
        progress("compiling", math.nan)
    while True:
        try:
            future.result(timeout=0.1)
            return time.perf_counter() - start
        except FutureTimeout:
            pass
        if cancel is not None and cancel.is_set():
            raise FitCancelled("cancelled while the Stan model was compiling")
        now = time.perf_counter()
        if progress is not None and now - last_report >= 1.0:
            last_report = now
            progress("compiling", math.nan)


def wait_for_builds(timeout: float = 10.0) -> None:
    """Wait (up to ``timeout`` seconds) for the builds running in this process to end.

    After their compilers were killed (:func:`stop_builds`), this lets each build thread
    remove its scratch folders before the interpreter exits.
    """
    with _jobs_lock:
        pending = [f for f in _jobs.values() if not f.done()]
    concurrent.futures.wait(pending, timeout=timeout)


def stop_builds(timeout: float = 10.0) -> None:
    """Kill every compile (and other engine process) of this process and clean up after it.

    For an exiting program (a signal, the interpreter's exit): a killed build fails and
    removes its temporary folders; the next fit starts it afresh.
    """
    _procs.kill_all()
    wait_for_builds(timeout)


# Registered after _procs's own exit handler, so it runs first (atexit is last-in, first-out):
# the build threads are daemons, stopped soon after the exit handlers, so wait for them here.
atexit.register(stop_builds, 5.0)


def discard(target: Path) -> None:
    """Remove a build that turned out to be broken (e.g. a truncated module), so that the next
    :func:`ensure_built` rebuilds it. Renamed away first, so that no process sees it half
    removed; the name is one that :func:`_build` clears as left over if this fails midway.

    Only in a cache that passes :func:`check_private` (raises :class:`UnsafeCacheError`
    otherwise): no removal goes through a folder another user could have swapped, and a
    symbolic link in place of ``target`` is renamed, never followed (``rmtree`` refuses it).
    """
    check_private(target)
    check_exec_mount(target)  # a model that cannot load there is not broken: keep it
    aside = target.with_name(f"{target.name}.partial-discarded-{os.getpid()}")
    try:
        target.rename(aside)
    except OSError:  # already gone (another process discarded it)
        return
    shutil.rmtree(aside, ignore_errors=True)


def unusable_build(what: str, target: Path, reason: Exception, suspects: str) -> EngineError:
    """The error for a cached build that still does not work after one rebuild: it names the
    folder to delete (and the whole cache, and ``BBT_WIDGET_CACHE``) and what else to suspect.
    """
    return EngineError(
        f"{what} does not work even after rebuilding it ({reason}). Delete the folder "
        f"{target} (or the whole cache {cache_root()}, or set BBT_WIDGET_CACHE to another "
        f"folder) and try again; if it keeps failing, {suspects} is broken "
        "(BBT_WIDGET_VERBOSE=1 shows the build)."
    )
