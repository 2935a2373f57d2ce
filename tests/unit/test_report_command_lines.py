"""What ``bbt-widget report`` prints and honours: the decision rule said before the claims it
introduces, and ``--highlight`` honoured (and checked before any fit) with several
``--score``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget import cli
from bbt_widget.outputs.report import _render as report_render


def _long(n: int = 8) -> pd.DataFrame:
    """Long-form results: n data sets x algorithms A, B, C, columns acc and f1."""
    rows = []
    for d in range(n):
        for alg, acc, f1 in (("A", 0.9, 0.8), ("B", 0.8, 0.75), ("C", 0.85, 0.9)):
            rows.append({"db": f"d{d}", "alg": alg, "acc": acc + d / 100, "f1": f1 - d / 200})
    return pd.DataFrame(rows)


@pytest.fixture
def long_csv(tmp_path: Path) -> Path:
    path = tmp_path / "metrics.csv"
    _long().to_csv(path, index=False)
    return path


def _words(path: Path, tmp_path: Path, *extra: str) -> list[str]:
    words = ["report", str(path), "--algorithm", "alg", "--dataset", "db", "--seed", "1"]
    return [*words, *extra, "-q", "--with", "none", "-o", str(tmp_path / "r.md")]


@pytest.mark.slow
def test_the_rule_is_said_before_the_claims_it_introduces(long_csv, tmp_path, capsys):
    # the exit code is not the point: the tiny data may miss an ESS target
    assert cli.main(_words(long_csv, tmp_path, "--score", "acc")) in (
        cli.EXIT_OK,
        cli.EXIT_DIAGNOSTICS,
    )
    out = capsys.readouterr().out
    follow = out.index("The claims below follow the weak interpretation")
    assert follow < out.index("pairs under the weak interpretation") < out.index("wrote ")


@pytest.mark.slow
def test_highlight_with_several_scores_reaches_the_report(long_csv, tmp_path, capsys, monkeypatch):
    seen: dict[str, object] = {}
    write = report_render.write_report

    def record(result, path, **kwargs):
        seen.update(kwargs)
        return write(result, path, **kwargs)

    monkeypatch.setattr(report_render, "write_report", record)
    words = _words(long_csv, tmp_path, "--score", "acc", "--score", "f1", "--highlight", "C")
    assert cli.main(words) in (cli.EXIT_OK, cli.EXIT_DIAGNOSTICS)
    assert seen["highlight"] == ["C"]


def test_an_unknown_highlight_with_several_scores_is_refused_before_the_fit(
    long_csv, tmp_path, capsys, monkeypatch
):
    # it was ignored without a word
    monkeypatch.setattr(bbt, "compare_metrics", lambda *a, **k: pytest.fail("fitted"))
    words = _words(long_csv, tmp_path, "--score", "acc", "--score", "f1", "--highlight", "Z")
    assert cli.main(words) == cli.EXIT_INPUT
    assert "--highlight: 'Z' is not an algorithm" in capsys.readouterr().err


def test_the_help_states_the_pairwise_limit_the_code_applies(capsys):
    """`report --help` said the pairwise section ran up to 6 x 132 where the code allows
    10 x 132."""
    from bbt_widget.outputs.report._methods import PAIRWISE_DEFAULT_MAX

    with pytest.raises(SystemExit):
        cli.main(["report", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"pairs x data sets <= {PAIRWISE_DEFAULT_MAX // 132} x 132" in text


@pytest.mark.slow
def test_no_output_cites_the_bbt_paper_by_a_nickname(long_csv, tmp_path, capsys):
    """Every sentence that points at the BBT paper names it (Wainer 2022) rather than "the
    BBT paper": the printed decision rule and the report's results paragraph."""
    from bbt_widget.outputs.methods_text import methods_text

    out = tmp_path / "r.md"
    words = ["report", str(long_csv), "--algorithm", "alg", "--dataset", "db", "--score", "acc"]
    # (diagnostics may fail on these few, perfectly ordered data sets: the report is written)
    assert cli.main([*words, "--seed", "1", "-q", "-o", str(out)]) in (0, cli.EXIT_DIAGNOSTICS)
    printed = capsys.readouterr().out
    res = bbt.fit(_long(), dataset="db", algorithm="alg", score="acc", seed=1)
    for text in (printed, out.read_text(encoding="utf-8"), methods_text(res)):
        assert "BBT paper" not in text
    assert "Wainer 2022, Sec" in methods_text(res)


def test_a_report_that_fails_after_its_fit_keeps_the_posterior(
    long_csv, tmp_path, capsys, monkeypatch
):
    """Whatever fails after the fit (a chart, the writing), the fit is not lost: its draws are
    saved beside the report and the error says where."""
    import numpy as np

    def broken(*args, **kwargs):
        raise RuntimeError("the renderer fell over")

    monkeypatch.setattr(report_render, "write_report", broken)
    out = tmp_path / "r.md"
    words = ["report", str(long_csv), "--algorithm", "alg", "--dataset", "db", "--score", "acc"]
    assert cli.main([*words, "--seed", "1", "-q", "-o", str(out)]) == cli.EXIT_UNEXPECTED
    err = capsys.readouterr().err
    saved = tmp_path / "r_posterior.npz"
    assert "the renderer fell over" in err and f"saved in {saved}" in err
    with np.load(saved) as kept:
        assert kept["beta"].shape[-1] == 3 and sorted(kept["algorithms"]) == ["A", "B", "C"]
        assert kept["beta"].shape[:2] == kept["sigma"].shape


def test_report_write_keeps_the_posterior_of_the_fit_it_ran(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("the renderer fell over")

    monkeypatch.setattr(report_render, "write_report", broken)
    path = tmp_path / "r.html"
    with pytest.raises(RuntimeError, match="fell over") as caught:
        bbt.report.write(_long(), path, dataset="db", algorithm="alg", score="acc", seed=1)
    saved = tmp_path / "r_posterior.npz"
    assert saved.exists() and any(str(saved) in note for note in caught.value.__notes__)
