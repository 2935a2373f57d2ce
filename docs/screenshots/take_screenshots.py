"""Retake the widget screenshots that ``docs/widget.md`` shows, from a real headless run.

Each shot opens a notebook in JupyterLab 4 or Notebook 7 (started on localhost by the browser
tests' harness, ``tests/browser/conftest.py``, with Debian's Chromium and the network cut),
runs the widget on its data, waits until the fit is done and every view is drawn and none is
marked stale, and saves the widget's first screen (its top ``SCREEN_HEIGHT`` pixels, not the
whole page) as a PNG.

Run from the repository root::

    python docs/screenshots/take_screenshots.py [--out DIR]

``SHOTS`` lists every screenshot by file name; ``tests/unit/test_docs_screenshots.py`` checks
that each PNG in this folder is one of them.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
BROWSER_TESTS = REPO / "tests" / "browser"
sys.path.insert(0, str(BROWSER_TESTS))  # the browser tests' page helpers

from widget_page import wait_attr  # noqa: E402

#: Height (px) of the first screen kept of each widget.
SCREEN_HEIGHT = 900
FIT_TIMEOUT_MS = 600_000
STEP_TIMEOUT_MS = 120_000

_BASE = """\
import bbt_widget as bbt
w = bbt.BBTWidget(bbt.datasets.load_base(), dataset="db", seed=1, stan_check=False)
w"""
_PMLB16 = """\
import bbt_widget as bbt
w = bbt.BBTWidget(
    bbt.datasets.load_pmlb16(), dataset="db", paired=False, seed=1, stan_check=False
)
w"""
# the browser scale test's data (tests/browser/simulated.py), by the same function
_SIMULATED50 = f"""\
import sys
sys.path.insert(0, {str(BROWSER_TESTS)!r})
import bbt_widget as bbt
from simulated import simulated_results
w = bbt.BBTWidget(
    simulated_results(50, 30, 3), dataset="dataset", algorithm="algorithm", fold="fold",
    score="score", seed=1, stan_check=False,
)
w"""


@dataclass(frozen=True)
class Shot:
    """One screenshot: its file name, front end, window width and notebook cell."""

    name: str
    frontend: str  # "lab" (JupyterLab 4) or "notebook" (Notebook 7)
    width: int
    cell: str
    #: JupyterLab with its file browser open (the widget is then about 570 px wide).
    file_browser: bool = False


#: Every screenshot ``docs/widget.md`` shows.
SHOTS = (
    Shot("widget_5_algorithms.png", "lab", 1400, _BASE),
    Shot("widget_16_algorithms.png", "lab", 1400, _PMLB16),
    Shot("widget_50_algorithms.png", "lab", 1400, _SIMULATED50),
    Shot("widget_16_algorithms_narrow.png", "lab", 1000, _PMLB16, file_browser=True),
    Shot("widget_16_algorithms_notebook7.png", "notebook", 1000, _PMLB16),
)


def _harness() -> ModuleType:
    """``tests/browser/conftest.py`` (JupyterLab + offline Chromium), loaded by path: a
    conftest is no importable module (``benchmarks/bench_widget.py`` loads it the same way)."""
    spec = importlib.util.spec_from_file_location(
        "_bbt_browser_harness", BROWSER_TESTS / "conftest.py"
    )
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load the browser harness at {BROWSER_TESTS}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _wait_drawn(page: Any) -> None:
    """Until the fit is done, the summary and main views are drawn and none is stale."""
    page.wait_for_selector(".bbt-root", timeout=STEP_TIMEOUT_MS)
    wait_attr(page, "status", "v === 'done'", FIT_TIMEOUT_MS)
    wait_attr(page, "rendered", "v === 'true'", STEP_TIMEOUT_MS)
    wait_attr(page, "summaryRendered", "Number(v) > 0", STEP_TIMEOUT_MS)
    wait_attr(page, "stale", "v === ''", STEP_TIMEOUT_MS)


def take(shot: Shot, harness: ModuleType, lab: Any, context: Any, out: Path) -> Path:
    """Open ``shot``'s notebook on ``lab``, wait for the drawn widget and save its first screen.

    Returns
    -------
    pathlib.Path
        The PNG written.
    """
    url = lab.write_notebook(shot.name.replace(".png", ".ipynb"), [shot.cell])
    page = context.new_page()
    try:
        # tall while it draws (JupyterLab scrolls inside itself), so every view is laid out
        page.set_viewport_size({"width": shot.width, "height": SCREEN_HEIGHT + 600})
        harness.open_and_run(page, url, STEP_TIMEOUT_MS)
        _wait_drawn(page)
        if shot.file_browser:
            page.evaluate("window.jupyterapp.commands.execute('filebrowser:activate')")
        page.wait_for_timeout(1500)  # the charts reflow to the width (ResizeObserver)
        _wait_drawn(page)
        box = page.locator(".bbt-root").bounding_box()
        if box is None:
            raise RuntimeError(f"{shot.name}: the widget is not on the page")
        path = out / shot.name
        page.screenshot(
            path=str(path),
            clip={
                "x": box["x"],
                "y": box["y"],
                "width": box["width"],
                "height": min(box["height"], SCREEN_HEIGHT),
            },
        )
        return path
    finally:
        page.evaluate("window.jupyterapp.commands.execute('kernelmenu:shutdown')")
        page.close()


def take_all(out: Path, names: list[str] | None = None) -> list[Path]:
    """Take the shots named in ``names`` (all of ``SHOTS`` when None) into ``out``."""
    from playwright.sync_api import sync_playwright

    shots = [s for s in SHOTS if names is None or s.name in names]
    unknown = set(names or ()) - {s.name for s in SHOTS}
    if unknown:
        raise SystemExit(f"unknown screenshot(s) {sorted(unknown)}: choose from SHOTS")
    out.mkdir(parents=True, exist_ok=True)
    harness = _harness()
    written = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        for frontend in ("lab", "notebook"):
            todo = [s for s in shots if s.frontend == frontend]
            if not todo:
                continue
            root, home = Path(tmp, frontend, "root"), Path(tmp, frontend, "home")
            root.mkdir(parents=True)
            home.mkdir(parents=True)
            with harness.jupyter_server(frontend, root, home) as lab:
                context = harness.offline_context(pw, Path(tmp, frontend, "profile"))
                try:
                    for shot in todo:
                        written.append(take(shot, harness, lab, context, out))
                        print(f"{written[-1]}: {written[-1].stat().st_size // 1024} KB")
                finally:
                    context.close()
                if context.blocked:
                    raise RuntimeError(f"the widget asked the network: {context.blocked}")
    return written


def main(argv: list[str] | None = None) -> None:
    """Command line: ``--out DIR`` (default: this folder), ``--only NAME ...``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE, help="folder for the PNGs")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these file names")
    args = parser.parse_args(argv)
    take_all(args.out, args.only)


if __name__ == "__main__":
    main()
