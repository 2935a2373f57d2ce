"""The report's templates: package data, each format's escaper, autoescaping in HTML.

The full reports are compared with real fits in ``tests/stan/test_outputs.py`` and
``tests/security``; here the templates are filled with a small hand-made content.
"""

from __future__ import annotations

from importlib.resources import files

import pandas as pd
import pytest

from bbt_widget.outputs.citations import Reference
from bbt_widget.outputs.report import _render as report_render
from bbt_widget.outputs.report._sections import Table

HOSTILE = '<script>alert("x")</script> & {\\textbf{b}} $%#_ *[x](y)*'
FIGURES = report_render._HEADLINE_FIGURES + report_render._DETAIL_FIGURES


def _content(figures: dict[str, bytes] | dict[str, str] | str) -> report_render._Content:
    frame = pd.DataFrame({"algorithm": [HOSTILE, "b"], "p": [0.25, 0.75]})
    table = Table("ranking", HOSTILE, frame)
    return report_render._Content(
        title=HOSTILE,
        headline=HOSTILE,
        provenance=[("command", HOSTILE), ("seed", "1")],
        diagnostics_ok=True,
        diagnostics="all good",
        notes=[HOSTILE],
        counts=table,
        methods="<p>the methods paragraph, already in the format</p>",
        audit=None,
        figures=figures,
        tables=[table],
        columns=[(HOSTILE, HOSTILE)],
        sections=[],
        references=[Reference("key2024", HOSTILE, HOSTILE, "")],
    )


def _captions() -> dict[str, str]:
    return {n: f"{HOSTILE} {n}" for n in FIGURES}


def test_the_templates_are_package_data():
    folder = files("bbt_widget.outputs.report") / "templates"
    assert {f"report.{fmt}" for fmt in ("html", "md", "tex")} <= {p.name for p in folder.iterdir()}


def test_html_autoescapes_and_keeps_markup_that_is_markup():
    svg = b'<svg id="chart"><text>ok</text></svg>'
    html = report_render._render("html", _content(dict.fromkeys(FIGURES, svg)), _captions())
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    assert html.count('<svg id="chart">') == len(FIGURES)  # the charts go in as SVG
    assert "<p>the methods paragraph, already in the format</p>" in html
    assert html.startswith("<!doctype html>") and html.endswith("</body></html>")
    assert report_render._template("html").environment.autoescape("report.html")


@pytest.mark.parametrize("fmt", ["md", "tex"])
def test_markdown_and_latex_use_their_own_escapers(fmt):
    template = report_render._template(fmt)
    assert not template.environment.autoescape(f"report.{fmt}")
    paths = {n: f"{fmt} figures/{n}.svg" for n in FIGURES}
    text = report_render._render(fmt, _content(paths), _captions())
    escape = {"md": "md_escape", "tex": "tex_escape"}[fmt]
    assert getattr(report_render.export, escape)(HOSTILE) in text
    # LaTeX's first line is a comment naming the report, where the title is left as it is
    body = text.split("\\documentclass", 1)[-1]
    assert HOSTILE not in body


def test_a_failed_chart_rendering_is_said_in_every_format():
    message = "Charts could not be rendered: <no renderer>."
    for fmt in ("html", "md", "tex"):
        text = report_render._render(fmt, _content(message), _captions())
        assert "no renderer" in text and "<no renderer>" not in text, fmt
