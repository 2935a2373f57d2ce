"""What the report runs beside its BBT fit and what a one-shot command leaves out: a side
fit (``outputs.report._side_fits.SideFit``) gives its result to the call that asks for what it was
started with; the report reads its results once, starts its Plackett-Luce fit before the
BBT fit and takes it afterwards."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget import engines
from bbt_widget.outputs.report import _optional as report_optional
from bbt_widget.outputs.report._side_fits import SideFit

REPO = Path(__file__).resolve().parents[2]
_SHORT = {"chains": 2, "iter_warmup": 200, "iter_sampling": 200}
_DATA = {"n_alg": 3, "i1": [1, 1, 2], "i2": [2, 3, 3], "win1": [7, 2, 11], "win2": [14, 19, 10]}


def test_a_side_fit_gives_its_result_to_the_call_asking_for_its_options():
    seen = []

    def run(progress):
        progress("sampling", 0.5)
        return ("result", 7)

    started = SideFit(run, {"seed": 7})
    assert started.take({"seed": 8}, None) is None  # other options: the caller fits anew
    assert started.take({"seed": 7}, lambda *a: seen.append(a)) == ("result", 7)
    assert seen[-1] == ("sampling", 1.0)


def test_a_side_fit_hands_its_error_to_the_call_that_takes_it():
    def fail(progress):
        raise engines.EngineError("no chains today")

    started = SideFit(fail, {})
    with pytest.raises(engines.EngineError, match="no chains today"):
        started.take({}, None)


def test_report_starts_plackett_luce_before_the_fit_and_takes_its_result(
    base, tmp_path, monkeypatch
):
    """``bbt.report.write`` on data starts the Plackett-Luce fit (numpy, no Stan) before the
    BBT fit, with the warm-up the report gives it, so that it runs while the fit waits for
    Stan, and the section takes that result: the same as a fit made afterwards."""
    order = []
    made = []
    fit = bbt.fit

    class Spy(SideFit):
        def __init__(self, run, options):
            order.append(("plackett-luce", options["iter_warmup"], options["seed"]))
            super().__init__(run, options)
            made.append(self)

        def take(self, options, progress):
            self.taken = super().take(options, progress)
            return self.taken

    def spy_fit(*args, **kwargs):
        order.append("fit")
        return fit(*args, **kwargs)

    monkeypatch.setattr(report_optional, "SideFit", Spy)
    monkeypatch.setattr("bbt_widget.fitting.fit", spy_fit)
    out = bbt.report.write(
        base, tmp_path / "r.md", dataset="db", seed=4, methods="plackett-luce", chains=2
    )
    assert order == [("plackett-luce", 250, 4), "fit"]
    assert len(made) == 1 and made[0].taken is not None  # the section took the started fit
    again = bbt.ranking_model(base, dataset="db", seed=4, chains=2, iter_warmup=250)
    np.testing.assert_array_equal(made[0].taken.draws.params["theta"], again.draws.params["theta"])
    pd.testing.assert_frame_equal(made[0].taken.ranking, again.ranking)
    assert "## Ranking models" in out.read_text()


def _count_reads(monkeypatch) -> list[int]:
    """Count the calls of the one results parser (``core.data.tidy_results``)."""
    from bbt_widget.core import data as core_data

    calls = [0]
    parse = core_data.tidy_results

    def counted(*args, **kwargs):
        calls[0] += 1
        return parse(*args, **kwargs)

    monkeypatch.setattr(core_data, "tidy_results", counted)
    return calls


def test_a_report_reads_its_results_once(base, tmp_path, monkeypatch):
    """``bbt.report.write`` on a table with the other methods and robustness reads the table
    once: the checks, the fit, the Plackett-Luce fit, the sweep and the baselines take the
    results as read (each re-read them, the report hashed every cell to hand them on)."""
    calls = _count_reads(monkeypatch)
    out = bbt.report.write(
        base,
        tmp_path / "r.md",
        dataset="db",
        seed=4,
        methods="plackett-luce,friedman",
        robustness=True,
        chains=2,
        iter_sampling=200,
    )
    assert "## Ranking models" in out.read_text()
    assert calls[0] == 1


def test_the_report_command_reads_its_results_once(base, tmp_path, monkeypatch, capsys):
    """``bbt-widget report`` reads the table once too (it checked, fitted and reported from
    the table, each reading it again)."""
    from bbt_widget.cli import main

    results = tmp_path / "results.csv"
    base.to_csv(results, index=False)
    calls = _count_reads(monkeypatch)
    argv = [
        "report", str(results), "-o", str(tmp_path / "r.md"), "--dataset", "db",
        "--with", "plackett-luce,friedman", "--quiet",
    ]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    assert calls[0] == 1


def test_a_column_of_unhashable_cells_the_fits_do_not_read_is_no_error(base, tmp_path):
    """Long results with an extra column of dicts (notes the fits do not read): the report
    is written with its Plackett-Luce fit (a key made of the table's cells once failed on
    those cells with pandas' "unhashable type" before the fit)."""
    wide = base.assign(fold=base.groupby("db").cumcount())
    long = wide.melt(id_vars=["db", "fold"], var_name="alg", value_name="acc")
    long["notes"] = [{"run": k} for k in range(len(long))]
    layout = {"dataset": "db", "algorithm": "alg", "fold": "fold", "score": "acc"}
    out = bbt.report.write(
        long,
        tmp_path / "r.md",
        methods="plackett-luce",
        **layout,
        seed=4,
        chains=2,
        iter_sampling=200,
    )
    assert "## Ranking models" in out.read_text()


def _body(path: Path) -> str:
    return path.read_text().split("## Provenance", 1)[0]


def test_charts_rendered_ahead_give_the_same_report(base, tmp_path):
    """A report whose own charts were built and rendered ahead (``start_charts``, while
    its sections were still to come) is the report written without them: same text, same
    figures, the sections' charts rendered after them in the same renderer; charts drawn
    ahead for other options are drawn anew."""
    from bbt_widget.outputs.report import _sections as rs
    from bbt_widget.outputs.report._render import start_charts, write_report

    res = bbt.fit(base, dataset="db", seed=2, chains=2)
    pl = bbt.ranking_model(base, dataset="db", seed=2, **_SHORT)
    for name in "abc":
        (tmp_path / name).mkdir()
    sections = [rs.ranking_model_section(pl, res, interpretation="weak")]
    plain = write_report(res, tmp_path / "a" / "r.md", sections=sections, highlight="lda")
    ahead = start_charts(res, tmp_path / "b" / "r.md", highlight="lda")
    early = write_report(
        res, tmp_path / "b" / "r.md", sections=sections, highlight="lda", charts_ahead=ahead
    )
    other = start_charts(res, tmp_path / "c" / "r.md", hdi=0.9)  # not the report's options
    late = write_report(
        res, tmp_path / "c" / "r.md", sections=sections, highlight="lda", charts_ahead=other
    )
    for written in (early, late):
        assert _body(written) == _body(plain)
        figures = sorted((written.parent / "r_md_figures").iterdir())
        assert [f.name for f in figures] == [
            f.name for f in sorted((plain.parent / "r_md_figures").iterdir())
        ]
        for f in figures:
            assert f.read_bytes() == (plain.parent / "r_md_figures" / f.name).read_bytes()
    assert {"bbt_vs_pl.svg", "top_k.svg", "ranking.svg"} <= {f.name for f in figures}
    # the report renders its charts without checking them against the Vega-Lite schema:
    # here they are (to_dict raises on a spec the schema refuses)
    built = dict(ahead.built) | {n: chart for n, (chart, _) in sections[0].charts.items()}
    assert len(built) == 9
    for name, chart in built.items():
        assert chart.to_dict(validate=True) == chart.to_dict(validate=False), name
