"""The first screen's views are linked and say what they show, in real JupyterLab and
Notebook 7 with headless Chromium: a decision-matrix cell's tooltip is in words (no column
name), a click on a cell highlights its pair in the interval view and outlines it in the
matrices, a change of the rule lists the claims it flipped, and the "More data sets" view,
opened, forecasts the highlighted pair under both rules and follows it to another pair. Two
algorithms have hostile names: they are shown as text, never as HTML."""

from __future__ import annotations

import ast
import json
import time
from typing import Any

import pytest
from widget_page import data_attr, wait_attr

pytestmark = [pytest.mark.browser]

FIT_TIMEOUT_MS = 300_000
STEP_TIMEOUT_MS = 60_000

HOSTILE = "<img src=x onerror=alert(1)>"
RTL = "\u202eevil"

CELLS = [
    f"""\
import bbt_widget as bbt
data = bbt.datasets.load_base().rename(columns={{"dt": {HOSTILE!r}, "lda": {RTL!r}}})
w = bbt.BBTWidget(data, dataset="db", seed=1, stan_check=False, interpretation="weak")
w"""
]

#: The cells of the decision matrices: paths of rect marks (as the ranking's P(best) bars are)
#: whose description, which Vega-Lite makes of the tooltip, has a verdict.
_CELLS = ".bbt-summary-charts g.mark-rect path[aria-label*='verdict']"

#: A Python expression evaluated in the notebook's kernel, as its repr.
_KERNEL_VALUE = """async (expr) => {
    const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
    const reply = await kernel.requestExecute({ code: '', user_expressions: { v: expr } }).done;
    const v = reply.content.user_expressions.v;
    return v.status === 'ok' ? v.data['text/plain'] : `error: ${v.ename}: ${v.evalue}`;
}"""


def _kernel_value(page: Any, expr: str, *, until: Any = bool, timeout_s: float = 30.0) -> str:
    """``expr``'s repr in the kernel, once ``until`` holds for it (or the time is up)."""
    deadline = time.monotonic() + timeout_s
    value = str(page.evaluate(_KERNEL_VALUE, expr))
    while not until(value) and time.monotonic() < deadline:
        time.sleep(0.25)
        value = str(page.evaluate(_KERNEL_VALUE, expr))
    return value


#: The "More data sets" view shows a forecast drawn for the pair holding ``name``, in step.
_FORECAST_SHOWN = """([name, drawings]) => {
    const section = document.querySelector('.bbt-more-data');
    const el = section.closest('.bbt-root').parentElement;
    return (section.dataset.pair || '').includes(name) && section.dataset.behind === 'false'
        && Number(el.dataset.moreDataRendered || 0) > drawings
        && section.querySelector('.bbt-more-data-chart svg') !== null;
}"""


def _forecast_of(page: Any, a: str, b: str) -> list[str]:
    """Highlight ``(a, b)`` from the kernel; the view's sentences once its forecast is drawn
    (marked behind until then)."""
    drawn = int(data_attr(page, "moreDataRendered") or 0)
    page.evaluate(
        """(code) => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel
            .requestExecute({ code }).done""",
        f"w.selected_pair = bbt.charts.pair_key({a!r}, {b!r})",
    )
    if drawn:  # a forecast on screen: marked behind from the change until the new one
        page.wait_for_function(
            "() => document.querySelector('.bbt-more-data').dataset.behind === 'true'",
            timeout=STEP_TIMEOUT_MS,
        )
    page.wait_for_function(_FORECAST_SHOWN, arg=[b, drawn], timeout=STEP_TIMEOUT_MS)
    return list(page.locator(".bbt-more-data-sentences li").all_inner_texts())


def _hover(page: Any, locator: Any) -> str:
    """The tooltip's text once the mouse rests on ``locator``."""
    locator.scroll_into_view_if_needed()
    box = locator.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    tip = page.locator("#vg-tooltip-element")
    tip.wait_for(state="visible", timeout=STEP_TIMEOUT_MS)
    return tip.inner_text()


