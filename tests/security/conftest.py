"""The real fit of the hostile names, shared by the security tests."""

from __future__ import annotations

import warnings

import pytest
from hostile import fit_hostile, hostile_results

import bbt_widget as bbt


@pytest.fixture(scope="session")
def hostile_res() -> bbt.BBTResult:
    with warnings.catch_warnings():
        # short chains may miss the ESS targets; the escaping is what is tested
        warnings.simplefilter("ignore", bbt.DiagnosticsWarning)
        return fit_hostile()


@pytest.fixture(scope="session")
def hostile_sections(hostile_res):
    """The report's optional sections on the hostile names: a two-setting sweep, influence,
    Plackett-Luce (real short fits)."""
    from bbt_widget.outputs import report_sections as rs

    data = hostile_results()
    short = {"engine": "pystan", "chains": 2, "iter_warmup": 300, "iter_sampling": 300}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bbt.DiagnosticsWarning)
        sweep = bbt.sweep(data, dataset="db", grid={"ties": ["spread", "forget"]}, **short)
        pl = bbt.ranking_model(data, dataset="db", **short)
    return [
        rs.sweep_section(sweep, "weak"),
        rs.influence_section(bbt.influence(hostile_res, interpretation="weak")),
        rs.ranking_model_section(pl, hostile_res),
    ]
