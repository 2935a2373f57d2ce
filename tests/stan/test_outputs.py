"""Manuscript outputs from a real fit: methods text, exports, the offline report and the CLI."""

from __future__ import annotations

import html as htmllib
import itertools
import re
import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget import charts, cli
from bbt_widget.charts.frames_ppc import ppc_fit_frame
from bbt_widget.engines import available_engines
from bbt_widget.outputs import export
from bbt_widget.outputs._atomic import MANIFEST
from bbt_widget.outputs.citations import references
from bbt_widget.outputs.headline import headline
from bbt_widget.outputs.methods_text import PAPER, methods_text
from bbt_widget.outputs.report._render import write_report

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
    text = methods_text(res)
    assert "5 algorithms on 20 data sets" in text
    assert "spread policy" in text and "\\mathrm{LogNormal}(0, 0.5)" in text
    # the numpy engine's sampler, named and cited, with its settings
    # (draws="auto": 4 chains, and 12 more when a claim near its threshold could settle)
    chains = res.settings["chains_drawn"]
    assert chains in (4, 16)
    assert f"{chains} chains of 100 warm-up and 1000 kept sweeps (" in text
    assert "Pólya-Gamma Gibbs sampling (Polson et al. 2013)" in text
    # provenance (seed, program hash) is the report's, not the paragraph's
    assert "seed 7" not in text and res.draws.info["stan_hash"] not in text
    assert "divergent" not in text and "E-BFMI" not in text  # NUTS's checks: not run
    assert "Convergence diagnostics passed" in text
    assert "grows more confident" not in text  # only 5 algorithms
    s = res.summary()
    order = list(res.ranking()["algorithm"])
    neighbours = set(itertools.pairwise(order))
    named = [
        (row.alg_a, row.alg_b)
        for _, row in s[s["weak"] == "a better"].iterrows()
        if f"{row.alg_a} is better than {row.alg_b}" in text
    ]
    # the claims between neighbours in the ranking, as room allows; never a far one
    assert named and set(named) <= neighbours
    assert f"bbt-widget {bbt.__version__}" in text
    # cited by author and year; the model as Markdown math
    assert "(BBT) model (Wainer 2022; Bradley and Terry 1952)" in text and "arXiv" not in text
    assert "$\\beta_i \\sim \\mathcal{N}(0, \\sigma)" in text and "beta_i ~" not in text
    strong = methods_text(res, interpretation="strong")
    assert "the strong rule (Wainer 2022, Sec. 9.3)" in strong
    assert "xgb is equivalent to lgbm (mean P(a &gt; b) 0.51)" in strong  # 0.51 < 0.55
    tex = methods_text(res, format="tex")
    assert "\\cite{wainer2022bbt,bradley1952}" in tex and "95\\%" in tex and "`" not in tex
    # the model set as math; outside it every character escaped: no bare underscore, tilde
    # or comparison
    assert (
        "$\\beta_i \\sim \\mathcal{N}(0, \\sigma),\\ \\sigma \\sim \\mathrm{LogNormal}(0, 0.5)$"
        in tex
    )
    prose = re.sub(r"(?<!\\)\$[^$]*\\beta_i[^$]*\$", "", tex)
    prose = re.sub(r"\\cite(\[[^]]*\])?\{[^}]*\}", "", prose)  # its ~ is LaTeX's own space
    assert not re.search(r"(?<!\\)_", prose) and "~" not in prose
    assert "P(a \\textgreater{} b)" in tex and not re.search(r"(?<!\$)>", tex)
    with pytest.raises(ValueError, match="format"):
        methods_text(res, format="docx")
    # the same spans as HTML: styled by tags, the rest escaped text
    html = methods_text(res, format="html")
    assert html.startswith("<p>") and "(Wainer 2022" in html and PAPER not in html
    assert "*" not in html and "`" not in html and "P(a &gt; b)" in html


def test_methods_text_of_a_stan_fit_names_stan_and_nuts_checks():
    if "pystan" not in bbt.engines.available_engines():
        pytest.skip("PyStan is not installed")
    stan = bbt.fit(bbt.datasets.load_base(), dataset="db", seed=7, engine="pystan")
    text = methods_text(stan)
    assert "sampled with Stan's NUTS (Carpenter et al. 2017)" in text and "pystan " in text
    assert "4 chains of 1000 warm-up and 1000 sampling iterations (" in text
    assert "no divergent transitions" in text and "Pólya-Gamma" not in text
    cited = [r.key for r in references(stan)]
    assert "carpenter2017stan" in cited and "polson2013" not in cited


