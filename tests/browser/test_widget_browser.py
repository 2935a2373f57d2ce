"""The widget in real JupyterLab and headless Chromium, with the network cut.

One notebook, one kernel, real Stan fits (PyStan compiles the model once per machine, so the
first run may spend a minute compiling). Screenshots go to ``artifacts/``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.stan]

FIT_TIMEOUT_MS = 300_000  # first fit on a new machine compiles the Stan model
STEP_TIMEOUT_MS = 60_000

SETUP = """\
import bbt_widget as bbt
w = bbt.BBTWidget(bbt.datasets.load_base(), dataset="db", seed=1)
w"""


def _widget(page: Any) -> Any:
    # anywidget renders into the element it is given; the front end marks it with data-*
    return page.locator(".bbt-root").locator("xpath=..")


def _data(page: Any, name: str) -> str:
    value = _widget(page).get_attribute(f"data-{name}")
    return value or ""


def _wait_attr(page: Any, name: str, predicate: str, timeout: int) -> None:
    """Wait until data-<name> of the widget element satisfies a JS predicate on ``v``."""
    page.wait_for_function(
        f"""() => {{
            const root = document.querySelector('.bbt-root');
            if (!root) return false;
            const v = root.parentElement.dataset['{name}'] ?? '';
            return {predicate};
        }}""",
        timeout=timeout,
    )


def _shoot(page: Any, artifacts: Path, name: str) -> None:
    """The page as seen, and the whole widget (taller than the window) on its own."""
    page.screenshot(path=str(artifacts / f"browser_{name}.png"))
    page.locator(".bbt-root").screenshot(path=str(artifacts / f"browser_{name}_widget.png"))


def _marks(page: Any) -> int:
    return page.locator(".bbt-vega svg .role-mark").count()


def _open_and_run(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_selector(".jp-Notebook", timeout=STEP_TIMEOUT_MS)
    # the kernel must be up before "run all", or the first cell would wait on a dialog
    page.wait_for_function(
        """() => {
            const app = window.jupyterapp;
            const panel = app && app.shell.currentWidget;
            const kernel = panel && panel.sessionContext && panel.sessionContext.session
                && panel.sessionContext.session.kernel;
            return kernel && kernel.connectionStatus === 'connected' && kernel.status === 'idle';
        }""",
        timeout=STEP_TIMEOUT_MS,
    )
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")


def test_widget_renders_refits_and_resummarises_offline(
    lab: Any, browser_context: Any, artifacts: Path
) -> None:
    url = lab.write_notebook("widget.ipynb", [SETUP])
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    _open_and_run(page, url)
    page.wait_for_selector(".bbt-root", timeout=STEP_TIMEOUT_MS)
    _wait_attr(page, "status", "v === 'done'", FIT_TIMEOUT_MS)
    _wait_attr(page, "rendered", "v === 'true'", STEP_TIMEOUT_MS)

    # 1. the charts drew: vega marks of every chart are in the SVG
    assert _marks(page) > 10
    for mark in ("mark-rule", "mark-symbol", "mark-rect", "mark-text"):
        assert page.locator(f".bbt-vega svg g.{mark}").count() > 0, mark
    assert page.locator(".bbt-badge").inner_text().startswith(("diagnostics fine", "check"))
    assert _data(page, "fits") == "1"
    _shoot(page, artifacts, "01_initial")

    # 2. the tie policy refits (a second Stan fit) and redraws
    updates = int(_data(page, "dataUpdates") or 0)
    embeds = int(_data(page, "embeds") or 0)
    page.select_option("select[data-trait=ties]", "davidson")
    _wait_attr(page, "fits", "v === '2'", FIT_TIMEOUT_MS)
    _wait_attr(page, "status", "v === 'done'", STEP_TIMEOUT_MS)
    _wait_attr(page, "dataUpdates", f"Number(v) > {updates}", STEP_TIMEOUT_MS)
    # Davidson also checks the ties: the coverage table grows a "ties" column
    page.wait_for_function(
        """() => [...document.querySelectorAll('.bbt-vega svg text')]
                .some((t) => t.textContent === 'ties')""",
        timeout=STEP_TIMEOUT_MS,
    )
    assert int(_data(page, "embeds") or 0) == embeds  # same spec: the live view was updated
    _shoot(page, artifacts, "02_davidson")

    # 3. the ROPE only re-summarises: redraw, no fit
    updates = int(_data(page, "dataUpdates") or 0)
    band_before = _rope_band_width(page)
    rope_low = page.locator("input[data-trait=rope_low]")
    rope_low.fill("0.3")
    rope_low.press("Tab")
    _wait_attr(page, "dataUpdates", f"Number(v) > {updates}", STEP_TIMEOUT_MS)
    assert _data(page, "fits") == "2"
    page.wait_for_function(
        f"() => {{ const r = document.querySelector('.bbt-vega svg g.mark-rect path');"
        f" return r && r.getBoundingClientRect().width > {band_before + 1}; }}",
        timeout=STEP_TIMEOUT_MS,
    )
    _shoot(page, artifacts, "03_rope")

    # 4. an invalid value: inline message, last good charts kept, still no fit
    marks = _marks(page)
    rope_low.fill("0.8")
    rope_low.press("Tab")
    message = page.locator(".bbt-message")
    message.wait_for(state="visible", timeout=STEP_TIMEOUT_MS)
    assert re.search(r"rope low must be below rope high", message.inner_text())
    assert _marks(page) == marks and _data(page, "fits") == "2"
    _shoot(page, artifacts, "04_invalid")

    # 5. clicking a pair highlights it (dims the others) in every chart
    point = page.locator(".bbt-vega svg g.mark-symbol.role-mark path").first
    point.click()
    page.wait_for_function(
        """() => [...document.querySelectorAll('.bbt-vega svg g.mark-rect path')]
                .some((p) => Number(p.getAttribute('opacity') ?? p.style.opacity ?? 1) < 0.5)""",
        timeout=STEP_TIMEOUT_MS,
    )
    _shoot(page, artifacts, "05_linked")

    # 6. choosing an algorithm shows only its pairs (4 of the 10), still without a fit
    page.select_option("select[data-trait=focus]", "xgb")
    page.wait_for_function(
        "() => document.querySelectorAll("
        "'.bbt-vega svg g.mark-symbol.role-mark path').length === 4",
        timeout=STEP_TIMEOUT_MS,
    )
    assert _data(page, "fits") == "2"
    _shoot(page, artifacts, "06_focus")

    # offline: nothing left localhost, and the page raised nothing
    assert browser_context.blocked == [], browser_context.blocked
    assert errors == []


def _rope_band_width(page: Any) -> float:
    # the first rect mark of the view is the ROPE band of the interval chart
    return float(
        page.evaluate(
            "() => document.querySelector('.bbt-vega svg g.mark-rect path')"
            ".getBoundingClientRect().width"
        )
    )