#: Notebook 7 runs the layout tests; the rest of the behaviour is the same code in JupyterLab.
@pytest.mark.parametrize("frontend", ["lab"], indirect=True)
def test_matrix_cells_tell_and_select_and_changes_are_listed(
    frontend: Any, browser_context: Any, run_notebook: Any, widget_errors: Any, soft_checks: Any
) -> None:
    checks = soft_checks
    url = frontend.write_notebook("linked.ipynb", CELLS)
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"{exc.message} @ {exc.stack}"))
    run_notebook(page, url, STEP_TIMEOUT_MS)
    page.wait_for_selector(".bbt-root", timeout=STEP_TIMEOUT_MS)
    wait_attr(page, "status", "v === 'done'", FIT_TIMEOUT_MS)
    wait_attr(page, "rendered", "v === 'true'", STEP_TIMEOUT_MS)
    wait_attr(page, "summaryRendered", "Number(v) > 0", STEP_TIMEOUT_MS)
    page.locator(".bbt-summary-charts").scroll_into_view_if_needed()
    cells = page.locator(_CELLS)
    assert cells.count() > 0

    # a cell of the hostile pair: the tooltips name it, so look for the one that does
    with checks.check("a matrix cell's tooltip is in words, names as text"):
        text = ""
        for i in range(cells.count()):
            text = _hover(page, cells.nth(i))
            if "evil" in text and "img" in text:
                break
        for words in (
            "pair",
            "P(a > b) with its HDI",
            "probability that P(a > b) > 0.5",
            "probability that P(a > b) is in the ROPE",
            "rule",
            "weak (0.95 rule)",
            "verdict",
        ):
            assert words in text, text
        for raw in ("above.50", "above_50", "in.rope", "in_rope", "p_text", "verdict_text"):
            assert raw not in text, text
        assert HOSTILE in text, text  # shown as the name it is
        assert page.locator("img[src=x]").count() == 0

    with checks.check("a click on a cell highlights its pair everywhere"):
        cell = cells.nth(0)
        cell.scroll_into_view_if_needed()
        box = cell.bounding_box()
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        key = ast.literal_eval(
            _kernel_value(page, "w.selected_pair", until=lambda v: v not in ("''", '""'))
        )
        assert key, "no pair selected"
        assert len(json.loads(key)) == 2, key  # a pair key: a JSON array of the two names
        # the interval view dims every other pair
        page.wait_for_function(
            """() => document.querySelectorAll(
                '.bbt-main-charts path[opacity="0.2"], .bbt-main-charts path[fill-opacity="0.2"]'
            ).length > 0""",
            timeout=STEP_TIMEOUT_MS,
        )
        # both orientations of the pair under both rules: four outlined cells
        page.wait_for_function(
            f"""() => [...document.querySelectorAll({json.dumps(_CELLS)})]
                .filter((p) => p.getAttribute('stroke-width') === '2.5').length === 4""",
            timeout=STEP_TIMEOUT_MS,
        )

    with checks.check("a click on an algorithm's point shows that algorithm's pairs"):
        point = page.locator(".bbt-summary-charts g.mark-symbol path[aria-label*='algorithm']")
        assert point.count() > 0
        name = point.first.get_attribute("aria-label") or ""
        point.first.scroll_into_view_if_needed()
        box = point.first.bounding_box()
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        focus = ast.literal_eval(
            _kernel_value(page, "w.focus", until=lambda v: v not in ("''", '""'))
        )
        assert focus and focus in name, (focus, name)
        page.evaluate(
            """() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel
                .requestExecute({ code: "w.focus = ''" }).done"""
        )

    with checks.check("a change of the rule lists the claims it flipped"):
        expected = _kernel_value(
            page,
            "int((w.summary['weak'] != w.summary['strong']).sum())",
        )
        page.locator("select[data-trait=interpretation]").select_option("strong")
        note = page.locator(".bbt-claims-note")
        if int(expected) > 0:
            note.wait_for(state="visible", timeout=STEP_TIMEOUT_MS)
            text = note.inner_text()
            noun = "claim" if int(expected) == 1 else "claims"
            assert text.startswith(f"{expected} {noun} changed: "), text
            assert "(was " in text and " now " in text, text
            assert data_attr(page, "claimsChanged") == expected
            assert "bbt-flash" in (note.get_attribute("class") or "")
            # the flipped pairs outlined in the matrices for a few seconds
            page.wait_for_function(
                f"""() => [...document.querySelectorAll({json.dumps(_CELLS)})]
                    .some((p) => p.getAttribute('stroke') === '#f08c00')""",
                timeout=STEP_TIMEOUT_MS,
            )
            assert page.locator("img[src=x]").count() == 0
        else:
            assert not note.is_visible()

    with checks.check("the highlighted pair's forecast: both rules, names as text, follows it"):
        section = page.locator(".bbt-more-data")
        assert section.get_attribute("open") is None  # closed: nothing computed until opened
        section.locator("summary").click()
        sentences = _forecast_of(page, HOSTILE, RTL)
        view = ast.literal_eval(_kernel_value(page, "w.more_data_view"))
        assert sentences == view["sentences"] and len(sentences) == 2, (sentences, view)
        assert "weak rule" in sentences[0] and "strong rule" in sentences[1], sentences
        heading = section.locator(".bbt-more-data-heading")
        assert heading.locator("bdi").count() == 2
        assert HOSTILE in heading.inner_text()
        assert page.locator("img[src=x]").count() == 0
        # a line per rule of the one pair: the legend names the rules
        legend = section.locator(".bbt-more-data-chart g.role-legend").all_text_contents()
        assert any("weak" in t and "strong" in t for t in legend), legend
        other = _forecast_of(page, "lgbm", "xgb")
        assert other != sentences and all("lgbm" in s and "xgb" in s for s in other), other

    page.close()
    assert not widget_errors(errors), errors
    checks.assert_none_failed()
