"""The README stays a short front page and the documentation site is built by CI.

The site itself is built (``mkdocs build --strict``, warnings as errors) by ``.ci/run``: a
build takes several seconds and needs the ``docs`` extra, so the tests check only what keeps
that build and the README honest.
"""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
DOCS_COMMAND = 'pip install -e ".[docs]" && mkdocs build --strict'


def _hooks():
    """The site's MkDocs hooks (``mkdocs_hooks.py``), imported from the checkout."""
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", REPO / "mkdocs_hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    return hooks


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
    hooks = _hooks()
    html = "<p>See :func:<code>bbt_widget.fit</code> and :meth:<code>refit</code>; a:b:c.</p>"
    assert hooks.on_page_content(html) == (
        "<p>See <code>bbt_widget.fit</code> and <code>refit</code>; a:b:c.</p>"
    )
    assert "mkdocs_hooks.py" in (REPO / "mkdocs.yml").read_text()


def test_the_site_hook_drops_scripts_from_other_sites():
    hooks = _hooks()
    page = (
        '<head><script src="https://cdnjs.cloudflare.com/ajax/libs/mermaid/10.7.0/mermaid.min.js">'
        "</script>\n<script type='module' src='//cdn.example/x.js'></script>"
        '<script src="../assets/javascripts/bundle.js"></script><script>var a = 1;</script></head>'
    )
    assert hooks.on_post_page(page) == (
        '<head><script src="../assets/javascripts/bundle.js"></script><script>var a = 1;</script>'
        "</head>"
    )
    ci = (REPO / ".ci" / "run").read_text()
    assert "pages above load remote scripts" in ci  # and CI checks the built pages


def test_the_site_runs_each_notebook_away_from_the_checkout_with_svg_charts(tmp_path):
    """The hook runs a notebook (here a small one) in a fresh kernel: the copy it renders has
    the outputs, a chart as SVG drawn offline, and what the notebook writes lands in the
    build's temporary folder, not beside the notebook; the notebook itself is only read."""
    if not os.environ.get("CI"):
        pytest.importorskip("nbclient")
        pytest.importorskip("ipykernel")
    import nbformat

    source = tmp_path / "checkout" / "demo.ipynb"
    source.parent.mkdir()
    cells = [
        "from pathlib import Path\nPath('written.txt').write_text('x')\nprint('hello')",
        "import altair as alt\nimport pandas as pd\n"
        "alt.Chart(pd.DataFrame({'a': [1, 2]})).mark_bar().encode(x='a')",
    ]
    nbformat.write(
        nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), source
    )
    stored = source.read_bytes()
    work, target = tmp_path / "build", tmp_path / "build" / "notebooks" / "demo.ipynb"
    work.mkdir()
    _hooks().execute_notebook(source, target, work)

    executed = nbformat.read(target, as_version=4)
    printed, chart = (cell.outputs for cell in executed.cells)
    assert printed[0]["text"] == "hello\n"
    assert chart[0]["data"]["image/svg+xml"].lstrip().startswith("<svg")
    assert source.read_bytes() == stored
    assert sorted(p.name for p in source.parent.iterdir()) == ["demo.ipynb"]
    assert len(list(work.glob("demo-*/written.txt"))) == 1


def test_the_site_shows_the_notebooks_with_outputs_and_ci_checks_the_pages():
    config = (REPO / "mkdocs.yml").read_text()
    # mkdocs-jupyter renders the copies the hook ran, as they are
    assert re.search(r"(?m)^\s+execute: false$", config)
    hooks = _hooks()
    pages = re.findall(r":\s+(notebooks/\S+\.ipynb)\s*$", config, flags=re.MULTILINE)
    assert len(pages) == 4 and all(hooks._NOTEBOOKS.match(page) for page in pages)
    ci = (REPO / ".ci" / "run").read_text()
    assert "BBT_DOCS_EXECUTE" not in ci  # CI builds the site with the notebooks run
    assert re.search(r"(?m)^for page in site/notebooks/\*\.html; do$", ci)
