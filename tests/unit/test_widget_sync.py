"""What the widget computes and sends after a fit, on a real fit: the draws of P(a > b) once
per fit, the chart data as one JSON buffer per trait (issue 10: the full result at most 1.1x
the fit alone)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from ipywidgets.widgets.widget import _remove_buffers

import bbt_widget as bbt
from bbt_widget.core import posterior
from bbt_widget.core.result import BBTResult
from bbt_widget.widget import sync
from bbt_widget.widget.app import BBTWidget
from bbt_widget.widget.fitted import Fitted

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

    def counted(function):
        def counting(*args, **kwargs):
            calls.append(args[1])
            return function(*args, **kwargs)

        return counting

    # in draw order or each pair's draws sorted: either computes P(a > b) per draw
    monkeypatch.setattr(posterior, "pair_probabilities", counted(compute))
    monkeypatch.setattr(
        posterior, "sorted_pair_probabilities", counted(posterior.sorted_pair_probabilities)
    )
    result = _fresh(fitted)
    prepared = Fitted.prepare(result)
    # all pairs, once; then, in draw order, only the few pairs near a threshold (their
    # Monte Carlo errors: sorted draws have lost the order the errors need)
    assert len(calls[0]) == 10 and all(len(c) < 10 for c in calls[1:])
    seen = len(calls)
    # and the summary the widget shows next reads the same draws
    result.summary(rope=(0.4, 0.6), hdi=0.95)
    assert all(len(c) < 10 for c in calls[seen:])
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
    # any call would fail
    monkeypatch.setattr(posterior, "pair_probabilities", None)
    monkeypatch.setattr(posterior, "sorted_pair_probabilities", None)
    ordered = fitted.pair_draws(control="xgb", sort=True)
    expected = pd.DataFrame(np.sort(draws.to_numpy(), axis=0), columns=draws.columns)
    # the same values to the last bits: numpy's logistic over a contiguous block (the sorted
    # copy's) and over strided columns may round a value's last bit differently
    pd.testing.assert_frame_equal(ordered, expected, check_exact=False, rtol=1e-14, atol=0)
    # the caller's copy: writing to it leaves the summaries alone
    before = fitted.summary()
    ordered.iloc[:, :] = 0.5
    pd.testing.assert_frame_equal(fitted.summary(), before, check_exact=True)


@pytest.fixture(scope="module")
def widget(request: pytest.FixtureRequest) -> BBTWidget:
    w = BBTWidget(bbt.datasets.load_base(), dataset="db", seed=7, previews=False)
    request.addfinalizer(w.close)
    assert w.wait(600), (w.status_text, w.error)
    return w


def _sent(w: BBTWidget, monkeypatch) -> list[tuple[dict, dict]]:
    """Record the comm messages the widget sends: the JSON part, and the binary buffers by
    trait with that trait's value when it was sent."""
    messages: list[tuple[dict, dict]] = []

    def send(msg: dict, buffers: list | None = None) -> None:
        names = [path[0] for path in msg["buffer_paths"]]
        assert all(len(path) == 1 for path in msg["buffer_paths"])  # whole traits
        sent = {n: (bytes(b), getattr(w, n)) for n, b in zip(names, buffers or [], strict=True)}
        messages.append((msg["state"], sent))

    monkeypatch.setattr(w, "_send", send)
    return messages


def test_chart_data_go_out_as_one_json_buffer_each(widget, monkeypatch) -> None:
    """ipywidgets walks every synced value for binary parts and the kernel encodes the rest
    as JSON: the chart data (thousands of values) go as one buffer each instead, and the
    Python attributes stay dicts."""
    w = widget
    messages = _sent(w, monkeypatch)
    w.prior_scale = 0.7  # a new fit: diagnostics, fit data and view data
    assert w.wait(600), (w.status_text, w.error)
    w.rope_low = 0.42  # a re-summary: view data only
    w.prior_scale = 0.5  # back to the first fit: from the cache
    traits = [sorted(buffers) for _, buffers in messages if buffers]
    assert traits == [["fit_data", "view_data"], ["view_data"], ["fit_data", "view_data"]]
    for state, buffers in messages:
        assert not {"fit_data", "view_data"} & set(state)
        for encoded, value in buffers.values():
            assert json.loads(encoded) == value  # the same JSON values as before
    assert isinstance(w.fit_data, dict) and isinstance(w.view_data, dict)
    assert set(w.fit_data["ppc"]) >= {"key", "value", "count"}
    w.rope_low = 0.45


