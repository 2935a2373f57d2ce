"""The widget in real JupyterLab and headless Chromium, with the network cut.

One notebook, one kernel, real Stan fits (PyStan compiles the model once per machine, so the
first run may spend a minute compiling). Screenshots go to ``artifacts/``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from widget_page import data_attr, wait_attr

from bbt_widget.widget.pair_filters import PAIRS_PER_PAGE

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


def _shoot(page: Any, artifacts: Path, name: str) -> None:
    """The page as seen, and the whole widget (taller than the window) on its own."""
    page.screenshot(path=str(artifacts / f"browser_{name}.png"))
    page.locator(".bbt-root").screenshot(path=str(artifacts / f"browser_{name}_widget.png"))


def _marks(page: Any) -> int:
    # the pairwise view and the model checks (drawn once their section is opened)
    return page.locator(".bbt-vega svg .role-mark, .bbt-vega-checks svg .role-mark").count()


def test_widget_renders_refits_and_resummarises_offline(
    lab: Any, browser_context: Any, artifacts: Path, run_notebook: Any
) -> None:
    url = lab.write_notebook("widget.ipynb", [SETUP])
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    run_notebook(page, url, STEP_TIMEOUT_MS)
    page.wait_for_selector(".bbt-root", timeout=STEP_TIMEOUT_MS)
    wait_attr(page, "status", "v === 'done'", FIT_TIMEOUT_MS)
    wait_attr(page, "rendered", "v === 'true'", STEP_TIMEOUT_MS)

    # 1. the charts drew: vega marks of every chart are in the SVG (the model checks once
    # their section is opened)
    page.locator(".bbt-checks > summary").click()
    wait_attr(page, "checksRendered", "Number(v) > 0", STEP_TIMEOUT_MS)
    assert _marks(page) > 10
    for mark in ("mark-rule", "mark-symbol", "mark-rect", "mark-text"):
        assert page.locator(f".bbt-root svg g.{mark}").count() > 0, mark
    assert page.locator(".bbt-diag-badge").inner_text().startswith(("diagnostics fine", "check"))
    assert data_attr(page, "fits") == "1"
    _shoot(page, artifacts, "01_initial")

    # issue 10: the option lists come from bbt_widget.core.options through a trait
    from bbt_widget.core import options

    offered = page.evaluate(
        "() => [...document.querySelectorAll('select[data-trait=ties] option')].map((o) => o.value)"
    )
    assert offered == list(options.TIE_POLICIES), offered
    d_min = page.locator("input[data-trait=d_min]")
    assert float(d_min.get_attribute("max")) == options.D_MIN_RANGE[1]
    assert float(d_min.get_attribute("step")) == options.D_MIN_STEP

    # 2. the tie policy refits (a second Stan fit) and redraws
    updates = int(data_attr(page, "dataUpdates") or 0)
    embeds = int(data_attr(page, "embeds") or 0)
    page.select_option("select[data-trait=ties]", "davidson")
    wait_attr(page, "fits", "v === '2'", FIT_TIMEOUT_MS)
    wait_attr(page, "status", "v === 'done'", STEP_TIMEOUT_MS)
    wait_attr(page, "dataUpdates", f"Number(v) > {updates}", STEP_TIMEOUT_MS)
    # Davidson also checks the ties: the coverage table grows a "ties" column
    page.wait_for_function(
        """() => [...document.querySelectorAll('.bbt-vega-checks svg text')]
                .some((t) => t.textContent === 'ties')""",
        timeout=STEP_TIMEOUT_MS,
    )
    assert int(data_attr(page, "embeds") or 0) == embeds  # same spec: the live view was updated
    _shoot(page, artifacts, "02_davidson")

    # 3. the ROPE only re-summarises: redraw, no fit
    updates = int(data_attr(page, "dataUpdates") or 0)
    band_before = _rope_band_width(page)
    rope_low = page.locator("input[data-trait=rope_low]")
    rope_low.fill("0.3")
    rope_low.press("Tab")
    wait_attr(page, "dataUpdates", f"Number(v) > {updates}", STEP_TIMEOUT_MS)
    assert data_attr(page, "fits") == "2"
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
    assert _marks(page) == marks and data_attr(page, "fits") == "2"
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
    assert data_attr(page, "fits") == "2"
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


# ---------------------------------------------------------------------------- 16 algorithms

SETUP_16 = """\
import bbt_widget as bbt
# the weak rule asked for: its caveat beyond 10 algorithms is one of the checks (the default,
# "auto", takes the strong rule there)
w = bbt.BBTWidget(
    bbt.datasets.load_pmlb16(), dataset="db", paired=False, seed=1, interpretation="weak"
)
w"""

#: Records console warnings and, per change of the widget's data-status, the number of chart
#: updates drawn by then (so a test can tell "done" shown before the charts were redrawn).
_WATCH_STATUS = """() => {
    const el = document.querySelector('.bbt-root').parentElement;
    window.__bbtDone = [];
    new MutationObserver(() => {
        if (el.dataset.status !== 'done') return;
        window.__bbtDone.push(Number(el.dataset.dataUpdates || 0));
    }).observe(el, { attributes: true, attributeFilter: ['data-status'] });
}"""


def _vega_warnings(messages: list[Any]) -> list[str]:
    # Vega's logger writes "WARN <text>" through console.warn
    return [m.text for m in messages if m.type in ("warning", "error") and "WARN" in m.text]


def _opacities(page: Any, selector: str) -> list[float]:
    return page.evaluate(
        """(sel) => [...document.querySelectorAll(sel)].map((p) => {
            const o = p.getAttribute('opacity');
            return o === null ? 1 : Number(o);
        })""",
        selector,
    )


def _svg_height(page: Any) -> float:
    return float(
        page.evaluate(
            "() => document.querySelector('.bbt-vega svg').getBoundingClientRect().height"
        )
    )


_DOTS = ".bbt-vega svg g.mark-symbol.role-mark path"


SOFT_TIMEOUT_MS = 15_000


def test_widget_at_16_algorithms(
    frontend: Any,
    browser_context: Any,
    artifacts: Path,
    run_notebook: Any,
    widget_errors: Any,
    soft_checks: Any,
) -> None:
    """Issue 12: the defects seen at 16 algorithms, in JupyterLab and in Notebook 7."""
    kind = frontend.kind
    url = frontend.write_notebook("widget16.ipynb", [SETUP_16])
    page = browser_context.new_page()
    errors: list[str] = []
    console: list[Any] = []
    page.on("pageerror", lambda exc: errors.append(f"{exc.message} @ {exc.stack}"))
    page.on("console", lambda msg: console.append(msg))
    checks = soft_checks

    run_notebook(page, url, STEP_TIMEOUT_MS)
    page.wait_for_selector(".bbt-root", timeout=STEP_TIMEOUT_MS)
    wait_attr(page, "status", "v === 'done'", FIT_TIMEOUT_MS)
    wait_attr(page, "rendered", "v === 'true'", STEP_TIMEOUT_MS)
    # beyond 8 algorithms the intervals open on the top-ranked algorithm's 15 pairs
    page.wait_for_function(
        f"() => document.querySelectorAll('{_DOTS}').length === 15", timeout=STEP_TIMEOUT_MS
    )
    assert page.locator("select[data-trait=focus]").input_value() != ""
    page.select_option("select[data-trait=focus]", index=0)  # "all algorithms"
    # all 120 pairs, a page of PAIRS_PER_PAGE at a time
    page.wait_for_function(
        f"() => document.querySelectorAll('{_DOTS}').length === {PAIRS_PER_PAGE}",
        timeout=STEP_TIMEOUT_MS,
    )
    _shoot(page, artifacts, f"16_{kind}_01_initial")

    with checks.check("paired row: one line, worded for the widget"):
        assert "paired=False" not in page.locator(".bbt-controls").inner_text()
        paired_row = page.locator(".bbt-row", has=page.locator("input[data-trait=paired]"))
        assert paired_row.bounding_box()["height"] < 30, paired_row.bounding_box()
        note = page.locator(".bbt-root [data-note=paired]")
        if note.count() and note.is_visible():
            assert note.inner_text().startswith("paired mode is off")
            assert note.bounding_box()["height"] < 20, note.bounding_box()

    with checks.check("weak-rule caveat beyond 10 algorithms (issue 8)"):
        assert "16 algorithms" in page.locator(".bbt-caveat").inner_text()

    with checks.check("ranking and decision matrices for 16 algorithms (issue 8)"):
        wait_attr(page, "summaryRendered", "Number(v) > 0", SOFT_TIMEOUT_MS * 4)
        texts = _summary_texts(page)
        long_texts = [t for t in texts if len(t) > 12]
        assert any(t.startswith("Ranking: ability") for t in texts), long_texts
        assert any(t.startswith("weak (Sec. 9.2)") for t in texts), long_texts
        assert any(t.startswith("BBT critical-difference diagram") for t in texts), long_texts
        # a dot per algorithm in the ranking's two panels and in the critical-difference diagram
        dots = ".bbt-summary-charts svg g.mark-symbol.role-mark path"
        assert page.locator(dots).count() == 3 * 16, page.locator(dots).count()
        page.locator(".bbt-summary-charts").screenshot(
            path=str(artifacts / f"browser_summary_16_{kind}.png")
        )

    with checks.check("PPC bars have a width"):
        page.locator(".bbt-checks > summary").click()  # the model checks: closed at first
        wait_attr(page, "checksRendered", "Number(v) > 0", SOFT_TIMEOUT_MS)
        boxes = page.evaluate(
            """() => [...document.querySelectorAll(
                    '.bbt-vega-checks svg g.mark-rect.role-mark path')]
                .filter((p) => p.getAttribute('fill') === '#9fb3c8')
                .map((p) => { const r = p.getBoundingClientRect(); return [r.width, r.height]; })"""
        )
        assert len(boxes) > 100, len(boxes)
        assert min(w for w, _ in boxes) > 0.5, sorted(boxes)[:5]  # were 0 px ("h0" paths)
        # bars stand on the panel's floor: the tallest are tall, not ticks
        assert max(h for _, h in boxes) > 30, max(h for _, h in boxes)

    with checks.check("clicked pair full opacity, the others dimmed"):
        page.locator(_DOTS).first.click()
        page.wait_for_function(
            f"""() => [...document.querySelectorAll('{_DOTS}')]
                .filter((p) => Number(p.getAttribute('opacity') ?? 1) < 0.5).length
                    === {PAIRS_PER_PAGE - 1}""",
            timeout=SOFT_TIMEOUT_MS,
        )
        opacities = _opacities(page, _DOTS)
        assert opacities[0] == 1.0 and sum(o == 1.0 for o in opacities) == 1, opacities[:5]
    _shoot(page, artifacts, f"16_{kind}_02_clicked")

    # a refit; "done" only once the new charts are drawn
    page.evaluate(_WATCH_STATUS)
    updates = int(data_attr(page, "dataUpdates") or 0)
    page.select_option("select[data-trait=ties]", "add")
    wait_attr(page, "fits", "v === '2'", FIT_TIMEOUT_MS)
    wait_attr(page, "status", "v === 'done'", STEP_TIMEOUT_MS)
    with checks.check("status says done only after the new charts are drawn"):
        done_at = page.evaluate("() => window.__bbtDone")
        assert done_at and done_at[0] > updates, (done_at, updates)
    wait_attr(page, "dataUpdates", f"Number(v) > {updates}", STEP_TIMEOUT_MS)

    with checks.check("Enter applies a ROPE value"):
        updates = int(data_attr(page, "dataUpdates") or 0)
        band_before = _rope_band_width(page)
        rope_low = page.locator("input[data-trait=rope_low]")
        rope_low.click()
        rope_low.fill("0.3")
        rope_low.press("Enter")
        wait_attr(page, "dataUpdates", f"Number(v) > {updates}", SOFT_TIMEOUT_MS)
        assert _rope_band_width(page) > band_before + 1
        assert page.locator(".bbt-root").is_visible()  # the key did nothing to the notebook
    _shoot(page, artifacts, f"16_{kind}_03_rope_enter")

    # "Show pairs of" an algorithm outside the clicked pair
    top_label = page.evaluate(
        """() => [...document.querySelectorAll('.bbt-vega svg g.role-axis-label text')]
            .map((t) => t.textContent).find((t) => t.includes(' > '))"""
    )
    clicked = set(top_label.split(" > "))
    algorithms = page.evaluate(
        "() => [...document.querySelectorAll('select[data-trait=focus] option')]"
        ".map((o) => o.value).filter((v) => v)"
    )
    other = next(a for a in algorithms if a not in clicked)
    height_before = _svg_height(page)
    root_before = page.locator(".bbt-root").bounding_box()["height"]
    page.select_option("select[data-trait=focus]", other)
    page.wait_for_function(
        f"() => document.querySelectorAll('{_DOTS}').length === 15", timeout=STEP_TIMEOUT_MS
    )
    with checks.check("no dimming carried into 'Show pairs of'"):
        page.wait_for_function(
            f"""() => [...document.querySelectorAll('{_DOTS}')]
                .every((p) => Number(p.getAttribute('opacity') ?? 1) === 1)""",
            timeout=SOFT_TIMEOUT_MS,
        )
    with checks.check("the widget shrinks after filtering"):
        page.wait_for_function(
            f"() => document.querySelector('.bbt-vega svg').getBoundingClientRect().height"
            f" < {0.7 * height_before}",
            timeout=SOFT_TIMEOUT_MS,
        )
        assert page.locator(".bbt-root").bounding_box()["height"] < root_before - 500
    _shoot(page, artifacts, f"16_{kind}_04_focus")

    with checks.check("no Vega warnings during load, refit and filter"):
        assert _vega_warnings(console) == [], (
            len(_vega_warnings(console)),
            _vega_warnings(console)[:3],
        )
    checks.assert_none_failed()
    assert browser_context.blocked == [], browser_context.blocked
    assert widget_errors(errors) == []
    assert data_attr(page, "fits") == "2"


HOSTILE = """\
import bbt_widget as bbt
names = {
    "dt": '<img src=x onerror="window.__bbtXss = 1">',
    "lda": "<script>window.__bbtXss = 2</script>",
    "lgbm": "a > b",
    "svm": "x vs y",
}
wide = bbt.datasets.load_base().rename(columns=names)
wide["fold"] = wide.groupby("db").cumcount()
# two metrics, the second with a hostile name too (lower is better): the dominance view
long = wide.melt(id_vars=["db", "fold"], var_name="algorithm", value_name="acc")
cost = '<img src=y onerror="window.__bbtXss = 3">'
rank = {name: k for k, name in enumerate(names.values())}
long[cost] = long["algorithm"].map(rank).fillna(4) + 0.1 * long["fold"]
w = bbt.BBTWidget(
    long, dataset="db", algorithm="algorithm", fold="fold", score=["acc", cost],
    lower_is_better=[cost], seed=1,
)
w"""


def test_hostile_names_are_shown_literally(
    lab: Any, browser_context: Any, artifacts: Path, run_notebook: Any
) -> None:
    """Issue 9's security suite: names that are HTML run nothing and read as typed."""
    url = lab.write_notebook("hostile.ipynb", [HOSTILE])
    page = browser_context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    run_notebook(page, url, STEP_TIMEOUT_MS)
    page.wait_for_selector(".bbt-root", timeout=STEP_TIMEOUT_MS)
    wait_attr(page, "status", "v === 'done'", FIT_TIMEOUT_MS)
    wait_attr(page, "rendered", "v === 'true'", STEP_TIMEOUT_MS)
    assert page.locator(".bbt-error").is_hidden()
    assert page.locator(_DOTS).count() == 10
    # nothing ran, no element was made from a name
    assert page.evaluate("() => window.__bbtXss") is None
    assert dialogs == []
    assert page.locator(".bbt-root img, .bbt-root script").count() == 0
    # the names read as typed, in the controls and in the charts
    options = page.evaluate(
        "() => [...document.querySelectorAll('select[data-trait=focus] option')]"
        ".map((o) => o.textContent)"
    )
    for name in (
        '<img src=x onerror="window.__bbtXss = 1">',
        "<script>window.__bbtXss = 2</script>",
        "a > b",
        "x vs y",
    ):
        assert name in options, options
    page.locator(".bbt-checks > summary").click()  # the win matrix: in the model checks
    wait_attr(page, "checksRendered", "Number(v) > 0", STEP_TIMEOUT_MS)
    texts = page.evaluate(
        "() => [...document.querySelectorAll('.bbt-vega svg text, .bbt-vega-checks svg text')]"
        ".map((t) => t.textContent)"
    )
    assert any(t.startswith("<img src=x") for t in texts), texts[:20]
    assert any(t.startswith("<script>") for t in texts)
    assert "x vs y" in texts and "a > b" in texts  # matrix rows/columns
    # clicking a pair of such names highlights it (keys, not labels)
    page.locator(_DOTS).first.click()
    page.wait_for_function(
        f"""() => [...document.querySelectorAll('{_DOTS}')]
            .filter((p) => Number(p.getAttribute('opacity') ?? 1) < 0.5).length === 9""",
        timeout=STEP_TIMEOUT_MS,
    )
    # the dominance view of the two metrics: algorithm and metric names as text
    page.locator(".bbt-metrics-text").wait_for(state="hidden", timeout=FIT_TIMEOUT_MS)
    cells = page.evaluate(
        "() => [...document.querySelectorAll('.bbt-dominance td, .bbt-pareto-member')]"
        ".map((t) => t.textContent)"
    )
    cost = '<img src=y onerror="window.__bbtXss = 3">'
    assert '<img src=x onerror="window.__bbtXss = 1">' in cells, cells[:20]
    assert "<script>window.__bbtXss = 2</script>" in cells and "a > b" in cells
    assert any(cost in c for c in cells), cells[:20]  # a metric name, in "better on"
    metrics = page.evaluate(
        "() => [...document.querySelectorAll('select[data-trait=metric] option')]"
        ".map((o) => o.textContent)"
    )
    assert metrics == ["acc", cost]
    assert page.locator(".bbt-root img, .bbt-root script").count() == 0
    _shoot(page, artifacts, "hostile_names")
    assert page.evaluate("() => window.__bbtXss") is None and dialogs == []


