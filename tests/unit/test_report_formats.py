"""One report in every format: the HTML, Markdown and LaTeX reports of one fit and one set of
options have the same sections, tables and figures, with the default methods and with
``--with``; the LaTeX report compiles with every citation resolved and every table inside the
text width; the tables' CSV files hold the numbers whole, as the documentation promises."""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget.core.data import as_tidy
from bbt_widget.outputs import export
from bbt_widget.outputs.methods_text import REPORT_FORMATS, tables_folder
from bbt_widget.outputs.report._baselines import number
from bbt_widget.outputs.report._methods import check_methods

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "security"))
from hostile import HOSTILE

#: The methods of the reports compared here: what ``--with friedman,signed-rank`` asks for.
WITH = "friedman,signed-rank"
#: The sections those reports have, in order.
SECTIONS = [
    "Result",
    "Methods and results",
    "Data audit",
    "Scores",
    "Ranking models",
    "Frequentist baseline: Friedman, Nemenyi, Wilcoxon-Holm",
    "Bayesian signed-rank test",
    "Charts",
    "Tables",
    "Column definitions",
    "References",
    "Provenance",
]


@pytest.fixture(scope="module")
def fitted() -> tuple[pd.DataFrame, bbt.BBTResult]:
    base = bbt.datasets.load_base()
    return base, bbt.fit(base, dataset="db", seed=1)


@pytest.fixture(scope="module")
def reports(fitted, tmp_path_factory) -> dict[str, Path]:
    """The report of one fit with ``--with friedman,signed-rank`` in each format."""
    base, res = fitted
    folder = tmp_path_factory.mktemp("formats")
    return {
        fmt: bbt.report.write(res, folder / f"r.{fmt}", data=base, methods=WITH)
        for fmt in REPORT_FORMATS
    }


def _plain(text: str) -> str:
    """A heading as read: tags and the formats' escapes left out."""
    text = html.unescape(re.sub(r"<[^>]+>", "", text))
    text = text.replace("\\textgreater{}", ">").replace("\\textless{}", "<")
    return re.sub(r"\\([^A-Za-z])", r"\1", text).replace("{}", "").strip()


def _sections(path: Path) -> list[str]:
    """The report's top-level headings in order (LaTeX's bibliography under its heading)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".html":
        found = re.findall(r"<h2 id=\"[^\"]*\">(.*?)</h2>", text)
    elif path.suffix == ".md":
        found = re.findall(r"^## (.+)$", text, flags=re.M)
    else:
        found = [
            "References" if bib else heading
            for heading, bib in re.findall(
                r"^\\section\*\{(.*)\}$|^\\begin\{(thebibliography)\}", text, flags=re.M
            )
        ]
    return [_plain(h) for h in found]


def _tables(path: Path) -> list[str]:
    """The headings of the report's tables in order."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".html":
        found = re.findall(r"<h3 id=\"tab-[^\"]*\">(.*?)</h3>", text)
    elif path.suffix == ".md":
        found = re.findall(r"^### (.+)$", text, flags=re.M)
    else:
        found = re.findall(r"^\\caption\{(.*)\}\n\\label\{tab:", text, flags=re.M)
    return [_plain(h) for h in found]


