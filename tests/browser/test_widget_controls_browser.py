"""The control panel in real JupyterLab and Notebook 7 with headless Chromium, network cut:
operable from the keyboard (the host's shortcuts must not eat the arrow keys of the d_min
slider or of a drop-down), every control named by a label tied to it (ids unique on a page
with two widgets), the metric row absent with one metric, invalid values refused (the trait and
the input back at the last good value, the reason shown beside the control), and a failed fit
said on the diagnostics badge rather than "diagnostics fine".

Numpy-engine fits of the paper's base results (a second or so each).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from widget_page import data_attr, wait_attr

pytestmark = [pytest.mark.browser]

FIT_TIMEOUT_MS = 300_000
STEP_TIMEOUT_MS = 60_000

#: Two widgets on one page: the ids of their controls must not collide. The first has the
#: local ROPE on (the d_min slider is live only then).
CELLS = [
    """\
import bbt_widget as bbt
w = bbt.BBTWidget(bbt.datasets.load_base(), dataset="db", d_min=0.4, seed=1, stan_check=False)
w""",
    """\
w2 = bbt.BBTWidget(bbt.datasets.load_base(), dataset="db", autostart=False, stan_check=False)
w2""",
]

#: Visible controls of the panels with no label tied to them (``<label for=id>``).
_UNTIED = """() => [...document.querySelectorAll(
        '.bbt-root .bbt-controls input, .bbt-root .bbt-controls select')]
    .filter((el) => el.offsetParent !== null)
    .filter((el) => !el.id || ![...el.labels].some((l) => l.htmlFor === el.id))
    .map((el) => el.outerHTML.slice(0, 120))"""

#: Ids used more than once on the page.
_DUPLICATE_IDS = """() => {
    const ids = [...document.querySelectorAll('.bbt-root [id]')].map((el) => el.id);
    return ids.filter((id, i) => ids.indexOf(id) !== i);
}"""

#: A Python expression evaluated in the notebook's kernel, as its repr.
_KERNEL_VALUE = """async (expr) => {
    const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
    const reply = await kernel.requestExecute({ code: '', user_expressions: { v: expr } }).done;
    const v = reply.content.user_expressions.v;
    return v.status === 'ok' ? v.data['text/plain'] : `error: ${v.ename}: ${v.evalue}`;
}"""


#: Values typed into a control that it cannot take: (trait, typed, the kernel's value kept,
#: the input's text after the refusal, what the reason beside the control says).
_REFUSED = [
    ("tie_threshold", "-1", "0.0", "0", "finite number >= 0"),
    ("prior_scale", "-1", "0.5", "0.5", "a number from 1e-06 to 1e+06"),
    ("hdi", "0.3", "0.89", "0.89", "hdi must lie in [0.5, 0.99]"),
]


def _kernel_value(page: Any, expr: str) -> str:
    return str(page.evaluate(_KERNEL_VALUE, expr))


def _wait_kernel(page: Any, expr: str, expected: str, timeout_s: float = 30.0) -> None:
    """Wait until ``expr`` has the repr ``expected`` in the kernel."""
    deadline = time.monotonic() + timeout_s
    value = _kernel_value(page, expr)
    while value != expected and time.monotonic() < deadline:
        time.sleep(0.25)
        value = _kernel_value(page, expr)
    assert value == expected, f"{expr} = {value}, expected {expected}"


def _run_in_kernel(page: Any, code: str) -> None:
    page.evaluate(
        """(code) => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel
            .requestExecute({ code }).done""",
        code,
    )


#: Notebook 7 runs the layout tests; the rest of the behaviour is the same code in JupyterLab.
@pytest.mark.parametrize("frontend", ["lab"], indirect=True)
def test_controls_work_from_the_keyboard_and_refuse_bad_values(
    frontend: Any,
    browser_context: Any,
    artifacts: Path,
    run_notebook: Any,
    widget_errors: Any,
    soft_checks: Any,
) -> None:
    kind = frontend.kind
    checks = soft_checks
    url = frontend.write_notebook("controls.ipynb", CELLS)
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"{exc.message} @ {exc.stack}"))
    run_notebook(page, url, STEP_TIMEOUT_MS)
    page.wait_for_function(
        "() => document.querySelectorAll('.bbt-root').length === 2", timeout=STEP_TIMEOUT_MS
    )
    wait_attr(page, "status", "v === 'done'", FIT_TIMEOUT_MS)
    wait_attr(page, "rendered", "v === 'true'", STEP_TIMEOUT_MS)
    widget = page.locator(".bbt-root").first

    with checks.check("every control has a label tied to it, ids unique on the page"):
        assert page.evaluate(_UNTIED) == []
        assert page.evaluate(_DUPLICATE_IDS) == []
        direction = widget.locator("select[data-trait=lower_is_better]")
        labels = direction.evaluate("(el) => [...el.labels].map((l) => l.textContent)")
        assert labels and "Metric" not in labels, labels

    with checks.check("one metric: no metric row"):
        assert widget.locator("select[data-trait=metric]").count() <= 1
        assert not widget.locator("select[data-trait=metric]").is_visible()
        assert "Metric" not in widget.locator(".bbt-controls").inner_text()

    with checks.check("arrow keys move the d_min slider"):
        fits = int(data_attr(page, "fits"))
        slider = widget.locator("input[data-trait=d_min]")
        assert slider.is_enabled()
        slider.focus()
        slider.press("ArrowRight")
        _wait_kernel(page, "w.d_min", "0.45")
        wait_attr(page, "fits", f"Number(v) > {fits}", STEP_TIMEOUT_MS)
        wait_attr(page, "status", "v === 'done'", STEP_TIMEOUT_MS)
        assert slider.input_value() == "0.45"

    with checks.check("arrow keys move a drop-down"):
        select = widget.locator("select[data-trait=interpretation]")
        before = select.input_value()
        select.focus()
        select.press("ArrowDown" if select.evaluate("(s) => s.selectedIndex") == 0 else "ArrowUp")
        after = select.input_value()
        assert after != before
        _wait_kernel(page, "w.interpretation", repr(after))

    with checks.check("an invalid ROPE is refused: the trait keeps its value, the reason shown"):
        rope_low = widget.locator("input[data-trait=rope_low]")
        rope_low.fill("0.8")
        rope_low.press("Tab")
        message = widget.locator(".bbt-message")
        message.wait_for(state="visible", timeout=STEP_TIMEOUT_MS)
        assert "rope low must be below rope high" in message.inner_text()
        _wait_kernel(page, "(w.rope_low, w.rope_high)", "(0.45, 0.55)")
        page.wait_for_function(
            "() => document.querySelector('.bbt-root input[data-trait=rope_low]').value === '0.45'",
            timeout=STEP_TIMEOUT_MS,
        )
        beside = widget.locator(".bbt-refused[data-refused~=rope_low]")
        assert "rope_low = 0.8 not applied" in beside.inner_text()

    for name, typed, kept, shown, reason in _REFUSED:
        with checks.check(f"{name} = {typed} is refused beside its control, the last good kept"):
            fits = int(data_attr(page, "fits"))
            box = widget.locator(f"input[data-trait={name}]")
            box.fill(typed)
            box.press("Tab")
            beside = widget.locator(f".bbt-refused[data-refused~={name}]")
            beside.wait_for(state="visible", timeout=STEP_TIMEOUT_MS)
            text = beside.inner_text()
            assert f"{name} = {float(typed)!r} not applied" in text and reason in text, text
            _wait_kernel(page, f"w.{name}", kept)
            page.wait_for_function(
                "([name, shown]) => document.querySelector("
                "`.bbt-root input[data-trait=${name}]`).value === shown",
                arg=[name, shown],
                timeout=STEP_TIMEOUT_MS,
            )
            assert int(data_attr(page, "fits")) == fits  # no fit started
            assert data_attr(page, "status") == "done"  # the last good results still shown

    with checks.check("the diagnostics badge is reached by Tab and names its details"):
        badge = widget.locator(".bbt-diag-badge")
        widget.locator(".bbt-audit-badge").focus()
        page.keyboard.press("Shift+Tab")  # the badge just before it in the Tab order
        assert badge.evaluate("(el) => el === document.activeElement")
        spoken = badge.get_attribute("aria-label") or ""
        assert spoken.startswith(badge.inner_text()) and "R-hat max" in spoken, spoken

    with checks.check("after a failed fit the badge says so"):
        badge = widget.locator(".bbt-diag-badge")
        assert badge.inner_text().startswith("diagnostics fine")
        _run_in_kernel(
            page,
            "from bbt_widget.fitting import PreparedFit\n"
            "def _fails(*args, **kwargs):\n"
            "    raise RuntimeError('the sampler exploded')\n"
            "PreparedFit.sample = _fails\n"
            "w.prior_scale = 0.9",
        )
        wait_attr(page, "status", "v === 'error'", STEP_TIMEOUT_MS)
        page.wait_for_function(
            "() => /fit failed/.test(document.querySelector('.bbt-diag-badge').textContent)",
            timeout=STEP_TIMEOUT_MS,
        )
        assert "diagnostics fine" not in badge.inner_text()
        assert "last good fit" in (badge.get_attribute("title") or "") + badge.inner_text()

    widget.screenshot(path=str(artifacts / f"browser_controls_{kind}.png"))
    checks.assert_none_failed()
    assert widget_errors(errors) == []
    assert browser_context.blocked == []
