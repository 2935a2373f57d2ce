"""What the report runs beside its BBT fit and what a one-shot command leaves out: a fit
started ahead (``engines.start_ahead``) gives its result once, to the call with its key;
the report starts its Plackett-Luce fit before the BBT fit and takes it afterwards; without
spare workers (``engines.spare_workers(False)``, as ``bbt-widget
report`` sets) a fit's end starts no worker process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget import engines
from bbt_widget.engines import _ahead

REPO = Path(__file__).resolve().parents[2]
_SHORT = {"chains": 2, "iter_warmup": 200, "iter_sampling": 200}
_DATA = {"n_alg": 3, "i1": [1, 1, 2], "i2": [2, 3, 3], "win1": [7, 2, 11], "win2": [14, 19, 10]}


def test_a_fit_started_ahead_gives_its_result_once_to_the_call_with_its_key():
    seen = []

    def run(progress):
        progress("sampling", 0.5)
        return ("result", 7)

    engines.start_ahead("fit-7", run)
    assert "fit-7" in _ahead._started
    engines.start_ahead("fit-7", lambda progress: ("another", 0))  # already started: kept
    assert engines.take_ahead("fit-7", lambda *a: seen.append(a)) == ("result", 7)
    assert not _ahead._started  # taken, and only once
    assert seen[-1] == ("sampling", 1.0)
    assert engines.take_ahead("fit-7") is None
    # another key is another fit: not taken from one started ahead
    engines.start_ahead("fit-8", lambda progress: ("result", 8))
    assert engines.take_ahead("fit-9") is None
    assert len(_ahead._started) == 1
    assert engines.take_ahead("fit-8") == ("result", 8)
    assert not _ahead._started


def test_a_fit_started_ahead_hands_its_error_to_the_call_that_takes_it():
    def fail(progress):
        raise engines.EngineError("no chains today")

    engines.start_ahead("failing", fail)
    with pytest.raises(engines.EngineError, match="no chains today"):
        engines.take_ahead("failing")
    assert not _ahead._started


def test_report_starts_plackett_luce_before_the_fit_and_takes_its_result(
    base, tmp_path, monkeypatch
):
    """``bbt.report.write`` on data starts the Plackett-Luce fit (numpy, no Stan) before the
    BBT fit, with the warm-up the report gives it, so that it runs while the fit waits for
    Stan, and the section takes that result: the same as a fit made afterwards, nothing
    started left over."""
    order = []
    ahead = engines.start_ahead
    fit = bbt.fit

    def spy_ahead(key, run):
        options = json.loads(key)[2]
        order.append((json.loads(key)[0], options["iter_warmup"], options["seed"]))
        return ahead(key, run)

    def spy_fit(*args, **kwargs):
        order.append("fit")
        return fit(*args, **kwargs)

    taken = []
    take = engines.take_ahead
    monkeypatch.setattr(engines, "start_ahead", spy_ahead)
    monkeypatch.setattr(engines, "take_ahead", lambda *a: taken.append(take(*a)) or taken[-1])
    monkeypatch.setattr("bbt_widget.core.fitting.fit", spy_fit)
    out = bbt.report.write(
        base, tmp_path / "r.md", dataset="db", seed=4, methods="plackett-luce", chains=2
    )
    assert order == [("plackett-luce", 250, 4), "fit"]
    assert len(taken) == 1 and taken[0] is not None  # the section took the started fit
    assert not _ahead._started
    assert "## Ranking models" in out.read_text()
    again = bbt.ranking_model(
        base, dataset="db", seed=4, chains=2, iter_warmup=250, iter_sampling=1000
    )
    np.testing.assert_array_equal(taken[0].draws.params["theta"], again.draws.params["theta"])
    pd.testing.assert_frame_equal(taken[0].ranking, again.ranking)


def test_a_report_that_fails_after_starting_a_fit_leaves_none_behind(base, tmp_path, monkeypatch):
    """A report whose BBT fit fails after its Plackett-Luce fit started leaves no fit
    started ahead behind (one was left, and a later report or test in the process found
    it), and neither does the command."""

    def broken(*args, **kwargs):
        raise RuntimeError("the fit broke")

    monkeypatch.setattr("bbt_widget.core.fitting.fit", broken)
    started = []
    ahead = engines.start_ahead
    monkeypatch.setattr(
        engines, "start_ahead", lambda key, run: (started.append(key), ahead(key, run))[1]
    )
    with pytest.raises(RuntimeError, match="the fit broke"):
        bbt.report.write(
            base, tmp_path / "r.md", dataset="db", seed=4, methods="plackett-luce", chains=2
        )
    assert len(started) == 1  # it had started one
    assert not _ahead._started


def test_a_column_of_unhashable_cells_the_fits_do_not_read_is_no_error(base, tmp_path):
    """Long results with an extra column of dicts (notes the fits do not read): the report
    is written, its Plackett-Luce fit started ahead and taken (the request's key once
    failed on those cells with pandas' "unhashable type" before the fit)."""
    from bbt_widget.outputs.report_build import _ranking_request

    wide = base.assign(fold=base.groupby("db").cumcount())
    long = wide.melt(id_vars=["db", "fold"], var_name="alg", value_name="acc")
    long["notes"] = [{"run": k} for k in range(len(long))]
    layout = {"dataset": "db", "algorithm": "alg", "fold": "fold", "score": "acc"}
    sampler = {"engine": "auto", "chains": 2, "iter_warmup": 1000, "iter_sampling": 200, "seed": 4}
    key, _ = _ranking_request(long, layout, 0.89, sampler)
    assert key == _ranking_request(long.copy(), layout, 0.89, sampler)[0]
    other = long.assign(notes=[{"run": -k} for k in range(len(long))])
    assert key != _ranking_request(other, layout, 0.89, sampler)[0]
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
    assert not _ahead._started


def test_without_spare_workers_a_fit_starts_no_worker(tmp_path):
    """By default a fit's end starts an idle worker for the next fit; with
    ``spare_workers(False)`` none (the command exits after its fits)."""
    if "pystan" not in engines.available_engines():
        pytest.skip("PyStan is not available here")
    code = (
        "import json, sys, time\n"
        "from bbt_widget import engines\n"
        "engines.spare_workers(sys.argv[1] == 'on')\n"
        f"data = {_DATA!r}\n"
        "engines.sample('bbt', data, engine='pystan', seed=1, chains=2, iter_warmup=100,\n"
        "               iter_sampling=100)\n"
        "time.sleep(1.0)  # after the top-up delay\n"
        "print(json.dumps(len(engines.get('pystan').idle_workers())))\n"
    )

    def idle(switch: str) -> int:
        out = subprocess.run(
            [sys.executable, "-c", code, switch],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=REPO,
            env=dict(os.environ),
        )
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout.strip().splitlines()[-1])

    assert idle("on") >= 1
    assert idle("off") == 0


def _body(path: Path) -> str:
    return path.read_text().split("## Provenance", 1)[0]


def test_charts_rendered_ahead_give_the_same_report(base, tmp_path):
    """A report whose own charts were built and rendered ahead (``start_charts``, while
    its sections were still to come) is the report written without them: same text, same
    figures, the sections' charts rendered after them in the same renderer; charts drawn
    ahead for other options are drawn anew."""
    from bbt_widget.outputs import report_sections as rs
    from bbt_widget.outputs.report_render import start_charts, write_report

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
