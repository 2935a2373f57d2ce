"""Bayesian correlated t-test (Benavoli et al. 2017, Sec. 3, Eq. 6) and the shared input rules."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bbt_widget.baselines import correlated_ttest


def _standardised(n: int, mean: float, sd: float, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).normal(size=n)
    return (x - x.mean()) / x.std(ddof=1) * sd + mean


def _long(diffs: dict[str, np.ndarray], runs: int, folds: int, base: float = 0.8) -> pd.DataFrame:
    """Long results with run and fold columns: b = a + diff, fold by fold."""
    rows = []
    for name, x in diffs.items():
        for i, d in enumerate(x):
            run, fold = divmod(i, folds)
            rows.append({"ds": name, "run": run, "fold": fold, "alg": "a", "acc": base})
            rows.append({"ds": name, "run": run, "fold": fold, "alg": "b", "acc": base + d})
    return pd.DataFrame(rows)


def test_paper_worked_example_scale_t_and_p_value():
    # 001 Sec. 3: mean -0.0194, sd 0.01583, rho 1/10, n 100 -> St(99, -0.0194, 0.000030);
    # Eq. 1: t = -3.52, two-sided p = 0.00065
    x = _standardised(100, -0.0194, 0.01583)
    data = _long({"d1": x}, runs=10, folds=10)
    res = correlated_ttest(
        data, dataset="ds", algorithm="alg", score="acc", fold="fold", run="run", a="a", b="b"
    )
    row = res.table.iloc[0]
    assert row["rho"] == pytest.approx(0.1)
    assert row["df"] == 99
    assert round(row["scale"] ** 2, 6) == 0.000030
    t = row["mean"] / row["scale"]
    assert round(t, 2) == -3.52
    assert 2 * stats.t.sf(abs(t), 99) == pytest.approx(0.00065, abs=5e-6)


def test_equals_the_closed_form_to_1e_10():
    rng = np.random.default_rng(3)
    diffs = {
        f"d{i}": rng.normal(rng.normal(0, 0.02), rng.uniform(0.002, 0.05), 20) for i in range(6)
    }
    data = _long(diffs, runs=4, folds=5)
    rope, hdi = 0.01, 0.9
    res = correlated_ttest(
        data,
        dataset="ds",
        algorithm="alg",
        score="acc",
        fold="fold",
        run="run",
        a="a",
        b="b",
        rope=rope,
        hdi=hdi,
    )
    for row in res.table.itertuples():
        x = data[(data.ds == row.dataset) & (data.alg == "b")]["acc"].to_numpy() - 0.8
        n, rho = len(x), 1 / 5
        scale = np.sqrt((1 / n + rho / (1 - rho)) * x.var(ddof=1))
        post = stats.t(n - 1, loc=x.mean(), scale=scale)
        assert row.scale == pytest.approx(scale, abs=1e-10)
        assert abs(row.p_left - post.cdf(-rope)) < 1e-10
        assert abs(row.p_right - (1 - post.cdf(rope))) < 1e-10
        assert abs(row.p_rope - (post.cdf(rope) - post.cdf(-rope))) < 1e-10
        low, high = post.interval(hdi)
        assert abs(row.hdi_low - low) < 1e-10 and abs(row.hdi_high - high) < 1e-10


def test_left_means_a_better_and_lower_is_better_flips():
    x = _standardised(10, 0.05, 0.01)  # b higher: b better, right
    data = _long({"d1": x}, runs=1, folds=10)
    kw = dict(dataset="ds", algorithm="alg", score="acc", fold="fold", a="a", b="b", rho=0.1)
    res = correlated_ttest(data, **kw)
    assert res.table["decision"].iloc[0] == "b better" and res.table["p_right"].iloc[0] > 0.95
    flipped = correlated_ttest(data, lower_is_better=True, **kw)
    assert flipped.table["decision"].iloc[0] == "a better"
    assert flipped.table["p_left"].iloc[0] == pytest.approx(res.table["p_right"].iloc[0])


def test_zero_sd_is_a_point_mass():
    data = _long({"d1": np.full(10, 0.005), "d2": np.full(10, 0.03)}, runs=1, folds=10)
    res = correlated_ttest(
        data, dataset="ds", algorithm="alg", score="acc", fold="fold", a="a", b="b", rho=0.1
    )
    assert res.table["p_rope"].round(12).tolist() == [1.0, 0.0]
    assert res.table["p_right"].round(12).tolist() == [0.0, 1.0]


def test_on_selects_data_sets_and_density_integrates_to_one():
    rng = np.random.default_rng(1)
    data = _long({f"d{i}": rng.normal(0, 0.01, 10) for i in range(3)}, runs=1, folds=10)
    res = correlated_ttest(
        data,
        dataset="ds",
        algorithm="alg",
        score="acc",
        fold="fold",
        a="a",
        b="b",
        rho=0.1,
        on="d2",
    )
    assert res.table["dataset"].tolist() == ["d2"]
    dens = res.density("d2", points=2001)
    mass = np.trapezoid(dens["density"], dens["mu"])
    assert mass == pytest.approx(0.999, abs=2e-3)
    assert res.chart("d2").to_dict()["layer"]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"rope": 0}, "rope must be a finite number > 0"),
        ({"rope": -0.01}, "rope must be a finite number > 0"),
        ({"rho": 1.0}, r"rho must lie strictly between 0 and 1"),
        ({"rho": 0}, r"rho must lie strictly between 0 and 1"),
        ({"b": "a"}, "same algorithm"),
        ({"b": "zzz"}, "'zzz' is not an algorithm"),
        ({"rho": None}, r"rho=1/k.*run="),
        ({"on": "nope"}, "on='nope' cannot be tested"),
    ],
)
def test_bad_input_is_a_clear_value_error(kwargs, match):
    data = _long({"d1": np.linspace(-0.01, 0.02, 10)}, runs=1, folds=10)
    kw = dict(dataset="ds", algorithm="alg", score="acc", fold="fold", a="a", b="b", rho=0.1)
    with pytest.raises(ValueError, match=match):
        correlated_ttest(data, **(kw | kwargs))


def test_one_score_per_data_set_is_refused():
    data = pd.DataFrame({"a": [0.8, 0.7], "b": [0.9, 0.6]}, index=["d1", "d2"])
    with pytest.raises(ValueError, match="need fold-level scores"):
        correlated_ttest(data, a="a", b="b", rho=0.1)


def test_no_data_set_with_two_common_folds_is_refused():
    data = _long({"d1": np.array([0.01, 0.02])}, runs=1, folds=2)
    data = data[~((data.alg == "b") & (data.fold == 1))]  # b has one fold left
    with pytest.raises(ValueError, match="no data set has 2 or more folds"):
        correlated_ttest(
            data, dataset="ds", algorithm="alg", score="acc", fold="fold", a="a", b="b", rho=0.5
        )


def test_folds_repeating_in_each_run_ask_for_run():
    data = _long({"d1": np.linspace(-0.01, 0.02, 10)}, runs=2, folds=5)
    with pytest.raises(ValueError, match=r"duplicate results.*pass run="):
        correlated_ttest(
            data, dataset="ds", algorithm="alg", score="acc", fold="fold", a="a", b="b", rho=0.2
        )


def test_run_without_fold_is_refused():
    data = _long({"d1": np.linspace(-0.01, 0.02, 10)}, runs=2, folds=5)
    with pytest.raises(ValueError, match="run='run' needs fold= as well"):
        correlated_ttest(data, dataset="ds", algorithm="alg", score="acc", run="run", a="a", b="b")


# ----------------------------------------------------------------- hierarchical: input rules


@pytest.fixture
def no_stan(monkeypatch):
    """Any Stan fit fails the test: the errors must come before the first fit."""
    from bbt_widget import engines

    def refuse(*args, **kwargs):
        raise AssertionError("a Stan fit was started")

    monkeypatch.setattr(engines, "sample", refuse)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"rope": 0}, "rope must be a finite number > 0"),
        ({"rho": 1.5}, "rho must lie strictly between 0 and 1"),
        ({"b": "a"}, "same algorithm"),
        ({"run": None, "one_run": True}, r"rho=1/k.*run="),
        ({"on_one": True}, "needs at least 2 data sets with 2 or more common folds"),
    ],
)
def test_hierarchical_bad_input_fails_before_any_fit(no_stan, kwargs, match):
    from bbt_widget.baselines import hierarchical

    rng = np.random.default_rng(0)
    names = ["d1"] if kwargs.pop("on_one", False) else ["d1", "d2", "d3"]
    runs = 1 if kwargs.pop("one_run", False) else 2
    data = _long({d: rng.normal(0, 0.01, 10) for d in names}, runs=runs, folds=10 // runs)
    kw = dict(dataset="ds", algorithm="alg", score="acc", fold="fold", run="run", a="a", b="b")
    with pytest.raises(ValueError, match=match):
        hierarchical(data, **(kw | kwargs))


def test_hierarchical_pairs_checks_every_pair_and_needs_two_algorithms(no_stan):
    from bbt_widget.baselines import hierarchical_pairs

    rng = np.random.default_rng(0)
    data = _long({d: rng.normal(0, 0.01, 10) for d in ["d1", "d2"]}, runs=2, folds=5)
    kw = dict(dataset="ds", algorithm="alg", score="acc", fold="fold", run="run")
    with pytest.raises(ValueError, match="need at least 2 algorithms"):
        hierarchical_pairs(data, algorithms=["a"], **kw)
    # a single name is one algorithm: it was read letter by letter ("'s' is not an algorithm")
    named = data.replace({"alg": {"a": "svm"}})
    with pytest.raises(
        ValueError, match=r"got \['svm'\]; pass algorithms as a list.*\['svm', 'b'\]"
    ):
        hierarchical_pairs(named, algorithms="svm", **kw)
    # c only on d1: the pair (c, a) fails the check before the first fit of (b, a)
    extra = data[(data.ds == "d1") & (data.alg == "b")].assign(alg="c")
    with pytest.raises(ValueError, match=r"'c' vs|vs 'c'"):
        hierarchical_pairs(pd.concat([data, extra]), **kw)
