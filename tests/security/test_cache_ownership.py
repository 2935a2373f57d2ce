"""A cache that others can write never runs their code.

A team may point ``BBT_WIDGET_CACHE`` at a shared folder of mode 777. Another user can then
create the (predictable) folder of a compiled model and put a module or executable there; a
fit that loaded it would run that user's code as the fitting user. These tests plant one as a
second user (``nobody``, through ``setpriv``: CI runs as root) whose constructor writes a
marker file, and show that the fit refuses, names the folder and the fix, and never loads it.
The same holds for a folder or file in the chain that its group or others may write, for
CmdStan executables and for the widget's cached chart specs; and the folders the cache creates
are private whatever the umask.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

from bbt_widget import engines
from bbt_widget.charts import spec_cache
from bbt_widget.engines import EngineError, _cache

BT_DATA = {  # paper Table 3b
    "n_alg": 5,
    "i1": [1, 1, 1, 1, 2, 2, 2, 3, 3, 4],
    "i2": [2, 3, 4, 5, 3, 4, 5, 4, 5, 5],
    "win1": [7, 2, 2, 6, 7, 6, 5, 11, 11, 12],
    "win2": [14, 19, 19, 15, 14, 15, 15, 10, 10, 9],
}
SETPRIV = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"]


def _needs_second_user() -> None:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("acting as a second user needs root (as in CI)")
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv is not installed")


def as_nobody(script: str, *args: str) -> None:
    """Run the shell ``script`` (its arguments as $1, $2...) as the user ``nobody``."""
    subprocess.run([*SETPRIV, "sh", "-ec", script, "sh", *args], check=True)


@pytest.fixture
def team_cache(shared: Path, monkeypatch) -> Path:
    """``BBT_WIDGET_CACHE`` on a folder of mode 777 (a team's shared model cache)."""
    root = shared / "team-cache"
    root.mkdir()
    root.chmod(0o777)
    monkeypatch.setenv("BBT_WIDGET_CACHE", str(root))
    return root


def _pystan_model_folder(root: Path, name: str = "planted") -> Path:
    """Where httpstan keeps a compiled model in the cache ``root`` (its layout)."""
    return root / "stan" / "httpstan" / "4.13.0" / "models" / name


def _planted_module(folder: Path, marker: Path) -> Path:
    """A shared library whose constructor, which ``dlopen`` runs, writes ``marker``."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    source = folder / "planted.c"
    source.write_text(
        textwrap.dedent(
            f"""
            #include <stdio.h>
            __attribute__((constructor)) static void planted(void) {{
                FILE *f = fopen({json.dumps(str(marker))}, "w");
                if (f) {{ fputs("planted code ran", f); fclose(f); }}
            }}
            """
        )
    )
    library = folder / "planted.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    library.chmod(0o755)
    return library


def _fit(engine: str) -> None:
    engines.sample("bbt", BT_DATA, engine=engine, seed=1, iter_warmup=50, iter_sampling=50)


def _refuses_and_names(engine: str, folder: Path, marker: Path, *words: str) -> None:
    with pytest.raises(EngineError) as info:
        _fit(engine)
    engines.shutdown()
    message = str(info.value)
    assert f"{folder} " in message, message
    for word in words:
        assert word in message, message
    assert not marker.exists(), "the planted code ran"


# ----------------------------------------------------------------------------- PyStan modules


def _pystan_or_skip() -> None:
    if "pystan" not in engines.available_engines():
        pytest.skip("PyStan is not available here")


def test_a_module_planted_in_a_shared_cache_is_never_loaded(shared, team_cache, no_child):
    _needs_second_user()
    _pystan_or_skip()
    marker = shared / "marker"
    library = _planted_module(shared, marker)
    folder = _pystan_model_folder(team_cache)
    # the other user creates httpstan's folder of a model and puts a module there
    as_nobody(
        'mkdir -p "$1" && cp "$2" "$1/stan_services_model_planted$3"',
        str(folder),
        str(library),
        EXTENSION_SUFFIXES[0],
    )
    assert folder.stat().st_uid != 0
    _refuses_and_names("pystan", team_cache, marker, "writable by", f"chmod 700 {team_cache}")
    # following that advice: the cache root is private now, but the model's folders are still
    # the other user's, and are named with the fix
    team_cache.chmod(0o700)
    _refuses_and_names("pystan", team_cache / "stan", marker, "belongs to nobody", "rm -rf")
    assert no_child == []  # neither built nor loaded


def test_a_module_file_of_another_user_is_never_loaded(tmp_path, monkeypatch, no_child):
    """A private chain of folders, but the module itself is not ours: refused too."""
    _needs_second_user()
    _pystan_or_skip()
    monkeypatch.setenv("BBT_WIDGET_CACHE", str(tmp_path / "cache"))
    folder = _pystan_model_folder(tmp_path / "cache")
    _cache.make_private_dirs(folder)
    marker = tmp_path / "marker"
    module = folder / f"stan_services_model_planted{EXTENSION_SUFFIXES[0]}"
    os.replace(_planted_module(tmp_path, marker), module)
    module.chmod(0o755)
    os.chown(module, 65534, 65534)  # as if another user had replaced it
    _refuses_and_names("pystan", module, marker, "belongs to nobody")
    assert no_child == []


@pytest.mark.parametrize(
    ("where", "mode", "words"),
    [
        ("root", 0o777, ["writable by all users", "chmod 700"]),
        ("root", 0o1777, ["writable by all users", "mode 1777"]),  # /tmp-like, sticky
        ("root", 0o775, ["writable by its group"]),
        ("engine", 0o770, ["writable by its group", "chmod 700"]),
        ("model", 0o757, ["writable by all users"]),
        ("module", 0o666, ["file", "chmod go-w"]),
    ],
)
def test_a_folder_or_module_others_can_write_is_refused(
    tmp_path, monkeypatch, no_child, where, mode, words
):
    _pystan_or_skip()
    monkeypatch.setenv("BBT_WIDGET_CACHE", str(tmp_path / "cache"))
    folder = _pystan_model_folder(tmp_path / "cache")
    _cache.make_private_dirs(folder)
    module = folder / f"stan_services_model_x{EXTENSION_SUFFIXES[0]}"
    module.write_bytes(b"\x7fELF")
    module.chmod(0o644)
    chain = {"root": tmp_path / "cache", "engine": tmp_path / "cache" / "stan"}
    chain |= {"model": folder, "module": module}
    chain[where].chmod(mode)
    for attempt in (lambda: engines.get("pystan").compile("bbt"), lambda: _fit("pystan")):
        with pytest.raises(EngineError) as info:
            attempt()
        message = str(info.value)
        assert f"{chain[where]} " in message and "BBT_WIDGET_CACHE" in message, message
        for word in words:
            assert word in message, message
    assert no_child == []


def test_cache_folders_are_private_whatever_the_umask(tmp_path, monkeypatch, no_child):
    """Under ``umask 000`` the folders the engines make (new parents included) are 0700;
    the children that compile into them set their own umask (077)."""
    root = tmp_path / "new" / "cache"
    monkeypatch.setenv("BBT_WIDGET_CACHE", str(root))
    old = os.umask(0)
    try:
        env = engines.get("pystan")._env()
    finally:
        os.umask(old)
    assert env["XDG_CACHE_HOME"] == str(root / "stan")
    for folder in (tmp_path / "new", root, root / "stan"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    for child in ("_pystan_child.py", "_cmdstan_child.py"):
        source = (Path(_cache.__file__).parent / child).read_text()
        assert "os.umask(0o077)" in source, child


# ----------------------------------------------------------------------------- CmdStan


def test_a_cmdstan_executable_planted_in_a_shared_cache_is_never_run(
    shared, team_cache, fake_cmdstan_home, no_child
):
    _needs_second_user()
    marker = shared / "marker"
    exe = engines.get("cmdstanpy")._stan_file("bbt").with_suffix("")
    as_nobody(
        'mkdir -p "$1" && printf "#!/bin/sh\\necho planted code ran > %s\\n" "$2" > "$3" '
        '&& chmod 755 "$3" && touch "$3.stan"',
        str(exe.parent),
        str(marker),
        str(exe),
    )
    _refuses_and_names("cmdstanpy", team_cache, marker, "writable by all users", "chmod 700")
    team_cache.chmod(0o700)
    _refuses_and_names("cmdstanpy", team_cache / "cmdstan", marker, "belongs to nobody")
    assert no_child == []


def test_a_cmdstan_executable_others_can_write_is_refused(
    tmp_path, monkeypatch, fake_cmdstan_home, no_child
):
    """A CmdStan executable of the cache that its group may write is never run."""
    monkeypatch.setenv("BBT_WIDGET_CACHE", str(tmp_path / "cache"))
    stan_file = engines.get("cmdstanpy")._stan_file("bbt")
    _cache.make_private_dirs(stan_file.parent)
    stan_file.write_text("// the program\n")
    exe = stan_file.with_suffix("")
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o775)
    with pytest.raises(_cache.UnsafeCacheError, match=f"file {exe} is writable by its group"):
        _fit("cmdstanpy")
    assert no_child == []
    exe.chmod(0o755)
    _cache.check_tree(stan_file.parent)


# ----------------------------------------------------------------------------- chart specs


@pytest.fixture
def fresh_specs() -> Iterator[None]:
    spec_cache._cached_spec.cache_clear()
    yield
    spec_cache._cached_spec.cache_clear()  # later tests read the default cache again


@pytest.mark.usefixtures("fresh_specs")
def test_a_chart_spec_planted_in_a_shared_cache_is_ignored(team_cache):
    _needs_second_user()
    path = spec_cache._spec_cache_path("view")
    planted = {"planted": True, "title": "<img src=x onerror=alert(1)>"}
    as_nobody(
        'mkdir -p "$1" && printf %s "$2" > "$3"', str(path.parent), json.dumps(planted), str(path)
    )
    with pytest.warns(RuntimeWarning, match=rf"not cached: .*{team_cache} is writable"):
        spec = spec_cache.view_spec()
    # the spec built afresh (the linked pairwise view: intervals beside ROPE overlap)
    assert "planted" not in spec and "hconcat" in spec and "params" in spec
    assert json.loads(path.read_text()) == planted  # neither read nor replaced

    # with the root made private, the folder and the file are still the other user's
    team_cache.chmod(0o700)
    spec_cache._cached_spec.cache_clear()
    with pytest.warns(RuntimeWarning, match=rf"{path.parent} belongs to nobody"):
        assert "planted" not in spec_cache.view_spec()
    # in a folder of ours, a file of another user's is ignored as well
    os.chown(path.parent, 0, 0)
    spec_cache._cached_spec.cache_clear()
    with pytest.warns(RuntimeWarning, match=rf"file {path} belongs to nobody"):
        assert "planted" not in spec_cache.view_spec()


def test_a_relative_cache_is_made_absolute_once_for_every_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relative ``BBT_WIDGET_CACHE`` was resolved by each process in its own working
    directory: the PyStan worker, which runs elsewhere, loaded a module another user had
    planted under that other folder. It is now made absolute in the first process that reads
    it, and the environment its workers inherit holds the absolute path; a later chdir does
    not move it."""
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    here.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(here)
    monkeypatch.setenv("BBT_WIDGET_CACHE", "rel-cache")
    root = _cache.cache_root()
    assert root == here / "rel-cache" and root.is_absolute()
    assert os.environ["BBT_WIDGET_CACHE"] == str(here / "rel-cache")
    monkeypatch.chdir(elsewhere)
    assert _cache.cache_root() == here / "rel-cache"
    # a child process (as an engine's worker is) sees the absolute path from its own folder
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "from bbt_widget.engines import _cache; print(_cache.cache_root())",
        ],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == str(here / "rel-cache")
