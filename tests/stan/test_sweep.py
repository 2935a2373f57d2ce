"""bbt.sweep with real Stan fits (few iterations: the checks are exact, not statistical)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import bbt_widget as bbt
from bbt_widget.lab.batch import spawn_seeds

pytestmark = [
    pytest.mark.stan,
    pytest.mark.filterwarnings("ignore::bbt_widget.DiagnosticsWarning"),  # short chains
]

ITER = {"iter_warmup": 250, "iter_sampling": 250}


@pytest.fixture(scope="module")
def default_sweep():
    return bbt.sweep(bbt.datasets.load_base(), dataset="db", seed=5, **ITER)


def test_default_sweep_rows_match_single_fits(default_sweep):
    sw = default_sweep
    f = sw.frame
    assert sw.n_failed == 0
    assert len(f) == 12 * 10  # 4 tie policies x d_min {None, 0.2, 0.4}; 10 pairs
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
    # the sweep's fit k is fit(...) with the k-th spawned seed: same numbers exactly
    seeds = spawn_seeds(5, 12)
    k = next(i for i, s in enumerate(sw.settings) if s["ties"] == "davidson" and s["d_min"] == 0.4)
    single = (
        bbt.fit(
            bbt.datasets.load_base(),
            dataset="db",
            ties="davidson",
            d_min=0.4,
            seed=seeds[k],
            **ITER,
        )
        .summary()
        .set_index("pair")
    )
    rows = f[(f["ties"] == "davidson") & (f["d_min"] == 0.4)]
    for _, row in rows.iterrows():
        a, b = row["alg_a"], row["alg_b"]
        ref = single.loc[f"{a} > {b}"] if f"{a} > {b}" in single.index else None
        if ref is None:  # the single fit ranks them the other way round
            ref = single.loc[f"{b} > {a}"]
            assert row["mean"] == pytest.approx(1 - ref["mean"], abs=1e-12)
        else:
            assert row["mean"] == pytest.approx(ref["mean"], abs=1e-12)
            assert row["weak"] == ref["weak"] and row["strong"] == ref["strong"]
    # flips and stable claims partition the pairs that have a claim somewhere
    flips = set(sw.flips("strong")["pair"])
    stable = set(sw.stable_claims("strong")["pair"])
    assert not flips & stable
    assert "xgb > dt" in stable  # the paper's clearest claim survives every setting
    assert sw.chart().to_dict()["mark"]["type"] == "rect"


def test_sweep_on_dask_gives_the_same_frame(default_sweep):
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        remote = bbt.sweep(bbt.datasets.load_base(), dataset="db", seed=5, executor=client, **ITER)
    cols = ["mean", "low", "high", "above_50", "in_rope"]
    assert np.array_equal(remote.frame[cols].to_numpy(), default_sweep.frame[cols].to_numpy())


def test_a_failed_fit_keeps_the_others(monkeypatch):
    batch = importlib.import_module("bbt_widget.lab.batch")
    real_fit = batch.fit

    def fit_failing_for_forget(data, **kw):
        if kw["ties"] == "forget":
            raise RuntimeError("the sampler crashed")
        return real_fit(data, **kw)

    monkeypatch.setattr(batch, "fit", fit_failing_for_forget)
    sw = bbt.sweep(
        bbt.datasets.load_base(),
        dataset="db",
        grid={"ties": ["spread", "forget"], "prior": bbt.sweep.APPENDIX_A[1:]},
        **ITER,
    )
    assert sw.n_failed == 2 and "2 failed" in repr(sw)
    bad = sw.frame[sw.frame["ties"] == "forget"]
    assert bad["error"].str.contains("the sampler crashed").all()
    good = sw.frame[sw.frame["ties"] == "spread"]
    assert good["mean"].notna().all() and good["error"].isna().all()
    assert set(good["hyperprior"]) == {"cauchy", "normal"}
    assert set(good["prior_scale"]) == {1.0, 3.0}


def test_a_family_swept_without_a_scale_fits_with_its_own_default():
    """A grid over hyper-prior families used lognormal's scale 0.5 for each of them; a family
    without a scale takes its own default (Appendix A: half-normal 3.0), as in ``fit``."""
    base = bbt.datasets.load_base()
    sw = bbt.sweep(
        base, dataset="db", grid={"ties": ["spread"], "hyperprior": ["normal"]}, seed=5, **ITER
    )
    assert set(sw.frame["prior_scale"]) == {3.0}
    single = bbt.fit(base, dataset="db", hyperprior="normal", seed=spawn_seeds(5, 1)[0], **ITER)
    assert single.settings["prior_scale"] == 3.0
    means = single.summary().set_index("pair")["mean"]
    for _, row in sw.frame.iterrows():
        key = f"{row['alg_a']} > {row['alg_b']}"
        want = means[key] if key in means.index else 1 - means[f"{row['alg_b']} > {row['alg_a']}"]
        assert row["mean"] == pytest.approx(want, abs=1e-12)


def test_a_change_within_monte_carlo_error_is_not_a_flip():
    """One setting, six seeds: nothing differs between the fits but the Monte Carlo error.
    With the ROPE's upper bound on the mean of rf > xgb (its average over the seeds), the
    strong rule's raw decision for that pair changes between seeds; those rows are not
    settled and flip nothing, and every settled decision agrees across the seeds."""
    data = bbt.datasets.load_pmlb16()
    grid = {"ties": ["spread"]}
    first = bbt.sweep(data, dataset="db", grid=grid, seeds=6, seed=2)
    assert first.flips("weak").empty and first.flips("strong").empty
    # the pair's means near a bound are estimated finely: the bound from those
    near_first = first.frame[first.frame["pair"] == "rf > xgb"]["mean"].mean()
    table = first.table((1 - near_first, near_first))
    bound = float(table[table["pair"] == "rf > xgb"]["mean"].mean())
    sw = bbt.sweep(data, dataset="db", grid=grid, seeds=6, seed=2, rope=(1 - bound, bound))
    f = sw.frame
    assert {"weak_settled", "strong_settled"} <= set(f.columns)
    near = f[f["pair"] == "rf > xgb"]
    assert len(near) == 6 and not near["strong_settled"].any()
    assert (near["strong"] == "no claim").all()  # no claim the seed could flip
    assert sw.flips("weak").empty and sw.flips("strong").empty
    # the raw rule (no Monte Carlo error) would have decided differently between seeds
    assert (near["mean"] > bound).any() and (near["mean"] < bound).any()
    # the frame shows the Monte Carlo errors that left them unsettled: the conditional
    # estimates' (about 1e-5 here)
    assert {"mcse_mean", "mcse_above_50", "mcse_in_rope"} <= set(f.columns)
    assert (near["mcse_mean"] > 0).all() and (near["mcse_mean"] < 1e-4).all()
    assert (3 * near["mcse_mean"] >= (near["mean"] - bound).abs()).all()