def test_methods_text_reports_failed_diagnostics():
    short = bbt.fit(
        bbt.datasets.load_base(), dataset="db", seed=1, iter_warmup=30, iter_sampling=30
    )
    assert not short.diagnostics().ok
    assert "Convergence diagnostics FAILED" in methods_text(short)


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


def test_export_flags_and_labels_are_checked_before_anything_is_written(res, tmp_path):
    """``formula_safe="no"`` was taken as yes and ``0`` as no, ``long="no"`` wrote a
    longtable; a ``label`` went into ``\\label{...}`` as given, so ``}`` ended the command
    and the rest ran as TeX; ``export_all`` with an unknown format wrote the tables before it
    and then failed, leaving a half-written folder."""
    wt = res.win_table
    with pytest.raises(TypeError, match=r"formula_safe must be True or False, got 'no'"):
        export.save_table(wt, tmp_path / "w.csv", formula_safe="no")
    with pytest.raises(TypeError, match=r"long must be True or False, got 'no'"):
        export.to_latex(wt, long="no")
    with pytest.raises(ValueError, match=r"label 'x}.*passwd': use letters, digits"):
        export.to_latex(wt, label="x}\\input{/etc/passwd")
    assert r"\label{tab:bbt-wins_2}" in export.to_latex(wt, label="tab:bbt-wins_2")
    for kwargs, match in [
        ({"formula_safe": 0}, "formula_safe must be True or False, got 0"),
        ({"formats": ("csv", "xlsx")}, "unknown table format 'xlsx'"),
        ({"formats": "csv"}, "unknown table format 'c'"),
    ]:
        folder = tmp_path / "out"
        with pytest.raises((TypeError, ValueError), match=match):
            export.export_all(res, folder, **kwargs)
        assert not folder.exists()
    assert not list(tmp_path.iterdir())


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
    # the answer first: the result in one sentence, the ranking chart, the counts and the
    # decision matrix before the methods; the provenance last
    sentence = headline(res.summary(), res.ranking(), "weak")  # 5 algorithms: auto is weak
    order = ["Result", sentence.split(",")[0], "Claims per interpretation", "Methods and results"]
    order += ["Data audit", "Tables", "Column definitions", "Provenance", "command"]
    positions = [text.index(h) for h in order]
    assert positions == sorted(positions)
    figure = 'id="fig-{}"' if suffix == "html" else "{}." + ("pdf" if suffix == "tex" else "svg")
    ranking, decisions = figure.format("ranking"), figure.format("decisions")
    assert text.index(ranking) < text.index("Claims per interpretation") < text.index(decisions)
    # the BBT critical-difference diagram is in the headline, before the decision matrix
    cd = figure.format("cd_diagram")
    assert text.index("Claims per interpretation") < text.index(cd) < text.index(decisions)
    if suffix == "html":
        assert text.count("<svg") == 7 and "<script" not in text
        assert '<div class="methods"><p>We compared' in text and "<p><p>" not in text
        # offline: nothing is loaded from elsewhere (SVG namespaces are identifiers)
        assert not re.search(r'(src|href)="https?://', text)
        assert text.index('id="fig-ranking"') < text.index('id="methods"')
        assert f'<p class="headline">{export.html_escape(sentence)}</p>' in text
    else:
        figures = tmp_path / f"report_{suffix}_figures"
        ext = "pdf" if suffix == "tex" else "svg"
        shown = [p.suffix for p in figures.iterdir() if p.name != MANIFEST]  # and the list
        assert shown == [f".{ext}"] * 7 and (figures / MANIFEST).is_file()


def test_report_highlights_algorithms_in_its_cd_diagram(res, tmp_path):
    from bbt_widget.core.palette import HIGHLIGHT_COLORS

    plain = write_report(res, tmp_path / "plain.html").read_text()
    html = write_report(res, tmp_path / "r.html", highlight=["svm", "lda"]).read_text()
    cd = html.split('id="fig-cd_diagram"', 1)[1].split("</figure>", 1)[0]
    assert HIGHLIGHT_COLORS["highlighted"] in cd and "highlighted" in cd  # colour and legend
    assert HIGHLIGHT_COLORS["highlighted"] not in plain
    with pytest.raises(ValueError, match="highlight: 'rf' is not an algorithm"):
        write_report(res, tmp_path / "bad.html", highlight=["rf"])
    assert not (tmp_path / "bad.html").exists()


