"""The forecast of claims after more data sets (BBTResult.more_data): checked against full
refits of the same simulated futures, its table's shape and sums, its seeding, the smallest
n that settles a pair, and its errors for bad input."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget.core.more_data import Growth, normal_update
from bbt_widget.lab.more_data import refits

P_COLUMNS = ["p_a_better", "p_b_better", "p_equivalent", "p_no_claim"]


@pytest.fixture(scope="module")
def fitted() -> bbt.BBTResult:
    """The paper's 5 algorithms x 20 data sets, with ties (spread)."""
    return bbt.fit(bbt.datasets.load_base(), dataset="db", chains=2, draws="fixed")


@pytest.mark.slow
def test_grown_posterior_matches_full_refits_of_the_same_futures(
    fitted: bbt.BBTResult,
) -> None:
    """Each future's grown counts, refitted by the numpy engine, give the mean, above_50 and
    in_rope that the normal update gives, within the refits' Monte Carlo error."""
    seen: list[tuple[np.ndarray, ...]] = []
    refit = refits(fitted, chains=2, iter_sampling=500, seed=3)
    draws = refit.chains * refit.iter_sampling

    def both(
        growth: Growth, pairs: Sequence[tuple[int, int]], rope: tuple[float, float]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        approx = normal_update(growth, pairs, rope)
        seen.append((*approx, *refit(growth, pairs, rope)))
        return approx

    fitted.more_data(n=15, draws=3, seed=5, grown=both)
    (mean, above, inside, mean_r, above_r, inside_r) = seen[0]
    # binomial MCSE of a share of the refit's draws, taken at half their number (the chains'
    # autocorrelation), and 4 of them; the mean of P has an sd of a few hundredths
    for approx, exact in ((above, above_r), (inside, inside_r)):
        tolerance = 4 * np.sqrt(exact * (1 - exact) / (draws / 2)) + 0.01
        assert np.all(np.abs(approx - exact) <= tolerance), np.abs(approx - exact).max()
    assert np.abs(mean - mean_r).max() < 0.01


def test_table_shape_and_probabilities_sum_to_one(fitted: bbt.BBTResult) -> None:
    forecast = fitted.more_data(n=(30, 10), rule="weak", draws=200)
    table = forecast.table
    n_pairs = len(fitted.summary())
    assert forecast.n == (10, 30)
    assert len(table) == 2 * n_pairs
    expected = ["alg_a", "alg_b", "n", *P_COLUMNS]
    assert list(table.columns[: len(expected)]) == expected
    assert {f"mcse_{c[2:]}" for c in P_COLUMNS} <= set(table.columns)
    np.testing.assert_allclose(table[P_COLUMNS].sum(axis=1), 1.0)
    # pairs in the summary's order and orientation, n ascending within a pair
    summary = fitted.summary()
    first = table.drop_duplicates(["alg_a", "alg_b"])
    assert list(zip(first.alg_a, first.alg_b)) == list(zip(summary.alg_a, summary.alg_b))
    ns = table.groupby(["alg_a", "alg_b"], sort=False)["n"].apply(tuple)
    assert set(ns) == {(10, 30)}
    # a share of 200 futures has a binomial standard error
    p = table["p_equivalent"]
    np.testing.assert_allclose(table["mcse_equivalent"], np.sqrt(p * (1 - p) / 200))


def test_clear_claims_stay_and_the_rule_is_the_packages(fitted: bbt.BBTResult) -> None:
    """A pair whose claim is far from every threshold keeps it in (nearly) every future; the
    rule chosen by ``None`` is the one ``"auto"`` picks for 5 algorithms (weak)."""
    forecast = fitted.more_data(n=20, draws=200)
    assert forecast.rule == "weak"
    summary = fitted.summary()
    clear = summary[(summary["above_50"] == 1.0) & (summary["weak"] == "a better")]
    assert len(clear) > 0
    rows = forecast.table.merge(clear[["alg_a", "alg_b"]])
    assert (rows["p_a_better"] > 0.95).all()


def test_seeded(fitted: bbt.BBTResult) -> None:
    one = fitted.more_data(n=(5, 20), draws=100, seed=7).table
    again = fitted.more_data(n=(5, 20), draws=100, seed=7).table
    other = fitted.more_data(n=(5, 20), draws=100, seed=8).table
    pd.testing.assert_frame_equal(one, again)
    assert not one[P_COLUMNS].equals(other[P_COLUMNS])


def test_the_other_rule_reuses_the_futures_updates(
    fitted: bbt.BBTResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A forecast under the other rule with the same settings reads the updates already made
    (the widget draws both rules for a pair), and equals one computed afresh."""
    from bbt_widget.core import more_data

    fresh = fitted.more_data(n=(5, 20), rule="strong", draws=100, seed=4, grown=normal_update)
    fitted.more_data(n=(5, 20), rule="weak", draws=100, seed=4)

    def refuse(*args: object) -> None:
        raise AssertionError("the updates were computed again")

    monkeypatch.setattr(more_data, "_moments", refuse)
    again = fitted.more_data(n=(5, 20), rule="strong", draws=100, seed=4)
    pd.testing.assert_frame_equal(fresh.table, again.table)
    assert again.method == "normal"
    with pytest.raises(AssertionError, match="computed again"):  # other settings: new updates
        fitted.more_data(n=(5, 20), rule="strong", draws=100, seed=5)


def test_smallest_n_is_the_first_n_where_a_claim_is_likelier_than_not(
    fitted: bbt.BBTResult,
) -> None:
    forecast = fitted.more_data(n=(5, 20, 80), rule="weak", draws=200)
    table, settles = forecast.table, forecast.settles
    open_now = table.loc[table["claim_now"] == "no claim", ["alg_a", "alg_b"]].drop_duplicates()
    assert len(settles) == len(open_now) > 0
    for row in settles.itertuples(index=False):
        rows = table[(table.alg_a == row.alg_a) & (table.alg_b == row.alg_b)]
        likely = rows.loc[rows["p_no_claim"] < 0.5, "n"]
        if likely.empty:
            assert pd.isna(row.smallest_n) and row.label == "not within 80"
        else:
            assert row.smallest_n == likely.min() and row.label == str(likely.min())


@pytest.mark.parametrize(
    ("n", "match"),
    [
        (0, "integer >= 1"),
        ((10, -5), "integer >= 1"),
        ((), "at least one"),
        ((10, 10), "twice"),
        (2.5, "integer >= 1"),
        ("50", "integer >= 1"),
    ],
)
def test_bad_n_is_named(fitted: bbt.BBTResult, n: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        fitted.more_data(n=n, draws=10)  # type: ignore[arg-type]


def test_bad_rule_and_draws_are_named(fitted: bbt.BBTResult) -> None:
    with pytest.raises(ValueError, match="interpretation must be one of"):
        fitted.more_data(n=10, rule="medium")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="draws"):
        fitted.more_data(n=10, draws=0)


def test_normal_update_with_no_new_games_is_the_current_posterior(
    fitted: bbt.BBTResult,
) -> None:
    """With nothing added, the normal update of the fitted counts agrees with the fit's own
    summary (the approximation's error alone, small with 20 games per pair)."""
    raw = fitted._raw_counts
    index = {a: k for k, a in enumerate(fitted.algorithms)}
    counts = raw[["win1", "win2", "ties"]].to_numpy()[None]
    half = (counts[..., 2] + 1) // 2  # the spread policy
    growth = Growth(
        raw["alg1"].map(index).to_numpy(),
        raw["alg2"].map(index).to_numpy(),
        (counts[..., 0] + half).astype(float),
        (counts[..., 1] + half).astype(float),
        float(fitted.draws.params["sigma"].mean()),
        fitted.beta.mean(axis=0),
        counts,
    )
    mean, above, inside = normal_update(growth, fitted._pairs, (0.45, 0.55))
    summary = fitted.summary()
    np.testing.assert_allclose(mean[0], summary["mean"], atol=0.01)
    np.testing.assert_allclose(above[0], summary["above_50"], atol=0.05)
    np.testing.assert_allclose(inside[0], summary["in_rope"], atol=0.05)


@pytest.mark.parametrize(
    ("value", "match"),
    [("50,x", "separated by commas"), ("50,,100", "separated by commas"), ("0", ">= 1")],
)
def test_report_option_names_bad_numbers(value: str, match: str) -> None:
    from bbt_widget.outputs.report._more_data import parse_more_data

    with pytest.raises(ValueError, match=match):
        parse_more_data(value)
    assert parse_more_data(" 100, 50") == (50, 100)


def test_report_refuses_more_data_for_davidson_before_any_fit(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="plain Bradley-Terry"):
        bbt.report.write(
            bbt.datasets.load_base(), tmp_path / "r.md", dataset="db", ties="davidson",
            more_data="50",
        )  # fmt: skip
    assert not (tmp_path / "r.md").exists()


def _csv(tmp_path) -> list[str]:  # type: ignore[no-untyped-def]
    """The command line of a report of the paper's base results, written as a CSV."""
    path = tmp_path / "base.csv"
    bbt.datasets.load_base().to_csv(path, index=False)
    return ["report", str(path), "--dataset", "db", "-q", "--with", "none"]


def test_command_refuses_bad_more_data_before_the_fit(tmp_path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from bbt_widget import cli

    monkeypatch.setattr(bbt, "fit", lambda *a, **k: pytest.fail("fitted"))
    words = [*_csv(tmp_path), "--more-data", "50,lots", "-o", str(tmp_path / "r.md")]
    assert cli.main(words) == cli.EXIT_INPUT
    err = capsys.readouterr().err
    assert "--more-data 50,lots" in err and "e.g. 50,100" in err


def test_command_passes_more_data_to_the_report(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from bbt_widget import cli
    from bbt_widget.outputs.report import _build

    seen: dict[str, object] = {}

    def record(result, request, **options):  # type: ignore[no-untyped-def]
        seen["more_data"] = request.more_data
        return request.path

    monkeypatch.setattr(_build, "report_of_fit", record)
    words = [*_csv(tmp_path), "--more-data", "100,25", "-o", str(tmp_path / "r.md")]
    assert cli.main(words) in (cli.EXIT_OK, cli.EXIT_DIAGNOSTICS)
    assert seen["more_data"] == (25, 100)


def test_chart_frame_has_one_curve_per_pair_and_rule(fitted: bbt.BBTResult) -> None:
    weak = fitted.more_data(n=(5, 20), rule="weak", draws=100)
    strong = fitted.more_data(n=(5, 20), rule="strong", draws=100)
    pair = (weak.table["alg_a"][0], weak.table["alg_b"][0])
    frame = bbt.charts.more_data_frame([weak, strong], [pair])
    assert sorted(frame["rule"]) == ["strong", "strong", "weak", "weak"]
    assert (frame["alg_a"] == pair[0]).all() and (frame["alg_b"] == pair[1]).all()
    rows = weak.table[(weak.table.alg_a == pair[0]) & (weak.table.alg_b == pair[1])]
    mine = frame[frame["rule"] == "weak"]
    np.testing.assert_allclose(mine["p_claim"], 1 - rows["p_no_claim"])
    assert ((mine["low"] <= mine["p_claim"]) & (mine["p_claim"] <= mine["high"])).all()
    assert frame[["low", "high"]].stack().between(0, 1).all()
    spec = bbt.charts.more_data_chart(frame).to_dict()
    assert spec["title"] == "P(claim) with more data sets (strong and weak rule)"


def test_raw_counts_are_those_the_fit_counted(fitted: bbt.BBTResult) -> None:
    """The forecast grows the counts before the tie policy: under the fit's policy they are
    the fitted win table."""
    from bbt_widget.core.wintable import apply_ties

    columns = ["alg1", "alg2", "win1", "win2"]
    grown = apply_ties(fitted._raw_counts, "spread")[columns]
    pd.testing.assert_frame_equal(grown, fitted.win_table[columns], check_dtype=False)
    assert fitted._raw_counts["ties"].sum() > 0  # the case has ties to simulate


def test_a_pair_subset_is_its_rows_of_the_forecast_of_every_pair(fitted: bbt.BBTResult) -> None:
    """``pairs=`` (either order) forecasts those pairs from the same futures: their rows equal
    those of the forecast of every pair, in the summary's orientation."""
    full = fitted.more_data(n=(5, 20), rule="strong", draws=100, seed=3, grown=normal_update)
    summary = fitted.summary()
    first, last = summary.iloc[0], summary.iloc[-1]
    asked = [(first.alg_b, first.alg_a), (last.alg_a, last.alg_b)]  # the first one reversed
    some = fitted.more_data(n=(5, 20), rule="strong", draws=100, seed=3, pairs=asked)
    named = {(first.alg_a, first.alg_b), (last.alg_a, last.alg_b)}
    rows = full.table[[(a, b) in named for a, b in zip(full.table.alg_a, full.table.alg_b)]]
    pd.testing.assert_frame_equal(some.table, rows.reset_index(drop=True))
    open_rows = full.settles[
        [(a, b) in named for a, b in zip(full.settles.alg_a, full.settles.alg_b)]
    ]
    pd.testing.assert_frame_equal(some.settles, open_rows.reset_index(drop=True))
    # the updates remembered for these pairs serve every pair's forecast, and the reverse
    again = fitted.more_data(n=(5, 20), rule="strong", draws=100, seed=3)
    pd.testing.assert_frame_equal(again.table, full.table)


def test_other_pairs_reuse_the_futures_updates(
    fitted: bbt.BBTResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The widget forecasts one pair at a time: the next pair, or another ROPE, reads the
    updates the first one made (the costly part), and equals a fresh forecast."""
    from bbt_widget.core import more_data

    summary = fitted.summary()
    first, second = [(r.alg_a, r.alg_b) for r in summary.head(2).itertuples()]
    fitted.more_data(n=(5, 20), rule="weak", draws=100, seed=6, pairs=[first])

    def refuse(*args: object) -> None:
        raise AssertionError("the updates were computed again")

    monkeypatch.setattr(more_data, "_moments", refuse)
    other = fitted.more_data(n=(5, 20), rule="strong", draws=100, seed=6, pairs=[second])
    strong = fitted.more_data(n=(5, 20), rule="strong", draws=100, seed=6)
    rows = strong.table[(strong.table.alg_a == second[0]) & (strong.table.alg_b == second[1])]
    pd.testing.assert_frame_equal(other.table, rows.reset_index(drop=True))
    # another ROPE too (the widget's ROPE control): the same numbers as afresh
    wide = fitted.more_data(n=(5, 20), rule="weak", rope=(0.4, 0.6), draws=100, seed=6)
    monkeypatch.undo()
    fresh = fitted.more_data(
        n=(5, 20), rule="weak", rope=(0.4, 0.6), draws=100, seed=6, grown=normal_update
    )
    pd.testing.assert_frame_equal(wide.table, fresh.table)


@pytest.mark.parametrize(
    ("pairs", "match"),
    [
        ([("nope", "x")], "'nope' is not an algorithm"),
        ([("a",)], "two different algorithms"),
        (["ab"], "two different algorithms"),
        ([], "at least one pair"),
    ],
)
def test_bad_pairs_are_named(fitted: bbt.BBTResult, pairs: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        fitted.more_data(n=10, draws=10, pairs=pairs)  # type: ignore[arg-type]


def test_a_pair_of_one_algorithm_is_refused(fitted: bbt.BBTResult) -> None:
    name = fitted.algorithms[0]
    with pytest.raises(ValueError, match="two different algorithms"):
        fitted.more_data(n=10, draws=10, pairs=[(name, name)])
