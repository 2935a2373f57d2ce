"""The documentation site reads from disk, and every code example in it runs.

* The site is built to be opened as files (``site/index.html``, as the README says): with
  ``use_directory_urls: false`` every link names an ``.html`` file, and every internal link of a
  built site resolves to a file, its anchor included (``mkdocs build --strict`` checks the
  Markdown links, not the notebooks' tables of contents nor the theme's pages like 404.html).
  The site is built once per session without running the notebooks (``BBT_DOCS_EXECUTE=0``,
  about 20 s); ``BBT_BUILT_SITE=<folder>`` checks a site built already instead (CI points it at
  the full build, notebooks run). Its search works from disk too (a headless Chromium types
  into the search box of ``site/index.html`` opened as a file).
* The widget in a static page: the hook shows a displayed ``BBTWidget`` as its charts (SVG
  drawn offline), not as ``<BBTWidget object at 0x...>``.
* Every ```` ```python ```` block of ``docs/*.md`` runs, on the shipped data, in a temporary
  folder: the blocks of one page in order in one namespace, with no RuntimeWarning. A block
  that cannot run here says why in its first line, visibly
  (``# not run by the docs tests: <reason>``).
* The example notebooks use the public API (``bbt.report.write``, ``bbt.charts``), not the
  modules behind it.
"""

from __future__ import annotations