def test_report_win_table_shows_raw_and_model_counts(res, tmp_path):
    """The win/loss table said "win1: data sets where alg1 beat alg2" over counts that the
    spread policy had raised by half the ties: now both, each with its own definition."""
    html = write_report(res, tmp_path / "r.html").read_text()
    wins = _html_table(html, "wins")
    assert list(wins.columns) == [
        "alg1",
        "alg2",
        "win1",
        "win2",
        "ties",
        "raw_win1",
        "raw_win2",
        "raw_ties",
    ]
    assert (wins[["raw_win1", "raw_win2", "raw_ties"]].sum(axis=1) == 20).all()  # data sets
    half_up = (wins["raw_ties"] + 1) // 2  # the spread policy
    assert (wins["win1"] == wins["raw_win1"] + half_up).all() and (wins["ties"] == 0).all()
    row = wins[(wins["alg1"] == "dt") & (wins["alg2"] == "lda")].iloc[0]
    assert (row["win1"], row["win2"], row["raw_win1"], row["raw_win2"]) == (7, 14, 6, 13)
    defined = dict(re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", html))
    assert defined["raw_win1"].startswith("data sets where alg1 beat alg2")
    assert defined["win1"].startswith("wins of alg1 given to the model")


def test_md_and_tex_reports_keep_their_own_figures(res, tmp_path):
    md = write_report(res, tmp_path / "paper.md").read_text()
    tex = write_report(res, tmp_path / "paper.tex").read_text()
    svg = sorted((tmp_path / "paper_md_figures").glob("*.svg"))
    pdf = sorted((tmp_path / "paper_tex_figures").glob("*.pdf"))
    assert len(svg) == len(pdf) == 7
    assert all(f.read_bytes().startswith(b"<svg") for f in svg)  # not overwritten by PDFs
    for link in re.findall(r"\]\(([^)]+)\)", md):
        assert (tmp_path / link).exists(), link
    for link in re.findall(r"\\includegraphics\[[^]]*\]\{([^}]+)\}", tex):
        assert (tmp_path / link).exists(), link
    # the works cited, in full at the end and as BibTeX beside the LaTeX report
    refs = tex.split("\\begin{thebibliography}", 1)[1].split("\\end{thebibliography}", 1)[0]
    assert "Wainer. A Bayesian Bradley-Terry model" in refs and "arXiv:2208.04935, 2022" in refs
    assert "doi:10.2307/\\allowbreak{}2334029" in refs  # Bradley and Terry 1952, breakable
    bib = (tmp_path / "paper.bib").read_text()
    assert bib == bbt.report.bibtex(res)
    assert "@misc{wainer2022bbt," in bib and "eprint = {2208.04935}" in bib
    assert "## References" in md and "1. J. Wainer." in md


def _provenance(text: str) -> dict[str, str]:
    """The provenance list of a Markdown report: ``- **key**: value`` lines."""
    block = text.split("## Provenance", 1)[1].split("## ", 1)[0]
    return dict(re.findall(r"^- \*\*(.+?)\*\*: (.*)$", block, flags=re.M))


def test_report_records_provenance_from_the_cli(base_csv, tmp_path, capsys):
    out = tmp_path / "r.md"
    args = ["report", str(base_csv), "-o", str(out), "--d-min", "0.4", "-q"]
    assert cli.main(args) == cli.EXIT_OK
    printed = capsys.readouterr().out
    command = re.search(r"^reproduce with: (.*)$", printed, flags=re.M).group(1)
    prov = _provenance(out.read_text())
    assert prov["seed"] == str(bbt.DEFAULT_SEED)
    assert prov["input"] == export.md_escape(base_csv.name)
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC", prov["date"])
    assert prov["bbt-widget"] == bbt.__version__
    assert "numpy" in prov["engine"] and "polyagamma" in prov["engine"]
    # the exact command line the CLI printed, seed included, rerunnable as it stands
    assert prov["command"] == export.md_escape(command)
    assert command.endswith(f"--seed {bbt.DEFAULT_SEED}")
    assert cli.main(shlex.split(command)[1:]) == cli.EXIT_OK


def test_report_records_provenance_from_python(res, tmp_path):
    prov = _provenance(write_report(res, tmp_path / "r.md").read_text())
    assert prov["seed"] == "7" and prov["input"] == "a DataFrame given in Python"
    assert "bbt\\_widget.fit(data, dataset='db'" in prov["command"]
    assert "seed=7" in prov["command"] and "write\\_report(res, 'r.md'" in prov["command"]
    with pytest.raises(ValueError, match="unknown keys"):
        write_report(res, tmp_path / "x.md", provenance={"cmd": "x"})


def test_cli_report_writes_html_and_exits_0(base_csv, tmp_path, capsys):
    out = tmp_path / "r.html"
    code = cli.main(["report", str(base_csv), "-o", str(out), "--seed", "3", "--d-min", "0.4"])
    assert code == cli.EXIT_OK
    captured = capsys.readouterr()
    assert "using column 'db'" in captured.err and "sampling" in captured.err
    assert "paired effect size d_z over the folds exceeded d_min = 0.4 (local ROPE)" in (
        htmllib.unescape(re.sub(r"<[^>]+>", "", out.read_text()))
    )


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
    # 16 algorithms: the strong rule by default (Sec. 5.6), and the reason said
    assert "120 pairs under the strong interpretation" in out and "lgbm" in out
    assert "taken by default because with 16 algorithms" in out
    assert not re.search(r"\de[-+]\d", out)  # fixed point, never 5.00e-01
    assert f"seed {bbt.DEFAULT_SEED}" in captured.err  # the default seed, stated
    assert f"reproduce with: bbt-widget report {args[1]}" in out
    assert re.search(r"writing report\.html\.\.\.", captured.err)
    html = (tmp_path / "report.html").read_text()
    assert "the strong rule, advised beyond 10 algorithms" in html  # 16 algorithms: Sec. 5.6
    assert (tmp_path / "report.html").stat().st_size > 10_000


@pytest.fixture(scope="module")
def res16() -> bbt.BBTResult:
    """The shipped 16 x 132 results (issue 8's case)."""
    return bbt.fit(bbt.datasets.load_pmlb16(), dataset="db")


@pytest.mark.parametrize("interpretation", ["auto", "weak", "strong"])
def test_methods_text_at_16_algorithms(res16, interpretation):
    # the paragraph as a reader sees it: the HTML fragment without its tags and entities
    html = methods_text(res16, format="html", interpretation=interpretation)
    text = htmllib.unescape(re.sub(r"<[^>]+>", "", html))
    rule = "strong" if interpretation == "auto" else interpretation
    # the rule the claims follow, cited, and why when auto chose it (the paper's Sec. 5.6)
    said = {
        "auto": "the strong rule, advised beyond 10 algorithms (Wainer 2022, Secs. 5.6 and 9.3)",
        "weak": "the weak rule, although the paper advises the strong rule beyond 10 "
        "algorithms (Wainer 2022, Secs. 5.6 and 9.2)",
        "strong": "the strong rule (Wainer 2022, Sec. 9.3)",
    }
    assert said[interpretation] in text
    s = res16.summary()
    counts = s[rule].value_counts()
    better = int(counts.get("a better", 0) + counts.get("b better", 0))
    equivalent = int(counts.get("equivalent", 0))
    assert f"Of the 120 pairs, {better} were claimed different and {equivalent} equivalent" in text
    # named: claims between neighbours in the ranking and equivalences, as room allows, not
    # the trivial "best is better than worst"; the table holds the rest
    order = list(res16.ranking()["algorithm"])
    neighbours = {(a, b) for a, b in itertools.pairwise(order)}
    named = re.findall(r"(\S+) is better than (\S+) \(", text)
    claimed = set(zip(s.loc[s[rule] == "a better", "alg_a"], s.loc[s[rule] == "a better", "alg_b"]))
    assert set(named) <= claimed & neighbours
    equal = re.findall(r"(\S+) is equivalent to (\S+) \(", text)
    pairs = set(zip(s["alg_a"], s["alg_b"]))
    equivalents = {
        p
        for p in pairs
        if s.loc[(s["alg_a"] == p[0]) & (s["alg_b"] == p[1]), rule].iloc[0] == "equivalent"
    }
    assert all(p in equivalents or p[::-1] in equivalents for p in equal)
    assert named or equal
    rest = better + equivalent - len(named) - len(equal)
    assert f"has the other {rest} claims" in text
    assert f"{order[0]} is better than {order[-1]}" not in text
    assert len(text) < 4500  # was about 50 lines of claims


def _tables_and_definitions(html: str) -> tuple[set[str], list[str]]:
    from html.parser import HTMLParser

    class Page(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.headers: set[str] = set()
            self.defined: list[str] = []
            self._in: str | None = None
            self._provenance = False

        def handle_starttag(self, tag, attrs):
            if tag == "table" and ("class", "provenance") in attrs:
                self._provenance = True
            if tag in ("th", "dt"):
                self._in = tag

        def handle_endtag(self, tag):
            if tag == "table":
                self._provenance = False
            self._in = None

        def handle_data(self, data):
            if self._in == "th" and not self._provenance:
                self.headers.add(data)
            elif self._in == "dt":
                self.defined.append(data)

    page = Page()
    page.feed(html)
    return page.headers, page.defined


def test_html_report_defines_every_column_once(res16, tmp_path):
    html = write_report(res16, tmp_path / "r.html").read_text()
    headers, defined = _tables_and_definitions(html)
    assert headers >= {"mean", "low", "high", "delta", "above_50", "in_rope", "weak", "strong"}
    assert headers == set(defined) and len(defined) == len(set(defined))
    assert "89% highest-density interval" in html


def test_report_ppc_shows_the_worst_pairs_and_static_charts(res16, tmp_path):
    from bbt_widget.outputs.report._render import PPC_WORST_PAIRS

    html = write_report(res16, tmp_path / "r.html").read_text()
    assert not re.search(r"\bclick|\bchoose|\bchosen", html, flags=re.I)  # static output
    fit = ppc_fit_frame(res16.ppc_histogram())
    worst = fit.head(PPC_WORST_PAIRS)
    assert worst["p_tail"].max() <= fit["p_tail"].iloc[PPC_WORST_PAIRS:].min()
    figure = html.split('id="fig-ppc"', 1)[1].split("</figure>", 1)[0]
    panels = re.findall(r">([^<>]+) wins vs ([^<>]+)</text>", figure)
    # exactly the worst pairs, worst first (not the first 21 pairs in ranking order)
    assert panels == list(zip(worst["alg1"], worst["alg2"]))
    # the 120-pair charts have their x axis at the top and at the bottom
    for name, title in (("intervals", "P(a &gt; b)"), ("rope_overlap", "posterior mass")):
        svg = html.split(f'id="fig-{name}"', 1)[1].split("</figure>", 1)[0]
        assert svg.count(f"X-axis titled '{title}'") == 2, name
    table = html.split('id="tab-ppc-worst"', 1)[1].split("</table>", 1)[0]
    assert table.count("<tr>") == PPC_WORST_PAIRS + 1


def test_tex_report_compiles_and_fits_the_text_width(res16, tmp_path, compile_latex):
    path = write_report(res16, tmp_path / "report.tex")
    tex = path.read_text()
    assert tex.startswith("%") and "\\documentclass{article}" in tex
    for key in ("claims", "ranking", "pairs", "ppc", "ppc-worst", "wins"):
        assert f"\\label{{tab:bbt-{key}}}" in tex, key
    assert tex.count("\\caption{") >= 12 and tex.count("\\toprule") >= 6
    assert "\\begin{longtable}" in tex  # 120 pairs break across pages
    log = compile_latex(path)
    # nothing wider than \textwidth (issue 8: the summary was 207 pt too wide), no float
    # taller than a page, no character missing from the fonts
    assert "Overfull \\hbox" not in log, re.findall(r"Overfull \\hbox.*", log)
    assert "Float too large" not in log and "Missing character" not in log


def test_report_has_audit_and_disconnected_note_in_every_format(
    tmp_path, compile_latex, two_groups
):
    df = two_groups
    with pytest.warns(UserWarning):
        res = bbt.fit(df, dataset="db", seed=3, iter_sampling=300)
    assert res.audit.warnings
    for suffix in ("html", "md", "tex"):
        text = write_report(res, tmp_path / f"g.{suffix}").read_text()
        body = text.split("Data audit", 1)[1]
        assert "missing results" in body and "never met" in body, suffix
        # the note before the headline, and the pairs across groups marked in the tables
        assert text.index("form 2 groups") < text.index("Result"), suffix
        assert "not compared" in text.split("Tables", 1)[1], suffix
    compile_latex(tmp_path / "g.tex")


def test_docs_list_every_exit_code_and_the_report_layout():
    page = Path(__file__).resolve().parents[2] / "docs" / "reports.md"
    section = page.read_text().split("\n## ", 1)[0]  # the page's first section
    codes = {
        cli.EXIT_OK: "ok",
        cli.EXIT_INPUT: "bad arguments",
        cli.EXIT_ENGINE: "engine failed",
        cli.EXIT_DIAGNOSTICS: "diagnostics failed",
        cli.EXIT_CHARTS: "could not be rendered",
        cli.EXIT_UNEXPECTED: "unexpected",
    }
    flat = " ".join(section.split())
    for code, words in codes.items():
        assert re.search(rf"\b{code} [^;.]*{words}", flat), (code, words)
    for part in ("Provenance", "Headline", "decision matrix", "definition of every table column"):
        assert part in flat, part


# ------------------------------------------------------------- robustness and other methods


@pytest.fixture(scope="module")
def three_csv(tmp_path_factory) -> Path:
    """Three of the base algorithms on the 20 data sets, 4 folds: 3 pairs, quick fits."""
    path = tmp_path_factory.mktemp("data") / "three.csv"
    bbt.datasets.load_base()[["db", "dt", "lda", "xgb"]].to_csv(path, index=False)
    return path


# short runs, but long enough that R-hat over 2 chains is not left to the seed (300 draws
# each put the 3-algorithm fit at 1.011 on some seeds)
_SHORT = ["--chains", "2", "--iter-warmup", "300", "--iter-sampling", "1000"]


def _html_table(html: str, key: str) -> pd.DataFrame:
    """The report's table ``tab-<key>`` as a frame (numbers parsed where they are numbers)."""
    block = html.split(f'id="tab-{key}"', 1)[1].split("</table>", 1)[0]
    cell = re.compile(r"<t[hd][^>]*>(.*?)</t[hd]>", flags=re.S)
    rows = [
        [htmllib.unescape(re.sub(r"<[^>]+>", "", c)) for c in cell.findall(r)]
        for r in re.findall(r"<tr[^>]*>(.*?)</tr>", block, flags=re.S)
    ]
    frame = pd.DataFrame(rows[1:], columns=rows[0])
    for col in frame.columns:
        numbers = pd.to_numeric(frame[col], errors="coerce")
        if numbers.notna().all():
            frame[col] = numbers
    return frame


def test_cli_report_with_robustness_and_other_methods(three_csv, tmp_path, capsys):
    out = tmp_path / "r.html"
    args = ["report", str(three_csv), "-o", str(out), "--robustness", "--rho", "0.25"]
    args += ["--with", "hierarchical,plackett-luce", "--interpretation", "strong", *_SHORT]
    assert cli.main(args) == cli.EXIT_OK
    err = capsys.readouterr().err
    # a progress line per step, with what it did
    assert re.search(r"^sweep: 12 fits in [\d.]+ s$", err, flags=re.M), err
    assert re.search(r"^influence: 20 data sets, \d+ refitted, in [\d.]+ s$", err, flags=re.M)
    assert "Plackett-Luce: sampling" in err and "hierarchical t-test: 3 pairs" in err
    html = out.read_text()
    # the sections after the audit, before the detailed charts, each with its figures
    heads = ['id="audit"', 'id="sweep"', 'id="influence"', 'id="ranking-models"']
    heads += ['id="pairwise"', 'id="charts"']
    assert [html.index(h) for h in heads] == sorted(html.index(h) for h in heads)
    for fig in ("sweep", "influence", "bbt_vs_pl", "top_k"):
        assert html.count(f'id="fig-{fig}"') == 1, fig
    counts = _html_table(html, "sweep-counts")
    assert list(counts["interpretation"]) == ["weak", "strong"]
    assert (counts[["stable better", "stable equivalent", "flipped"]].sum(axis=1) <= 3).all()
    infl = _html_table(html, "influence")
    assert set(infl["decision"]) <= {"a better", "b better", "equivalent"}
    assert infl["n_changing"].between(0, 20).all()
    ranks = _html_table(html, "ranking-models")
    assert sorted(ranks["algorithm"]) == ["dt", "lda", "xgb"]
    assert ranks["p_best_pl"].sum() == pytest.approx(1, abs=0.01)
    pairs = _html_table(html, "pairwise")
    assert len(pairs) == 3 and set(pairs["hierarchical"]) <= {
        "a better",
        "b better",
        "equivalent",
        "no claim",
    }
    # the methods paragraph cites the paper of every method that was run
    methods = html.split('<div class="methods">', 1)[1].split("</div>", 1)[0]
    assert "refitted in 12 settings" in methods and "left out in turn" not in methods
    assert "leaving each out in turn" in methods
    # one citation style: author and year, the titles and DOIs in the references
    assert "Rojas-Delgado et al. 2022" in methods and "Corani et al. 2017" in methods
    assert "<em>" not in methods and "doi:" not in methods
    assert "Rojas-Delgado et al. 2022, Fig. 3" in html and "paper 00" not in html
    refs = html.split('id="references"', 1)[1].split('id="provenance"', 1)[0]
    for cited in ("Plackett", "Luce", "Corani", "Nadeau", "Vehtari", "Wainer"):
        assert cited in refs, cited
    # every new column is defined once
    tables, defined = _tables_and_definitions(html)
    assert tables <= set(defined) and len(defined) == len(set(defined))


def test_cli_report_with_both_ranking_models(three_csv, tmp_path, capsys):
    """--with plackett-luce,mallows: one 'Ranking models' section with both beside BBT, the
    Mallows consensus and dispersion in its text, each model's figures, both papers cited."""
    out = tmp_path / "r.html"
    args = ["report", str(three_csv), "-o", str(out), "--with", "plackett-luce,mallows"]
    assert cli.main([*args, *_SHORT]) == cli.EXIT_OK
    assert "Mallows: sampling" in capsys.readouterr().err
    html = out.read_text()
    for fig in ("bbt_vs_pl", "top_k", "bbt_vs_mallows", "top_k_mallows"):
        assert html.count(f'id="fig-{fig}"') == 1, fig
    assert html.count('id="fig-rank_probabilities_mallows"') == 1
    ranks = _html_table(html, "ranking-models")
    assert list(ranks.columns) == [
        "algorithm",
        "p_best_bbt",
        "p_best_pl",
        "p_best_mallows",
        "expected_rank_bbt",
        "expected_rank_pl",
        "expected_rank_mallows",
    ]
    assert ranks["p_best_mallows"].sum() == pytest.approx(1, abs=0.01)
    assert "most probable consensus ranking is" in html and "dispersion beta" in html
    methods = html.split('<div class="methods">', 1)[1].split("</div>", 1)[0]
    assert "Rojas-Delgado et al. 2022" in methods and "Vitelli et al. 2018" in methods
    assert "1000 draws kept one every 20." in methods
    tables, defined = _tables_and_definitions(html)
    assert tables <= set(defined) and len(defined) == len(set(defined))


@pytest.fixture(scope="module")
def sections(res):
    """The optional sections from the base fit: a small sweep, influence, Plackett-Luce."""
    from bbt_widget.outputs.report import _sections as rs

    base = bbt.datasets.load_base()
    sweep = bbt.sweep(
        base,
        dataset="db",
        grid={"ties": ["spread", "forget"], "d_min": [None, 0.4]},
        chains=2,
        iter_warmup=300,
        iter_sampling=300,
    )
    pl = bbt.ranking_model(base, dataset="db", chains=2, iter_warmup=300, iter_sampling=300)
    infl = bbt.influence(res, interpretation="weak")
    return (
        sweep,
        infl,
        [
            rs.sweep_section(sweep, "weak"),
            rs.influence_section(infl),
            rs.ranking_model_section(pl, res),
        ],
    )


@pytest.mark.parametrize("suffix", ["md", "tex"])
def test_report_sections_in_markdown_and_latex(res, sections, tmp_path, suffix, compile_latex):
    sweep, infl, built = sections
    path = write_report(res, tmp_path / f"r.{suffix}", sections=built)
    text = path.read_text()
    heads = ["Data audit", "Robustness: analysis choices"]
    heads += ["Robustness: influence of single data sets", "Ranking models", "Charts"]
    assert [text.index(h) for h in heads] == sorted(text.index(h) for h in heads)
    ext = "pdf" if suffix == "tex" else "svg"
    folder = tmp_path / f"r_{suffix}_figures"
    for fig in ("sweep", "influence", "bbt_vs_pl", "top_k"):
        assert (folder / f"{fig}.{ext}").stat().st_size > 0, fig
    # the counts in the text are the sweep's and the influence's own
    weak = sweep.stable_claims("weak")
    n_better = int((weak["decision"] != "equivalent").sum())
    assert f"{n_better} differences and" in text
    claimed = infl.table[infl.table["decision"].isin(["a better", "b better", "equivalent"])]
    n_fragile = claimed[claimed["changed"]]["pair"].nunique()
    assert f"{n_fragile} of {claimed['pair'].nunique()} claimed pair" in text
    if suffix == "tex":
        log = compile_latex(path)
        assert "Overfull \\hbox" not in log


def test_cli_with_option_is_checked_before_any_fit(base_csv, three_csv, tmp_path, capsys):
    out = str(tmp_path / "r.html")
    cases = [
        (["--with", "plackett"], "--with 'plackett': give 'none' or a comma-separated list"),
        # "none" leaves the defaults out: the hierarchical test alone, which needs --rho
        (["--with", "none,hierarchical"], "--with hierarchical needs --rho"),
        (["--with", "hierarchical"], "--with hierarchical needs --rho"),
        (["--with", "hierarchical", "--rho", "1"], "--rho 1: must lie strictly between"),
    ]
    for extra, message in cases:
        assert cli.main(["report", str(three_csv), "-o", out, *extra]) == cli.EXIT_INPUT
        err = capsys.readouterr().err
        assert message in err and "sampling" not in err, err
    # one score per data set: no folds for the hierarchical test
    means = tmp_path / "means.csv"
    bbt.datasets.load_base().groupby("db").mean().reset_index().to_csv(means, index=False)
    args = ["report", str(means), "-o", out, "--with", "hierarchical", "--rho", "0.25"]
    assert cli.main(args) == cli.EXIT_INPUT
    assert "needs the results of every fold" in capsys.readouterr().err


def test_cli_report_default_methods(three_csv, tmp_path, capsys):
    """Plackett-Luce by default on fold data, in every format; nothing extra with --with
    none; the hierarchical test only when asked (a Stan fit per pair)."""
    html, md = tmp_path / "r.html", tmp_path / "r.md"
    assert cli.main(["report", str(three_csv), "-o", str(html), "-q", *_SHORT]) == 0
    text = html.read_text()
    assert 'id="ranking-models"' in text and 'id="pairwise"' not in text
    assert 'id="sweep"' not in text and 'id="influence"' not in text
    assert cli.main(["report", str(three_csv), "-o", str(md), "-q", *_SHORT]) == 0
    assert "## Ranking models" in md.read_text()
    args = ["report", str(three_csv), "-o", str(html), "-q", "--with", "none", *_SHORT]
    assert cli.main(args) == 0
    assert 'id="ranking-models"' not in html.read_text()


def _report_parts(text: str) -> tuple[list[str], str]:
    """A Markdown report without what differs between two runs (the date and the command
    in the provenance): its headings and its body up to the provenance."""
    body = text.split("## Provenance", 1)[0]
    return re.findall(r"^#+ .*$", body, flags=re.M), body


def test_python_write_is_the_cli_report(three_csv, tmp_path, capsys):
    """bbt.report.write on the data writes what `bbt-widget report` writes: the same
    sections, tables and sentences for the same data, options and seed."""
    md_cli, md_py = tmp_path / "cli.md", tmp_path / "py.md"
    args = ["report", str(three_csv), "-o", str(md_cli), "-q", "--seed", "5"]
    args += ["--with", "plackett-luce", *_SHORT]
    assert cli.main(args) == cli.EXIT_OK
    data = pd.read_csv(three_csv)
    written = bbt.report.write(
        data,
        md_py,
        dataset="db",
        seed=5,
        methods="plackett-luce",
        chains=2,
        iter_warmup=300,
        iter_sampling=1000,
    )
    assert written == md_py
    cli_heads, cli_body = _report_parts(md_cli.read_text())
    py_text = md_py.read_text().replace("py_md_figures", "cli_md_figures")
    py_heads, py_body = _report_parts(py_text.replace("py\\_md\\_tables/", "cli\\_md\\_tables/"))
    assert "## Ranking models" in cli_heads and cli_heads == py_heads
    assert py_body == cli_body
    # the same from a fit given with its data, and the Python calls recorded
    res = bbt.fit(data, dataset="db", seed=5, chains=2, iter_warmup=300, iter_sampling=1000)
    again = bbt.report.write(res, tmp_path / "py.md", data=data, methods="plackett-luce")
    as_py = py_body.replace("cli_md_figures", "py_md_figures").replace(
        "cli\\_md\\_tables/", "py\\_md\\_tables/"
    )
    assert _report_parts(again.read_text())[1] == as_py
    # options are checked before any fit, by the keyword's name
    with pytest.raises(ValueError, match="methods='plackett': give 'none'"):
        bbt.report.write(data, tmp_path / "x.md", dataset="db", methods="plackett")
    with pytest.raises(ValueError, match="seed are options of the fit"):
        bbt.report.write(res, tmp_path / "x.md", seed=3)


def test_report_raw_counts_follow_the_tie_threshold(base, tmp_path):
    # the raw columns are counted by the fit's own rules: with a tie threshold, mean scores
    # no further apart than it are ties there too, as in the model's counts
    fitted = bbt.fit(
        base, dataset="db", tie_threshold=0.02, seed=3, chains=2, iter_warmup=300, iter_sampling=300
    )
    wins = _html_table(write_report(fitted, tmp_path / "r.html").read_text(), "wins")
    expected = bbt.win_table(base, dataset="db", tie_threshold=0.02)
    cols = ["alg1", "alg2", "raw_win1", "raw_win2", "raw_ties"]
    assert expected["raw_ties"].sum() > bbt.win_table(base, dataset="db")["raw_ties"].sum()
    pd.testing.assert_frame_equal(
        wins[cols].reset_index(drop=True), expected[cols].reset_index(drop=True), check_dtype=False
    )
