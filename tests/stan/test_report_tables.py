"""The report's scores and its researcher's export, from real (numpy-engine) fits: the scores
table and the effect sizes of the claimed pairs, checked against the raw results; every
table also written as CSV in ``<stem>_<format>_tables/``; the LaTeX tables in booktabs with siunitx
``S`` number columns, compiled with and without siunitx."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget import cli
from bbt_widget.outputs._atomic import OutputConflictError
from bbt_widget.outputs.methods_text import tables_folder
from bbt_widget.outputs.report._render import write_report

pytestmark = pytest.mark.stan


def _base_errors() -> pd.DataFrame:
    """The shipped base results as error rates (1 - accuracy: lower is better)."""
    base = bbt.datasets.load_base()
    return base.assign(**{c: 1.0 - base[c] for c in base.columns if c != "db"})


@pytest.fixture(scope="module")
def res() -> bbt.BBTResult:
    return bbt.fit(bbt.datasets.load_base(), dataset="db", seed=7)


@pytest.fixture(scope="module")
def res_errors() -> bbt.BBTResult:
    return bbt.fit(_base_errors(), dataset="db", lower_is_better=True, seed=7)


def _dataset_means(df: pd.DataFrame) -> pd.DataFrame:
    """Data sets x algorithms: the mean over folds, computed here with pandas alone."""
    return df.groupby("db", sort=False).mean()


def _tables(path) -> dict[str, pd.DataFrame]:
    folder = tables_folder(path)
    return {p.stem: pd.read_csv(p, keep_default_na=False) for p in folder.glob("*.csv")}


def test_the_report_shows_each_algorithms_scores_and_the_claimed_pairs_effects(res, tmp_path):
    path = write_report(res, tmp_path / "r.md", interpretation="weak")
    text = path.read_text()
    scores_at = text.index("## Scores")
    assert text.index("## Data audit") < scores_at < text.index("## Tables")
    # what "equivalent" means, in words, beside the score differences
    assert "win about equally often" in text and "within a point" in text
    assert "percentile bootstrap interval (2000 resamples of the data sets, seed 7)" in text
    assert "also written as CSV in r\\_md\\_tables/ beside it" in text  # where the CSV went
    tables = _tables(path)
    scores = tables["scores"].set_index("algorithm")
    means = _dataset_means(bbt.datasets.load_base())
    assert list(scores.index) == list(res.ranking()["algorithm"])  # best first
    for alg in means.columns:
        row = scores.loc[alg]
        assert row["n_datasets"] == 20
        assert row["mean_score"] == pytest.approx(means[alg].mean())
        assert row["median_score"] == pytest.approx(means[alg].median())
        assert row["mean_low"] < row["mean_score"] < row["mean_high"]
        # Binomial(20, 1/2): P(<= 5) = 0.0207 <= 0.055 < P(<= 6): [x_(6), x_(15)]
        ordered = np.sort(means[alg].to_numpy())
        assert (row["median_low"], row["median_high"]) == pytest.approx((ordered[5], ordered[14]))
    # one row per claimed pair, the better algorithm first, nothing else
    summary = res.summary()
    claimed = summary[summary["weak"].isin(["a better", "b better", "equivalent"])]
    effects = tables["effect-sizes"]
    assert len(effects) == len(claimed) > 0
    for row in effects.itertuples():
        hit = claimed[
            ((claimed["alg_a"] == row.alg_a) & (claimed["alg_b"] == row.alg_b))
            | ((claimed["alg_a"] == row.alg_b) & (claimed["alg_b"] == row.alg_a))
        ].iloc[0]
        if hit["weak"] != "equivalent":
            better = hit["alg_a"] if hit["weak"] == "a better" else hit["alg_b"]
            assert row.alg_a == better and row.decision == "a better"
        diff = means[row.alg_a] - means[row.alg_b]
        assert row.advantage == pytest.approx(diff.median())
        assert row.n_common == 20
        a, b = means[row.alg_a].to_numpy(), means[row.alg_b].to_numpy()
        gap = a[:, None] - b[None, :]  # equal up to floating-point noise: a tie
        delta = np.where(np.abs(gap) <= 1e-12, 0.0, np.sign(gap)).mean()
        assert row.cliffs_delta == pytest.approx(delta)
        assert row.magnitude in ("negligible", "small", "medium", "large")


def test_lower_is_better_scores_keep_their_scale_and_the_advantage_its_sense(
    res, res_errors, tmp_path
):
    # the same results as error rates: the same wins, the same claims; the scores are
    # 1 - accuracy and the advantage of the better algorithm keeps its sign and size
    acc = _tables(write_report(res, tmp_path / "acc.html"))
    err = _tables(write_report(res_errors, tmp_path / "err.html"))
    a, e = acc["scores"].set_index("algorithm"), err["scores"].set_index("algorithm")
    assert e["mean_score"].to_numpy() == pytest.approx(1.0 - a["mean_score"].to_numpy())
    # the same resamples: the error's interval is the accuracy's turned over
    assert e["mean_low"].to_numpy() == pytest.approx(1.0 - a["mean_high"].to_numpy())
    assert e["median_high"].to_numpy() == pytest.approx(1.0 - a["median_low"].to_numpy())
    cols = ["alg_a", "alg_b", "decision", "advantage", "advantage_low", "cliffs_delta"]
    pd.testing.assert_frame_equal(acc["effect-sizes"][cols], err["effect-sizes"][cols])
    better = acc["effect-sizes"][acc["effect-sizes"]["decision"] == "a better"]
    assert (better["advantage"] >= 0).all()
    assert "(lower is better)" in (tmp_path / "err.html").read_text()


def test_every_table_of_the_report_is_written_as_csv_beside_it(res, tmp_path):
    path = write_report(res, tmp_path / "paper.tex")
    folder = tmp_path / "paper_tex_tables"
    tex = path.read_text()
    labels = set(re.findall(r"\\label\{tab:bbt-([^}]+)\}", tex))
    assert labels and {p.stem for p in folder.glob("*.csv")} == labels  # one CSV per table
    # whole tables, at full precision: the per-pair table keeps the columns LaTeX leaves out
    pairs = pd.read_csv(folder / "pairs.csv")
    pd.testing.assert_frame_equal(pairs, res.summary(), check_dtype=False)
    assert {"pair", "median"} <= set(pairs.columns)
    ranking = pd.read_csv(folder / "ranking.csv")
    pd.testing.assert_frame_equal(ranking, res.ranking(), check_dtype=False)
    # a second report replaces the folder the first wrote, leaving no temporary folder
    write_report(res, tmp_path / "paper.tex")
    assert {p.stem for p in folder.glob("*.csv")} == labels
    assert not list(tmp_path.glob(".*"))
    # but a file the user put there is neither deleted nor replaced: the report is refused
    (folder / "mine.csv").write_text("x\n")
    with pytest.raises(OutputConflictError, match=r"'mine\.csv'"):
        write_report(res, tmp_path / "paper.tex")
    assert (folder / "mine.csv").read_text() == "x\n"


def test_latex_tables_use_booktabs_and_siunitx_and_compile_without_it(
    res, tmp_path, compile_latex, siunitx_installed
):
    path = write_report(res, tmp_path / "r.tex")
    tex = path.read_text()
    assert "\\usepackage{siunitx}" in tex
    for table in re.findall(
        r"\\begin\{(?:tabular|longtable)\}.*?\\end\{(?:tabular|longtable)\}", tex, re.S
    ):
        assert "\\toprule" in table and "\\midrule" in table and "\\bottomrule" in table
    scores = tex.split("\\label{tab:bbt-scores}", 1)[1].split("\\end{tabular}", 1)[0]
    assert "\\begin{tabular}{lSSSSSS}" in scores  # the numbers in S columns
    # a header in an S column is braced text; a wide table's long ones are on two lines
    assert "& {\\shortstack[r]{mean\\_\\\\score}} &" in scores
    log = compile_latex(path)
    assert "Overfull \\hbox" not in log
    assert ("siunitx.sty" in log) == siunitx_installed  # loaded where it is installed
    # a TeX installation without siunitx (Debian's texlive-latex-recommended alone)
    bare = tmp_path / "bare.tex"
    bare.write_text(tex.replace("\\IfFileExists{siunitx.sty}", "\\IfFileExists{no-such.sty}"))
    log = compile_latex(bare)
    assert "siunitx.sty" not in log


def test_the_command_says_where_the_tables_went_and_what_equivalent_means(tmp_path, capsys):
    data = tmp_path / "base.csv"
    bbt.datasets.load_base().to_csv(data, index=False)
    out = tmp_path / "r.md"
    args = ["report", str(data), "-o", str(out), "-q", "--interpretation", "strong"]
    assert cli.main(args) == cli.EXIT_OK
    printed = capsys.readouterr().out
    folder = tmp_path / "r_md_tables"
    assert f"wrote its tables as CSV in {folder}/" in printed
    assert (folder / "scores.csv").exists()
    # the terminal says what an equivalence is, and the report has its score difference
    assert "(equivalent: each wins about as often, P(a > b) inside the ROPE [0.45, 0.55]" in printed
    effects = pd.read_csv(folder / "effect-sizes.csv")
    assert (effects["decision"] == "equivalent").any()


def test_a_report_of_several_metrics_has_each_metrics_scores(tmp_path):
    from bbt_widget.outputs.report._build import write_metrics

    df = bbt.datasets.load_base().assign(fold=lambda d: d.groupby("db").cumcount())
    long = df.melt(id_vars=["db", "fold"], var_name="alg", value_name="acc")
    long["err"] = 1.0 - long["acc"]
    compared = bbt.compare_metrics(
        long,
        metrics=["acc", "err"],
        lower_is_better=["err"],
        dataset="db",
        algorithm="alg",
        fold="fold",
        seed=3,
        chains=2,
        iter_sampling=500,
    )
    path = write_metrics(compared, tmp_path / "m.md", interpretation="weak")
    text = path.read_text()
    assert "## Scores (acc)" in text
    scores = _tables(path)["scores"].set_index("algorithm")
    means = _dataset_means(bbt.datasets.load_base())
    assert scores["mean_score"].to_dict() == pytest.approx(means.mean().to_dict())
    # the other metric's tables are there too, each under its own name, its scores on its
    # own scale (error rates, lower is better) after its section
    tables = _tables(path)
    assert {"metric-1-ranking", "metric-1-pairs", "dominance", "metric-1-scores"} <= set(tables)
    assert text.index("## Metric: err") < text.index("## Scores (err)")
    errors = tables["metric-1-scores"].set_index("algorithm")["mean_score"]
    assert errors.to_dict() == pytest.approx((1.0 - means.mean()).to_dict())
    assert "### Scores of err (lower is better) over the data sets" in text


def test_to_latex_sets_numbers_in_siunitx_columns_and_braces_the_rest():
    from bbt_widget.outputs import export

    df = pd.DataFrame({"name": ["a_b", "-2"], "v": [0.5, float("nan")], "n": [1, -2]})
    tex = export.to_latex(df, digits=2)
    assert "\\begin{tabular}{lSS}" in tex
    assert "name & {v} & {n} \\\\" in tex  # headers of S columns are braced text
    assert "a\\_b & 0.50 & 1 \\\\" in tex  # numbers bare, for siunitx to align
    assert "-2 & {} & -2 \\\\" in tex  # an empty (NaN) cell braced; a text column as text
    plain = export.to_latex(df, digits=2, siunitx=False)
    assert "\\begin{tabular}{lrr}" in plain and "name & v & n \\\\" in plain
    with pytest.raises(TypeError, match="siunitx must be True or False"):
        export.to_latex(df, siunitx="yes")
