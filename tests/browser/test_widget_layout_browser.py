"""The widget's layout in real JupyterLab and Notebook 7 with headless Chromium, at 5, 16 and
50 algorithms: it leads with the answer, fits a narrow notebook, explains its controls, draws
no title over another and gives a decision one colour in every chart.

The narrow case is a 1000 px window: JupyterLab with its file browser open (the widget is then
about 570 px wide) and Notebook 7 at its default layout (no side panel, about 850 px).
Screenshots of the whole widget go to ``artifacts/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from widget_page import UNEXPLAINED, wait_attr

pytestmark = [pytest.mark.browser, pytest.mark.stan]

FIT_TIMEOUT_MS = 300_000  # first fit on a new machine compiles the Stan model
STEP_TIMEOUT_MS = 90_000
#: The first screen: a 1000 x 900 px window.
SCREEN = {"width": 1000, "height": 900}
#: The widget's width in that window, by front end: JupyterLab with its file browser open,
#: Notebook 7 at its default layout (no side panel).
NARROW_WIDTH = {"lab": (400, 700), "notebook": (700, 1000)}

SETUPS = {
    5: """\
import bbt_widget as bbt
w = bbt.BBTWidget(bbt.datasets.load_base(), dataset="db", seed=1, stan_check=False)
w""",
    16: """\
import bbt_widget as bbt
w = bbt.BBTWidget(bbt.datasets.load_pmlb16(), dataset="db", paired=False, seed=1, stan_check=False)
w""",
    # 50 simulated algorithms on 40 data sets: skill plus noise, one score per data set
    50: """\
import numpy as np, pandas as pd
import bbt_widget as bbt
rng = np.random.default_rng(3)
skill = np.sort(rng.normal(0, 0.05, 50))[::-1]
rows = [(f"d{d}", f"alg{a:02d}", 0.7 + skill[a] + rng.normal(0, 0.03))
        for d in range(40) for a in range(50)]
data = pd.DataFrame(rows, columns=["dataset", "algorithm", "score"])
w = bbt.BBTWidget(
    data, dataset="dataset", algorithm="algorithm", score="score",
    iter_warmup=400, iter_sampling=400, seed=1, stan_check=False,
)
w""",
}


#: Every chart title, subtitle and facet header as [svg index, text, left, top, right, bottom].
_TITLE_BOXES = """() => {
    const out = [];
    [...document.querySelectorAll('.bbt-root svg')].forEach((svg, i) => {
        const texts = svg.querySelectorAll(
            'g[class*="role-title"] text, g[class*="header"] text, '
            + 'g[class*="role-legend-title"] text'
        );
        for (const t of texts) {
            if (t.closest('g.role-axis')) continue; // axis labels of a facet's header
            const r = t.getBoundingClientRect();
            if (r.width > 0 && t.textContent.trim()) {
                out.push([i, t.textContent, r.left, r.top, r.right, r.bottom]);
            }
        }
    });
    return out;
}"""


#: Every drawn colour that stands for something: [svg index, what, fill, stroke]. A mark says
#: what it stands for in its ARIA label ("verdict: better; pair: ...; decision: ..."), a legend
#: entry in its label.
_DRAWN_COLOURS = """() => {
    const svgs = [...document.querySelectorAll('.bbt-root svg')];
    const out = [];
    svgs.forEach((svg, i) => {
        for (const legend of svg.querySelectorAll('g.role-legend')) {
            const labels = legend.querySelectorAll('g.role-legend-label text');
            const symbols = legend.querySelectorAll('g.role-legend-symbol path');
            if (labels.length !== symbols.length) continue; // a gradient legend
            labels.forEach((label, k) => out.push([i, 'legend: ' + label.textContent,
                symbols[k].getAttribute('fill'), symbols[k].getAttribute('stroke')]));
        }
        for (const mark of svg.querySelectorAll('g.role-mark path, g.role-mark rect')) {
            const what = mark.getAttribute('aria-label');
            if (what) out.push([i, what, mark.getAttribute('fill'), mark.getAttribute('stroke')]);
        }
    });
    return out;
}"""

#: The names the charts give a decision (or the region of P(a > b) that argues for it), by
#: the decision they stand for.
_DECISION_NAMES = {
    "better": "better",
    "a better": "better",
    "row better": "better",
    "above ROPE": "better",
    "b better": "worse",
    "column better": "worse",
    "below ROPE": "worse",
    "equivalent": "equivalent",
    "in ROPE": "equivalent",
    "no claim": "no claim",
    "not compared": "not compared",
}
#: The fields of a mark's ARIA label that may hold a decision, the colour's own first.
_DECISION_FIELDS = ("verdict", "decision", "region")


def _hex(colour: str) -> str:
    """``#1B7837`` or ``rgb(27, 120, 55)`` as ``#1b7837``."""
    colour = colour.strip().lower()
    if colour.startswith("rgb("):
        parts = [int(float(v)) for v in colour[4:-1].split(",")[:3]]
        return "#" + "".join(f"{v:02x}" for v in parts)
    return colour


