"""``compare_metrics`` with real fits: a simulated dominance structure found again, each
metric's result equal to the plain fit with its seed, and the same draws on a Dask
LocalCluster as on the local cores."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget.lab.batch import spawn_seeds

pytestmark = pytest.mark.stan

#: Few iterations: the machine has 2 cores; 20-0 win records decide the claims clearly.
SAMPLER = {"chains": 2, "iter_warmup": 300, "iter_sampling": 300}


def simulated(n: int = 20) -> pd.DataFrame:
    """Long form, one row per data set and algorithm, on every data set:
    acc: A = B + 0.10, C = B + 0.05 (A > C > B); f1: A = B, C = A + 0.1 (C best, A and B
    tie everywhere); time, lower is better: A = B, C = A + 1 (A and B tie, both beat C).
    So A dominates B (better on acc, worse on nothing); A and C, and C and B, each win on
    some metric: the Pareto set is {A, C}."""
    rows = []
    for d in range(n):
        base, f1, time = 0.7 + d / 100, 0.6 + d / 100, 1.0 + d / 10
        for alg, acc, f, t in (
            ("A", base + 0.10, f1, time),
            ("B", base, f1, time),
            ("C", base + 0.05, f1 + 0.1, time + 1.0),
        ):
            rows.append({"db": f"d{d}", "alg": alg, "acc": acc, "f1": f, "time": t})
    return pd.DataFrame(rows)


OPTIONS = {
    "metrics": ["acc", "f1", "time"],
    "lower_is_better": ["time"],
    "dataset": "db",
    "algorithm": "alg",
    **SAMPLER,
}


@pytest.fixture(scope="module")
def compared() -> bbt.MetricsResult:
    return bbt.compare_metrics(simulated(), seed=5, **OPTIONS)


def test_the_simulated_dominance_is_found(compared):
    assert set(compared.results) == {"acc", "f1", "time"} and not compared.errors
    assert compared.algorithms == ["A", "B", "C"]
    dec = compared.decisions("weak").set_index("pair")
    assert dec.loc["A > B", "acc"] == "a better"
    assert dec.loc["A > B", "f1"] not in ("a better", "b better")
    assert dec.loc["A > C"].tolist()[2:] == ["a better", "b better", "a better"]
    assert dec.loc["B > C"].tolist()[2:] == ["b better", "b better", "a better"]
    dom = compared.dominance("weak")
    assert dom.loc[dom["dominates"], ["alg_a", "alg_b"]].values.tolist() == [["A", "B"]]
    assert compared.pareto("weak") == ["A", "C"]
    # time is lower-is-better: its fit says so, and ranks A and B (the fast ones) above C
    assert compared.results["time"].settings["lower_is_better"] is True
    assert compared.results["time"].ranking()["algorithm"].iloc[-1] == "C"


def test_each_metric_is_the_plain_fit_with_its_seed(compared):
    seeds = spawn_seeds(5, 3)
    plain = bbt.fit(
        simulated(),
        dataset="db",
        algorithm="alg",
        score="time",
        lower_is_better=True,
        seed=seeds[2],
        **SAMPLER,
    )
    np.testing.assert_array_equal(compared.results["time"].beta, plain.beta)
    assert compared.results["time"].settings["seed"] == seeds[2]


def test_a_dask_cluster_gives_the_same_draws(compared):
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        fractions: list[float] = []
        on_dask = bbt.compare_metrics(
            simulated(),
            seed=5,
            executor=client,
            progress=lambda s, f: fractions.append(f),
            **OPTIONS,
        )
    for metric in OPTIONS["metrics"]:
        np.testing.assert_array_equal(on_dask.results[metric].beta, compared.results[metric].beta)
    assert fractions and fractions[-1] == 1.0
    assert on_dask.pareto("weak") == ["A", "C"]


def test_the_report_leads_with_the_pareto_set_and_has_a_section_per_metric(compared, tmp_path):
    from bbt_widget.outputs.report._build import write_metrics

    text = write_metrics(compared, tmp_path / "metrics.md", interpretation="weak").read_text()
    assert text.startswith("# Bayesian Bradley-Terry comparison on acc, f1, time: Pareto set A, C")
    assert "## Several metrics: dominance" in text
    assert "the Pareto set" in text and "is A and C; A dominates B." in text
    assert "(lower is better: time)" in text
    assert "## Metric: f1" in text and "## Metric: time" in text
    assert "time (lower is better): " in text
    # the dominance table and the methods sentence
    assert "| A | B | acc |" in text.replace("  ", " ")
    assert "The model was fitted once per metric with the same settings" in text
    assert (tmp_path / "metrics_figures" / "metrics.svg").exists() or "metrics" in text


def test_the_command_writes_the_report_of_several_metrics(tmp_path, capsys):
    from bbt_widget import cli

    path = tmp_path / "metrics.csv"
    simulated().to_csv(path, index=False)
    out = tmp_path / "metrics.md"
    words = ["report", str(path), "--dataset", "db", "--algorithm", "alg", "-o", str(out)]
    words += ["--score", "acc", "--score", "f1", "--score", "time", "--lower-is-better", "time"]
    words += ["--chains", "2", "--iter-warmup", "300", "--iter-sampling", "300", "--quiet"]
    code = cli.main(words)
    # short chains may miss a diagnostics threshold: the report is written either way
    assert code in (cli.EXIT_OK, cli.EXIT_DIAGNOSTICS)
    printed = capsys.readouterr().out
    assert "the Pareto set" in printed and "is A and C; A dominates B." in printed
    text = out.read_text()
    assert "## Several metrics: dominance" in text and "## Metric: time" in text
    assert "--lower-is-better time" in text  # the command that reproduces it
