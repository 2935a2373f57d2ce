"""The numpy engine (Pólya-Gamma Gibbs, and Metropolis-Hastings for Davidson's model)
against PyStan's NUTS, and what it promises as an engine: the same draws' names and shapes,
seeds, progress and cancel. Its exactness on simulated data is
``tests/unit/test_gibbs_exact.py`` and ``tests/unit/test_davidson_exact.py``.

Agreement: on the paper's Table 3b win table (its Table 6) and on the shipped 16 x 132 results,
every weak and strong decision is the same, and every posterior mean of P(a > b) is within 4
Monte Carlo standard errors (of the difference of the two engines' means); for Davidson's model
on the paper's base results, the same, and the means of sigma and nu too.
"""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest
from scipy import special
from test_fit import TABLE_3B  # tests/stan is on sys.path under pytest

import bbt_widget as bbt
from bbt_widget import engines
from bbt_widget.core import convergence, settling
from bbt_widget.engines.base import FitCancelled

pytestmark = pytest.mark.stan


def _pystan() -> None:
    if "pystan" not in engines.available_engines():
        pytest.skip("PyStan is not installed")


def _agree(numpy_fit: bbt.BBTResult, stan_fit: bbt.BBTResult) -> None:
    """Every pair: the same weak and strong decisions, and means of P(a > b) within 4 MCSE
    (``BBTResult.disagreements``, which the widget's Stan check uses too)."""
    assert numpy_fit.disagreements(stan_fit) == []


def test_agrees_with_stan_on_the_papers_table_6():
    _pystan()
    ours = bbt.fit(TABLE_3B, ties="spread", engine="numpy", seed=1)
    theirs = bbt.fit(TABLE_3B, ties="spread", engine="pystan", seed=1)
    assert ours.engine == "numpy" and theirs.engine == "pystan"
    _agree(ours, theirs)


def test_agrees_with_stan_on_the_shipped_results(pmlb16: pd.DataFrame):
    _pystan()
    ours = bbt.fit(pmlb16, dataset="db", engine="numpy", seed=1)
    theirs = bbt.fit(pmlb16, dataset="db", engine="pystan", seed=1)
    _agree(ours, theirs)
    assert ours.diagnostics().ok


def test_auto_is_the_numpy_engine_and_its_draws_are_stans_shape(base: pd.DataFrame):
    res = bbt.fit(base, dataset="db", seed=3, draws="fixed")  # one round: 4 chains
    assert res.engine == "numpy" and res.settings["engine"] == "numpy"
    assert res.settings["iter_warmup"] == 100 and res.settings["iter_sampling"] == 1000
    p = res.draws.params
    n_pairs = int(res.draws.params["log_lik"].shape[-1])
    assert p["beta"].shape == (4, 1000, 5) and p["sigma"].shape == (4, 1000)
    assert p["win1_rep"].shape == (4, 1000, n_pairs) and p["win1_rep"].dtype == np.int64
    assert res.draws.sampler == {}  # no NUTS: judged by R-hat and ESS
    diag = res.diagnostics()
    assert diag.ok and not diag["nuts"]
    assert np.isfinite(res.loo().elpd_loo) and np.isfinite(res.waic().elpd_waic)
    assert "Pólya-Gamma" in res.draws.info["sampler"]
    again = bbt.fit(base, dataset="db", seed=3, draws="fixed")
    np.testing.assert_array_equal(again.draws.params["beta"], p["beta"])


def test_log_lik_is_the_binomial_log_likelihood(base: pd.DataFrame):
    from scipy import stats

    res = bbt.fit(base, dataset="db", seed=2)
    table = res.win_table[res._fitted]
    idx = {a: k for k, a in enumerate(res.algorithms)}
    beta = res.draws.params["beta"][0, 0]
    eta = beta[[idx[a] for a in table["alg1"]]] - beta[[idx[a] for a in table["alg2"]]]
    n = (table["win1"] + table["win2"]).to_numpy()
    expected = stats.binom.logpmf(table["win1"].to_numpy(), n, special.expit(eta))
    np.testing.assert_allclose(res.draws.params["log_lik"][0, 0], expected, rtol=1e-9)


def test_the_group_model_runs_on_the_numpy_engine(base: pd.DataFrame):
    sets = base["db"].unique()
    family = {d: "odd" if k % 2 else "even" for k, d in enumerate(sets)}
    res = bbt.fit(base, dataset="db", group=family, seed=1)
    assert res.engine == "numpy"
    assert res.draws.params["beta_group"].shape == (4, 1000, 2 * 5)
    assert res.draws.params["tau"].shape == (4, 1000)
    assert res.diagnostics().ok


