"""The report's text is paste-ready: each method's paragraph short, in one citation style
(author and year, ``\\cite`` in LaTeX), each fact said once and true as said; the headline
names who is beaten; claims near a threshold are marked; small data are warned about and
their intervals not passed off as 89%; counts agree with their nouns."""

from __future__ import annotations

import re
import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget.core.wording import counted
from bbt_widget.outputs.citations import REFERENCES
from bbt_widget.outputs.headline import headline
from bbt_widget.outputs.methods_text import (
    MAX_ANALYSIS_WORDS,
    MAX_RESULTS_WORDS,
    NEAR_MARK,
    PAPER,
    methods_text,
    near_threshold,
    precision_sentence,
    render,
    tables_folder,
)

#: An author-year citation as the HTML and Markdown texts write it: "(Wainer 2022)",
#: "(Wainer 2022, Secs. 5.6 and 9.3)", "(Wainer 2022; Bradley and Terry 1952)".
_AUTHOR_YEAR = re.compile(
    r"\(([A-Z][^()]*? (?:19|20)\d\d(?:; [A-Z][^();]*? (?:19|20)\d\d)*)(?:, [^()]+)?\)"
)


def _quiet_fit(data: pd.DataFrame, **kw: object) -> bbt.BBTResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bbt.fit(data, dataset="db", seed=1, **kw)


@pytest.fixture(scope="module")
def wide(_pmlb16_once: pd.DataFrame) -> bbt.BBTResult:
    """16 algorithms x 132 data sets: the strong rule by default, the independence kernel."""
    return _quiet_fit(_pmlb16_once)


@pytest.fixture(scope="module")
def narrow(_base_once: pd.DataFrame) -> bbt.BBTResult:
    """5 algorithms x 20 data sets: the weak rule by default, Gibbs sampling."""
    return _quiet_fit(_base_once)


def _cited_works(text: str) -> set[str]:
    return {work for found in _AUTHOR_YEAR.findall(text) for work in found.split("; ")}


@pytest.mark.parametrize("which", ["wide", "narrow"])
def test_the_bbt_paragraphs_are_short_in_one_citation_style_and_say_each_fact_once(
    which: str, request: pytest.FixtureRequest
) -> None:
    res = request.getfixturevalue(which)
    md = methods_text(res, format="md")
    analysis, results = md.split("\n\n")
    assert len(analysis.split()) <= MAX_ANALYSIS_WORDS, analysis
    assert len(results.split()) <= MAX_RESULTS_WORDS, results
    # one citation style: author and year in Markdown and HTML, \cite in LaTeX; no numbers,
    # no titles, no "(Wainer 2022, ...)" written by hand beside a \cite
    for text in (md, methods_text(res, format="html")):
        assert not re.search(r"\\?\[\d+(?:\\?\]|, )", text), text
        assert PAPER not in text and "<em>" not in text
    works = {REFERENCES[k].short for k in ("wainer2022bbt", "bradley1952", "polson2013")}
    if res.draws.info["kernel"] == "independence":
        works.add(REFERENCES["tierney1994"].short)
    assert _cited_works(md) == works
    tex = methods_text(res, format="tex")
    assert not _AUTHOR_YEAR.search(tex), tex
    keys = {
        k for found in re.findall(r"\\cite(?:\[[^]]*\])?\{([^}]+)\}", tex) for k in found.split(",")
    }
    assert {REFERENCES[k].short for k in keys} == works
    # each fact once: the rule (and why it was taken), in the analysis; no report wording
    rule = "exceeded 0.70" if which == "wide" else "lay above 0.5"
    assert md.count(rule) == 1 and rule in analysis
    assert md.count("5.6") == 1
    for said in ("The claims below", "Two decision rules", "claims below", "interpretation ("):
        assert said not in md
    assert md.count("Monte Carlo standard error") == 1
    # the sampler's two kernels read as one story: why it switches, in the same sentence
    assert "followed by independence" not in md
    if res.draws.info["kernel"] == "independence":
        assert re.search(r"began the \d+ warm-up iterations; the posterior being near normal", md)


