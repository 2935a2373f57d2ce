"""Sampler settings and hyper-prior defaults reach Stan (real, short PyStan fits)."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget.core import diagnostics

pytestmark = pytest.mark.stan

TABLE_3B = pd.DataFrame(
    [
        ("dt", "lda", 7, 14),
        ("dt", "lgbm", 2, 19),
        ("dt", "xgb", 2, 19),
        ("dt", "svm", 6, 15),
        ("lda", "lgbm", 7, 14),
        ("lda", "xgb", 6, 15),
        ("lda", "svm", 5, 15),
        ("lgbm", "xgb", 11, 10),
        ("lgbm", "svm", 11, 10),
        ("xgb", "svm", 12, 9),
    ],
    columns=["alg1", "alg2", "win1", "win2"],
)
SHORT = {"engine": "pystan", "chains": 2, "iter_warmup": 200, "iter_sampling": 200, "seed": 5}


def test_max_treedepth_reaches_stan_and_the_warning_names_the_remedy():
    with pytest.warns(bbt.DiagnosticsWarning, match=r"raise max_treedepth, e\.g\. max_treedepth=3"):
        res = bbt.fit(TABLE_3B, max_treedepth=1, **SHORT)
    assert res.settings["max_treedepth"] == 1
    depth = res.draws.sampler["treedepth__"]
    assert depth.max() <= 1  # Stan stopped every trajectory at depth 1
    assert res.diagnostics().treedepth_saturated == depth.size


def test_adapt_delta_reaches_stan():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bbt.DiagnosticsWarning)  # short chains
        loose = bbt.fit(TABLE_3B, **SHORT)
        strict = bbt.fit(TABLE_3B, adapt_delta=0.99, **SHORT)
    assert (loose.settings["adapt_delta"], strict.settings["adapt_delta"]) == (0.8, 0.99)
    assert strict.draws.info["adapt_delta"] == 0.99
    # a higher target acceptance adapts a smaller step size
    step = {
        r.settings["adapt_delta"]: r.draws.sampler["stepsize__"].mean() for r in (loose, strict)
    }
    assert step[0.99] < step[0.8]


def test_divergences_message_names_adapt_delta():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bbt.DiagnosticsWarning)
        res = bbt.fit(TABLE_3B, adapt_delta=0.9, **SHORT)
    sampler = dict(res.draws.sampler)
    sampler["divergent__"] = np.ones_like(sampler["divergent__"])
    draws = dataclasses.replace(res.draws, sampler=sampler)
    messages = diagnostics.diagnostics(res.idata, draws).messages
    assert any("raise adapt_delta (now 0.9), e.g. adapt_delta=0.95" in m for m in messages)


def test_cauchy_without_a_scale_uses_its_appendix_a_default():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bbt.DiagnosticsWarning)
        default = bbt.fit(TABLE_3B, hyperprior="cauchy", **SHORT)
        explicit = bbt.fit(TABLE_3B, hyperprior="cauchy", prior_scale=1.0, **SHORT)
        paper = bbt.fit(TABLE_3B, **SHORT)
    assert default.settings["prior_scale"] == 1.0
    # same seed, same program, same data: the default scale is exactly 1.0 in Stan
    np.testing.assert_array_equal(default.draws.params["sigma"], explicit.draws.params["sigma"])
    assert paper.settings["prior_scale"] == 0.5  # lognormal keeps the paper's 0.5
