"""Per-data-set win counts for influence (no Stan)."""

from __future__ import annotations

import numpy as np
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
