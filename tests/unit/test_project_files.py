"""The files a user or a packager looks for beside the code (licence, changelog, citation),
and the release files: a wheel and an sdist that build and install with no Node.js."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: The front-end bundle that npm builds and every release file must carry.
BUNDLE = ["bbt_widget/static/widget.js", "bbt_widget/static/widget.css"]


def test_licence_file_matches_the_licence_pyproject_declares() -> None:
    # (tomllib is Python 3.11+; the package supports 3.10)
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert re.search(r'^license = \{ text = "MIT" \}$', pyproject, re.M)
    assert text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in text


def test_changelog_follows_keep_a_changelog() -> None:
    text = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert text.startswith("# Changelog") and "## [Unreleased]" in text
    assert "keepachangelog.com" in text


def test_citation_file_names_the_software_and_the_method_paper() -> None:
    text = (REPO / "CITATION.cff").read_text(encoding="utf-8")
    fields = dict(
        line.split(": ", 1)
        for line in text.splitlines()
        if line and not line.startswith(" ") and ": " in line
    )
    assert fields["cff-version"] == "1.2.0"
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    version = re.search(r'^version = "([^"]+)"$', pyproject, re.M).group(1)
    assert fields["version"] == version
    assert "arXiv:2208.04935" in text and "Wainer" in text


def test_the_build_hook_skips_npm_exactly_when_the_shipped_bundle_is_there() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    build = config["tool"]["hatch"]["build"]
    hook = build["hooks"]["jupyter-builder"]
    assert hook["ensured-targets"] == BUNDLE
    assert hook["skip-if-exists"] == BUNDLE
    # the paths are where the npm build writes its bundle, and both release files ship them
    assert all(path.startswith(hook["build-kwargs"]["build_dir"] + "/") for path in BUNDLE)
    assert "bbt_widget/static/" in build["targets"]["wheel"]["artifacts"]
    assert "bbt_widget/static/" in build["targets"]["sdist"]["artifacts"]
    assert '"bbt_widget", "static"' in (REPO / "js" / "build.mjs").read_text(encoding="utf-8")


def _build(source: Path, kind: str, outdir: Path, env: dict[str, str]) -> Path:
    """Build one release file (``kind`` "sdist" or "wheel") of ``source`` into ``outdir``."""
    proc = subprocess.run(
        [sys.executable, "-m", "build", f"--{kind}", "--no-isolation", "--outdir", str(outdir)],
        cwd=source,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (built,) = outdir.glob("*.tar.gz" if kind == "sdist" else "*.whl")
    return built


@pytest.mark.slow
def test_the_sdist_ships_the_bundle_and_builds_a_wheel_with_no_node(tmp_path: Path) -> None:
    for module in ("build", "hatchling", "hatch_jupyter_builder"):
        if importlib.util.find_spec(module) is None:
            if os.environ.get("CI"):
                pytest.fail(f"{module} is missing (the test extra installs it)")
            pytest.skip(f"{module} is not installed (pip install -e '.[test]')")
    missing = [path for path in BUNDLE if not (REPO / path).is_file()]
    assert not missing, f"{missing} not built: pip install -e . runs npm once to build them"
    # only the interpreter's own folder on PATH: neither npm nor node can be found
    env = {**os.environ, "PATH": str(Path(sys.executable).parent)}
    assert shutil.which("npm", path=env["PATH"]) is None
    assert shutil.which("node", path=env["PATH"]) is None

    sdist = _build(REPO, "sdist", tmp_path / "sdist", env)
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
        archive.extractall(tmp_path / "src", filter="data")
    assert set(BUNDLE) <= names
    assert "stan/bbt.stan" in names and "js/src/index.js" in names
    assert not any("node_modules" in name for name in names)

    (unpacked,) = (tmp_path / "src").iterdir()
    wheel = _build(unpacked, "wheel", tmp_path / "wheel", env)
    with zipfile.ZipFile(wheel) as archive:
        files = set(archive.namelist())
        assert set(BUNDLE) <= files and "bbt_widget/stan/bbt.stan" in files
        built_js = archive.read("bbt_widget/static/widget.js")
        (metadata,) = (name for name in files if name.endswith(".dist-info/METADATA"))
        requires = [
            line.split(":", 1)[1].strip()
            for line in archive.read(metadata).decode().splitlines()
            if line.startswith("Requires-Dist:")
        ]
    assert built_js == (REPO / "bbt_widget/static/widget.js").read_bytes()
    # a plain `pip install` of the wheel brings neither PyStan nor httpstan: only its extras do
    stan = [r for r in requires if _name(r) in STAN_PACKAGES]
    extras = [re.search(r"extra == ['\"](\w+)['\"]", r) for r in stan]
    assert all(extras) and {e.group(1) for e in extras} == {"stan", "test", "docs"}, stan


# --- Stan is an extra -------------------------------------------------------------------------

#: The packages of the ``stan`` extra: PyStan, the Stan engine that installs from PyPI.
STAN_PACKAGES = {"pystan"}
#: What every message about a missing PyStan tells the user to run.
STAN_INSTALL = 'pip install "bbt-widget[stan]"'


def _name(requirement: str) -> str:
    return re.match(r"[A-Za-z0-9_.-]+", requirement).group(0).lower()


def test_pystan_is_an_extra_that_the_test_extra_installs_too() -> None:
    """The default install needs neither PyStan nor httpstan (the numpy engine is the default),
    and the package names httpstan nowhere (PyStan brings it); the README's test
    and docs commands (``pip install -e ".[test]"``, ``".[docs]"``) install them, so CI runs the
    real Stan tests and the notebooks' Davidson fits."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert not {_name(r) for r in project["dependencies"]} & (STAN_PACKAGES | {"httpstan"})
    extras = project["optional-dependencies"]
    assert not [r for extra in extras.values() for r in extra if _name(r) == "httpstan"]
    assert {_name(r) for r in extras["stan"]} == STAN_PACKAGES
    # httpstan has no Windows build: the extra installs nothing there (CmdStan runs instead)
    assert all(r.endswith("; sys_platform != 'win32'") for r in extras["stan"])
    # the tests and the site's notebooks run Stan fits
    assert set(extras["stan"]) <= set(extras["test"]) & set(extras["docs"])
    assert "real Stan" not in project["description"]
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    install = next(line for line in ci.splitlines() if "pip install" in line and " -e " in line)
    assert re.search(r'"\.\[[^"]*\btest\b[^"]*\]"', install), install


