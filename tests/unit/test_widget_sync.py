"""What the widget computes and sends after a fit, on a real fit: the draws of P(a > b) once
per fit, the chart data as one JSON buffer per trait (issue 10: the full result at most 1.1x
the fit alone)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget.core import posterior
from bbt_widget.core.result import BBTResult
from bbt_widget.widget.app import _Fitted

pytestmark = pytest.mark.stan


@pytest.fixture(scope="module")
def fitted() -> BBTResult:
    return bbt.fit(bbt.datasets.load_base(), dataset="db", seed=7, ties="davidson")


def _fresh(result: BBTResult) -> BBTResult:
    """The same fit without its cached summaries, as the widget's runner gets it."""
    return BBTResult(
        result.draws,
        result.win_table,
        result.algorithms,
        result.settings,
        result._fitted,
        result.tidy,
        result.components,
    )


def test_prepare_computes_the_draws_of_p_a_beats_b_once(fitted, monkeypatch) -> None:
    calls = []
    compute = posterior.pair_probabilities

    def counting(*args, **kwargs):
        calls.append(args[1])
        return compute(*args, **kwargs)

    monkeypatch.setattr(posterior, "pair_probabilities", counting)
    result = _fresh(fitted)
    prepared = _Fitted.prepare(result)
    assert len(calls) == 1 and len(calls[0]) == 10  # all pairs, once
    # and the summary the widget shows next reads the same draws
    result.summary(rope=(0.4, 0.6), hdi=0.95)
    assert len(calls) == 1
    # the ranges are those of the draws in draw order
    monkeypatch.setattr(posterior, "pair_probabilities", compute)
    draws = fitted.pair_draws()
    ranges = prepared.ranges.set_index("pair")
    assert (ranges.loc[draws.columns, "min"].to_numpy() == draws.min().to_numpy()).all()
    assert (ranges.loc[draws.columns, "max"].to_numpy() == draws.max().to_numpy()).all()


def test_sorted_pair_draws_are_the_draws_sorted_without_a_new_computation(
    fitted, monkeypatch
) -> None:
    draws = fitted.pair_draws(control="xgb")
    fitted.summary()  # the sorted draws are cached with the summaries
    monkeypatch.setattr(posterior, "pair_probabilities", None)  # any call would fail
    ordered = fitted.pair_draws(control="xgb", sort=True)
    expected = pd.DataFrame(np.sort(draws.to_numpy(), axis=0), columns=draws.columns)
    pd.testing.assert_frame_equal(ordered, expected, check_exact=True)
    # the caller's copy: writing to it leaves the summaries alone
    before = fitted.summary()
    ordered.iloc[:, :] = 0.5
    pd.testing.assert_frame_equal(fitted.summary(), before, check_exact=True)