# ---------------------------------------------------------------------------- robustness

#: Percent next to fractions (an audit warning); a small sweep (4 settings, short chains).
SETUP_ROBUST = """\
import bbt_widget as bbt
data = bbt.datasets.load_base()
data["svm"] = data["svm"] * 100
w = bbt.BBTWidget(
    data, dataset="db", seed=1, rho=0.25,
    sweep_options={"grid": {"ties": ["spread", "davidson"], "d_min": [None, 0.4]},
                   "chains": 2, "iter_warmup": 200, "iter_sampling": 200},
)
w"""

_ROBUST = ".bbt-robust-charts .bbt-vega-aux svg"


def _summary_texts(page: Any) -> list[str]:
    return page.evaluate(
        "() => [...document.querySelectorAll('.bbt-summary-charts .bbt-vega-aux svg text')]"
        ".map((t) => t.textContent)"
    )


#: Cells of the flips chart and bars of the influence chart (Vega-Lite's mark names).
_FLIPS = f"{_ROBUST} g.concat_0_marks path"
_INFLUENCE = f"{_ROBUST} g.concat_1_layer_0_marks path"


def test_robustness_section_and_audit_badge(
    lab: Any, browser_context: Any, artifacts: Path, run_notebook: Any
) -> None:
    """Issue 7: the audit badge, and the sweep run from its button in the background with
    progress; its flips chart and the influence chart follow the highlighted pair."""
    url = lab.write_notebook("robustness.ipynb", [SETUP_ROBUST])
    page = browser_context.new_page()
    errors: list[str] = []
    console: list[Any] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: console.append(msg))
    run_notebook(page, url, STEP_TIMEOUT_MS)
    page.wait_for_selector(".bbt-root", timeout=STEP_TIMEOUT_MS)
    wait_attr(page, "status", "v === 'done'", FIT_TIMEOUT_MS)
    wait_attr(page, "rendered", "v === 'true'", STEP_TIMEOUT_MS)

    # the audit badge: count, findings in its tooltip and, on a click, as a list
    badge = page.locator(".bbt-audit-badge")
    assert badge.inner_text() == "data: 1 warning"
    assert "percentages" in badge.get_attribute("title")
    badge.click()
    listing = page.locator(".bbt-audit-list")
    listing.wait_for(state="visible", timeout=STEP_TIMEOUT_MS)
    assert "percentages" in listing.locator(".bbt-audit-warning").first.inner_text()
    assert listing.locator(".bbt-audit-note").count() >= 1
    _shoot(page, artifacts, "robust_01_audit")

    # issue 8: the report's ranking chart and weak/strong decision matrices, in the widget
    wait_attr(page, "summaryRendered", "Number(v) > 0", FIT_TIMEOUT_MS)
    texts = _summary_texts(page)
    long_texts = [t for t in texts if len(t) > 12]
    assert any(t.startswith("Ranking: ability") for t in texts), long_texts
    assert any(t.startswith("weak (Sec. 9.2)") for t in texts), long_texts
    assert any(t.startswith("strong (Sec. 9.3)") for t in texts), long_texts
    # the data came along: three dots per algorithm (mean ability and expected rank in the
    # ranking, its place in the critical-difference diagram), a cell per ordered pair and
    # interpretation
    assert page.locator(".bbt-summary-charts svg g.mark-symbol.role-mark path").count() == 15
    cells = ".bbt-summary-charts svg g.mark-rect.role-mark path"
    assert page.locator(cells).count() >= 2 * 20, page.locator(cells).count()
    page.locator(".bbt-summary-charts").screenshot(path=str(artifacts / "browser_summary_5.png"))

    # the sweep: button -> progress (kernel free) -> flips chart
    page.locator(".bbt-sweep-run").click()
    wait_attr(page, "sweep", "['queued', 'compiling', 'fitting'].includes(v)", STEP_TIMEOUT_MS)
    assert page.locator(".bbt-sweep-cancel").is_visible()
    wait_attr(page, "sweep", "v === 'done'", FIT_TIMEOUT_MS)
    wait_attr(page, "robustRendered", "Number(v) > 0", STEP_TIMEOUT_MS)
    assert page.locator(".bbt-sweep-cancel").is_hidden()
    assert re.match(
        r"4 fits \(in \d+ s\): \d+ of 10 pairs", page.locator(".bbt-sweep-text").inner_text()
    )
    # the settings are the flips chart's columns
    labels = page.evaluate(
        f"() => [...document.querySelectorAll('{_ROBUST} g.role-axis-label text')]"
        ".map((t) => t.textContent)"
    )
    assert any("davidson" in t for t in labels), labels
    _shoot(page, artifacts, "robust_02_sweep")

    # highlighting a pair in the intervals chart: its row in the flips chart (one cell per
    # setting) and, once computed in the background, its most influential data sets
    page.locator(_DOTS).first.click()
    page.wait_for_function(
        f"""() => [...document.querySelectorAll('{_FLIPS}')]
            .filter((p) => Number(p.getAttribute('opacity') ?? 1) === 1).length === 4""",
        timeout=STEP_TIMEOUT_MS,
    )
    page.wait_for_function(
        f"() => document.querySelectorAll('{_INFLUENCE}').length === 10",
        timeout=FIT_TIMEOUT_MS,
    )
    _shoot(page, artifacts, "robust_03_highlight")

    # issue 11: clicking a data set in the influence chart shows its correlated t-test
    # posterior for the highlighted pair (density and ROPE band); the pair stays highlighted
    page.locator(_INFLUENCE).first.click()
    wait_attr(page, "ttestRendered", "Number(v) > 0", STEP_TIMEOUT_MS)
    ttest = ".bbt-ttest-charts .bbt-vega-aux svg"
    title = page.locator(f"{ttest} g.role-title text").first.text_content() or ""
    assert "P(rope)" in title, title
    assert page.locator(f"{ttest} g.mark-rect.role-mark path").count() == 1  # the ROPE band
    # the density, and beside it the pair's signed-rank simplex: its three shaded regions,
    # its draws (50000, thinned to at most 3000) and the labels of its three vertices
    assert page.locator(f"{ttest} g.mark-area.role-mark path").count() == 1 + 3
    assert 1000 <= page.locator(f"{ttest} g.mark-symbol.role-mark path").count() <= 3000
    vertices = page.locator(f"{ttest} g.mark-text.role-mark text").all_text_contents()
    assert "rope" in vertices and sum(v.endswith(" better") for v in vertices) == 2, vertices
    assert page.locator(_INFLUENCE).count() == 10  # the highlight was kept
    # the "Ranking model" switch: Plackett-Luce fitted in the background, beside BBT
    page.locator(".bbt-ranking-model").select_option("both")
    wait_attr(page, "plRendered", "Number(v) > 0", FIT_TIMEOUT_MS)
    pl_texts = page.evaluate(
        "() => [...document.querySelectorAll('.bbt-pl-charts svg text')].map((t) => t.textContent)"
    )
    assert "BBT vs Plackett-Luce" in pl_texts, pl_texts[:20]
    assert page.locator(".bbt-summary-charts").is_visible()  # both: BBT's ranking stays
    _shoot(page, artifacts, "robust_04_ttest_and_pl")
    assert _vega_warnings(console) == [], _vega_warnings(console)[:3]
    assert browser_context.blocked == [], browser_context.blocked
    assert errors == []


