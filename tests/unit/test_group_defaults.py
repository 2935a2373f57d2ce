"""The group model converges at its defaults on the small shapes users have.

Five algorithms on 20 data sets in two or three families is a typical grouped study (the
paper's base results, the data sets split into families). At the default engine and
settings its diagnostics must pass, so that ``fit(..., group=)`` and the report succeed
without the user tuning the sampler. (NUTS at Stan's defaults did not: R-hat up to 1.04 and
bulk ESS under 120, from the funnel of tau and the group deviations; the numpy engine
integrates the group abilities out when it draws tau.)
"""

from __future__ import annotations

import warnings

import pytest

import bbt_widget as bbt
from bbt_widget import datasets
from bbt_widget.fitting import DiagnosticsWarning


@pytest.mark.slow
@pytest.mark.parametrize(("families", "seed"), [(2, 1), (3, 2)])
def test_the_group_model_passes_its_diagnostics_at_the_defaults(families: int, seed: int):
    base = datasets.load_base()
    sets = sorted(base["db"].unique())
    mapping = {name: f"family {k % families}" for k, name in enumerate(sets)}
    with warnings.catch_warnings():
        warnings.simplefilter("error", DiagnosticsWarning)
        res = bbt.fit(base, dataset="db", group=mapping, seed=seed)
    diagnostics = res.diagnostics()
    assert res.settings["engine"] == "numpy"
    assert diagnostics.ok, diagnostics
    assert diagnostics.max_rhat <= 1.01
    # the thresholds are 100 per chain; these runs give about 2000
    assert diagnostics.min_ess_bulk >= 1000 and diagnostics.min_ess_tail >= 1000
