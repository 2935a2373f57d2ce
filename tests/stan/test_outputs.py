"""Manuscript outputs from a real fit: methods text, exports, the offline report and the CLI."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget import charts, cli, export, report
from bbt_widget.engines import available_engines
from bbt_widget.html_report import write_report

pytestmark = pytest.mark.stan


@pytest.fixture(scope="module")
def res() -> bbt.BBTResult:
    return bbt.fit(bbt.datasets.load_base(), dataset="db", seed=7)


@pytest.fixture(scope="module")
def base_csv(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("data") / "base.csv"
    bbt.datasets.load_base().to_csv(path, index=False)
    return path


def test_methods_text_states_what_was_run_and_the_claims(res):
    text = res.report()
    assert "5 algorithms on 20 data sets" in text
    assert "spread policy" in text and "LogNormal(0, 0.5)" in text
    assert "4 chains of 1000 warm-up and 1000 sampling iterations, seed 7" in text
    assert res.engine in text and res.draws.info["stan_hash"] in text
    assert "All convergence diagnostics passed" in text
    assert "grows more confident" not in text  # only 5 algorithms
    s = res.summary()
    for _, row in s[s["weak"] == "a better"].iterrows():
        assert f"{row.alg_a} is better than {row.alg_b}" in text
    assert f"bbt-widget {bbt.__version__}" in text
    strong = res.report(interpretation="strong")
    assert "strong interpretation" in strong and "mean P = " in strong
    assert "equivalence of xgb and lgbm" in strong  # mean 0.51 < 0.55
    tex = res.report(format="tex")
    assert "\\emph{" in tex and "95\\%" in tex and "`" not in tex
    # every character escaped: no bare underscore, tilde or comparison outside math
    assert not re.search(r"(?<!\\)_", tex) and "~" not in tex
    assert "$\\geq$" in tex and not re.search(r"(?<!\$)>", tex)
    with pytest.raises(ValueError, match="format"):
        res.report(format="docx")
    # the same spans as HTML: styled by tags, the rest escaped text
    html = res.report(format="html")
    assert f"<em>{report.PAPER}</em>" in html and "<code>bbt.stan</code>" in html
    assert "*" not in html and "`" not in html and "P(a &gt; b)" in html


def test_methods_text_reports_failed_diagnostics():
    short = bbt.fit(
        bbt.datasets.load_base(), dataset="db", seed=1, iter_warmup=30, iter_sampling=30
    )
    assert not short.diagnostics().ok
    assert "Convergence diagnostics FAILED" in short.report()


def test_latex_and_markdown_tables(res):
    s = res.summary()
    tex = export.to_latex(s, caption="P(a > b)", label="tab:bbt")
    assert tex.count("\\toprule") == 1 and "\\bottomrule" in tex and "\\label{tab:bbt}" in tex
    assert "above\\_50" in tex and "\\textgreater{}" in tex  # escaped header and pair labels
    first = s.iloc[0]
    body = tex.split("\\midrule\n")[1].splitlines()
    assert (
        body[0].startswith(export.tex_escape(first["pair"]))
        and f"& {first['mean']:.2f} &" in body[0]
    )
    md = export.to_markdown(s)
    lines = md.strip().splitlines()
    assert len(lines) == len(s) + 2 and lines[1].startswith("|:---")


def test_save_table_round_trips_csv_and_rejects_unknown_formats(res, tmp_path):
    wt = res.win_table
    export.save_table(wt, tmp_path / "w.csv")
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "w.csv"), wt, check_dtype=False)
    with pytest.raises(ValueError, match=r"\.xlsx"):
        export.save_table(wt, tmp_path / "w.xlsx")


def test_charts_export_offline_to_svg_png_pdf(res, tmp_path):
    chart_set = charts.result_charts(res)
    magic = {"svg": b"<svg", "png": b"\x89PNG", "pdf": b"%PDF"}
    for fmt, head in magic.items():
        path = export.save_chart(chart_set["intervals"], tmp_path / f"intervals.{fmt}")
        assert path.read_bytes()[:200].find(head) >= 0
    for name in ("rope_overlap", "ppc", "coverage", "win_matrix", "linked"):
        export.save_chart(chart_set[name], tmp_path / f"{name}.svg")
    with pytest.raises(ValueError, match="chart format"):
        export.save_chart(chart_set["ppc"], tmp_path / "x.gif")


def test_posterior_to_netcdf(res, tmp_path):
    import arviz as az

    path = export.save_posterior(res, tmp_path / "post.nc")
    back = az.from_netcdf(path)
    assert list(back.posterior["beta"].coords["algorithm"].values) == res.algorithms
    np.testing.assert_allclose(back.posterior["beta"].values, res.idata.posterior["beta"].values)
    written = export.export_all(res, tmp_path / "all")
    assert {p.name for p in written} >= {"summary.tex", "ranking.md", "win_table.csv"}


@pytest.mark.parametrize("suffix", ["html", "md", "tex"])
def test_standalone_report(res, tmp_path, suffix):
    path = write_report(res, tmp_path / f"report.{suffix}")
    text = path.read_text()
    assert "Methods and results" in text
    if suffix == "html":
        assert text.count("<svg") >= 4 and "<script" not in text
        assert '<div class="methods">We compared' in text and "<em>" in text
        # offline: nothing is loaded from elsewhere (SVG namespaces are identifiers)
        assert not re.search(r'(src|href)="https?://', text)
    else:
        figures = tmp_path / "report_figures"
        ext = "pdf" if suffix == "tex" else "svg"
        assert sorted(p.suffix for p in figures.iterdir()) == [f".{ext}"] * 4


def test_cli_report_writes_html_and_exits_0(base_csv, tmp_path, capsys):
    out = tmp_path / "r.html"
    code = cli.main(["report", str(base_csv), "-o", str(out), "--seed", "3", "--d-min", "0.4"])
    assert code == cli.EXIT_OK
    captured = capsys.readouterr()
    assert "using column 'db'" in captured.err and "sampling" in captured.err
    assert "paired local ROPE" in out.read_text()


def test_cli_exit_codes(base_csv, tmp_path, capsys):
    assert cli.main(["report", str(tmp_path / "missing.csv")]) == cli.EXIT_INPUT
    assert "does not exist" in capsys.readouterr().err
    assert cli.main(["report", str(base_csv), "--d-min", "-1"]) == cli.EXIT_INPUT
    assert "--d-min must be" in capsys.readouterr().err
    assert cli.main(["report", str(base_csv), "-o", str(tmp_path / "r.docx")]) == cli.EXIT_INPUT
    bad = tmp_path / "bad.csv"
    bad.write_text("db,a,b\nx,0.9,oops\n")
    assert cli.main(["report", str(bad), "-o", str(tmp_path / "b.html")]) == cli.EXIT_INPUT
    assert "'oops'" in capsys.readouterr().err
    short = ["--iter-warmup", "30", "--iter-sampling", "30", "--seed", "1", "-q"]
    code = cli.main(["report", str(base_csv), "-o", str(tmp_path / "s.md"), *short])
    assert code == cli.EXIT_DIAGNOSTICS
    assert (tmp_path / "s.md").exists()
    if "cmdstanpy" not in available_engines():
        code = cli.main(["report", str(base_csv), "--engine", "cmdstanpy", "-q"])
        assert code == cli.EXIT_ENGINE
        assert "cmdstan" in capsys.readouterr().err.lower()
    with pytest.raises(SystemExit) as err:
        cli.main(["report", str(base_csv), "--ties", "nope"])
    assert err.value.code == 2


def test_same_numbers_by_default(base_csv):
    # fit and the command share one default seed: two runs with no seed agree exactly
    first = bbt.fit(bbt.datasets.load_base(), dataset="db", iter_warmup=200, iter_sampling=200)
    again = bbt.fit(bbt.datasets.load_base(), dataset="db", iter_warmup=200, iter_sampling=200)
    assert first.settings["seed"] == bbt.DEFAULT_SEED
    pd.testing.assert_frame_equal(first.summary(), again.summary())
    # another seed is an explicit choice, and it is recorded
    fresh = bbt.fit(
        bbt.datasets.load_base(), dataset="db", seed=None, iter_warmup=200, iter_sampling=200
    )
    assert fresh.settings["seed"] != bbt.DEFAULT_SEED
    assert fresh.summary()["mean"].ne(first.summary()["mean"]).any()


def test_cli_demo_prints_the_papers_tables(capsys):
    assert cli.main(["demo", "--seed", "2"]) == cli.EXIT_OK
    out = capsys.readouterr().out
    assert "paper Table 3b" in out and "xgb > lgbm" in out and "diagnostics ok" in out


def test_readme_first_command_runs_on_the_shipped_results(tmp_path, capsys):
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    command = next(line for line in readme.splitlines() if "bbt-widget report" in line)
    args = command.split("bbt-widget ", 1)[1].split()
    repo = Path(__file__).resolve().parents[2]
    args[1] = str(repo / args[1])  # the results file, relative to the repository
    args[args.index("-o") + 1] = str(tmp_path / "report.html")
    assert cli.main(args) == cli.EXIT_OK
    captured = capsys.readouterr()
    out = captured.out
    assert "120 pairs under the weak interpretation" in out and "lgbm" in out
    assert not re.search(r"\de[-+]\d", out)  # fixed point, never 5.00e-01
    assert f"seed {bbt.DEFAULT_SEED}" in captured.err  # the default seed, stated
    assert f"reproduce with: bbt-widget report {args[1]}" in out
    assert re.search(r"writing report\.html\.\.\.", captured.err)
    html = (tmp_path / "report.html").read_text()
    assert "weak interpretation grows more confident" in html  # 16 algorithms: Sec. 5.6
    assert (tmp_path / "report.html").stat().st_size > 10_000
