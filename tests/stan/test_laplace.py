"""A Stan engine's Laplace approximation (``fit_laplace``; the widget's previews use the numpy
engine's, ``tests/unit/test_numpy_laplace.py``): engine, core and accuracy, with real Stan.

``engines.laplace`` runs in a PyStan child process (through PyStan's ``log_prob``); the
in-process tests call ``_laplace`` on the compiled extension module from pytest's main thread
(Stan's autodiff needs a main thread).
"""

from __future__ import annotations

import functools
import json
import math
import tempfile
import threading
import warnings
from importlib.util import module_from_spec, spec_from_file_location
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom, multinomial

import bbt_widget as bbt
from bbt_widget import engines
from bbt_widget.core.audit import DataWarning
from bbt_widget.engines import EngineError, FitCancelled, _laplace
from bbt_widget.fitting import fit_laplace

pytestmark = pytest.mark.stan


@pytest.fixture(scope="module")
def pystan_models() -> None:
    if "pystan" not in engines.available_engines():
        pytest.skip("PyStan is not available here")
    for model in ("bbt", "davidson"):
        engines.compile_model(model, "pystan")


def _stan_data(results: pd.DataFrame, ties: str) -> tuple[str, dict[str, Any]]:
    """The Stan data ``fit`` builds for ``results`` (dataset column ``db``)."""
    from bbt_widget.fitting import prepare_fit

    job = prepare_fit(results, dataset="db", ties=ties, size=(1, 1))
    return job.model, job.stan_data


@functools.cache
def _loaded(model: str) -> Any:
    """The compiled httpstan extension module of ``model``, loaded in this process."""
    folder, _ = engines.get("pystan").compile(model)
    path = next(p for p in folder.iterdir() if p.suffix == ".so")
    spec = spec_from_file_location("stan_services", str(path))
    module = module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pair_stats(beta: np.ndarray) -> dict[str, np.ndarray]:
    """Per pair (a < b): mean P(a > b), the 89% HDI bounds, P(P > 0.5) from draws of beta
    (draws, n_alg) — what ``summary()`` reports."""
    from bbt_widget.core.posterior import hdi_sorted

    i, j = np.triu_indices(beta.shape[1], 1)
    p = 1.0 / (1.0 + np.exp(-(beta[:, i] - beta[:, j])))
    low, high = hdi_sorted(np.sort(p, axis=0), 0.89)
    return {"mean": p.mean(0), "low": low, "high": high, "above": (p > 0.5).mean(0)}


@pytest.mark.parametrize(("ties", "results"), [("spread", "base"), ("davidson", "pmlb16")])
def test_laplace_is_close_to_a_full_fit_on_real_data(
    pystan_models: None, ties: str, results: str, request: pytest.FixtureRequest
) -> None:
    """P(a > b) means within 0.01 and HDI bounds within 0.03 of a full NUTS fit (4 x 1000
    draws): as close as the short NUTS run the previews used before (benchmarks/
    bench_laplace.py measures both)."""
    data = request.getfixturevalue(results)
    model, stan_data = _stan_data(data, ties)
    approx = engines.laplace(model, stan_data, engine="pystan", draws=2000, seed=5)
    full = engines.sample(model, stan_data, engine="pystan", seed=5)
    n_alg = stan_data["n_alg"]
    ours = _pair_stats(approx.params["beta"].reshape(-1, n_alg))
    reference = _pair_stats(full.params["beta"].reshape(-1, n_alg))
    assert np.max(np.abs(ours["mean"] - reference["mean"])) < 0.01
    assert np.max(np.abs(ours["low"] - reference["low"])) < 0.03
    assert np.max(np.abs(ours["high"] - reference["high"])) < 0.03
    assert approx.info["method"] == "laplace" and approx.sampler == {}


def test_draws_have_the_fits_names_shapes_and_types(pystan_models: None, base: pd.DataFrame):
    model, data = _stan_data(base, "davidson")
    approx = engines.laplace(model, data, engine="pystan", draws=50, seed=1)
    full = engines.sample(model, data, engine="pystan", chains=1, iter_sampling=50, seed=1)
    assert set(approx.params) == set(full.params)
    for name, values in approx.params.items():
        assert values.shape == (1, 50, *full.params[name].shape[2:]), name
        assert values.dtype == full.params[name].dtype, name
    assert np.all(approx.params["sigma"] > 0)
    # beta is the rotation of beta_rot, as the program's transformed parameters say
    beta = approx.params["beta"][0]
    assert np.allclose(beta.sum(axis=1), approx.params["beta_rot"][0][:, 0] * math.sqrt(5))


def test_a_seed_makes_it_reproducible(pystan_models: None, base: pd.DataFrame) -> None:
    model, data = _stan_data(base, "spread")
    first = engines.laplace(model, data, engine="pystan", draws=20, seed=3)
    again = engines.laplace(model, data, engine="pystan", draws=20, seed=3)
    other = engines.laplace(model, data, engine="pystan", draws=20, seed=4)
    for name in first.params:
        np.testing.assert_array_equal(first.params[name], again.params[name])
    assert not np.array_equal(first.params["beta"], other.params["beta"])


