"""The C++ toolchain a model is compiled with: part of every compiled-model cache key.

A compiled model depends on the compiler that built it and on its flags as well as on the Stan
program: after a toolchain upgrade (a new g++, another ``$CXX``) or a change of our flags, a
module built before must not be reused (an ABI change can make it crash or fail to load), so
the cache key holds a short hash of the compiler's identity (its command and the first line of
its ``--version``), the flags the user's environment adds, and our own flags.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import sysconfig
from collections.abc import Sequence
from functools import cache

#: Environment variables that change how setuptools (PyStan) or make (CmdStan) compile.
_ENV_VARS = ("CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS")


@cache
def _version_line(command: str) -> str:
    """First line of ``command --version`` ("not found" if it does not run)."""
    try:
        out = subprocess.run(
            [*shlex.split(command)[:1], "--version"],
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError, IndexError):
        return "not found"
    lines = (out.stdout or out.stderr).strip().splitlines()
    return lines[0] if lines else f"exit code {out.returncode}"


def compilers() -> dict[str, str]:
    """The C and C++ compiler commands, as setuptools picks them (``$CC``/``$CXX`` win)."""
    return {
        var: os.environ.get(var) or sysconfig.get_config_var(var) or default
        for var, default in (("CC", "cc"), ("CXX", "c++"))
    }


def missing() -> list[str]:
    """The compiler commands of :func:`compilers` that are not found on PATH (``$CC`` may
    carry flags: its first word is looked up)."""
    absent = []
    for command in compilers().values():
        words = command.split()
        if not words or shutil.which(words[0]) is None:
            absent.append(command)
    return absent


def identity() -> str:
    """The toolchain in words: each compiler command with its version, and the flag variables.

    E.g. ``"CC=gcc -pthread (gcc (Debian 12.2.0-14) 12.2.0); CXX=g++ -pthread (...)"``.
    """
    parts = [f"{var}={cmd} ({_version_line(cmd)})" for var, cmd in compilers().items()]
    parts += [f"{var}={os.environ[var]}" for var in _ENV_VARS[2:] if os.environ.get(var)]
    return "; ".join(parts)


def tag(flags: Sequence[str] = ()) -> str:
    """Short hash of :func:`identity` and ``flags``, for a cache directory name."""
    text = identity() + "\0" + "\0".join(flags)
    return hashlib.sha256(text.encode()).hexdigest()[:10]