def test_ci_has_pystan_so_the_stan_tests_run_there() -> None:
    """Outside CI the Stan tests skip where PyStan is missing; under CI they must run."""
    if not os.environ.get("CI") or sys.platform == "win32":
        pytest.skip("checked under CI (Linux), where the test extra installs PyStan")
    from bbt_widget import engines

    assert engines.get("pystan").available(), f"PyStan is missing: {STAN_INSTALL}"


_WITHOUT_PYSTAN = r"""
import sys

# as if PyStan were not installed: importing either package fails
sys.modules["stan"] = None
sys.modules["httpstan"] = None

import bbt_widget as bbt
from bbt_widget.cli import main
from bbt_widget.engines import EngineError

base = bbt.datasets.load_base()
res = bbt.fit(base, dataset="db", seed=1)
assert res.engine == "numpy", res.engine
assert res.summary().shape[0] == 10
assert bbt.fit(base, dataset="db", seed=1, ties="davidson").engine == "numpy"
try:
    bbt.fit(base, dataset="db", seed=1, engine="pystan")
except EngineError as err:
    print(f"fit pystan: {err}")
else:
    raise AssertionError("a PyStan fit ran with no PyStan")
base.to_csv("base.csv", index=False)
code = main(["report", "base.csv", "--engine", "pystan", "-q", "-o", "pystan.html"])
print("exit code", code)
"""


@pytest.mark.slow
def test_without_pystan_the_default_fit_runs_and_stan_fits_say_what_to_install(
    tmp_path: Path,
) -> None:
    """In a fresh interpreter where PyStan cannot be imported and no CmdStan is found: the
    package imports, a default fit and a Davidson fit run (the numpy engine), and what needs
    PyStan (``engine="pystan"``, in Python and on the command line) stops with an error
    naming the install command and the compiler it needs."""
    env = {**os.environ, "HOME": str(tmp_path), "BBT_WIDGET_CACHE": str(tmp_path / "cache")}
    env.pop("CMDSTAN", None)  # no CmdStan found: ~/.cmdstan is the empty home's
    proc = subprocess.run(
        [sys.executable, "-c", _WITHOUT_PYSTAN],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    fits = [line for line in lines if line.startswith("fit ")]
    assert len(fits) == 1
    for line in fits:
        assert STAN_INSTALL in line and "C++ compiler" in line, line
    assert "exit code 3" in lines
    assert STAN_INSTALL in proc.stderr and "compiler" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "pystan.html").exists()