def test_the_results_paragraph_names_claims_only_as_room_allows(wide: bbt.BBTResult) -> None:
    """The claims named fill the paragraph's room; the count of the others is exact."""
    summary = wide.summary()
    results = methods_text(wide).split("\n\n")[1]
    said = results.split("We claim ")[1].split(". The per-pair")[0]
    named = said.count(" is better than ") + said.count(" is equivalent to ")
    total = int(summary["strong"].isin(["a better", "b better", "equivalent"]).sum())
    assert 0 < named < total and f"has the other {total - named} claims." in results
    assert "(mean P(a &gt; b) " in results  # the quantity that decided them


def test_the_ranking_models_paragraphs_cite_by_author_and_year() -> None:
    """Plackett-Luce and Mallows cite their works as BBT's paragraph does: no titles in
    italics, no DOIs, no "as in X (2022, ...)" beside the \\cite of LaTeX."""
    from bbt_widget.outputs.report._sections import _ranking_methods

    run = {"chains": 4, "iter_warmup": 250, "iter_sampling": 1000, "seed": 7}
    for label in ("Plackett-Luce", "Mallows"):
        fit = SimpleNamespace(model_label=label, settings=run | {"thin": 20, "leap": 3})
        spans = _ranking_methods(fit, "")
        md, tex = render(spans, "md"), render(spans, "tex")
        assert "doi:" not in md and "*" not in md  # no inline titles or identifiers
        assert "Rojas-Delgado et al. 2022" in _cited_works(md)
        assert not _AUTHOR_YEAR.search(tex) and r"\cite{rojasdelgado2022}" in tex
        assert len(md.split()) <= MAX_ANALYSIS_WORDS


