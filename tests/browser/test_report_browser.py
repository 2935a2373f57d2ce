"""The HTML report in headless Chromium (issue 8): the headline views draw, nothing is
loaded from the network, and the page does not overflow a 760 px wide window.

Screenshots of the ranking and decision views go to ``artifacts/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import bbt_widget as bbt
from bbt_widget.outputs.report._render import write_report

pytestmark = [pytest.mark.browser, pytest.mark.stan]

NARROW = 760


@pytest.fixture(scope="module")
def fits() -> dict[str, bbt.BBTResult]:
    # fitted before Playwright opens (its sync API holds an asyncio loop PyStan cannot share)
    return {
        "base": bbt.fit(bbt.datasets.load_base(), dataset="db", seed=5),
        "pmlb16": bbt.fit(bbt.datasets.load_pmlb16(), dataset="db"),
    }


def _box(page: Any, selector: str) -> dict[str, float]:
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    return box


@pytest.mark.parametrize("case", ["base", "pmlb16"])
def test_report_draws_headline_views_without_overflow(
    fits, case, tmp_path: Path, browser_context: Any, artifacts: Path
):
    html = write_report(fits[case], tmp_path / "report.html").read_text(encoding="utf-8")
    page = browser_context.new_page()
    page.set_viewport_size({"width": NARROW, "height": 1000})
    # set_content: the report is one file, so any request at all would be a fault
    page.set_content(html, wait_until="load")
    assert browser_context.blocked == []
    # no horizontal scrolling at 760 px: wide charts scale down, wide tables scroll inside
    assert page.evaluate("document.documentElement.scrollWidth") <= NARROW
    assert page.evaluate("document.body.scrollWidth") <= NARROW
    for name in ("ranking", "decisions", "intervals", "rope_overlap", "ppc", "win_matrix"):
        box = _box(page, f"#fig-{name} svg")
        assert 100 < box["width"] <= NARROW and box["height"] > 100, (name, box)
    # headline first: the ranking and the decisions come before the methods paragraph
    assert _box(page, "#fig-ranking")["y"] < _box(page, "#fig-decisions")["y"]
    assert _box(page, "#fig-decisions")["y"] < _box(page, "#methods")["y"]
    # the decision matrix draws one cell per ordered pair under each interpretation
    n = len(fits[case].algorithms)
    cells = page.locator("#fig-decisions svg path[aria-roledescription='rect mark']").count()
    assert cells == 2 * n * (n - 1), cells
    page.locator("#fig-ranking").screenshot(path=str(artifacts / f"report_ranking_{case}.png"))
    page.locator("#fig-decisions").screenshot(path=str(artifacts / f"report_decisions_{case}.png"))
    page.close()