def _figures(path: Path) -> list[str]:
    """The names of the report's figures in order."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".html":
        return re.findall(r"<figure id=\"fig-([^\"]+)\">", text)
    if path.suffix == ".md":
        return re.findall(r"^!\[.*\]\([^)]*_md_figures/(.+)\.svg\)$", text, flags=re.M)
    return re.findall(r"\\label\{fig:bbt-([^}]+)\}", text)


@pytest.mark.slow
def test_every_format_has_the_same_sections_tables_and_figures(reports):
    sections = {fmt: _sections(path) for fmt, path in reports.items()}
    assert sections["html"] == SECTIONS  # the default Plackett-Luce beside the --with ones
    assert sections["md"] == sections["html"]
    assert sections["tex"] == sections["html"]
    tables = {fmt: _tables(path) for fmt, path in reports.items()}
    assert "Bayesian signed-rank test per pair (score units)" in tables["html"]
    assert tables["md"] == tables["html"] and tables["tex"] == tables["html"]
    figures = {fmt: _figures(path) for fmt, path in reports.items()}
    assert {"bbt_vs_pl", "cd_nemenyi", "simplex_bsr_1"} <= set(figures["html"])
    assert figures["md"] == figures["html"] and figures["tex"] == figures["html"]


@pytest.mark.parametrize(
    ("methods", "expected"),
    [
        (None, ["plackett-luce"]),
        ("friedman,signed-rank", ["plackett-luce", "friedman", "signed-rank"]),
        ("none", []),
        ("none,friedman", ["friedman"]),
    ],
)
def test_every_format_runs_the_same_methods(fitted, tmp_path, methods, expected):
    """What decides the sections: the methods run, the same whatever the format; ``--with``
    adds to the defaults, and ``none`` leaves them out."""
    base, _ = fitted
    tidy = as_tidy(base, dataset="db")
    layout = {"dataset": "db"}
    for fmt in REPORT_FORMATS:
        chosen = check_methods(tidy, layout, path=tmp_path / f"r.{fmt}", methods=methods)
        assert chosen == expected, fmt


@pytest.mark.slow
def test_the_latex_report_compiles_with_its_citations_and_tables_in_place(reports, compile_latex):
    tex = reports["tex"]
    body = tex.read_text(encoding="utf-8")
    cited = {
        k for keys in re.findall(r"\\cite(?:\[[^]]*\])?\{([^}]+)\}", body) for k in keys.split(",")
    }
    items = set(re.findall(r"\\bibitem\{([^}]+)\}", body))
    assert {"wainer2022bbt", "friedman1937", "benavoli2014"} <= cited <= items
    log = compile_latex(tex)  # pdflatex twice, no BibTeX run
    assert not re.search(r"Citation `[^']*' on page \d+ undefined", log)
    assert "There were undefined references" not in log
    assert "Reference `" not in log  # no undefined \ref either
    overfull = [float(pt) for pt in re.findall(r"Overfull \\hbox \(([\d.]+)pt too wide\)", log)]
    assert not [pt for pt in overfull if pt > 1.0], overfull
    # the numbers of the citations are those of the other formats' references
    md = reports["md"].read_text(encoding="utf-8")
    listed = re.findall(r"^\d+\. (.+)$", md.split("## References", 1)[1], flags=re.M)
    assert len(listed) == len(items)


def test_the_baselines_tables_are_whole_in_their_csv_files(fitted, reports):
    base, res = fitted
    folder = tables_folder(reports["md"])
    # the tests themselves, as the report ran them: the same data, fit and seed
    agree = bbt.baselines.agreement(base, res, dataset="db", seed=res.settings["seed"])
    fr = agree.nemenyi.friedman
    tests = pd.read_csv(folder / "friedman-tests.csv").set_index("test")
    assert tests.loc["Friedman chi-square", "statistic"] == pytest.approx(fr.statistic, rel=1e-12)
    assert tests.loc["Friedman chi-square", "p_value"] == pytest.approx(fr.pvalue, rel=1e-12)
    cd = tests.loc["Nemenyi critical difference (alpha 0.05)"]
    assert cd["statistic"] == pytest.approx(agree.nemenyi.cd, rel=1e-12)
    assert np.isnan(cd["p_value"])  # a critical difference has no p-value
    table = pd.read_csv(folder / "signed-rank.csv")
    own = agree.bsr.table
    for row in table.itertuples(index=False):
        a, b = row.pair.split(" > ")
        match = own[
            ((own["alg_a"] == a) & (own["alg_b"] == b))
            | ((own["alg_a"] == b) & (own["alg_b"] == a))
        ]
        assert len(match) == 1, row.pair
        got = match.iloc[0]
        assert row.p_rope == pytest.approx(got["p_rope"], rel=1e-12, abs=0)
        assert row.mcse_rope == pytest.approx(got["mcse_rope"], rel=1e-12, abs=0)
        assert sorted([row.p_a_better, row.p_b_better]) == pytest.approx(
            sorted([got["p_left"], got["p_right"]]), rel=1e-12, abs=0
        )
    # the report prints them as its text does (a small p-value in scientific notation)
    md = reports["md"].read_text(encoding="utf-8")
    for value in (fr.statistic, fr.pvalue, *table["mcse_a_better"]):
        assert f"| {number(float(value))} |" in md


def test_stacked_headers_break_after_underscores_and_stay_escaped():
    """A wide table's long headers on several lines (what keeps the signed-rank table inside
    the text width), each line escaped: a hostile column name prints literally."""
    names = ["mcse_a_better", *HOSTILE]
    frame = pd.DataFrame({n: [0.5] for n in names})
    flat = export.to_latex(frame, digits=6)  # cells of 8 characters
    assert "{mcse\\_a\\_better}" in flat and "\\shortstack" not in flat
    tex = export.to_latex(frame, digits=6, stack_headers=True)
    assert "{\\shortstack[r]{mcse\\_a\\_\\\\better}}" in tex
    for name in HOSTILE:
        lines = export.header_lines(name, 8)
        assert "\\\\".join(export.tex_escape(line) for line in lines) in tex, name
    assert "\\emph{x}" not in tex  # the hostile command is printed, not run
    assert export.header_lines("p_rope", 8) == ["p_rope"]
    assert export.header_lines("changing data sets", 5) == ["changing", "data", "sets"]
