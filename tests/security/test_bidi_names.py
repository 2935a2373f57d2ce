"""Names with right-to-left text and bidi controls (:data:`hostile.BIDI`) cannot reorder the
text around them, in any output.

A name holding U+202E (right-to-left override) that is left open mirrors every later word of
its paragraph; Hebrew letters turn the " > " between two names around. Each output is read
the way a reader's software reads it: the HTML parsed, with ``<bdi>`` (or ``dir="auto"``) as
the isolating element; Markdown and chart text as text, with U+2068 ... U+2069 (and the other
isolates) as the isolation; LaTeX, which cannot print the controls, without them.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from hostile import BIDI, BIDI_DATASET, HOSTILE, hostile_results

import bbt_widget as bbt
from bbt_widget import charts
from bbt_widget.outputs import export
from bbt_widget.outputs.methods_text import methods_text
from bbt_widget.outputs.report._render import write_report

pytestmark = pytest.mark.stan

#: Explicit bidi formatting characters and marks (what can reorder the text after them).
CONTROLS = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
_OPEN_ISOLATE = set("\u2066\u2067\u2068")
_PDI = "\u2069"
#: The text a reader can find a bidi name by: its runs of 5 or more characters between
#: controls ("P(right) override", the Hebrew word, "isolate", "stray"...).
_FINDABLE = [
    run
    for n in (*BIDI, BIDI_DATASET)
    for run in re.split("[\u202a-\u202e\u2066-\u2069]", n)
    if len(run) >= 5
]


def outside_isolates(text: str) -> str:
    """``text`` without its isolated spans (an isolate initiator up to its matching PDI);
    what is left is what the isolated names cannot affect, and must not hold a control."""
    out, depth = [], 0
    for ch in text:
        if ch in _OPEN_ISOLATE:
            depth += 1
        elif ch == _PDI and depth:
            depth -= 1
        elif not depth:
            out.append(ch)
    return "".join(out)


def assert_isolated(text: str, where: str) -> None:
    """No bidi control and no bidi name outside an isolate in ``text``."""
    rest = outside_isolates(text)
    left = sorted(f"U+{ord(c):04X}" for c in set(rest) & CONTROLS)
    assert not left, (where, left, rest[:300])
    for name in _FINDABLE:
        assert name not in rest, (where, name, rest[:300])


#: HTML elements without an end tag.
_VOID = frozenset({"br", "meta", "img", "input", "hr", "link"})


class _Isolation(HTMLParser):
    """The text of a page, split into what lies inside an isolating element (``<bdi>`` or
    ``dir="auto"``) and what lies outside; SVG ``<text>`` elements (each a chart label, its
    own bidi paragraph) are kept apart."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool]] = []
        self.outside: list[str] = []
        self.labels: list[str] = []
        self.n_bdi = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID:
            return
        isolating = tag == "bdi" or dict(attrs).get("dir") == "auto"
        self.n_bdi += tag == "bdi"
        self.stack.append((tag, isolating))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        pass  # <path/> and the like hold no text

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID:
            return
        assert self.stack and self.stack[-1][0] == tag, (tag, self.stack[-3:])
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        if any(isolating for _, isolating in self.stack):
            return
        if self.stack and self.stack[-1][0] == "text":
            self.labels.append(data)
        else:
            self.outside.append(data)


def _check_html(page: str, where: str) -> _Isolation:
    parsed = _Isolation()
    parsed.feed(page)
    parsed.close()
    assert not parsed.stack, (where, parsed.stack)  # every element closed: bdi nests
    assert_isolated("".join(parsed.outside), where)
    for label in parsed.labels:
        # a chart label is its own paragraph: a single name needs no isolate there, any
        # longer text does
        if label not in (*HOSTILE, BIDI_DATASET):
            assert_isolated(label, f"{where}: chart label {label!r}")
    return parsed


