"""``PreparedFit.with_prior``: a fit's inputs under another hyper-prior (issue 10), without Stan."""

from __future__ import annotations

import re

import pytest

import bbt_widget as bbt
from bbt_widget.fitting import prepare_fit


@pytest.mark.parametrize(
    ("hyperprior", "prior_scale"),
    [("normal", 2.0), ("cauchy", None), ("lognormal", 0.25), ("lognormal", None)],
)
@pytest.mark.parametrize("ties", ["spread", "davidson"])
def test_with_prior_equals_preparing_with_that_prior(
    ties: str, hyperprior: str, prior_scale: float | None
) -> None:
    data = bbt.datasets.load_base()
    first = prepare_fit(data, dataset="db", ties=ties, size=(4, 1000))
    expected = prepare_fit(
        data,
        dataset="db",
        ties=ties,
        hyperprior=hyperprior,
        prior_scale=prior_scale,
        size=(4, 1000),
    )
    changed = first.with_prior(hyperprior, prior_scale)
    assert changed.stan_data == expected.stan_data
    assert changed.settings == expected.settings
    assert changed.model == expected.model and changed.algorithms == expected.algorithms
    assert changed.table.equals(expected.table) and (changed.fitted == expected.fitted).all()
    assert changed.warnings == expected.warnings and changed.audit == expected.audit
    # the inputs it came from are unchanged (the widget may still be fitting them)
    assert first.settings["hyperprior"] == "lognormal" and first.settings["prior_scale"] == 0.5
    assert first.stan_data["prior_scale"] == 0.5


def test_with_prior_checks_the_prior_as_prepare_fit_does() -> None:
    first = prepare_fit(bbt.datasets.load_base(), dataset="db", ties="spread", size=(4, 1000))
    with pytest.raises(ValueError, match="hyperprior") as direct:
        prepare_fit(
            bbt.datasets.load_base(), dataset="db", ties="spread", hyperprior="gamma", size=(4, 1)
        )
    with pytest.raises(ValueError, match="hyperprior") as derived:
        first.with_prior("gamma", None)
    assert str(derived.value) == str(direct.value)
    with pytest.raises(ValueError, match="prior_scale"):
        first.with_prior("normal", -1.0)


@pytest.mark.parametrize(
    "counting",
    [
        {"d_min": 0.3, "paired": True, "ties": "spread"},
        {"d_min": 0.3, "paired": False, "ties": "davidson"},
        {"d_min": None, "paired": True, "ties": "forget"},
        {"d_min": 1.5, "paired": True, "ties": "add"},
    ],
)
def test_recount_equals_preparing_with_those_settings(counting: dict) -> None:
    data = bbt.datasets.load_base()
    first = prepare_fit(data, dataset="db", ties="spread", size=(4, 1000))
    prior = {"hyperprior": "normal", "prior_scale": None}
    expected = prepare_fit(data, dataset="db", size=(4, 1000), **counting, **prior)
    changed = first.recount(size=(4, 1000), **counting, **prior)
    assert changed.stan_data == expected.stan_data
    assert changed.settings == expected.settings
    assert list(changed.settings) == list(expected.settings)  # the same order, for reports
    assert changed.table.equals(expected.table) and (changed.fitted == expected.fitted).all()
    assert changed.components == expected.components
    assert changed.warnings == expected.warnings and changed.audit == expected.audit
    assert changed.tidy is first.tidy  # read once


def _numbers_masked(message: str) -> str:
    return re.sub(r"[0-9][0-9.]*", "#", message)


def test_recount_refuses_what_prepare_fit_refuses() -> None:
    data = bbt.datasets.load_base()
    first = prepare_fit(data, dataset="db", ties="spread", size=(4, 1000))
    prior = {"hyperprior": "lognormal", "prior_scale": None}
    for bad in ({"d_min": -1.0}, {"ties": "coin-flip"}):
        counting = {"d_min": None, "paired": True, "ties": "spread", **bad}
        with pytest.raises(ValueError) as direct:
            prepare_fit(data, dataset="db", size=(4, 1000), **counting, **prior)
        with pytest.raises(ValueError) as derived:
            first.recount(size=(4, 1000), **counting, **prior)
        assert str(derived.value) == str(direct.value)
    # too big for memory: the same check as a first preparation
    with pytest.raises(ValueError) as direct:
        prepare_fit(data, dataset="db", ties="spread", size=(4, 10**9))
    with pytest.raises(ValueError) as derived:
        first.recount(size=(4, 10**9), d_min=None, paired=True, ties="spread", **prior)
    # the message quotes the memory available at each call, which other processes change
    assert _numbers_masked(str(derived.value)) == _numbers_masked(str(direct.value))
    table = first.table.copy()
    from_table = prepare_fit(table, ties="spread", size=(4, 1000))
    with pytest.raises(ValueError, match="ready win table"):
        from_table.recount(size=(4, 1000), d_min=None, paired=True, ties="add", **prior)


@pytest.mark.parametrize(
    ("layout", "role"),
    [
        ({"dataset": "db"}, "data-set column \\(dataset='db'\\)"),
        ({"dataset": "ds", "algorithm": "db", "score": "acc"}, "algorithm column"),
    ],
)
def test_the_group_column_cannot_be_a_column_of_the_layout(
    layout: dict[str, str], role: str
) -> None:
    # the group column is taken out before the results are read: group= naming the data-set
    # column said "dataset='db' is not a column of the results"
    data = bbt.datasets.load_base()
    if "algorithm" in layout:
        data = data.melt(id_vars="db", var_name="ds", value_name="acc")
    match = rf"group='db' is the {role}.*cannot be the"
    with pytest.raises(ValueError, match=match):
        prepare_fit(data, **layout, group="db", ties="spread", size=(4, 1000))
    with pytest.raises(ValueError, match=match):
        bbt.fit(data, **layout, group="db", engine="numpy")
