"""The cmdstanpy engine's Laplace approximation (CmdStan's optimize then laplace).

Real CmdStan where installed (``$CMDSTAN``), compared with the PyStan engine's approximation
and with a full NUTS fit on the paper's base results; everywhere else the same code path runs
against the fake CmdStan of ``test_engines.py``, whose executable answers both commands.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
import time
import warnings

import numpy as np
import psutil
import pytest
import test_engines  # tests/stan is on sys.path under pytest: borrow its fixtures
from test_engines import TABLE_3A, bt_data, our_processes, p_beats
from test_laplace import FUNNEL_SETTINGS, assert_mode_outside_the_funnel

import bbt_widget as bbt
from bbt_widget import engines
from bbt_widget.core.posterior import hdi_sorted, pair_probabilities
from bbt_widget.engines import EngineError, FitCancelled
from bbt_widget.fitting import prepare_fit

pystan_models = test_engines.pystan_models
fake_cmdstan = test_engines.fake_cmdstan

PARAMS = {
    "bbt": {"sigma", "beta_rot", "beta", "win1_rep", "log_lik"},
    "davidson": {"sigma", "beta_rot", "beta", "nu", "win1_rep", "ties_rep", "log_lik"},
}


@pytest.fixture
def preexisting() -> set[int]:
    """Processes that earlier tests of the session left running (multiprocessing's resource
    tracker, a Dask helper): none of this test's, which must all be gone at its end."""
    engines.shutdown()
    return set(our_processes())


def _cmdstan_or_skip() -> None:
    if "cmdstanpy" not in engines.available_engines():
        pytest.skip("no CmdStan installation found")


def base_stan_data(model: str) -> dict:
    """The Stan data of the paper's base results (5 algorithms, 20 data sets), as the core's
    fits build it."""
    ties = "davidson" if model == "davidson" else "spread"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the data's own warnings are not under test here
        job = prepare_fit(bbt.datasets.load_base(), dataset="db", ties=ties, size=(1, 1))
    assert job.model == model
    return job.stan_data


def pair_summary(draws: engines.Draws) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and 89% HDI bounds of P(a > b) for every pair of algorithms, as the widget shows."""
    beta = draws.params["beta"]
    beta = beta.reshape(-1, beta.shape[-1])
    n_alg = beta.shape[1]
    p = pair_probabilities(beta, [(a, b) for a in range(n_alg) for b in range(a + 1, n_alg)])
    low, high = hdi_sorted(np.sort(p, axis=0), 0.89)
    return p.mean(axis=0), low, high


def check_laplace_draws(d: engines.Draws, model: str, data: dict, draws: int, seed: int) -> None:
    """The contract both engines' ``laplace`` keep: one "chain" of ``draws`` draws of the
    model's outputs, no sampler outputs, the method and seed recorded."""
    n_alg, n_pairs = data["n_alg"], len(data["i1"])
    assert d.engine == "cmdstanpy"
    assert set(d.params) == PARAMS[model]
    assert d.sampler == {}  # log_p__ and log_q__ are not kept
    assert d.params["sigma"].shape == (1, draws)
    assert d.params["beta"].shape == (1, draws, n_alg)
    assert d.params["log_lik"].shape == (1, draws, n_pairs)
    assert d.params["win1_rep"].dtype == np.int64
    assert all(np.isfinite(v).all() for v in d.params.values())
    assert d.info["method"] == "laplace"
    assert (d.info["draws"], d.info["seed"], d.info["model"]) == (draws, seed, model)
    assert set(d.timings) >= {"compile", "sample", "total"}


# ----------------------------------------------------------------------------- real CmdStan


@pytest.mark.stan
@pytest.mark.cmdstan
@pytest.mark.parametrize("model", ["bbt", "davidson"])
def test_cmdstan_laplace_agrees_with_pystans_and_with_nuts(pystan_models, model):
    _cmdstan_or_skip()
    data = base_stan_data(model)
    d = engines.laplace(model, data, engine="cmdstanpy", draws=400, seed=1)
    check_laplace_draws(d, model, data, 400, 1)
    again = engines.laplace(model, data, engine="cmdstanpy", draws=400, seed=1)
    np.testing.assert_array_equal(again.params["beta"], d.params["beta"])  # the seed decides
    if model == "davidson":
        assert d.params["ties_rep"].shape == (1, 400, len(data["i1"]))
    # the comparisons use more draws: with 400, Monte Carlo noise alone moves a mean P(a > b)
    # by up to ~0.01 and an HDI bound by ~0.03, which would hide what is compared
    cmdstan = pair_summary(engines.laplace(model, data, engine="cmdstanpy", draws=4000, seed=2))
    pystan = pair_summary(engines.laplace(model, data, engine="pystan", draws=4000, seed=2))
    nuts = pair_summary(engines.sample(model, data, engine="cmdstanpy", seed=2))
    for other in (pystan, nuts):
        np.testing.assert_allclose(cmdstan[0], other[0], atol=0.01)  # means
        np.testing.assert_allclose(cmdstan[1], other[1], atol=0.03)  # HDI lower bounds
        np.testing.assert_allclose(cmdstan[2], other[2], atol=0.03)  # HDI upper bounds


