"""The teaching and paper-drafting notebooks run top to bottom and show what they promise.

Both run real Stan fits (marked ``stan``): PyStan compiles the model once per machine, then
the teaching notebook takes about 20 s and the paper notebook about 20 s. A developer
without the notebook tools gets a skip; with ``CI=true`` a missing nbclient is an error.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "example_notebooks"
CELL_TIMEOUT = 600  # the first fit on a new machine compiles the Stan model


def _notebook_tools() -> tuple[Any, Any]:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        import nbclient
        import nbformat
    else:  # a developer without the notebook tools gets a skip, CI an error
        nbformat = pytest.importorskip("nbformat")
        nbclient = pytest.importorskip("nbclient")
    return nbformat, nbclient


def _execute(name: str, cwd: Path) -> Any:
    """Run a notebook top to bottom in ``cwd``; fail on any cell error."""
    nbformat, nbclient = _notebook_tools()
    source = NOTEBOOKS / name
    notebook = nbformat.read(source, as_version=4)
    assert not any(
        cell.get("outputs") or cell.get("execution_count")
        for cell in notebook.cells
        if cell.cell_type == "code"
    ), f"{name} is stored with outputs: clear them before committing"
    env_path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH", "")]))
    client = nbclient.NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(cwd)}},
    )
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = env_path  # the kernel imports this checkout
    try:
        client.execute()
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old
    errors = [
        f"{output.get('ename')}: {output.get('evalue')}"
        for output in _outputs(notebook)
        if output.get("output_type") == "error"
    ]
    assert not errors, errors
    return notebook


def _outputs(notebook: Any) -> list[dict[str, Any]]:
    return [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
    ]


def _stdout(notebook: Any) -> str:
    return "".join(
        output.get("text", "")
        for output in _outputs(notebook)
        if output.get("output_type") == "stream" and output.get("name") == "stdout"
    )


def _has_mime(notebook: Any, mime: str) -> bool:
    return any(mime in output.get("data", {}) for output in _outputs(notebook))


@pytest.mark.stan
def test_quickstart_notebook_runs_top_to_bottom(tmp_path: Path) -> None:
    notebook = _execute("01_quickstart.ipynb", tmp_path)
    widget_views = [
        output
        for output in _outputs(notebook)
        if "application/vnd.jupyter.widget-view+json" in output.get("data", {})
    ]
    assert widget_views, "the widget was not displayed"
    # a user runs it inside the checkout: it must not write files there
    assert not any(tmp_path.iterdir()), "the notebook left files in its working directory"


@pytest.mark.stan
def test_teaching_notebook_runs_top_to_bottom(tmp_path: Path) -> None:
    notebook = _execute("02_teaching.ipynb", tmp_path)
    # it states the model it teaches, and reads a pair with result.pair, not a helper of its own
    sources = [cell.source for cell in notebook.cells]
    assert any("P(i \\text{ beats } j)" in s and "e^{\\beta_i}" in s for s in sources)
    assert any(".pair(a, b)" in s for s in sources)
    assert not any("FLIP" in s for s in sources)
    stdout = _stdout(notebook)
    # Sec. 6.1, Table 9: comparing means, lgbm wins cmc; the local ROPE makes it a tie
    assert "cmc, lgbm vs xgb, means (d_min=None): lgbm wins" in stdout
    assert "cmc, lgbm vs xgb, d_min=0.4 (paired d_z): tie" in stdout
    assert "cmc, lgbm vs xgb, d_min=0.4 (unpaired Cohen's d): tie" in stdout
    # the effect sizes computed by hand (Eq. 3 and 5) are far below d_min
    assert "Cohen's d (Eq. 3) = 0.027" in stdout
    assert "paired d_z (Eq. 5) = 0.031" in stdout
    # the fits of every d_min and tie policy ran, and the decisions were compared
    for setting in ("means, ties=spread", "d_min=0.8, ties=spread", "d_min=0.4, ties=davidson"):
        assert setting in stdout
    assert "weak and strong agree on" in stdout
    # signed-rank, hierarchical, BBT and the sign test on the same pair: one line each, a
    # real decision; the sign test's counts of data sets add up to the 20
    decisions = ("a better", "b better", "equivalent", "no claim")
    for test in ("signed-rank", "hierarchical", "BBT (weak)", "sign"):
        line = next(x for x in stdout.splitlines() if x.startswith(f"svm vs lda, {test}: "))
        assert line.split(": ", 1)[1] in decisions, line
    assert "hierarchical: diagnostics ok" in stdout  # the hierarchical fit converged
    counts = next(x for x in stdout.splitlines() if x.startswith("data sets left of, in,"))
    assert sum(int(n) for n in counts.split(": ", 1)[1].split(", ")) == 20, counts
    # the three posteriors in the probability simplex: one figure of three triangles
    simplex = next(c for c in notebook.cells if ".simplex()" in c.source)
    svg = "".join(o.get("data", {}).get("image/svg+xml", "") for o in simplex.outputs)
    assert svg.count(">rope</text>") == 3 and svg.count(">svm better</text>") == 3, svg[:200]
    assert _has_mime(notebook, "image/svg+xml"), "no chart was drawn"
    assert _has_mime(notebook, "application/vnd.jupyter.widget-view+json"), "no widget shown"
    # the last cell waited for the widget's fit
    last = notebook.cells[-1]
    assert last.cell_type == "code" and "w.wait()" in last.source
    assert "done" in "".join(o.get("text", "") for o in last.get("outputs", []))
    assert not any(tmp_path.iterdir()), "the notebook left files in its working directory"


@pytest.mark.stan
def test_paper_drafting_notebook_writes_tables_figures_and_report(tmp_path: Path) -> None:
    notebook = _execute("03_paper_drafting.ipynb", tmp_path)
    last = notebook.cells[-1]
    lines = [
        line
        for output in last.get("outputs", [])
        if output.get("output_type") == "stream"
        for line in output.get("text", "").splitlines()
        if line.startswith("{")
    ]
    assert len(lines) == 1, "the last cell must print one JSON line"
    manifest = json.loads(lines[0])
    files = manifest["files"]
    # tables: booktabs LaTeX, Markdown and CSV; the posterior for the supplement
    for name in ("summary", "ranking", "win_table", "bbt_summary"):
        for suffix in ("tex", "md", "csv"):
            assert files.get(f"tables/{name}.{suffix}", 0) > 0, f"tables/{name}.{suffix}"
    assert files.get("tables/posterior.nc", 0) > 0
    tex = manifest["bbt_summary_tex"]
    assert "\\toprule" in tex and "\\bottomrule" in tex and "\\label{tab:bbt}" in tex
    assert "lgbm \\textgreater{} lr" in tex  # pair labels escaped for LaTeX
    # figures: SVG and PDF of the BBT charts and of the CD diagram
    for name in ("ranking", "decisions", "intervals", "rope_overlap", "ppc", "cd_diagram"):
        assert files.get(f"figures/{name}.svg", 0) > 0, f"figures/{name}.svg"
        assert manifest["pdf_headers"].get(f"figures/{name}.pdf") == "%PDF-", name
    assert files.get("report.html", 0) > 0
    assert files.get("methods.tex", 0) > 0 and files.get("methods.md", 0) > 0
    # the methods paragraph in LaTeX, the baselines and the agreement table were shown
    stdout = _stdout(notebook)
    assert "We compared 6 algorithms on 132 data sets" in stdout
    assert "\\cite{wainer2022bbt,bradley1952}" in stdout
    assert "Friedman chi2 =" in stdout and "Nemenyi CD =" in stdout
    assert _has_mime(notebook, "image/svg+xml"), "no chart was drawn"
    # nothing left behind: the temporary folder is gone, the working directory empty
    assert manifest["kept"] is False
    assert not Path(manifest["output_dir"]).exists()
    assert not any(tmp_path.iterdir()), "the notebook left files in its working directory"


@pytest.mark.stan
def test_robustness_notebook_audits_sweeps_and_calibrates(tmp_path: Path) -> None:
    notebook = _execute("04_robustness.ipynb", tmp_path)
    # the strong rule is told as the code applies it: the posterior mean against 0.70
    from bbt_widget.core.posterior import STRONG_THRESHOLD

    told = next(c.source for c in notebook.cells if "(Sec. 9.3)" in c.source)
    assert f"{STRONG_THRESHOLD:.2f}" in told and "posterior mean" in told, told
    stdout = _stdout(notebook)
    assert "Audit: 0 errors" in stdout
    assert "12 settings, 0 failed" in stdout
    assert "strong claims that hold in every setting:" in stdout
    assert "decisions that one left-out data set changes:" in stdout
    # the closing sentences were written from the numbers
    last = "".join(o.get("text", "") for o in notebook.cells[-1].get("outputs", []))
    assert "We compared 16 algorithms on 132 data sets" in last
    assert "of the observed win rates fell inside the 90% HDI" in last
    assert _has_mime(notebook, "text/html"), "the audit table was not shown"
    assert not any(tmp_path.iterdir()), "the notebook left files in its working directory"


#: The widget's settings whose change starts a fit (widget/controls.py), and the metric.
def _fit_settings() -> frozenset[str]:
    from bbt_widget.widget.controls import FIT_TRAITS

    return frozenset({*FIT_TRAITS, "metric"})


def _starts_fit(source: str) -> bool:
    """Whether a cell makes a widget or sets one of its fit settings (``w.ties = ...``)."""
    import ast

    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("BBTWidget"):
            return True
        if isinstance(node, ast.Assign):
            targets = [t for target in node.targets for t in ast.walk(target)]
            if any(isinstance(t, ast.Attribute) and t.attr in _fit_settings() for t in targets):
                return True
    return False


@pytest.mark.parametrize("name", sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")))
def test_every_widget_fit_is_waited_for_so_a_failure_stops_the_notebook(name: str) -> None:
    """A cell that starts a widget fit calls ``w.wait()`` in it or in the next code cell:
    ``wait`` raises the fit's error, so a failed fit stops the notebook (and nbconvert) there
    instead of the next cell showing the last good fit's tables as the new settings'."""
    cells = [
        "".join(cell["source"])
        for cell in json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))["cells"]
        if cell["cell_type"] == "code"
    ]
    for i, source in enumerate(cells):
        if _starts_fit(source):
            waited = [source, *cells[i + 1 : i + 2]]
            assert any(".wait()" in cell for cell in waited), (name, source)


@pytest.mark.stan
def test_a_failed_widget_fit_stops_the_quickstart_notebook(tmp_path: Path) -> None:
    """When the Davidson fit fails (made to fail here), the notebook stops at the cell that
    asked for it, with the fit's error, rather than showing the last good fit's win table in
    the next cell as if it were Davidson's."""
    nbformat, nbclient = _notebook_tools()
    notebook = nbformat.read(NOTEBOOKS / "01_quickstart.ipynb", as_version=4)
    # every fit of the Davidson model fails
    no_compiler = nbformat.v4.new_code_cell(
        "from bbt_widget.fitting import PreparedFit\n"
        "def _no_compiler(run):\n"
        "    def fit(job, *args, **kwargs):\n"
        "        if job.settings.model == 'davidson':\n"
        "            raise RuntimeError('no C++ compiler found')\n"
        "        return run(job, *args, **kwargs)\n"
        "    return fit\n"
        "PreparedFit.sample = _no_compiler(PreparedFit.sample)\n"
        "PreparedFit.laplace = _no_compiler(PreparedFit.laplace)\n"
    )
    notebook.cells.insert(0, no_compiler)
    client = nbclient.NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), old]))
    try:
        with pytest.raises(nbclient.exceptions.CellExecutionError) as failed:
            client.execute()
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old
    assert "FitFailed" in str(failed.value) and "no C++ compiler found" in str(failed.value)
    ran = [c for c in notebook.cells if c.cell_type == "code" and c.get("execution_count")]
    assert 'w.ties = "davidson"' in ran[-1].source  # stopped there: the win table never shown
