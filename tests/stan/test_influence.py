"""bbt.influence(result): PSIS leave-one-data-set-out against exact refits (real Stan)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bbt_widget as bbt

pytestmark = pytest.mark.stan


@pytest.mark.parametrize(("ties", "d_min"), [("spread", None), ("davidson", 0.4)])
def test_psis_agrees_with_exact_leave_one_out_refits(ties, d_min):
    result = bbt.fit(bbt.datasets.load_base(), dataset="db", ties=ties, d_min=d_min, seed=3)
    psis = bbt.influence(result, refit="none")
    exact = bbt.influence(result, refit="all")
    assert (psis.table["method"] == "psis").all() and exact.n_refits == 20
    assert list(psis.table["dataset"]) == list(exact.table["dataset"])
    assert list(psis.table["pair"]) == list(exact.table["pair"])
    # the criterion: within 0.02 in mean P(a > b), every data set and pair
    assert np.abs(psis.table["mean_loo"] - exact.table["mean_loo"]).max() < 0.02
    assert np.abs(psis.table["above_50_loo"] - exact.table["above_50_loo"]).max() < 0.06
    # and leaving a data set out does move things (the test is not vacuous)
    assert psis.table["delta_mean"].abs().max() > 0.02
    assert (psis.pareto_k < 0.7).all()


def test_refits_where_pareto_k_is_high_and_chart():
    result = bbt.fit(bbt.datasets.load_base(), dataset="db", seed=3, iter_sampling=500)
    k = bbt.influence(result, refit="none").pareto_k
    # between the second and third largest values of k (data sets with the same wins share
    # their k): the data sets with the two largest values
    distinct = np.unique(k.to_numpy())
    threshold = float(distinct[-3] + distinct[-2]) / 2
    inf = bbt.influence(result, k_threshold=threshold)
    refitted = set(inf.table.loc[inf.table["method"] == "refit", "dataset"])
    expected = set(k[k > threshold].index)
    assert refitted == expected and inf.n_refits == len(expected) >= 2
    top = inf.top("xgb > dt", 5)
    assert len(top) == 5 and top["delta_mean"].abs().is_monotonic_decreasing
    spec = inf.chart("xgb > dt", 5).to_dict()
    assert spec["mark"]["type"] == "bar"
    with pytest.raises(ValueError, match="unknown pair 'dt > xgb'"):
        inf.top("dt > xgb")


def test_influence_needs_data_sets():
    table = bbt.win_table(bbt.datasets.load_base(), dataset="db")
    with warnings.catch_warnings():  # 100 iterations: only the error below matters
        warnings.simplefilter("ignore", bbt.DiagnosticsWarning)
        result = bbt.fit(table, iter_warmup=100, iter_sampling=100)
    with pytest.raises(ValueError, match="ready win table"):
        bbt.influence(result)


@pytest.fixture(scope="module")
def short_fit() -> bbt.BBTResult:
    with warnings.catch_warnings():  # 100 iterations: only the errors below matter
        warnings.simplefilter("ignore", bbt.DiagnosticsWarning)
        return bbt.fit(bbt.datasets.load_base(), dataset="db", iter_warmup=100, iter_sampling=100)


@pytest.mark.parametrize(
    ("keywords", "match"),
    [
        ({"k_threshold": float("nan")}, r"k_threshold must be a finite number.*refit='none'"),
        ({"k_threshold": float("inf")}, r"k_threshold must be a finite number"),
        ({"k_threshold": "0.7"}, r"k_threshold must be a finite number"),
        ({"executor": "local"}, r"executor 'local' is not an executor"),
    ],
)
def test_bad_arguments_are_refused_before_any_refit(short_fit, monkeypatch, keywords, match):
    from bbt_widget.lab import influence as module

    def refuse(*args, **kwargs):
        raise AssertionError("refits started although an argument was invalid")

    monkeypatch.setattr(module, "run_batch", refuse)
    with pytest.raises(ValueError, match=match):
        bbt.influence(short_fit, refit="all", **keywords)
