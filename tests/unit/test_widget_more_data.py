"""The widget's "More data sets" view (widget/more_data_view.py): the highlighted pair's
forecast under both rules is the API's (``BBTResult.more_data(pairs=...)``, seeded) with the
report's sentences; it is computed only while the section is open, again when the pair or a
setting changes (marked pending meanwhile), from the cache when they come back, and says why
there is none for Davidson's ties."""

from __future__ import annotations

import threading

import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget.charts.pairs import pair_key
from bbt_widget.core.more_data import DEFAULT_N
from bbt_widget.core.run_context import RunContext
from bbt_widget.engines.base import FitCancelled
from bbt_widget.outputs.report._more_data import more_data_sentence
from bbt_widget.widget.app import BBTWidget
from bbt_widget.widget.more_data_view import FUTURES, forecast_view

FIT_TIMEOUT = 600
ROPE = (0.45, 0.55)


@pytest.fixture(scope="module")
def fitted() -> bbt.BBTResult:
    """The paper's 5 algorithms x 20 data sets, with ties (spread)."""
    return bbt.fit(bbt.datasets.load_base(), dataset="db", chains=2, draws="fixed")


def _open_pair(result: bbt.BBTResult) -> tuple[str, str]:
    """A pair with no weak claim now: its curve has somewhere to grow."""
    summary = result.summary(ROPE)
    row = summary[summary["weak"] == "no claim"].iloc[0]
    return str(row.alg_a), str(row.alg_b)


def test_the_view_is_the_apis_forecast_of_the_pair_under_both_rules(
    fitted: bbt.BBTResult,
) -> None:
    a, b = _open_pair(fitted)
    view = forecast_view(fitted, (b, a), ROPE)  # either order: the summary's orientation back
    assert (view["a"], view["b"]) == (a, b)
    expected = []
    for rule in ("weak", "strong"):
        forecast = fitted.more_data(DEFAULT_N, rule, rope=ROPE, draws=FUTURES, pairs=[(a, b)])
        expected.append(more_data_sentence(forecast.table, a, b, DEFAULT_N, rule))
    assert view["sentences"] == expected
    # the chart: a point per rule and n, of this pair alone
    (rows,) = [d for d in view["spec"]["datasets"].values() if "rule" in d[0]]
    drawn = pd.DataFrame(rows)
    assert sorted(zip(drawn["rule"], drawn["n"])) == sorted(
        (rule, n) for rule in ("weak", "strong") for n in DEFAULT_N
    )
    assert set(zip(drawn["alg_a"], drawn["alg_b"])) == {(a, b)}
    strong = fitted.summary(ROPE).set_index(["alg_a", "alg_b"]).loc[(a, b), "strong"]
    assert view["now"] == f"Now, weak rule: no claim; strong rule: {_claim_words(strong, a, b)}."
    assert forecast_view(fitted, (a, b), ROPE) == view  # seeded


def _claim_words(claim: str, a: str, b: str) -> str:
    return {"a better": f"{a} better", "b better": f"{b} better"}.get(claim, claim)


def test_a_newer_request_while_quiet_cancels_the_forecast(fitted: bbt.BBTResult) -> None:
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(FitCancelled):
        forecast_view(
            fitted, _open_pair(fitted), ROPE, quiet=5.0, context=RunContext(cancel=cancel)
        )


@pytest.mark.stan  # the widget's own fits, as the other widget tests
def test_the_widget_forecasts_the_highlighted_pair_while_the_section_is_open() -> None:
    w = BBTWidget(bbt.datasets.load_base(), dataset="db", seed=7, stan_check=False)
    try:
        assert w.wait(FIT_TIMEOUT)
        first = pair_key(*_open_pair(w.result))
        w.selected_pair = first
        assert w.more_data_view == {} and w._more_data.runner.stats["started"] == 0  # closed
        w.more_data_open = True
        assert w.more_data_view["pending"] and w._more_data.wait(FIT_TIMEOUT)
        shown = w.more_data_view
        assert shown["pair"] == first and not shown["pending"] and len(shown["sentences"]) == 2
        # a view setting: the last forecast stays, marked pending, until the new one is in
        w.rope_high = 0.6
        assert w.more_data_view["pending"] and w.more_data_view["sentences"] == shown["sentences"]
        assert w._more_data.wait(FIT_TIMEOUT)
        assert not w.more_data_view["pending"]
        assert w.more_data_view["spec"] != shown["spec"]
        # another pair, then back to the first at the first settings: from the cache
        w.selected_pair = pair_key(w.result.algorithms[0], w.result.algorithms[1])
        assert w._more_data.wait(FIT_TIMEOUT)
        assert w.more_data_view["pair"] != first
        w.rope_high = 0.55
        hits = w._more_data.runner.stats["cache_hits"]
        w.selected_pair = first
        assert w._more_data.runner.stats["cache_hits"] == hits + 1
        assert w.more_data_view == shown
        # no pair: nothing to forecast, said so
        w.selected_pair = ""
        assert "Click a pair" in w.more_data_view["note"] and "spec" not in w.more_data_view
        # Davidson's ties: the core's reason, and what to choose instead
        w.selected_pair = first
        w.ties = "davidson"
        assert w.wait(FIT_TIMEOUT) and w._more_data.wait(FIT_TIMEOUT)
        note = w.more_data_view["note"]
        assert note.startswith("No forecast:") and "ties='spread'" in note, note
    finally:
        w.close()
