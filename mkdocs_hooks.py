"""MkDocs hooks: the example notebooks are shown with their outputs, and the docstrings'
Sphinx roles (``:func:`fit```), which mkdocstrings does not read, are shown as code names.

The notebooks are stored without outputs. Before the pages are rendered, :func:`on_files`
runs a copy of each one in a fresh kernel, in a temporary folder (anything a notebook writes
lands there, never in the checkout), with Altair drawing its charts as SVG offline
(vl-convert), and hands the executed copy to mkdocs-jupyter, which renders it as stored
(a widget runs only in Jupyter: a ``BBTWidget`` shows as its charts, a static SVG picture).
A cell that fails fails the build. ``BBT_DOCS_EXECUTE=0`` skips the runs (a quick preview of
the site, notebooks without outputs).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

#: A Sphinx role as it reaches the HTML: the role name, then the name in <code>.
_ROLE = re.compile(r":(?:func|meth|class|attr|mod|data|exc|obj):(?=<code>)")
#: A script loaded from another site (mkdocs-jupyter's notebook template adds Mermaid and
#: MathJax from a CDN, which the notebooks do not use): the site must read offline.
_REMOTE_SCRIPT = re.compile(
    r"<script\b[^>]*\bsrc=[\"']?(?:https?:)?//[^>]*>\s*</script>\s*", re.IGNORECASE
)
#: A link from the server's root (``href="/assets/..."``, not ``//host/...``): the part kept.
_ROOT_LINK = re.compile(r"""(\b(?:href|src)=["'])/(?!/)""")
#: The site's notebooks: their path in the docs folder.
_NOTEBOOKS = re.compile(r"^notebooks/[^/]+\.ipynb$")
#: Longest a notebook cell may run (the first fit on a new machine compiles the Stan model).
CELL_TIMEOUT = 900
#: Run in each kernel before the notebook: charts as static SVG drawn locally, so the pages
#: show them with no JavaScript and no CDN; a displayed ``BBTWidget`` adds an HTML form, its
#: linked charts after its first fit as SVG (vl-convert), with a note that the widget itself
#: runs in Jupyter (a static page cannot run its front end).
_KERNEL_STARTUP = """\
import altair as alt

alt.renderers.enable("svg")


def _bbt_widget_static(widget):
    import vl_convert

    widget.wait()
    linked = widget.charts.get("linked")
    svg = "" if linked is None else vl_convert.vegalite_to_svg(linked.to_dict())
    return (
        '<div class="bbt-widget-static"><p><em>The widget is interactive in Jupyter (its '
        "controls, tooltips and linked highlighting); this page shows its charts after the "
        "first fit, as a static picture.</em></p>" + svg + "</div>"
    )


get_ipython().display_formatter.formatters["text/html"].for_type_by_name(
    "bbt_widget.widget.app", "BBTWidget", _bbt_widget_static
)
"""
#: A widget's view in an output: its state is not stored, so a static page cannot show it.
_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: The text form of an object, as Python writes it: ``<module.Class object at 0x...>``.
_OBJECT_REPR = re.compile(r"^<[\w.]+ object at 0x[0-9a-f]+>$")

#: The temporary folder of the current build's executed notebooks.
_workdir: Path | None = None


def execute_notebook(source: Path, target: Path, workdir: Path) -> None:
    """Run the notebook ``source`` top to bottom and write it with its outputs to ``target``.

    The kernel starts in a new folder under ``workdir`` (its current directory, where the
    notebook's relative writes go) with an IPython profile of its own there, whose startup
    script sets Altair's SVG renderer; ``source`` is only read.

    Raises
    ------
    nbclient.exceptions.CellExecutionError
        A cell failed (its error and traceback are in the message).
    """
    import nbclient
    import nbformat

    run = Path(tempfile.mkdtemp(prefix=f"{source.stem}-", dir=workdir))
    startup = run / ".ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-svg-charts.py").write_text(_KERNEL_STARTUP, encoding="utf-8")
    notebook = nbformat.read(source, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(run)}},
        # a widget's state carries its whole front end (about 1 MB of JavaScript), which a
        # static page cannot run: its output keeps only the text form
        store_widget_state=False,
    )
    old = os.environ.get("IPYTHONDIR")
    os.environ["IPYTHONDIR"] = str(run / ".ipython")  # read by the kernel it starts
    try:
        client.execute()
    finally:
        if old is None:
            os.environ.pop("IPYTHONDIR", None)
        else:
            os.environ["IPYTHONDIR"] = old
    static_widgets(notebook)
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, target)


def static_widgets(notebook: Any) -> None:
    """Keep what a static page can show of each widget output: its HTML form (a
    ``BBTWidget``'s charts), without the view (whose state is not stored) and without the
    ``<... object at 0x...>`` text, which a page would show in its place."""
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if _WIDGET_VIEW not in data:
                continue
            del data[_WIDGET_VIEW]
            if "text/html" in data and _OBJECT_REPR.match(str(data.get("text/plain", ""))):
                name = data["text/plain"][1:].split(" ", 1)[0].rsplit(".", 1)[-1]
                data["text/plain"] = f"{name} (interactive in Jupyter)"


def on_files(files: Any, config: Any, **_: Any) -> Any:
    """Point each notebook page of the site at an executed copy of its notebook."""
    global _workdir
    if os.environ.get("BBT_DOCS_EXECUTE", "1") == "0":
        return files
    _workdir = Path(tempfile.mkdtemp(prefix="bbt-docs-notebooks-"))
    for file in files:
        if _NOTEBOOKS.match(file.src_uri):
            source = Path(file.abs_src_path)
            # keeps the folder name: mkdocs-jupyter's include pattern is "notebooks/*.ipynb"
            target = _workdir / "notebooks" / source.name
            execute_notebook(source, target, _workdir)
            file.abs_src_path = str(target)
    return files


def on_post_build(**_: Any) -> None:
    """Remove the executed notebooks and their working folders."""
    global _workdir
    if _workdir is not None:
        shutil.rmtree(_workdir, ignore_errors=True)
        _workdir = None


def on_build_error(**_: Any) -> None:
    """Remove the executed notebooks of a failed build too."""
    on_post_build()


def on_page_content(html: str, **_: Any) -> str:
    """Remove the Sphinx role prefixes from a page's rendered HTML."""
    return _ROLE.sub("", html)


def on_post_page(output: str, **_: Any) -> str:
    """Remove the scripts a page would fetch from another site (the site reads offline)."""
    return _REMOTE_SCRIPT.sub("", output)


def on_post_template(output_content: str, template_name: str, **_: Any) -> str:
    """Make the links of the theme's 404 page, written at the site's root, relative to it:
    MkDocs writes them from the server's root, which a site opened from disk is not."""
    if template_name != "404.html":
        return output_content
    output = _REMOTE_SCRIPT.sub("", output_content)
    return _ROOT_LINK.sub(r"\1", output).replace('"base": "/"', '"base": "."')
