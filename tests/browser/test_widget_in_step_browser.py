"""Every view in step, at any width, in real JupyterLab and Notebook 7 with headless Chromium.

* In step: after a control changes, a view still drawn for the old settings is marked
  ("updating", dimmed) from the change until it is redrawn, and none shows the old settings
  unmarked; a refit marks the views at once. Sampled every few milliseconds in the page.
* The layout does not jump when the ranking and decision matrices first arrive: their space
  is kept for them.
* Narrow and wide: at 570 px every mark of the ranking has its algorithm's label on its row
  and every matrix column its label, none clipped; at 1400 px the summary uses the widget's
  width; at 368 px nothing scrolls sideways and no title is cut.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from widget_page import data_attr, wait_attr

pytestmark = [pytest.mark.browser]

FIT_TIMEOUT_MS = 300_000
STEP_TIMEOUT_MS = 90_000

SETUPS = {
    5: """\
import bbt_widget as bbt
w = bbt.BBTWidget(bbt.datasets.load_base(), dataset="db", seed=1, stan_check=False)
w""",
    16: """\
import bbt_widget as bbt
w = bbt.BBTWidget(
    bbt.datasets.load_pmlb16(), dataset="db", paired=False, seed=1, stan_check=False
)
w""",
}

#: A control changed, then samples, every few milliseconds until stopped, of what each view
#: shows and whether it is marked: window.__bbtFrames gets {t, pairs, summary, pairsMarked,
#: summaryMarked, stale}, where pairs/summary say whether that view's text has `wanted` in it.
_START_SAMPLING = """([wanted, selector, value]) => {
    const el = document.querySelector('.bbt-root').parentElement;
    const marked = (box) => box.classList.contains('bbt-stale')
        && box.previousElementSibling.classList.contains('bbt-stale-label')
        && !box.previousElementSibling.hidden;
    const pairsBox = el.querySelector('.bbt-main-charts');
    const summaryBox = el.querySelector('.bbt-summary-charts');
    window.__bbtFrames = [];
    const sample = () => {
        window.__bbtFrames.push({
            t: performance.now(),
            pairs: pairsBox.textContent.includes(wanted),
            summary: summaryBox.textContent.includes(wanted),
            pairsMarked: marked(pairsBox),
            summaryMarked: marked(summaryBox),
            stale: el.dataset.stale || '',
        });
    };
    // the control set as a user would (its value, then a change event), sampled at once
    const input = el.querySelector(selector);
    input.value = value;
    input.dispatchEvent(new Event('change', { bubbles: true }));
    sample();
    window.__bbtSampler = setInterval(sample, 5);
}"""
_STOP_SAMPLING = "() => { clearInterval(window.__bbtSampler); return window.__bbtFrames; }"


def _open(
    frontend: Any, browser_context: Any, run_notebook: Any, n: int, name: str
) -> tuple[Any, list[str]]:
    """The notebook of ``n`` algorithms opened and run; the page and its errors."""
    url = frontend.write_notebook(name, [SETUPS[n]])
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"{exc.message} @ {exc.stack}"))
    page.set_viewport_size({"width": 1400, "height": 1200})
    run_notebook(page, url, STEP_TIMEOUT_MS)
    page.wait_for_selector(".bbt-root", timeout=STEP_TIMEOUT_MS)
    return page, errors


def _wait_in_step(page: Any) -> None:
    wait_attr(page, "status", "v === 'done'", FIT_TIMEOUT_MS)
    wait_attr(page, "summaryRendered", "Number(v) > 0", STEP_TIMEOUT_MS)
    wait_attr(page, "stale", "v === ''", STEP_TIMEOUT_MS)


def _change_and_sample(page: Any, wanted: str, selector: str, value: str) -> list[dict[str, Any]]:
    """Set the control ``selector`` to ``value`` and sample from then until every view shows
    ``wanted`` and none is marked."""
    page.evaluate(_START_SAMPLING, [wanted, selector, value])
    page.wait_for_function(
        """(wanted) => {
            const el = document.querySelector('.bbt-root').parentElement;
            return (el.dataset.stale || '') === ''
                && el.querySelector('.bbt-main-charts').textContent.includes(wanted)
                && el.querySelector('.bbt-summary-charts').textContent.includes(wanted);
        }""",
        arg=wanted,
        timeout=FIT_TIMEOUT_MS,
    )
    page.wait_for_timeout(300)  # a few samples after the redraw
    frames: list[dict[str, Any]] = page.evaluate(_STOP_SAMPLING)
    return frames


def _check_in_step(frames: list[dict[str, Any]], *, refit: bool) -> None:
    assert len(frames) > 10, frames
    for view in ("pairs", "summary"):
        # never the old settings unmarked
        unmarked_old = [f for f in frames if not f[view] and not f[f"{view}Marked"]]
        assert unmarked_old == [], (view, unmarked_old[:3])
    # the summary, built in the background, was marked while it was behind
    assert any(f["summaryMarked"] for f in frames), frames[:3]
    if refit:  # a refit marks every view at once, in the first samples after the change
        first = frames[0]
        assert first["pairsMarked"] and first["summaryMarked"], frames[:3]
    last = frames[-1]
    assert last["pairs"] and last["summary"], last
    assert not last["pairsMarked"] and not last["summaryMarked"] and last["stale"] == "", last


#: Notebook 7 runs the layout tests; the rest of the behaviour is the same code in JupyterLab.
@pytest.mark.parametrize("frontend", ["lab"], indirect=True)
def test_a_view_behind_the_settings_is_marked_until_redrawn(
    frontend: Any, browser_context: Any, run_notebook: Any, widget_errors: Any, soft_checks: Any
) -> None:
    page, errors = _open(frontend, browser_context, run_notebook, 5, "in_step.ipynb")
    with soft_checks.check("no jump on first load"):
        _check_first_load(page)
    with soft_checks.check("a view change (HDI): the summary marked until redrawn"):
        frames = _change_and_sample(page, "95% HDI", "input[data-trait=hdi]", "0.95")
        _check_in_step(frames, refit=False)
    with soft_checks.check("a fit change (ties): every view marked at once"):
        # the ranking's HDI mass stays; what tells the new fit is the marks coming off
        frames = _change_and_sample(page, "95% HDI", "select[data-trait=ties]", "add")
        _check_in_step(frames, refit=True)
        assert any(f["stale"] for f in frames)
    with soft_checks.check("no mark left"):
        assert data_attr(page, "stale") == ""
        assert page.locator(".bbt-stale").count() == 0
        assert page.locator(".bbt-stale-label:visible").count() == 0
    soft_checks.assert_none_failed()
    assert widget_errors(errors) == []
    assert browser_context.blocked == []


def _check_first_load(page: Any) -> None:
    """The intervals do not move when the ranking and matrices arrive above them, seconds
    after the intervals are drawn: the summary's space is kept for it. Waits until in step."""
    page.wait_for_function(
        "() => document.querySelector('.bbt-main-charts svg') !== null", timeout=FIT_TIMEOUT_MS
    )
    top = _offset(page, ".bbt-main-charts")
    _wait_in_step(page)
    page.wait_for_timeout(500)
    moved = _offset(page, ".bbt-main-charts") - top
    assert abs(moved) < 150, moved


