"""``diagnostics.ppc_histogram`` (one bincount for all pairs) against the per-pair count it
replaces, on replicated draws shaped as the engines return them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bbt_widget.core import diagnostics
from bbt_widget.core.draws import Draws


def _per_pair(draws: Draws, observed: dict, alg1: list[str], alg2: list[str]) -> pd.DataFrame:
    """The definition: for each quantity and pair, each replicated value and its count."""
    rows = []
    for name in observed:
        rep = draws.params[f"{name}_rep"].reshape(-1, len(alg1))
        for k in range(len(alg1)):
            values, counts = np.unique(rep[:, k], return_counts=True)
            for v, c in zip(values, counts, strict=True):
                rows.append((alg1[k], alg2[k], name, int(v), int(c), int(observed[name][k])))
    return pd.DataFrame(rows, columns=["alg1", "alg2", "quantity", "value", "count", "observed"])


@pytest.mark.parametrize("davidson", [False, True])
def test_ppc_histogram_counts_every_replicated_value_of_every_pair(davidson: bool) -> None:
    rng = np.random.default_rng(11)
    chains, n, pairs = 4, 250, 6
    params = {"win1_rep": rng.binomial(20, rng.uniform(0.05, 0.95, pairs), (chains, n, pairs))}
    observed = {"win1": rng.integers(0, 21, pairs)}
    if davidson:
        params["ties_rep"] = rng.binomial(20, 0.1, (chains, n, pairs)).astype(float)
        observed["ties"] = rng.integers(0, 5, pairs)
    draws = Draws(params=params, sampler={}, engine="pystan")
    alg1 = ["a", "a", "a", "b", "b", "c"]
    alg2 = ["b", "c", "d", "c", "d", "d"]
    got = diagnostics.ppc_histogram(draws, observed, alg1, alg2)
    want = _per_pair(draws, observed, alg1, alg2)
    pd.testing.assert_frame_equal(got[want.columns], want, check_dtype=False)
    assert set(got["quantity"]) == ({"win1", "ties"} if davidson else {"win1"})