def _colours_by_decision(drawn: list[list[Any]]) -> tuple[dict[str, set[str]], set[str]]:
    """The colours drawn for each decision, and those of every mark that is no decision."""
    by_decision: dict[str, set[str]] = {}
    other: set[str] = set()
    for _, what, fill, stroke in drawn:
        colour = fill if fill not in (None, "none", "transparent") else stroke
        if colour in (None, "none", "transparent"):
            continue
        if what.startswith("legend: "):
            decision = _DECISION_NAMES.get(what.removeprefix("legend: "))
            if decision is None:
                continue  # a legend of something else (a shape, a size)
        else:
            pairs = [part.split(":", 1) for part in what.split("; ") if ":" in part]
            fields = {key.strip(): value.strip() for key, value in pairs}
            names = [fields[f] for f in _DECISION_FIELDS if fields.get(f) in _DECISION_NAMES]
            decision = _DECISION_NAMES[names[0]] if names else None
            if decision is None:
                if not any(f in fields for f in _DECISION_FIELDS):
                    other.add(_hex(colour))
                continue
        by_decision.setdefault(decision, set()).add(_hex(colour))
    return by_decision, other


def _overlaps(boxes: list[list[Any]]) -> list[tuple[str, str]]:
    found = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            if a[0] != b[0]:
                continue  # different views never share pixels
            dx = min(a[4], b[4]) - max(a[2], b[2])
            dy = min(a[5], b[5]) - max(a[3], b[3])
            if dx > 1 and dy > 1:
                found.append((a[1], b[1]))
    return found


#: Every size in JupyterLab; Notebook 7 (another page layout, other widths) at 16.
@pytest.mark.parametrize(
    ("frontend", "n"),
    [("lab", 5), ("lab", 16), ("lab", 50), ("notebook", 16)],
    indirect=["frontend"],
)
def test_layout_leads_with_the_answer_and_fits_a_narrow_notebook(
    n: int,
    frontend: Any,
    browser_context: Any,
    artifacts: Path,
    run_notebook: Any,
    widget_errors: Any,
    soft_checks: Any,
) -> None:
    kind = frontend.kind
    checks = soft_checks
    url = frontend.write_notebook(f"layout{n}.ipynb", [SETUPS[n]])
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"{exc.message} @ {exc.stack}"))
    page.set_viewport_size({"width": 1400, "height": 900})
    run_notebook(page, url, STEP_TIMEOUT_MS)
    page.wait_for_selector(".bbt-root", timeout=STEP_TIMEOUT_MS)
    wait_attr(page, "status", "v === 'done'", FIT_TIMEOUT_MS)
    wait_attr(page, "summaryRendered", "Number(v) > 0", STEP_TIMEOUT_MS)

    # the narrow notebook: 1000 px, in JupyterLab with the file browser open
    page.set_viewport_size(SCREEN)
    if kind == "lab":
        page.evaluate("window.jupyterapp.commands.execute('filebrowser:activate')")
    page.wait_for_timeout(500)
    root = page.locator(".bbt-root")
    width = root.bounding_box()["width"]
    low, high = NARROW_WIDTH[kind]
    assert low < width < high, width
    # the charts reflow to the new width (ResizeObserver), the model checks open
    page.locator(".bbt-checks > summary").click()
    wait_attr(page, "checksRendered", "Number(v) > 0", STEP_TIMEOUT_MS)
    if n == 16:  # Plackett-Luce beside BBT: its P(top k) row was 3,426 px wide
        page.select_option("select.bbt-ranking-model", "both")
        wait_attr(page, "plRendered", "Number(v) > 0", FIT_TIMEOUT_MS)
    page.wait_for_timeout(1500)

    try:
        with checks.check("headline, ranking and decisions within the first screen"):
            _check_answer_first(page, n)
        with checks.check("no chart wider than the widget"):
            _check_widths(page, width)
        with checks.check("a tooltip on every control"):
            assert page.evaluate(UNEXPLAINED) == []
        with checks.check("no chart title drawn over another"):
            boxes = page.evaluate(_TITLE_BOXES)
            assert len(boxes) > 5, boxes
            assert _overlaps(boxes) == [], _overlaps(boxes)
        with checks.check("one colour per decision across the charts"):
            _check_colours(page)
        # from 30 algorithms on the view lists the undecided pairs and the neighbours
        # instead (test_widget_scale_browser.py)
        if 8 < n < 30:
            with checks.check("the pairs of the top-ranked algorithm, a chip for a hidden pair"):
                _check_focus(page, n)
    finally:
        _shoot_whole(page, artifacts / f"layout_{n}_{kind}_narrow_widget.png")
        page.set_viewport_size({"width": 1400, "height": 900})
        if kind == "lab":
            page.evaluate("window.jupyterapp.commands.execute('application:toggle-left-area')")
        page.wait_for_timeout(1000)
        _shoot_whole(page, artifacts / f"layout_{n}_{kind}_wide_widget.png")
    checks.assert_none_failed()
    assert widget_errors(errors) == []
    assert browser_context.blocked == []


