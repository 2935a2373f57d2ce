"""Critical-difference diagrams: BBT's (``bbt.charts.fit_cd_diagram``) from hand-built decisions
and a hand-built posterior, the Wilcoxon-Holm diagram of the baselines on data whose tests
are known, and the highlighted algorithms in every diagram (their colour, their legend, the
SVG export)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget import charts
from bbt_widget.baselines import nemenyi, scores_cd_diagram, wilcoxon_holm
from bbt_widget.charts.frames_decisions import cd_groups
from bbt_widget.core.draws import Draws
from bbt_widget.core.palette import HIGHLIGHT_COLORS, MATRIX_DECISION_COLORS
from bbt_widget.core.result import BBTResult
from bbt_widget.outputs import export

# --------------------------------------------------------------------------- groups


def _decisions(rows: list[tuple[str, str, str]]) -> pd.DataFrame:
    t = pd.DataFrame(rows, columns=["alg_a", "alg_b", "strong"])
    t["weak"] = "no claim"
    return t


def test_groups_are_the_maximal_runs_without_a_better_claim():
    # a > c, b > d, c > e claimed; the rest equivalent or no claim
    claims = {("a", "c"), ("b", "d"), ("c", "e"), ("a", "d"), ("a", "e"), ("b", "e")}
    order = list("abcde")
    rows = [
        (x, y, "a better" if (x, y) in claims else "equivalent" if x == "c" else "no claim")
        for i, x in enumerate(order)
        for y in order[i + 1 :]
    ]
    groups = cd_groups(_decisions(rows), order, "strong")
    assert groups == [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e")]
    # the weak column has no claim at all: one bar over everything
    assert cd_groups(_decisions(rows), order, "weak") == [tuple(order)]


def test_groups_read_claims_either_way_and_skip_singletons():
    # "b better" separates as much as "a better"; d is claimed apart from everyone
    rows = [
        ("a", "b", "no claim"),
        ("a", "c", "no claim"),
        ("a", "d", "a better"),
        ("c", "b", "no claim"),
        ("b", "d", "a better"),
        ("d", "c", "b better"),
    ]
    assert cd_groups(_decisions(rows), list("abcd"), "strong") == [("a", "b", "c")]
    # a claim between the ends of a run breaks it even when neighbours agree
    rows = [
        ("a", "b", "no claim"),
        ("a", "c", "a better"),
        ("b", "c", "no claim"),
        ("x", "a", "not compared"),
    ]
    groups = cd_groups(_decisions(rows), ["x", "a", "b", "c"], "strong")
    assert groups == [("x", "a", "b"), ("b", "c")]


# --------------------------------------------------------------------------- BBT diagram

#: Abilities of the hand-built posterior. P(a > b) = inv_logit(difference): under the strong
#: rule (mean P > 0.70, i.e. a difference above 0.847) A-B (0.2), B-C (0.8) and C-D (0.1)
#: carry no claim, every other pair does; under the weak rule (near-constant draws) A-B
#: (P = 0.5498) and C-D (0.525) are in the ROPE (equivalent) and the rest claimed.
ABILITIES = {"A": 2.0, "B": 1.8, "C": 1.0, "D": 0.9, "E": -1.0}
STRONG_GROUPS = [("A", "B"), ("B", "C"), ("C", "D")]
WEAK_GROUPS = [("A", "B"), ("C", "D")]


def _result(abilities: dict[str, float] = ABILITIES) -> BBTResult:
    names = list(abilities)
    rng = np.random.default_rng(0)
    beta = np.array(list(abilities.values())) + rng.normal(0, 1e-4, (2, 300, len(names)))
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    table = pd.DataFrame(
        {
            "alg1": [a for a, _ in pairs],
            "alg2": [b for _, b in pairs],
            "win1": 6,
            "win2": 4,
            "ties": 0,
        }
    )
    draws = Draws(params={"beta": beta}, sampler={}, engine="pystan")
    return BBTResult(draws, table, names, {}, np.ones(len(table), dtype=bool))


def _values(spec: dict) -> list[dict]:
    return [v for d in spec["datasets"].values() for v in d]


def _bars(spec: dict) -> list[float]:
    """The ends of the group bars, bar after bar: x, x2, x, x2, ..."""
    return [e for v in _values(spec) if v.get("kind") == "group" for e in (v["x"], v["x2"])]


def test_bbt_diagram_places_the_algorithms_and_draws_the_bars():
    res = _result()
    spec = charts.fit_cd_diagram(res).to_dict()  # strong, expected rank
    points = {v["algorithm"]: v["position"] for v in _values(spec) if "position" in v}
    assert points == pytest.approx({"A": 1.0, "B": 2.0, "C": 3.0, "D": 4.0, "E": 5.0})
    pad = 0.03  # the bars reach a little past their ends
    want = [e for g in STRONG_GROUPS for e in (points[g[0]] - pad, points[g[-1]] + pad)]
    assert _bars(spec) == pytest.approx(want)
    weak = charts.fit_cd_diagram(res, interpretation="weak").to_dict()
    assert _bars(weak) == pytest.approx([1 - pad, 2 + pad, 3 - pad, 4 + pad])
    assert "strong interpretation" in spec["title"]["text"]
    assert spec["layer"][0]["encoding"]["x"]["axis"]["title"] == "expected rank (1 = best)"
    assert cd_groups(res.summary(), list("ABCDE"), "weak") == WEAK_GROUPS


def test_bbt_diagram_by_ability_runs_from_the_best():
    res = _result()
    spec = charts.fit_cd_diagram(res, position="ability").to_dict()
    points = {v["algorithm"]: v["position"] for v in _values(spec) if "position" in v}
    centred = {k: v - np.mean(list(ABILITIES.values())) for k, v in ABILITIES.items()}
    assert points == pytest.approx(centred, abs=1e-3)
    x = spec["layer"][0]["encoding"]["x"]
    lo, hi = x["scale"]["domain"]
    assert lo > hi  # the largest ability on the left
    assert x["axis"]["title"] == "mean ability (sum-to-zero)"
    # the same bars, from the better end to the worse one
    bars = _bars(spec)
    assert len(bars) == 2 * len(STRONG_GROUPS)
    for x1, x2, g in zip(bars[::2], bars[1::2], STRONG_GROUPS):
        assert x1 > centred[g[0]] and x2 < centred[g[-1]]
    labels = [v["text"] for v in _values(spec) if v.get("side") == "left"]
    assert labels[0] == f"A ({centred['A']:.2f})"


def test_highlighted_algorithms_get_their_colour_and_a_legend():
    res = _result()
    spec = charts.fit_cd_diagram(res, highlight=["B", "E"]).to_dict()
    roles = {v["algorithm"]: v["role"] for v in _values(spec) if "position" in v}
    assert roles == {
        "A": "other",
        "B": "highlighted",
        "C": "other",
        "D": "other",
        "E": "highlighted",
    }
    colours = [
        layer["encoding"]["color"]
        for layer in spec["layer"]
        if "color" in layer.get("encoding", {})
    ]
    assert colours  # the points and the labels
    for colour in colours:
        assert colour["field"] == "role"
        assert colour["scale"]["domain"] == ["highlighted", "other"]
        assert colour["scale"]["range"] == [
            HIGHLIGHT_COLORS["highlighted"],
            HIGHLIGHT_COLORS["other"],
        ]
        assert colour["legend"] is not None
    # without highlight every algorithm is plain and there is no legend
    plain = charts.fit_cd_diagram(res).to_dict()
    assert {v["role"] for v in _values(plain) if "position" in v} == {"other"}
    assert all(
        layer["encoding"]["color"]["legend"] is None
        for layer in plain["layer"]
        if "color" in layer.get("encoding", {})
    )


def test_bbt_diagram_rejects_bad_options():
    res = _result()
    with pytest.raises(ValueError, match=r"highlight: 'Z' is not an algorithm.*'A'"):
        charts.fit_cd_diagram(res, highlight=["A", "Z"])
    with pytest.raises(ValueError, match="position must be one of 'expected_rank', 'ability'"):
        charts.fit_cd_diagram(res, position="rank")
    with pytest.raises(ValueError, match="interpretation must be one of"):
        charts.fit_cd_diagram(res, interpretation="medium")


def test_bbt_diagram_exports_to_svg_and_pdf(tmp_path):
    chart = charts.fit_cd_diagram(_result(), highlight="C")
    svg = export.save_chart(chart, tmp_path / "cd.svg").read_text("utf-8")
    assert "C (3.00)" in svg and "expected rank (1 = best)" in svg
    assert HIGHLIGHT_COLORS["highlighted"] in svg
    assert export.save_chart(chart, tmp_path / "cd.pdf").read_bytes().startswith(b"%PDF")


# --------------------------------------------------------------------------- baselines


def _wilcoxon_data() -> pd.DataFrame:
    """10 data sets: a beats everyone everywhere, d loses everywhere, b and c alternate
    (b ahead on 5 data sets, c on the other 5, by distinct margins)."""
    rng = np.random.default_rng(5)
    b = 0.7 + rng.uniform(0, 0.01, 10)
    swing = np.array([1, -2, 3, -4, 5, -6, 7, -8, 9, -10]) * 1e-3
    i = np.arange(10)  # distinct margins: no tied absolute differences, so exact p-values
    return pd.DataFrame(
        {"a": b + 0.2 + 0.0137 * i, "b": b, "c": b + swing, "d": b - 0.3 - 0.0071 * i}
    )


def test_wilcoxon_diagram_joins_only_the_pair_no_test_separates():
    data = _wilcoxon_data()
    table = wilcoxon_holm(data).table.set_index("pair")
    # all 10 differences of one sign: exact p = 2 / 2**10; Holm over 6 pairs keeps it < 0.05
    for pair in ("a > b", "a > c", "a > d", "b > d", "c > d"):
        key = pair if pair in table.index else " > ".join(pair.split(" > ")[::-1])
        assert table.loc[key, "pvalue"] == pytest.approx(2 / 2**10)
        assert table.loc[key, "significant"]
    key = "b > c" if "b > c" in table.index else "c > b"
    assert not table.loc[key, "significant"]
    spec = scores_cd_diagram(data, test="wilcoxon", highlight=["a"]).to_dict()
    ranks = {v["algorithm"]: v["position"] for v in _values(spec) if "position" in v}
    assert ranks == {"a": 1.0, "b": 2.5, "c": 2.5, "d": 4.0}
    assert _bars(spec) == pytest.approx([2.5 - 0.03, 2.5 + 0.03])  # b and c only
    assert not [v for v in _values(spec) if v.get("kind") == "cd"]  # no single CD
    assert "Wilcoxon-Holm" in spec["title"]
    roles = {v["algorithm"]: v["role"] for v in _values(spec) if "position" in v}
    assert roles["a"] == "highlighted" and roles["d"] == "other"


def test_nemenyi_diagram_highlights_and_rejects_unknown_names(base):
    spec = scores_cd_diagram(base, dataset="db", highlight=("xgb", "svm")).to_dict()
    roles = {v["algorithm"]: v["role"] for v in _values(spec) if "position" in v}
    assert {a for a, r in roles.items() if r == "highlighted"} == {"xgb", "svm"}
    res = nemenyi(base, dataset="db")
    assert scores_cd_diagram(res, highlight="dt").to_dict()["layer"]
    with pytest.raises(ValueError, match="highlight: 'rf' is not an algorithm"):
        scores_cd_diagram(res, highlight=["rf"])
    with pytest.raises(ValueError, match="so control, test cannot apply"):
        scores_cd_diagram(res, control="dt", test="wilcoxon")
    with pytest.raises(TypeError, match="holds no mean ranks"):
        scores_cd_diagram(wilcoxon_holm(base, dataset="db"))
    with pytest.raises(ValueError, match="unknown test 'friedman'"):
        scores_cd_diagram(base, dataset="db", test="friedman")


def test_the_report_checks_highlight_before_the_fit(base, tmp_path, monkeypatch):
    import bbt_widget as bbt
    from bbt_widget.fitting import PreparedFit

    def refuse(*args, **kwargs):
        raise AssertionError("the fit started although highlight names no algorithm")

    monkeypatch.setattr(PreparedFit, "sample", refuse)
    with pytest.raises(ValueError, match=r"highlight: 'rf' is not an algorithm.*'xgb'"):
        bbt.report.write(base, tmp_path / "r.html", dataset="db", highlight=["svm", "rf"])
    assert not (tmp_path / "r.html").exists()


def test_the_widgets_ranking_view_shows_the_diagram(base):
    from bbt_widget.widget.app import BBTWidget
    from bbt_widget.widget.views import summary_spec

    spec = summary_spec(_result(), (0.45, 0.55), 0.89, interpretation="weak", highlight=["B"])
    _ranking, cd, _matrix = spec["vconcat"]
    assert "BBT critical-difference diagram (weak interpretation)" in str(cd["title"])
    roles = {v["algorithm"]: v["role"] for v in _values(spec) if "position" in v}
    assert roles == {"A": "other", "B": "highlighted", "C": "other", "D": "other", "E": "other"}
    # the diagram's colours and the decision matrix's are two scales, each with its colours
    vlc = pytest.importorskip("vl_convert")
    svg = vlc.vegalite_to_svg(spec)
    for colour in (HIGHLIGHT_COLORS["highlighted"], *MATRIX_DECISION_COLORS.values()):
        assert colour in svg, colour
    # the widget checks the names before anything is shown
    with pytest.raises(ValueError, match=r"highlight: 'rf' is not an algorithm.*'xgb'"):
        BBTWidget(base, dataset="db", highlight=["rf"], autostart=False)


@pytest.mark.parametrize(
    "name", ["fit_cd_diagram", "result_charts", "build_frames", "group_decisions_chart"]
)
def test_a_chart_of_a_fit_given_the_results_table_says_to_fit_first(name):
    # the results table passed where a fit belongs raised "'DataFrame' object has no
    # attribute 'algorithms'" from deep inside; the CD diagram of a fit also names its twin
    # that takes the table
    chart = getattr(bbt.charts, name)
    with pytest.raises(TypeError, match=rf"{name} draws a fit's result, got a DataFrame") as e:
        chart(bbt.datasets.load_base())
    assert f"res = bbt.fit(data, dataset=...), then {name}(res)" in str(e.value)
    if name == "fit_cd_diagram":
        assert "bbt.baselines.scores_cd_diagram(data" in str(e.value)
