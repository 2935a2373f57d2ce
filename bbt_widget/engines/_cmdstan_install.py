"""Where the CmdStan installation is, which version, and whether its ``stanc`` runs here.

cmdstanpy's rules, without importing it (its import takes most of a second, and leaves a
temporary folder behind when the process is killed). The engine (:mod:`._cmdstan`) keeps the
answers of :func:`stanc_problem` per ``stanc`` file.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from . import _procs
from .base import EngineError

INSTALL_HINT = (
    "Install CmdStan with `python -m cmdstanpy.install_cmdstan` (needs internet and a C++ "
    "toolchain) or point $CMDSTAN at an existing installation; or use engine='pystan' "
    '(`pip install "bbt-widget[stan]"`).'
)
#: What to do about a CmdStan installation that was found but does not work.
REPAIR_HINT = (
    "Reinstall it with `python -m cmdstanpy.install_cmdstan --overwrite` (needs internet and a "
    "C++ toolchain) or point $CMDSTAN at a working installation; or use engine='pystan' "
    '(`pip install "bbt-widget[stan]"`).'
)
#: The first CmdStan with the ``laplace`` method (and ``optimize jacobian=1``, its mode).
LAPLACE_SINCE = (2, 32)


def _version_key(name: str) -> tuple[int, int, int] | None:
    """Sort key of a ``cmdstan-<major>.<minor>.<patch>[-rc<n>]`` folder name (cmdstanpy's
    order: a release candidate sorts before its release), or None for other names."""
    found = re.fullmatch(r"cmdstan-(\d+)\.(\d+)\.(\d+)(?:-rc(\d+))?", name)
    if not found:
        return None
    major, minor, patch, rc = found.groups()
    return int(major), int(minor), int(rc) - 100 if rc else int(patch)


def cmdstan_path() -> str | None:
    """The CmdStan installation cmdstanpy would use, or None.

    cmdstanpy's rule, without importing it (its import takes most of a second, and leaves a
    temporary folder behind when the process is killed): ``$CMDSTAN``, else the newest
    ``~/.cmdstan/cmdstan-<version>`` (the only one, whatever its name, if there is one); a
    valid installation has a ``makefile``.
    """
    env = os.environ.get("CMDSTAN")
    if env:
        path = Path(env)
    else:
        home = Path.home() / ".cmdstan"
        try:
            folders = [d for d in home.iterdir() if d.is_dir() and d.name.startswith("cmdstan-")]
        except OSError:
            return None
        if len(folders) > 1:
            versions = {d: _version_key(d.name) for d in folders}
            folders = sorted((d for d, v in versions.items() if v), key=lambda d: versions[d] or ())
        if not folders:
            return None
        path = folders[-1]
    if not (path / "makefile").is_file():
        return None
    return os.path.normpath(path)


def stanc_file(path: str) -> Path:
    """The Stan compiler of the installation at ``path``."""
    return Path(path) / "bin" / ("stanc.exe" if sys.platform == "win32" else "stanc")


def not_built(path: str) -> str:
    """Why the installation at ``path`` (found, with no ``stanc``) does not work."""
    return f"The CmdStan installation {path} is not built (it has no {stanc_file(path)}). " + (
        REPAIR_HINT
    )


def stanc_problem(stanc: str) -> str | None:
    """What ``stanc --version`` did wrong, or None if it ran (a few milliseconds)."""
    try:
        proc = subprocess.run(
            [stanc, "--version"], stdin=subprocess.DEVNULL, capture_output=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        why = f"could not run ({exc})"
    else:
        if proc.returncode == 0:
            return None
        if proc.returncode < 0:
            why = _procs.killed_by(-proc.returncode)
        else:
            why = f"failed (exit code {proc.returncode})"
    installation = Path(stanc).parents[1]
    return (
        f"The CmdStan installation {installation} does not work here: `{stanc} --version` "
        f"{why}. " + REPAIR_HINT
    )


def cmdstan_version(path: str) -> str:
    """``CMDSTAN_VERSION`` from the installation's makefile (else from its folder name)."""
    try:
        text = (Path(path) / "makefile").read_text(errors="replace")
    except OSError:
        text = ""
    found = re.search(r"^CMDSTAN_VERSION\s*:?=\s*(\S+)", text, re.MULTILINE)
    if found:
        return found.group(1)
    return Path(path).name.removeprefix("cmdstan-") or "unknown"


def check_laplace_version() -> None:
    """Raise EngineError when the CmdStan installation predates the ``laplace`` method."""
    path = cmdstan_path()
    version = cmdstan_version(path) if path else "unknown"
    found = re.match(r"(\d+)\.(\d+)", version)
    if found and (int(found.group(1)), int(found.group(2))) < LAPLACE_SINCE:
        since = ".".join(map(str, LAPLACE_SINCE))
        raise EngineError(
            f"CmdStan {version} ({path}) has no Laplace approximation, which needs CmdStan "
            f"{since} or newer: install a newer one with `python -m cmdstanpy.install_cmdstan` "
            "or use engine='pystan'."
        )
