"""MkDocs hooks: the example notebooks are shown with their outputs, and the docstrings'
Sphinx roles (``:func:`fit```), which mkdocstrings does not read, are shown as code names.

The notebooks are stored without outputs. Before the pages are rendered, :func:`on_files`
runs a copy of each one in a fresh kernel, in a temporary folder (anything a notebook writes
lands there, never in the checkout), with Altair drawing its charts as SVG offline
(vl-convert), and hands the executed copy to mkdocs-jupyter, which renders it as stored
(a widget shows as text: it runs only in Jupyter).
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
#: The site's notebooks: their path in the docs folder.
_NOTEBOOKS = re.compile(r"^notebooks/[^/]+\.ipynb$")
#: Longest a notebook cell may run (the first fit on a new machine compiles the Stan model).
CELL_TIMEOUT = 900
#: Run in each kernel before the notebook: charts as static SVG drawn locally, so the pages
#: show them with no JavaScript and no CDN.
_KERNEL_STARTUP = 'import altair as alt\n\nalt.renderers.enable("svg")\n'

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
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, target)


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
