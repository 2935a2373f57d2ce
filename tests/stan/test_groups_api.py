"""``group=`` beyond ``fit``: ``compare_metrics`` and its command line, ``sweep`` (one fit of
the group model per metric or setting, through the batch layer), and ``fit_laplace``, which
refuses the group model. Real fits of the simulated families of ``test_groups``: X beats Y in
family A and loses to it in family B, Z is last in both."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from test_groups import p_x_over_y, simulated

import bbt_widget as bbt
from bbt_widget.fitting import GROUP_LAPLACE_REFUSAL, fit_laplace, prepare_fit

pytestmark = pytest.mark.stan

#: Few draws: the machine has 2 cores; the simulated effects are large.
SAMPLER = {"chains": 2, "iter_warmup": 400, "iter_sampling": 400}


def two_metrics() -> pd.DataFrame:
    """Long form: ``acc`` from the opposite families, ``f1`` the same scores plus a little
    noise (so each metric is its own fit, with the same known answer)."""
    wide = simulated(1.5, -1.5)
    long = wide.melt(id_vars=["db", "family", "fold"], var_name="algorithm", value_name="acc")
    f1 = long["acc"] + 0.01 * pd.Series(range(len(long))).mod(3).to_numpy()
    return long.assign(f1=f1)


LAYOUT = {"dataset": "db", "algorithm": "algorithm", "fold": "fold"}


@pytest.fixture(scope="module")
def compared() -> bbt.MetricsResult:
    return bbt.compare_metrics(
        two_metrics(), metrics=["acc", "f1"], group="family", seed=5, **LAYOUT, **SAMPLER
    )


def test_compare_metrics_fits_the_group_model_per_metric(compared: bbt.MetricsResult) -> None:
    assert compared.groups == ["A", "B"]
    for metric in ("acc", "f1"):
        result = compared.results[metric]
        assert isinstance(result, bbt.GroupedBBTResult)
        assert result.settings["score"] == metric and result.settings["group"] == "family"
        per = p_x_over_y(result.group_summary()[lambda t: t["pair"].isin({"X > Y", "Y > X"})])
        assert per["A"] > 0.8 and per["B"] < 0.2


def test_dominance_is_pooled_unless_a_group_is_asked(compared: bbt.MetricsResult) -> None:
    # pooled: X and Y cancel out (no claim between them), both beat Z: under the strong rule
    # (mean P about 0.80); their weak claims over Z sit at above_50 of about 0.945, within
    # Monte Carlo error of the 0.95 threshold, and fall either way with the seed or engine
    assert compared.pareto("strong") == ["X", "Y"]
    # in each family one of them dominates the other on both metrics
    assert compared.pareto("weak", group="A") == ["X"]
    assert compared.pareto("weak", group="B") == ["Y"]
    a = compared.dominance("weak", group="A").set_index(["alg_a", "alg_b"])
    assert a.loc[("X", "Y"), "dominates"] and a.loc[("X", "Y"), "metrics_better"] == ["acc", "f1"]
    stacked = compared.group_decisions("weak")
    assert list(stacked.columns) == ["group", "pair", "alg_a", "alg_b", "acc", "f1"]
    assert list(stacked["group"].unique()) == ["pooled", "A", "B"]
    xy = stacked[(stacked["alg_a"] == "X") & (stacked["alg_b"] == "Y")].set_index("group")
    assert list(xy.loc["A", ["acc", "f1"]]) == ["a better", "a better"]
    assert list(xy.loc["B", ["acc", "f1"]]) == ["b better", "b better"]
    with pytest.raises(ValueError, match=r"unknown group 'C'; the groups are \['A', 'B'\]"):
        compared.pareto("weak", group="C")


def test_a_group_without_grouped_fits_is_refused(compared: bbt.MetricsResult) -> None:
    plain = bbt.MetricsResult({}, ["acc"])
    with pytest.raises(ValueError, match=r"these fits have no groups"):
        plain.decisions("weak", group="A")
    with pytest.raises(ValueError, match=r"these fits have no groups"):
        plain.group_decisions()


def test_compare_metrics_checks_each_metrics_groups_before_any_fit() -> None:
    data = two_metrics()
    data.loc[data["db"] == "B3", "family"] = None
    with pytest.raises(ValueError, match=r"metric 'acc': column 'family' has no group for row"):
        bbt.compare_metrics(data, metrics=["acc", "f1"], group="family", **LAYOUT, **SAMPLER)
    # a mapping that leaves a data set out
    mapping = {f"A{d}": "A" for d in range(12)}
    with pytest.raises(ValueError, match=r"data sets with no group in the group mapping: 'B0'"):
        bbt.compare_metrics(two_metrics(), metrics=["acc"], group=mapping, **LAYOUT, **SAMPLER)


def test_the_command_writes_the_report_of_several_metrics_by_family(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bbt_widget import cli

    path = tmp_path / "metrics.csv"
    two_metrics().to_csv(path, index=False)
    out = tmp_path / "r.md"
    words = ["report", str(path), "--algorithm", "algorithm", "--dataset", "db", "--fold"]
    words += ["fold", "--score", "acc", "--score", "f1", "--group", "family", "-o", str(out)]
    words += ["-q", "--chains", "2", "--iter-warmup", "400", "--iter-sampling", "400"]
    code = cli.main(words)
    assert code in (cli.EXIT_OK, cli.EXIT_DIAGNOSTICS), capsys.readouterr().err
    text = out.read_text(encoding="utf-8")
    assert "## Pareto set by family" in text
    assert "| A | X |" in text and "| B | Y |" in text
    assert "## By family: acc" in text and "## By family: f1" in text
    assert "changes between groups" in text
    # the group model's methods sentence once, not once per metric
    assert text.count("A hierarchical version of the model gave each group") == 1
    figures = tmp_path / "r_md_figures"
    assert (figures / "groups.svg").is_file() and (figures / "metric-1-groups.svg").is_file()


def test_fit_laplace_refuses_the_group_model_before_reading_the_results(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The group model's posterior mode misplaces tau (see GROUP_LAPLACE_REFUSAL): no
    approximation is made, the error says to fit with NUTS."""
    from bbt_widget import engines

    def no_fit(*args: object, **kwargs: object) -> None:
        raise AssertionError("approximated")

    monkeypatch.setattr(engines, "laplace", no_fit)
    data = simulated(1.5, -1.5)
    with pytest.raises(ValueError, match=r"no Laplace approximation of the group model") as err:
        fit_laplace(data, dataset="db", fold="fold", group="family", draws=100)
    assert "bbt.fit(..., group=...)" in str(err.value)
    # refused before the results are read: a group column that is not there is not reached
    with pytest.raises(ValueError, match=r"no Laplace approximation of the group model"):
        fit_laplace(data, dataset="db", fold="fold", group="nope")
    # the widget's path: prepared inputs of the group model refuse a preview
    job = prepare_fit(data, dataset="db", fold="fold", group="family", ties="spread", size=(1, 9))
    assert job.model == "bbt_groups" and job.grouping is not None
    with pytest.raises(ValueError, match=r"no Laplace approximation"):
        job.laplace(draws=100)
    assert GROUP_LAPLACE_REFUSAL.startswith("there is no Laplace approximation")