@pytest.mark.stan
@pytest.mark.cmdstan
def test_cmdstan_laplace_cancelled_leaves_no_process_or_folder(tmp_path, monkeypatch):
    """Cancelled between its two commands (the mode found, the draws not read yet)."""
    cmdstan = engines.get("cmdstanpy")

    _cmdstan_or_skip()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the fit's scratch folder
    exe = str(cmdstan.compile("bbt")[0])
    engines.shutdown()  # the idle workers: every process seen after the fit is the fit's
    before = set(our_processes())
    cancel = threading.Event()
    seen: list[float] = []

    def progress(stage: str, fraction: float) -> None:
        seen.append(fraction)
        if fraction == 0.5:  # optimize has ended well; laplace is next
            cancel.set()

    with pytest.raises(FitCancelled):
        engines.laplace(
            "bbt", base_stan_data("bbt"), engine="cmdstanpy", progress=progress, cancel=cancel
        )
    assert seen == [0.0, 0.5]
    time.sleep(0.2)
    engines.shutdown()  # the worker started for the next fit
    assert set(our_processes()) <= before
    assert [p.pid for p in psutil.process_iter(["exe"]) if p.info["exe"] == exe] == []
    assert list(tmp_path.iterdir()) == []


# ----------------------------------------------------------------------------- fake CmdStan


@pytest.mark.stan
def test_cmdstan_laplace_against_a_fake_cmdstan(preexisting, fake_cmdstan):
    """The commands (optimize, then laplace reading its mode, both with jacobian=1: the fake
    fails otherwise) and the reading of the laplace CSV file, without CmdStan."""
    engines.compile_model("bbt", "cmdstanpy")
    seen: list[float] = []
    d = engines.laplace(
        "bbt",
        bt_data(),
        engine="cmdstanpy",
        draws=300,
        seed=1,
        progress=lambda stage, f: seen.append(f),
    )
    check_laplace_draws(d, "bbt", bt_data(), 300, 1)
    assert seen == [0.0, 0.5, 1.0]
    assert "CmdStan 2.36" in d.info["engine_version"]
    assert p_beats(d, "xgb", "dt") == pytest.approx(0.83, abs=0.03)  # the paper's Table 3b
    tied = bt_data(TABLE_3A)
    d = engines.laplace("davidson", tied, engine="cmdstanpy", draws=50, seed=2)
    check_laplace_draws(d, "davidson", tied, 50, 2)
    engines.shutdown()
    assert set(our_processes()) <= preexisting
    assert list(fake_cmdstan.iterdir()) == []


@pytest.mark.stan
def test_cmdstan_laplace_names_the_step_that_failed(preexisting, fake_cmdstan, monkeypatch):
    engines.compile_model("bbt", "cmdstanpy")
    monkeypatch.setenv("FAKE_CMDSTAN_OPTIMIZE", "fail")
    with pytest.raises(EngineError) as info:
        engines.laplace("bbt", bt_data(), engine="cmdstanpy", draws=10, seed=1)
    message = str(info.value)
    assert message.startswith(
        "CmdStan Laplace approximation of the 'bbt' model failed: the search for the mode "
        "(CmdStan's optimize) ended with exit code 70."
    )
    assert "Line search failed" in message  # CmdStan's own words
    engines.shutdown()
    assert set(our_processes()) <= preexisting
    assert list(fake_cmdstan.iterdir()) == []


@pytest.mark.stan
def test_cmdstan_laplace_without_curvature_at_the_mode_is_an_error(
    preexisting, fake_cmdstan, monkeypatch
):
    engines.compile_model("bbt", "cmdstanpy")
    monkeypatch.setenv("FAKE_CMDSTAN_LAPLACE", "flat")
    with pytest.raises(EngineError, match=r"sigma has non-finite draws.*flat direction"):
        engines.laplace("bbt", bt_data(), engine="cmdstanpy", draws=10, seed=1)
    engines.shutdown()
    assert set(our_processes()) <= preexisting
    assert list(fake_cmdstan.iterdir()) == []


