"""Real Stan fits through ``bbt_widget.engines`` (PyStan everywhere, CmdStan where installed).

The first run compiles each model once (about a minute each); later runs find them in the
cache. Fits are small (the paper's Table 3) and seeded.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time

import numpy as np
import psutil
import pytest
from scipy.stats import binom, multinomial

from bbt_widget import engines
from bbt_widget.core.run_context import RunContext
from bbt_widget.engines import EngineError, FitCancelled, SamplerSettings

ALGS = ["dt", "lda", "lgbm", "xgb", "svm"]
# Paper Table 3b (ties spread): (alg1, alg2, win1, win2); lda-svm as printed (5/15)
TABLE_3B = [
    ("dt", "lda", 7, 14),
    ("dt", "lgbm", 2, 19),
    ("dt", "xgb", 2, 19),
    ("dt", "svm", 6, 15),
    ("lda", "lgbm", 7, 14),
    ("lda", "xgb", 6, 15),
    ("lda", "svm", 5, 15),
    ("lgbm", "xgb", 11, 10),
    ("lgbm", "svm", 11, 10),
    ("xgb", "svm", 12, 9),
]
# Paper Table 3a: (alg1, alg2, win1, win2, ties)
TABLE_3A = [
    ("dt", "lda", 6, 13, 1),
    ("dt", "lgbm", 0, 17, 3),
    ("dt", "xgb", 0, 17, 3),
    ("dt", "svm", 5, 14, 1),
    ("lda", "lgbm", 6, 13, 1),
    ("lda", "xgb", 5, 14, 1),
    ("lda", "svm", 5, 15, 0),
    ("lgbm", "xgb", 9, 8, 3),
    ("lgbm", "svm", 10, 9, 1),
    ("xgb", "svm", 11, 8, 1),
]
SAMPLER_NAMES = {
    "divergent__",
    "treedepth__",
    "energy__",
    "accept_stat__",
    "n_leapfrog__",
    "stepsize__",
    "lp__",
}


def bt_data(rows=TABLE_3B, **extra) -> dict:
    idx = {a: k + 1 for k, a in enumerate(ALGS)}
    data = {
        "n_alg": len(ALGS),
        "n_pairs": len(rows),
        "i1": [idx[r[0]] for r in rows],
        "i2": [idx[r[1]] for r in rows],
        "win1": [r[2] for r in rows],
        "win2": [r[3] for r in rows],
    }
    if len(rows[0]) == 5:
        data["ties"] = [r[4] for r in rows]
    data.update(extra)
    return data


def p_beats(draws: engines.Draws, a: str, b: str) -> float:
    beta = draws.params["beta"]
    diff = beta[..., ALGS.index(a)] - beta[..., ALGS.index(b)]
    return float(np.mean(1.0 / (1.0 + np.exp(-diff))))


def our_processes() -> list[int]:
    """Our descendants that are alive (not zombies), found with psutil (no /proc of ours)."""
    return [p.pid for p in psutil.Process().children(recursive=True) if _alive(p.pid)]


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.fixture(scope="module")
def pystan_models():
    """Both models compiled for PyStan (a no-op when cached)."""
    if "pystan" not in engines.available_engines():
        pytest.skip("PyStan is not available here")
    for model in ("bbt", "davidson"):
        engines.compile_model(model, "pystan")


@pytest.fixture(scope="module")
def table_3b_fit(pystan_models) -> engines.Draws:
    return engines.sample("bbt", bt_data(), engine="pystan", seed=20230101)


# ----------------------------------------------------------------------------- API, no Stan


def test_unknown_engine_names_the_valid_ones():
    with pytest.raises(ValueError, match="'auto', 'numpy', 'cmdstanpy', 'pystan'"):
        engines.resolve_engine("stan")
    with pytest.raises(ValueError, match="unknown engine"):
        engines.sample("bbt", bt_data(), engine="bogus")


def test_unavailable_engine_says_how_to_fix_it():
    if "cmdstanpy" in engines.available_engines():
        pytest.skip("CmdStan is installed here")
    with pytest.raises(EngineError, match="install_cmdstan"):
        engines.resolve_engine("cmdstanpy")


def test_auto_prefers_cmdstan_then_pystan():
    """Every model goes to numpy; what needs Stan (the Laplace approximation, the widget's
    check) takes CmdStan, then PyStan."""
    available = engines.available_engines()
    assert available[0] == "numpy" and set(available) <= {"numpy", "cmdstanpy", "pystan"}
    assert engines.resolve_engine("auto") == engines.resolve_engine("auto", "bbt") == "numpy"
    assert engines.resolve_engine("auto", "bbt_groups") == "numpy"
    assert engines.resolve_engine("auto", "davidson") == "numpy"
    if len(available) > 1:
        assert engines.stan_engine() == available[1]


def test_stan_programs_are_found_and_hashed():
    for model in ("bbt", "davidson"):
        source = engines.stan_program(model)
        assert "generated quantities" in source and "log_lik" in source
        assert len(engines.program_hash(model)) == 16
    assert engines.program_hash("bbt") != engines.program_hash("davidson")
    # the other methods sample in numpy: their Stan twins are the tests' (tests/oracles)
    for model in ("mallows", "hierarchical_ttest", "plackett_luce"):
        with pytest.raises(ValueError, match="unknown model"):
            engines.stan_program(model)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"i1": [1] * 9}, "expected n_pairs"),
        ({"i2": [1] + [5] * 9}, "compared with itself"),
        ({"i2": [9] * 10}, "outside 1..5"),
        ({"win1": [-1] * 10}, "negative"),
        ({"win1": [0.5] * 10}, "integers"),
        ({"hyperprior": 4}, "hyperprior"),
        ({"prior_scale": 0.0}, "prior_scale"),
    ],
)
def test_bad_data_is_rejected_before_any_process_starts(change, message):
    with pytest.raises(ValueError, match=message):
        engines.sample("bbt", bt_data(**change))


def test_data_defaults_and_types():
    data = engines.prepare_data("bbt", {**bt_data(), "ties": [0] * 10, "n_pairs": np.int64(10)})
    assert data["hyperprior"] == 1 and data["prior_scale"] == 0.5  # the paper's prior
    assert "ties" not in data  # not read by the BT program
    assert all(type(v) is int for v in data["win1"])
    assert engines.prepare_data("bbt", bt_data(hyperprior="cauchy", prior_scale=1))[
        "prior_scale"
    ] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="ties"):
        engines.prepare_data("davidson", bt_data())


def test_sampler_settings_are_checked():
    with pytest.raises(ValueError, match="chains"):
        engines.sample("bbt", bt_data(), chains=0)
    with pytest.raises(ValueError, match="seed"):
        engines.sample("bbt", bt_data(), seed=-1)
    with pytest.raises(ValueError, match="adapt_delta"):
        engines.sample("bbt", bt_data(), adapt_delta=1.0)


# ----------------------------------------------------------------------------- PyStan fits


@pytest.mark.stan
def test_draws_shapes_names_and_types(table_3b_fit):
    d = table_3b_fit
    assert d.engine == "pystan"
    assert d.params["beta"].shape == (4, 1000, 5)
    assert d.params["sigma"].shape == (4, 1000)
    assert d.params["win1_rep"].shape == (4, 1000, 10)
    assert d.params["log_lik"].shape == (4, 1000, 10)
    assert d.params["win1_rep"].dtype.kind == "i"
    assert "nu" not in d.params and "ties_rep" not in d.params
    assert set(d.sampler) == SAMPLER_NAMES
    for name, values in d.sampler.items():
        assert values.shape == (4, 1000), name
    assert d.sampler["divergent__"].dtype.kind == "i"
    # C order: flattening the chains (the PPC, the summaries) is then a view, not a copy
    for name, values in {**d.params, **d.sampler}.items():
        assert values.flags.c_contiguous, name
    assert d.max_treedepth == 10
    assert {"compile", "sample"} <= set(d.timings)
    assert d.info["stan_hash"] == engines.program_hash("bbt")
    assert "httpstan" in d.info["engine_version"]
    assert d.info["seed"] == 20230101
    # replicated wins stay within the number of games of each pair
    games = np.array([r[2] + r[3] for r in TABLE_3B])
    assert (d.params["win1_rep"] >= 0).all() and (d.params["win1_rep"] <= games).all()


@pytest.mark.stan
def test_table_3b_reproduces_the_paper(table_3b_fit):
    # Paper Table 4 / 6: P(xgb > dt) mean 0.83, P(lgbm > svm) 0.55
    assert p_beats(table_3b_fit, "xgb", "dt") == pytest.approx(0.83, abs=0.02)
    assert p_beats(table_3b_fit, "lgbm", "svm") == pytest.approx(0.55, abs=0.02)
    assert table_3b_fit.sampler["divergent__"].sum() == 0


@pytest.mark.stan
def test_bt_log_lik_is_the_binomial_log_pmf(table_3b_fit):
    beta = table_3b_fit.params["beta"][0, :50]
    i1 = np.array(bt_data()["i1"]) - 1
    i2 = np.array(bt_data()["i2"]) - 1
    win1 = np.array(bt_data()["win1"])
    games = win1 + np.array(bt_data()["win2"])
    p = 1.0 / (1.0 + np.exp(-(beta[:, i1] - beta[:, i2])))
    expected = binom.logpmf(win1, games, p)
    np.testing.assert_allclose(table_3b_fit.params["log_lik"][0, :50], expected, rtol=1e-8)


@pytest.mark.stan
def test_a_seed_makes_the_fit_reproducible(pystan_models, table_3b_fit):
    again = engines.sample("bbt", bt_data(), engine="pystan", seed=20230101)
    np.testing.assert_array_equal(again.params["beta"], table_3b_fit.params["beta"])
    np.testing.assert_array_equal(again.params["win1_rep"], table_3b_fit.params["win1_rep"])
    other = engines.sample("bbt", bt_data(), engine="pystan", seed=1, iter_sampling=200)
    assert other.params["beta"].shape == (4, 200, 5)
    assert not np.array_equal(other.params["beta"], table_3b_fit.params["beta"][:, :200])


@pytest.mark.stan
def test_progress_goes_from_zero_to_one(pystan_models):
    """From PyStan's progress lines. PyStan (httpstan 4) reports a chain's iterations when the
    chain ends, so progress moves in steps of one chain. httpstan runs one chain per core:
    with one chain more than cores, the last starts when another has ended, so at least one
    report falls between the ends."""
    seen = []
    engines.sample(
        "bbt",
        bt_data(),
        engine="pystan",
        seed=2,
        chains=(os.cpu_count() or 1) + 1,
        iter_sampling=5_000,
        progress=lambda stage, fraction: seen.append((stage, fraction)),
    )
    assert seen[0] == ("sampling", 0.0) and seen[-1] == ("sampling", 1.0)
    fractions = [f for _, f in seen]
    assert fractions == sorted(fractions)
    assert any(0.0 < f < 1.0 for f in fractions)  # a report between the ends


@pytest.mark.stan
def test_compile_is_a_fast_no_op_when_cached(pystan_models):
    start = time.perf_counter()
    engines.compile_model("bbt", "pystan")
    assert time.perf_counter() - start < 1.0


@pytest.mark.stan
@pytest.mark.parametrize("hyperprior", [2, 3])
def test_other_hyperpriors_run(pystan_models, hyperprior):
    d = engines.sample(
        "bbt",
        bt_data(hyperprior=hyperprior, prior_scale=1.0),
        engine="pystan",
        seed=3,
        iter_warmup=500,
        iter_sampling=500,
    )
    assert (d.params["sigma"] > 0).all()
    # Appendix A: the hyper-prior makes no important difference
    assert p_beats(d, "xgb", "dt") == pytest.approx(0.83, abs=0.03)


@pytest.mark.stan
def test_sparse_data_samples_without_divergences(pystan_models):
    # 2 data sets: the non-centred coordinates are used; no funnel
    rows = [("dt", "lda", 1, 1), ("dt", "lgbm", 0, 2), ("lda", "lgbm", 2, 0)]
    data = bt_data(rows)
    data["n_alg"] = 3
    d = engines.sample("bbt", data, engine="pystan", seed=4)
    assert d.sampler["divergent__"].sum() <= 2
    assert d.params["beta"].shape == (4, 1000, 3)


@pytest.mark.stan
@pytest.mark.parametrize("model", ["bbt", "davidson"])
def test_no_pairs_samples_the_prior_with_empty_pair_outputs(pystan_models, model):
    data = {"n_alg": 3, "i1": [], "i2": [], "win1": [], "win2": [], "ties": []}
    d = engines.sample(model, data, engine="pystan", seed=15)
    assert d.params["beta"].shape == (4, 1000, 3)
    assert d.params["log_lik"].shape == (4, 1000, 0)
    assert d.params["win1_rep"].shape == (4, 1000, 0) and d.params["win1_rep"].dtype.kind == "i"
    # sigma ~ lognormal(0, 0.5): mean exp(0.125)
    assert np.mean(d.params["sigma"]) == pytest.approx(np.exp(0.125), rel=0.05)


@pytest.mark.stan
def test_davidson_draws_and_log_lik(pystan_models):
    d = engines.sample("davidson", bt_data(TABLE_3A), engine="pystan", seed=5)
    assert set(d.params) >= {"beta", "sigma", "nu", "win1_rep", "ties_rep", "log_lik"}
    assert d.params["nu"].shape == (4, 1000)
    assert d.params["ties_rep"].shape == (4, 1000, 10) and d.params["ties_rep"].dtype.kind == "i"
    games = np.array([sum(r[2:]) for r in TABLE_3A])
    assert (d.params["win1_rep"] + d.params["ties_rep"] <= games).all()
    # log_lik is the trinomial log pmf of Eq. 7 for each pair
    beta, nu = d.params["beta"][1, :20], d.params["nu"][1, :20]
    data = bt_data(TABLE_3A)
    for k in range(10):
        b1, b2 = beta[:, data["i1"][k] - 1], beta[:, data["i2"][k] - 1]
        eta = np.stack([b1, b2, nu + (b1 + b2) / 2], axis=1)
        p = np.exp(eta - eta.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        counts = [data["win1"][k], data["win2"][k], data["ties"][k]]
        expected = [multinomial.logpmf(counts, sum(counts), row) for row in p]
        np.testing.assert_allclose(d.params["log_lik"][1, :20, k], expected, rtol=1e-8)
    # nu is not forced >= 0 (bbtcomp's error): with ~8% ties, P(tie | equal) < 1/3
    assert np.mean(d.params["nu"]) < 0


@pytest.mark.stan
def test_davidson_is_symmetric_in_the_two_players(pystan_models):
    swapped_rows = [(b, a, w2, w1, t) for a, b, w1, w2, t in TABLE_3A]
    fit = engines.sample("davidson", bt_data(TABLE_3A), engine="pystan", seed=6)
    swapped = engines.sample("davidson", bt_data(swapped_rows), engine="pystan", seed=7)
    for a, b in [("xgb", "dt"), ("lgbm", "svm"), ("svm", "lda")]:
        assert p_beats(fit, a, b) == pytest.approx(p_beats(swapped, a, b), abs=0.015)
    for name in ("nu", "sigma"):
        x, y = fit.params[name], swapped.params[name]
        assert np.mean(x) == pytest.approx(np.mean(y), abs=0.06), name
        assert np.std(x) == pytest.approx(np.std(y), rel=0.1), name
    np.testing.assert_allclose(
        fit.params["beta"].mean(axis=(0, 1)), swapped.params["beta"].mean(axis=(0, 1)), atol=0.05
    )
    # replicated ties are per pair, whichever way round the pair is written
    np.testing.assert_allclose(
        fit.params["ties_rep"].mean(axis=(0, 1)),
        swapped.params["ties_rep"].mean(axis=(0, 1)),
        atol=0.15,
    )


@pytest.mark.stan
def test_nothing_is_left_in_the_working_directory(pystan_models, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    engines.compile_model("bbt", "pystan")
    engines.sample("bbt", bt_data(), engine="pystan", seed=8, iter_sampling=100)
    engines.sample("davidson", bt_data(TABLE_3A), engine="pystan", seed=8, iter_sampling=100)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.stan
def test_old_fits_are_removed_from_the_model_cache(pystan_models):
    """httpstan stores each fit's output under its model (``fits/``); a fit removes those over
    an hour old (they would fill the cache) and leaves fresh ones, which another fit running
    at the same time may still have to read."""
    folder = engines.get("pystan").compiled("bbt")
    assert folder is not None
    fits = folder / "fits"
    fits.mkdir(exist_ok=True)
    old, fresh = fits / "planted-old.jsonlines.gz", fits / "planted-fresh.jsonlines.gz"
    for path in (old, fresh):
        path.write_bytes(b"")
    two_hours_ago = time.time() - 7200
    os.utime(old, (two_hours_ago, two_hours_ago))
    try:
        engines.sample("bbt", bt_data(), engine="pystan", seed=12, iter_sampling=100)
        assert not old.exists() and fresh.exists()
    finally:
        fresh.unlink(missing_ok=True)


@pytest.mark.stan
def test_nothing_is_printed(pystan_models, capfd, monkeypatch):
    monkeypatch.delenv("BBT_WIDGET_VERBOSE", raising=False)
    engines.sample("bbt", bt_data(), engine="pystan", seed=9, iter_sampling=100)
    out, err = capfd.readouterr()
    assert out == "" and err == ""


@pytest.mark.stan
def test_works_inside_a_running_event_loop(pystan_models):
    async def blocking_call_in_the_loop():
        return engines.sample("bbt", bt_data(), engine="pystan", seed=10, iter_sampling=200)

    async def worker_thread_while_the_loop_runs():
        return await asyncio.to_thread(
            engines.sample, "bbt", bt_data(), engine="pystan", seed=10, iter_sampling=200
        )

    first = asyncio.run(blocking_call_in_the_loop())
    second = asyncio.run(worker_thread_while_the_loop_runs())
    np.testing.assert_array_equal(first.params["beta"], second.params["beta"])


@pytest.mark.stan
def test_works_from_threads_concurrently(pystan_models):
    results: dict[int, engines.Draws] = {}

    def fit(seed: int) -> None:
        results[seed] = engines.sample(
            "bbt", bt_data(), engine="pystan", seed=seed, iter_sampling=200
        )

    threads = [threading.Thread(target=fit, args=(s,)) for s in (11, 12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [11, 12]
    assert not np.array_equal(results[11].params["beta"], results[12].params["beta"])


@pytest.mark.stan
def test_cancel_stops_the_fit_and_its_processes(pystan_models):
    cancel = threading.Event()
    running: list[int] = []
    outcome: dict[str, object] = {}

    def progress(stage: str, fraction: float) -> None:
        if stage == "sampling" and fraction > 0.02 and not running:
            # the child and its chains, mid-fit; not what earlier tests left running in
            # this process (multiprocessing's resource tracker, Dask's helpers)
            running.extend(p for p in our_processes() if p not in before)
            cancel.set()

    def fit() -> None:
        try:
            # long enough (tens of seconds) that only a cancellation ends it quickly
            engines.sample(
                "bbt",
                bt_data(),
                engine="pystan",
                seed=13,
                iter_warmup=100_000,
                iter_sampling=1000,
                progress=progress,
                cancel=cancel,
            )
        except BaseException as exc:
            outcome["error"] = exc

    before = set(our_processes())
    start = time.perf_counter()
    thread = threading.Thread(target=fit)
    thread.start()
    thread.join(timeout=60)
    assert not thread.is_alive()
    assert isinstance(outcome.get("error"), FitCancelled)
    assert time.perf_counter() - start < 15
    # the child and its chains' processes (PyStan runs as many at once as there are cores)
    assert len(running) >= min(4, os.cpu_count() or 1) + 1
    # killed processes need a moment to exit on a loaded machine; they must not outlive it
    deadline = time.perf_counter() + 5
    while [pid for pid in running if _alive(pid)] and time.perf_counter() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in running if _alive(pid)]
    assert set(our_processes()) <= before


@pytest.mark.stan
def test_a_failing_fit_raises_engine_error_with_stans_reason(pystan_models):
    pystan = engines.get("pystan")

    bad = engines.prepare_data("bbt", bt_data())
    bad["win1"] = [-1] * 10  # bypasses our checks; violates `int<lower=0>` in the data block
    with pytest.raises(EngineError, match="win1"):
        pystan.sample("bbt", bad, SamplerSettings(chains=2, iter_warmup=10, iter_sampling=10))


# ----------------------------------------------------------------------------- CmdStan


def _cmdstan_or_skip() -> None:
    if "cmdstanpy" not in engines.available_engines():
        pytest.skip("no CmdStan installation found")


@pytest.mark.stan
@pytest.mark.cmdstan
def test_cmdstan_reproduces_the_paper_and_agrees_with_pystan(table_3b_fit):
    _cmdstan_or_skip()
    d = engines.sample("bbt", bt_data(), engine="cmdstanpy", seed=20230101)
    assert d.engine == "cmdstanpy"
    assert d.params["beta"].shape == (4, 1000, 5)
    assert set(d.sampler) >= SAMPLER_NAMES
    assert d.params["win1_rep"].dtype.kind == "i"
    assert p_beats(d, "xgb", "dt") == pytest.approx(p_beats(table_3b_fit, "xgb", "dt"), abs=0.02)
    assert p_beats(d, "lgbm", "svm") == pytest.approx(0.55, abs=0.02)


@pytest.mark.stan
@pytest.mark.cmdstan
def test_cmdstan_davidson_laplace_and_cancel(tmp_path, monkeypatch):
    _cmdstan_or_skip()
    monkeypatch.chdir(tmp_path)
    d = engines.sample("davidson", bt_data(TABLE_3A), engine="cmdstanpy", seed=5)
    assert d.params["ties_rep"].shape == (4, 1000, 10)
    approx = engines.laplace("davidson", bt_data(TABLE_3A), engine="cmdstanpy", seed=5)
    assert approx.params["beta"].shape == (1, 1000, 5) and approx.info["method"] == "laplace"
    before = set(our_processes())
    cancel = threading.Event()
    timer = threading.Timer(1.0, cancel.set)
    timer.start()
    with pytest.raises(FitCancelled):
        engines.sample("bbt", bt_data(), engine="cmdstanpy", iter_warmup=1_000_000, cancel=cancel)
    time.sleep(0.2)
    assert set(our_processes()) <= before
    # no orphan chain either (an orphan is no longer our descendant)
    exe = str(engines.get("cmdstanpy").compile("bbt")[0])
    assert [p.pid for p in psutil.process_iter(["exe"]) if p.info["exe"] == exe] == []
    assert list(tmp_path.iterdir()) == []


# ----------------------------------------------------------------------------- processes


@pytest.mark.stan
def test_a_compile_goes_on_when_its_fit_is_cancelled(monkeypatch):
    """A cancelled fit stops waiting for its compile, not the compile (up to a minute, which
    the widget would otherwise restart at every change of a control): the next fit joins it."""
    from bbt_widget.engines import _child

    release = threading.Event()
    builds: list[str] = []

    def slow_build() -> None:
        builds.append("started")
        release.wait(10)

    cancel = threading.Event()
    cancel.set()
    with pytest.raises(FitCancelled):
        _child.ensure_built("test slow", slow_build, RunContext(cancel=cancel))
    seen: list[str] = []
    joined = threading.Thread(
        target=_child.ensure_built,
        args=("test slow", slow_build, RunContext(lambda stage, _f: seen.append(stage))),
    )
    joined.start()
    time.sleep(0.3)
    release.set()
    joined.join(5)
    assert not joined.is_alive() and builds == ["started"]  # one build, joined
    assert seen and set(seen) == {"compiling"}
