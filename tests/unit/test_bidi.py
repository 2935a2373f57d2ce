"""Bidi isolation of names (core/bidi) and its translation per output format (the escapers
of outputs/export), and what LaTeX prints of non-ASCII characters (outputs/tex_chars)."""

from __future__ import annotations

import unicodedata

import numpy as np
import pandas as pd
import pytest

from bbt_widget.baselines import correlated_ttest
from bbt_widget.core.bidi import balance, isolate, needs_isolation, pair_label, strip_controls
from bbt_widget.outputs import export

RLO, PDF, RLI, FSI, PDI, RLE = "\u202e", "\u202c", "\u2067", "\u2068", "\u2069", "\u202b"
HEBREW = "\u05e2\u05d1\u05e8\u05d9\u05ea"


def open_after(text: str) -> list[str]:
    """What ``text`` leaves open for the text after it, by the Unicode bidi algorithm's
    explicit rules (X1-X8): embeddings, overrides and isolates not closed."""
    stack: list[str] = []
    for ch in text:
        if ch in "\u202a\u202b\u202d\u202e":
            stack.append(ch)
        elif ch in "\u2066\u2067\u2068":
            stack.append(ch)
        elif ch == PDF and stack and stack[-1] in "\u202a\u202b\u202d\u202e":
            stack.pop()
        elif ch == PDI and any(c in "\u2066\u2067\u2068" for c in stack):
            while stack.pop() not in "\u2066\u2067\u2068":
                pass
    return stack


@pytest.mark.parametrize(
    "name",
    [RLO + "P(right)", "a" + RLI + "b", "a" + PDI + "b", RLE + "x" + PDI + RLO, HEBREW, "\u0661"],
)
def test_isolated_names_leave_nothing_open(name):
    assert needs_isolation(name)
    shown = isolate(name)
    assert shown.startswith(FSI) and shown.endswith(PDI)
    # whatever the name holds, the sentence after it reads left to right again
    assert open_after(shown + " is better") == []
    assert open_after(pair_label(name, name)) == []
    assert open_after(balance(name)) == []


def test_names_that_cannot_reorder_text_are_written_as_they_are():
    for name in ("svm", "café", "α-SVM", "🚀", "a > b", "Лес", "随机森林", "x\u200by"):
        assert not needs_isolation(name)
        assert isolate(name) == name
    assert pair_label("rf", "svm") == "rf > svm"


def test_isolate_keeps_the_name_and_pairs_its_own_isolates():
    # an override is left to the closing PDI (which ends it), not doubled with a PDF
    assert isolate(RLO + "x") == FSI + RLO + "x" + PDI
    # an isolate the name opens is closed inside; a PDI that closes nothing is dropped
    assert isolate("a" + RLI + "b") == FSI + "a" + RLI + "b" + PDI + PDI
    assert isolate("a" + PDI + HEBREW) == FSI + "a" + HEBREW + PDI


def test_html_escape_writes_isolates_as_bdi_and_closes_what_is_open():
    html = export.html_escape(f"{pair_label(RLO + '<b>', HEBREW)} and {RLO}rest")
    assert html == (f"<bdi>{RLO}&lt;b&gt;</bdi> &gt; <bdi>{HEBREW}</bdi> and {RLO}rest{PDF}")
    assert export.html_escape(RLI + "x" + PDI) == '<bdi dir="rtl">x</bdi>'
    assert export.html_escape(PDI + "x") == "x"  # closes nothing: dropped
    # where markup is not read (<title>), the isolates stay characters
    assert export.html_escape(isolate(RLO + "<t>") + "\n", tags=False) == (
        f"{FSI}{RLO}&lt;t&gt;{PDI}\n"
    )


def test_markdown_escape_pairs_controls():
    md = export.md_escape(isolate(RLO + "*x*") + " and " + RLO + "y")
    assert md == f"{FSI}{RLO}\\*x\\*{PDI} and {RLO}y{PDF}"
    assert open_after(md) == []