# ---------------------------------------------------------------------------- previews

#: A longer full fit (4 x 3000 draws) than the preview (a Laplace approximation), so
#: that the preview is on screen for a while; the second cell reads the final state. On
#: PyStan: the numpy engine's exact fit is shown with no preview.
SETUP_PREVIEW = """\
import bbt_widget as bbt
w = bbt.BBTWidget(bbt.datasets.load_base(), dataset="db", seed=3, d_min=0.2, iter_sampling=3000,
                  engine="pystan")
w"""
FINAL_CELL = """\
import json
w.wait()
print("FINAL", json.dumps({"preview": w.preview, "d_min": w.result.settings["d_min"],
    "p": w.summary[["mean", "low", "high"]].round(12).values.tolist(),
    "pairs": w.summary["pair"].tolist()}))"""

#: Records every (preview marker, badge text, status) the widget shows, from now on.
_RECORD_PREVIEW = """() => {
    const el = document.querySelector('.bbt-root').parentElement;
    const badge = () => el.querySelector('.bbt-diag-badge');
    const note = () => el.querySelector('.bbt-preview-note');
    window.__bbtSeen = [];
    const record = () => window.__bbtSeen.push({
        preview: el.dataset.preview, badge: badge().textContent,
        note: !note().hidden, status: el.dataset.status,
    });
    new MutationObserver(record).observe(el, {
        subtree: true, attributes: true, childList: true, characterData: true,
    });
}"""