def test_fit_data_are_encoded_with_the_fit_not_on_the_kernel(widget, monkeypatch) -> None:
    """The worker thread encodes a fit's chart data once; showing it (also again from the
    cache) sends those bytes."""
    w = widget
    encoded = []
    encode = sync.chart_data_json
    monkeypatch.setattr(
        sync, "chart_data_json", lambda value: encoded.append(value) or encode(value)
    )
    w.prior_scale = 0.65
    assert w.wait(600), (w.status_text, w.error)
    w.prior_scale = 0.5  # cached
    assert w.fit_data is w._fitted.data
    assert w.get_state(["fit_data"])["fit_data"] is w._fitted.data_json
    # the kernel encoded the view data of each shown fit, never fit data
    assert encoded and all(set(value) == set(w.view_data) for value in encoded)


def test_non_finite_numbers_go_out_as_null_and_strings_as_they_are() -> None:
    """JSON has no NaN or infinity: the buffer carries null for them (``to_columns`` already
    sends NaN as None), and every other value as the kernel's packer would write it; hostile
    strings survive, a lone surrogate included (orjson refuses it: the standard library's
    escape then)."""
    session = pytest.importorskip("jupyter_client.session")
    value = {"intervals": {"min": [0.1, float("inf"), None], "max": [float("-inf"), 1.0]}}
    value["rope"] = {"low": [float("nan")], "label": ["a – b", '"q"', "</script><b>x"]}
    assert json.loads(sync.chart_data_json(value)) == {
        "intervals": {"min": [0.1, None, None], "max": [None, 1.0]},
        "rope": {"low": [None], "label": ["a – b", '"q"', "</script><b>x"]},
    }
    finite = {"ppc": {"value": [1, 2], "h": [0.25, 1.0, 1e-05, 1e22], "panel": ["x wins vs y"]}}
    assert json.loads(sync.chart_data_json(finite)) == json.loads(session.json_packer(finite))
    lone = {"panel": ["a\udcff", float("inf")]}
    assert json.loads(sync.chart_data_json(lone)) == {"panel": ["a\udcff", None]}
    numpy = {"h": np.array([0.5, 1.0]), "n": np.int64(3)}
    assert json.loads(sync.chart_data_json(numpy)) == {"h": [0.5, 1.0], "n": 3}


def test_the_buffers_leave_little_for_ipywidgets_to_walk(widget) -> None:
    state, paths, buffers = _remove_buffers(widget.get_state(["fit_data", "view_data"]))
    assert state == {} and sorted(p[0] for p in paths) == ["fit_data", "view_data"]
    assert all(isinstance(b, bytes) for b in buffers)


def test_ppc_frame_of_a_real_fit_keys_titles_and_numbers_every_row(fitted) -> None:
    """The PPC frame (keys and titles made once per pair, issue 10) on a Davidson fit: every
    row carries its own pair's key, panel title and the pair's place in the summary."""
    from bbt_widget import charts
    from bbt_widget.charts.frames_ppc import ppc_frame

    order = list(fitted.ranking()["algorithm"])
    hist = fitted.ppc_histogram()
    frame = ppc_frame(hist, order)
    assert len(frame) == len(hist) and set(frame["quantity"]) == {"win1", "ties"}
    summary = fitted.summary()
    place = {
        charts.pair_key(a, b): i
        for i, (a, b) in enumerate(zip(summary["alg_a"], summary["alg_b"], strict=True))
    }
    for row in frame.itertuples(index=False):
        assert row.key == charts.pair_key(row.alg1, row.alg2)
        wins = f"{row.alg1} wins vs {row.alg2}"
        assert row.panel == (wins if row.quantity == "win1" else f"ties {row.alg1}–{row.alg2}")
        assert row.rank_order == place[row.key]
    # one panel per (pair, quantity), each numbered once
    panels = frame.groupby(["key", "quantity"])["panel_order"].nunique()
    assert (panels == 1).all() and frame["panel_order"].nunique() == len(panels)