#: The narrowest widget tried: a phone-sized notebook, or a side panel.
NARROWEST = 368
#: Smallest readable side (px) of a decision matrix's cell.
MIN_CELL_PX = 9

#: Every legend as [view, its text, left, right, the view's box left, right], and whether
#: any of its labels was cut (an ellipsis).
_LEGEND_BOXES = """() => {
    const out = [];
    for (const svg of document.querySelectorAll('.bbt-root .bbt-charts svg')) {
        const box = svg.closest('.bbt-charts').getBoundingClientRect();
        for (const legend of svg.querySelectorAll('g.role-legend')) {
            const r = legend.getBoundingClientRect();
            if (r.width === 0) continue;
            out.push([svg.closest('.bbt-charts').className, legend.textContent,
                      r.left, r.right, box.left, box.right, legend.textContent.includes('\u2026')]);
        }
    }
    return out;
}"""

#: Width and height of every cell of the decision matrices.
_MATRIX_CELLS = """() => [...document.querySelectorAll(
        ".bbt-summary-charts g.mark-rect path[aria-label*='verdict']")]
    .map((cell) => { const r = cell.getBoundingClientRect(); return [r.width, r.height]; })"""


#: Notebook 7 runs the layout tests; the rest of the behaviour is the same code in JupyterLab.
@pytest.mark.parametrize("frontend", ["lab"], indirect=True)
def test_matrices_and_legends_fit_368_px(
    frontend: Any,
    browser_context: Any,
    artifacts: Path,
    run_notebook: Any,
    widget_errors: Any,
    soft_checks: Any,
) -> None:
    """At 368 px the 16 algorithms' matrices keep readable cells (at least MIN_CELL_PX) and
    every legend is drawn whole inside its view's box: none cut at the box's edge, no label
    cut short (the thresholds' long labels break into lines instead)."""
    checks = soft_checks
    url = frontend.write_notebook("narrowest.ipynb", [SETUPS[16]])
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"{exc.message} @ {exc.stack}"))
    page.set_viewport_size({"width": 1400, "height": 900})
    run_notebook(page, url, STEP_TIMEOUT_MS)
    page.wait_for_selector(".bbt-root", timeout=STEP_TIMEOUT_MS)
    wait_attr(page, "status", "v === 'done'", FIT_TIMEOUT_MS)
    wait_attr(page, "summaryRendered", "Number(v) > 0", STEP_TIMEOUT_MS)
    wait_attr(page, "rendered", "v === 'true'", STEP_TIMEOUT_MS)
    page.evaluate(
        "(w) => { document.querySelector('.bbt-root').parentElement.style.width = w + 'px'; }",
        NARROWEST,
    )
    # reflowed: every view laid out again for its narrower box
    page.wait_for_function(
        """(w) => [...document.querySelectorAll('.bbt-root .bbt-charts')]
            .filter((box) => box.querySelector('svg'))
            .every((box) => box.getBoundingClientRect().width <= w
                && box.querySelector('svg').getBoundingClientRect().width <= w)""",
        arg=NARROWEST,
        timeout=STEP_TIMEOUT_MS,
    )
    page.wait_for_timeout(1500)
    try:
        with checks.check("the widget is 368 px wide"):
            width = page.locator(".bbt-root").bounding_box()["width"]
            assert NARROWEST - 40 < width <= NARROWEST, width
        with checks.check("matrix cells at least 9 px"):
            cells = page.evaluate(_MATRIX_CELLS)
            assert len(cells) >= 2 * 16 * 15, len(cells)  # both matrices, every pair
            assert min(min(c) for c in cells) >= MIN_CELL_PX - 0.5, min(min(c) for c in cells)
        with checks.check("every legend inside its view's box, no label cut"):
            legends = page.evaluate(_LEGEND_BOXES)
            assert any("thresholds" in text for _, text, *_ in legends), legends
            outside = [g for g in legends if g[2] < g[4] - 1 or g[3] > g[5] + 1]
            assert outside == [], outside
            cut = [g[:2] for g in legends if g[6]]
            assert cut == [], cut
    finally:
        _shoot_whole(page, artifacts / f"layout_16_{frontend.kind}_{NARROWEST}px_widget.png")
    checks.assert_none_failed()
    assert widget_errors(errors) == []
    assert browser_context.blocked == []