def test_dragging_d_min_shows_a_preview_then_the_full_fit(
    lab: Any, browser_context: Any, artifacts: Path, run_notebook: Any
) -> None:
    """Issue 10: dragging the d_min slider shows a preview (marked in the DOM: data-preview,
    the badge, the note on the decisions), then the full fit, whose numbers equal a direct
    ``bbt.fit`` with the final settings."""
    import bbt_widget as bbt

    url = lab.write_notebook("preview.ipynb", [SETUP_PREVIEW, FINAL_CELL])
    page = browser_context.new_page()
    run_notebook(page, url, STEP_TIMEOUT_MS)
    page.wait_for_selector(".bbt-root", timeout=STEP_TIMEOUT_MS)
    wait_attr(page, "status", "v === 'done'", FIT_TIMEOUT_MS)
    wait_attr(page, "preview", "v === 'false'", STEP_TIMEOUT_MS)
    page.locator(".jp-OutputArea-output", has_text="FINAL").wait_for(timeout=FIT_TIMEOUT_MS)
    assert page.locator(".bbt-preview-note").is_hidden()
    page.evaluate(_RECORD_PREVIEW)

    # drag the slider's thumb from its value (0.2) across most of its range
    slider = page.locator("input[data-trait=d_min]")
    slider.scroll_into_view_if_needed()
    box = slider.bounding_box()
    low, high = float(slider.get_attribute("min")), float(slider.get_attribute("max"))
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] * (0.2 - low) / (high - low), y)
    page.mouse.down()
    for i in range(1, 21):
        page.mouse.move(box["x"] + box["width"] * (0.15 + 0.035 * i), y)
    page.mouse.up()
    final_d_min = float(slider.input_value())
    assert final_d_min > 0.6, final_d_min

    # the preview first (marker on, badge "preview", the decisions' note shown) ...
    wait_attr(page, "preview", "v === 'true'", FIT_TIMEOUT_MS)
    assert page.locator(".bbt-diag-badge").inner_text() == "preview"
    assert page.locator(".bbt-preview-note").is_visible()
    _shoot(page, artifacts, "preview_shown")
    # ... then the full fit: marker gone, the badge says what the diagnostics found
    wait_attr(page, "preview", "v === 'false'", FIT_TIMEOUT_MS)
    wait_attr(page, "status", "v === 'done'", STEP_TIMEOUT_MS)
    badge = page.locator(".bbt-diag-badge").inner_text()
    assert badge.startswith(("diagnostics fine", "check")), badge
    assert page.locator(".bbt-preview-note").is_hidden()
    _shoot(page, artifacts, "preview_replaced")
    seen = page.evaluate("() => window.__bbtSeen")
    shown = [i for i, s in enumerate(seen) if s["preview"] == "true"]
    assert shown and all(seen[i]["badge"] == "preview" and seen[i]["note"] for i in shown)
    assert seen[-1]["preview"] == "false" and max(shown) < len(seen) - 1

    # the final numbers: the kernel's state equals a direct fit with the final settings
    page.evaluate(
        """() => {
            const panel = window.jupyterapp.shell.currentWidget;
            panel.content.activeCellIndex = 1;
            return window.jupyterapp.commands.execute('notebook:run-cell');
        }"""
    )
    output = page.locator(".jp-OutputArea-output", has_text=f'"d_min": {final_d_min}')
    output.wait_for(timeout=FIT_TIMEOUT_MS)
    state = json.loads(output.inner_text().split("FINAL", 1)[1])
    assert state["preview"] is False
    direct = bbt.fit(
        bbt.datasets.load_base(),
        dataset="db",
        seed=3,
        d_min=final_d_min,
        iter_sampling=3000,
        engine="pystan",
    ).summary()
    assert state["pairs"] == direct["pair"].tolist()
    assert state["p"] == direct[["mean", "low", "high"]].round(12).values.tolist()
