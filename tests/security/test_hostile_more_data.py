"""The report's "More data sets" section with hostile algorithm names: shown as text in HTML
and Markdown (no active content, the table's cells hold the pair labels, the sentences the
names), and in LaTeX compiled with every character printed."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hostile import BIDI, HOSTILE
from test_hostile_names import (
    _assert_no_active_content,
    _parse,
    _render_markdown,
    _shown,
    _table_with,
)

import bbt_widget as bbt
from bbt_widget.outputs import export
from bbt_widget.outputs.report._more_data import more_data_section
from bbt_widget.outputs.report._render import write_report

#: Names of every kind (HTML, Markdown, LaTeX, a formula, bidi), few enough for a quick fit.
NAMES = (HOSTILE[0], HOSTILE[1], HOSTILE[2], HOSTILE[10], HOSTILE[11], BIDI[0])


@pytest.fixture(scope="module")
def close_fit() -> bbt.BBTResult:
    """Algorithms close enough that some pairs carry no weak claim (numpy engine)."""
    rng = np.random.default_rng(1)
    rows = [
        {"db": f"d{d}", **{n: 0.7 + 0.004 * k + rng.normal(0, 0.01) for k, n in enumerate(NAMES)}}
        for d in range(20)
    ]
    return bbt.fit(pd.DataFrame(rows), dataset="db", chains=2, draws="fixed", seed=3)


@pytest.fixture(scope="module")
def section(close_fit: bbt.BBTResult):  # type: ignore[no-untyped-def]
    out = more_data_section(close_fit, (10, 40), "weak", (0.45, 0.55))
    assert out.tables, "the case must have open pairs"
    return out


@pytest.mark.slow
def test_more_data_section_shows_hostile_names_as_text_in_html_and_markdown(
    close_fit: bbt.BBTResult, section, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    open_pairs = close_fit.summary().query("weak == 'no claim'")
    labels = {_shown(p) for p in open_pairs["pair"]}
    page = _parse(write_report(close_fit, tmp_path / "r.html", sections=[section]).read_text())
    _assert_no_active_content(page)
    table = _table_with(page, "P(no claim)")
    assert set(table["pair"]) == labels
    text = _shown("".join(page.text))
    first = open_pairs.iloc[0]
    assert any(
        f"{_shown(a)} vs {_shown(b)}: 10 / 40 more data sets" in text
        for a, b in zip(open_pairs["alg_a"], open_pairs["alg_b"])
    ), first
    md = write_report(close_fit, tmp_path / "r.md", sections=[section]).read_text()
    assert "<img src=x" not in md and "<script>" not in md
    md_page = _parse(_render_markdown(md))
    _assert_no_active_content(md_page)
    assert set(_table_with(md_page, "P(no claim)")["pair"]) == labels


@pytest.mark.slow
def test_more_data_section_compiles_in_latex(
    close_fit: bbt.BBTResult, section, tmp_path, compile_latex
) -> None:  # type: ignore[no-untyped-def]
    tex = write_report(close_fit, tmp_path / "r.tex", sections=[section])
    body = tex.read_text(encoding="utf-8")
    # the LaTeX specials of a name escaped where the section's table and sentences print it
    assert export.tex_escape(HOSTILE[10]) in body.replace("\\allowbreak{}", "")
    assert "Missing character" not in compile_latex(tex)


def test_the_widgets_forecast_keeps_hostile_names_isolated(close_fit: bbt.BBTResult) -> None:
    """The widget's view of a pair named with HTML and a right-to-left override: the names go
    out as data (the front end shows them as text), and every sentence holds each name
    isolated, with nothing left open that would reorder the text after it."""
    from bbt_widget.core.bidi import balance, isolate, pair_label
    from bbt_widget.widget.more_data_view import forecast_view

    view = forecast_view(close_fit, (BIDI[0], HOSTILE[0]), (0.45, 0.55))
    assert {view["a"], view["b"]} == {BIDI[0], HOSTILE[0]}
    for text in (*view["sentences"], view["now"]):
        assert balance(text) == text, text
    for sentence in view["sentences"]:
        assert isolate(view["a"]) in sentence and isolate(view["b"]) in sentence, sentence
    (rows,) = [d for d in view["spec"]["datasets"].values() if "rule" in d[0]]
    assert {row["pair"] for row in rows} == {pair_label(view["a"], view["b"])}
