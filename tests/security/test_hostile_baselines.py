"""The baselines' sections (``methods=friedman,signed-rank,sign``) with hostile algorithm names:
names are table cells in HTML and Markdown, CSV cells never formulas, LaTeX compiles."""

from __future__ import annotations

import csv

import pandas as pd
import pytest
from hostile import HOSTILE, hostile_results
from test_hostile_names import (
    _assert_no_active_content,
    _parse,
    _render_markdown,
    _shown,
    _table_with,
)

import bbt_widget as bbt
from bbt_widget.outputs import export

#: Only the baselines: the default methods (Plackett-Luce) are not what this file tests.
_METHODS = "none,friedman,signed-rank,sign"


@pytest.fixture(scope="module")
def reports(hostile_res, tmp_path_factory):
    folder = tmp_path_factory.mktemp("baselines")
    data = hostile_results()
    return {
        fmt: bbt.report.write(hostile_res, folder / f"r.{fmt}", data=data, methods=_METHODS)
        for fmt in ("html", "md", "tex")
    }


def _check_tables(page, hostile_res) -> None:
    _assert_no_active_content(page)
    names = sorted(_shown(n) for n in HOSTILE)
    assert sorted(_table_with(page, "shapiro_w")["algorithm"]) == names
    assert sorted(_table_with(page, "mean_rank")["algorithm"]) == names
    pairs = {_shown(p) for p in hostile_res.summary()["pair"]}
    for header in ("nemenyi_rank_diff", "p_a_better"):
        shown = set(_table_with(page, header)["pair"])
        assert shown and shown <= pairs, header


@pytest.mark.slow
def test_html_baselines_show_names_as_cells(reports, hostile_res):
    _check_tables(_parse(reports["html"].read_text(encoding="utf-8")), hostile_res)


def test_markdown_baselines_show_names_as_cells(reports, hostile_res):
    text = reports["md"].read_text(encoding="utf-8")
    _check_tables(_parse(_render_markdown(text)), hostile_res)


def test_baseline_csv_tables_keep_names_and_no_formulas(reports):
    folder = reports["md"].with_name("r_md_tables")
    shown = {"'" + n if n.startswith(export.FORMULA_PREFIXES) else n for n in HOSTILE}
    stems = ["friedman-tests", "friedman-normality", "friedman-ranks", "friedman-agreement"]
    for stem in [*stems, "signed-rank", "sign"]:
        with open(folder / f"{stem}.csv", newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
        assert len({len(r) for r in rows}) == 1, stem  # no name broke a row
        for row in rows[1:]:
            for cell in row:
                if cell.startswith(export.FORMULA_PREFIXES):
                    float(cell)  # only a number may start like a formula
    normality = pd.read_csv(folder / "friedman-normality.csv", keep_default_na=False)
    assert set(normality["algorithm"]) == shown


@pytest.mark.slow
def test_latex_baselines_escape_names_and_compile(reports, compile_latex):
    body = reports["tex"].read_text(encoding="utf-8")
    section = body.split("Frequentist baseline", 1)[1]
    for name in ("=cmd|' /C calc'!A0", "<script>alert(1)</script>", "$\\&#{}~^"):
        assert export.tex_escape(name) in section, name
    assert "Missing character" not in compile_latex(reports["tex"])