def _offset(page: Any, selector: str) -> float:
    """``selector``'s top, from the widget's top (px)."""
    return float(
        page.evaluate(
            """(selector) => {
                const root = document.querySelector('.bbt-root');
                return root.querySelector(selector).getBoundingClientRect().top
                    - root.getBoundingClientRect().top;
            }""",
            selector,
        )
    )


#: For every mark of the ranking (its description: "...; algorithm: NAME; ..."): the name,
#: and whether an axis label with that name is on its row, left of it, within the summary's box.
_RANKING_LABELS = """() => {
    const box = document.querySelector('.bbt-summary-charts');
    const area = box.getBoundingClientRect();
    const labels = [...box.querySelectorAll('g.role-axis-label text')].map((t) => {
        const r = t.getBoundingClientRect();
        return { text: t.textContent, r };
    });
    const out = [];
    const rows = 'g.role-mark path[aria-label*="probability of being the best"]';
    for (const mark of box.querySelectorAll(rows)) {
        const fields = mark.getAttribute('aria-label').split('; ');
        const name = fields.find((f) => f.startsWith('algorithm: ')).slice(11);
        const m = mark.getBoundingClientRect();
        const y = (m.top + m.bottom) / 2;
        const found = labels.some((l) => l.text === name
            && Math.abs((l.r.top + l.r.bottom) / 2 - y) < 4 && l.r.right <= m.left + 2
            && l.r.left >= area.left - 1 && l.r.right <= area.right + 1);
        out.push([name, found]);
    }
    return out;
}"""

#: For every decision-matrix cell: its pair, and whether a column label is above it (same
#: column, within the summary's box).
_MATRIX_COLUMN_LABELS = """() => {
    const box = document.querySelector('.bbt-summary-charts');
    const area = box.getBoundingClientRect();
    const labels = [...box.querySelectorAll('g.role-axis-label text')].map((t) => ({
        text: t.textContent, r: t.getBoundingClientRect(),
    }));
    const out = [];
    for (const cell of box.querySelectorAll("g.mark-rect path[aria-label*='verdict']")) {
        const c = cell.getBoundingClientRect();
        const x = (c.left + c.right) / 2;
        const found = labels.some((l) => Math.abs((l.r.left + l.r.right) / 2 - x) < c.width / 2
            && l.r.bottom <= c.top + 1
            && l.r.left >= area.left - 1 && l.r.right <= area.right + 1
            && l.r.top >= area.top - 1);
        out.push([cell.getAttribute('aria-label').split('; ')[0], found]);
    }
    return out;
}"""

