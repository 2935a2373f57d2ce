"""The widget steady, in real JupyterLab and Notebook 7 with headless Chromium, at 16
algorithms (two of them with hostile names where dt and svm were):

* nothing moves when it updates: the "updating" labels lie over their views and the note of
  the claims a change flipped sits in a slot of fixed height, so the P(a > b) chart and the
  ranking keep their place during and after an update, to the pixel. Each view's top is
  sampled on every animation frame and on every change of the page (a MutationObserver) from
  the control's change until the update is over and a while after;
* a click always shows what it picked: a matrix cell lists its pair (switching "Show pairs
  of"), highlighted, says so and scrolls the pairwise view into sight; an algorithm's point
  lists its pairs; the same by keyboard (arrows and Enter over the ranking and the matrices).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from widget_page import wait_attr

pytestmark = [pytest.mark.browser]

FIT_TIMEOUT_MS = 300_000
STEP_TIMEOUT_MS = 90_000

HOSTILE = "<img src=x onerror=alert(1)>"
RTL = "\u202eevil"

CELLS = [
    f"""\
import bbt_widget as bbt
data = bbt.datasets.load_pmlb16().rename(columns={{"dt": {HOSTILE!r}, "svm": {RTL!r}}})
w = bbt.BBTWidget(data, dataset="db", paired=False, seed=1, stan_check=False)
w"""
]

#: Start sampling the top of each view (relative to the widget's top, so that a scroll of
#: the notebook is no shift), then set the control as a user would.
_START = """([selector, value]) => {
    const el = document.querySelector('.bbt-root').parentElement;
    const root = el.querySelector('.bbt-root');
    const views = {
        pairs: el.querySelector('.bbt-main-charts'),
        summary: el.querySelector('.bbt-summary-charts'),
    };
    const frames = [];
    window.__bbtStill = { frames, running: true };
    const sample = () => {
        const top = root.getBoundingClientRect().top;
        const frame = { stale: el.dataset.stale || '', status: el.dataset.status || '',
            claims: !el.querySelector('.bbt-claims-note').hidden };
        for (const [name, box] of Object.entries(views)) {
            frame[name] = box.getBoundingClientRect().top - top;
        }
        // the height of every part above the charts: which one moved them, on a failure
        frame.parts = Object.fromEntries([...el.querySelectorAll(
            '.bbt-main > *, .bbt-summary > *, .bbt-view > *')].map((part, i) =>
            [`${i} ${part.className || part.tagName}`,
             Math.round(part.getBoundingClientRect().height * 10) / 10]));
        frames.push(frame);
    };
    const observer = new MutationObserver(sample);
    observer.observe(root, { subtree: true, childList: true, attributes: true,
        characterData: true });
    const tick = () => {
        sample();
        if (window.__bbtStill.running) requestAnimationFrame(tick);
        else observer.disconnect();
    };
    sample();
    const input = el.querySelector(selector);
    input.value = value;
    input.dispatchEvent(new Event('change', { bubbles: true }));
    requestAnimationFrame(tick);
}"""
_STOP = "() => { window.__bbtStill.running = false; return window.__bbtStill.frames; }"


def _change_and_sample(page: Any, selector: str, value: str) -> list[dict[str, Any]]:
    """Set ``selector`` to ``value``; the samples from then until 1.5 s after the update."""
    page.evaluate(_START, [selector, value])
    page.wait_for_timeout(100)
    wait_attr(page, "stale", "v === ''", FIT_TIMEOUT_MS)
    wait_attr(page, "status", "v === 'done'", FIT_TIMEOUT_MS)
    page.wait_for_timeout(1500)  # the claims note and any late redraw
    frames: list[dict[str, Any]] = page.evaluate(_STOP)
    return frames


def _shift(frames: list[dict[str, Any]], view: str) -> float:
    tops = [f[view] for f in frames]
    return max(abs(top - tops[0]) for top in tops)


def _resized(frames: list[dict[str, Any]]) -> dict[str, list[float]]:
    """The parts of the widget whose height changed, with the heights they had."""
    heights: dict[str, list[float]] = {}
    for frame in frames:
        for part, height in frame["parts"].items():
            seen = heights.setdefault(part, [])
            if not seen or seen[-1] != height:
                seen.append(height)
    return {part: seen for part, seen in heights.items() if len(seen) > 1}


def _settled(browser_context: Any, run_notebook: Any, url: str) -> tuple[Any, list[str]]:
    """The notebook at ``url`` run in a new page, its first fit drawn and nothing stale; the
    page and the errors it raises."""
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"{exc.message} @ {exc.stack}"))
    page.set_viewport_size({"width": 1400, "height": 900})
    run_notebook(page, url, STEP_TIMEOUT_MS)
    page.wait_for_selector(".bbt-root", timeout=STEP_TIMEOUT_MS)
    wait_attr(page, "status", "v === 'done'", FIT_TIMEOUT_MS)
    wait_attr(page, "summaryRendered", "Number(v) > 0", STEP_TIMEOUT_MS)
    wait_attr(page, "stale", "v === ''", STEP_TIMEOUT_MS)
    page.wait_for_timeout(1000)
    return page, errors


def test_no_chart_moves_during_or_after_an_update(
    frontend: Any, browser_context: Any, run_notebook: Any, widget_errors: Any, soft_checks: Any
) -> None:
    page, errors = _settled(
        browser_context, run_notebook, frontend.write_notebook("still.ipynb", CELLS)
    )

    changes = [
        ("a refit (ties)", "select[data-trait=ties]", "add"),
        ("a redraw (ROPE)", "input[data-trait=rope_high]", "0.6"),
        ("a refit back (ties)", "select[data-trait=ties]", "spread"),
    ]
    for what, selector, value in changes:
        with soft_checks.check(f"{what}: 0 px shift"):
            frames = _change_and_sample(page, selector, value)
            assert len(frames) > 20, frames
            assert any(f["stale"] for f in frames), frames[:3]  # an update was on screen
            shifts = {view: _shift(frames, view) for view in ("pairs", "summary")}
            assert shifts == {"pairs": 0, "summary": 0}, (shifts, _resized(frames))
        if "ROPE" in what:
            with soft_checks.check("the status says the ROPE change ran no fit"):
                text = page.locator(".bbt-status-text").inner_text()
                assert text == "ROPE changed: no refit", text
    with soft_checks.check("hostile names shown as text"):
        assert page.locator("img[src=x]").count() == 0
    soft_checks.assert_none_failed()
    assert widget_errors(errors) == []
    assert browser_context.blocked == []


#: 50 simulated algorithms on 10 data sets (skill plus noise, simulated.py), short chains so
#: that the first fit takes seconds; one algorithm named in the headline has a hostile name.
CELLS_50 = [
    f"""\
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
import bbt_widget as bbt
from simulated import simulated_results
data = simulated_results(50, 10, 1).replace({{"algorithm": {{"alg03": {HOSTILE!r}}}}})
w = bbt.BBTWidget(
    data, dataset="dataset", algorithm="algorithm", score="score", engine="numpy", seed=1,
    chains=2, iter_warmup=100, iter_sampling=100, stan_check=False,
)
w"""
]
#: The headline's whole text's height (px), cut or not.
_HEADLINE_TEXT_HEIGHT = "() => document.querySelector('.bbt-headline').scrollHeight"


@pytest.mark.parametrize("frontend", ["lab"], indirect=True)
def test_a_longer_headline_moves_no_chart_at_50_algorithms(
    frontend: Any, browser_context: Any, run_notebook: Any, widget_errors: Any, soft_checks: Any
) -> None:
    """At 50 algorithms a wider ROPE makes the headline name more groups (a sentence of more
    lines); the headline keeps its height, so the ranking and the P(a > b) chart below stay
    put. A sentence cut at its last line has a "show all" button that opens it whole."""
    page, errors = _settled(
        browser_context, run_notebook, frontend.write_notebook("still50.ipynb", CELLS_50)
    )
    headline = page.locator(".bbt-headline")
    before = page.evaluate(_HEADLINE_TEXT_HEIGHT)

    with soft_checks.check("a longer headline: 0 px shift"):
        frames = _change_and_sample(page, "input[data-trait=rope_high]", "0.65")
        # the sentence takes more lines now: unreserved, it would push the charts down
        assert page.evaluate(_HEADLINE_TEXT_HEIGHT) > before + 10, before
        assert any(f["stale"] for f in frames), frames[:3]
        shifts = {view: _shift(frames, view) for view in ("pairs", "summary")}
        assert shifts == {"pairs": 0, "summary": 0}, (shifts, _resized(frames))
    with soft_checks.check("a cut headline opens whole with 'show all', and closes again"):
        page.evaluate(
            "() => { document.querySelector('.bbt-root').parentElement.style.width = '500px'; }"
        )
        more = page.locator(".bbt-more-lines")
        page.wait_for_function(
            "() => getComputedStyle(document.querySelector('.bbt-more-lines')).visibility"
            " === 'visible'",
            timeout=STEP_TIMEOUT_MS,
        )
        cut = headline.bounding_box()["height"]
        assert more.inner_text() == "show all" and more.get_attribute("aria-expanded") == "false"
        more.click()
        assert more.get_attribute("aria-expanded") == "true"
        assert headline.bounding_box()["height"] > cut
        assert page.evaluate(
            "() => { const e = document.querySelector('.bbt-headline');"
            " return e.scrollHeight <= e.clientHeight + 1; }"
        )
        more.click()
        assert headline.bounding_box()["height"] == cut
    with soft_checks.check("the headline's names as text"):
        assert page.locator("img[src=x]").count() == 0
        assert HOSTILE in headline.inner_text()
    soft_checks.assert_none_failed()
    assert widget_errors(errors) == []
    assert browser_context.blocked == []


#: The decision matrices' cells (rect marks whose description has a verdict).
_CELLS = ".bbt-summary-charts g.mark-rect path[aria-label*='verdict']"
#: The index of the first cell whose description names both words.
_CELL_OF = """([cells, a, b]) => [...document.querySelectorAll(cells)].findIndex((cell) => {
    const label = cell.getAttribute('aria-label') || '';
    return label.includes(a) && label.includes(b);
})"""
#: A Python expression's repr, from the notebook's kernel.
_KERNEL_VALUE = """async (expr) => {
    const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
    const reply = await kernel.requestExecute({ code: '', user_expressions: { v: expr } }).done;
    const v = reply.content.user_expressions.v;
    return v.status === 'ok' ? v.data['text/plain'] : `error: ${v.ename}: ${v.evalue}`;
}"""


def _click(page: Any, locator: Any) -> None:
    locator.scroll_into_view_if_needed()
    box = locator.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


#: Whether the keyboard cursor covers, along one axis, the centre of the first mark of the
#: summary whose description holds every word.
_CURSOR_ON = """([words, axis]) => {
    const mark = [...document.querySelectorAll('.bbt-summary-charts path[aria-label]')]
        .find((el) => words.every((w) => el.getAttribute('aria-label').includes(w)));
    const [lo, size] = axis === 'x' ? ['left', 'width'] : ['top', 'height'];
    const box = mark.getBoundingClientRect();
    const cursor = document.querySelector('.bbt-key-cursor').getBoundingClientRect();
    const centre = box[lo] + box[size] / 2;
    return centre >= cursor[lo] && centre <= cursor[lo] + cursor[size];
}"""


def _key_until(page: Any, key: str, predicate: str, arg: Any = None, most: int = 40) -> None:
    """Press ``key`` until the JS function ``predicate`` of ``arg`` holds."""
    for _ in range(most):
        if page.evaluate(predicate, arg):
            return
        page.keyboard.press(key)
    raise AssertionError(f"{key} x {most} never reached {predicate} {arg}")


#: Notebook 7 runs the layout tests; the rest of the behaviour is the same code in JupyterLab.
@pytest.mark.parametrize("frontend", ["lab"], indirect=True)
def test_a_click_or_a_key_shows_what_it_picked(
    frontend: Any, browser_context: Any, run_notebook: Any, widget_errors: Any, soft_checks: Any
) -> None:
    """At 16 algorithms "Show pairs of" opens on the top algorithm; a click on the cell of two
    others (the hostile names, where dt and svm were) lists that pair, highlighted, says so
    and scrolls it into sight; a click on an algorithm's point lists its pairs. The same by
    keyboard: Tab to the ranking's rows or the matrices' cells, the arrows move a cursor
    drawn over the chart and Enter picks what it is on, each step said in words."""
    url = frontend.write_notebook("clicks.ipynb", CELLS)
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"{exc.message} @ {exc.stack}"))
    page.set_viewport_size({"width": 1400, "height": 900})
    run_notebook(page, url, STEP_TIMEOUT_MS)
    page.wait_for_selector(".bbt-root", timeout=STEP_TIMEOUT_MS)
    wait_attr(page, "status", "v === 'done'", FIT_TIMEOUT_MS)
    wait_attr(page, "summaryRendered", "Number(v) > 0", STEP_TIMEOUT_MS)
    wait_attr(page, "rendered", "v === 'true'", STEP_TIMEOUT_MS)
    focus = page.locator("select[data-trait=focus]").input_value()
    assert focus and "img" not in focus and "evil" not in focus, focus
    note = page.locator(".bbt-pair-note")

    with soft_checks.check("a matrix cell: its pair listed, highlighted, said and in sight"):
        index = page.evaluate(_CELL_OF, [_CELLS, "img src=x", "evil"])
        assert index >= 0, "no cell of the hostile pair"
        _click(page, page.locator(_CELLS).nth(index))
        note.wait_for(state="visible", timeout=STEP_TIMEOUT_MS)
        text = note.inner_text()
        assert text.startswith("showing ") and "'Show pairs of' set to" in text, text
        assert HOSTILE in text and "evil" in text, text  # names as text
        listed = page.evaluate(
            _KERNEL_VALUE,
            f"w.selected_pair == bbt.charts.pair_key({HOSTILE!r}, {RTL!r}) "
            "and w.selected_pair in w.view_data['intervals']['key']",
        )
        assert listed == "True", listed
        assert not page.locator(".bbt-chip").is_visible()  # never "(not shown)"
        # the pairwise view scrolled into sight, the pair among its rows
        page.wait_for_function(
            """(a) => {
                const box = document.querySelector('.bbt-main-charts');
                const top = box.getBoundingClientRect().top;
                return top >= 0 && top < window.innerHeight && box.textContent.includes(a);
            }""",
            arg="evil",
            timeout=STEP_TIMEOUT_MS,
        )

    with soft_checks.check("an algorithm's point: its pairs listed and said"):
        point = page.locator(".bbt-summary-charts g.mark-symbol path[aria-label*='algorithm']")
        assert point.count() > 0
        _click(page, point.nth(3))
        page.wait_for_function(
            "() => (document.querySelector('.bbt-pair-note').textContent || '')"
            ".startsWith('showing the pairs of ')",
            timeout=STEP_TIMEOUT_MS,
        )
        name = note.inner_text().removeprefix("showing the pairs of ").split(";")[0]
        assert page.locator("select[data-trait=focus]").input_value() == name
        assert name in (point.nth(3).get_attribute("aria-label") or ""), name

    with soft_checks.check("by keyboard: Tab to the ranking, arrows to a row, Enter lists it"):
        page.locator("select.bbt-ranking-model").focus()
        page.keyboard.press("Tab")
        stop = page.locator("[data-keys=algorithm]")
        assert stop.evaluate("(el) => el === document.activeElement")
        caption = page.locator(".bbt-key-caption")
        assert caption.inner_text().startswith("ranking row 1 of 16: "), caption.inner_text()
        assert "arrow keys" in (stop.get_attribute("aria-label") or "")
        page.keyboard.press("End")
        _key_until(page, "ArrowUp", "(a) => document.activeElement.dataset.cursor === a", HOSTILE)
        assert HOSTILE in caption.inner_text()  # the name as text
        # the cursor is drawn over that row (its P(best) bar, say)
        assert page.evaluate(_CURSOR_ON, [[HOSTILE, "probability of being the best"], "y"])
        page.keyboard.press("Enter")
        page.wait_for_function(
            "(a) => document.querySelector('.bbt-pair-note').textContent"
            ".startsWith(`showing the pairs of ${a}`)",
            arg=HOSTILE,
            timeout=STEP_TIMEOUT_MS,
        )
        assert page.locator("select[data-trait=focus]").input_value() == HOSTILE
        assert caption.inner_text().startswith(f"picked {HOSTILE}"), caption.inner_text()

    with soft_checks.check("by keyboard: Tab to the matrices, arrows to a cell, Enter lists it"):
        page.keyboard.press("Tab")
        stop = page.locator("[data-keys=pair]")
        assert stop.evaluate("(el) => el === document.activeElement")
        assert caption.inner_text().startswith("weak matrix, "), caption.inner_text()
        # down and right to a cell of the hostile pair in the weak matrix (drawn first)
        words = ["img src=x", "evil", "verdict"]
        _key_until(page, "ArrowDown", _CURSOR_ON, [words, "y"])
        _key_until(page, "ArrowRight", _CURSOR_ON, [words, "x"])
        assert RTL in caption.inner_text() and HOSTILE in caption.inner_text()
        page.keyboard.press("Enter")
        note.wait_for(state="visible", timeout=STEP_TIMEOUT_MS)
        page.wait_for_function(
            "() => document.querySelector('.bbt-pair-note').textContent.startsWith('showing ')"
            " && document.querySelector('.bbt-pair-note').textContent.includes(' vs ')",
            timeout=STEP_TIMEOUT_MS,
        )
        listed = page.evaluate(
            _KERNEL_VALUE,
            f"w.selected_pair == bbt.charts.pair_key({HOSTILE!r}, {RTL!r}) "
            "and w.selected_pair in w.view_data['intervals']['key']",
        )
        assert listed == "True", listed
        assert caption.inner_text().startswith("picked "), caption.inner_text()

    with soft_checks.check("one text per idea: a tooltip quotes the glossary's entry"):
        title = page.locator("select[data-trait=ties]").get_attribute("title") or ""
        assert "rounded up" in title and "(paper Sec. 6.2)." in title, title
        page.locator(".bbt-glossary-button").click()
        entries = page.locator(".bbt-glossary-list dd")
        ties = [entries.nth(i).inner_text() for i in range(entries.count())]
        ties = [text for text in ties if text.startswith("The Bradley-Terry model has no ties")]
        assert len(ties) == 1 and ties[0].split(" (Wainer")[0].removesuffix(".") in title, ties
        assert "Sec. 6.2" in ties[0], ties
        tags = page.locator(".bbt-cost-fit")
        assert tags.count() > 0 and "Stan" not in (tags.first.get_attribute("title") or "")
    with soft_checks.check("hostile names shown as text"):
        assert page.locator("img[src=x]").count() == 0
    soft_checks.assert_none_failed()
    assert widget_errors(errors) == []
    assert browser_context.blocked == []


#: Below 600 px: the widget's width.
NARROW = 560
#: Each x-axis of the ranking's three panels, by a word of its title: [word, left, top, width].
_RANKING_AXES = """() => {
    const out = [];
    for (const text of document.querySelectorAll('.bbt-summary-charts g.role-axis-title text')) {
        const word = ['ability', 'P(best)', 'expected rank']
            .find((w) => text.textContent.startsWith(w));
        // the ranking's panels come first; the CD diagram's axis below is also "expected rank"
        if (!word || out.some(([seen]) => seen === word)) continue;
        const r = text.closest('g.role-axis').getBoundingClientRect();
        out.push([word, r.left, r.top, r.width]);
    }
    return out;
}"""
#: Every select and input shown past the widget's edges: [its trait, left, right].
_CUT_CONTROLS = """() => {
    const root = document.querySelector('.bbt-root').getBoundingClientRect();
    return [...document.querySelectorAll('.bbt-root select, .bbt-root input')]
        .filter((el) => el.offsetParent !== null)
        .map((el) => [el.dataset.trait || el.className, el.getBoundingClientRect()])
        .filter(([, r]) => r.left < root.left - 1 || r.right > root.right + 1)
        .map(([name, r]) => [name, r.left, r.right]);
}"""


#: Notebook 7 runs the layout tests; the rest of the behaviour is the same code in JupyterLab.
@pytest.mark.parametrize("frontend", ["lab"], indirect=True)
def test_narrow_ranking_panels_take_the_width_and_no_select_is_cut(
    frontend: Any, browser_context: Any, run_notebook: Any, widget_errors: Any, soft_checks: Any
) -> None:
    url = frontend.write_notebook("narrow.ipynb", CELLS)
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"{exc.message} @ {exc.stack}"))
    page.set_viewport_size({"width": 1400, "height": 900})
    run_notebook(page, url, STEP_TIMEOUT_MS)
    page.wait_for_selector(".bbt-root", timeout=STEP_TIMEOUT_MS)
    wait_attr(page, "status", "v === 'done'", FIT_TIMEOUT_MS)
    wait_attr(page, "summaryRendered", "Number(v) > 0", STEP_TIMEOUT_MS)
    page.evaluate(
        "(w) => { document.querySelector('.bbt-root').parentElement.style.width = w + 'px'; }",
        NARROW,
    )
    # reflowed: the summary laid out again for its narrower box
    page.wait_for_function(
        """(w) => { const box = document.querySelector('.bbt-summary-charts');
            const svg = box.querySelector('svg');
            return svg && svg.getBoundingClientRect().width <= w; }""",
        arg=NARROW,
        timeout=STEP_TIMEOUT_MS,
    )
    page.wait_for_timeout(1500)
    box = page.locator(".bbt-summary-charts").bounding_box()
    with soft_checks.check("the ranking's three panels one under the other, each wide"):
        axes = page.evaluate(_RANKING_AXES)
        assert sorted(word for word, *_ in axes) == ["P(best)", "ability", "expected rank"], axes
        tops = sorted(top for _, _, top, _ in axes)
        assert tops[0] < tops[1] < tops[2], axes  # stacked
        narrow = [(word, width) for word, _, _, width in axes if width < 0.5 * box["width"]]
        assert narrow == [], (narrow, box["width"])
    with soft_checks.check("no select or input past the widget's edges"):
        assert page.evaluate(_CUT_CONTROLS) == []
    soft_checks.assert_none_failed()
    assert widget_errors(errors) == []
    assert browser_context.blocked == []
