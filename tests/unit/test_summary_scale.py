"""The summary's costly steps at many algorithms give what the plain computations give: the
sorted draws of every pair's P(a > b), the pairs' labels, and the screen of pairs near a
threshold at the fit's measured effective sample size (not a fixed share of the draws)."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import bbt_widget as bbt
from bbt_widget.core import posterior, precision
from bbt_widget.core.bidi import pair_label
from bbt_widget.core.draws import Draws
from bbt_widget.core.result import BBTResult

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "security"))
from hostile import BIDI, HOSTILE

ROPE = (0.45, 0.55)


def test_the_sorted_draws_are_each_pairs_draws_sorted():
    """Sorted by pair in contiguous blocks (and the logistic function applied after the
    sort): exactly the values of every column of P(a > b) sorted, for any block size."""
    rng = np.random.default_rng(4)
    beta = rng.normal(0, 3, (301, 9))
    beta[:, 2] = beta[:, 5]  # a pair whose every draw is 0.5
    pairs = [(i, j) for i in range(9) for j in range(9) if i != j]
    want = np.sort(posterior.pair_probabilities(beta, pairs), axis=0)
    for block in (1, 5, 64):
        got = posterior.sorted_pair_probabilities(beta, pairs, block=block)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_the_pair_labels_are_pair_labels_of_hostile_names():
    """Each name is isolated once for all its pairs: the labels are still ``pair_label``'s,
    for names with bidi controls, right-to-left letters and markup."""
    names = [*BIDI, *HOSTILE[:6]]
    rng = np.random.default_rng(0)
    beta = rng.normal(0, 1, (2, 50, len(names)))
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    table = pd.DataFrame(
        {"alg1": [a for a, _ in pairs], "alg2": [b for _, b in pairs], "win1": 6}
        | {"win2": 4, "ties": 0}
    )
    draws = Draws(params={"beta": beta}, sampler={}, engine="pystan")
    res = BBTResult(draws, table, names, {}, np.ones(len(table), dtype=bool))
    summary = res.summary()
    assert summary["pair"].tolist() == [
        pair_label(a, b) for a, b in summary[["alg_a", "alg_b"]].to_numpy()
    ]


def test_the_screen_takes_the_fits_measured_ess():
    """The summary computes the MCSE of the pairs that lie near a threshold at the fit's
    measured ESS (its smallest bulk or tail ESS), not at the floor of a tenth of the draws
    that stands in where none is known: here, fewer pairs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = bbt.fit(
            bbt.datasets.load_pmlb16(), dataset="db", engine="numpy", seed=2, draws="fixed"
        )
    summary = res.summary(ROPE)
    diag = res.diagnostics()
    ess = min(diag.min_ess_bulk, diag.min_ess_tail)
    n = len(res.beta)
    assert ess > 2 * precision.ESS_SHARE_FLOOR * n
    table = posterior.summarise(
        res._p_sorted,
        res._pair_labels,
        summary["alg_a"].tolist(),
        summary["alg_b"].tolist(),
        ROPE,
        0.89,
    )
    sd = precision.column_sd(res._p_sorted)
    at_ess = set(np.flatnonzero(precision.near_thresholds(table, sd, n, ROPE, 3.0, ess)))
    at_floor = set(np.flatnonzero(precision.near_thresholds(table, sd, n, ROPE, 3.0)))
    screened = set(res.__dict__["_mcse_by_rope"][ROPE])
    assert screened == at_ess
    assert at_ess < at_floor
