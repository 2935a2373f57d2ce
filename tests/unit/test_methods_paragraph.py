"""The methods paragraph is paste-ready: a paper's "Statistical analysis" of at most 150
words naming the metric, the data and the sampler, with author-year citations (``\\cite`` in
LaTeX) the references resolve, and no provenance (seeds, hashes, engine builds); the report
of several metrics records the user's seed."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget import cli
from bbt_widget.outputs.citations import bibtex, references
from bbt_widget.outputs.methods_text import PAPER, methods_text


@pytest.fixture(scope="module")
def long_fit():
    base = bbt.datasets.load_base()
    long = base.assign(fold=base.groupby("db").cumcount()).melt(
        id_vars=["db", "fold"], var_name="alg", value_name="accuracy"
    )
    return bbt.fit(long, dataset="db", algorithm="alg", fold="fold", score="accuracy", seed=3)


def _analysis(result, fmt: str = "md") -> str:
    return methods_text(result, format=fmt).split("\n\n")[0]


def test_the_paragraph_is_short_and_names_metric_data_and_sampler(long_fit):
    text = _analysis(long_fit)
    assert len(text.split()) <= 150
    assert "5 algorithms on 20 data sets (4 folds each) by accuracy" in text
    assert "Pólya-Gamma Gibbs" in text and "bbt-widget " in text
    assert "ROPE \\[0.45, 0.55\\]" in text


def test_no_provenance_and_no_author_twice_in_the_paragraph(long_fit):
    text = _analysis(long_fit)
    for said in ("sha256", "httpstan", "polyagamma", "seed", PAPER, "Wainer (2022", "BBT paper"):
        assert said not in text


def test_every_citation_resolves(long_fit):
    md = _analysis(long_fit)
    shorts = {r.short for r in references(long_fit)}
    year = r"[^();]+? (?:19|20)\d\d"
    found = re.findall(rf"\(({year}(?:; {year})*)", md)
    cited = {work for c in found for work in c.split("; ")}
    assert cited == {"Wainer 2022", "Bradley and Terry 1952", "Polson et al. 2013"} <= shorts
    tex = _analysis(long_fit, "tex")
    found = re.findall(r"\\cite(?:\[[^]]*\])?\{([^}]+)\}", tex)
    keys = {key for group in found for key in group.split(",")}
    assert keys == {"wainer2022bbt", "bradley1952", "polson2013"}
    bib = bibtex(long_fit)
    assert all(f"{{{key}," in bib for key in keys)


@pytest.mark.slow
def test_the_report_of_several_metrics_records_the_users_seed(tmp_path: Path):
    rows = [
        {"db": f"d{d}", "alg": a, "acc": acc + d / 100, "f1": f1 - d / 200}
        for d in range(8)
        for a, acc, f1 in (("A", 0.9, 0.8), ("B", 0.8, 0.75), ("C", 0.85, 0.9))
    ]
    path = tmp_path / "m.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    out = tmp_path / "r.md"
    words = ["report", str(path), "--algorithm", "alg", "--dataset", "db", "--seed", "1"]
    words += ["--score", "acc", "--score", "f1", "-q", "--with", "none", "-o", str(out)]
    assert cli.main(words) in (cli.EXIT_OK, cli.EXIT_DIAGNOSTICS)
    seed_line = next(line for line in out.read_text().splitlines() if "**seed**" in line)
    assert seed_line.startswith("- **seed**: 1 (metric k of the 2 fitted with")


@pytest.mark.slow
def test_the_sampler_sentence_names_the_kernel_that_gave_the_draws(long_fit):
    """On many data sets the numpy engine's kept draws come from the independence
    Metropolis-Hastings kernel: the paragraph says so and cites Tierney (1994), which the
    references then hold; where Gibbs sampled (the 5 x 20 results here), neither appears."""
    wide = bbt.fit(bbt.datasets.load_pmlb16(), dataset="db", seed=1)
    assert wide.draws.info["kernel"] == "independence"
    text = _analysis(wide)
    assert "independence Metropolis-Hastings" in text and len(text.split()) <= 150
    keys = [r.key for r in references(wide)]
    assert "tierney1994" in keys and "@article{tierney1994," in bibtex(wide)
    assert "(Tierney 1994)" in text
    assert long_fit.draws.info["kernel"] == "gibbs"
    assert "Metropolis" not in _analysis(long_fit)
    assert "tierney1994" not in [r.key for r in references(long_fit)]
