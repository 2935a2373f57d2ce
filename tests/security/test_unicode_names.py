"""Names beyond ASCII in the LaTeX report: it compiles with pdflatex (Debian's
texlive-latex-base and texlive-latex-recommended) whatever the names hold.

One name per class of character: accented Latin (kept, T1 fonts), Greek (a math letter), a
mathematical symbol (a math command), Cyrillic and CJK (no font of the report has them:
``[U+XXXX]`` and a note saying so), a zero-width space (dropped), a character beyond U+FFFF
(``[U+XXXX]``) and a bidi override (dropped, the name kept).
"""

from __future__ import annotations

import warnings

import pytest
from hostile import fit_hostile

import bbt_widget as bbt
from bbt_widget.outputs import export
from bbt_widget.outputs.report._render import write_report

pytestmark = pytest.mark.stan

#: (name, what the LaTeX report must print for it).
UNICODE_NAMES = (
    ("café", "café"),
    ("α-SVM", r"\ensuremath{\alpha}-SVM"),
    ("≥x", r"\ensuremath{\geq}x"),
    ("Лес", r"\lbrack{}U+041B\rbrack{}\lbrack{}U+0435\rbrack{}\lbrack{}U+0441\rbrack{}"),
    ("随机森林", r"\lbrack{}U+968F\rbrack{}\lbrack{}U+673A\rbrack{}"),
    ("zero\u200bwidth", "zerowidth"),
    ("\U0001d54aet", r"\lbrack{}U+1D54A\rbrack{}et"),
    ("\u202eoverride", "override"),
)


@pytest.fixture(scope="module")
def unicode_res() -> bbt.BBTResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bbt.DiagnosticsWarning)
        return fit_hostile(tuple(name for name, _ in UNICODE_NAMES))


def test_latex_report_with_non_ascii_names_compiles(unicode_res, tmp_path, compile_latex):
    tex = write_report(unicode_res, tmp_path / "report.tex")
    log = compile_latex(tex)
    assert "Missing character" not in log
    assert "not set up for use with LaTeX" not in log
    body = tex.read_text(encoding="utf-8")
    for name, printed in UNICODE_NAMES:
        assert printed in body, name
    assert "\u200b" not in body and "\u202e" not in body
    # the reader is told what [U+...] means, once
    assert body.count("cannot print") == 1


def test_latex_tables_with_non_ascii_names_compile(unicode_res, tmp_path, compile_latex):
    # a table exported for a paper, in the smallest preamble its docstring asks for
    table = export.save_table(unicode_res.summary(), tmp_path / "summary.tex", long=True)
    doc = tmp_path / "paper.tex"
    doc.write_text(
        "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n"
        "\\usepackage{booktabs,longtable,siunitx}\n\\begin{document}\n"
        f"\\input{{{table.name}}}\n\\end{{document}}\n",
        encoding="utf-8",
    )
    assert "Missing character" not in compile_latex(doc)
    assert r"\ensuremath{\alpha}-SVM" in table.read_text(encoding="utf-8")


def test_latex_report_of_ascii_names_has_no_replacement_note(tmp_path):
    # only a report that replaced characters explains [U+...]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bbt.DiagnosticsWarning)
        res = fit_hostile(("svm", "rf", "knn"))
    body = write_report(res, tmp_path / "r.tex").read_text(encoding="utf-8")
    assert "cannot print" not in body and "U+" not in body
