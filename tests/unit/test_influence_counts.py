"""Per-data-set win counts for influence (no Stan)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget.core.wintable import count_wins
from bbt_widget.lab.influence import data_set_counts


@pytest.mark.parametrize(
    ("which", "d_min", "paired", "shape"),
    [
        ("pmlb16", None, True, (132, 120, 3)),
        ("pmlb16", 0.2, False, (132, 120, 3)),  # pmlb16 has missing folds: unpaired only
        ("base", 0.4, True, (20, 10, 3)),
    ],
)
def test_data_set_counts_sum_to_the_win_table(request, which, d_min, paired, shape):
    tidy = bbt.tidy_results(request.getfixturevalue(which), dataset="db")
    per_set = data_set_counts(tidy, d_min, paired)
    assert per_set.shape == shape
    full = count_wins(tidy, d_min=d_min, paired=paired)
    assert np.array_equal(per_set.sum(axis=0), full[["win1", "win2", "ties"]].to_numpy())
    # one data set is one game per pair at most (none where a result is missing)
    assert set(np.unique(per_set.sum(axis=2))) <= {0, 1}
    assert per_set.sum() > 0


@pytest.mark.slow
def test_leaving_out_a_data_set_that_changes_no_count_moves_no_estimate():
    """A data set where every algorithm scores the same, with ties forgotten, adds nothing to
    the win table: leaving it out must move nothing. The importance-sampling estimates were
    compared with the summary's, which near a threshold are conditional estimates with a
    smaller Monte Carlo error, so such a data set showed a delta of that error's size."""
    import warnings

    data = bbt.datasets.load_pmlb16()
    tied = data.iloc[[0]].copy()
    tied["db"] = "all tied"
    tied.loc[:, [c for c in data.columns if c != "db"]] = 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = bbt.fit(
            pd.concat([data, tied], ignore_index=True),
            dataset="db",
            ties="forget",
            draws="fixed",
            seed=3,
        )
    summary = res.summary()
    unweighted = res.pair_draws().to_numpy().mean(axis=0)
    assert not np.allclose(summary["mean"], unweighted, rtol=0, atol=1e-9), "nothing refined"
    inf = bbt.influence(res, refit="none")
    rows = inf.table[inf.table["dataset"] == "all tied"]
    assert len(rows) == len(summary)
    assert np.abs(rows["delta_mean"]).max() < 1e-12
    assert np.abs(rows["delta_above_50"]).max() < 1e-12
    assert not rows["changed"].any()