def test_the_capped_bayesian_test_says_how_many_pairs_it_compared(
    narrow: bbt.BBTResult, _base_once: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With more claimed pairs than the table holds, the paragraph says that the first N of
    BBT's M claimed pairs were compared (not that M were)."""
    from bbt_widget.outputs.report import _baselines as rb

    agree = bbt.baselines.agreement(_base_once, narrow, dataset="db", interpretation="weak")
    claimed = int(agree.table["bbt"].isin(["a better", "b better", "equivalent"]).sum())
    shown = 3
    assert claimed > shown
    monkeypatch.setattr(rb, "MAX_TABLE_PAIRS", shown)
    for kind in ("signed-rank", "sign"):
        section = rb.bayesian_test_section(agree, kind)
        text = render(section.methods, "md")
        assert text.startswith(
            f"The first {shown} of BBT's {claimed} claimed pairs (in BBT's order) were"
        )
        assert f"BBT's {claimed} claimed pairs were" not in text
        assert f"on {len(section.tables[0].frame)} pairs" in text or "of 3 pairs" in text


# --------------------------------------------------------------------------- the headline


def _summary(order: list[str], beats: dict[str, list[str]], equivalent: list[tuple[str, str]]):
    rows = []
    for i, a in enumerate(order):
        for b in order[i + 1 :]:
            decision = "no claim"
            if b in beats.get(a, []):
                decision = "a better"
            elif (a, b) in equivalent:
                decision = "equivalent"
            rows.append({"alg_a": a, "alg_b": b, "strong": decision})
    return pd.DataFrame(rows), pd.DataFrame({"algorithm": order})


def test_the_headline_names_whom_each_leader_beats() -> None:
    """Four equivalent leaders, two of whom beat two more algorithms than the others: the
    sentence names the algorithms all four beat, then the two that only lgbm and rf beat."""
    order = ["lgbm", "rf", "xgb", "mlp", "gbm", "svml", "lda", "knn", "dt"]
    common = ["knn", "dt"]
    beats = {"lgbm": ["svml", "lda", *common], "rf": ["svml", "lda", *common]}
    beats |= {"xgb": common, "mlp": common}
    lead = [("lgbm", "rf"), ("lgbm", "xgb"), ("lgbm", "mlp"), ("rf", "xgb"), ("rf", "mlp")]
    summary, ranking = _summary(order, beats, [*lead, ("xgb", "mlp")])
    assert headline(summary, ranking, "strong") == (
        "lgbm, rf, xgb and mlp are practically equivalent and all better than knn and dt; "
        "lgbm and rf also better than svml and lda; 18 of 36 pairs decided under the strong rule"
    )


def test_the_headline_names_the_exceptions_when_fewer() -> None:
    order = ["a", *(f"x{k}" for k in range(10)), "y"]
    beats = {"a": [f"x{k}" for k in range(10)]}
    summary, ranking = _summary(order, beats, [])
    assert headline(summary, ranking, "strong").startswith(
        "a is better than every other algorithm but y;"
    )


def test_the_headline_of_a_real_fit_is_true_of_each_algorithm(wide: bbt.BBTResult) -> None:
    """Every "X (also) better than Y" the headline says is a claim of the summary, and each
    leader's beaten algorithms are all named."""
    summary, ranking = wide.summary(), wide.ranking()
    text = headline(summary, ranking, "strong")
    beats = set()
    for a, b, d in zip(summary["alg_a"], summary["alg_b"], summary["strong"]):
        if d in ("a better", "b better"):
            beats.add((a, b) if d == "a better" else (b, a))
    said: dict[str, set[str]] = {}
    clauses = text.split("; ")[:-1]
    first = re.match(r"(.+?) are practically equivalent and all better than (.+)", clauses[0])
    assert first, text
    leaders = re.split(r", | and ", first[1])
    for a in leaders:
        said[a] = set(re.split(r", | and ", first[2]))
    for clause in clauses[1:]:
        who, also = clause.split(" also better than ")
        for a in re.split(r", | and ", who):
            said[a] |= set(re.split(r", | and ", also))
    for a in leaders:
        below = [b for b in ranking["algorithm"] if b not in leaders]
        assert said[a] == {b for b in below if (a, b) in beats}, (a, text)
    assert "6 of the 12" not in text


# --------------------------------------------------------------------------- near a threshold


def test_claims_near_their_threshold_are_found_by_the_deciding_quantity() -> None:
    summary = pd.DataFrame(
        {
            "alg_a": list("abcdef"),
            "alg_b": list("uvwxyz"),
            "mean": [0.7004, 0.2996, 0.7200, 0.5496, 0.52, 0.69],
            "above_50": [0.9504, 0.04, 1.0, 0.6, 0.7, 0.99],
            "in_rope": [0.0, 0.0, 0.0, 0.9548, 0.96, 0.1],
            "strong": ["a better", "b better", "a better", "equivalent", "equivalent", "no claim"],
            "weak": ["a better", "b better", "a better", "equivalent", "equivalent", "a better"],
        }
    )
    rope = (0.45, 0.55)
    assert near_threshold(summary, "strong", rope).tolist() == [True] * 2 + [
        False,
        True,
        False,
        False,
    ]
    assert near_threshold(summary, "weak", rope).tolist() == [
        True,
        False,
        False,
        True,
        False,
        False,
    ]


def _rope_near(res: bbt.BBTResult, gap: float) -> tuple[float, tuple[float, float], str]:
    """A ROPE whose upper bound lies ``gap`` above the mean of the strong rule's closest
    equivalence below it: that claim then sits ``gap`` from its threshold."""
    summary = res.summary()
    equal = summary[summary["strong"] == "equivalent"]
    row = equal.loc[equal["mean"].idxmax()]
    bound = float(row["mean"]) + gap
    return bound, (1.0 - bound, bound), str(row["pair"])


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["md", "html", "tex"])
def test_a_claim_near_its_threshold_is_marked_in_the_text_and_tables(
    narrow: bbt.BBTResult, tmp_path, fmt: str, compile_latex
) -> None:
    res = narrow
    _, rope, pair = _rope_near(res, 0.002)
    summary = res.summary(rope=rope)
    assert summary.set_index("pair").loc[pair, "strong"] == "equivalent"
    text = methods_text(res, format=fmt, interpretation="strong", rope=rope)
    n = int(near_threshold(summary, "strong", rope).sum())
    assert n >= 1
    one = "lies within 0.005 of its threshold" if n == 1 else "lie within 0.005 of their"
    assert f"{counted(n, 'claim')} ({NEAR_MARK}) {one}" in text
    out = tmp_path / f"r.{fmt}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bbt.report.write(res, out, methods="none", interpretation="strong", rope=rope)
    body = out.read_text(encoding="utf-8")
    assert f"equivalent {NEAR_MARK}" in body  # the per-pair table's strong column
    assert "marks a claim within 0.005 of its threshold" in body  # the column definitions
    # the CSV keeps the decisions as they are
    csv = pd.read_csv(tables_folder(out) / "pairs.csv")
    assert not csv["strong"].astype(str).str.contains(NEAR_MARK).any()
    if fmt == "tex":  # pdflatex prints the mark (\textdagger of its utf8 input)
        log = compile_latex(out)
        assert "Missing character" not in log and "not set up for use with LaTeX" not in log


