"""The probability simplex of the Bayesian pairwise tests (Benavoli et al. 2017's triangle):
barycentric coordinates, decision regions, thinning, vertex labels, specs with hostile names."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from bbt_widget.baselines import bayesian_sign_test, bayesian_signed_rank, correlated_ttest
from bbt_widget.baselines._simplex import (
    MAX_POINTS,
    barycentric,
    region_frame,
    short_name,
    simplex_chart,
    simplex_points,
    thinning_step,
    vertex_frame,
    winning_region,
)

H = np.sqrt(3) / 2


def _layers(spec: dict) -> list[dict]:
    return spec["layer"]


def _values(spec: dict, mark: str, column: str) -> list:
    """The values of ``column`` in the inline data of the layers drawing ``mark``."""
    names = []  # the two text layers share one data set: read it once
    for layer in _layers(spec):
        kind = layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"]
        if kind == mark and layer["data"]["name"] not in names:
            names.append(layer["data"]["name"])
    return [row[column] for name in names for row in spec["datasets"][name] if column in row]


def test_barycentric_coordinates_of_known_points():
    theta = np.array(
        [
            [1, 0, 0],  # a better: bottom left
            [0, 1, 0],  # rope: top
            [0, 0, 1],  # b better: bottom right
            [1 / 3, 1 / 3, 1 / 3],  # centre
            [0.5, 0, 0.5],  # middle of the bottom side
            [0.5, 0.5, 0],  # middle of the left side
            [0.2, 0.3, 0.5],
        ]
    )
    expected = [
        (0, 0),
        (0.5, H),
        (1, 0),
        (0.5, H / 3),
        (0.5, 0),
        (0.25, H / 2),
        (0.5 + 0.3 / 2, 0.3 * H),  # x = right + rope / 2, y = rope * sqrt(3) / 2
    ]
    np.testing.assert_allclose(barycentric(theta), expected, atol=1e-15)
    assert winning_region(theta[[0, 1, 2, 6]]).tolist() == ["left", "rope", "right", "right"]
    with pytest.raises(ValueError, match=r"shape \(n, 3\)"):
        barycentric(np.ones((4, 2)))


def _inside(region: pd.DataFrame, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    upper = np.interp(x, region["x"], region["y"], left=np.nan, right=np.nan)
    lower = np.interp(x, region["x"], region["y2"], left=np.nan, right=np.nan)
    return (lower - 1e-12 <= y) & (y <= upper + 1e-12)


def test_shaded_regions_are_where_each_theta_is_the_largest():
    theta = np.random.default_rng(0).dirichlet([0.7, 0.7, 0.7], 20_000)
    xy = barycentric(theta)
    regions = region_frame()
    assert set(regions["region"]) == {"left", "rope", "right"}
    winner = winning_region(theta)
    for name, region in regions.groupby("region"):
        inside = _inside(region, xy[:, 0], xy[:, 1])
        # every draw whose largest theta is this region's lies in its area, and no other
        assert inside[winner == name].all(), name
        assert not inside[winner != name].any(), name
    # together the three areas are the whole triangle: sqrt(3) / 4
    area = sum(np.trapezoid(g["y"] - g["y2"], g["x"]) for _, g in regions.groupby("region"))
    assert area == pytest.approx(np.sqrt(3) / 4)


def test_draws_are_thinned_evenly_to_at_most_max_points():
    assert thinning_step(50_000) == 17 and len(range(0, 50_000, 17)) <= MAX_POINTS
    assert thinning_step(4000) == 2 and thinning_step(3000) == 1 and thinning_step(10) == 1
    theta = np.random.default_rng(1).dirichlet([2, 3, 4], 50_000)
    points = simplex_points(theta)
    assert 1000 <= len(points) <= MAX_POINTS
    np.testing.assert_allclose(points["theta_rope"], theta[::17, 1], rtol=0, atol=5e-5)
    np.testing.assert_allclose(points[["x", "y"]], barycentric(theta[::17]), rtol=0, atol=5e-5)
    assert points["region"].tolist() == winning_region(theta[::17]).tolist()
    assert len(simplex_points(theta[:4000])) == 2000
    assert len(simplex_points(theta[:500])) == 500
    assert len(simplex_points(theta, max_points=100)) == 100


def test_vertex_labels_name_the_algorithms():
    v = vertex_frame("lgbm", "svm", ["P = 0.100", "P = 0.800", "P = 0.100"])
    assert v["name"].tolist() == ["lgbm better", "rope", "svm better"]
    assert v["region"].tolist() == ["left", "rope", "right"]
    assert v["x"].tolist() == [0.0, 0.5, 1.0]
    assert (v["name_y"] < 0).tolist() == [True, False, True]  # below the bottom, above the top
    long = "x" * 50
    assert short_name(long) == "x" * 40 + "…"
    rockets = "🚀" * 60  # one code point each: never cut inside a character
    assert short_name(rockets) == "🚀" * 40 + "…"


def test_sign_test_simplex_spec(base):
    res = bayesian_sign_test(base, dataset="db", seed=2)
    row = res.table.set_index("pair").loc["lgbm > svm"]
    spec = res.simplex("lgbm", "svm").to_dict()
    json.dumps(spec)  # plain JSON: what the report and the widget send
    assert _values(spec, "text", "name") == ["lgbm better", "rope", "svm better"]
    notes = [f"P = {row[c]:.3f}" for c in ("p_left", "p_rope", "p_right")]
    assert _values(spec, "text", "note") == notes
    regions = _values(spec, "circle", "region")
    assert 1000 <= len(regions) <= MAX_POINTS
    # the shown draws fall in the regions in the table's proportions (Monte Carlo thinning)
    shares = pd.Series(regions).value_counts(normalize=True)
    assert shares.get("rope", 0) == pytest.approx(row["p_rope"], abs=0.03)
    assert "50000 draws" in spec["title"] and "20 data sets" in spec["title"]
    # the other orientation swaps the bottom vertices and their probabilities
    back = res.simplex("svm", "lgbm").to_dict()
    assert _values(back, "text", "name") == ["svm better", "rope", "lgbm better"]
    assert _values(back, "text", "note") == notes[::-1]


def test_signed_rank_simplex_spec(base):
    res = bayesian_signed_rank(base, dataset="db", seed=2, n_samples=20_000)
    row = res.table.set_index("pair").loc["lgbm > xgb"]
    spec = res.simplex("lgbm", "xgb").to_dict()
    assert _values(spec, "text", "name") == ["lgbm better", "rope", "xgb better"]
    assert _values(spec, "text", "note")[1] == f"P = {row['p_rope']:.3f}"
    assert len(_values(spec, "circle", "x")) == len(range(0, 20_000, thinning_step(20_000)))
    with pytest.raises(ValueError, match="holds 10 pairs"):
        res.simplex()


def test_correlated_simplex_places_each_data_set_at_its_masses(base):
    res = correlated_ttest(base, dataset="db", a="svm", b="lgbm", rho=0.25)
    spec = res.simplex().to_dict()
    labels = _values(spec, "circle", "label")
    assert labels == res.table["dataset"].tolist()
    theta = res.table[["p_left", "p_rope", "p_right"]].to_numpy()
    xy = barycentric(theta)
    np.testing.assert_allclose(_values(spec, "circle", "x"), xy[:, 0], rtol=0, atol=5e-5)
    counts = np.bincount(theta.argmax(axis=1), minlength=3)
    assert _values(spec, "text", "note") == [f"{c} data set{'' if c == 1 else 's'}" for c in counts]
    assert _values(spec, "text", "name") == ["svm better", "rope", "lgbm better"]


def test_pairs_that_never_met_have_no_simplex(two_groups):
    res = bayesian_sign_test(two_groups, dataset="db", seed=1, n_samples=1000)
    with pytest.raises(ValueError, match="no data set in common"):
        res.simplex("x", "z")


HOSTILE = (
    "<script>alert(1)</script>",
    "a.b[0]",
    "x:Q",
    "datum.y'); alert(1); ('",
    "${name}",
    "x\ny",
    "🚀" * 60,
)


def test_hostile_names_are_data_not_code():
    theta = np.random.default_rng(3).dirichlet([3, 4, 5], 5000)
    for a, b in zip(HOSTILE, HOSTILE[1:] + HOSTILE[:1]):
        chart = simplex_chart(
            theta, a, b, ["P = 1", "P = 2", "P = 3"], title=f"{a} vs {b}", labels=[a] * 5000
        )
        spec = chart.to_dict()
        text = json.dumps(spec)
        assert _values(spec, "text", "name") == [
            f"{short_name(a)} better",
            "rope",
            f"{short_name(b)} better",
        ]
        assert set(_values(spec, "circle", "label")) == {a}
        # the names are values of the data only: no field, expression or scale names them
        for layer in _layers(spec):
            encoded = json.dumps(layer.get("encoding", {})) + json.dumps(layer.get("transform", []))
            assert short_name(a) not in encoded and short_name(b) not in encoded
        assert spec["title"] == f"{a} vs {b}" and json.loads(text) == spec


def test_chart_renders_offline():
    vlc = pytest.importorskip("vl_convert")
    theta = np.random.default_rng(4).dirichlet([3, 4, 5], 5000)
    chart = simplex_chart(theta, "🚀" * 60, "<b>", ["P = 0.1", "P = 0.8", "P = 0.1"], title="t")
    svg = vlc.vegalite_to_svg(chart.to_dict())
    assert svg.count("<circle") + svg.count("<path") > 100
    assert "&lt;b&gt; better" in svg


def test_the_report_draws_the_first_disagreement_else_the_closest_call():
    from types import SimpleNamespace

    from bbt_widget.outputs.report._sections import simplex_pair

    table = pd.DataFrame(
        {
            "alg_a": ["x", "x", "y"],
            "alg_b": ["y", "z", "z"],
            "bbt": ["a better", "a better", "no claim"],
            "hierarchical": ["a better", "no claim", "no claim"],
            "hier_p_left": [0.99, 0.5, 0.45],
            "hier_p_rope": [0.01, 0.3, 0.10],
            "hier_p_right": [0.0, 0.2, 0.45],
        }
    )
    # the fits are keyed in the hierarchical test's own order, which may be the other way
    fits = {("x", "y"): "fit xy", ("z", "x"): "fit zx", ("y", "z"): "fit yz"}

    def agreement(table, fits):
        return SimpleNamespace(table=table, hierarchical=SimpleNamespace(fits=fits))

    assert simplex_pair(agreement(table, fits)) == (
        "fit zx",
        "the first pair on which it and BBT differ",
    )
    same = table.assign(hierarchical=table["bbt"])
    assert simplex_pair(agreement(same, fits)) == ("fit yz", "the closest call of the pairs")
    # a pair without a fit (a failed one) is never drawn; no fit at all: no chart
    assert simplex_pair(agreement(table, {("x", "y"): "fit xy"}))[0] == "fit xy"
    assert simplex_pair(agreement(table, {})) is None
    assert simplex_pair(SimpleNamespace(table=table, hierarchical=None)) is None


def test_a_decision_another_seed_could_change_is_marked_unsettled():
    """The tests with a ROPE wrote "no claim" both for a pair far from any threshold and for
    one whose region probability sits within 3 MCSE of 0.95 (another seed could claim it):
    the table now names the second kind ``unsettled``, as BBT's ``unsettled()`` does."""
    import pandas as pd

    from bbt_widget.baselines._simplex import with_region_mcse

    table = pd.DataFrame(
        {
            "p_left": [0.01, 0.02, 0.30, 0.955],
            "p_rope": [0.02, 0.03, 0.40, 0.04],
            "p_right": [0.97, 0.95, 0.30, 0.005],
        }
    )
    mcse = [[0.001, 0.001, 0.01, 0.004]] * 3
    out = with_region_mcse(table, mcse)
    # 0.97 is 20 MCSE above 0.95; 0.95 is on it; 0.30-0.40 are far below; 0.955 is 1.25 MCSE
    assert out["decision"].tolist() == ["b better", "no claim", "no claim", "no claim"]
    assert out["unsettled"].tolist() == [False, True, False, True]


