"""When the chart renderer fails: what the user is told, and what the commands return.

The renderer (vl-convert's V8, in a child process) aborts when it cannot reserve its memory,
as under a virtual memory limit (``ulimit -v`` on HPC nodes), but also for other reasons (a
machine out of memory, text it could not draw). The message names the limit only where this
process has one; and the several-metrics report, like the one-metric report, says the
charts are missing and exits with the code for it.
"""

from __future__ import annotations

import resource
import subprocess
import warnings

import pandas as pd
import pytest

from bbt_widget import cli
from bbt_widget.outputs import export


def _killed() -> subprocess.CompletedProcess:
    return subprocess.CompletedProcess(["vl-convert"], returncode=-6, stdout="", stderr="")


def test_a_killed_renderer_blames_no_memory_limit_where_there_is_none(monkeypatch):
    monkeypatch.setattr(
        resource, "getrlimit", lambda which: (resource.RLIM_INFINITY, resource.RLIM_INFINITY)
    )
    message = export._render_failure(_killed())
    assert "SIGABRT" in message and "ulimit" not in message
    assert "no limit on virtual memory" in message


def test_a_killed_renderer_names_the_memory_limit_where_there_is_one(monkeypatch):
    monkeypatch.setattr(resource, "getrlimit", lambda which: (2 * 1024**3, 2 * 1024**3))
    assert "`ulimit -v`" in export._render_failure(_killed())


@pytest.fixture
def two_metrics_csv(tmp_path):
    rows = [
        {"db": f"d{d}", "alg": alg, "acc": acc + d / 100, "f1": f1}
        for d in range(8)
        for alg, acc, f1 in (("A", 0.9, 0.8), ("B", 0.8, 0.75), ("C", 0.85, 0.9))
    ]
    path = tmp_path / "metrics.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


@pytest.mark.slow
def test_the_several_metrics_report_says_its_charts_are_missing(
    two_metrics_csv, tmp_path, capsys, monkeypatch
):
    def fail(*args, **kwargs):
        raise export.ChartRenderError("the chart renderer (vl-convert) was killed by SIGABRT")

    monkeypatch.setattr(export, "render_charts", fail)
    out = tmp_path / "r.md"
    words = ["report", str(two_metrics_csv), "--algorithm", "alg", "--dataset", "db"]
    words += ["--score", "acc", "--score", "f1", "--seed", "1", "-q", "-o", str(out)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = cli.main(words)
    captured = capsys.readouterr()
    assert code == cli.EXIT_CHARTS, captured.err
    assert "(without charts)" in captured.out
    assert "could not render charts" in captured.err and "SIGABRT" in captured.err
    assert out.exists()