# --------------------------------------------------------------------------- small data


SMALL = pd.DataFrame({"db": ["d1", "d2"], "a": [0.9, 0.8], "b": [0.7, 0.75], "c": [0.6, 0.85]})


def test_fewer_than_five_data_sets_are_warned_about() -> None:
    with pytest.warns(bbt.DataWarning, match="only 2 data sets"):
        bbt.fit(SMALL, dataset="db", seed=1)
    found = bbt.audit(SMALL, dataset="db").to_frame()
    assert "few-datasets" in set(found["check"])
    five = pd.concat([SMALL.assign(db=SMALL["db"] + s) for s in "xyz"]).reset_index(drop=True)
    assert "few-datasets" not in set(bbt.audit(five, dataset="db").to_frame()["check"])


def test_intervals_small_data_cannot_give_are_left_blank_and_said_why() -> None:
    from bbt_widget.outputs.report._scores import scores_section

    res = _quiet_fit(SMALL)
    summary = res.summary()
    section = scores_section(
        res, summary, list(res.ranking()["algorithm"]), rule="weak", rope=(0.45, 0.55), hdi=0.89
    )
    assert section is not None
    scores = section.tables[0].frame
    assert scores[["mean_low", "mean_high", "median_low", "median_high"]].isna().all().all()
    assert any("left blank" in t and "89%" in t for t in section.text)


@pytest.mark.slow
def test_the_command_line_warns_about_small_data(tmp_path, capsys) -> None:
    from bbt_widget import cli

    path = tmp_path / "small.csv"
    SMALL.to_csv(path, index=False)
    out = tmp_path / "r.md"
    assert cli.main(["report", str(path), "-q", "--with", "none", "-o", str(out)]) in (
        0,
        cli.EXIT_DIAGNOSTICS,
    )
    err = capsys.readouterr().err
    assert "bbt-widget: warning: only 2 data sets" in err
    body = out.read_text(encoding="utf-8")
    assert "few-datasets" in body and "left blank" in body


# --------------------------------------------------------------------------- counts in words


def test_no_claim_gets_no_every_claim_sentence() -> None:
    res = _quiet_fit(SMALL)
    assert (res.summary()["weak"] == "no claim").all()
    text = methods_text(res)
    assert "Every claim" not in text and "No pair lies within 3 Monte Carlo" in text
    assert "Every claim" not in precision_sentence(res, "weak", (0.45, 0.55), 0.89)


def test_a_count_of_one_is_singular() -> None:
    assert counted(1, "difference") == "1 difference"
    assert counted(0, "pair") == "0 pairs" and counted(2, "analysis", "analyses") == "2 analyses"
    data = pd.DataFrame(
        {"db": [f"d{k}" for k in range(6)], "a": [0.1 + 0.2, 0.5, 0.6, 0.7, 0.8, 0.9]}
    ).assign(b=[0.3, 0.4, 0.5, 0.8, 0.7, 0.95])
    what = bbt.audit(data, dataset="db").to_frame().set_index("check").loc["float-noise", "what"]
    assert what == "1 difference between means is floating-point noise and counts as a tie"
    assert np.isclose(data.loc[0, "a"], data.loc[0, "b"])
