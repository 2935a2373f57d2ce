"""The real fit of the hostile names, shared by the security tests."""

from __future__ import annotations

import warnings

import pytest
from hostile import fit_hostile

import bbt_widget as bbt


@pytest.fixture(scope="session")
def hostile_res() -> bbt.BBTResult:
    with warnings.catch_warnings():
        # short chains may miss the ESS targets; the escaping is what is tested
        warnings.simplefilter("ignore", bbt.DiagnosticsWarning)
        return fit_hostile()