@pytest.mark.parametrize("ties", ["spread", "davidson"])
def test_replicates_follow_the_programs_generated_quantities(
    pystan_models: None, base: pd.DataFrame, ties: str
) -> None:
    """``_laplace.replicate`` repeats the Stan programs' generated quantities in numpy: on
    the same draws of a real fit, the log-likelihood is Stan's exactly, and the replicated
    counts have Stan's distribution (means within Monte Carlo error of n * p)."""
    model, data = _stan_data(base, ties)
    fit = engines.sample(model, data, engine="pystan", chains=2, iter_sampling=500, seed=9)
    beta = fit.params["beta"].reshape(-1, data["n_alg"])
    nu = fit.params["nu"].ravel() if model == "davidson" else None
    ours = _laplace.replicate(model, data, beta, nu, np.random.default_rng(0))
    np.testing.assert_allclose(ours["log_lik"], fit.params["log_lik"].reshape(beta.shape[0], -1))
    i1, i2 = np.array(data["i1"]) - 1, np.array(data["i2"]) - 1
    for name in ("win1_rep", "ties_rep") if model == "davidson" else ("win1_rep",):
        stan_rep = fit.params[name].reshape(beta.shape[0], -1)
        assert ours[name].shape == stan_rep.shape and ours[name].dtype.kind == "i"
        if model == "davidson":
            eta = np.stack(
                [beta[:, i1], beta[:, i2], nu[:, None] + 0.5 * (beta[:, i1] + beta[:, i2])], -1
            )
            prob = np.exp(eta - np.logaddexp.reduce(eta, axis=-1, keepdims=True))
            p = prob[..., 0] if name == "win1_rep" else prob[..., 2]
            n = np.array(data["win1"]) + np.array(data["win2"]) + np.array(data["ties"])
        else:
            p = 1.0 / (1.0 + np.exp(-(beta[:, i1] - beta[:, i2])))
            n = np.array(data["win1"]) + np.array(data["win2"])
        expected = (n * p).mean(0)
        sd = np.sqrt((n * p * (1 - p)).mean(0) / beta.shape[0])
        assert np.all(np.abs(ours[name].mean(0) - expected) < 5 * sd + 1e-9), name
        assert np.all(np.abs(stan_rep.mean(0) - expected) < 5 * sd + 1e-9), name
    # and the log-likelihood is the pmf the programs use (a check on the formula itself)
    k = 0
    if model == "davidson":
        counts = [data["win1"][k], data["win2"][k], data["ties"][k]]
        eta = np.array(
            [beta[0, i1[k]], beta[0, i2[k]], nu[0] + 0.5 * (beta[0, i1[k]] + beta[0, i2[k]])]
        )
        p = np.exp(eta - np.logaddexp.reduce(eta))
        assert ours["log_lik"][0, k] == pytest.approx(multinomial.logpmf(counts, sum(counts), p))
    else:
        n = data["win1"][k] + data["win2"][k]
        p = 1.0 / (1.0 + math.exp(-(beta[0, i1[k]] - beta[0, i2[k]])))
        assert ours["log_lik"][0, k] == pytest.approx(binom.logpmf(data["win1"][k], n, p))


def test_the_data_as_arrays_give_the_same_draws(pystan_models: None, pmlb16: pd.DataFrame) -> None:
    """``approximate`` hands httpstan the data as numpy arrays (converted faster than lists
    on each of its hundreds of calls): the draws are those of the lists, bit for bit."""
    model, data = _stan_data(pmlb16, "spread")
    as_lists = json.loads(json.dumps(data))  # what the worker reads from its request
    module = _loaded(model)
    arrays = _laplace.stan_arrays(as_lists)
    assert all(
        isinstance(arrays[k], np.ndarray) for k, v in as_lists.items() if isinstance(v, list)
    )
    plain = _laplace.approximate(module, model, as_lists, 30, 2)
    with_arrays = _laplace.approximate(module, model, arrays, 30, 2)
    assert plain[0] == with_arrays[0]
    np.testing.assert_array_equal(plain[1], with_arrays[1])


#: Prior settings where the first Newton search (from the origin) fell into the funnel of
#: the hierarchical prior: (results fixture, ties, hyper-prior, scale).
FUNNEL_SETTINGS = [
    ("base", "spread", "lognormal", 1.7),
    ("base", "spread", "cauchy", 0.1),
    ("base", "davidson", "lognormal", 2.5),
    ("pmlb16", "spread", "lognormal", 1.8),
    ("pmlb16", "davidson", "cauchy", 0.5),
]


def assert_mode_outside_the_funnel(
    data: pd.DataFrame, ties: str, hyperprior: str, scale: float
) -> None:
    """The Laplace approximation of ``data`` under this prior has P(a > b) as at the default
    prior (the data dominate it) and sigma far from 0. The search itself
    (``_laplace.approximate``, which the engine's child runs) on the compiled model in this
    process: a child per call would only add its start-up and a round trip per density call
    (the tests above check the child's path)."""
    from bbt_widget.fitting import prepare_fit

    def means(**prior: Any) -> tuple[np.ndarray, float]:
        job = prepare_fit(data, dataset="db", ties=ties, size=(1, 1), **prior)
        module = _loaded(job.model)
        names, values, _ = _laplace.approximate(module, job.model, job.stan_data, 400, 5)
        beta = values[:, [j for j, name in enumerate(names) if name.startswith("beta.")]]
        return _pair_stats(beta)["mean"], float(values[:, names.index("sigma")].mean())

    reference, _ = means()
    p, sigma = means(hyperprior=hyperprior, prior_scale=scale)
    assert sigma > 0.3
    np.testing.assert_allclose(p, reference, atol=0.02)