def test_tables_isolate_name_cells():
    df = pd.DataFrame({"algorithm": [RLO + "x", "svm"], "p": [0.5, 0.25]})
    assert f'<td class="txt"><bdi>{RLO}x</bdi></td>' in export.to_html(df)
    assert '<td class="txt">svm</td>' in export.to_html(df)
    assert f"| {FSI}{RLO}x{PDI} | 0.50 |" in export.to_markdown(df)
    assert "| svm | 0.25 |" in export.to_markdown(df)


@pytest.mark.parametrize(
    ("name", "tex"),
    [
        ("café", "café"),
        ("cafe\u0301", "café"),  # decomposed: composed first
        ("Øre ŁĘ ß", "Øre ŁĘ ß"),
        ("α-SVM", r"\ensuremath{\alpha}-SVM"),
        ("ΣΑ", r"\ensuremath{\Sigma}\ensuremath{\mathrm{A}}"),
        ("≥x ≠ ∞", r"\ensuremath{\geq}x \ensuremath{\neq} \ensuremath{\infty}"),
        ("a>=b", r"a$\geq$b"),
        ("Лес", r"\lbrack{}U+041B\rbrack{}\lbrack{}U+0435\rbrack{}\lbrack{}U+0441\rbrack{}"),
        ("森", r"\lbrack{}U+68EE\rbrack{}"),
        ("a\u200bb\u200dc\ufeff", "abc"),
        ("🚀", r"\lbrack{}U+1F680\rbrack{}"),
        (RLO + "x" + PDF + "\u200f", "x"),
        ("[U+41]", "{[}U+41{]}"),  # typed by the user: not a replacement
    ],
)
def test_tex_escape_per_character_class(name, tex):
    assert export.tex_escape(name) == tex


def test_tex_escape_table_compiles_every_class(tmp_path, compile_latex):
    names = ["café", "Œuvre", "α-SVM", "ΩΔ", "≥x", "±×÷", "Лес", "随机森林", "x\u200by"]
    names += ["🚀", RLO + "over", HEBREW, "\x07bell", "…", "a–b—c", "€5", "µs"]
    df = pd.DataFrame({"algorithm": names, "score": np.arange(len(names), dtype=float)})
    table = export.save_table(df, tmp_path / "t.tex")
    doc = tmp_path / "doc.tex"
    doc.write_text(
        "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage{booktabs,siunitx}\n"
        f"\\begin{{document}}\n\\input{{{table.name}}}\n\\end{{document}}\n",
        encoding="utf-8",
    )
    log = compile_latex(doc)
    assert "Missing character" not in log


def test_strip_controls_keeps_everything_else():
    text = RLO + "a" + PDF + RLI + HEBREW + PDI + "\u200e\u200f\u061c" + "b"
    assert strip_controls(text) == "a" + HEBREW + "b"
    assert all(unicodedata.bidirectional(c) not in ("RLO", "PDI") for c in strip_controls(text))


def test_correlated_ttest_chart_title_isolates_the_names():
    # the widget's t-test title: "P(right)" after an overridden name read "(thgir)P"
    rng = np.random.default_rng(0)
    rows = [
        {"ds": RLO + "ds", "fold": f, "alg": alg, "acc": base + rng.normal(0, 0.01)}
        for f in range(5)
        for alg, base in ((RLO + "left", 0.7), (HEBREW, 0.72))
    ]
    res = correlated_ttest(
        pd.DataFrame(rows),
        a=RLO + "left",
        b=HEBREW,
        dataset="ds",
        algorithm="alg",
        fold="fold",
        score="acc",
        rho=0.2,
    )
    title = res.chart(RLO + "ds").to_dict()["title"]
    assert title.startswith(f"{FSI}{RLO}ds{PDI}: {FSI}{HEBREW}{PDI} - {FSI}{RLO}left{PDI}")
    assert open_after(title) == []
