"""A new widget imports Altair in the background while its first fit runs (the summary charts
need it once the fit is done), and only then: ``import bbt_widget`` does not."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from bbt_widget.widget import warm
from bbt_widget.widget.app import BBTWidget

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A stand-in for Altair: a module not imported yet, which the warm-up imports instead."""
    name = "bbt_warm_probe"
    (tmp_path / f"{name}.py").write_text("IMPORTED = True\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(warm, "MODULE", name)
    monkeypatch.delitem(sys.modules, name, raising=False)
    return name


def _imported(name: str, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while name not in sys.modules and time.monotonic() < deadline:
        time.sleep(0.02)
    return name in sys.modules


def test_creating_the_widget_starts_the_import(base: pd.DataFrame, probe: str) -> None:
    w = BBTWidget(base, dataset="db", engine="numpy", stan_check=False)
    try:
        assert _imported(probe)
        assert w.wait(60)
    finally:
        w.close()


def test_a_widget_that_fits_nothing_imports_nothing(base: pd.DataFrame, probe: str) -> None:
    w = BBTWidget(base, dataset="db", autostart=False)
    try:
        time.sleep(0.3)
        assert probe not in sys.modules
    finally:
        w.close()


def test_warm_up_is_a_daemon_thread_started_once(probe: str) -> None:
    thread = warm.warm_altair()
    assert thread is not None and thread.daemon
    thread.join(10)
    assert probe in sys.modules
    assert warm.warm_altair() is None  # imported: no second thread


def test_a_failing_import_is_left_to_the_chart_that_needs_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(warm, "MODULE", "bbt_no_such_module_here")
    thread = warm.warm_altair()
    assert thread is not None
    thread.join(10)
    assert not thread.is_alive()


def test_importing_the_package_and_the_widget_class_leaves_altair_unloaded() -> None:
    code = (
        "import sys\nimport bbt_widget\nfrom bbt_widget import BBTWidget\n"
        "print('altair' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert out.stdout.split() == ["False"]