#: Horizontal overflow: the widget's root and every chart box, [what, scrollWidth, width].
_OVERFLOW = """() => {
    const root = document.querySelector('.bbt-root');
    const boxes = [root, ...root.querySelectorAll('.bbt-charts')].filter((b) => !b.hidden
        && b.offsetParent !== null);
    return boxes.filter((b) => b.scrollWidth > b.clientWidth + 1)
        .map((b) => [b.className, b.scrollWidth, b.clientWidth]);
}"""

#: Chart titles (and subtitles) drawn past their box: [text, left, right, box left, box right].
_CUT_TITLES = """() => {
    const out = [];
    for (const box of document.querySelectorAll('.bbt-root .bbt-charts')) {
        const area = box.getBoundingClientRect();
        if (area.width === 0) continue;
        for (const t of box.querySelectorAll('g[class*="role-title"] text')) {
            const r = t.getBoundingClientRect();
            if (r.width > 0 && (r.left < area.left - 1 || r.right > area.right + 1)) {
                out.push([t.textContent, r.left, r.right, area.left, area.right]);
            }
        }
    }
    return out;
}"""


def _set_width(page: Any, width: int) -> None:
    """Make the widget ``width`` px wide and wait until its charts are laid out again (their
    widths and layouts unchanged for 2 s: a summary reflow takes several embeds)."""
    page.evaluate(
        """(w) => {
            document.querySelector('.bbt-root').parentElement.style.width = w + 'px';
            window.__bbtLayout = null; // the layout before this width is no answer
        }""",
        width,
    )
    page.wait_for_function(
        """() => {
            const now = [...document.querySelectorAll('.bbt-root .bbt-charts')].map((box) => {
                const svg = box.querySelector('svg');
                return `${box.dataset.level}:${svg ? svg.getBoundingClientRect().width : 0}`;
            }).join();
            const t = performance.now();
            if (window.__bbtLayout !== now) {
                window.__bbtLayout = now;
                window.__bbtSince = t;
                return false;
            }
            return t - window.__bbtSince > 2000;
        }""",
        polling=200,
        timeout=STEP_TIMEOUT_MS,
    )


#: Both front ends at 16 algorithms, where the summary is widest; JupyterLab at 5.
@pytest.mark.parametrize(
    ("frontend", "n"), [("lab", 5), ("lab", 16), ("notebook", 16)], indirect=["frontend"]
)
def test_summary_fits_narrow_and_fills_wide(
    n: int,
    frontend: Any,
    browser_context: Any,
    run_notebook: Any,
    widget_errors: Any,
    soft_checks: Any,
    artifacts: Path,
) -> None:
    page, errors = _open(frontend, browser_context, run_notebook, n, f"widths{n}.ipynb")
    with soft_checks.check("no jump on first load"):
        _check_first_load(page)
    _wait_in_step(page)
    kind = frontend.kind
    with soft_checks.check("1400 px: the summary uses the widget's width"):
        _set_width(page, 1400)
        width = page.locator(".bbt-summary-charts svg").first.bounding_box()["width"]
        assert width > 900, width
        assert page.evaluate(_OVERFLOW) == []
    page.locator(".bbt-root").screenshot(path=str(artifacts / f"in_step_{n}_{kind}_1400.png"))
    with soft_checks.check("570 px: every ranking mark labelled on its row, none clipped"):
        _set_width(page, 570)
        found = page.evaluate(_RANKING_LABELS)
        assert len(found) >= 3 * n, found
        assert [name for name, ok in found if not ok] == []
    with soft_checks.check("570 px: every matrix column labelled"):
        found = page.evaluate(_MATRIX_COLUMN_LABELS)
        assert len(found) >= n * (n - 1), len(found)
        assert [pair for pair, ok in found if not ok] == []
    with soft_checks.check("570 px: nothing scrolls sideways"):
        assert page.evaluate(_OVERFLOW) == []
    page.locator(".bbt-root").screenshot(path=str(artifacts / f"in_step_{n}_{kind}_570.png"))
    with soft_checks.check("368 px: nothing scrolls sideways, no title cut"):
        _set_width(page, 368)
        assert page.evaluate(_OVERFLOW) == []
        assert page.evaluate(_CUT_TITLES) == []
    with soft_checks.check("368 px: every ranking mark still labelled"):
        assert [name for name, ok in page.evaluate(_RANKING_LABELS) if not ok] == []
    page.locator(".bbt-root").screenshot(path=str(artifacts / f"in_step_{n}_{kind}_368.png"))
    soft_checks.assert_none_failed()
    assert widget_errors(errors) == []
    assert browser_context.blocked == []
