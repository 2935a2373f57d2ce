"""Every chart of the widget has a save menu (SVG, PNG) that works with the network cut, in
real JupyterLab and Notebook 7 with headless Chromium: the menu offers the two exports and
nothing else (no "Open in Vega Editor", which posts the spec to an outside site), and each
gives the chart as drawn, made in the page. "Settings as code" shows ``w.code()``."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from widget_page import wait_attr

pytestmark = [pytest.mark.browser, pytest.mark.stan]

FIT_TIMEOUT_MS = 300_000
STEP_TIMEOUT_MS = 90_000

SETUP = """\
import bbt_widget as bbt
w = bbt.BBTWidget(bbt.datasets.load_base(), dataset="db", seed=1, stan_check=False)
w"""

#: Per drawn chart: its box's class, its menu button's title and the menu's entries.
_MENUS = """() => [...document.querySelectorAll('.bbt-root .vega-embed')]
    .filter((el) => el.querySelector('svg') && el.offsetParent !== null)
    .map((el) => {
        const button = el.querySelector(':scope > details > summary');
        return {
            box: el.closest('.bbt-charts')?.className ?? el.className,
            title: button ? button.title : null,
            entries: [...el.querySelectorAll('.vega-actions a')].map((a) => a.textContent),
            links: [...el.querySelectorAll('.vega-actions a')].map((a) => a.getAttribute('href')),
        };
    })"""

#: The file an export entry gives: press it (vega-embed makes the file on mousedown) and read
#: what it then points to, a URL of the page's own (``data:``, or ``blob:`` for an object made
#: in the page), as base64.
_SAVED = """async ([index, entry]) => {
    const charts = [...document.querySelectorAll('.bbt-root .vega-embed')]
        .filter((el) => el.querySelector('svg') && el.offsetParent !== null);
    const link = [...charts[index].querySelectorAll('.vega-actions a')]
        .find((a) => a.textContent === entry);
    link.dispatchEvent(new MouseEvent('mousedown', { bubbles: true }));
    const made = () => link.href.startsWith('data:') || link.href.startsWith('blob:');
    for (let i = 0; i < 100 && !made(); i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (!made()) return { href: link.href, download: link.download, base64: '' };
    const bytes = new Uint8Array(await (await fetch(link.href)).arrayBuffer());
    let text = '';
    for (const b of bytes) text += String.fromCharCode(b);
    return { href: link.href, download: link.download, base64: btoa(text) };
}"""


#: Notebook 7 runs the layout tests; the rest of the behaviour is the same code in JupyterLab.
@pytest.mark.parametrize("frontend", ["lab"], indirect=True)
def test_every_chart_saves_as_svg_and_png_offline(
    frontend: Any, browser_context: Any, run_notebook: Any, widget_errors: Any, soft_checks: Any
) -> None:
    checks = soft_checks
    url = frontend.write_notebook("save.ipynb", [SETUP])
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"{exc.message} @ {exc.stack}"))
    run_notebook(page, url, STEP_TIMEOUT_MS)
    page.wait_for_selector(".bbt-root", timeout=STEP_TIMEOUT_MS)
    wait_attr(page, "status", "v === 'done'", FIT_TIMEOUT_MS)
    wait_attr(page, "summaryRendered", "Number(v) > 0", STEP_TIMEOUT_MS)
    page.locator(".bbt-checks > summary").click()  # the model checks' charts too
    wait_attr(page, "checksRendered", "Number(v) > 0", STEP_TIMEOUT_MS)
    page.wait_for_timeout(500)

    menus = page.evaluate(_MENUS)
    boxes = " ".join(m["box"] for m in menus)
    with checks.check("the summary, pairwise and model-check charts are drawn"):
        for box in ("bbt-summary-charts", "bbt-main-charts", "bbt-checks-charts"):
            assert box in boxes, boxes
    with checks.check("each chart offers SVG and PNG only, its button titled"):
        for menu in menus:
            assert menu["entries"] == ["Save as SVG", "Save as PNG"], menu
            assert menu["title"] and "SVG" in menu["title"], menu
            assert all(link == "#" for link in menu["links"]), menu  # nothing off the page
    for index, menu in enumerate(menus):
        with checks.check(f"{menu['box']}: the SVG is the chart as drawn"):
            saved = page.evaluate(_SAVED, [index, "Save as SVG"])
            assert saved["base64"], saved["href"][:80]
            assert saved["download"].endswith(".svg")
            svg = base64.b64decode(saved["base64"]).decode("utf-8")
            assert "<svg" in svg and "<text" in svg, svg[:200]
        with checks.check(f"{menu['box']}: the PNG is an image"):
            saved = page.evaluate(_SAVED, [index, "Save as PNG"])
            assert saved["base64"], saved["href"][:80]
            assert saved["download"].endswith(".png")
            png = base64.b64decode(saved["base64"])
            assert png.startswith(b"\x89PNG") and len(png) > 1000
    with checks.check("'Settings as code' shows the bbt.fit call of the view"):
        page.locator(".bbt-code > summary").click()
        code = page.locator(".bbt-code-text")
        page.wait_for_function(
            "() => document.querySelector('.bbt-code-text').textContent.includes('bbt.fit(')",
            timeout=STEP_TIMEOUT_MS,
        )
        assert "result = bbt.fit(df, dataset='db'" in code.inner_text(), code.inner_text()
        page.locator("select[data-trait=interpretation]").select_option("strong")
        page.wait_for_function(
            "() => document.querySelector('.bbt-code-text').textContent.includes('strong rule')",
            timeout=STEP_TIMEOUT_MS,
        )
        assert page.locator(".bbt-code-copy").get_attribute("title")
    checks.assert_none_failed()
    assert widget_errors(errors) == []
    assert browser_context.blocked == []