def test_html_report_isolates_every_bidi_name(hostile_res, hostile_sections, tmp_path):
    page = write_report(hostile_res, tmp_path / "r.html", sections=hostile_sections)
    text = page.read_text(encoding="utf-8")
    parsed = _check_html(text, "html report")
    assert parsed.n_bdi > 0
    # the methods paragraph names claims about the bidi names, each in a <bdi>
    methods = methods_text(hostile_res, format="html")
    assert "<bdi>" in methods and any(n in methods for n in _FINDABLE)
    _check_html(f"<p>{methods}</p>", "methods paragraph")


def test_markdown_report_isolates_every_bidi_name(hostile_res, hostile_sections, tmp_path):
    md = write_report(hostile_res, tmp_path / "r.md", sections=hostile_sections)
    text = md.read_text(encoding="utf-8")
    for k, line in enumerate(text.splitlines()):
        assert_isolated(line, f"r.md line {k + 1}")
    methods = methods_text(hostile_res, format="md")
    assert_isolated(methods, "methods paragraph")
    assert "\u2068" in methods and any(n in methods for n in _FINDABLE)
    for name, frame in (
        ("win table", hostile_res.win_table),
        ("summary", hostile_res.summary()),
        ("ranking", hostile_res.ranking()),
    ):
        for line in export.to_markdown(frame).splitlines():
            assert_isolated(line, f"{name} table")


def test_plain_text_isolates_every_bidi_name(hostile_res, tmp_path):
    # the pair labels of the results, as a script prints them
    for pair in hostile_res.summary()["pair"]:
        assert_isolated(pair, "pair label")
    # the audit names the missing results: algorithm and data set names among its words
    data = hostile_results()
    data.loc[0, BIDI[0]] = data.loc[1, BIDI[1]] = float("nan")
    data.loc[2, [BIDI[2], BIDI[3]]] = float("nan")
    findings = bbt.audit(data, dataset="db").to_frame()
    where = " ".join(findings["where"].astype(str))
    assert all(name in where for name in _FINDABLE)
    for row in findings.astype(str).itertuples(index=False):
        for cell in row:
            assert_isolated(cell, "audit finding")
    # and in the reports' audit table
    page = export.to_html(findings)
    _check_html(page, "audit table")
    for line in export.to_markdown(findings).splitlines():
        assert_isolated(line, "audit table (Markdown)")


def _strings(value, path=""):
    """Every string in a chart spec, with where it is; ``key`` fields (pair keys, never
    shown) left out."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k != "key":
                yield from _strings(v, f"{path}.{k}")
    elif isinstance(value, list):
        for k, v in enumerate(value):
            yield from _strings(v, f"{path}[{k}]")
    elif isinstance(value, str):
        yield path, value


def test_chart_labels_isolate_every_bidi_name(hostile_res):
    chart_set = charts.result_charts(hostile_res)
    seen_isolated = 0
    for name, chart in chart_set.items():
        for where, text in _strings(chart.to_dict()):
            if text in (*HOSTILE, BIDI_DATASET):
                continue  # a name alone: one label, one tooltip value, its own paragraph
            assert_isolated(text, f"{name}{where}")
            seen_isolated += "\u2068" in text
    assert seen_isolated > 0  # pair labels, PPC panel titles, decisions name them


def test_latex_report_drops_bidi_controls_and_keeps_the_names(
    hostile_res, hostile_sections, tmp_path, compile_latex
):
    tex = write_report(hostile_res, tmp_path / "r.tex", sections=hostile_sections)
    body = tex.read_text(encoding="utf-8")
    assert not set(body) & CONTROLS
    for name in ("P(right) override", "openisolate", "straypdi"):
        assert name in body, name
    assert "Missing character" not in compile_latex(tex)


@pytest.mark.parametrize("model", ["plackett-luce", "mallows"])
def test_ranking_models_isolate_bidi_names_in_pair_labels(model):
    data = hostile_results(BIDI, n_datasets=6)
    kw = {"iter_warmup": 200, "iter_sampling": 400} if model == "mallows" else {}
    res = bbt.ranking_model(data, dataset="db", model=model, seed=1, **kw)
    assert len(res.before) == len(BIDI) * (len(BIDI) - 1) // 2
    for label in res.before["pair"]:
        assert_isolated(label, f"{model} before.pair")