def test_auto_fits_davidson_on_the_numpy_engine(base: pd.DataFrame):
    """No compiler needed: the outputs of ``stan/davidson.stan``, by name and shape, and
    everything that reads them (diagnostics, PPC of the ties, LOO and WAIC)."""
    assert engines.resolve_engine("auto", "davidson") == "numpy"
    res = bbt.fit(base, dataset="db", ties="davidson", seed=1, draws="fixed")
    assert res.engine == "numpy"
    p = res.draws.params
    n_pairs = int(p["log_lik"].shape[-1])
    assert p["beta"].shape == (4, 1000, 5) and p["sigma"].shape == (4, 1000)
    assert p["nu"].shape == (4, 1000)
    for name in ("win1_rep", "ties_rep"):
        assert p[name].shape == (4, 1000, n_pairs) and p[name].dtype == np.int64
    assert res.diagnostics().ok
    assert "proportion_ties" in res.ppc_table().columns
    assert "ties" in set(res.ppc_histogram()["quantity"])
    assert np.isfinite(res.loo().elpd_loo) and np.isfinite(res.waic().elpd_waic)
    assert "Davidson" in res.draws.info["sampler"]
    again = bbt.fit(base, dataset="db", ties="davidson", seed=1, draws="fixed")
    np.testing.assert_array_equal(again.draws.params["nu"], p["nu"])


def test_the_methods_text_of_a_davidson_fit_names_its_sampler(base: pd.DataFrame):
    """No Pólya-Gamma draws in Davidson's model: the methods paragraph and the references
    name the numpy engine's Metropolis-Hastings sampler (Tierney), not Polson et al."""
    from bbt_widget.outputs.citations import references
    from bbt_widget.outputs.methods_text import methods_text

    res = bbt.fit(base, dataset="db", ties="davidson", seed=2, iter_sampling=300)
    text = methods_text(res)
    assert "Metropolis-Hastings" in text and "Pólya-Gamma" not in text
    keys = [r.key for r in references(res)]
    assert "tierney1994" in keys and "davidson1970" in keys and "polson2013" not in keys


def test_davidson_agrees_with_stan_on_the_papers_base_results(base: pd.DataFrame):
    """A long PyStan fit of ``stan/davidson.stan`` (16,000 draws) against the numpy engine's
    default fit: the same decisions, P(a > b), sigma and nu within 4 Monte Carlo standard
    errors of their difference."""
    _pystan()
    ours = bbt.fit(base, dataset="db", ties="davidson", engine="numpy", seed=1)
    theirs = bbt.fit(
        base, dataset="db", ties="davidson", engine="pystan", seed=1, iter_sampling=4000
    )
    assert ours.engine == "numpy" and theirs.engine == "pystan"
    _agree(ours, theirs)
    for name in ("sigma", "nu"):
        a, b = ours.draws.params[name], theirs.draws.params[name]
        mcse = np.hypot(*(x.std() / np.sqrt(convergence.ess_bulk(x)) for x in (a, b)))
        assert abs(a.mean() - b.mean()) < 4 * mcse, (name, a.mean(), b.mean(), mcse)
        assert a.std() == pytest.approx(b.std(), rel=0.05), name


def test_disagreements_name_the_pairs_that_differ(pmlb16: pd.DataFrame):
    """The check can fail: a fit of other settings (more games counted as ties) differs."""
    ours = bbt.fit(pmlb16, dataset="db", seed=1)
    other = bbt.fit(pmlb16, dataset="db", seed=1, tie_threshold=0.01)
    found = ours.disagreements(other)
    assert found and all(" > " in line for line in found)
    assert any("Monte Carlo standard errors apart" in line for line in found)


def test_progress_and_cancel(pmlb16: pd.DataFrame):
    seen: list[float] = []
    told: list[tuple[str, float]] = []
    bbt.fit(pmlb16, dataset="db", seed=1, progress=lambda stage, f: told.append((stage, f)))
    # the first round, then (claims near their thresholds) a later round as its own stage
    stages = list(dict.fromkeys(stage for stage, _ in told))
    assert stages in (["sampling"], ["sampling", settling.STAGE]), stages
    for stage in stages:
        seen = [f for s, f in told if s == stage]
        assert seen[-1] == 1.0 and len(seen) > 10 and seen == sorted(seen)
    cancel = threading.Event()

    def stop_halfway(stage: str, fraction: float) -> None:
        if fraction > 0.3:
            cancel.set()

    with pytest.raises(FitCancelled):
        bbt.fit(pmlb16, dataset="db", seed=1, progress=stop_halfway, cancel=cancel)