# --------------------------------------------------------------------------- sweep

GRID = {"ties": ["spread", "forget"], "d_min": [None, 0.4]}


@pytest.fixture(scope="module")
def swept() -> bbt.GroupedSweepResult:
    return bbt.sweep(
        simulated(1.5, -1.5),
        dataset="db",
        fold="fold",
        group="family",
        grid=GRID,
        seed=7,
        **SAMPLER,
    )


def x_over_y(frame: pd.DataFrame) -> pd.DataFrame:
    """The X-Y rows of a sweep frame, with the weak decision read as X against Y."""
    rows = frame[frame["pair"].isin({"X > Y", "Y > X"})].copy()
    flip = {"a better": "b better", "b better": "a better"}
    rows["x_vs_y"] = [
        d if p == "X > Y" else flip.get(d, d) for p, d in zip(rows["pair"], rows["weak"])
    ]
    return rows


def test_a_grouped_sweep_shows_each_familys_decisions_in_every_setting(
    swept: bbt.GroupedSweepResult,
) -> None:
    assert isinstance(swept, bbt.GroupedSweepResult) and swept.n_failed == 0
    assert swept.groups == ["A", "B"]
    # pooled: as for every sweep, one row per setting and pair; X and Y cancel out
    assert len(swept.frame) == 4 * 3
    assert set(x_over_y(swept.frame)["x_vs_y"]) == {"no claim"}
    # per group: X better in A and worse in B, under every setting
    g = swept.group_frame
    assert len(g) == 4 * 2 * 3
    assert list(g.columns[:6]) == ["ties", "d_min", "paired", "hyperprior", "prior_scale", "group"]
    xy = x_over_y(g)
    assert set(xy.loc[xy["group"] == "A", "x_vs_y"]) == {"a better"}
    assert set(xy.loc[xy["group"] == "B", "x_vs_y"]) == {"b better"}
    # rows: setting by setting, then group by group
    assert list(g["group"][:6]) == ["A", "A", "A", "B", "B", "B"]
    assert (g["ties"][:6] == "spread").all() and g["d_min"][:6].isna().all()
    # the X-Y decisions never flip within a group; group_flips has the (group, pair) columns
    flips = swept.group_flips("weak")
    assert list(flips.columns) == ["group", "pair", "decision", "n_settings", "settings"]
    assert not flips["pair"].isin({"X > Y", "Y > X"}).any()
    # another ROPE re-summarises the same draws
    wide = swept.group_table(rope=(0.2, 0.8))
    assert (wide["mean"] == g["mean"]).all() and (wide["in_rope"] >= g["in_rope"]).all()


