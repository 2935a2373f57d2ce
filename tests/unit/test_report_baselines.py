"""The report's baselines beside BBT (``--with friedman``, ``signed-rank``, ``sign``): each a
section with its tables (also as CSV) and a paste-ready paragraph whose numbers are the
tables' and whose author-year citations name the right works of the references."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bbt_widget as bbt
from bbt_widget import cli
from bbt_widget.outputs.report._baselines import number

SHIPPED = Path(bbt.__file__).parent / "datasets" / "pmlb16_4fold.csv"


@pytest.fixture
def base_csv(tmp_path):
    path = tmp_path / "base.csv"
    bbt.datasets.load_base().to_csv(path, index=False)
    return path


def _report(path: Path, tmp_path: Path, methods: str, fmt: str = "md") -> Path:
    out = tmp_path / f"r.{fmt}"
    args = ["report", str(path), "--dataset", "db", "--engine", "numpy", "-q"]
    assert cli.main([*args, "--with", methods, "-o", str(out)]) == cli.EXIT_OK
    return out


def _references(text: str) -> list[str]:
    refs = text.split("## References", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\d+\. (.+)$", refs, flags=re.M)


def _cited(paragraph: str, after: str) -> list[str]:
    """The works (author and year) of the citation right after ``after`` in a paragraph."""
    found = re.search(
        re.escape(after) + r" \(([^()]+? (?:19|20)\d\d(?:; [^();]+? (?:19|20)\d\d)*)\)", paragraph
    )
    assert found, after
    return found.group(1).split("; ")


def _listed(refs: list[str], work: str) -> bool:
    """Whether the references list the work cited as ``work`` ("Holm 1979")."""
    from bbt_widget.outputs.citations import REFERENCES

    return {r.short: r.text for r in REFERENCES.values()}[work] in refs


@pytest.mark.slow
def test_with_friedman_writes_the_section_and_its_paragraph(base_csv, tmp_path):
    out = _report(base_csv, tmp_path, "friedman")
    text = out.read_text(encoding="utf-8")
    assert "## Frequentist baseline: Friedman, Nemenyi, Wilcoxon-Holm" in text
    tables = tmp_path / "r_md_tables"
    tests = pd.read_csv(tables / "friedman-tests.csv", dtype=str, keep_default_na=False)
    row = tests.set_index("test")
    # the numbers are the baselines' own (bbt.baselines), and close to SciPy's Friedman on
    # the per-data-set means (the package ranks scores within float noise as ties)
    base = bbt.datasets.load_base()
    fr = bbt.baselines.friedman(base, dataset="db")
    assert float(row.loc["Friedman chi-square", "statistic"]) == pytest.approx(
        fr.statistic, abs=1e-3
    )
    assert float(row.loc["Friedman chi-square", "p_value"]) == pytest.approx(fr.pvalue, rel=1e-2)
    means = base.groupby("db").mean()
    chi2, _ = stats.friedmanchisquare(*means.to_numpy().T)
    assert fr.statistic == pytest.approx(chi2, rel=0.02)
    cd = row.loc["Nemenyi critical difference (alpha 0.05)", "statistic"]
    k, n = means.shape[1], means.shape[0]
    q = stats.studentized_range.ppf(0.95, k, np.inf) / np.sqrt(2)
    assert float(cd) == pytest.approx(q * np.sqrt(k * (k + 1) / (6 * n)), abs=1e-3)
    # the paragraph states the table's numbers as the report prints them (the CSV: whole)
    paragraph = next(p for p in text.split("\n\n") if p.startswith("As a frequentist baseline"))
    fr = row.loc["Friedman chi-square"]
    stat, p = number(float(fr["statistic"])), number(float(fr["p_value"]))
    assert f"chi-square({fr['df']}) = {stat}, p = {p}" in paragraph
    assert f"critical difference {number(float(cd))} at alpha = 0.05" in paragraph
    agreement = pd.read_csv(tables / "friedman-agreement.csv", keep_default_na=False)
    differ = int((agreement["nemenyi"] != "no claim").sum())
    assert f"{differ} of {len(agreement)} pairs differ" in paragraph
    normal = pd.read_csv(tables / "friedman-normality.csv")
    assert len(normal) == k and "shapiro_p" in normal
    assert (
        f"found the scores of {int(normal['normal'].sum())} of {k} algorithms normal" in paragraph
    )
    homo = "Bartlett" if normal["normal"].all() else "Levene"
    assert f"{homo} (equal variances)" in set(tests["test"])
    assert len(paragraph.split()) <= 150
    # the citations name the works of the report's references, by author and year
    refs = _references(text)
    assert _cited(paragraph, "Friedman's test") == ["Friedman 1937", "Demšar 2006"]
    assert _cited(paragraph, "post-hoc test") == ["Nemenyi 1963"]
    assert _cited(paragraph, "Holm's correction") == ["Holm 1979"]
    for work in ("Friedman 1937", "Demšar 2006", "Nemenyi 1963", "Holm 1979"):
        assert _listed(refs, work), work
    assert (tmp_path / "r_md_figures" / "cd_nemenyi.svg").is_file()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("method", "column", "heading"),
    [("signed-rank", "bsr", "Bayesian signed-rank test"), ("sign", "sign", "Bayesian sign test")],
)
def test_with_a_bayesian_test_writes_its_section(base_csv, tmp_path, method, column, heading):
    out = _report(base_csv, tmp_path, method)
    text = out.read_text(encoding="utf-8")
    assert f"## {heading}\n" in text
    table = pd.read_csv(tmp_path / "r_md_tables" / f"{method}.csv", keep_default_na=False)
    for col in ("p_a_better", "p_rope", "p_b_better", "mcse_a_better", "mcse_rope"):
        assert col in table, col
    probs = table[["p_a_better", "p_rope", "p_b_better"]].astype(float).sum(axis=1)
    assert np.allclose(probs, 1.0, atol=2e-3)
    assert (table["mcse_rope"].astype(float) < 0.01).all()
    claims = ("a better", "b better", "equivalent")
    assert table["bbt"].isin(claims).all()  # BBT's claimed pairs
    paragraph = next(p for p in text.split("\n\n") if f"compared with the {heading}" in p)
    same = int((table["bbt"] == table[column]).sum())
    assert f"It agrees with BBT on {same} of {len(table)} pairs." in paragraph
    assert len(paragraph.split()) <= 150
    refs = _references(text)
    assert all(_listed(refs, w) and w.startswith("Benavoli") for w in _cited(paragraph, heading))
    figures = sorted((tmp_path / "r_md_figures").glob(f"simplex_{column}_*.svg"))
    assert 1 <= len(figures) <= 3


@pytest.mark.slow
def test_shipped_data_caps_the_pairs_and_says_so(tmp_path):
    out = _report(SHIPPED, tmp_path, "friedman,signed-rank,sign")
    text = out.read_text(encoding="utf-8")
    table = pd.read_csv(tmp_path / "r_md_tables" / "signed-rank.csv")
    assert len(table) == 45  # 16 algorithms: more claimed pairs than the table shows
    said = re.search(r"The first 45 of BBT's (\d+) claimed pairs \(in BBT's order\)", text)
    assert said and int(said.group(1)) > 45
    tests = pd.read_csv(tmp_path / "r_md_tables" / "friedman-tests.csv", dtype=str)
    assert tests.loc[0, "df"] == "15"
    assert "over the 132 data sets" in text


@pytest.mark.slow
def test_latex_report_with_the_baselines_compiles(base_csv, tmp_path, compile_latex):
    out = _report(base_csv, tmp_path, "friedman,signed-rank,sign", fmt="tex")
    body = out.read_text(encoding="utf-8")
    assert r"\cite{friedman1937,demsar2006}" in body and r"\cite{benavoli2014" in body
    bib = out.with_suffix(".bib").read_text(encoding="utf-8")
    for key in ("friedman1937", "nemenyi1963", "wilcoxon1945", "holm1979", "shapiro1965"):
        assert f"{{{key}," in bib, key
    log = compile_latex(out)  # the report's own bibliography: no BibTeX run
    assert "Missing character" not in log
    assert "undefined" not in log


def test_an_unknown_method_is_refused_naming_the_new_ones(base_csv, tmp_path, capsys):
    args = ["report", str(base_csv), "--dataset", "db", "-o", str(tmp_path / "r.md")]
    assert cli.main([*args, "--with", "frieman"]) == cli.EXIT_INPUT
    err = capsys.readouterr().err
    assert "friedman" in err and "signed-rank" in err and "sign" in err
