"""RunContext: the one object that carries a job's progress and cancel below the front doors."""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import pytest

from bbt_widget.core.run_context import QUIET, FitCancelled, RunContext
from bbt_widget.core.settling import STAGE, later_rounds

PACKAGE = Path(__file__).resolve().parents[2] / "bbt_widget"


def test_reports_and_stops_as_told() -> None:
    seen: list[tuple[str, float]] = []
    stop = threading.Event()
    context = RunContext(lambda stage, fraction: seen.append((stage, fraction)), stop)
    context.report("sampling", 0.5)
    context.check()
    stop.set()
    assert context.cancelled
    with pytest.raises(FitCancelled, match="stopped here"):
        context.check("stopped here")
    assert seen == [("sampling", 0.5)]
    QUIET.report("sampling", 1.0)  # nobody listens: nothing happens
    QUIET.check()


def test_a_later_round_is_told_as_its_own_stage() -> None:
    seen: list[tuple[str, float]] = []
    told = later_rounds(lambda stage, fraction: seen.append((stage, fraction)))
    assert told is not None
    told("sampling", 0.25)
    told("compiling", 0.0)
    assert seen == [(STAGE, 0.25), ("compiling", 0.0)]
    assert later_rounds(None) is None


def test_the_engines_internals_take_a_context_not_progress_and_cancel() -> None:
    """Below the engines' front door (``bbt_widget.engines``: ``sample``, ``laplace``,
    ``compile_model(s)``), no function spells ``progress`` or ``cancel`` again."""
    spelled = []
    for path in sorted((PACKAGE / "engines").glob("*.py")):
        if path.name == "__init__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names = {a.arg for a in node.args.args + node.args.kwonlyargs}
                if names & {"progress", "cancel"}:
                    spelled.append(f"{path.name}:{node.name}")
    assert spelled == []
