"""The dominance view's metric names in headless Chromium: a name holding a right-to-left
override (U+202E) or an isolate left open (U+2067) before Arabic letters must not reorder the
text after it, so one can still tell which metric is lower-is-better and which metrics a pair
wins on.

The view (``js/src/metrics_view.js``) is loaded on its own, with the widget's stylesheet and a
stand-in model: no Jupyter and no fit, the layout is what the widget draws. Whether the text
reads in order is measured on the page: each piece of a line must be drawn to the right of the
piece before it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bbt_widget.core.bidi import balance

pytestmark = pytest.mark.browser

SOURCES = Path(__file__).resolve().parents[2] / "js" / "src"
#: A local address the page loads from; the route below answers it, nothing listens there.
ORIGIN = "http://127.0.0.1:9"

RLO = "\u202etime"  # a right-to-left override left open: mirrors everything after it
RLI = "\u2067\u062f\u0642\u0629"  # an isolate left open, then Arabic: text after it goes first
#: What each name shows: its letters, without the controls.
SHOWN = {RLO: "time", RLI: "\u062f\u0642\u0629", "acc": "acc", "f1": "f1"}

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><link rel="stylesheet" href="widget.css"></head>
<body style="font: 14px sans-serif"><div id="root"></div>
<script type="module">
import { buildMetricsView } from "./metrics_view.js";
window.show = (state) => {
  const model = { get: (name) => state[name], on: () => {}, off: () => {} };
  document.getElementById("root").replaceChildren(buildMetricsView(model).element);
};
// the drawn box of `needle`, found in the text of the element `selector` (across elements)
window.box = (selector, needle) => {
  const root = document.querySelector(selector);
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const nodes = [];
  let text = "";
  while (walker.nextNode()) {
    nodes.push([walker.currentNode, text.length]);
    text += walker.currentNode.data;
  }
  const start = text.indexOf(needle);
  if (start < 0) throw new Error(`${JSON.stringify(needle)} not in ${JSON.stringify(text)}`);
  const end = start + needle.length;
  const [first, a] = nodes.find(([n, at]) => start >= at && start < at + n.data.length);
  const [last, b] = nodes.find(([n, at]) => end > at && end <= at + n.data.length);
  const range = document.createRange();
  range.setStart(first, start - a);
  range.setEnd(last, end - b);
  const rect = range.getBoundingClientRect();
  return { left: rect.left, right: rect.right, width: rect.width };
};
window.ready = true;
</script></body></html>"""


def _serve(route: Any) -> None:
    name = route.request.url.removeprefix(ORIGIN + "/")
    if name == "index.html":
        route.fulfill(body=PAGE, content_type="text/html")
    elif name in ("metrics_view.js", "controls.js", "bidi.js", "widget.css"):
        kind = "text/css" if name.endswith(".css") else "text/javascript"
        route.fulfill(body=(SOURCES / name).read_text(encoding="utf-8"), content_type=kind)
    else:
        route.fulfill(status=404, body="")


@pytest.fixture
def view(browser_context: Any) -> Any:
    """A page with the dominance view's module loaded; ``show(state)`` draws it."""
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.route(f"{ORIGIN}/**", _serve)
    page.goto(f"{ORIGIN}/index.html")
    page.wait_for_function("() => window.ready === true", timeout=30_000)
    yield page
    assert errors == []
    assert browser_context.blocked == []


def _show(page: Any, metrics: list[str], lower: list[str], rows: list[dict[str, Any]]) -> None:
    page.evaluate(
        "(state) => window.show(state)",
        {
            "metrics": metrics,
            "dominance_text": "",
            "dominance_data": {
                "lower": lower,
                "rule": "weak",
                "pareto": ["A"],
                "fitted": metrics,
                "rows": rows,
            },
        },
    )


def _in_order(page: Any, selector: str, pieces: list[str]) -> None:
    """Each piece (of the text of ``selector``, in reading order) is drawn right of the one
    before it: no name has moved the text after it."""
    boxes = [page.evaluate("([s, n]) => window.box(s, n)", [selector, p]) for p in pieces]
    for (before, a), (after, b) in zip(
        zip(pieces, boxes, strict=True), zip(pieces[1:], boxes[1:], strict=True)
    ):
        assert a["width"] > 0 and b["width"] > 0
        assert b["left"] >= a["right"] - 0.5, f"{after!r} is drawn before {before!r}: {boxes}"


@pytest.mark.parametrize(
    ("metrics", "lower"),
    [(["acc", RLO], [RLO]), ([RLI, "time"], [RLI])],
    ids=["override", "open-isolate"],
)
def test_the_directions_line_keeps_each_metric_with_its_direction(
    view: Any, metrics: list[str], lower: list[str]
) -> None:
    _show(view, metrics, lower, [])
    line = ".bbt-metrics-directions"
    said = [f"({'lower' if m in lower else 'higher'} is better)" for m in metrics]
    first, second = (SHOWN.get(m, m) for m in metrics)
    _in_order(view, line, ["Metrics:", first, said[0], second, said[1], "weak interpretation"])
    # each name as it is written among other text everywhere: what it opens closed in it
    first, second = (balance(m) for m in metrics)
    assert view.locator(line).text_content() == (
        f"Metrics: {first} {said[0]}, {second} {said[1]}; weak interpretation"
    )


def test_the_better_on_and_worse_on_cells_keep_the_metrics_apart(view: Any) -> None:
    row = {
        "alg_a": "A",
        "alg_b": "B",
        "metrics_better": [RLO, "acc"],
        "metrics_worse": [RLI, "f1"],
        "dominates": False,
    }
    _show(view, [RLO, "acc", RLI, "f1"], [RLO], [row])
    cells = ".bbt-dominance tbody tr td:nth-child({})"
    _in_order(view, cells.format(3), [SHOWN[RLO], "acc"])
    _in_order(view, cells.format(4), [SHOWN[RLI], "f1"])
    assert view.locator(cells.format(3)).text_content() == f"{balance(RLO)}, acc"
    assert view.locator(cells.format(4)).text_content() == f"{balance(RLI)}, f1"