def test_the_report_names_the_signed_rank_pairs_left_unsettled(base):
    """On the shipped results at few draws, the pairs left unsettled are named in the
    report's signed-rank section, and only those."""
    import bbt_widget as bbt
    from bbt_widget.baselines import agreement
    from bbt_widget.outputs.report._baselines import bayesian_test_section

    fitted = bbt.fit(base, dataset="db", seed=1)
    agreed = agreement(base, fitted, dataset="db", n_samples=300, seed=1)
    own = agreed.bsr.table.set_index(["alg_a", "alg_b"])["unsettled"]
    assert own.any(), "no pair unsettled at 300 draws: the test would show nothing"
    section = bayesian_test_section(agreed, "signed-rank")
    text = " ".join(str(t) for t in section.text)
    claimed = agreed.table[agreed.table["bbt"].isin(["a better", "b better", "equivalent"])]
    shown = (claimed if len(claimed) else agreed.table).head(len(section.tables[0].frame))
    listed = text.split("Unsettled at this precision")[1] if "Unsettled" in text else ""
    for a, b, pair in zip(shown["alg_a"], shown["alg_b"], shown["pair"]):
        flag = bool(own.get((a, b), own.get((b, a))))
        assert (str(pair) in listed) == flag, (pair, flag, listed)