import html.parser
import importlib.util
import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
NOTEBOOKS = REPO / "example_notebooks"
CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
#: Debian's Chromium, as the browser tests use it (Playwright's own download cannot work here).
CHROMIUM = os.environ.get("BBT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]

#: A code block that the tests do not run says so in its first line, with the reason.
SKIP = re.compile(r"^#\s*not run by the docs tests:\s*(?P<reason>\S.*)$")
#: A page's fenced code blocks: the fence's language and the code.
FENCE = re.compile(r"^```(?P<lang>[\w+-]*)[^\n]*\n(?P<code>.*?)^```\s*$", re.S | re.M)
#: Pages whose examples need a Stan engine (a Davidson fit, in the default sweep grid).
STAN_PAGES = {"robustness.md"}


# --- the site from disk ---------------------------------------------------------------------


def _config() -> str:
    return (REPO / "mkdocs.yml").read_text(encoding="utf-8")


def test_the_site_is_built_for_file_urls():
    """``site/index.html`` opened from disk: a link to ``widget/`` would open a directory
    listing; ``widget.html`` opens the page."""
    assert re.search(r"(?m)^use_directory_urls:\s*false\s*$", _config())


class _Links(html.parser.HTMLParser):
    """The ids of a page and the links it holds (href and src of every element)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for key in ("id", "name") if tag == "a" else ("id",):
            if values.get(key):
                self.ids.add(values[key])  # type: ignore[arg-type]
        for key in ("href", "src"):
            if values.get(key) is not None and tag != "base":
                self.links.append(values[key])  # type: ignore[arg-type]


def _parse(page: Path) -> _Links:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def dead_links(site: Path) -> list[str]:
    """Every internal link of the built ``site`` that does not open a file from disk.

    A link is internal when it has no scheme and no host; it must name a file (not a
    folder, which ``file://`` shows as a listing) inside the site, reached relative to the page
    (a root-absolute ``/assets/...`` is the file system's root), and its ``#anchor`` must be
    an id of that file.
    """
    site = site.resolve()
    pages = {page: _parse(page) for page in sorted(site.rglob("*.html"))}
    problems = []
    for page, parsed in pages.items():
        where = page.relative_to(site).as_posix()
        for link in parsed.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith("//"):
                continue  # another site, data:, mailto:, javascript:
            if parts.path.startswith("/"):
                problems.append(f"{where}: root-absolute link {link!r}")
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if not target.is_relative_to(site):
                problems.append(f"{where}: {link!r} leaves the site")
            elif not target.is_file():
                kind = "a folder" if target.is_dir() else "missing"
                problems.append(f"{where}: {link!r} is {kind}")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    problems.append(f"{where}: no anchor {link!r}")
    return problems


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site as ``mkdocs build --strict`` writes it (the notebooks not run, unless
    ``BBT_BUILT_SITE`` names a site built already)."""
    given = os.environ.get("BBT_BUILT_SITE")
    if given:  # (absolute: a test may change the working folder)
        return Path(given).resolve()
    if not CI and importlib.util.find_spec("mkdocs") is None:
        pytest.skip("the docs extra is not installed")
    site = tmp_path_factory.mktemp("site")
    env = {**os.environ, "BBT_DOCS_EXECUTE": "0"}
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    return site


@pytest.mark.slow
def test_every_internal_link_of_the_built_site_opens_a_file(built_site: Path):
    problems = dead_links(built_site)
    assert not problems, "\n".join(problems[:40]) + f"\n({len(problems)} in all)"
    assert (built_site / "index.html").is_file()
    assert (built_site / "notebooks" / "02_teaching.html").is_file()


@pytest.mark.slow
def test_the_built_site_pages_show_no_widget_repr_nor_runtime_warning(built_site: Path):
    """Meaningful on a build that ran the notebooks (``BBT_BUILT_SITE``, as CI does)."""
    for page in sorted(built_site.rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        assert "BBTWidget object at" not in text, page
        assert "RuntimeWarning" not in text, page


def search_from_disk(site: Path, query: str) -> list[str]:
    """The links the site's search box lists for ``query``, with ``site/index.html`` opened as
    a file in headless Chromium (no server, no network: a request to anything but a file
    fails the check, as does any error the page logs)."""
    from playwright.sync_api import sync_playwright

    problems: list[str] = []

    def request(req) -> None:
        if not req.url.startswith(("file:", "data:", "about:", "blob:")):
            problems.append(f"requested {req.url}")

    def console(message) -> None:
        if message.type == "error":
            problems.append(f"console: {message.text}")

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.on("request", request)
            page.on("console", console)
            page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
            page.goto((site / "index.html").resolve().as_uri())
            box = page.locator("input.md-search__input")
            found = page.locator(".md-search-result__item a")
            try:  # (Material hides the box where its search cannot start)
                box.click(timeout=10_000)
                box.press_sequentially(query, delay=20)  # keys, as a reader types
                found.first.wait_for(timeout=30_000)
            except Exception as error:  # Playwright's TimeoutError
                problems.append(f"no search box or no result: {str(error).splitlines()[0]}")
            links = [found.nth(i).get_attribute("href") or "" for i in range(found.count())]
        finally:
            browser.close()
    assert not problems, "\n".join(problems)
    return links


@pytest.mark.browser
def test_the_built_site_searches_from_disk(built_site: Path):
    """The README says to open ``site/index.html``: from ``file://`` a browser refuses the
    search's Web Worker and its fetch of the index, so the site carries the index as a script
    (Material's offline plugin) and runs the worker in an iframe (the vendored iframe-worker
    shim), with nothing fetched from another site."""
    if not CI:
        pytest.importorskip("playwright.sync_api")
        if not Path(CHROMIUM).exists():
            pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    links = search_from_disk(built_site, "Davidson")
    assert any(link.split("#")[0].endswith("engines.html") for link in links), links
    for link in links:  # each result opens a page of the site
        assert (built_site / unquote(urlsplit(link).path)).is_file(), link


def test_the_link_check_finds_folders_missing_files_and_anchors(tmp_path: Path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b.html").write_text('<h2 id="there">x</h2>', encoding="utf-8")
    (tmp_path / "index.html").write_text(
        '<a href="a/">folder</a><a href="b.html#there">ok</a><a href="b.html#gone">anchor</a>'
        '<a href="c.html">missing</a><link href="/assets/x.css"><a href="#top">self</a>'
        '<a href="https://example.org/">other site</a><a id="top"></a>',
        encoding="utf-8",
    )
    assert dead_links(tmp_path) == [
        "index.html: 'a/' is a folder",
        "index.html: no anchor 'b.html#gone'",
        "index.html: 'c.html' is missing",
        "index.html: root-absolute link '/assets/x.css'",
    ]


def test_the_404_page_links_relative_to_the_site_root():
    """MkDocs writes the 404 page's links from the server's root (``/assets/...``), which a
    site opened from disk is not; the hook makes them relative (the page is at the root)."""
    hooks = _hooks()
    html = '<a href="/widget.html"><link href="//cdn.example/x.css"><img src=\'/a.png\'>'
    assert hooks.on_post_template(html + '{"base": "/"}', template_name="404.html") == (
        '<a href="widget.html"><link href="//cdn.example/x.css"><img src=\'a.png\'>{"base": "."}'
    )
    assert hooks.on_post_template(html, template_name="sitemap.xml") == html


def test_ci_checks_the_links_of_the_full_build():
    """CI builds the site once, the notebooks run, before the test command, whose checks of a
    built site then read that build."""
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    build = ci.index("\nmkdocs build --strict\n")
    tests = ci.index("\nCI=true BBT_BUILT_SITE=site python -m pytest\n")
    assert build < tests
    assert "site/notebooks/*/index.html" not in ci  # pages are files, not folders


# --- the widget in a static page --------------------------------------------------------------


def _hooks():
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", REPO / "mkdocs_hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    return hooks


@pytest.mark.slow
def test_a_displayed_widget_shows_its_charts_in_the_static_page(tmp_path: Path):
    """The hook runs a notebook that displays a widget: the page gets the widget's charts as
    SVG (after its first fit) with a note, and neither the widget's repr nor its view (whose
    state the page does not carry)."""
    if not CI:
        pytest.importorskip("nbclient")
        pytest.importorskip("ipykernel")
    import nbformat

    source = tmp_path / "widget.ipynb"
    cells = [
        "import bbt_widget as bbt\n"
        "w = bbt.BBTWidget(bbt.datasets.load_base(), dataset='db', seed=1)\nw",
    ]
    nbformat.write(
        nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), source
    )
    work = tmp_path / "build"
    work.mkdir()
    _hooks().execute_notebook(source, work / "notebooks" / "widget.ipynb", work)
    target = work / "notebooks" / "widget.ipynb"
    (output,) = nbformat.read(target, as_version=4).cells[0].outputs
    data = output["data"]
    assert "application/vnd.jupyter.widget-view+json" not in data
    assert "BBTWidget object at" not in json.dumps(data)
    shown = data["text/html"]
    assert "<svg" in shown and "interactive in Jupyter" in shown
    assert "lgbm" in shown


# --- the code blocks of the pages -------------------------------------------------------------


def _blocks(page: Path) -> list[tuple[int, str]]:
    """The page's python blocks: (line of the fence, code)."""
    text = page.read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, m.start()) + 1, m["code"])
        for m in FENCE.finditer(text)
        if m["lang"] in ("python", "py", "pycon")
    ]


PAGES = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md") if _blocks(p))


def test_the_pages_have_code_blocks_to_run():
    assert {"index.md", "python.md", "other-methods.md", "robustness.md"} <= set(PAGES)


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [pytest.param(name, marks=[pytest.mark.stan] if name in STAN_PAGES else []) for name in PAGES],
)
def test_every_code_block_of_a_page_runs(name: str, tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__docs__"}
    ran = 0
    for line, code in _blocks(DOCS / name):
        first = code.lstrip().splitlines()[0] if code.strip() else ""
        if first.startswith("#") and "not run" in first:
            assert SKIP.match(first), f"{name}:{line}: a skipped block says why: {first!r}"
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            exec(compile(code, f"{name}:{line}", "exec"), namespace)
        runtime = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
        assert not runtime, f"{name}:{line}: {runtime}"
        ran += 1
    assert ran, f"{name}: every block is skipped"


def test_the_teaching_notebooks_hierarchical_test_warns_nothing(base):
    """The hierarchical test of the teaching notebook's section 7 (svm against lda): its
    sampler's far-out proposals are outside the prior without overflow or log(0) warnings."""
    from bbt_widget import baselines

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        hier = baselines.hierarchical(base, dataset="db", a="svm", b="lda", rope=0.01, rho=1 / 4)
    assert hier.diagnostics.ok


# --- the notebooks ----------------------------------------------------------------------------


@pytest.mark.parametrize("notebook", sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")))
def test_the_notebooks_use_the_public_api(notebook: str):
    cells = json.loads((NOTEBOOKS / notebook).read_text(encoding="utf-8"))["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    assert not re.search(r"\bbbt_widget\.outputs\b", code), notebook
    assert "write_report" not in code, notebook
