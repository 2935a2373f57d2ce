"""The probability simplex of the hierarchical correlated t-test (paper 001, Fig. 13) and the
report's "Pairwise tests" section that shows it: real Stan fits on simulated data."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget import engines
from bbt_widget.baselines import agreement, hierarchical_pairs
from bbt_widget.baselines._simplex import barycentric, winning_region
from bbt_widget.baselines._simulate import simulate_cv_results
from bbt_widget.outputs.report import _sections as rs
from bbt_widget.outputs.report._render import write_report

LAYOUT = dict(dataset="dataset", algorithm="algorithm", score="score", fold="fold", run="run")
FAST = dict(chains=4, iter_warmup=500, iter_sampling=500, seed=11)

pytestmark = pytest.mark.stan


@pytest.fixture(scope="module")
def three():
    """Three algorithms on 8 data sets x 2 runs x 5 folds: c beats b by 0.05 everywhere, a
    and b are close (mean difference 0.004, ROPE 0.01)."""
    if "pystan" not in engines.available_engines():
        pytest.skip("PyStan is not available here")
    a = simulate_cv_results(8, 2, 5, mu0=0.004, sigma0=0.004, seed=2)
    c = a[a["algorithm"] == "b"].assign(algorithm="c", score=lambda f: f["score"] + 0.05)
    data = pd.concat([a, c], ignore_index=True)
    return data, hierarchical_pairs(data, **LAYOUT, **FAST)


def _layer_rows(spec: dict, mark: str) -> list[dict]:
    names = []
    for layer in spec["layer"]:
        kind = layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"]
        if kind == mark and layer["data"]["name"] not in names:
            names.append(layer["data"]["name"])
    return [row for name in names for row in spec["datasets"][name]]


def test_hierarchical_simplex_draws_its_thetas(three):
    _, pairs = three
    fit = pairs.fits[("b", "a")]
    row = fit.table.iloc[0]
    spec = fit.simplex().to_dict()
    json.dumps(spec)
    vertices = _layer_rows(spec, "text")
    assert [v["name"] for v in vertices] == ["b better", "rope", "a better"]
    assert [v["note"] for v in vertices] == [
        f"P = {row[c]:.3f}" for c in ("p_left", "p_rope", "p_right")
    ]
    points = pd.DataFrame(_layer_rows(spec, "circle"))
    theta = fit.theta[["theta_left", "theta_rope", "theta_right"]].to_numpy()
    assert len(points) == len(theta) == 2000  # 4 chains x 500 draws, none thinned
    np.testing.assert_allclose(points[["x", "y"]].to_numpy(), barycentric(theta), atol=5e-5)
    assert points["region"].tolist() == winning_region(theta).tolist()
    assert "Hierarchical" in spec["title"] and "2000 draws" in spec["title"]


def test_pairwise_section_shows_a_pair_in_the_simplex(three, tmp_path):
    data, pairs = three
    flat = data.assign(cv=data["run"] * 5 + data["fold"])
    layout = dict(dataset="dataset", algorithm="algorithm", score="score", fold="cv")
    fit = bbt.fit(flat, engine="pystan", seed=1, **layout)
    agree = agreement(flat, fit, hierarchical=pairs, seed=1, n_samples=4000, **layout)
    section = rs.pairwise_section(agree)
    assert "sign" in section.tables[0].frame.columns
    chosen, why = rs.simplex_pair(agree)
    a, b = chosen.table.iloc[0][["alg_a", "alg_b"]]
    assert pairs.fits[(a, b)] is chosen
    t = agree.table
    differ = t[t["bbt"] != t["hierarchical"]]
    if len(differ):
        assert {a, b} == set(differ.iloc[0][["alg_a", "alg_b"]]) and "differ" in why
    else:
        assert "closest call" in why
    assert set(section.charts) == {"pairwise_simplex", "pairwise_simplex_bsr"}
    hier = section.charts["pairwise_simplex"][0].to_dict()
    bsr = section.charts["pairwise_simplex_bsr"][0].to_dict()
    names = [v["name"] for v in _layer_rows(hier, "text")]
    assert names == [v["name"] for v in _layer_rows(bsr, "text")]  # one orientation
    assert {names[0], names[2]} == {f"{a} better", f"{b} better"}
    html = write_report(fit, tmp_path / "r.html", sections=[section]).read_text()
    for fig in ("pairwise_simplex", "pairwise_simplex_bsr"):
        assert html.count(f'id="fig-{fig}"') == 1, fig
