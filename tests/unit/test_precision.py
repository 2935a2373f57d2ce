"""The Monte Carlo standard errors a fit reports are the spread its numbers show over seeds,
and the claims within 3 of them of a threshold are named unsettled.

Real fits on the numpy engine: the paper's base results (5 x 20, where the Gibbs sampler
samples) and the shipped 16 x 132 results (mostly the independence kernel), 20 seeds each."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget.core import precision

SEEDS = 20


def rope_on_its_mean(res: bbt.BBTResult, pair: str, above: float = 0.0) -> tuple[float, float]:
    """A symmetric ROPE whose upper bound lies ``above`` the pair's mean of P(a > b) (its
    own Monte Carlo standard errors; 0: on it): a claim on its threshold. The conditional
    estimates settle every claim of the shipped results at the first round, so the tests
    of unsettled claims make one."""
    row = res.summary().set_index("pair").loc[pair]
    mean, error = row["mean"], res.precision().set_index("pair").loc[pair, "mcse_mean"]
    if res.conditional_draws is not None:
        # its estimate over every draw, the last the summary would make near a threshold
        every = res.conditional_draws(
            [res._pairs[res._pair_labels.index(pair)]], (0.45, 0.55), look="all"
        )[0, ..., 0]
        mean, error = every.mean(), precision.mcse(every)
    bound = float(mean + above * error)
    assert 0.5 < bound < 0.6, bound
    return (1.0 - bound, bound)


def _fits(data: pd.DataFrame) -> list[bbt.BBTResult]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [
            bbt.fit(data, dataset="db", engine="numpy", seed=s, draws="fixed") for s in range(SEEDS)
        ]


@pytest.mark.slow
@pytest.mark.parametrize("case", ["base", "pmlb16"])
def test_the_reported_mcse_is_the_spread_over_seeds(case: str) -> None:
    """Pooled over pairs, the root mean square of the reported MCSE is within a factor 1.5 of
    the standard deviation of the reported value over 20 seeds: for the mean of P(a > b),
    and for above_50 where it is not 0 or 1 (an indicator that never changes has no spread
    to compare)."""
    data = bbt.datasets.load_base() if case == "base" else bbt.datasets.load_pmlb16()
    fits = _fits(data)
    kernels = [f.draws.info["kernel"] for f in fits]
    if case == "base":
        assert set(kernels) == {"gibbs"}
    else:  # the warm-up's acceptance decides; on these results it mostly keeps the kernel
        assert kernels.count("independence") >= SEEDS * 3 // 4, kernels
    summaries = [f.summary() for f in fits]
    errors = [f.precision() for f in fits]
    for quantity in ("mean", "above_50"):
        values = np.array([s[quantity].to_numpy() for s in summaries])  # seeds x pairs
        reported = np.array([e[f"mcse_{quantity}"].to_numpy() for e in errors])
        usable = ((values > 0.02) & (values < 0.98)).all(axis=0)
        if usable.sum() < 3:
            continue
        spread = np.sqrt((values[:, usable].std(axis=0, ddof=1) ** 2).mean())
        claimed = np.sqrt((reported[:, usable] ** 2).mean())
        assert 1 / 1.5 < claimed / spread < 1.5, (quantity, claimed, spread)


def test_claims_near_their_threshold_are_unsettled_and_far_ones_are_not() -> None:
    rope = (0.45, 0.55)
    summary = pd.DataFrame(
        {
            "pair": ["a > b", "a > c", "b > c"],
            "alg_a": ["a", "a", "b"],
            "alg_b": ["b", "c", "c"],
            "mean": [0.7004, 0.9, 0.52],
            "above_50": [0.951, 1.0, 0.6],
            "in_rope": [0.1, 0.0, 0.9499],
            "weak": ["a better", "a better", "no claim"],
            "strong": ["a better", "a better", "equivalent"],
        }
    )
    errors = pd.DataFrame(
        {
            "mcse_mean": [0.0003, 0.0003, 0.0003],
            "mcse_above_50": [0.003, 0.00025, 0.01],
            "mcse_in_rope": [0.004, 0.00025, 0.004],
        }
    )
    found = precision.unsettled(summary, errors, rope, z=3.0)
    got = set(zip(found["pair"], found["rule"], found["quantity"]))
    assert got == {
        ("a > b", "strong", "mean"),  # 0.7004 is 1.3 MCSE above 0.70
        ("a > b", "weak", "above_50"),  # 0.951 is 0.3 MCSE above 0.95
        ("b > c", "weak", "in_rope"),  # 0.9499 is just below 0.95
    }
    assert found.loc[found["pair"] == "a > b", "threshold"].tolist() == [0.95, 0.7]


def test_a_fits_unsettled_claims_are_those_within_z_mcse() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = bbt.fit(bbt.datasets.load_pmlb16(), dataset="db", engine="numpy", seed=1)
    found = res.unsettled(z=3.0)
    errors = res.precision().set_index("pair")
    for row in found.itertuples(index=False):
        error = errors.loc[row.pair, f"mcse_{row.quantity}"]
        assert row.mcse == error and abs(row.value - row.threshold) < 3 * error
    # and a looser z names at least as many
    assert len(res.unsettled(z=6.0)) >= len(found)


@pytest.mark.slow
def test_the_report_and_the_command_line_name_the_unsettled_claims(tmp_path, capsys) -> None:
    """The results paragraph and the terminal say which claims are unsettled at this
    precision (each with its quantity and threshold, its error to two significant digits),
    or that none is: with the ROPE's upper bound half an MCSE from the mean of rf > xgb, the
    strong rule's claim for that pair sits at its threshold."""
    from bbt_widget import cli
    from bbt_widget.outputs.methods_text import methods_text, precision_sentence

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = bbt.fit(
            bbt.datasets.load_pmlb16(), dataset="db", engine="numpy", seed=1, draws="fixed"
        )
    rope = rope_on_its_mean(res, "rf > xgb", above=0.5)  # within 3 MCSE, not 0.01
    found = res.unsettled(rope, 0.89)
    strong = found[found["rule"] == "strong"]
    sentence = precision_sentence(res, "strong", rope, 0.89)
    assert strong["pair"].tolist() == ["rf > xgb"]
    for row in strong.itertuples(index=False):
        assert row.claim == "no claim"  # a claim the seed could flip is not made
        assert 0 < row.mcse < 1e-4  # a conditional estimate's error
        # the error to two significant digits, the value to as many decimals
        shown = re.search(
            rf"{re.escape(row.pair)} \(mean (0\.\d+) ± (0\.0*)(\d+) against", sentence
        )
        assert shown and len(shown[3]) == 2, sentence
        assert float(shown[1]) == pytest.approx(row.value, abs=float(shown[2] + shown[3]))
    assert "unsettled at this precision" in sentence
    assert "± 0.0000 " not in sentence
    assert "No pair lies within 0.01 Monte Carlo" in precision_sentence(
        res, "strong", rope, 0.89, z=0.01
    )
    assert "No pair lies within 3 Monte Carlo" in precision_sentence(
        res, "weak", (0.45, 0.55), 0.89
    )
    assert "unsettled at this precision" in methods_text(res, interpretation="strong", rope=rope)
    csv = tmp_path / "p.csv"
    bbt.datasets.load_pmlb16().to_csv(csv, index=False)
    out = str(tmp_path / "r.md")
    argv = ["report", str(csv), "-o", out, "-q", "--seed", "1", "--with", "none"]
    assert cli.main([*argv, "--rope", repr(rope[0]), repr(rope[1])]) == 0
    printed = capsys.readouterr().out
    # the default fit samples on until its claims settle: the terminal says where it stands
    assert "Monte Carlo standard errors" in printed


