"""Sweep grids and the SweepResult logic, without Stan (the fits are in tests/stan)."""

from __future__ import annotations

import importlib

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget.lab.sweep import SweepResult, _settings, default_grid

# the package attribute bbt_widget.sweep is the sweep function; the module is lab/sweep.py
sweep_module = importlib.import_module("bbt_widget.lab.sweep")


BASE = {
    "ties": "spread",
    "d_min": None,
    "paired": True,
    "hyperprior": "lognormal",
    "prior_scale": 0.5,
}


@pytest.fixture
def no_fits(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a fit started although the grid was invalid")

    monkeypatch.setattr(sweep_module, "run_batch", refuse)


@pytest.mark.parametrize(
    ("grid", "match"),
    [
        ({"ties": ["spread", "sometimes"]}, "grid 'ties': invalid value 'sometimes'"),
        ({"d_min": [0.2, -1]}, "grid 'd_min': invalid value -1"),
        ({"d_min": ["big"]}, "grid 'd_min': invalid value 'big'"),
        ({"paired": ["yes"]}, "grid 'paired': invalid value 'yes'"),
        ({"hyperprior": ["lognormal", "gamma"]}, "grid 'hyperprior': invalid value 'gamma'"),
        ({"prior_scale": [0]}, "grid 'prior_scale': invalid value 0"),
        ({"prior": [("cauchy", -2.0)]}, "grid 'prior'"),
        ({"ties": [None]}, "grid 'ties'"),
        ({"tie": ["spread"]}, "unknown setting 'tie'"),
        ({"d_min": []}, "grid 'd_min': no values"),
        ({"prior": bbt.sweep.APPENDIX_A, "hyperprior": ["normal"]}, "either 'prior'"),
    ],
)
def test_invalid_grid_fails_before_any_fit(base, no_fits, grid, match):
    with pytest.raises(ValueError, match=match):
        bbt.sweep(base, dataset="db", grid=grid)


@pytest.mark.parametrize(
    ("grid", "error", "match"),
    [
        # an empty grid ran one fit and called every claim of it "stable"
        ({}, ValueError, r"grid is empty, so there is nothing to sweep.*grid=None"),
        # a bare value: "'float' object is not iterable"
        (
            {"d_min": 0.2},
            TypeError,
            r"grid 'd_min': give a list of values, e\.g\. \{'d_min': \[0\.2\]\}",
        ),
        # a family alone: "too many values to unpack"
        ({"prior": "lognormal"}, ValueError, r"grid 'prior'.*a prior is a \(family, scale\) pair"),
        ({"prior": ["cauchy", 1.0]}, ValueError, r"a prior is a \(family, scale\) pair"),
        # one pair where a list of pairs belongs
        (
            {"prior": ("cauchy", 1.0)},
            ValueError,
            r"one \(family, scale\) pair; 'prior' takes a list",
        ),
        # a string: "unknown setting 't'"
        ("ties", TypeError, r"grid must be a dict of setting -> list of values"),
        (["ties", "d_min"], TypeError, r"grid must be a dict"),
    ],
)
def test_grid_shape_errors_name_the_grid_and_the_fix(base, no_fits, grid, error, match):
    with pytest.raises(error, match=match):
        bbt.sweep(base, dataset="db", grid=grid)


@pytest.mark.parametrize("executor", ["local", "bogus", "tcp://host", "localhost:port"])
def test_an_executor_that_is_not_one_is_refused_before_the_data_are_read(executor, no_fits):
    # distributed said "missing port number in address" after the data were read
    with pytest.raises(ValueError, match=r"executor .* is not an executor; give None \(the local"):
        bbt.sweep(pd.DataFrame(), grid={"ties": ["add"]}, executor=executor)
    with pytest.raises(ValueError, match=r"scheduler address with its port"):
        bbt.calibration(pd.DataFrame(), executor=executor)
    with pytest.raises(TypeError, match=r"executor must be None \(the local cores\)"):
        bbt.sweep(pd.DataFrame(), grid={"ties": ["add"]}, executor=4)


@pytest.mark.parametrize(
    "address",
    [
        "tcp://127.0.0.1:8786",
        "10.0.0.5:8786",
        "tls://host.example:8786",
        "tcp://[::1]:8786",
        "inproc://10.0.0.5/4242/1",
    ],
)
def test_scheduler_addresses_pass_the_executor_check(address):
    from bbt_widget.lab.batch import check_executor

    assert check_executor(address) == address
    assert check_executor(None) is None


def test_local_rope_on_means_only_names_the_setting(base_means, no_fits):
    with pytest.raises(ValueError, match=r"d_min=0\.2.*fold-level scores"):
        bbt.sweep(base_means, grid={"d_min": [None, 0.2]})


def test_default_grid_is_ties_by_d_min_paired_where_valid(base, base_means):
    tidy = bbt.tidy_results(base, dataset="db")
    settings = _settings(default_grid(tidy), BASE)
    assert len(settings) == 12
    assert {s["ties"] for s in settings} == {"spread", "add", "forget", "davidson"}
    assert {s["d_min"] for s in settings} == {None, 0.2, 0.4}
    assert {s["paired"] for s in settings if s["d_min"] is not None} == {True}
    assert all(s["paired"] is None for s in settings if s["d_min"] is None)
    # one score per data set: no local ROPE possible, so only the tie policies vary
    means = bbt.tidy_results(base_means)
    assert [s["d_min"] for s in _settings(default_grid(means), BASE)] == [None] * 4


def test_appendix_a_priors_expand_as_pairs():
    assert bbt.sweep.APPENDIX_A == (("lognormal", 0.5), ("cauchy", 1.0), ("normal", 3.0))
    settings = _settings({"prior": bbt.sweep.APPENDIX_A}, BASE)
    assert [(s["hyperprior"], s["prior_scale"]) for s in settings] == list(bbt.sweep.APPENDIX_A)


def _beta(rng, means, n=2000):
    return rng.normal(means, 0.05, size=(n, len(means)))


def test_flips_stable_claims_and_failed_rows():
    rng = np.random.default_rng(0)
    algs = ["a", "b", "c"]
    # a >> c everywhere; a vs b flips from clearly better to nothing; one fit failed
    betas = [_beta(rng, [1.0, 0.0, -1.0]), _beta(rng, [0.5, 0.5, -1.0]), None]
    settings = [dict(BASE, ties=t) for t in ("spread", "add", "forget")]
    errors = [None, None, "EngineError: boom"]
    sw = SweepResult(settings, betas, errors, algs, (0.45, 0.55), 0.89)
    f = sw.frame
    assert list(f.columns[:13]) == [
        "ties",
        "d_min",
        "paired",
        "hyperprior",
        "prior_scale",
        "pair",
        "mean",
        "low",
        "high",
        "above_50",
        "in_rope",
        "weak",
        "strong",
    ]
    assert sw.n_failed == 1 and "failed" in repr(sw)
    failed = f[f["ties"] == "forget"]
    assert len(failed) == 3 and failed["mean"].isna().all()
    assert (failed["error"] == "EngineError: boom").all()
    assert f["d_min"].isna().all() and f["d_min"].map(lambda v: v is None).all()
    flips = sw.flips("weak")
    assert set(flips["pair"]) == {"a > b"}
    assert dict(zip(flips["decision"], flips["settings"])) == {
        "a better": ["ties=spread"],
        "equivalent": ["ties=add"],
    }
    stable = sw.stable_claims("weak").set_index("pair")
    assert stable.loc["a > c", "decision"] == "a better"
    assert "a > b" not in stable.index
    # a new ROPE re-summarises the same draws: means unchanged, in_rope changes
    wide = sw.table(rope=(0.2, 0.8))
    assert np.allclose(wide["mean"], f["mean"], equal_nan=True)
    assert (wide["in_rope"].fillna(0) >= f["in_rope"].fillna(0)).all()
    assert wide["in_rope"].max() > f["in_rope"].max()
    spec = sw.chart("strong").to_dict()
    assert spec["mark"]["type"] == "rect"
    assert "failed" in spec["encoding"]["color"]["scale"]["domain"]


def test_orientation_is_the_same_in_every_setting():
    rng = np.random.default_rng(1)
    # the second setting ranks b above a: its row must still read "a > b", with mean < 0.5
    betas = [_beta(rng, [1.0, 0.0]), _beta(rng, [0.0, 1.0])]
    settings = [dict(BASE, ties=t) for t in ("spread", "add")]
    sw = SweepResult(settings, betas, [None, None], ["a", "b"], (0.45, 0.55), 0.89)
    assert list(sw.frame["pair"]) == ["a > b", "a > b"]
    assert sw.frame["mean"].iloc[1] < 0.5
    assert list(sw.frame["weak"]) == ["a better", "b better"]
    assert isinstance(sw.frame, pd.DataFrame)


def test_pairs_of_disconnected_groups_are_not_compared():
    rng = np.random.default_rng(2)
    settings = [dict(BASE, ties=t) for t in ("spread", "add")]
    betas = [_beta(rng, [1.0, 0.0, -1.0]), _beta(rng, [1.0, 0.0, -1.0])]
    # in the second setting c never met a or b (e.g. a local ROPE made all its games ties
    # and the tie policy dropped them)
    components = [[["a", "b", "c"]], [["a", "b"], ["c"]]]
    sw = SweepResult(settings, betas, [None, None], ["a", "b", "c"], (0.45, 0.55), 0.89, components)
    f = sw.frame.set_index(["ties", "pair"])
    assert f.loc[("spread", "a > c"), "weak"] == "a better"
    assert f.loc[("add", "a > c"), "weak"] == "not compared"
    assert f.loc[("add", "a > b"), "weak"] == "a better"
    assert set(sw.flips("weak")["pair"]) == {"a > c", "b > c"}


def test_setting_labels_say_none_and_leave_out_paired_without_a_local_rope():
    rng = np.random.default_rng(1)
    algs = ["a", "b", "c"]
    settings = [
        dict(BASE, d_min=None, paired=None),
        dict(BASE, d_min=0.4, paired=True),
        dict(BASE, d_min=0.4, paired=False),
    ]
    betas = [_beta(rng, [1.0, 0.0, -1.0]) for _ in settings]
    sw = SweepResult(settings, betas, [None] * 3, algs, (0.45, 0.55), 0.89)
    assert list(dict.fromkeys(sw._labels())) == [
        "d_min=None",
        "d_min=0.4, paired=True",
        "d_min=0.4, paired=False",
    ]


def test_a_hyperprior_family_without_a_scale_takes_its_own_default():
    """A grid over families used lognormal's 0.5 for every family (Appendix A gives half-Cauchy
    1.0 and half-normal 3.0); a scale given in the grid is kept."""
    base = {**BASE, "prior_scale": None}
    got = _settings({"hyperprior": ["lognormal", "cauchy", "normal"]}, base)
    assert [(s["hyperprior"], s["prior_scale"]) for s in got] == [
        ("lognormal", 0.5),
        ("cauchy", 1.0),
        ("normal", 3.0),
    ]
    kept = _settings({"hyperprior": ["cauchy"], "prior_scale": [2.0]}, base)
    assert [(s["hyperprior"], s["prior_scale"]) for s in kept] == [("cauchy", 2.0)]
