"""A wide table's fold, run or seed column is refused, not ranked as an algorithm, by every
entry point that reads results (they share one reader), with the keyword or option that
reads it as folds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget import cli
from bbt_widget.core.data import tidy_results
from bbt_widget.core.fold_columns import named_like_fold, numbers_rows

ALGORITHMS = ["OurNet", "knn", "lgbm", "rf", "svm"]


def _wide(percent: bool = False, n_datasets: int = 6, n_folds: int = 5) -> pd.DataFrame:
    """``dataset,fold,OurNet,knn,lgbm,rf,svm``: one row per (data set, fold)."""
    rng = np.random.default_rng(3)
    rows = []
    for d in range(n_datasets):
        level = rng.uniform(0.6, 0.9)
        for f in range(n_folds):
            scores = level + rng.normal(0, 0.02, len(ALGORITHMS))
            rows.append({"dataset": f"ds{d}", "fold": f, **dict(zip(ALGORITHMS, scores))})
    df = pd.DataFrame(rows)
    if percent:
        df[ALGORITHMS] = (df[ALGORITHMS] * 100).round(2)
    return df


@pytest.mark.parametrize("percent", [False, True])
def test_a_fold_column_is_refused_with_the_keyword_that_reads_it(percent):
    df = _wide(percent)
    with pytest.raises(ValueError, match=r"column 'fold' is named like a fold.*fold='fold'"):
        tidy_results(df, dataset="dataset")
    tidy = tidy_results(df, dataset="dataset", fold="fold")
    assert tidy.algorithms == tuple(ALGORITHMS)
    assert tidy.n_folds == 5


@pytest.mark.parametrize(
    "call",
    [
        lambda df: bbt.fit(df, dataset="dataset"),
        lambda df: bbt.win_table(df, dataset="dataset"),
        lambda df: bbt.BBTWidget(df, dataset="dataset"),
        lambda df: bbt.baselines.wilcoxon_holm(df, dataset="dataset"),
        lambda df: bbt.ranking_model(df, dataset="dataset"),
    ],
    ids=["fit", "win_table", "widget", "baselines", "ranking_model"],
)
def test_every_entry_point_refuses_it(call):
    with pytest.raises(ValueError, match=r"fold='fold'"):
        call(_wide())


@pytest.mark.parametrize(
    "name",
    [
        "fold",
        "Fold",
        "cv_fold",
        "fold_id",
        "run",
        "Repeat",
        "seed",
        "split",
        "iteration",
        "rep",
        "Run #",
        "folds",
    ],
)
def test_names_that_say_fold_run_or_seed(name):
    assert named_like_fold(name)


@pytest.mark.parametrize("name", ["rf", "svm", "OurNet", "foldnet", "xgboost", "runtime"])
def test_algorithm_names_are_not_taken_for_folds(name):
    assert not named_like_fold(name)


@pytest.mark.parametrize("start", [0, 1])
def test_an_unnamed_column_numbering_each_data_sets_rows_is_refused(start):
    df = _wide().rename(columns={"fold": "k"})
    df["k"] += start
    with pytest.raises(ValueError, match=r"column 'k' numbers the rows of each data set.*fold='k'"):
        tidy_results(df, dataset="dataset")
    # the way out for a real algorithm's whole-number scores it names
    assert "k" in tidy_results(df.assign(k=df["k"].astype(float)), dataset="dataset").algorithms


def test_integer_scores_are_not_fold_numbers():
    """Counts of errors repeat within a data set or skip numbers: no fold column."""
    ds = pd.Series(["a"] * 4 + ["b"] * 4)
    assert not numbers_rows(pd.Series([3, 0, 2, 2, 1, 5, 0, 2]), ds)
    assert not numbers_rows(pd.Series([0, 1, 2, 4, 0, 1, 2, 3]), ds)
    # two rows per data set read 0, 1 too easily to be taken as folds
    two = pd.Series(["a", "a", "b", "b"])
    assert not numbers_rows(pd.Series([0, 1, 1, 0]), two)


def test_runs_and_folds_get_one_label_as_the_message_says():
    runs = pd.concat([_wide().assign(run=r) for r in range(2)], ignore_index=True)
    with pytest.raises(ValueError, match=r"columns 'fold' and 'run' look like") as err:
        tidy_results(runs, dataset="dataset")
    with pytest.raises(ValueError, match=r"column 'run' looks like.*fold='fold'") as err:
        tidy_results(runs, dataset="dataset", fold="fold")
    assert "data['fold_id'] = data['run'].astype(str) + '-' + data['fold'].astype(str)" in str(
        err.value
    )
    # the fix it gives, as given, reads all ten folds
    data = runs
    data["fold_id"] = data["run"].astype(str) + "-" + data["fold"].astype(str)
    data = data.drop(columns=["run", "fold"])
    assert tidy_results(data, dataset="dataset", fold="fold_id").n_folds == 10


def test_a_seed_column_of_a_means_table_is_to_be_dropped():
    means = _wide().drop(columns="fold").groupby("dataset").mean().reset_index()
    with pytest.raises(ValueError, match=r"one row.*numbers no folds.*drop"):
        tidy_results(means.assign(seed=42), dataset="dataset")


@pytest.mark.parametrize("percent", [False, True])
def test_the_command_refuses_it_with_the_option(tmp_path: Path, capsys, percent):
    path = tmp_path / "wide.csv"
    _wide(percent).to_csv(path, index=False)
    out = tmp_path / "report.md"
    code = cli.main(["report", str(path), "--dataset", "dataset", "-o", str(out)])
    assert code == cli.EXIT_INPUT
    err = capsys.readouterr().err
    assert "--fold 'fold'" in err
    assert not out.exists()
