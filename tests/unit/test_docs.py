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


@pytest.mark.slow
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


# --- what the pages say about the engines and the install --------------------------------------

#: Claims from when Stan was the only engine, or the only one for Davidson's ties. The default
#: engine is numpy's exact samplers (no compiler), for every model; PyStan is the ``stan``
#: extra, for ``engine="pystan"`` and the widget's background check. Each pattern, and why it
#: is wrong.
STALE = {
    r"\breal\W+Stan\b": "the default fit is the numpy engine's, not Stan's",
    r"\bsampled\s+with\s+Stan\b": "the posterior is sampled by the numpy engine by default",
    r"\bfirst\s+fit\b(\s+on\s+a\s+new\s+machine)?\s+compiles\s+the\s+Stan\s+model": (
        "a default fit compiles nothing"
    ),
    r"(?m)^\s*-\s+a\s+C\+\+\s+compiler": "a compiler is no prerequisite",
    r"\bpip\s+install\s+pystan\b": 'PyStan comes with the extra: pip install "bbt-widget[stan]"',
    r"\bStan\s+fit\s+per\s+pair\b": "the hierarchical test samples in numpy",
    r"\bwaits\s+for\s+Stan\b": "a default fit runs no Stan",
    r"\(``\"pystan\"``\s+or\s+``\"cmdstanpy\"``\)": "the numpy engine samples too",
    r"Davidson[^.]{0,60}?\bneeds?\b[^.]{0,30}?(Stan|compiler|g\+\+)": (
        "the numpy engine samples Davidson's model, with no compiler"
    ),
}
STAN_EXTRA = 'pip install "bbt-widget[stan]"'


def _api_docstrings() -> dict[str, str]:
    """The docstrings the API pages show (each ``::: name`` and its public members)."""
    import importlib
    import inspect

    names = set()
    for page in (REPO / "docs" / "api").glob("*.md"):
        names |= set(re.findall(r"(?m)^::: (\S+)", page.read_text(encoding="utf-8")))
    texts: dict[str, str] = {}

    def walk(obj: object, name: str, depth: int) -> None:
        if name in texts or depth > 2:
            return
        texts[name] = inspect.getdoc(obj) or ""
        if inspect.ismodule(obj) or inspect.isclass(obj):
            for key, value in vars(obj).items():
                value = value.fget if isinstance(value, property) else value
                own = str(getattr(value, "__module__", "")).startswith("bbt_widget")
                if not key.startswith("_") and own and (callable(value) or inspect.isclass(value)):
                    walk(value, f"{name}.{key}", depth + 1)

    for name in sorted(names):
        module, _, rest = name.partition(".")
        obj: object = importlib.import_module(module)
        for part in rest.split("."):
            try:
                obj = getattr(obj, part)
            except AttributeError:  # a module not imported by its package
                obj = importlib.import_module(f"{obj.__name__}.{part}")
        walk(obj, name, 0)
    return texts


def _cli_help(capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    from bbt_widget import cli

    helps = {}
    for command in ([], ["report"], ["calibrate"], ["demo"]):
        with pytest.raises(SystemExit):
            cli.main([*command, "--help"])
        helps["bbt-widget " + " ".join([*command, "--help"])] = capsys.readouterr().out
    return helps


def _texts(capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """Every text a user reads about the package: the README, the site's pages, the
    notebooks' prose, the package's description and citation, the API's docstrings and the
    command line's help."""
    import json

    texts = {"README.md": README}
    for page in sorted((REPO / "docs").rglob("*.md")):
        texts[page.relative_to(REPO).as_posix()] = page.read_text(encoding="utf-8")
    for notebook in sorted((REPO / "example_notebooks").glob("*.ipynb")):
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        texts[notebook.name] = "\n\n".join(
            "".join(c["source"]) for c in cells if c["cell_type"] == "markdown"
        )
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    texts["pyproject.toml description"] = re.search(r'(?m)^description = "(.*)"$', pyproject)[1]
    texts["CITATION.cff"] = (REPO / "CITATION.cff").read_text(encoding="utf-8")
    texts.update(_api_docstrings())
    texts.update(_cli_help(capsys))
    return texts


def test_no_page_docstring_or_help_says_the_default_fit_needs_stan_or_a_compiler(capsys):
    texts = _texts(capsys)
    assert len(texts) > 100 and "bbt_widget.fit" in texts and "bbt-widget report --help" in texts
    stale = [
        f"{where}: {found.group(0)!r} ({why})"
        for where, text in texts.items()
        for pattern, why in STALE.items()
        for found in re.finditer(pattern, text)
    ]
    assert not stale, "\n".join(stale)


@pytest.mark.parametrize(
    "page",
    ["README.md", "docs/getting-started.md", "docs/engines.md", "docs/troubleshooting.md"],
)
def test_the_install_pages_name_the_default_engine_and_the_stan_extra(page):
    text = re.sub(r"\s+", " ", (REPO / page).read_text(encoding="utf-8"))
    lower = text.lower()
    assert "numpy engine" in text
    assert "no compiler" in lower or "no c++ compiler" in lower
    assert STAN_EXTRA in text, f"{page} does not say how to install PyStan"
    # ...and what needs it
    assert '"pystan"' in text
