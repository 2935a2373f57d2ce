"""Hostile names through every output: the HTML, Markdown and LaTeX reports, the tables
(Markdown, LaTeX, CSV), the methods text and the exported charts (issue 9, findings 1, 2 and
12; issue 8, the LaTeX escaping).

Each output is read back the way its consumer reads it: Markdown rendered by a renderer that
lets raw HTML through (as CommonMark does), HTML parsed, LaTeX compiled by pdflatex, CSV
read by the csv module. A name must come back as exactly the text it is, never as markup.
"""

from __future__ import annotations

import csv
import html
import itertools
import re
from html.parser import HTMLParser

import mistune
import pandas as pd
import pytest
from hostile import HOSTILE, fit_hostile, hostile_results

from bbt_widget import charts
from bbt_widget.baselines import scores_cd_diagram
from bbt_widget.charts.encodings import LABEL_MAX_CHARS
from bbt_widget.core.palette import HIGHLIGHT_COLORS
from bbt_widget.outputs import export
from bbt_widget.outputs.methods_text import methods_text
from bbt_widget.outputs.report._render import write_report

pytestmark = pytest.mark.stan


class _Page(HTMLParser):
    """Tags, attributes, the text of every table cell (``<br>`` read as a line break) and
    the text of the methods paragraph."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.tables: list[list[list[str]]] = []
        self.text: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "br":
            self.text.append("\n")
            if self._cell is not None:
                self._cell.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def _parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


def _render_markdown(text: str) -> str:
    # escape=False: raw HTML passes through, as in CommonMark and most Markdown viewers
    return mistune.create_markdown(escape=False, plugins=["table", "strikethrough"])(text)


def _assert_no_active_content(page: _Page) -> None:
    for tag, attrs in page.tags:
        assert tag not in ("script", "iframe", "object"), tag
        assert not any(a.startswith("on") for a in attrs), (tag, attrs)
        for a in ("href", "src"):
            value = attrs.get(a) or ""
            assert not value.lower().startswith("javascript:"), (tag, attrs)
        if tag == "img":  # the report's own figures only
            assert (attrs.get("src") or "").endswith(".svg"), attrs


def _shown(text: str) -> str:
    """A name or text as a reader gets it: without the bidi isolate characters (U+2066 to
    U+2069), which isolate a name that holds right-to-left text or bidi controls (HTML shows
    them as ``<bdi>`` elements)."""
    return re.sub("[\u2066-\u2069]", "", text)


def _table_with(page: _Page, header: str) -> pd.DataFrame:
    table = next(t for t in page.tables if t and header in t[0])
    head, *rows = table
    assert all(len(r) == len(head) for r in rows), "a name split a table row"
    return pd.DataFrame([[_shown(c) for c in r] for r in rows], columns=head)


def _assert_names_are_cells(page: _Page) -> None:
    names = {_shown(n) for n in HOSTILE}
    summary = _table_with(page, "alg_a")
    assert set(summary["alg_a"]) | set(summary["alg_b"]) == names
    wins = _table_with(page, "win1")
    assert set(wins["alg1"]) | set(wins["alg2"]) == names
    ranking = _table_with(page, "expected_rank")
    assert sorted(ranking["algorithm"]) == sorted(names)
    worst = _table_with(page, "p_tail")  # the PPC's worst pairs
    assert set(worst["alg1"]) | set(worst["alg2"]) <= names


def _assert_claims_name_the_pairs(res, text: str) -> None:
    """The methods paragraph names claims between neighbours in the ranking (the first as
    many as its length allows), each name printed as it is."""
    from bbt_widget.core.options import resolve_interpretation

    rule = resolve_interpretation("auto", len(res.algorithms)).rule  # the reports' default
    s = res.summary()
    claimed = s[s[rule] == "a better"]
    order = list(res.ranking()["algorithm"])
    neighbours = set(itertools.pairwise(order))
    text = _shown(text)
    named = {
        (a, b)
        for a, b in zip(claimed["alg_a"], claimed["alg_b"])
        if f"{_shown(a)} is better than {_shown(b)} (" in text
    }
    between = set(zip(claimed["alg_a"], claimed["alg_b"])) & neighbours
    assert named <= between and (named or not between)


#: A hostile input file name and command line, as the CLI would hand them over.
HOSTILE_PROVENANCE = {
    "input": "<img src=x onerror=alert(1)> a_b%&#{}|\n.csv",
    "command": "bbt-widget report '<script>alert(1)</script> $x_1^2~%.csv' --seed 1",
}


def test_html_report_shows_names_as_text(hostile_res, tmp_path):
    path = write_report(hostile_res, tmp_path / "r.html", provenance=HOSTILE_PROVENANCE)
    page = _parse(path.read_text(encoding="utf-8"))
    _assert_no_active_content(page)
    _assert_names_are_cells(page)
    text = "".join(page.text)
    _assert_claims_name_the_pairs(hostile_res, text)
    for value in HOSTILE_PROVENANCE.values():
        assert value in text, value


def test_markdown_report_shows_names_as_text(hostile_res, tmp_path):
    path = write_report(hostile_res, tmp_path / "r.md", provenance=HOSTILE_PROVENANCE)
    md = path.read_text(encoding="utf-8")
    assert "<img src=x" not in md and "<script>" not in md
    page = _parse(_render_markdown(md))
    _assert_no_active_content(page)
    _assert_names_are_cells(page)
    for value in HOSTILE_PROVENANCE.values():
        assert value in "".join(page.text), value
    # the methods paragraph: emphasis, code and links only where the text puts them
    methods = _parse(_render_markdown(methods_text(hostile_res, format="md")))
    _assert_no_active_content(methods)
    assert [t for t, _ in methods.tags if t != "br"] == ["p", "p"]  # methods, then results
    text = "".join(methods.text)
    _assert_claims_name_the_pairs(hostile_res, text)
    assert "100% of the observed" in text or "% of the observed" in text


def test_markdown_table_cells_hold_the_names(hostile_res, tmp_path):
    path = export.save_table(hostile_res.win_table, tmp_path / "w.md")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(hostile_res.win_table) + 2  # no name broke a row
    page = _parse(_render_markdown(path.read_text(encoding="utf-8")))
    _assert_no_active_content(page)
    back = _table_with(page, "alg1")
    assert back["alg1"].tolist() == [_shown(n) for n in hostile_res.win_table["alg1"]]
    assert back["alg2"].tolist() == [_shown(n) for n in hostile_res.win_table["alg2"]]


def test_methods_text_escapes_once_per_format(hostile_res):
    tex = methods_text(hostile_res, format="tex")
    # issue 8: the PPC sentence's % was escaped twice, and names went through an
    # emphasis regex
    assert "\\textbackslash{}\\%" not in tex and "% of the observed" in tex
    assert re.search(r"\d\\% of the observed", tex)
    assert "\\emph{e}" not in tex
    # our own markup only: the citations and the model's math, no emphasis or code spans
    assert "\\emph{" not in tex and "\\texttt{" not in tex and "\\cite{" in tex
    page = _parse(methods_text(hostile_res, format="html"))
    _assert_no_active_content(page)
    # bdi: the isolated names (right-to-left text, bidi controls)
    assert [t for t, _ in page.tags if t not in ("br", "bdi")] == ["p", "p"]
    _assert_claims_name_the_pairs(hostile_res, "".join(page.text))
    # each name the paragraph prints is escaped once: the named claims read back in LaTeX
    s = hostile_res.summary()
    for a, b in zip(s["alg_a"], s["alg_b"]):
        if f"{_shown(a)} is better than {_shown(b)} (" in _shown("".join(page.text)):
            assert f"{export.tex_escape(a)} is better than {export.tex_escape(b)}" in tex
    with pytest.raises(ValueError, match="'html'"):
        methods_text(hostile_res, format="rtf")


def test_latex_escapes_every_special_character():
    for name in HOSTILE:
        tex = export.tex_escape(name)
        # take out what the escaper writes (\textbar{}, \%, -{}, $\geq$); nothing LaTeX
        # reads as syntax may be left, nor a line break, a ligature or an emoji
        bare = re.sub(r"\\[a-z]+\{\}|\\[&%$#_{}]|-\{\}|\{[][]\}|\$\\[gl]eq\$", "", tex)
        assert not set(bare) & set("\\&%$#_{}~^|<>[]"), (name, tex)
        assert "\n" not in tex and "--" not in tex and "🚀" not in tex


def test_latex_report_with_hostile_names_compiles(hostile_res, tmp_path, compile_latex):
    path = write_report(hostile_res, tmp_path / "report.tex", provenance=HOSTILE_PROVENANCE)
    body = path.read_text(encoding="utf-8")
    assert "\\textbackslash{}\\%" not in body and "c\\_d*e*" in body
    for value in HOSTILE_PROVENANCE.values():
        assert export.tex_escape(value) in body.replace("\\allowbreak{}", ""), value
    log = compile_latex(path)
    # every character printed: none fell out of the fonts
    assert "Missing character" not in log


def test_report_tables_as_csv_and_latex_with_hostile_names(hostile_res, tmp_path, compile_latex):
    """Every table of the report as CSV (``<stem>_tex_tables/``) and the Scores section's LaTeX
    tables (booktabs, siunitx S columns), with hostile algorithm names."""
    path = write_report(hostile_res, tmp_path / "report.tex", interpretation="strong")
    folder = tmp_path / "report_tex_tables"
    stems = {p.stem for p in folder.glob("*.csv")}
    assert {"scores", "effect-sizes", "pairs", "ranking", "wins", "claims"} <= stems
    names = set(hostile_res.algorithms)
    shown = {"'" + n if n.startswith(export.FORMULA_PREFIXES) else n for n in names}
    for stem in stems:
        with open(folder / f"{stem}.csv", newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
        assert len({len(r) for r in rows}) == 1, stem  # no name broke a row
        for row in rows[1:]:
            for cell in row:
                if cell.startswith(export.FORMULA_PREFIXES):
                    float(cell)  # only a number may start like a formula
        back = pd.read_csv(folder / f"{stem}.csv", keep_default_na=False)
        for col in ("algorithm", "alg_a", "alg_b", "alg1", "alg2"):
            if col in back:  # the names exactly, a formula's neutralised
                assert set(back[col]) <= shown, (stem, col)
    scores = pd.read_csv(folder / "scores.csv", keep_default_na=False)
    assert set(scores["algorithm"]) == shown
    assert pd.api.types.is_numeric_dtype(scores["mean_score"])
    effects = pd.read_csv(folder / "effect-sizes.csv", keep_default_na=False)
    assert len(effects) and pd.api.types.is_numeric_dtype(effects["cliffs_delta"])
    body = path.read_text(encoding="utf-8")
    table = body.split("\\label{tab:bbt-scores}", 1)[1].split("\\bottomrule", 1)[0]
    assert "SSSSSS}" in table.split("\\toprule", 1)[0]  # the numbers in siunitx S columns
    for name in ("=cmd|' /C calc'!A0", "<script>alert(1)</script>", "$\\&#{}~^"):
        assert export.tex_escape(name) in table, name
    log = compile_latex(path)
    assert "Missing character" not in log


def test_csv_prefixes_formula_cells_and_keeps_numbers(hostile_res, tmp_path):
    written = export.export_all(hostile_res, tmp_path / "all", formats=("csv",))
    ranking = hostile_res.ranking()
    assert (ranking.select_dtypes("number") < 0).any().any()  # negative numbers present
    for path in (p for p in written if p.suffix == ".csv"):
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
        source = {"summary": hostile_res.summary(), "ranking": ranking}.get(
            path.stem, hostile_res.win_table
        )
        back = pd.read_csv(path)
        for col in source.columns:
            if pd.api.types.is_numeric_dtype(source[col]):
                # numbers stay numbers, negative ones included
                assert pd.api.types.is_numeric_dtype(back[col]), (path.name, col)
                pd.testing.assert_series_equal(back[col], source[col], check_dtype=False)
        for row in rows[1:]:
            for cell, col in zip(row, rows[0]):
                if cell.startswith(export.FORMULA_PREFIXES):
                    assert pd.api.types.is_numeric_dtype(source[col]), (path.name, col, cell)
        for name in ("=cmd|' /C calc'!A0", "+1", "-2", "@SUM(A1)"):
            if "alg1" in back:
                assert "'" + name in set(back["alg1"]) | set(back["alg2"])
        assert "<script>alert(1)</script>" in path.read_text(encoding="utf-8")  # text as is
    # the opt-out writes the names exactly
    raw = export.save_table(hostile_res.win_table, tmp_path / "raw.csv", formula_safe=False)
    back = pd.read_csv(raw, keep_default_na=False)
    assert back["alg1"].tolist() == hostile_res.win_table["alg1"].tolist()


def test_csv_prefix_covers_tab_cr_headers_and_categories(tmp_path):
    df = pd.DataFrame(
        {
            "=HYPERLINK(1)": ["\tcmd", "\rcmd", "ok", "-x"],
            "cat": pd.Categorical(["@a", "b", "@a", "b"]),
            "n": [-1.5, 2.0, -3.0, 0.0],
        }
    )
    back = pd.read_csv(export.save_table(df, tmp_path / "t.csv"), keep_default_na=False)
    assert list(back.columns) == ["'=HYPERLINK(1)", "cat", "n"]
    assert back.iloc[:, 0].tolist() == ["'\tcmd", "'\rcmd", "ok", "'-x"]
    assert back["cat"].tolist() == ["'@a", "b", "'@a", "b"]
    assert back["n"].tolist() == [-1.5, 2.0, -3.0, 0.0]


def _svg_texts(svg: str) -> list[str]:
    return [html.unescape(m) for m in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


def test_long_emoji_names_render_in_every_chart(hostile_res, tmp_path):
    chart_set = charts.result_charts(hostile_res)
    cut = "🚀" * LABEL_MAX_CHARS + "…"
    for name in ("intervals", "rope_overlap", "win_matrix", "linked"):
        svg = export.save_chart(chart_set[name], tmp_path / f"{name}.svg").read_text("utf-8")
        cut_labels = [t for t in _svg_texts(svg) if t.endswith("🚀…")]
        # pair labels cut at whole characters, with an ellipsis (PPC panel titles are not
        # cut; Vega only cuts where a label limit applies)
        assert cut_labels, name
        assert all(len(t) == LABEL_MAX_CHARS + 1 for t in cut_labels), (name, cut_labels)
        if name in ("win_matrix", "linked"):
            assert cut in cut_labels, name  # the algorithm axis: the name itself, cut
    export.save_chart(chart_set["intervals"], tmp_path / "intervals.pdf")


def test_the_group_heatmap_shows_hostile_algorithm_and_group_names_as_text(tmp_path):
    """The widget's "Decisions by group" heatmap (exported), data sets in groups named as
    hostilely as the algorithms: every name is SVG text, long ones cut at whole characters."""
    import warnings

    import bbt_widget as bbt

    data = hostile_results()
    names = ['<svg onload="alert(1)">', '=HYPERLINK("x")']
    groups = {d: names[k % 2] for k, d in enumerate(data["db"].unique())}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bbt.DiagnosticsWarning)
        res = bbt.fit(
            data,
            dataset="db",
            group=groups,
            engine="pystan",
            seed=11,
            chains=2,
            iter_warmup=300,
            iter_sampling=300,
        )
    svg = export.save_chart(charts.group_decisions_chart(res), tmp_path / "g.svg").read_text()
    texts = _svg_texts(svg)
    assert {"All (pooled)", *names} <= set(texts)
    assert "<svg onload" not in svg.split(">", 1)[1]  # only as text (&lt;svg ...) inside
    rows = [t for t in texts if t.startswith(("≠ ", "= "))]
    assert any("<script>alert(1)</script>" in t for t in rows), rows[:10]
    cut = [t for t in rows if t.endswith("🚀…")]
    assert cut and all(len(t) == LABEL_MAX_CHARS + 1 for t in cut), cut


def test_names_whose_pair_labels_collide(tmp_path):
    # scores rise along the tuple, so x beats "y > z" and "x > y" beats z: both pairs are
    # labelled "x > y > z"
    res = fit_hostile(("y > z", "z", "x", "x > y"))
    page = _parse(write_report(res, tmp_path / "r.html").read_text(encoding="utf-8"))
    assert len(_table_with(page, "alg_a")) == 6


def test_report_sections_show_hostile_names_as_text(
    hostile_res, hostile_sections, tmp_path, compile_latex
):
    html = write_report(hostile_res, tmp_path / "r.html", sections=hostile_sections)
    page = _parse(html.read_text(encoding="utf-8"))
    _assert_no_active_content(page)
    ranks = _table_with(page, "p_best_pl")
    assert sorted(ranks["algorithm"]) == sorted(_shown(n) for n in HOSTILE)
    influence = _table_with(page, "n_changing")
    pairs = {_shown(p) for p in hostile_res.summary()["pair"]}
    assert set(influence["pair"]) <= pairs and len(influence) > 0
    md = write_report(hostile_res, tmp_path / "r.md", sections=hostile_sections)
    md_page = _parse(_render_markdown(md.read_text(encoding="utf-8")))
    _assert_no_active_content(md_page)
    assert sorted(_table_with(md_page, "p_best_pl")["algorithm"]) == sorted(
        _shown(n) for n in HOSTILE
    )
    tex = write_report(hostile_res, tmp_path / "r.tex", sections=hostile_sections)
    assert "Missing character" not in compile_latex(tex)


def test_cd_diagrams_show_hostile_names_as_text(hostile_res, tmp_path):
    chosen = list(HOSTILE[:3])
    diagrams = {
        "bbt": charts.fit_cd_diagram(hostile_res, highlight=chosen),
        "bbt_weak_ability": charts.fit_cd_diagram(
            hostile_res, interpretation="weak", highlight=chosen, position="ability"
        ),
        "wilcoxon": scores_cd_diagram(
            hostile_results(), dataset="db", test="wilcoxon", highlight=chosen
        ),
    }
    for name, chart in diagrams.items():
        svg = export.save_chart(chart, tmp_path / f"{name}.svg").read_text("utf-8")
        assert "<script" not in svg and "<img" not in svg, name  # names are text, not markup
        texts = [_shown(t) for t in _svg_texts(svg)]
        for algorithm in HOSTILE:
            shown = _shown(algorithm)
            if len(shown) > LABEL_MAX_CHARS:  # cut at whole characters
                shown = shown[:LABEL_MAX_CHARS] + "…"
            # each name is one label, "name (position)"; SVG text shows a line break as space
            label = re.sub(r"\s", " ", shown)
            assert any(re.sub(r"\s", " ", t).startswith(f"{label} (") for t in texts), (
                name,
                algorithm,
            )
        assert HIGHLIGHT_COLORS["highlighted"] in svg, name
    export.save_chart(diagrams["bbt"], tmp_path / "bbt.pdf")
