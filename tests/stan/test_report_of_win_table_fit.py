"""A report of a fit of a ready win table, with the results given for the other sections."""

from __future__ import annotations

import warnings

import pytest

import bbt_widget as bbt

pytestmark = pytest.mark.stan


def test_robustness_of_a_win_table_fit_is_refused_by_name(tmp_path):
    # the sweep refits the fit's own results, which a fit of a ready win table has not:
    # a clear refusal naming the option and the fix, not an AttributeError from deep inside
    base = bbt.datasets.load_base()
    table = bbt.win_table(base, dataset="db")
    with warnings.catch_warnings():  # 100 iterations: only the refusal below matters
        warnings.simplefilter("ignore", bbt.DiagnosticsWarning)
        result = bbt.fit(table, iter_warmup=100, iter_sampling=100)
    with pytest.raises(ValueError, match=r"robustness=True.*ready win table.*fit the results"):
        bbt.report.write(result, tmp_path / "r.md", data=base.set_index("db"), robustness=True)
