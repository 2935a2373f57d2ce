"""The ranking models sample by decision (``draws="auto"``): a second round of chains only
when an order their ``ranking`` table claims lies within 3 Monte Carlo standard errors, and
what is still that close is named, never printed as settled.

The Monte Carlo standard error of P(first) against its spread over 20 seeds is tested in
``test_precision_other_methods.py`` (``test_the_ranking_models_mcse_is_their_spread_over_seeds``).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget.ranking._order import ORDER_Z
from bbt_widget.ranking._settling import CLAIM_COLUMNS, more_chains

#: Mallows with fewer, shorter chains in the seed-to-seed test: its default fit takes about
#: 8 s on either data set, 160 s over 10 seeds and two data sets, against the tests' minute;
#: at these settings its errors are about three times larger, so more claims come near
#: their thresholds and the rule is exercised harder, not less.
QUICK_MALLOWS = {"chains": 2, "iter_warmup": 200, "iter_sampling": 250, "thin": 5}
#: Plackett-Luce on the 16 x 132 results with a quarter of its sweeps in the same test (its
#: Gibbs sweeps take 2-8 s a fit there, more than the tests' minute over 10 seeds): again
#: larger errors, more claims near their thresholds.
QUICK_PL = {"iter_warmup": 250, "iter_sampling": 500}
_FITS: dict[tuple[Any, ...], Any] = {}


def _fit(data: pd.DataFrame, model: str, **options: Any) -> Any:
    """The fit of ``data`` (a shipped data set: its size names it here) by ``model``, once."""
    key = (data.shape, model, tuple(sorted(options.items())))
    if key not in _FITS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # short chains: diagnostics warnings not tested
            _FITS[key] = bbt.ranking_model(data, dataset="db", model=model, **options)
    return _FITS[key]


def test_settled_claims_cost_no_extra_draws() -> None:
    """On the base results every adjacent order of Plackett-Luce's ranking is far from a
    tie: ``"auto"`` draws the first round only, the very draws of ``"fixed"``."""
    data = bbt.datasets.load_base()
    auto = _fit(data, "plackett-luce", seed=1)
    fixed = _fit(data, "plackett-luce", seed=1, draws="fixed")
    assert auto.settings["rounds"] == 1 and auto.settings["total_draws"] == 4000
    assert fixed.settings["draws"] == "fixed" and auto.settings["draws"] == "auto"
    np.testing.assert_array_equal(auto.draws.params["theta"], fixed.draws.params["theta"])
    pd.testing.assert_frame_equal(auto.ranking, fixed.ranking)
    assert auto.unsettled().empty and auto.ranking["settled"].all()
    assert list(auto.unsettled().columns) == CLAIM_COLUMNS
    assert (auto.claims()["value"] > ORDER_Z * auto.claims()["mcse"]).all()


def test_a_claim_near_its_threshold_draws_a_second_round() -> None:
    """With 100 kept sweeps per chain the gap between xgb and lgbm on the base results lies
    within 3 MCSE: a second round up to 4 times the first round's draws, whose first chains
    are the fixed fit's, and the gap's error falls by about half."""
    data = bbt.datasets.load_base()
    short = {"seed": 2, "iter_sampling": 100}
    fixed = _fit(data, "plackett-luce", draws="fixed", **short)
    assert not fixed.unsettled().empty  # the constructed case: an open claim
    auto = _fit(data, "plackett-luce", **short)
    assert auto.settings["rounds"] == 2
    assert auto.settings["chains_drawn"] == 16 and auto.settings["total_draws"] == 1600
    theta = auto.draws.params["theta"]
    np.testing.assert_array_equal(theta[:4], fixed.draws.params["theta"])
    assert not np.array_equal(theta[4:8], theta[:4])  # the later round has its own seed
    pair = fixed.unsettled().iloc[0]
    claims = auto.claims().set_index(["alg_a", "alg_b"])
    key = (pair["alg_a"], pair["alg_b"])
    if key not in claims.index:
        key = key[::-1]
    assert claims.loc[key, "mcse"] < 0.7 * pair["mcse"]


def test_more_chains_follows_the_distance_to_the_threshold() -> None:
    """The rule on constructed draws of P(first) for two algorithms: a gap of 10 MCSE adds
    nothing, one of 2 MCSE the whole budget (3 more rounds of 4 chains), a gap of exactly 0
    nothing (no budget would settle it)."""
    rng = np.random.default_rng(0)
    noise = rng.normal(0.0, 0.05, size=(4, 1000, 2))
    noise -= noise.mean(axis=(0, 1))
    error = 0.05 * np.sqrt(2) / np.sqrt(4000)  # independent draws: the gap's MCSE

    def with_gap(z: float) -> np.ndarray:
        return noise + np.array([0.5 + z * error / 2, 0.5 - z * error / 2])

    assert more_chains(with_gap(10.0), ["a", "b"], 1000) == 0
    assert more_chains(with_gap(2.0), ["a", "b"], 1000) == 12
    assert more_chains(with_gap(0.0), ["a", "b"], 1000) == 0


def test_mallows_rounds_join_and_record_the_draws() -> None:
    """Mallows at the quick settings on the 16 x 132 results: a second round whose chains
    follow the first's, recorded in settings; ``draws=`` is the mode (the kept draws are
    ``iter_sampling``)."""
    data = bbt.datasets.load_pmlb16()
    auto = _fit(data, "mallows", seed=1, **QUICK_MALLOWS)
    fixed = _fit(data, "mallows", seed=1, draws="fixed", **QUICK_MALLOWS)
    assert fixed.settings["rounds"] == 1 and fixed.draws.params["rank"].shape[0] == 2
    assert auto.settings["rounds"] == 2
    chains = auto.settings["chains_drawn"]
    assert auto.draws.params["rank"].shape[:2] == (chains, 250)
    assert auto.settings["total_draws"] == chains * 250
    np.testing.assert_array_equal(auto.draws.params["rank"][:2], fixed.draws.params["rank"])
    with pytest.raises(TypeError, match="iter_sampling"):
        bbt.ranking.mallows(data, dataset="db", draws=100)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="draws must be one of auto, fixed"):
        bbt.ranking_model(data, dataset="db", draws="more")  # type: ignore[arg-type]


def _settled(result: Any) -> set[tuple[str, str]]:
    """The orders a result asserts: (ahead, behind) for each claim settled at 3 MCSE."""
    claims = result.claims()
    settled = (claims["value"] - claims["threshold"]).abs() > ORDER_Z * claims["mcse"]
    return set(zip(claims["alg_a"][settled], claims["alg_b"][settled]))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("loader", "model", "options"),
    [
        ("load_base", "plackett-luce", {}),
        ("load_pmlb16", "plackett-luce", QUICK_PL),
        ("load_base", "mallows", QUICK_MALLOWS),
        ("load_pmlb16", "mallows", QUICK_MALLOWS),
    ],
)
def test_no_settled_claim_reverses_over_ten_seeds(
    loader: str, model: str, options: dict[str, Any]
) -> None:
    """Over 10 seeds at ``draws="auto"``, a claim may be unsettled in one seed but is never
    settled the other way in another; every claim a summary marks settled is one of them."""
    data = getattr(bbt.datasets, loader)()
    fits = [_fit(data, model, seed=seed, **options) for seed in range(1, 11)]
    asserted = [_settled(fit) for fit in fits]
    every = set().union(*asserted)
    reversed_ = {(a, b) for a, b in every if (b, a) in every}
    assert not reversed_, reversed_
    for fit, claims in zip(fits, asserted):
        marked = fit.ranking[fit.ranking["settled"]]["algorithm"].iloc[:-1]
        assert set(marked) <= {a for a, _ in claims}
        assert set(fit.unsettled()["alg_a"]).isdisjoint({a for a, _ in claims})


def test_the_report_names_the_neighbours_tied_at_this_precision() -> None:
    """The report's ranking-model paragraph names each unsettled neighbour pair (isolated
    names, hostile ones included) and says nothing of ties when every order is settled."""
    from bbt_widget.core.bidi import isolate
    from bbt_widget.outputs.report import _sections as rs

    hostile = {"xgb": "<script>alert(1)</script>", "lgbm": "=cmd|' /C calc'!A0"}
    data = bbt.datasets.load_base().rename(columns=hostile)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = bbt.fit(data, dataset="db", engine="numpy", seed=1)
        short = bbt.ranking_model(data, dataset="db", seed=2, iter_sampling=100, draws="fixed")
        settled = bbt.ranking_model(data, dataset="db", seed=1)
    open_claims = short.unsettled()
    assert not open_claims.empty
    text = " ".join(rs.ranking_model_section(short, result).text)
    assert "tied at this precision (their gap in P(first)" in text
    for a, b in zip(open_claims["alg_a"], open_claims["alg_b"]):
        assert f"{isolate(a)} and {isolate(b)}" in text
    assert not short.ranking.set_index("algorithm").loc[open_claims["alg_a"], "settled"].any()
    assert "neighbours are tied" not in " ".join(rs.ranking_model_section(settled, result).text)
