"""The group model with real fits: families where X beats Y in one and loses in the other are
told apart (the pooled P(X > Y) stays near 0.5), and equal families agree with the pooled fit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt

pytestmark = pytest.mark.stan

#: Few iterations: the machine has 2 cores; the simulated effects are large.
SAMPLER = {"chains": 2, "iter_warmup": 500, "iter_sampling": 500, "seed": 3}


def simulated(shift_a: float, shift_b: float, n: int = 12, seed: int = 0) -> pd.DataFrame:
    """Wide by fold: per family ``n`` data sets x 3 folds. X - Y is ``shift_a`` in family A and
    ``shift_b`` in family B (fold noise sd 0.3); Z is 1 below their mean everywhere."""
    rng = np.random.default_rng(seed)
    rows = []
    for family, shift in (("A", shift_a), ("B", shift_b)):
        for d in range(n):
            base = rng.normal(0, 1)
            for f in range(3):
                rows.append(
                    {
                        "db": f"{family}{d}",
                        "family": family,
                        "fold": f,
                        "X": base + shift / 2 + rng.normal(0, 0.3),
                        "Y": base - shift / 2 + rng.normal(0, 0.3),
                        "Z": base - 1.0 + rng.normal(0, 0.3),
                    }
                )
    return pd.DataFrame(rows)


def p_x_over_y(table: pd.DataFrame) -> dict[str, float]:
    """Mean P(X > Y) per row of a group summary or summary, oriented X first."""
    out = {}
    for row in table.itertuples(index=False):
        group = getattr(row, "group", "pooled")
        out[group] = row.mean if row.pair == "X > Y" else 1 - row.mean
    return out


def test_opposite_families_are_told_apart() -> None:
    data = simulated(1.5, -1.5)
    result = bbt.fit(data, dataset="db", fold="fold", group="family", **SAMPLER)
    assert isinstance(result, bbt.GroupedBBTResult)
    assert result.groups == ["A", "B"]
    pair = {"X > Y", "Y > X"}
    pooled = p_x_over_y(result.summary()[lambda t: t["pair"].isin(pair)])["pooled"]
    groups = p_x_over_y(result.group_summary()[lambda t: t["pair"].isin(pair)])
    assert groups["A"] > 0.8 and groups["B"] < 0.2
    assert abs(pooled - 0.5) < 0.15
    claims = result.group_claims("weak").set_index("pair")
    xy = next(p for p in claims.index if p in pair)
    assert claims.loc[xy, "status"] == "changes between groups"
    # both families put Z last: that claim holds everywhere
    for p in ("X > Z", "Y > Z"):
        assert claims.loc[p, "status"] == "holds in every group"
    ranking = result.group_ranking()
    assert ranking.groupby("group")["algorithm"].first().to_dict() == {"A": "X", "B": "Y"}
    assert result.diagnostics().max_rhat < 1.05
    # one fitted row per group and pair, each with its replicates
    assert len(result.ppc_table()) == 4
    assert result.idata.observed_data["win1"].shape == (6,)


def test_equal_families_agree_with_the_pooled_fit() -> None:
    data = simulated(0.8, 0.8, seed=1)
    result = bbt.fit(data, dataset="db", fold="fold", group="family", **SAMPLER)
    pooled = result.summary().set_index("pair")["mean"]
    per = result.group_summary()
    for g, table in per.groupby("group"):
        diff = (table.set_index("pair")["mean"] - pooled).abs().max()
        assert diff < 0.08, (g, diff)
    # the groups' posterior of tau stays at the small values its prior allows
    assert float(np.median(result.draws.params["tau"])) < 0.5
    plain = bbt.fit(data.drop(columns="family"), dataset="db", fold="fold", **SAMPLER)
    assert (result.win_table == plain.win_table).all().all()
    gap = (plain.summary().set_index("pair")["mean"] - pooled).abs().max()
    assert gap < 0.08


def test_report_has_a_by_family_section(tmp_path: Path) -> None:
    data = simulated(1.5, -1.5)
    path = bbt.report.write(
        data, tmp_path / "groups.md", dataset="db", fold="fold", group="family", **SAMPLER
    )
    text = path.read_text(encoding="utf-8")
    assert "By family" in text
    assert "Claims by group" in text and "Ranking in each group" in text
    assert "changes between groups" in text
    assert "A: b better; B: a better" in text or "A: a better; B: b better" in text
    assert "half-Normal(0, 0.5)" in text
    # the pairs x groups decision heatmap, pooled column first
    figure = tmp_path / "groups_md_figures" / "groups.svg"
    assert figure.is_file() and "groups.svg" in text
    svg = figure.read_text(encoding="utf-8")
    assert "pooled" in svg and "Decisions by group" in svg


def test_cli_report_with_group(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bbt_widget import cli

    path = tmp_path / "fam.csv"
    simulated(1.5, -1.5).to_csv(path, index=False)
    out = tmp_path / "r.md"
    words = ["report", str(path), "--dataset", "db", "--fold", "fold", "--group", "family"]
    words += ["-o", str(out), "-q", "--chains", "2", "--iter-warmup", "500"]
    code = cli.main([*words, "--iter-sampling", "500", "--seed", "3"])
    assert code in (cli.EXIT_OK, cli.EXIT_DIAGNOSTICS, cli.EXIT_CHARTS)
    text = out.read_text(encoding="utf-8")
    assert "## By family" in text and "changes between groups" in text
    # the group column was not read as an algorithm
    assert "| family |" not in text
