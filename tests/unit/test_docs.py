"""The README stays a short front page and the documentation site is built by CI.

The site itself is built (``mkdocs build --strict``, warnings as errors) by ``.ci/run``: a
build takes several seconds and needs the ``docs`` extra, so the tests check only what keeps
that build and the README honest.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
DOCS_COMMAND = 'pip install -e ".[docs]" && mkdocs build --strict'


def test_readme_is_a_short_front_page():
    assert len(README.splitlines()) <= 150


@pytest.mark.parametrize(
    "command",
    [
        "python -m pip install -e . && bbt-widget report bbt_widget/datasets/pmlb16_4fold.csv"
        " -o report.html",
        'python -m pip install -e ".[test]" && python -m pytest',
        "python3 -m venv .venv && . .venv/bin/activate",
        DOCS_COMMAND,
    ],
)
def test_readme_names_the_commands(command):
    assert command in README


def test_readme_links_point_at_files_in_the_repository():
    targets = re.findall(r"\]\(([^)#]+)\)", README)
    local = [t for t in targets if "://" not in t]
    assert local, "the README links its files"
    for target in local:
        assert (REPO / target).exists(), target
    assert "![" not in README or all(
        (REPO / t).exists() for t in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README)
    )


def test_ci_installs_the_docs_extra_and_builds_the_site_strictly():
    ci = (REPO / ".ci" / "run").read_text()
    install = next(line for line in ci.splitlines() if "pip install" in line and "-e" in line)
    assert "docs" in install and "test" in install
    assert re.search(r"(?m)^mkdocs build --strict$", ci)
    assert "docs = [" in (REPO / "pyproject.toml").read_text()


def test_every_page_in_the_site_navigation_exists():
    config = (REPO / "mkdocs.yml").read_text()
    pages = re.findall(r":\s+(\S+\.(?:md|ipynb))\s*$", config, flags=re.MULTILINE)
    assert len(pages) >= 20
    for page in pages:
        assert (REPO / "docs" / page).exists(), page
    # the site builds offline: no web fonts fetched from Google
    assert re.search(r"(?m)^\s+font: false", config)


def test_the_site_hook_shows_sphinx_roles_as_code_names():
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", REPO / "mkdocs_hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    html = "<p>See :func:<code>bbt_widget.fit</code> and :meth:<code>refit</code>; a:b:c.</p>"
    assert hooks.on_page_content(html) == (
        "<p>See <code>bbt_widget.fit</code> and <code>refit</code>; a:b:c.</p>"
    )
    assert "mkdocs_hooks.py" in (REPO / "mkdocs.yml").read_text()
