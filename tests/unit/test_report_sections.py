"""Report sections from hand-made model outputs (no fit): the Plackett-Luce top-k chart at
16 algorithms and the methods text on its sampler (the first place of two ranking models:
``test_ranking_vs_bbt.py``)."""

from __future__ import annotations

import pandas as pd
import pytest

from bbt_widget.ranking._plackett_luce import RankingModelResult, top_k_shown


def test_top_k_chart_is_readable_at_16_algorithms():
    assert top_k_shown(5) == [1, 2, 3, 4]
    assert top_k_shown(16) == [1, 2, 3, 5, 10]  # was 15 panels in one row
    names = [f"alg{i}" for i in range(16)]
    top_k = pd.DataFrame(
        [
            {"algorithm": a, "k": k, "p": min(1.0, k / 16), "low": 0.0, "high": 1.0}
            for a in names
            for k in range(1, 17)
        ]
    )
    ranking = pd.DataFrame({"algorithm": names})
    empty = pd.DataFrame()
    res = RankingModelResult(ranking, top_k, empty, empty, None, None, tuple(names), (), ())
    spec = res.chart_top_k().to_dict()
    assert spec["columns"] == 3
    shown = sorted({row["k"] for row in spec["datasets"][next(iter(spec["datasets"]))]})
    assert shown == [1, 2, 3, 5, 10]
    assert spec["spec"]["width"] * spec["columns"] <= 800


@pytest.mark.parametrize("n", [2, 3, 7])
def test_top_k_never_shows_top_n(n):
    assert max(top_k_shown(n)) < n


def test_the_methods_text_names_the_plackett_luce_sampler():
    """The report's methods paragraph says how the Plackett-Luce posterior was sampled (and
    cites the Gibbs sampler's paper), not only the model's: the one sampler of the package
    (the NUTS twin is a test oracle, never a user's fit)."""
    sampler = "gibbs"
    says = (
        "sampled by Gibbs with latent Gamma variables (Caron and Doucet 2012): "
        "4 chains, 250 warm-up and 1000 kept sweeps each"
    )
    from bbt_widget.outputs.methods_text import render
    from bbt_widget.outputs.report._sections import _ranking_methods

    empty = pd.DataFrame()
    settings = {"chains": 4, "iter_warmup": 250, "iter_sampling": 1000, "seed": 7}
    res = RankingModelResult(
        empty, empty, empty, empty, None, None, (), (), (), settings | {"sampler": sampler}
    )
    assert says in render(_ranking_methods(res, ""), "md")


@pytest.mark.parametrize(
    ("option", "says"),
    [
        ({"rope": (0.6, 0.4)}, "rope low must be below rope high"),
        ({"hdi": 1.5}, "hdi mass must lie strictly between 0 and 1"),
        ({"interpretation": "lenient"}, "interpretation"),
    ],
)
def test_a_bad_report_option_is_refused_before_the_fit(base, tmp_path, monkeypatch, option, says):
    # the report's options are checked once, at write's door: a bad rope or hdi surfaced
    # only once the report was rendered, after a fit that may take minutes
    import bbt_widget as bbt
    from bbt_widget.fitting import PreparedFit
    from bbt_widget.outputs.report import _build as report_build

    def refuse(*args, **kwargs):
        raise AssertionError("started although an option was bad")

    monkeypatch.setattr(PreparedFit, "sample", refuse)
    monkeypatch.setattr(report_build, "start_methods", refuse)
    with pytest.raises(ValueError, match=says):
        bbt.report.write(base, tmp_path / "r.md", dataset="db", **option)
    assert not (tmp_path / "r.md").exists()


def test_an_unknown_keyword_of_write_is_named_before_anything_runs(base, tmp_path, monkeypatch):
    # passed on to the fit it failed as "fit() got an unexpected keyword argument", after
    # the other methods had started
    import bbt_widget as bbt
    from bbt_widget.fitting import PreparedFit
    from bbt_widget.outputs.report import _build as report_build

    def refuse(*args, **kwargs):
        raise AssertionError("started although a keyword was unknown")

    monkeypatch.setattr(PreparedFit, "sample", refuse)
    monkeypatch.setattr(report_build, "start_methods", refuse)
    with pytest.raises(TypeError) as info:
        bbt.report.write(base, tmp_path / "r.html", dataset="db", bogus=1)
    message = str(info.value)
    assert message.startswith("report.write() got an unexpected keyword 'bogus'; its keywords")
    own, of_fit = message.split("its keywords are ")[1].split(", and with results, the fit's: ")
    assert {"methods", "rope", "robustness", "progress"} <= set(own.split(", "))
    assert {"dataset", "tie_threshold", "seed", "engine"} <= set(of_fit.split(", "))
    assert "progress" not in of_fit.split(", ") and not (tmp_path / "r.html").exists()
