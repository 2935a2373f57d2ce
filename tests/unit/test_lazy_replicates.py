"""The numpy engine draws the replicated wins and the log-likelihood (the PPC's, WAIC's and
LOO's inputs, the largest arrays of a fit) when one of them is first asked for, not during
the fit: from the generator as the sampler left it, so the numbers are those drawn at once
right after the sampling."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

import bbt_widget as bbt
from bbt_widget.core import diagnostics
from bbt_widget.core.draws import Params, joined
from bbt_widget.engines import _gibbs
from bbt_widget.engines._design import Design
from bbt_widget.fitting import prepare_fit

DERIVED = ("win1_rep", "log_lik")


def _derived_yet(params: dict) -> list[str]:
    """The derived quantities already held (``dict``'s own look, which derives nothing)."""
    return [name for name in DERIVED if dict.__contains__(params, name)]


@pytest.mark.slow
@pytest.mark.parametrize("case", ["base", "pmlb16"])
def test_ppc_and_waic_are_those_of_replicates_drawn_right_after_the_sampling(case):
    """A fit and its summary hold no replicates; the PPC then draws them, and its table,
    WAIC and LOO are those of ``_gibbs.replicate`` called with the generator right after the
    same seed's sampling (the sampler run again by hand: the Gibbs kernel on the 5 x 20 base
    results, mostly the independence kernel on the 16 x 132 ones)."""
    data = bbt.datasets.load_base() if case == "base" else bbt.datasets.load_pmlb16()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        job = prepare_fit(data, dataset="db", ties="spread", size=(4, 1000))
        res = job.sample(draws="fixed")
        res.summary()
        res.diagnostics()
    params = res.draws.params
    assert isinstance(params, Params) and _derived_yet(params) == []
    assert "log_lik" in params and _derived_yet(params) == []  # `in` derives nothing

    design = Design.from_stan_data(job.stan_data)
    rng = np.random.default_rng(res.draws.info["seed"])
    drawn = _gibbs.sample(design, chains=4, iter_warmup=100, iter_sampling=1000, rng=rng)
    np.testing.assert_array_equal(drawn["beta"], params["beta"])
    want = _gibbs.replicate(design, drawn, rng)

    table = res.ppc_table()
    assert _derived_yet(params) == list(DERIVED)
    observed = res._observed["win1"]
    expected = diagnostics.ppc_coverage(want["win1_rep"].reshape(-1, len(observed)), observed)
    np.testing.assert_array_equal(table["proportion"].to_numpy(), expected)
    for name in DERIVED:
        np.testing.assert_array_equal(params[name], want[name])
    az = diagnostics._az()
    by_hand = az.from_dict(
        posterior={k: drawn[k] for k in ("beta", "sigma")}, log_likelihood={"y": want["log_lik"]}
    )
    assert float(res.waic().elpd_waic) == float(az.waic(by_hand, scale="deviance").elpd_waic)
    assert float(res.loo().elpd_loo) == float(az.loo(by_hand, scale="deviance").elpd_loo)


def test_rounds_joined_keep_each_rounds_replicates_and_pickle_lazily():
    """Two rounds joined as more chains derive each round's replicates from its own
    generator (the same arrays as each round's alone, concatenated); a pickled fit stays
    underived and derives the same numbers."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one, two = (
            prepare_fit(
                bbt.datasets.load_base(), dataset="db", ties="spread", seed=seed, size=(2, 300)
            )
            .sample(chains=2, iter_sampling=300, draws="fixed")
            .draws
            for seed in (1, 9)
        )
    both = joined(one, two)
    assert isinstance(both.params, Params) and _derived_yet(both.params) == []
    assert both.params["beta"].shape[0] == 4
    again = pickle.loads(pickle.dumps(both.params))
    assert _derived_yet(again) == []
    for name in DERIVED:
        want = np.concatenate([one.params[name], two.params[name]])
        np.testing.assert_array_equal(both.params[name], want)
        np.testing.assert_array_equal(again[name], want)