@pytest.mark.stan
def test_cmdstan_laplace_cancelled_mid_search_stops_at_once(preexisting, fake_cmdstan, monkeypatch):
    engines.compile_model("bbt", "cmdstanpy")
    engines.shutdown()
    monkeypatch.setenv("FAKE_CMDSTAN_OPTIMIZE", "slow")  # a minute-long optimize
    cancel = threading.Event()
    timer = threading.Timer(1.5, cancel.set)
    timer.start()
    start = time.perf_counter()
    with pytest.raises(FitCancelled):
        engines.laplace("bbt", bt_data(), engine="cmdstanpy", cancel=cancel)
    assert time.perf_counter() - start < 10
    time.sleep(0.2)
    engines.shutdown()
    assert set(our_processes()) <= preexisting
    assert list(fake_cmdstan.iterdir()) == []


@pytest.mark.stan
def test_cmdstan_laplace_rebuilds_an_executable_that_does_not_run(fake_cmdstan):
    cmdstan = engines.get("cmdstanpy")

    exe, _ = cmdstan.compile("bbt")
    exe.write_bytes(b"")  # truncated: it can no longer be started ("Exec format error")
    with pytest.warns(RuntimeWarning, match="does not run.*rebuilding"):
        d = engines.laplace("bbt", bt_data(), engine="cmdstanpy", draws=20, seed=3)
    assert d.params["beta"].shape == (1, 20, 5)
    assert d.timings["compile"] > 0  # it was rebuilt
    engines.shutdown()
    assert list(fake_cmdstan.iterdir()) == []


# ----------------------------------------------------------------------------- no Stan


def test_a_cmdstan_without_laplace_says_which_version_is_needed(tmp_path, monkeypatch):
    """CmdStan before 2.32 has no laplace method: said before anything is compiled."""
    home = tmp_path / "cmdstan-2.31.0"
    home.mkdir()
    (home / "makefile").write_text("CMDSTAN_VERSION := 2.31.0\n")
    test_engines.fake_stanc(home)
    monkeypatch.setenv("CMDSTAN", str(home))
    monkeypatch.setenv("BBT_WIDGET_CACHE", str(tmp_path / "cache"))
    with pytest.raises(EngineError, match=r"CmdStan 2\.31\.0 .*needs CmdStan 2\.32 or newer"):
        engines.laplace("bbt", bt_data(), engine="cmdstanpy", draws=10)
    assert not (tmp_path / "cache").exists()  # nothing was built


def test_cmdstan_worker_runs_commands_one_after_the_other_and_stops_at_a_failure(tmp_path):
    """With parallel=1 the worker runs its commands in their order, each after the one before
    ended well (laplace reads the mode optimize wrote); after a failure it starts no more."""
    from bbt_widget.engines import _cmdstan

    log = tmp_path / "order.txt"

    def command(k: int, code: int = 0) -> list[str]:
        script = f"import time\ntime.sleep(0.02)\nopen({str(log)!r}, 'a').write('{k}\\n')\n"
        return [sys.executable, "-c", script + f"raise SystemExit({code})"]

    request = {
        "commands": [command(1), command(2), command(3), command(4, code=2), command(5)],
        "parallel": 1,
        "out_dir": str(tmp_path),
    }
    worker = subprocess.Popen(
        [sys.executable, str(_cmdstan._WORKER_SCRIPT)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        # its stdin stays open until it has ended: closing it would cancel the fit
        worker.stdin.write(json.dumps(request) + "\n")
        worker.stdin.flush()
        output = worker.stdout.read()
        assert worker.wait(timeout=30) == 1
    finally:
        worker.kill()
        worker.wait()
        worker.stdin.close()
        worker.stdout.close()
    assert log.read_text().split() == ["1", "2", "3", "4"]
    assert output.split() == "finished 1 finished 2 finished 3 failed 4 2 0".split()
    assert not (tmp_path / "chain-5.log").exists()


@pytest.mark.cmdstan
@pytest.mark.parametrize(("results", "ties", "hyperprior", "scale"), FUNNEL_SETTINGS)
def test_cmdstans_mode_search_does_not_fall_into_the_funnel(
    results: str, ties: str, hyperprior: str, scale: float, request: pytest.FixtureRequest
) -> None:
    """The settings where the PyStan engine's first Newton search fell into the funnel of the
    hierarchical prior: CmdStan's optimize (L-BFGS, also from the origin) finds the posterior's
    mode there too. Checked over the whole grid with CmdStan 2.35 (ties spread / davidson x
    three hyper-priors x 12 scales from 0.1 to 10, both real data sets): 0 of 144 in the
    funnel, sigma's median within 0.05 of the PyStan engine's in every setting."""
    _cmdstan_or_skip()
    data = request.getfixturevalue(results)
    assert_mode_outside_the_funnel(data, ties, hyperprior, scale, "cmdstanpy")
