"""The widget at 50 algorithms, and what it teaches, in real JupyterLab and Notebook 7 with
headless Chromium: the decision matrices' labels are at least 9 px, the pairwise view opens
on the undecided pairs and the ranking's neighbours a page at a time (never the 1,225 pairs
at once), its filters and search list other pairs, the "?" glossary opens from the keyboard
and cites the paper, and the highlighted pair's panel shows its wins, losses and ties per data
set as the kernel counts them, why each data set went as it did and the tie policy's sums. Two
algorithms and a data set have hostile names: text only.

The 50 algorithms run in JupyterLab only: what depends on the count (the pages of pairs, the
labels' size) is the widget's own drawing, the same in both front ends. Notebook 7 runs every
other check on 12 algorithms (a fit of seconds): the matrices, the search, the glossary from
the keyboard, the tooltips and the pair panel of the hostile names, in its own page and key
handling."""

from __future__ import annotations

import ast
import json
import time
from pathlib import Path
from typing import Any

import pytest
from widget_page import wait_attr

pytestmark = [pytest.mark.browser]

FIT_TIMEOUT_MS = 300_000
STEP_TIMEOUT_MS = 60_000

HOSTILE = "<img src=x onerror=alert(1)>"
RTL = "\u202eevil"

#: JupyterLab's algorithms: 1,225 pairs, opened on a page of undecided pairs and neighbours.
MANY = 50
#: Notebook 7's fewer algorithms.
FEW = 12
#: Short chains: what is checked is drawn from the fit's frames whatever its precision (the
#: default chains take minutes at 50 algorithms; the warning of failed diagnostics that the
#: short ones bring changes none of the parts checked here).
SAMPLER = "chains=2, iter_warmup=200, iter_sampling=200"


def _cells(n_algorithms: int) -> list[str]:
    """``n_algorithms`` simulated algorithms on 30 data sets of 3 folds (skill plus noise,
    simulated.py), the local ROPE on; two algorithms and a data set with hostile names."""
    return [
        f"""\
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
import bbt_widget as bbt
from simulated import simulated_results
data = simulated_results({n_algorithms}, 30, 3).replace(
    {{"algorithm": {{"alg10": {HOSTILE!r}, "alg11": {RTL!r}}}, "dataset": {{"d0": {HOSTILE!r}}}}}
)
w = bbt.BBTWidget(
    data, dataset="dataset", algorithm="algorithm", fold="fold", score="score",
    d_min=0.4, engine="numpy", seed=1, stan_check=False, {SAMPLER},
)
w"""
    ]


#: A Python expression evaluated in the notebook's kernel, as its repr.
_KERNEL_VALUE = """async (expr) => {
    const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
    const reply = await kernel.requestExecute({ code: '', user_expressions: { v: expr } }).done;
    const v = reply.content.user_expressions.v;
    return v.status === 'ok' ? v.data['text/plain'] : `error: ${v.ename}: ${v.evalue}`;
}"""

#: Font size (px) and drawn height of every axis label of the decision matrices.
_MATRIX_LABELS = """() => {
    const svg = document.querySelector('.bbt-summary-charts svg');
    const out = [];
    for (const cell of svg.querySelectorAll("g.mark-rect path[aria-label*='verdict']")) {
        const scope = cell.closest('g.cell') || svg;
        for (const t of scope.querySelectorAll('g.role-axis-label text')) {
            out.push([parseFloat(getComputedStyle(t).fontSize),
                      t.getBoundingClientRect().height]);
        }
        break;
    }
    return out;
}"""

#: The pairs drawn in the interval view: its y axis labels, and the view's height.
_PAIR_ROWS = """() => {
    const svg = document.querySelector('.bbt-main-charts svg');
    if (!svg) return [0, 0];
    const labels = new Set(); // the pairs' labels ("a > b"), not the numbers of an x axis
    for (const t of svg.querySelectorAll('g.role-axis-label text')) {
        if (t.textContent.includes(' > ')) labels.add(t.textContent);
    }
    return [labels.size, svg.getBoundingClientRect().height];
}"""

