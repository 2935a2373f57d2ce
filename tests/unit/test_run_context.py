"""RunContext: the one object that carries a job's progress and cancel below the front doors."""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import pytest

from bbt_widget.core.run_context import QUIET, FitCancelled, RunContext
from bbt_widget.core.settling import STAGE

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
    stop = threading.Event()
    later = RunContext(lambda stage, fraction: seen.append((stage, fraction)), stop)
    told = later.relabelled("sampling", STAGE)
    told.report("sampling", 0.25)
    told.report("compiling", 0.0)
    assert seen == [(STAGE, 0.25), ("compiling", 0.0)]
    assert told.cancel is stop  # the same cancel
    assert QUIET.relabelled("sampling", STAGE) is QUIET


#: The front doors that take ``progress=`` and ``cancel=`` as users give them; every function
#: below them takes a RunContext.
FRONT_DOORS = {
    "engines/__init__.py": {"compile_model", "compile_models", "sample", "laplace"},
    "fitting/entry_points.py": {"fit", "fit_laplace"},
    "baselines/_hierarchical.py": {"hierarchical"},
    "baselines/_hierarchical_pairs.py": {"hierarchical_pairs"},
    "lab/calibration.py": {"calibration"},
    "lab/influence.py": {"influence"},
    "lab/metrics.py": {"compare_metrics"},
    "lab/sweep.py": {"__call__"},
    "outputs/report/_build.py": {"write"},
    "ranking/_mallows.py": {"mallows"},
    "ranking/_plackett_luce.py": {"plackett_luce", "ranking_model"},
    # the report's own progress chain (a report has no cancel but Ctrl-C): its stages are
    # named for the public functions it calls with progress=, and the command's progress
    # line (cli_commands) is an object of its own
    "outputs/report/_optional.py": {"_stage"},
    "outputs/report/_side_fits.py": {"take"},
    "cli_commands/report.py": {"compile_models"},
}


def test_progress_and_cancel_are_spelled_only_at_the_front_doors() -> None:
    """Below the public functions that take ``progress=`` and ``cancel=``, no function
    spells them again: each takes the one RunContext its front door made."""
    spelled: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names = {a.arg for a in node.args.args + node.args.kwonlyargs}
                if names & {"progress", "cancel"}:
                    spelled.setdefault(where, set()).add(node.name)
    assert spelled == FRONT_DOORS