def test_a_claim_within_z_mcse_of_its_threshold_is_not_made() -> None:
    """settled_decisions keeps a rule's claim only where it holds over the whole band of
    +/- z MCSE around the estimates: 0.951 +/- 0.009 straddles 0.95 (no claim), 0.99 does not;
    a mean of 0.7004 +/- 0.0009 straddles 0.70."""
    rope = (0.45, 0.55)
    summary = pd.DataFrame(
        {
            "pair": ["a > b", "a > c", "b > c"],
            "mean": [0.7004, 0.9, 0.52],
            "above_50": [0.951, 0.99, 0.6],
            "in_rope": [0.1, 0.0, 0.96],
            "weak": ["a better", "a better", "equivalent"],
            "strong": ["a better", "a better", "equivalent"],
        }
    )
    errors = pd.DataFrame(
        {
            "mcse_mean": [0.0003, np.nan, 0.0003],
            "mcse_above_50": [0.003, np.nan, 0.01],
            "mcse_in_rope": [0.004, np.nan, 0.001],
        }
    )
    got = precision.settled_decisions(summary, errors, rope, z=3.0)
    assert got["weak"].tolist() == ["no claim", "a better", "equivalent"]
    assert got["strong"].tolist() == ["no claim", "a better", "equivalent"]
    # with a tighter band the near claims stand
    assert precision.settled_decisions(summary, errors, rope, z=0.1)["weak"].iloc[0] == "a better"


