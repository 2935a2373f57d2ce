"""bbt.calibration on the shipped 16 x 132 results (real Stan, few repeats and iterations)."""

from __future__ import annotations

import pytest

import bbt_widget as bbt

pytestmark = [
    pytest.mark.stan,
    pytest.mark.filterwarnings("ignore::bbt_widget.DiagnosticsWarning"),  # short chains
]


@pytest.fixture(scope="module")
def calib():
    return bbt.calibration(
        bbt.datasets.load_pmlb16(), dataset="db", repeats=4, iter_warmup=300, iter_sampling=300
    )


def test_papers_way_is_over_confident_and_predictive_way_is_not(calib):
    strong = calib.strong
    assert list(strong.index) == ["paper", "predictive"]
    assert list(strong.columns) == [
        "within.90",
        "within.70",
        "within.50",
        "above90",
        "below90",
        "err",
        "mad",
    ]
    # paper Table 16: less than half of the test win rates inside the 90% HDI of P(a > b)
    assert strong.loc["paper", "within.90"] < 0.6
    # the binomial noise of 10 test games explains most of it
    assert strong.loc["predictive", "within.90"] > strong.loc["paper", "within.90"] + 0.3
    assert abs(strong.loc["paper", "err"]) < 0.05  # calibrated in the mean (paper: low bias)
    for way in ("paper", "predictive"):
        row = strong.loc[way]
        assert row["within.50"] <= row["within.70"] <= row["within.90"]
        assert row["within.90"] + row["above90"] + row["below90"] == pytest.approx(1.0)


def test_weak_table_and_protocol(calib):
    weak = calib.weak
    assert list(weak.index) == ["0.5-0.7", "0.7-0.9", "0.9-1.0"]
    assert weak["cases"].sum() == len(calib.cases[calib.cases["above_50"] >= 0.5])
    assert (weak["actual"] <= weak["cases"]).all()
    # most pairs sit in the high-confidence bin, as in the paper's Table 17
    assert weak.loc["0.9-1.0", "cases"] > weak.loc["0.5-0.7", "cases"]
    # disjoint random draws of 20 training and 10 test data sets per repeat
    assert len(calib.splits) == 4 and not calib.failed
    for train, test in calib.splits:
        assert len(train) == 20 and len(test) == 10 and not set(train) & set(test)
    assert len({tuple(t) for t, _ in calib.splits}) == 4
    assert (calib.cases["n_games"] <= 10).all()
    assert "within.90" in repr(calib)
    spec = calib.chart().to_dict()
    assert len(spec["hconcat"]) == 2


def test_too_few_data_sets_is_a_clear_error(base):
    with pytest.raises(ValueError, match=r"n_train \+ n_test = 30 .* have 20"):
        bbt.calibration(base, dataset="db")


def test_a_family_without_a_scale_takes_its_own_default(base):
    """``calibration`` used lognormal's scale 0.5 for every family; like ``fit`` and ``sweep``
    it now takes the family's default (Appendix A: half-Cauchy 1.0) and records it."""
    calib = bbt.calibration(
        base,
        dataset="db",
        n_train=12,
        n_test=6,
        repeats=1,
        hyperprior="cauchy",
        iter_warmup=100,
        iter_sampling=100,
    )
    assert calib.settings["hyperprior"] == "cauchy"
    assert calib.settings["prior_scale"] == 1.0