@pytest.mark.parametrize(("results", "ties", "hyperprior", "scale"), FUNNEL_SETTINGS)
def test_the_mode_search_does_not_fall_into_the_funnel(
    pystan_models: None,
    results: str,
    ties: str,
    hyperprior: str,
    scale: float,
    request: pytest.FixtureRequest,
) -> None:
    """Issue 10 (a widget's prior-scale drag): from the origin the Newton search stepped into
    the funnel of the hierarchical prior, towards sigma near 0 with every ability near 0, and
    stalled or ran out of iterations: no preview for 31 of 144 prior settings on the two real
    data sets (these among them). Now the abilities are first fitted at sigma = 1, and the
    search finds the posterior's mode."""
    data = request.getfixturevalue(results)
    assert_mode_outside_the_funnel(data, ties, hyperprior, scale)


def test_the_mode_search_reports_a_posterior_without_a_mode() -> None:
    """A log density that grows without bound (no mode): a clear LaplaceError, not a hang or
    a covariance from nonsense."""

    class Unbounded:
        def log_prob(self, data: dict, x: list[float], jacobian: bool) -> float:
            return float(sum(x))

        def log_prob_grad(self, data: dict, x: list[float], jacobian: bool) -> list[float]:
            return [1.0] * len(x)

    with pytest.raises(_laplace.LaplaceError, match=r"did not converge|stalled"):
        _laplace.find_mode(Unbounded(), {}, 3)


def test_cancel_before_it_starts_and_bad_arguments(pystan_models: None, base: pd.DataFrame):
    model, data = _stan_data(base, "spread")
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(FitCancelled):
        engines.laplace(model, data, engine="pystan", cancel=cancel)
    with pytest.raises(ValueError, match="draws must be an integer >= 1"):
        engines.laplace(model, data, engine="pystan", draws=0)
    with pytest.raises(ValueError, match="for 'bbt' and 'davidson'"):
        engines.laplace("bbt_groups", data, engine="pystan")


def test_a_failure_in_the_worker_is_an_engine_error(pystan_models: None, base: pd.DataFrame):
    """What the worker reports (here: data Stan rejects, sent past the checks) comes back as
    an EngineError naming the Laplace approximation, and leaves no temporary folder."""
    model, data = _stan_data(base, "spread")
    bad = {**data, "prior_scale": -1.0}  # Stan's <lower=0> rejects it in the worker
    tmp = Path(tempfile.gettempdir())
    before = set(tmp.glob("bbt-widget-fit-*"))
    with pytest.raises(EngineError, match=r"Laplace approximation failed: .*prior_scale"):
        engines.get("pystan").laplace(model, bad, draws=10, seed=1)
    assert set(tmp.glob("bbt-widget-fit-*")) <= before


def test_fit_laplace_checks_and_warns_like_fit(pystan_models: None, two_groups: pd.DataFrame):
    """The core's ``fit_laplace``: the same checks and data warnings as ``fit``, sampler
    settings ignored, the method recorded, no sampler diagnostics to fail."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = fit_laplace(two_groups, dataset="db", draws=100, chains=9, iter_sampling=5)
    assert any(issubclass(w.category, bbt.DisconnectedWarning) for w in seen)
    assert {w.filename for w in seen} == {__file__}  # at the caller's line, as fit's
    with warnings.catch_warnings(record=True) as seen_fit:
        warnings.simplefilter("always")
        bbt.fit(two_groups, dataset="db", chains=1, iter_warmup=100, iter_sampling=100)
    assert any(issubclass(w.category, bbt.DisconnectedWarning) for w in seen_fit)
    ours = (bbt.DisconnectedWarning, DataWarning, bbt.DiagnosticsWarning)
    assert {w.filename for w in seen_fit if issubclass(w.category, ours)} == {__file__}
    assert result.settings["method"] == "laplace" and result.settings["draws"] == 100
    assert "chains" not in result.settings and "iter_sampling" not in result.settings
    assert result.draws.params["beta"].shape == (1, 100, 4)
    diag = result.diagnostics()
    assert diag.ok and math.isnan(diag.max_rhat) and diag.min_ess_bulk == 100
    assert (result.summary()["weak"] == "not compared").any()
    with pytest.raises(ValueError, match="draws"):
        fit_laplace(two_groups, dataset="db", draws=0)
    with pytest.raises(ValueError, match="tie"):
        fit_laplace(two_groups, dataset="db", ties="sometimes")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        fit_laplace(two_groups, dataset="db", draws=10)
    assert any(issubclass(w.category, DataWarning) for w in seen)  # missing results