def test_the_screen_leaves_out_only_settled_pairs() -> None:
    """The summary computes MCSE only for pairs the screen finds near a threshold; the
    claims it names unsettled are exactly those that the full MCSE table names."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = bbt.fit(
            bbt.datasets.load_pmlb16(), dataset="db", engine="numpy", seed=2, draws="fixed"
        )
    rope = rope_on_its_mean(res, "rf > xgb")
    summary = res.summary(rope)
    full = precision.unsettled(summary, res.precision(rope).iloc[:, 3:], rope, 3.0)
    screened = res.unsettled(rope)
    assert len(full) >= 1
    cols = ["pair", "rule", "quantity", "value", "mcse"]
    pd.testing.assert_frame_equal(screened[cols], full[cols])
    assert len(res.__dict__["_mcse_by_rope"][rope]) < len(summary) // 2


@pytest.mark.slow
def test_auto_draws_add_chains_while_a_claim_can_settle_and_fixed_does_not(monkeypatch) -> None:
    """With claims open after the first round: draws="auto" adds the chains they need (at
    most the budget, 4 times the first round), seeded from the fit's seed (the same seed
    gives the same draws), re-checks only the pairs still open after each round (no summary
    of every pair but the first round's), and reports what it did; "fixed" keeps the first
    round; the first round's chains are the fixed fit's. The conditional estimates settle
    every claim of the shipped results at the first round, so a claim counts as settled here
    only 200 MCSE from its threshold."""
    from bbt_widget.core import result as result_module
    from bbt_widget.fitting import prepared

    monkeypatch.setattr(prepared, "DEFAULT_Z", 200.0)
    summarised: list[int] = []  # the pairs of each summary table the fit computes
    summarise = result_module.posterior.summarise

    def recorded(p_sorted: np.ndarray, *args: object, **kwargs: object) -> pd.DataFrame:
        summarised.append(p_sorted.shape[1])
        return summarise(p_sorted, *args, **kwargs)  # type: ignore[arg-type]

    data = bbt.datasets.load_pmlb16()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fixed = bbt.fit(data, dataset="db", engine="numpy", seed=3, draws="fixed")
        monkeypatch.setattr(result_module.posterior, "summarise", recorded)
        auto = bbt.fit(data, dataset="db", engine="numpy", seed=3)
        monkeypatch.setattr(result_module.posterior, "summarise", summarise)
        again = bbt.fit(data, dataset="db", engine="numpy", seed=3, draws="auto")
    # every pair is checked once, after the first round; each later round re-checks the
    # pairs still open then, not every pair
    assert len(summarised) == auto.settings["rounds"] and summarised[0] == 120
    assert all(0 < n < 120 for n in summarised[1:]), summarised
    assert len(fixed.unsettled(z=200.0)) >= 1
    assert fixed.draws.params["beta"].shape[0] == 4 and fixed.settings["draws"] == "fixed"
    assert auto.settings["draws"] == "auto" and auto.settings["rounds"] >= 2
    assert 4 < auto.draws.params["beta"].shape[0] == auto.settings["chains_drawn"] <= 16
    np.testing.assert_array_equal(auto.draws.params["beta"][:4], fixed.draws.params["beta"])
    np.testing.assert_array_equal(auto.draws.params["beta"], again.draws.params["beta"])
    # more draws: smaller errors, and no more open claims than the first round left
    assert auto.precision()["mcse_mean"].max() < fixed.precision()["mcse_mean"].max()
    assert len(auto.unsettled(z=200.0)) <= len(fixed.unsettled(z=200.0))
    with pytest.raises(ValueError, match="draws must be one of auto, fixed"):
        bbt.fit(data, dataset="db", engine="numpy", draws="many")  # type: ignore[arg-type]


def test_a_later_round_draws_what_the_open_claims_need_not_the_budget() -> None:
    """One claim open at 4000 draws, 3 MCSE needing 1.5 times its distance: (1.5^2) x 1.25
    = 2.8 times the draws, so 8 more chains of 1000 (not the 12 the budget allows, which
    every later round drew); a claim on its threshold (closer than the summary's three
    decimals can tell) or needing more than 4 budgets adds none; several open claims: the
    one that needs most, within the budget."""
    from bbt_widget.core.settling import chains_needed

    def claims(*rows: tuple[float, float]) -> pd.DataFrame:
        return pd.DataFrame(
            [(0.95 + gap, 0.95, error) for gap, error in rows],
            columns=["value", "threshold", "mcse"],
        )

    one = claims((0.002, 0.001))  # 2 MCSE away: needs (3 / 2)^2 x 1.25 = 2.8 x 4000
    assert chains_needed(one, 4000, 1000, 16000, 3.0) == 8
    assert chains_needed(claims((0.0, 0.001)), 4000, 1000, 16000, 3.0) == 0
    assert chains_needed(claims((0.0001, 0.001)), 4000, 1000, 16000, 3.0) == 0
    # 2 MCSE away too, but closer than the shown digits can tell (0.9502 and 0.95 both read
    # 0.950): on its threshold, so no round is drawn for it
    assert chains_needed(claims((0.0002, 0.0001)), 4000, 1000, 16000, 3.0) == 0
    assert chains_needed(claims((-0.0004, 0.0002)), 4000, 1000, 16000, 3.0) == 0
    both = claims((0.002, 0.001), (0.0025, 0.001))
    assert chains_needed(both, 4000, 1000, 16000, 3.0) == 8
    assert chains_needed(claims((0.0012, 0.001)), 4000, 1000, 16000, 3.0) == 12  # the budget
    assert chains_needed(claims(), 4000, 1000, 16000, 3.0) == 0


def test_auto_draws_stop_after_the_first_round_when_every_claim_is_settled() -> None:
    """Three well-separated algorithms: every claim is far from its threshold, so "auto"
    draws exactly what "fixed" draws."""
    data = bbt.datasets.load_pmlb16()[["db", "lgbm", "knn", "nb"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auto = bbt.fit(data, dataset="db", engine="numpy", seed=1)
    assert auto.unsettled().empty
    assert auto.settings["rounds"] == 1 and auto.draws.params["beta"].shape[0] == 4


def test_later_rounds_are_joined_as_more_chains() -> None:
    from bbt_widget.core.draws import Draws, joined, round_seed

    one = Draws(
        {"beta": np.zeros((2, 5, 3))},
        {"lp__": np.zeros((2, 5))},
        "numpy",
        timings={"sample": 1.0},
        info={"kernel": "independence", "seed": 1},
    )
    two = Draws(
        {"beta": np.ones((3, 5, 3))},
        {"lp__": np.ones((3, 5))},
        "numpy",
        timings={"sample": 0.5},
        info={"kernel": "gibbs", "seed": 9},
    )
    both = joined(one, two)
    assert both.params["beta"].shape == (5, 5, 3) and both.sampler["lp__"].shape == (5, 5)
    assert both.timings["sample"] == 1.5 and both.info["kernel"] == "independence+gibbs"
    seeds = {round_seed(1, r) for r in range(1, 20)} | {round_seed(2, 1)}
    assert len(seeds) == 20 and all(1 <= s < 2**31 - 1 for s in seeds)
