"""The widget with data sets in groups in real JupyterLab and headless Chromium, network cut:
the Group selector switches the views to one group, and the pairs x groups decision heatmap
draws, outlining the chosen group; hostile algorithm and group names stay text.

Real Stan fits of the group model (short chains); screenshots go to ``artifacts/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from widget_page import data_attr, wait_attr

pytestmark = [pytest.mark.browser, pytest.mark.stan]

FIT_TIMEOUT_MS = 300_000  # a first fit on a new machine compiles the group model
STEP_TIMEOUT_MS = 60_000

#: 4 algorithms x 16 data sets in 2 families; X beats W in one family and loses in the other.
SIMULATED = """\
import numpy as np, pandas as pd
import bbt_widget as bbt
NAMES = {names!r}
GROUPS = {groups!r}
rng = np.random.default_rng(3)
rows = []
for family, shift in zip(GROUPS, (1.5, -1.5)):
    for d in range(8):
        base = rng.normal(0, 1)
        for fold in range(2):
            score = [base - 0.5 * k + rng.normal(0, 0.3) for k in range(4)]
            score[0] -= shift / 2
            score[1] += shift / 2
            rows.append({{"db": f"{{family}}-{{d}}", "family": family, "fold": fold,
                         **dict(zip(NAMES, score))}})
w = bbt.BBTWidget(pd.DataFrame(rows), dataset="db", fold="fold", group="family",
                  chains=2, iter_warmup=300, iter_sampling=300, seed=1, stan_check=False)
w"""

#: Heatmap cells (Vega-Lite's rect marks) in the group view.
_CELLS = ".bbt-groups-charts svg g.mark-rect.role-mark path"


def _outlined(page: Any) -> int:
    """Heatmap cells drawn with the chosen group's black outline."""
    return page.evaluate(
        f"""() => [...document.querySelectorAll('{_CELLS}')]
            .filter((p) => (p.getAttribute('stroke') || '').toLowerCase() === '#000000')
            .length"""
    )


def _open(page: Any, lab: Any, run_notebook: Any, name: str, names: list[str], groups: list[str]):
    url = lab.write_notebook(name, [SIMULATED.format(names=names, groups=groups)])
    run_notebook(page, url, STEP_TIMEOUT_MS)
    page.wait_for_selector(".bbt-root", timeout=STEP_TIMEOUT_MS)
    wait_attr(page, "status", "v === 'done'", FIT_TIMEOUT_MS)
    wait_attr(page, "rendered", "v === 'true'", STEP_TIMEOUT_MS)
    wait_attr(page, "groupsRendered", "Number(v) > 0", STEP_TIMEOUT_MS)


