"""Real Stan fits through ``bbt_widget.engines`` (PyStan everywhere, CmdStan where installed).

The first run compiles each model once (about a minute each); later runs find them in the
cache. Fits are small (the paper's Table 3) and seeded.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import os
import queue
import shutil
import signal
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import psutil
import pytest
from scipy.stats import binom, multinomial

from bbt_widget import engines
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


def fake_stanc(home: Path, script: str = 'echo "stanc3 v2.36.0 (Unix)"') -> None:
    """Give the CmdStan installation ``home`` a ``bin/stanc`` that runs the shell ``script``."""
    stanc = home / "bin" / "stanc"
    stanc.parent.mkdir(parents=True, exist_ok=True)
    stanc.write_text(f"#!/bin/sh\n{script}\n")
    stanc.chmod(0o755)


@pytest.mark.parametrize(
    ("stanc", "why"),
    [
        (None, r"is not built \(it has no .*bin/stanc\)"),  # an interrupted install_cmdstan
        ("exit 2", r"`.*bin/stanc --version` failed \(exit code 2\)"),
        ("kill -SEGV $$", r"`.*bin/stanc --version` was killed by SIGSEGV"),
    ],
)
def test_auto_prefers_a_working_cmdstan_only(tmp_path, monkeypatch, stanc, why):
    """A CmdStan installation that is found but does not work here is passed over by Stan's "auto"
    (with a warning saying why), and asked for by name it is refused with the reason and the
    fix; once it works, "auto" picks it."""
    if importlib.util.find_spec("cmdstanpy") is None:
        pytest.skip("cmdstanpy is not installed")
    home = tmp_path / "cmdstan-2.36.0"
    home.mkdir()
    (home / "makefile").write_text("CMDSTAN_VERSION := 2.36.0\n")
    if stanc is not None:
        fake_stanc(home, stanc)
    monkeypatch.setenv("CMDSTAN", str(home))
    if "pystan" in engines.available_engines():
        with pytest.warns(RuntimeWarning, match=why + r".*install_cmdstan --overwrite.*pystan"):
            assert engines.stan_engine() == "pystan"
    assert "cmdstanpy" not in engines.available_engines()
    with pytest.raises(EngineError, match=rf"{why}.*install_cmdstan --overwrite"):
        engines.resolve_engine("cmdstanpy")
    fake_stanc(home)  # repaired (a new stanc: checked afresh)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert engines.stan_engine() == "cmdstanpy"


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
    seen = []
    engines.sample(
        "bbt",
        bt_data(),
        engine="pystan",
        seed=2,
        progress=lambda stage, fraction: seen.append((stage, fraction)),
    )
    assert seen[0] == ("sampling", 0.0) and seen[-1] == ("sampling", 1.0)
    fractions = [f for _, f in seen]
    assert fractions == sorted(fractions)
    assert len(seen) > 10  # intermediate reports, not just the ends


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
            # the worker and its chains, mid-fit; not what earlier tests left running in
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

    engines.shutdown()  # so that every new process seen mid-fit belongs to this fit
    before = set(our_processes())
    start = time.perf_counter()
    thread = threading.Thread(target=fit)
    thread.start()
    thread.join(timeout=60)
    assert not thread.is_alive()
    assert isinstance(outcome.get("error"), FitCancelled)
    assert time.perf_counter() - start < 15
    assert len(running) >= 4  # there were chain processes to stop
    # killed processes need a moment to exit on a loaded machine; they must not outlive it
    deadline = time.perf_counter() + 5
    while [pid for pid in running if _alive(pid)] and time.perf_counter() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in running if _alive(pid)]
    # what may remain is an idle worker for the next fit; shutdown() stops it
    engines.shutdown()
    assert set(our_processes()) <= before


@pytest.mark.stan
def test_a_dead_idle_worker_is_replaced(pystan_models):
    engines.sample("bbt", bt_data(), engine="pystan", seed=14, iter_sampling=100)
    for pid in our_processes():  # the idle workers kept for the next fit
        os.kill(pid, signal.SIGKILL)
    time.sleep(0.1)
    d = engines.sample("bbt", bt_data(), engine="pystan", seed=14, iter_sampling=100)
    assert d.params["beta"].shape == (4, 100, 5)


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
def test_cmdstan_davidson_and_cancel(tmp_path, monkeypatch):
    cmdstan = engines.get("cmdstanpy")

    _cmdstan_or_skip()
    monkeypatch.chdir(tmp_path)
    d = engines.sample("davidson", bt_data(TABLE_3A), engine="cmdstanpy", seed=5)
    assert d.params["ties_rep"].shape == (4, 1000, 10)
    engines.shutdown()  # the idle workers: every process seen after the fit is the fit's
    before = set(our_processes())
    cancel = threading.Event()
    timer = threading.Timer(1.0, cancel.set)
    timer.start()
    with pytest.raises(FitCancelled):
        engines.sample("bbt", bt_data(), engine="cmdstanpy", iter_warmup=1_000_000, cancel=cancel)
    time.sleep(0.2)
    engines.shutdown()  # the worker started for the next fit
    assert set(our_processes()) <= before
    # no orphan chain either (an orphan is no longer our descendant)
    exe = str(cmdstan.compile("bbt")[0])
    assert [p.pid for p in psutil.process_iter(["exe"]) if p.info["exe"] == exe] == []
    assert list(tmp_path.iterdir()) == []


@pytest.mark.stan
@pytest.mark.cmdstan
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM])
def test_cmdstan_chains_die_with_the_engines_process(tmp_path, signum):
    """A process killed mid-fit leaves no CmdStan chain (nor worker, nor folder) behind: the
    worker's stdin closes, and it kills the chains and removes the fit's folder."""
    import subprocess
    import sys

    cmdstan = engines.get("cmdstanpy")

    _cmdstan_or_skip()
    exe = str(cmdstan.compile("bbt")[0])
    code = (
        "import json, sys\nfrom bbt_widget import engines\n"
        "engines.sample('bbt', json.loads(sys.argv[1]), engine='cmdstanpy', "
        "iter_warmup=1_000_000)\n"
    )
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    engine = subprocess.Popen([sys.executable, "-c", code, json.dumps(bt_data())], env=env)
    try:
        deadline = time.monotonic() + 60
        procs: list[psutil.Process] = []
        while time.monotonic() < deadline and sum(p.name() == "bbt" for p in procs) < 2:
            time.sleep(0.05)
            procs = psutil.Process(engine.pid).children(recursive=True)
        assert sum(p.name() == "bbt" for p in procs) >= 2  # chains running
        engine.send_signal(signum)
        engine.wait(timeout=30)
        _, alive = psutil.wait_procs(procs, timeout=10)
        assert alive == []
        assert [p.pid for p in psutil.process_iter(["exe"]) if p.info["exe"] == exe] == []
        assert list(tmp_path.iterdir()) == []
    finally:
        engine.kill()
        engine.wait()


# ----------------------------------------------------------------------------- cmdstanpy glue
# Without a CmdStan installation the cmdstanpy engine is still run end to end, through cmdstanpy
# itself, against a fake CmdStan: its makefile "compiles" a model into a launcher of
# fake_cmdstan_exe.py, which answers CmdStan's command line with a Stan CSV file of real draws.

FAKE_MAKEFILE = """CMDSTAN_VERSION := 2.36.0
%:
\t@echo "--- Compiling, linking C++ code (fake) ---"
\t@printf '#!/bin/sh\\nexec {python} {fake_exe} "$$0" "$$@"\\n' > $@
\t@chmod +x $@
"""


@pytest.fixture
def fake_cmdstan(pystan_models, tmp_path, monkeypatch) -> Path:
    import shutil
    import sys

    from bbt_widget.engines._cache import cache_root

    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    home = tmp_path / "cmdstan-2.36.0"
    home.mkdir()
    fake_exe = Path(__file__).with_name("fake_cmdstan_exe.py")
    (home / "makefile").write_text(FAKE_MAKEFILE.format(python=sys.executable, fake_exe=fake_exe))
    fake_stanc(home)  # a working installation has a Stan compiler that runs
    monkeypatch.setenv("FAKE_CMDSTAN_REPO", str(Path(__file__).resolve().parents[2]))
    monkeypatch.setenv("FAKE_CMDSTAN_MODELS", str(cache_root()))
    monkeypatch.setenv("CMDSTAN", str(home))
    monkeypatch.setenv("BBT_WIDGET_CACHE", str(tmp_path / "cache"))  # the fake exe goes here
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


def _is_chain(proc: psutil.Process) -> bool:
    """A CmdStan chain (the fake's launcher exec()s Python with CmdStan's command line)."""
    try:
        return any(arg.startswith("id=") for arg in proc.cmdline())
    except psutil.Error:
        return False


@pytest.mark.stan
def test_cmdstanpy_engine_against_a_fake_cmdstan(fake_cmdstan):
    cmdstan = engines.get("cmdstanpy")

    assert engines.stan_engine() == "cmdstanpy"
    seen = []
    engines.compile_model("bbt", "cmdstanpy", progress=lambda s, f: seen.append(s))
    assert seen and set(seen) == {"compiling"}
    d = engines.sample("bbt", bt_data(), engine="cmdstanpy", seed=1, iter_sampling=300)
    assert d.engine == "cmdstanpy" and d.timings["compile"] == 0.0
    assert d.params["beta"].shape == (4, 300, 5)
    assert d.params["win1_rep"].dtype.kind == "i" and d.sampler["treedepth__"].dtype.kind == "i"
    assert set(d.sampler) == SAMPLER_NAMES
    assert "CmdStan 2.36" in d.info["engine_version"]
    assert p_beats(d, "xgb", "dt") == pytest.approx(0.83, abs=0.03)
    assert not np.array_equal(d.params["beta"][0], d.params["beta"][1])  # chains kept apart

    cancel = threading.Event()
    timer = threading.Timer(1.5, cancel.set)
    timer.start()
    start = time.perf_counter()
    with pytest.raises(FitCancelled):
        engines.sample("bbt", bt_data(), engine="cmdstanpy", iter_warmup=1_000_000, cancel=cancel)
    assert time.perf_counter() - start < 10
    time.sleep(0.2)
    engines.shutdown()
    assert our_processes() == []
    assert list(fake_cmdstan.iterdir()) == []

    with pytest.raises(EngineError, match="CmdStan sampling"):
        cmdstan.sample(
            "bbt",
            {"n_alg": 5},  # no pairs: the fake exe fails reading them, like a data error
            SamplerSettings(chains=2, iter_warmup=10, iter_sampling=10),
        )


@pytest.mark.stan
def test_cmdstanpy_engine_names_a_signal_that_killed_a_chain(fake_cmdstan):
    engines.compile_model("bbt", "cmdstanpy")

    def kill_a_chain() -> None:
        # the fake chains of this fit (a long warm-up) are our grandchildren, with CmdStan's
        # command line
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            chains = [p for p in psutil.Process().children(recursive=True) if _is_chain(p)]
            if chains:
                chains[0].send_signal(signal.SIGKILL)  # as the out-of-memory killer does
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_a_chain)
    killer.start()
    with pytest.raises(EngineError, match=r"chain \d was killed by SIGKILL.*memory"):
        engines.sample("bbt", bt_data(), engine="cmdstanpy", chains=1, iter_warmup=1_000_000)
    killer.join()
    engines.shutdown()
    assert our_processes() == []
    assert list(fake_cmdstan.iterdir()) == []


@pytest.mark.stan
def test_cmdstanpy_engine_reports_per_iteration_progress(fake_cmdstan):
    engines.compile_model("bbt", "cmdstanpy")
    seen: list[float] = []
    engines.sample(
        "bbt",
        bt_data(),
        engine="cmdstanpy",
        seed=2,
        iter_sampling=200,
        progress=lambda stage, f: seen.append(f) if stage == "sampling" else None,
    )
    assert seen[0] == 0.0 and seen[-1] == 1.0
    middle = [f for f in seen if 0.0 < f < 1.0]
    # from CmdStan's "Iteration: i / n" lines: ~25 a chain, 4 chains
    assert len(middle) >= 40
    assert len({round(f, 2) for f in middle}) >= 20
    assert all(0.0 < f < 1.0 for f in middle)
    assert max(middle) > 0.9  # every chain's iterations count, not one chain's


class _NoProc:
    """Makes any read of ``/proc`` by bbt_widget fail, to prove that the engine needs none.

    A read is bbt_widget's when the first caller outside the standard library (pathlib,
    shutil...) is in the package; psutil, which this test uses, reads ``/proc`` itself.
    """

    def __init__(self, monkeypatch) -> None:
        import builtins
        import sys
        import sysconfig

        self.hits: list[str] = []
        real_open, real_scandir, real_listdir = builtins.open, os.scandir, os.listdir
        stdlib = sysconfig.get_paths()["stdlib"]
        package = str(Path(engines.__file__).resolve().parents[1])

        def from_package() -> bool:
            frame = sys._getframe(2)
            while frame is not None and frame.f_code.co_filename.startswith(stdlib):
                frame = frame.f_back
            return frame is not None and frame.f_code.co_filename.startswith(package)

        def guard(real):
            def wrapper(path=".", *args, **kwargs):
                name = "" if isinstance(path, int) else str(os.fspath(path))
                if name.startswith("/proc") and from_package():
                    self.hits.append(name)
                    raise PermissionError(f"no /proc here: {path}")
                return real(path, *args, **kwargs)

            return wrapper

        monkeypatch.setattr(builtins, "open", guard(real_open))
        monkeypatch.setattr(os, "scandir", guard(real_scandir))
        monkeypatch.setattr(os, "listdir", guard(real_listdir))


@pytest.mark.stan
def test_cmdstan_cancel_kills_every_process_without_proc(fake_cmdstan, monkeypatch):
    engines.compile_model("bbt", "cmdstanpy")
    engines.shutdown()
    no_proc = _NoProc(monkeypatch)
    cancel = threading.Event()
    running: list[psutil.Process] = []
    n_chains = min(4, os.cpu_count() or 1)  # the chains that run at once

    def progress(stage: str, fraction: float) -> None:
        if stage == "sampling" and 0.0 < fraction and not cancel.is_set():
            # mid-fit, once every chain that runs at once has started: the worker and chains
            procs = psutil.Process().children(recursive=True)
            if sum(_is_chain(p) for p in procs) >= n_chains:
                running.extend(procs)
                cancel.set()

    start = time.perf_counter()
    with pytest.raises(FitCancelled):
        engines.sample(
            "bbt",
            bt_data(),
            engine="cmdstanpy",
            iter_warmup=1_000_000,
            progress=progress,
            cancel=cancel,
        )
    assert time.perf_counter() - start < 20
    assert len(running) > n_chains  # the chains, the worker (and the fake's launchers)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_alive(p.pid) for p in running):
        time.sleep(0.05)
    assert [p.pid for p in running if _alive(p.pid)] == []
    engines.shutdown()  # the worker started for the next fit
    assert our_processes() == []
    assert no_proc.hits == []
    assert list(fake_cmdstan.iterdir()) == []


def test_cmdstan_worker_kills_its_chains_when_its_stdin_closes(tmp_path):
    """How a fit stops on every platform (and when the engine's process dies): the engine's
    end of the worker's stdin closes; no process group or /proc is involved."""
    import subprocess
    import sys

    from bbt_widget.engines import _cmdstan

    chain = "import time\nprint('Iteration: 1 / 10 [ 10%]', flush=True)\ntime.sleep(120)\n"
    request = {
        "commands": [[sys.executable, "-c", chain] for _ in range(3)],
        "parallel": 3,
        "out_dir": str(tmp_path),
    }
    worker = subprocess.Popen(
        [sys.executable, str(_cmdstan._WORKER_SCRIPT)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    worker.stdin.write(json.dumps(request) + "\n")  # the fit, as the engine hands it over
    worker.stdin.flush()
    try:
        progress = sorted(worker.stdout.readline().split()[1] for _ in range(3))
        assert progress == ["1", "2", "3"]
        chains = psutil.Process(worker.pid).children()
        assert len(chains) == 3
        worker.stdin.close()  # as when the engine cancels, or its process dies
        assert worker.wait(timeout=10) != 0
        _, alive = psutil.wait_procs(chains, timeout=5)
        assert alive == []
    finally:
        worker.kill()
        worker.wait()
        worker.stdout.close()
        worker.stdin.close()


@pytest.mark.stan
def test_a_cmdstan_fit_runs_in_the_worker_kept_ready(fake_cmdstan):
    """A fit does not wait for an interpreter to start: compile_model and each fit leave a
    worker ready for the next fit, which hands its chains to it."""
    cmdstan = engines.get("cmdstanpy")

    engines.compile_model("bbt", "cmdstanpy")
    ready = cmdstan._idle.proc.pid
    before = {p.pid for p in psutil.Process().children()}  # it, and PyStan's idle workers
    workers: list[int] = []

    def progress(stage: str, fraction: float) -> None:
        if stage == "sampling" and 0.0 < fraction < 1.0 and not workers:
            workers.extend(p.pid for p in psutil.Process().children())

    engines.sample(
        "bbt", bt_data(), engine="cmdstanpy", seed=1, iter_sampling=100, progress=progress
    )
    assert ready in workers and set(workers) <= before  # no worker was started for it
    assert cmdstan._idle.proc.pid not in (None, ready)  # another one, for the next fit
    engines.shutdown()
    assert our_processes() == []


def test_a_cmdstan_fit_ending_after_a_shutdown_starts_no_worker(fake_cmdstan):
    """The last widget closed while its fit was still ending: the engine's workers were
    stopped (shutdown), and the fit's end must not start a new idle worker that nothing
    would stop."""
    cmdstan = engines.get("cmdstanpy")

    engines.compile_model("bbt", "cmdstanpy")

    def progress(stage: str, fraction: float) -> None:
        if stage == "sampling" and 0.0 < fraction < 1.0:
            cmdstan.shutdown()  # while the chains run

    engines.sample(
        "bbt", bt_data(), engine="cmdstanpy", seed=2, iter_sampling=100, progress=progress
    )
    assert cmdstan._idle is None
    engines.shutdown()
    assert our_processes() == []


@pytest.mark.stan
def test_cmdstan_chains_get_the_environment_of_their_fit(fake_cmdstan, monkeypatch):
    """The worker kept ready was started before the fit, maybe long before: its chains still
    run with the environment as it is when the fit starts."""
    cmdstan = engines.get("cmdstanpy")

    engines.compile_model("bbt", "cmdstanpy")
    engines.shutdown()
    repo = os.environ["FAKE_CMDSTAN_REPO"]  # the fake chains need it to run at all
    monkeypatch.delenv("FAKE_CMDSTAN_REPO")
    cmdstan._start_idle()  # started without it
    monkeypatch.setenv("FAKE_CMDSTAN_REPO", repo)
    d = engines.sample("bbt", bt_data(), engine="cmdstanpy", seed=4, iter_sampling=50)
    assert d.params["beta"].shape == (4, 50, 5)
    engines.shutdown()


def test_an_idle_cmdstan_worker_exits_when_its_stdin_closes():
    """An idle worker outlives no engine: when the engine's process dies (or shuts it down),
    its stdin closes and it exits at once, having started nothing."""
    import subprocess
    import sys

    from bbt_widget.engines import _cmdstan

    worker = subprocess.Popen([sys.executable, str(_cmdstan._WORKER_SCRIPT)], stdin=subprocess.PIPE)
    worker.stdin.close()
    assert worker.wait(timeout=10) == 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX fork")
def test_a_forked_process_does_not_take_the_parents_idle_cmdstan_worker():
    cmdstan = engines.get("cmdstanpy")

    cmdstan._start_idle()
    try:
        assert cmdstan._idle is not None
        check = "from bbt_widget import engines\nok = engines.get('cmdstanpy')._idle is None\n"
        assert _in_a_forked_child(check) == 0
        assert cmdstan._idle is not None  # the parent keeps it
    finally:
        cmdstan.shutdown()


def test_cmdstan_worker_says_when_each_chain_has_finished(tmp_path):
    """A chain's CSV file is read as soon as that chain ends, while the others still run
    (reading overlaps sampling): the worker announces each chain that ended well at once."""
    import subprocess
    import sys

    from bbt_widget.engines import _cmdstan

    quick = "print('Iteration: 1 / 10 [ 10%]', flush=True)\n"
    slow = quick + "import time\ntime.sleep(120)\n"
    request = {
        "commands": [[sys.executable, "-c", code] for code in (slow, quick)],
        "parallel": 2,
        "out_dir": str(tmp_path),
    }
    worker = subprocess.Popen(
        [sys.executable, str(_cmdstan._WORKER_SCRIPT)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    worker.stdin.write(json.dumps(request) + "\n")  # the fit, as the engine hands it over
    worker.stdin.flush()
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(
        target=lambda: [lines.put(x.strip()) for x in worker.stdout], daemon=True
    ).start()
    try:
        seen = []
        with contextlib.suppress(queue.Empty):
            while "finished 2" not in seen:
                seen.append(lines.get(timeout=10))
        assert "finished 2" in seen
        assert worker.poll() is None  # chain 1 is still running
    finally:
        worker.stdin.close()
        worker.wait(timeout=10)
        worker.stdout.close()


@pytest.mark.stan
def test_a_cmdstan_executable_that_does_not_run_is_rebuilt_once(fake_cmdstan):
    cmdstan = engines.get("cmdstanpy")

    exe, _ = cmdstan.compile("bbt")
    exe.write_bytes(b"")  # truncated: it can no longer be started ("Exec format error")
    with pytest.warns(RuntimeWarning, match="does not run.*rebuilding"):
        d = engines.sample("bbt", bt_data(), engine="cmdstanpy", seed=3, iter_sampling=100)
    assert d.params["beta"].shape == (4, 100, 5)
    assert d.timings["compile"] > 0  # it was rebuilt
    assert exe.stat().st_size > 0
    assert list(fake_cmdstan.iterdir()) == []


@pytest.mark.stan
def test_a_cmdstan_executable_still_broken_after_a_rebuild_names_the_folder(
    fake_cmdstan, monkeypatch
):
    cmdstan = engines.get("cmdstanpy")

    exe, _ = cmdstan.compile("bbt")
    real_build = cmdstan._build

    def broken_build(model, scratch, *, verbose):
        real_build(model, scratch, verbose=verbose)
        # the toolchain writes an executable that dies at once, as a truncated binary does
        (scratch / exe.name).write_text("#!/bin/sh\nexec /nonexistent/cmdstan-model\n")

    monkeypatch.setattr(cmdstan, "_build", broken_build)
    exe.write_bytes(exe.read_bytes()[:20])  # truncated mid-line: exit code 127, "not found"
    with pytest.warns(RuntimeWarning, match="rebuilding"):
        with pytest.raises(EngineError, match="Delete the folder") as info:
            engines.sample("bbt", bt_data(), engine="cmdstanpy", seed=3, iter_sampling=100)
    assert str(exe.parent) in str(info.value)
    assert "BBT_WIDGET_CACHE" in str(info.value)
    assert our_processes() == [] or engines.shutdown() is None
    assert list(fake_cmdstan.iterdir()) == []


def test_the_compile_cache_key_follows_the_compiler_and_its_flags(tmp_path, monkeypatch):
    """A toolchain upgrade or new flags must not reuse models built before (no compile here)."""
    from bbt_widget.engines import _toolchain

    pystan = engines.get("pystan")

    monkeypatch.setenv("BBT_WIDGET_CACHE", str(tmp_path / "cache"))
    keys = {}
    for version in ("12.2.0", "13.1.0"):
        compiler = tmp_path / f"g++-{version}"
        compiler.write_text(f"#!/bin/sh\necho 'g++ (Fake) {version}'\n")
        compiler.chmod(0o755)
        monkeypatch.setenv("CC", str(compiler))
        monkeypatch.setenv("CXX", str(compiler))
        assert version in _toolchain.identity()
        keys[version] = pystan._target("bbt")
    assert keys["12.2.0"] != keys["13.1.0"]
    assert keys["12.2.0"].parent == keys["13.1.0"].parent  # same cache, another folder
    monkeypatch.setenv("CXXFLAGS", "-march=native")
    assert pystan._target("bbt") != keys["13.1.0"]
    monkeypatch.delenv("CXXFLAGS")
    assert pystan._target("bbt") == keys["13.1.0"]  # a stable key: the same compiler reuses
    monkeypatch.setattr(pystan, "COMPILE_ARGS", (*pystan.COMPILE_ARGS, "-DEXTRA"))
    assert pystan._target("bbt") != keys["13.1.0"]


@pytest.mark.stan
def test_cmdstan_chains_end_when_the_engines_process_is_killed(fake_cmdstan, tmp_path):
    """SIGKILL of the process running a CmdStan fit (an OOM kill, a kernel killed by hand):
    its worker sees its stdin close and stops the chains; no process group is signalled."""
    import subprocess
    import sys

    engines.compile_model("bbt", "cmdstanpy")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    code = (
        "from bbt_widget import engines\n"
        f"engines.sample('bbt', {bt_data()!r}, engine='cmdstanpy', iter_warmup=1_000_000)\n"
    )
    env = dict(os.environ, TMPDIR=str(tmp), PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        started: list[psutil.Process] = []
        while time.monotonic() < deadline and proc.poll() is None:
            started = psutil.Process(proc.pid).children(recursive=True)
            if sum(_is_chain(p) for p in started) >= min(4, os.cpu_count() or 1):
                break
            time.sleep(0.1)
        assert proc.poll() is None, proc.communicate()
        proc.kill()
        proc.communicate()
        _, alive = psutil.wait_procs(started, timeout=10)
        assert [p.pid for p in alive] == []
        assert list(tmp.iterdir()) == []  # the worker removed the fit's folder too
    finally:
        for p in psutil.Process().children(recursive=True):
            p.kill()


@pytest.mark.stan
def test_no_resource_warning_at_exit(pystan_models):
    """The idle worker kept after a fit holds a log file: it is closed at exit, not leaked."""
    import subprocess
    import sys

    code = (
        "from bbt_widget import engines\n"
        f"engines.sample('bbt', {bt_data()!r}, engine='pystan', seed=1, iter_sampling=50)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    out = subprocess.run(
        [sys.executable, "-X", "dev", "-W", "always::ResourceWarning", "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert "ResourceWarning" not in out.stderr, out.stderr


@pytest.mark.parametrize("free_cores, overlapped", [(2.0, True), (0.5, False)])
def test_compile_models_in_parallel_only_when_cores_are_free(
    tmp_path, monkeypatch, free_cores, overlapped
):
    """Two programs compile at once when two cores are free, else one after the other (no
    compiler here: a stand-in build that records when it runs)."""
    pystan = engines.get("pystan")

    if "pystan" not in engines.available_engines():
        pytest.skip("PyStan is not available here")
    monkeypatch.setenv("BBT_WIDGET_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (2.0 - free_cores, 0.0, 0.0))
    monkeypatch.setattr(pystan, "keep_warm", lambda module: None)  # no worker for a fake
    spans: dict[str, tuple[float, float]] = {}

    def build(model, scratch, *, verbose):
        start = time.monotonic()
        time.sleep(0.5)
        (scratch / "stan_services_fake.so").write_bytes(b"")  # a "module" for is_built
        spans[model] = (start, time.monotonic())

    monkeypatch.setattr(pystan, "_build", build)
    engines.compile_models(("bbt", "davidson"), "pystan")
    (a0, a1), (b0, b1) = spans["bbt"], spans["davidson"]
    assert (a0 < b1 and b0 < a1) == overlapped


def test_cmdstan_is_found_as_cmdstanpy_finds_it_without_importing_it(tmp_path, monkeypatch):
    import subprocess
    import sys

    import cmdstanpy

    from bbt_widget.engines import _cmdstan_install

    monkeypatch.delenv("CMDSTAN", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    home = tmp_path / ".cmdstan"
    for layout, expected in (
        (["cmdstan-2.35.0", "cmdstan-2.36.0-rc1"], "cmdstan-2.36.0-rc1"),
        (["cmdstan-2.36.0", "cmdstan-2.9.1"], "cmdstan-2.36.0"),
    ):
        shutil.rmtree(home, ignore_errors=True)
        for name in layout:
            (home / name).mkdir(parents=True)
            version = name.removeprefix("cmdstan-")
            (home / name / "makefile").write_text(f"CMDSTAN_VERSION := {version}\n")
        found = _cmdstan_install.cmdstan_path()
        assert found == str(home / expected)
        assert cmdstanpy.cmdstan_path() == found  # the same rule
        os.environ.pop("CMDSTAN")  # which cmdstanpy sets as it goes (monkeypatch restores it)
        assert _cmdstan_install.cmdstan_version(found) == expected.removeprefix("cmdstan-")
    (home / "cmdstan-2.36.0" / "makefile").unlink()  # not a valid installation
    (home / "cmdstan-2.9.1" / "makefile").unlink()
    assert _cmdstan_install.cmdstan_path() is None
    # finding it (or not) does not import cmdstanpy, which is slow to import
    code = "import sys; from bbt_widget import engines; engines.available_engines(); "
    code += "print('cmdstanpy' in sys.modules)"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr


def _in_a_forked_child(check: str) -> int:
    """Fork; the child runs ``check`` (Python code setting ``ok``), then the engines' exit
    handlers (what a child that simply returns runs; not the others, which would close what
    this test process shares with its children, e.g. multiprocessing's resource tracker),
    and reports ``ok`` through its exit code."""
    import sys

    from bbt_widget.engines import _procs

    pystan = engines.get("pystan")

    pid = os.fork()
    if pid == 0:  # the child: nothing of pytest's machinery, only the exit code
        code = 1
        try:
            scope: dict = {}
            exec(check, {"sys": sys}, scope)
            pystan.shutdown()
            _procs.kill_all()
            code = 0 if scope["ok"] else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def test_a_forked_child_leaves_the_parents_engine_processes_alone():
    """The exit handler killed every process group the engines started, also in a child made
    with ``os.fork`` (which inherits the list): a child that exited normally killed its
    parent's compiles, chains and idle workers."""
    import sys

    from bbt_widget.engines import _procs

    proc = _procs.spawn([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        check = "from bbt_widget.engines import _procs\nok = not _procs._live\n"
        assert _in_a_forked_child(check) == 0
        time.sleep(0.2)
        assert proc.poll() is None, "the child's exit killed the parent's process group"
    finally:
        _procs.kill_group(proc)


@pytest.mark.stan
def test_a_forked_child_does_not_take_the_parents_idle_pystan_worker(pystan_models):
    pystan = engines.get("pystan")

    engines.sample("bbt", bt_data(), engine="pystan", seed=4, iter_sampling=200)
    try:
        assert any(pystan._idle.values())
        workers = pystan.idle_workers()
        check = "from bbt_widget import engines\n"
        check += "ok = not any(engines.get('pystan')._idle.values())\n"
        assert _in_a_forked_child(check) == 0
        assert pystan.idle_workers() == workers
        assert all(w.proc.poll() is None for w in workers)  # the parent keeps them, alive
    finally:
        engines.shutdown()


@pytest.mark.stan
def test_after_a_fit_one_idle_worker_starts_at_once_the_other_later(pystan_models, monkeypatch):
    """Issue 10 (bench_widget): every fit ended by starting all its replacement idle workers
    at once, two process start-ups taking both cores from the caller's own work on the
    result (the widget's chart data came ~40 ms later). Now one starts at once (a loop's next
    fit still finds a loaded model) and the rest ``TOP_UP_DELAY`` seconds later."""
    pystan = engines.get("pystan")

    monkeypatch.setattr(pystan, "TOP_UP_DELAY", 2.0)
    engines.shutdown()
    try:
        engines.sample("bbt", bt_data(), engine="pystan", seed=4, iter_sampling=200)
        assert len(pystan.idle_workers()) == 1
        engines.sample("bbt", bt_data(), engine="pystan", seed=5, iter_sampling=200)
        assert len(pystan.idle_workers()) == 1  # the next fit took it; one again at once
        deadline = time.monotonic() + 30
        while len(pystan.idle_workers()) < pystan.IDLE_WORKERS:
            assert time.monotonic() < deadline, "the idle workers were never topped up"
            time.sleep(0.05)
        assert len(pystan.idle_workers()) == pystan.IDLE_WORKERS
        assert all(w.proc.poll() is None for w in pystan.idle_workers())
    finally:
        engines.shutdown()


@pytest.mark.stan
def test_a_preview_and_its_full_fit_end_without_starting_a_worker(pystan_models, monkeypatch):
    """Issue 10 (bench_widget): the widget's preview and its full fit took both idle workers,
    so the full fit's end started a process (a tenth of a second of CPU) while the widget
    built its chart data, and the full result came 5-8% later. A third idle worker is left
    for that moment; the top-up waits ``TOP_UP_DELAY``."""
    from bbt_widget.engines import _pystan

    pystan = engines.get("pystan")

    monkeypatch.setattr(pystan, "TOP_UP_DELAY", 60.0)  # only what starts at once is seen
    engines.shutdown()
    try:
        engines.compile_model("bbt", engine="pystan")  # and its idle workers, as the widget does
        started = []
        spawn = _pystan._Worker.__init__

        def counted(self: object, *args: object) -> None:
            started.append(args)
            spawn(self, *args)

        monkeypatch.setattr(_pystan._Worker, "__init__", counted)
        engines.laplace("bbt", bt_data(), engine="pystan", seed=4, draws=100)
        engines.sample("bbt", bt_data(), engine="pystan", seed=4, iter_sampling=200)
        assert started == [], "a fit's end started a worker process"
        assert len(pystan.idle_workers()) >= 1  # and the next fit still finds one loaded
    finally:
        engines.shutdown()


@pytest.mark.stan
def test_shutdown_cancels_a_pending_top_up_of_idle_workers(pystan_models, monkeypatch):
    """A top-up pending when the engine is shut down (e.g. the last widget closed) starts no
    process afterwards."""
    pystan = engines.get("pystan")

    monkeypatch.setattr(pystan, "TOP_UP_DELAY", 0.3)
    engines.sample("bbt", bt_data(), engine="pystan", seed=4, iter_sampling=200)
    engines.shutdown()
    time.sleep(1.0)
    assert not pystan.idle_workers()
    # and a timer that fires after a shutdown it did not see (the cancel came too late)
    module, _ = pystan.compile("bbt")
    pystan._delayed_top_up(module, pystan._shutdowns - 1)
    assert not pystan.idle_workers()