def test_each_setting_is_the_grouped_fit_with_its_seed(swept: bbt.GroupedSweepResult) -> None:
    from bbt_widget.lab.batch import spawn_seeds

    seeds = spawn_seeds(7, 4)
    k = 3  # ties forget, d_min 0.4
    assert swept.settings[k]["ties"] == "forget" and swept.settings[k]["d_min"] == 0.4
    fit = bbt.fit(
        simulated(1.5, -1.5),
        dataset="db",
        fold="fold",
        group="family",
        ties="forget",
        d_min=0.4,
        seed=seeds[k],
        **SAMPLER,
    )
    per = swept.group_frame
    per = per[(per["ties"] == "forget") & (per["d_min"] == 0.4)]
    mine = fit.group_summary().set_index(["group", "pair"])["mean"]
    for row in per.itertuples(index=False):
        expected = mine.get((row.group, row.pair))
        if expected is None:  # the other orientation of the pair
            a, b = row.pair.split(" > ")
            expected = 1 - mine[(row.group, f"{b} > {a}")]
        assert row.mean == pytest.approx(expected, abs=1e-12)


def test_a_grouped_sweep_on_dask_gives_the_same_decisions(
    swept: bbt.GroupedSweepResult,
) -> None:
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        on_dask = bbt.sweep(
            simulated(1.5, -1.5),
            dataset="db",
            fold="fold",
            group="family",
            grid=GRID,
            seed=7,
            executor=client,
            **SAMPLER,
        )
    pd.testing.assert_frame_equal(on_dask.group_frame, swept.group_frame)
    pd.testing.assert_frame_equal(on_dask.frame, swept.frame)


def test_a_grouped_sweep_refuses_bad_groups_before_any_fit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from bbt_widget.lab import sweep as sweep_module

    def no_fit(*args: object, **kwargs: object) -> None:
        raise AssertionError("a fit started")

    monkeypatch.setattr(sweep_module, "run_batch", no_fit)
    data = simulated(1.5, -1.5)
    run = {"dataset": "db", "fold": "fold", **SAMPLER}
    with pytest.raises(ValueError, match=r"group='kind' is not a column of the results"):
        bbt.sweep(data, group="kind", grid=GRID, **run)
    with pytest.raises(ValueError, match=r"sweep grid setting ties='davidson', .*no tie parameter"):
        bbt.sweep(data, group="family", grid={"ties": ["spread", "davidson"]}, **run)
    mapping = {f"A{d}": "A" for d in range(12)}
    with pytest.raises(ValueError, match=r"data sets with no group in the group mapping: 'B0'"):
        bbt.sweep(data.drop(columns="family"), group=mapping, grid=GRID, **run)
    with pytest.raises(ValueError, match=r"every data set is in one group \('all'\)"):
        bbt.sweep(data.assign(family="all"), group="family", grid=GRID, **run)
    with pytest.raises(ValueError, match=r"chains must be an integer >= 1"):
        bbt.sweep(data, group="family", grid=GRID, **{**run, "chains": 0})


def test_the_default_grid_of_a_grouped_sweep_has_no_davidson(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from bbt_widget.lab import sweep as sweep_module

    seen = []

    def record(fits, **kwargs):  # type: ignore[no-untyped-def]
        seen.extend(fits)
        raise KeyboardInterrupt  # stop before any fit

    monkeypatch.setattr(sweep_module, "run_batch", record)
    with pytest.raises(KeyboardInterrupt):
        bbt.sweep(simulated(1.5, -1.5), dataset="db", fold="fold", group="family", **SAMPLER)
    ties = {f.options["ties"] for f in seen}
    assert ties == {"spread", "add", "forget"}
    assert all(f.options["group"] == "family" for f in seen)


# --------------------------------------------------------------------------- the report


def test_influence_refuses_a_fit_of_the_group_model(compared: bbt.MetricsResult) -> None:
    with pytest.raises(ValueError, match=r"influence does not follow the group model"):
        bbt.influence(compared.results["acc"])


def test_the_reports_robustness_sweeps_the_group_model(tmp_path: Path) -> None:
    """A report of the group model with robustness: the sweep refits the group model (no
    davidson setting; the group decisions that change are said) and the influence of single
    data sets, which does not follow the group model, is said not to be computed."""
    path = bbt.report.write(
        simulated(1.5, -1.5),
        tmp_path / "r.md",
        dataset="db",
        fold="fold",
        group="family",
        robustness=True,
        seed=3,
        **SAMPLER,
    )
    text = path.read_text(encoding="utf-8")
    assert "## Robustness: analysis choices" in text
    assert "ties=davidson" not in text
    assert "(group, pair) weak decision(s) change across the settings" in text
    assert "not computed for the group model" in text
    assert "### Data sets that change a claim when left out" not in text