#: The controls of this module's parts without a tooltip.
_UNTITLED = """() => [...document.querySelectorAll(
        '.bbt-pair-filters select, .bbt-pair-filters input, .bbt-pair-filters button, '
        + '.bbt-glossary-button, .bbt-glossary button, .bbt-pair-panel summary')]
    .filter((el) => el.offsetParent !== null && !el.title)
    .map((el) => el.outerHTML.slice(0, 120))"""


def _kernel_value(page: Any, expr: str, *, until: Any = bool, timeout_s: float = 30.0) -> str:
    """``expr``'s repr in the kernel, once ``until`` holds for it (or the time is up)."""
    deadline = time.monotonic() + timeout_s
    value = str(page.evaluate(_KERNEL_VALUE, expr))
    while not until(value) and time.monotonic() < deadline:
        time.sleep(0.25)
        value = str(page.evaluate(_KERNEL_VALUE, expr))
    return value


def _run(page: Any, code: str) -> None:
    """Run ``code`` in the notebook's kernel (no output cell)."""
    page.evaluate(
        """async (code) => {
            const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
            await kernel.requestExecute({ code }).done;
        }""",
        code,
    )


def _pair_count(page: Any) -> str:
    return page.locator(".bbt-pair-count").inner_text()


@pytest.mark.parametrize(
    ("frontend", "n_algorithms"), [("lab", MANY), ("notebook", FEW)], indirect=["frontend"]
)
def test_fifty_algorithms_readable_filtered_and_taught(
    n_algorithms: int,
    frontend: Any,
    browser_context: Any,
    run_notebook: Any,
    widget_errors: Any,
    soft_checks: Any,
    artifacts: Path,
) -> None:
    checks = soft_checks
    url = frontend.write_notebook("scale.ipynb", _cells(n_algorithms))
    page = browser_context.new_page()
    page.set_viewport_size({"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"{exc.message} @ {exc.stack}"))
    run_notebook(page, url, STEP_TIMEOUT_MS)
    page.wait_for_selector(".bbt-root", timeout=STEP_TIMEOUT_MS)
    wait_attr(page, "status", "v === 'done'", FIT_TIMEOUT_MS)
    wait_attr(page, "rendered", "v === 'true'", STEP_TIMEOUT_MS)
    wait_attr(page, "summaryRendered", "Number(v) > 0", STEP_TIMEOUT_MS)

    with checks.check(f"matrix labels are at least 9 px at {n_algorithms} algorithms"):
        labels = page.evaluate(_MATRIX_LABELS)
        assert len(labels) >= n_algorithms, labels[:5]
        assert min(size for size, _ in labels) >= 9, sorted(labels)[:5]
        assert min(height for _, height in labels) >= 9, sorted(labels, key=lambda x: x[1])[:5]

    # the pages of pairs: the widget's own drawing at many algorithms (fewer open on all)
    if n_algorithms >= MANY:
        with checks.check("the pair view opens on the undecided pairs and neighbours, a page"):
            assert page.locator(".bbt-pair-filter").input_value() == "undecided_neighbours"
            assert _kernel_value(page, "w.focus") in ("''", '""')  # every algorithm's pairs
            rows, height = page.evaluate(_PAIR_ROWS)
            assert 0 < rows <= 41, rows  # a page of 40, and the highlighted pair
            assert height < 2500, height
            assert "1225 in all" in _pair_count(page), _pair_count(page)

        with checks.check("'all pairs' is capped at a page, and the pages turn"):
            page.locator(".bbt-pair-filter").select_option("all")
            page.wait_for_function(
                """() => document.querySelector('.bbt-pair-count').textContent
                    .includes('1-40 of 1225')""",
                timeout=STEP_TIMEOUT_MS,
            )
            rows, height = page.evaluate(_PAIR_ROWS)
            assert 0 < rows <= 41 and height < 2500, (rows, height)
            page.locator(".bbt-pair-next").click()
            page.wait_for_function(
                "() => document.querySelector('.bbt-pair-count').textContent.includes('41-80')",
                timeout=STEP_TIMEOUT_MS,
            )
            assert ast.literal_eval(_kernel_value(page, "w.pair_page")) == 1

    with checks.check("a search by name lists that pair"):
        # (the best algorithm and its neighbour: drawn at 12 algorithms too, where the
        # strong rule's focus on the best lists that one's pairs only)
        page.locator(".bbt-pair-search").fill("alg00 alg01")
        page.wait_for_function(
            "() => document.querySelector('.bbt-pair-count').textContent.includes('1-1 of 1 ')",
            timeout=STEP_TIMEOUT_MS,
        )
        page.wait_for_function(
            """() => [...document.querySelectorAll('.bbt-main-charts g.role-axis-label text')]
                .some((t) => t.textContent.includes('alg00') && t.textContent.includes('alg01'))""",
            timeout=STEP_TIMEOUT_MS,
        )

    with checks.check("the glossary opens from the keyboard and cites the paper"):
        button = page.locator(".bbt-glossary-button")
        button.focus()
        page.keyboard.press("Enter")
        panel = page.locator(".bbt-glossary")
        panel.wait_for(state="visible", timeout=STEP_TIMEOUT_MS)
        terms = panel.locator("dt").all_inner_texts()
        for term in ("P(a > b)", "HDI", "ROPE", "Local ROPE", "Weak rule", "Strong rule", "Ties"):
            assert term in terms, terms
        cites = panel.locator("dd cite").all_inner_texts()
        assert len(cites) == len(terms) and all("Wainer" in c and "Sec." in c for c in cites)
        page.keyboard.press("Escape")
        panel.wait_for(state="hidden", timeout=STEP_TIMEOUT_MS)

    with checks.check("every new control has a tooltip"):
        assert page.evaluate(_UNTITLED) == []

    with checks.check("the pair panel shows the highlighted pair's counts per data set"):
        _run(page, f"w.selected_pair = bbt.charts.pair_key({HOSTILE!r}, {RTL!r})")
        panel = page.locator(".bbt-pair-panel")
        page.wait_for_function(
            f"""() => (document.querySelector('.bbt-pair-panel').dataset.pair || '')
                .includes({json.dumps(RTL)})""",
            timeout=STEP_TIMEOUT_MS,
        )
        expected = ast.literal_eval(_kernel_value(page, "w.pair_panel"))
        for name in ("before", "after", "model"):
            counts = expected[name]
            cells = panel.locator(
                f".bbt-pair-totals tr:has(th:text-is({json.dumps(_ROW_NAMES[name])})) td"
            ).all_inner_texts()
            assert cells == [str(counts["a"]), str(counts["b"]), str(counts["ties"])], (
                name,
                cells,
                counts,
            )
        rows = panel.locator(".bbt-pair-datasets tr")
        assert rows.count() == 1 + len(expected["rows"])  # a header, then each data set
        new_ties = sum(r["new_tie"] for r in expected["rows"])
        assert panel.locator("tr.bbt-new-tie").count() == new_ties
        assert "became ties" in panel.locator(".bbt-pair-panel-note").inner_text()
        # why each data set went as it did, and the tie policy's sums, as the kernel says
        reasons = panel.locator(".bbt-pair-datasets td.bbt-pair-reason").all_inner_texts()
        assert reasons == [r["reason"] for r in expected["rows"]], reasons
        assert any(r.endswith("\u2192 tie") for r in reasons), reasons
        sums = panel.locator(".bbt-pair-arithmetic").inner_text()
        assert sums == expected["arithmetic"] and "ties \u2192" in sums, sums
        # the hostile names are text: no image made of them, the override isolated
        assert page.locator("img[src=x]").count() == 0
        heading = panel.locator(".bbt-pair-panel-heading")
        assert HOSTILE in heading.inner_text()
        assert heading.locator("bdi").count() == 2
        named = page.evaluate(
            """(name) => [...document.querySelectorAll('.bbt-pair-datasets td:first-child')]
                .filter((td) => td.textContent === name).length""",
            HOSTILE,
        )
        assert named == 1, named
        panel.screenshot(path=str(artifacts / f"pair_panel_{frontend.kind}.png"))

    checks.assert_none_failed()
    assert not widget_errors(errors), errors


#: The totals table's row names, by the panel's key.
_ROW_NAMES = {
    "before": "on the means",
    "after": "after the local ROPE",
    "model": "given to the model",
}
