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
    assert built_js == (REPO / "bbt_widget/static/widget.js").read_bytes()