def _check_answer_first(page: Any, n: int) -> None:
    """The headline, the ranking and the decisions within the first screen, above the
    pairwise intervals, and those above the model checks."""
    headline = page.locator(".bbt-headline")
    assert headline.is_visible()
    text = headline.inner_text()
    # the default rule is "auto": strong beyond 10 algorithms (paper Sec. 5.6), else weak
    rule = "strong" if n > 10 else "weak"
    assert f"pairs decided under the {rule} rule" in text, text
    top = page.locator(".bbt-root").bounding_box()["y"]
    ranking = page.locator(".bbt-summary-charts svg").first.bounding_box()
    pairs = page.locator(".bbt-main-charts svg").first.bounding_box()
    checks = page.locator(".bbt-checks-charts svg").first.bounding_box()
    assert headline.bounding_box()["y"] - top < SCREEN["height"]
    assert ranking["y"] - top < SCREEN["height"] - 100, (ranking, top)
    assert headline.bounding_box()["y"] < ranking["y"] < pairs["y"] < checks["y"]


def _check_widths(page: Any, width: float) -> None:
    widths = page.evaluate(
        "() => [...document.querySelectorAll('.bbt-root svg')].map((s) => ["
        "s.closest('.bbt-charts').className + ' level ' + s.closest('.bbt-charts').dataset.level,"
        " s.getBoundingClientRect().width])"
    )
    assert widths and all(w <= width + 1 for _, w in widths), (width, widths)


def _check_colours(page: Any) -> None:
    """One colour per decision in every chart (legends and marks), the claims' colours apart,
    and nothing that is not a decision (ranking, counts, win shares) in a claim's colour."""
    by_decision, other = _colours_by_decision(page.evaluate(_DRAWN_COLOURS))
    assert {"better", "equivalent", "no claim"} <= set(by_decision), by_decision
    assert all(len(colours) == 1 for colours in by_decision.values()), by_decision
    claims = {
        next(iter(by_decision[k])) for k in ("better", "worse", "equivalent") if k in by_decision
    }
    assert len(claims) == len({"better", "worse", "equivalent"} & set(by_decision)), by_decision
    assert not claims & other, (claims & other, by_decision)


def _check_focus(page: Any, n: int) -> None:
    """The pairs of the top-ranked algorithm, the choice shown in the control; a highlighted
    pair that they do not include gets a chip saying so."""
    focus = page.locator("select[data-trait=focus]").input_value()
    assert focus, "no algorithm chosen in 'Show pairs of'"
    dots = ".bbt-main-charts svg g.mark-symbol.role-mark path"
    assert page.locator(dots).count() == n - 1
    others = page.evaluate(
        "(focus) => [...document.querySelectorAll('select[data-trait=focus] option')]"
        ".map((o) => o.value).filter((v) => v && v !== focus).slice(0, 2)",
        focus,
    )
    chip = page.locator(".bbt-chip")
    assert not chip.is_visible()
    _run_in_kernel(page, f"w.selected_pair = bbt.charts.pair_key({others[0]!r}, {others[1]!r})")
    chip.wait_for(state="visible", timeout=STEP_TIMEOUT_MS)
    text = chip.inner_text()
    assert text.startswith("highlighted: ") and "(not shown)" in text, text
    assert all(name in text for name in others), (text, others)  # in the key's order
    assert page.locator(".bbt-chip-clear").get_attribute("title")
    page.locator(".bbt-chip-clear").click()
    chip.wait_for(state="hidden", timeout=STEP_TIMEOUT_MS)


def _run_in_kernel(page: Any, code: str) -> None:
    """Run code in the notebook's kernel (as a cell would, without adding one)."""
    page.evaluate(
        """(code) => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel
            .requestExecute({ code }).done""",
        code,
    )


def _shoot_whole(page: Any, path: Path) -> None:
    """The whole widget: the window made as tall as it, JupyterLab then scrolls no more."""
    height = int(page.locator(".bbt-root").bounding_box()["height"]) + 400
    page.set_viewport_size({"width": page.viewport_size["width"], "height": height})
    page.wait_for_timeout(800)
    page.locator(".bbt-root").screenshot(path=str(path))