def test_choosing_a_group_redraws_the_views_and_the_heatmap_shows_every_group(
    lab: Any, browser_context: Any, artifacts: Path, run_notebook: Any, widget_errors: Any
) -> None:
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"{exc.message} @ {exc.stack}"))
    _open(page, lab, run_notebook, "groups.ipynb", ["W", "X", "Y", "Z"], ["tabular", "text"])

    # the selector: pooled first, then each group, with a tooltip like every control
    select = page.locator("select.bbt-group-select")
    assert select.is_visible()
    assert select.get_attribute("title")
    options = select.locator("option").all_inner_texts()
    assert options == ["All (pooled)", "tabular", "text"]
    # the heatmap: 6 pairs x (pooled + 2 groups), the pooled column outlined
    assert page.locator(_CELLS).count() == 18
    assert _outlined(page) == 6
    texts = page.evaluate(
        "() => [...document.querySelectorAll('.bbt-groups-charts svg text')]"
        ".map((t) => t.textContent)"
    )
    assert {"All (pooled)", "tabular", "text"} <= set(texts)
    assert "≠ W > X" in texts or "≠ X > W" in texts  # the pair the families disagree on
    headline = page.locator(".bbt-headline")
    assert not headline.inner_text().startswith("In group")
    page.screenshot(path=str(artifacts / "browser_groups_pooled.png"))

    # choosing a group re-summarises (no fit): the headline names it, the charts redraw, the
    # heatmap outlines its column
    updates = int(data_attr(page, "dataUpdates") or 0)
    fits = data_attr(page, "fits")
    select.select_option(label="text")
    page.wait_for_function(
        "() => document.querySelector('.bbt-headline').textContent.startsWith('In group text: ')",
        timeout=STEP_TIMEOUT_MS,
    )
    wait_attr(page, "selectedGroup", "v === '1'", STEP_TIMEOUT_MS)
    wait_attr(page, "dataUpdates", f"Number(v) > {updates}", STEP_TIMEOUT_MS)
    page.wait_for_function(
        f"""() => [...document.querySelectorAll('{_CELLS}')]
            .filter((p) => (p.getAttribute('stroke') || '') === '#000000').length === 6""",
        timeout=STEP_TIMEOUT_MS,
    )
    assert select.input_value() == "1"
    assert data_attr(page, "fits") == fits  # a view control: no fit
    page.locator(".bbt-groups").screenshot(path=str(artifacts / "browser_groups_heatmap.png"))
    page.locator(".bbt-root").screenshot(path=str(artifacts / "browser_groups_text_widget.png"))

    # back to every data set pooled
    select.select_option(label="All (pooled)")
    page.wait_for_function(
        "() => !document.querySelector('.bbt-headline').textContent.startsWith('In group')",
        timeout=STEP_TIMEOUT_MS,
    )
    assert browser_context.blocked == [], browser_context.blocked
    assert widget_errors(errors) == []


#: Algorithm and group names that are HTML, and a group name with a bidi override.
HOSTILE_NAMES = [
    '<img src=x onerror="window.__bbtXss = 1">',
    "<script>window.__bbtXss = 2</script>",
    "a > b",
    "x vs y",
]
HOSTILE_GROUPS = ['<img src=y onerror="window.__bbtXss = 3">', "<b>bold</b> \u202eright"]


def test_hostile_algorithm_and_group_names_are_shown_literally(
    lab: Any, browser_context: Any, artifacts: Path, run_notebook: Any
) -> None:
    page = browser_context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    _open(page, lab, run_notebook, "groups_hostile.ipynb", HOSTILE_NAMES, HOSTILE_GROUPS)
    assert page.locator(".bbt-error").is_hidden()
    assert page.locator(_CELLS).count() == 6 * 3
    # nothing ran, no element was made from a name
    assert page.evaluate("() => window.__bbtXss") is None and dialogs == []
    assert page.locator(".bbt-root img, .bbt-root script, .bbt-root b").count() == 0
    # the selector and the heatmap show the names as typed
    options = page.locator("select.bbt-group-select option").all_inner_texts()
    assert options == ["All (pooled)", *HOSTILE_GROUPS]
    texts = page.evaluate(
        "() => [...document.querySelectorAll('.bbt-groups-charts svg text')]"
        ".map((t) => t.textContent)"
    )
    # (labels longer than 40 characters end in an ellipsis)
    assert any(t.startswith("<img src=y onerror=") for t in texts), texts
    assert HOSTILE_GROUPS[1] in texts, texts
    assert any(t.startswith(("≠ <img src=x", "= <img src=x", "<img src=x")) for t in texts)
    assert any("<script>window.__bbtXss = 2</script>" in t for t in texts), texts
    # choosing the hostile group: the headline names it as text, still nothing runs
    page.locator("select.bbt-group-select").select_option(index=1)
    page.wait_for_function(
        "(name) => document.querySelector('.bbt-headline').textContent"
        ".startsWith(`In group ${name}: `)",
        arg=HOSTILE_GROUPS[0],
        timeout=STEP_TIMEOUT_MS,
    )
    wait_attr(page, "selectedGroup", "v === '0'", STEP_TIMEOUT_MS)
    page.locator(".bbt-root").screenshot(path=str(artifacts / "browser_groups_hostile_widget.png"))
    assert page.evaluate("() => window.__bbtXss") is None and dialogs == []
    assert page.locator(".bbt-root img, .bbt-root script, .bbt-root b").count() == 0
    assert browser_context.blocked == [], browser_context.blocked
