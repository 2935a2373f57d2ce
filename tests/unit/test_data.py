"""bbt_widget.data (input shapes -> TidyResults, validation) and bbt_widget.datasets.

Expected values are typed from the paper (Table 2, Table 9), from shared/data/README.md, or
worked out by hand in the test; none is copied from the code's output.
"""

from __future__ import annotations

import hashlib
import re
import statistics
from importlib.resources import files
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget import datasets
from bbt_widget.core import data as D

# --------------------------------------------------------------------------- paper tables

#: Paper Table 2 ("The base results"): mean accuracy over the 4 folds, 3 decimals.
TABLE_2 = {
    #                            dt     lda    lgbm   xgb    svm
    "biomed": (0.837, 0.842, 0.876, 0.890, 0.886),
    "breast": (0.931, 0.951, 0.964, 0.961, 0.957),
    "breast_w": (0.940, 0.950, 0.961, 0.961, 0.961),
    "buggyCrx": (0.790, 0.861, 0.867, 0.867, 0.861),
    "clean1": (1.000, 1.000, 1.000, 1.000, 0.968),
    "cmc": (0.455, 0.513, 0.525, 0.524, 0.544),
    "colic": (0.761, 0.837, 0.815, 0.815, 0.641),
    "corral": (1.000, 0.900, 1.000, 1.000, 1.000),
    "credit_g": (0.668, 0.718, 0.766, 0.769, 0.724),
    "diabetes": (0.714, 0.772, 0.747, 0.742, 0.758),
    "ionosphere": (0.869, 0.866, 0.940, 0.932, 0.934),
    "irish": (1.000, 0.740, 1.000, 1.000, 0.988),
    "molecular_b...y_promoters": (0.727, 0.689, 0.896, 0.887, 0.802),
    "monk3": (0.975, 0.792, 0.980, 0.986, 0.964),
    "prnn_crabs": (0.880, 1.000, 0.950, 0.935, 0.960),
    "prnn_synth": (0.800, 0.852, 0.824, 0.828, 0.856),
    "saheart": (0.626, 0.723, 0.660, 0.671, 0.712),
    "threeOf9": (0.996, 0.809, 1.000, 0.998, 0.992),
    "tokyo1": (0.902, 0.920, 0.928, 0.926, 0.931),
    "vote": (0.929, 0.956, 0.945, 0.959, 0.956),
}
BASE_ALGS = ("dt", "lda", "lgbm", "xgb", "svm")

#: Column order of shared/data/pmlb16_4fold.csv (its header line).
PMLB16_ALGS = (
    "lgbm", "svm", "rf", "dt", "knn", "xgb", "xrf", "svml",
    "lr", "ridge", "passive", "lda", "qda", "nb", "gbm", "mlp",
)  # fmt: skip


# --------------------------------------------------------------------------- helpers


def _rows(tidy: D.TidyResults) -> list[tuple]:
    """The tidy frame as sorted (dataset, algorithm, fold, score) tuples."""
    f = tidy.frame
    return sorted(
        zip(f["dataset"], f["algorithm"], f["fold"].astype(int), f["score"].astype(float))
    )


@pytest.fixture
def small_folds() -> pd.DataFrame:
    """Wide by fold: 2 data sets x 2 folds x 3 algorithms; c is missing on d2's first fold."""
    return pd.DataFrame(
        {
            "ds": ["d1", "d1", "d2", "d2"],
            "a": [0.1, 0.4, 0.7, 0.9],
            "b": [0.2, 0.5, 0.8, 1.0],
            "c": [0.3, 0.6, np.nan, 1.1],
        }
    )


SMALL_ROWS = sorted(
    [
        ("d1", "a", 0, 0.1), ("d1", "b", 0, 0.2), ("d1", "c", 0, 0.3),
        ("d1", "a", 1, 0.4), ("d1", "b", 1, 0.5), ("d1", "c", 1, 0.6),
        ("d2", "a", 0, 0.7), ("d2", "b", 0, 0.8),
        ("d2", "a", 1, 0.9), ("d2", "b", 1, 1.0), ("d2", "c", 1, 1.1),
    ]
)  # fmt: skip


def _long(df: pd.DataFrame, dataset: str = "ds") -> pd.DataFrame:
    """Wide by fold -> long with a fold column (fold labels 'k1', 'k2', ... as text)."""
    df = df.assign(fold=[f"k{i + 1}" for i in df.groupby(dataset).cumcount()])
    return df.melt(id_vars=[dataset, "fold"], var_name="alg", value_name="acc")


# =========================================================================== datasets


def test_shipped_pmlb16_layout(pmlb16):
    assert list(pmlb16.columns) == ["db", *PMLB16_ALGS]
    assert len(pmlb16) == 528
    assert pmlb16["db"].nunique() == 132
    assert (pmlb16.groupby("db").size() == 4).all()  # 4-fold CV, one row per fold
    for alg in PMLB16_ALGS:
        assert pd.api.types.is_float_dtype(pmlb16[alg]), alg


def test_shipped_pmlb16_only_missing_values_are_qda_on_lymphography(pmlb16):
    missing = pmlb16.drop(columns="db").isna()
    assert missing.to_numpy().sum() == 2
    assert missing.sum()[lambda s: s > 0].to_dict() == {"qda": 2}
    assert set(pmlb16.loc[missing["qda"], "db"]) == {"lymphography"}
    scores = pmlb16.drop(columns="db").to_numpy()
    finite = scores[np.isfinite(scores)]
    assert finite.min() >= 0.0 and finite.max() <= 1.0  # accuracies


def test_shipped_copy_is_identical_to_shared_data():
    # shared/ sits beside the repository (developers' machines and CI)
    shared = Path(__file__).resolve().parents[3] / "shared" / "data" / "pmlb16_4fold.csv"
    if not shared.exists():
        pytest.skip("shared data folder not present on this machine")
    shipped = (files("bbt_widget.datasets") / "pmlb16_4fold.csv").read_bytes()
    digest = hashlib.sha256
    assert digest(shipped).hexdigest() == digest(shared.read_bytes()).hexdigest()


def test_shipped_copy_keeps_attribution_and_license():
    notice = (files("bbt_widget.datasets") / "NOTICE.md").read_text(encoding="utf-8")
    for words in ("bbtcomp", "Wainer", "MIT License", "Copyright (c) 2022 bbtcomp authors"):
        assert words in notice
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in notice  # the full license text


def test_load_base_is_the_papers_selection():
    base = datasets.load_base()
    assert list(base.columns) == ["db", "dt", "lda", "lgbm", "xgb", "svm"]
    assert datasets.BASE_ALGORITHMS == BASE_ALGS
    assert set(base["db"]) == set(TABLE_2) == set(datasets.BASE_DATASETS)
    assert len(datasets.BASE_DATASETS) == 20
    assert len(base) == 80
    assert (base.groupby("db").size() == 4).all()
    assert not base.drop(columns="db").isna().any().any()


def test_load_base_fold_means_reproduce_table_2(base):
    means = base.groupby("db").mean()
    for name, row in TABLE_2.items():
        for alg, printed in zip(BASE_ALGS, row):
            assert abs(means.loc[name, alg] - printed) <= 0.0005 + 1e-12, (name, alg)


def test_load_base_rows_are_the_pmlb16_rows(base, pmlb16):
    sub = pmlb16[pmlb16["db"].isin(TABLE_2)][["db", *BASE_ALGS]].reset_index(drop=True)
    pd.testing.assert_frame_equal(base, sub)


def test_load_functions_return_independent_copies():
    a = datasets.load_base()
    a.loc[0, "dt"] = -1.0
    assert datasets.load_base().loc[0, "dt"] != -1.0
    b = datasets.load_pmlb16()
    b.loc[0, "lgbm"] = -1.0
    assert datasets.load_pmlb16().loc[0, "lgbm"] != -1.0


def test_cmc_folds_match_paper_table_9(base):
    """Table 9: cmc folds of lgbm and xgb (3 decimals) and their standard deviations."""
    cmc = base[base["db"] == "cmc"]
    lgbm, xgb = cmc["lgbm"].tolist(), cmc["xgb"].tolist()
    assert np.allclose(lgbm, [0.547, 0.522, 0.503, 0.527], atol=0.0005)
    assert np.allclose(xgb, [0.531, 0.538, 0.481, 0.546], atol=0.0005)
    diffs = [a - b for a, b in zip(lgbm, xgb)]
    assert np.allclose(diffs, [0.016, -0.016, 0.022, -0.019], atol=0.001)
    assert abs(statistics.stdev(lgbm) - 0.018) <= 0.0005
    assert abs(statistics.stdev(xgb) - 0.029) <= 0.0005
    # Table 8: the means that make lgbm "win" by 0.001
    assert round(statistics.mean(lgbm), 3) == 0.525
    assert round(statistics.mean(xgb), 3) == 0.524


# =========================================================================== shapes


def test_wide_by_fold(small_folds):
    tidy = D.tidy_results(small_folds, dataset="ds")
    assert isinstance(tidy, D.TidyResults)
    assert _rows(tidy) == SMALL_ROWS  # the NaN cell is a missing row
    assert set(tidy.frame.columns) == {"dataset", "algorithm", "fold", "score"}
    assert tidy.algorithms == ("a", "b", "c")
    assert tidy.datasets == ("d1", "d2")
    assert tidy.has_folds and not tidy.has_sd
    assert tidy.n_folds == 2
    assert tidy.sd_matrix is None
    assert tidy.lower_is_better is False
    # c lacks fold 0 of d2: paired mode still applies, pairing on the common folds
    assert tidy.paired_ok and tidy.paired_problem == ""
    assert tidy.fold_mismatch_datasets == ("d2",)


def test_wide_by_fold_cube(small_folds):
    cube = D.tidy_results(small_folds, dataset="ds").cube
    assert cube.shape == (2, 3, 2)  # (dataset, algorithm, fold)
    assert cube[0, 0].tolist() == [0.1, 0.4]
    assert cube[1, 1].tolist() == [0.8, 1.0]
    assert np.isnan(cube[1, 2, 0]) and cube[1, 2, 1] == 1.1
    assert np.isfinite(cube).sum() == 11


def test_lower_is_better_flips_the_cube_not_the_frame(small_folds):
    hi = D.tidy_results(small_folds, dataset="ds")
    lo = D.tidy_results(small_folds, dataset="ds", lower_is_better=True)
    assert lo.lower_is_better is True
    assert _rows(lo) == _rows(hi)  # scores kept as given
    np.testing.assert_array_equal(lo.cube, -hi.cube)


def test_paired_ok_when_every_algorithm_has_the_same_folds(small_folds):
    tidy = D.tidy_results(small_folds.drop(columns="c"), dataset="ds")
    assert tidy.paired_ok and tidy.paired_problem == ""
    assert tidy.fold_mismatch_datasets == ()


def test_an_algorithm_missing_on_a_whole_data_set_keeps_paired_ok(small_folds):
    """Missing on every fold of a data set (paper Table 7a) is not a fold mismatch."""
    small_folds.loc[small_folds["ds"] == "d2", "c"] = np.nan
    tidy = D.tidy_results(small_folds, dataset="ds")
    assert tidy.paired_ok
    assert tidy.datasets == ("d1", "d2")
    assert tidy.fold_mismatch_datasets == ()


def test_wide_by_fold_with_fold_column_pairs_by_label():
    """With fold=, rows are matched by the fold label; its order of appearance numbers them."""
    df = pd.DataFrame(
        {
            "ds": ["d1", "d1", "d2", "d2"],
            "cv": ["x", "y", "y", "x"],
            "a": [1.0, 2.0, 3.0, 4.0],
            "b": [5.0, 6.0, 7.0, 8.0],
        }
    )
    tidy = D.tidy_results(df, dataset="ds", fold="cv")
    assert _rows(tidy) == sorted(
        [
            ("d1", "a", 0, 1.0), ("d1", "b", 0, 5.0), ("d1", "a", 1, 2.0), ("d1", "b", 1, 6.0),
            ("d2", "a", 0, 3.0), ("d2", "b", 0, 7.0), ("d2", "a", 1, 4.0), ("d2", "b", 1, 8.0),
        ]
    )  # fmt: skip
    assert tidy.algorithms == ("a", "b")  # the fold column is not an algorithm


def test_wide_means_names_in_index_or_column():
    by_col = pd.DataFrame({"name": ["d1", "d2"], "a": [0.5, 0.6], "b": [0.7, 0.4]})
    by_index = by_col.set_index("name")
    expected = sorted(
        [("d1", "a", 0, 0.5), ("d1", "b", 0, 0.7), ("d2", "a", 0, 0.6), ("d2", "b", 0, 0.4)]
    )
    for tidy in (D.tidy_results(by_col, dataset="name"), D.tidy_results(by_index)):
        assert _rows(tidy) == expected
        assert tidy.algorithms == ("a", "b")
        assert tidy.datasets == ("d1", "d2")
        assert not tidy.has_folds and not tidy.has_sd
        assert tidy.n_folds == 1
        assert "no fold-level scores" in tidy.paired_problem


def test_long_with_fold_equals_wide_by_fold(small_folds):
    long = _long(small_folds)
    tidy = D.tidy_results(long, dataset="ds", algorithm="alg", score="acc", fold="fold")
    assert _rows(tidy) == SMALL_ROWS
    assert tidy.algorithms == ("a", "b", "c")
    assert tidy.datasets == ("d1", "d2")
    assert tidy.has_folds


def test_long_without_fold_and_names_in_index():
    long = pd.DataFrame(
        {"alg": ["b", "a", "b", "a"], "acc": [0.7, 0.5, 0.4, 0.6]},
        index=pd.Index(["d1", "d1", "d2", "d2"], name="ds"),
    )
    tidy = D.tidy_results(long, algorithm="alg", score="acc")
    assert _rows(tidy) == sorted(
        [("d1", "a", 0, 0.5), ("d1", "b", 0, 0.7), ("d2", "a", 0, 0.6), ("d2", "b", 0, 0.4)]
    )
    assert tidy.algorithms == ("b", "a")  # order of first appearance
    assert not tidy.has_folds


def test_long_form_absent_row_is_a_missing_result():
    long = pd.DataFrame(
        {"ds": ["d1", "d1", "d2", "d2"], "alg": ["a", "b", "a", "c"], "acc": [0.5, 0.7, 0.6, 0.4]}
    )
    tidy = D.tidy_results(long, dataset="ds", algorithm="alg", score="acc")
    assert tidy.datasets == ("d1", "d2")
    assert np.isnan(tidy.cube[1, 1, 0])  # b on d2


def test_missing_values_in_text_columns_are_missing_results():
    """A column read as text with empty cells / None still holds numbers."""
    df = pd.DataFrame(
        {"a": [0.5, 0.6], "b": pd.Series(["0.7", None], dtype=object), "c": [0.4, 0.3]}
    )
    tidy = D.tidy_results(df)
    first = [("0", "a", 0, 0.5), ("0", "b", 0, 0.7), ("0", "c", 0, 0.4)]
    assert _rows(tidy) == sorted([*first, ("1", "a", 0, 0.6), ("1", "c", 0, 0.3)])


def test_means_plus_sd():
    means = pd.DataFrame({"a": [0.5, 0.6], "b": [0.7, 0.4]}, index=["d1", "d2"])
    sd = pd.DataFrame({"b": [0.03, 0.04], "a": [0.01, 0.02]}, index=["d1", "d2"])
    tidy = D.tidy_results(means, sd=sd)
    assert tidy.has_sd and not tidy.has_folds
    assert not tidy.paired_ok and "paired=False" in tidy.paired_problem
    assert tidy.sd_matrix.tolist() == [[0.01, 0.03], [0.02, 0.04]]  # aligned by name
    f = tidy.frame.set_index(["dataset", "algorithm"])
    assert f.loc[("d2", "b"), "score"] == 0.4 and f.loc[("d2", "b"), "sd"] == 0.04


def test_means_plus_sd_aligned_by_data_set_names():
    means = pd.DataFrame({"db": ["d1", "d2"], "a": [0.5, 0.6], "b": [0.7, 0.4]})
    sd_col = pd.DataFrame({"db": ["d2", "d1"], "a": [0.02, 0.01], "b": [0.04, 0.03]})
    sd_idx = sd_col.set_index("db")
    for sd in (sd_col, sd_idx):
        tidy = D.tidy_results(means, dataset="db", sd=sd)
        assert tidy.sd_matrix.tolist() == [[0.01, 0.03], [0.02, 0.04]]


def test_sd_of_a_missing_mean_may_be_missing():
    means = pd.DataFrame({"a": [0.5, np.nan], "b": [0.7, 0.4], "c": [0.6, 0.5]}, index=["d1", "d2"])
    sd = pd.DataFrame(
        {"a": [0.01, np.nan], "b": [0.03, 0.04], "c": [0.02, 0.02]}, index=["d1", "d2"]
    )
    tidy = D.tidy_results(means, sd=sd)
    assert len(tidy.frame) == 5


def test_base_results_in_every_shape_give_the_same_tidy_rows(base, base_means):
    wide = D.tidy_results(base, dataset="db")
    long = base.assign(k=base.groupby("db").cumcount()).melt(
        id_vars=["db", "k"], var_name="alg", value_name="acc"
    )
    from_long = D.tidy_results(long, dataset="db", algorithm="alg", score="acc", fold="k")
    assert _rows(wide) == _rows(from_long)
    assert wide.algorithms == from_long.algorithms == BASE_ALGS
    assert set(wide.datasets) == set(TABLE_2)
    assert len(wide.frame) == 400
    means = D.tidy_results(base_means)
    assert means.datasets == wide.datasets and means.algorithms == BASE_ALGS
    assert len(means.frame) == 100


def test_pmlb16_tidy(pmlb16):
    tidy = D.tidy_results(pmlb16, dataset="db")
    assert tidy.algorithms == PMLB16_ALGS
    assert len(tidy.datasets) == 132
    assert len(tidy.frame) == 528 * 16 - 2
    assert tidy.has_folds and tidy.n_folds == 4
    # qda lacks 2 folds on lymphography: paired mode pairs on the folds both have
    assert tidy.paired_ok
    assert tidy.fold_mismatch_datasets == ("lymphography",)


def test_public_api_exports():
    assert bbt.tidy_results is D.tidy_results
    assert bbt.TidyResults is D.TidyResults
    assert callable(bbt.win_table)


# =========================================================================== validation


@pytest.mark.parametrize("bad", [[[0.1, 0.2]], np.array([[0.1, 0.2]]), {"a": [1.0]}, None])
def test_results_must_be_a_dataframe(bad):
    with pytest.raises(TypeError, match=r"must be a pandas DataFrame.*read_csv"):
        D.tidy_results(bad)
    with pytest.raises(TypeError, match=r"pandas DataFrame"):
        bbt.win_table(bad)


def test_fewer_than_two_algorithms_wide(base):
    with pytest.raises(ValueError, match=r"at least 2 algorithm.*found 1.*'dt'"):
        D.tidy_results(base[["db", "dt"]], dataset="db")


def test_fewer_than_two_algorithms_long():
    long = pd.DataFrame({"ds": ["d1", "d2"], "alg": ["a", "a"], "acc": [0.5, 0.6]})
    with pytest.raises(ValueError, match=r"at least 2 algorithms.*found 1.*'a'"):
        D.tidy_results(long, dataset="ds", algorithm="alg", score="acc")


def test_algorithm_without_any_finite_score(base):
    base["lda"] = np.nan
    with pytest.raises(ValueError, match=r"'lda' has no finite score.*remove it"):
        D.tidy_results(base, dataset="db")
    long = pd.DataFrame(
        {"ds": ["d1", "d1", "d2", "d2"], "alg": ["a", "b"] * 2, "acc": [0.5, None, 0.6, None]}
    )
    with pytest.raises(ValueError, match=r"'b' has no finite score"):
        D.tidy_results(long, dataset="ds", algorithm="alg", score="acc")


def test_non_numeric_score_names_column_row_and_value(base):
    base["svm"] = base["svm"].astype(object)
    base.loc[7, "svm"] = "n/a"
    with pytest.raises(TypeError, match=r"column 'svm' must hold numbers.*row 7.*'n/a'.*NaN"):
        D.tidy_results(base, dataset="db")


def test_non_numeric_score_long_form():
    long = pd.DataFrame({"ds": ["d1", "d1"], "alg": ["a", "b"], "acc": [0.5, "error"]})
    with pytest.raises(TypeError, match=r"score column 'acc'.*'error'"):
        D.tidy_results(long, dataset="ds", algorithm="alg", score="acc")


def test_boolean_scores_are_rejected():
    df = pd.DataFrame({"a": [True, False], "b": [0.1, 0.2]})
    with pytest.raises(TypeError, match=r"column 'a' must hold numbers.*bool"):
        D.tidy_results(df)


@pytest.mark.parametrize("value", [np.inf, -np.inf])
def test_infinite_scores_are_rejected(base, value):
    base.loc[5, "xgb"] = value
    with pytest.raises(ValueError, match=r"column 'xgb' has an infinite value.*row 5.*NaN"):
        D.tidy_results(base, dataset="db")


def test_infinite_score_long_form():
    long = pd.DataFrame({"ds": ["d1", "d1"], "alg": ["a", "b"], "acc": [0.5, np.inf]})
    with pytest.raises(ValueError, match=r"'acc' has an infinite value"):
        D.tidy_results(long, dataset="ds", algorithm="alg", score="acc")


def test_duplicate_keys_in_long_form_name_the_row(small_folds):
    long = _long(small_folds)
    dup = pd.concat([long, long.iloc[[6]]], ignore_index=True)  # row 6: d2, b, k1
    with pytest.raises(ValueError, match=r"duplicate.*'d2'.*'b'.*fold 'k1'.*one row per"):
        D.tidy_results(dup, dataset="ds", algorithm="alg", score="acc", fold="fold")


def test_repeated_long_rows_without_fold_suggest_fold(small_folds):
    long = _long(small_folds)
    with pytest.raises(ValueError, match=r"several rows.*'d1'.*'a'.*fold="):
        D.tidy_results(long, dataset="ds", algorithm="alg", score="acc")


def test_long_form_needs_both_algorithm_and_score(small_folds):
    long = _long(small_folds)
    with pytest.raises(ValueError, match=r"both algorithm= and score=.*score= is missing"):
        D.tidy_results(long, dataset="ds", algorithm="alg")
    with pytest.raises(ValueError, match=r"algorithm= is missing"):
        D.tidy_results(long, dataset="ds", score="acc")


def test_sd_with_long_form_is_rejected(small_folds):
    long = _long(small_folds)
    with pytest.raises(ValueError, match=r"sd= applies to a wide means table"):
        D.tidy_results(
            long, dataset="ds", algorithm="alg", score="acc", sd=pd.DataFrame({"a": [0.1]})
        )


def test_duplicate_fold_in_wide_fold_column_names_the_label():
    df = pd.DataFrame({"ds": ["d1", "d1"], "cv": ["f1", "f1"], "a": [0.1, 0.2], "b": [0.3, 0.4]})
    with pytest.raises(ValueError, match=r"'d1' has two rows for fold 'f1' in column 'cv'"):
        D.tidy_results(df, dataset="ds", fold="cv")


def test_duplicate_algorithm_columns():
    df = pd.DataFrame([[0.1, 0.2, 0.3]], columns=["a", "b", "a"])
    with pytest.raises(ValueError, match=r"algorithm columns appear twice: 'a'"):
        D.tidy_results(df)


@pytest.mark.parametrize(
    ("kwargs", "role"),
    [
        ({"dataset": "data_set"}, "dataset"),
        ({"dataset": "db", "fold": "fold"}, "fold"),
        ({"dataset": "db", "algorithm": "alg", "score": "db"}, "algorithm"),
        ({"dataset": "db", "algorithm": "lda", "score": "acc"}, "score"),
    ],
)
def test_missing_column_names_role_and_lists_columns(base, kwargs, role):
    wrong = kwargs[role]
    with pytest.raises(ValueError, match=rf"{role}='{wrong}' is not a column.*'db', 'dt'"):
        D.tidy_results(base, **kwargs)


@pytest.mark.parametrize("role", ["dataset", "algorithm", "score"])
def test_a_column_named_twice_is_refused_naming_it(base, role):
    """pd.concat(axis=1) can repeat a column: pandas then failed with "'DataFrame' object
    has no attribute 'dtype'" (or "truth value of a Series is ambiguous")."""
    long = base.melt(id_vars="db", var_name="alg", value_name="acc")
    column = {"dataset": "db", "algorithm": "alg", "score": "acc"}[role]
    twice = pd.concat([long, long[[column]]], axis=1)
    with pytest.raises(ValueError, match=rf"{role}='{column}': the results have 2 columns named"):
        D.tidy_results(twice, dataset="db", algorithm="alg", score="acc")
    with pytest.raises(ValueError, match=r"dataset='db': the results have 2 columns named 'db'"):
        D.tidy_results(pd.concat([base, base[["db"]]], axis=1), dataset="db")


def test_one_column_in_two_roles_is_refused(base):
    long = base.melt(id_vars="db", var_name="alg", value_name="acc")
    with pytest.raises(ValueError, match=r"algorithm='alg' and fold='alg' name the same column"):
        D.tidy_results(long, dataset="db", algorithm="alg", fold="alg", score="acc")


def test_forgotten_dataset_column_suggests_dataset(base):
    """The shipped layout without dataset='db': the text column must not pass as scores."""
    with pytest.raises(TypeError, match=r"'db'.*dataset='db'"):
        D.tidy_results(base)


def test_missing_data_set_names(base):
    base.loc[3, "db"] = None
    with pytest.raises(ValueError, match=r"dataset names have missing values \(row 3\)"):
        D.tidy_results(base, dataset="db")


def test_missing_fold_labels(small_folds):
    small_folds["cv"] = [1, 2, np.nan, 2]
    with pytest.raises(ValueError, match=r"fold column 'cv' has missing values"):
        D.tidy_results(small_folds, dataset="ds", fold="cv")


def test_a_column_left_in_the_index_says_reset_index(base):
    """After groupby, pivot or set_index the data sets' names are the index: the message
    only listed the columns, without the fix."""
    wide = base.set_index("db")
    with pytest.raises(ValueError, match=r"dataset='db' is not a column.*level of the index: "):
        D.tidy_results(wide, dataset="db")
    long = base.melt(id_vars="db", var_name="alg", value_name="acc").set_index(["alg"])
    with pytest.raises(ValueError, match=r"algorithm='alg' .*pass data.reset_index\(\)"):
        D.tidy_results(long, dataset="db", algorithm="alg", score="acc")
    assert len(D.tidy_results(wide.reset_index(), dataset="db").datasets) == base["db"].nunique()


def test_lower_is_better_must_be_bool(base):
    with pytest.raises(TypeError, match=r"lower_is_better must be True or False"):
        D.tidy_results(base, dataset="db", lower_is_better="yes")


@pytest.mark.parametrize("value", ["no", "False", 0, None])
def test_paired_must_be_bool_wherever_it_is_taken(base, value):
    """``paired="no"`` was taken as yes (a non-empty string is true): the local ROPE used
    paired d_z and the result's settings said ``paired: 'no'``. Now every entry refuses it,
    before anything is counted or fitted."""
    from bbt_widget.fitting import prepare_fit
    from bbt_widget.widget.app import BBTWidget

    message = rf"paired must be True or False, got {value!r}"
    tidy = D.tidy_results(base, dataset="db")
    calls = {
        "prepare_fit": lambda: prepare_fit(
            base, dataset="db", d_min=0.4, paired=value, ties="spread", size=(4, 1000)
        ),
        "win_table": lambda: bbt.win_table(base, dataset="db", d_min=0.4, paired=value),
        "count_wins": lambda: bbt.core.wintable.count_wins(tidy, d_min=0.4, paired=value),
        "calibration": lambda: bbt.calibration(base, dataset="db", d_min=0.4, paired=value),
        "widget": lambda: BBTWidget(base, dataset="db", paired=value, autostart=False),
    }
    for name, call in calls.items():
        try:
            call()
        except TypeError as exc:
            assert re.search(message, str(exc)), (name, exc)
        else:
            pytest.fail(f"{name} accepted paired={value!r}")
    prepared = prepare_fit(base, dataset="db", ties="spread", size=(4, 1000))
    with pytest.raises(TypeError, match=message):
        prepared.recount(
            d_min=0.4,
            paired=value,
            ties="spread",
            hyperprior="lognormal",
            prior_scale=0.5,
            size=(4, 1000),
        )


# --- sd table


@pytest.fixture
def means_sd(base):
    g = base.groupby("db", sort=False)
    return g.mean(), g.std()


def test_sd_columns_must_match_the_means(means_sd):
    means, sd = means_sd
    with pytest.raises(ValueError, match=r"sd table's columns.*same algorithms.*'dt'"):
        D.tidy_results(means, sd=sd.drop(columns="dt"))
    with pytest.raises(ValueError, match=r"sd table's columns"):
        D.tidy_results(means, sd=sd.rename(columns={"dt": "tree"}))


def test_sd_data_sets_must_match_the_means(means_sd):
    means, sd = means_sd
    with pytest.raises(
        ValueError, match=r"data sets must match.*20 rows.*sd has 19.*only in the means: 'cmc'"
    ):
        D.tidy_results(means, sd=sd.drop(index="cmc"))
    renamed = sd.rename(index={"vote": "votes"})
    with pytest.raises(ValueError, match=r"only in the means: 'vote'; only in sd: 'votes'"):
        D.tidy_results(means, sd=renamed)


def test_sd_must_not_be_negative(means_sd):
    means, sd = means_sd
    sd.loc["cmc", "lgbm"] = -0.02
    with pytest.raises(ValueError, match=r"sd must be >= 0.*'cmc'.*'lgbm'.*-0.02"):
        D.tidy_results(means, sd=sd)


def test_sd_must_be_given_for_every_mean(means_sd):
    means, sd = means_sd
    sd.loc["cmc", "lgbm"] = np.nan
    with pytest.raises(ValueError, match=r"sd of data set 'cmc', algorithm 'lgbm' is missing"):
        D.tidy_results(means, sd=sd)


def test_sd_must_be_numeric_and_a_dataframe(means_sd):
    means, sd = means_sd
    with pytest.raises(TypeError, match=r"sd must be a pandas DataFrame"):
        D.tidy_results(means, sd=sd.to_numpy())
    sd = sd.astype({"xgb": object})
    sd.loc["cmc", "xgb"] = "?"
    with pytest.raises(TypeError, match=r"sd column 'xgb'.*'\?'"):
        D.tidy_results(means, sd=sd)


def test_sd_with_fold_rows_is_rejected(base, means_sd):
    _, sd = means_sd
    with pytest.raises(ValueError, match=r"sd= needs one row of means per data set"):
        D.tidy_results(base, dataset="db", sd=sd.reset_index())


# --- local ROPE preconditions (raised by win_table, phrased by data.py)


def test_paired_local_rope_with_unequal_folds_pairs_on_common_folds(pmlb16):
    """Issue 9.4: qda lacks 2 of 4 folds on lymphography; paired mode no longer refuses."""
    paired = bbt.win_table(pmlb16, dataset="db", d_min=0.4, ties=None)
    assert len(paired) == 16 * 15 // 2
    games = paired.set_index(["alg1", "alg2"])[["win1", "win2", "ties"]].sum(axis=1)
    # qda met everyone on all 132 data sets: its 2 folds on lymphography are common to all
    assert (games.xs("qda", level="alg2") == 132).all()
    assert (games == 132).all()


def test_paired_local_rope_with_unequal_folds_synthetic(small_folds):
    """c has only fold 1 of d2: 1 common fold with a and b, so those pairs miss d2; on d1
    every difference is exactly c's +0.2 / +0.1 (sd 0 up to rounding), a win for c."""
    got = bbt.win_table(small_folds, dataset="ds", d_min=0.4, ties=None)
    assert got[["alg1", "alg2", "win1", "win2", "ties"]].values.tolist() == [
        ["a", "b", 0, 2, 0],
        ["a", "c", 0, 1, 0],
        ["b", "c", 0, 1, 0],
    ]


def test_local_rope_without_folds_or_sd(base_means):
    with pytest.raises(ValueError, match=r"local ROPE \(d_min\) needs fold-level scores or an sd"):
        bbt.win_table(base_means, d_min=0.4)
    with pytest.raises(ValueError, match=r"d_min=None"):
        bbt.win_table(base_means, d_min=0.4, paired=False)


def test_sd_table_needs_paired_false(means_sd):
    means, sd = means_sd
    with pytest.raises(ValueError, match=r"sd table gives no fold-level scores.*paired=False"):
        bbt.win_table(means, sd=sd, d_min=0.4)


# --- options


@pytest.mark.parametrize("ties", ["half", "Spread", "", 0, "none"])
def test_unknown_tie_policy(base, ties):
    with pytest.raises(ValueError, match=r"unknown tie policy.*'add', 'spread', 'forget'"):
        bbt.win_table(base, dataset="db", ties=ties)


@pytest.mark.parametrize("ties", [None, "add", "spread", "forget", "davidson"])
def test_known_tie_policies(ties):
    assert D.check_ties(ties) == ties


@pytest.mark.parametrize("d_min", [-0.1, -1, np.inf, np.nan])
def test_bad_d_min_value(base, d_min):
    with pytest.raises(ValueError, match=r"d_min must be a finite number >= 0"):
        bbt.win_table(base, dataset="db", d_min=d_min)


@pytest.mark.parametrize("d_min", ["0.4", True, [0.4]])
def test_bad_d_min_type(d_min):
    with pytest.raises(TypeError, match=r"d_min must be a number or None"):
        D.check_d_min(d_min)


def test_good_d_min():
    assert D.check_d_min(None) is None
    assert D.check_d_min(0) == 0.0
    assert D.check_d_min(np.float32(0.5)) == 0.5


@pytest.mark.parametrize("rope", [(-0.01, 0.5), (0.45, 1.01), (1.2, 1.5), (-0.5, -0.1)])
def test_rope_outside_unit_interval(rope):
    with pytest.raises(ValueError, match=r"rope bounds are probabilities.*\[0, 1\]"):
        D.check_rope(rope)


@pytest.mark.parametrize("rope", [(0.55, 0.45), (0.5, 0.5)])
def test_rope_low_not_below_high(rope):
    with pytest.raises(ValueError, match=r"rope low must be below rope high"):
        D.check_rope(rope)


@pytest.mark.parametrize("rope", [(0.5,), (0.1, 0.2, 0.3), 0.5, "ab", ("a", "b")])
def test_rope_not_two_numbers(rope):
    with pytest.raises(ValueError, match=r"rope must be two numbers.*\(0.45, 0.55\)"):
        D.check_rope(rope)


def test_good_rope():
    assert D.check_rope((0.45, 0.55)) == (0.45, 0.55)
    assert D.check_rope([0, 1]) == (0.0, 1.0)
    assert D.check_rope(np.array([0.4, 0.6])) == (0.4, 0.6)


@pytest.mark.parametrize("hdi", [0, 0.0, 1, 1.0, -0.5, 1.5, 89])
def test_hdi_outside_open_unit_interval(hdi):
    with pytest.raises(ValueError, match=r"hdi mass must lie strictly between 0 and 1"):
        D.check_hdi(hdi)


@pytest.mark.parametrize("hdi", ["0.89", None, True])
def test_hdi_not_a_number(hdi):
    with pytest.raises(TypeError, match=r"hdi must be a number in \(0, 1\)"):
        D.check_hdi(hdi)


def test_good_hdi():
    assert D.check_hdi(0.89) == 0.89
    assert D.check_hdi(np.float64(0.95)) == 0.95


@pytest.mark.parametrize(
    ("given", "name"),
    [
        ("lognormal", "lognormal"),
        ("cauchy", "cauchy"),
        ("normal", "normal"),
        ("Half-Cauchy", "cauchy"),
        ("half_normal", "normal"),
        ("halfnormal", "normal"),
        ("LogNormal", "lognormal"),
    ],
)
def test_hyperprior_names_and_aliases(given, name):
    assert D.check_hyperprior(given, 0.5) == (name, 0.5)


@pytest.mark.parametrize("bad", ["gamma", "half-t", "", None])
def test_unknown_hyperprior(bad):
    with pytest.raises(ValueError, match=r"unknown hyperprior.*'lognormal'.*'cauchy'.*'normal'"):
        D.check_hyperprior(bad, 1.0)


@pytest.mark.parametrize("scale", [0, -1.0, np.inf, np.nan, 1e-300, 1e-100, 9e-7, 1.1e6, 1e300])
def test_bad_prior_scale_value(scale):
    # outside PRIOR_SCALE_RANGE a fit ran for minutes (1e-300) or drew NaN (1e-20)
    with pytest.raises(ValueError, match=r"prior_scale must be a number from 1e-06 to 1e\+06"):
        D.check_hyperprior("lognormal", scale)


@pytest.mark.parametrize("family", ["lognormal", "cauchy", "normal"])
@pytest.mark.parametrize("scale", [1e-6, 1e6])
def test_prior_scale_range_bounds_are_accepted(family, scale):
    assert D.check_hyperprior(family, scale) == (family, scale)


def test_fit_refuses_a_prior_scale_out_of_range(base):
    # (1e7, not 1e-300: were the check lost, this test would fail in seconds, not hang)
    with pytest.raises(ValueError, match=r"prior_scale must be a number from 1e-06 to 1e\+06"):
        bbt.fit(base, dataset="db", hyperprior="lognormal", prior_scale=1e7)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_fit_refuses_too_few_draws_per_chain(base, n):
    # 1 or 2 draws per chain gave "no claim" for every pair and "All-NaN slice" warnings
    with pytest.raises(ValueError, match=rf"iter_sampling must be at least 4, got {n}"):
        bbt.fit(base, dataset="db", iter_sampling=n)


@pytest.mark.parametrize("scale", ["1", True])  # None: the family default
def test_bad_prior_scale_type(scale):
    with pytest.raises(TypeError, match=r"prior_scale must be a positive number"):
        D.check_hyperprior("cauchy", scale)


def test_check_algorithms():
    algs = ("dt", "lda", "svm")
    assert D.check_algorithms("lda", algs, "control") == ["lda"]
    assert D.check_algorithms(["svm", "dt"], algs, "selection") == ["svm", "dt"]
    with pytest.raises(ValueError, match=r"control: 'knn' is not an algorithm.*'dt', 'lda'"):
        D.check_algorithms("knn", algs, "control")


# --- ready win tables


@pytest.fixture
def ready():
    return pd.DataFrame(
        {
            "alg1": ["a", "a", "b"],
            "alg2": ["b", "c", "c"],
            "win1": [3, 4, 5],
            "win2": [2, 1, 0],
            "ties": [1, 0, 2],
        }
    )


def test_check_win_table_accepts_and_normalises(ready):
    ready["win1"] = ready["win1"].astype(float)  # 3.0 is a count
    out = D.check_win_table(ready[["alg2", "ties", "win2", "win1", "alg1"]])
    assert list(out.columns) == ["alg1", "alg2", "win1", "win2", "ties"]
    assert out["win1"].tolist() == [3, 4, 5]
    for col in ("win1", "win2", "ties"):
        assert pd.api.types.is_integer_dtype(out[col])
    assert D.is_win_table(ready)
    assert not D.is_win_table(ready.drop(columns="win2"))
    assert not D.is_win_table(ready.to_dict())


def test_check_win_table_without_ties_column(ready):
    out = D.check_win_table(ready.drop(columns="ties"))
    assert out["ties"].tolist() == [0, 0, 0]


@pytest.mark.parametrize(
    ("col", "value", "shown"),
    [("win1", -1, "-1"), ("win2", 1.5, "1.5"), ("ties", -2, "-2"), ("win2", np.nan, "nan")],
)
def test_check_win_table_rejects_non_counts(ready, col, value, shown):
    ready[col] = ready[col].astype(float)
    ready.loc[1, col] = value
    with pytest.raises(ValueError, match=rf"'{col}' must hold counts.*row 1 has {shown}"):
        D.check_win_table(ready)


def test_check_win_table_rejects_a_pair_twice(ready):
    again = pd.DataFrame({"alg1": ["c"], "alg2": ["a"], "win1": [1], "win2": [1], "ties": [0]})
    with pytest.raises(ValueError, match=r"pair 'a'-'c' twice.*one row per pair"):
        D.check_win_table(pd.concat([ready, again], ignore_index=True))
    with pytest.raises(ValueError, match=r"pair 'a'-'b' twice"):
        D.check_win_table(pd.concat([ready, ready.iloc[[0]]], ignore_index=True))


def test_check_win_table_rejects_self_pairs(ready):
    ready.loc[2, "alg2"] = "b"
    with pytest.raises(ValueError, match=r"row 2 pairs 'b' with itself"):
        D.check_win_table(ready)


def test_check_win_table_names_a_missing_column(ready):
    # a FitRequest's win table reaches check_win_table as given: pandas' KeyError before
    with pytest.raises(ValueError, match=r"needs the columns alg1, alg2, win1, win2.*'win2'"):
        D.check_win_table(ready.drop(columns="win2"))


def test_check_win_table_keeps_the_given_value_in_its_messages(ready):
    # counts in pandas' nullable integers: a missing one is named, not a numpy cast error
    ready["win1"] = pd.array([3, None, 5], dtype="Int64")
    with pytest.raises(ValueError, match=r"'win1' must hold counts.*row 1 has <NA>"):
        D.check_win_table(ready)
    ready["win1"] = np.array([3, 2**40, 5], dtype=np.uint64)
    with pytest.raises(ValueError, match=r"'win1' row 1 has 1099511627776, more games"):
        D.check_win_table(ready)


def test_check_win_table_rejects_text_counts(ready):
    ready["win1"] = ["3", "x", "5"]
    with pytest.raises(TypeError, match=r"'win1'.*'x'"):
        D.check_win_table(ready)


# =========================================================================== issue 9


def test_data_set_names_1_and_text_1_do_not_merge():
    """Issue 9.9: 1 and "1" are two data sets to pandas but one name as text."""
    df = pd.DataFrame(
        {"db": pd.Series([1, "1", "x"], dtype=object), "a": [0.5, 0.6, 0.7], "b": [0.4, 0.7, 0.1]}
    )
    with pytest.raises(ValueError, match=r"dataset names 1 \(row 0\) and '1' \(row 1\).*merge"):
        D.tidy_results(df, dataset="db")
    long = pd.DataFrame(
        {"db": ["x"] * 3, "alg": pd.Series([2, "2", "c"], dtype=object), "acc": [0.1, 0.2, 0.3]}
    )
    with pytest.raises(ValueError, match=r"algorithm names 2 \(row 0\) and '2' \(row 1\)"):
        D.tidy_results(long, dataset="db", algorithm="alg", score="acc")
    # one type is fine, even mixed with other names
    ok = D.tidy_results(
        df.assign(db=df["db"].astype(str).replace({"1": "one"}).to_list()), dataset="db"
    )
    assert len(ok.datasets) == 2


def test_fold_sums_that_overflow_are_refused():
    """Issue 9.9: 1e308 + 1e308 is inf; the data set used to vanish from every count."""
    df = pd.DataFrame(
        {"db": ["big", "big", "ok", "ok"], "a": [1e308, 1e308, 1.0, 2.0], "b": [1.0, 2.0, 3.0, 4.0]}
    )
    with pytest.raises(ValueError, match=r"data set 'big', algorithm 'a'.*1e\+308.*rescale"):
        D.tidy_results(df, dataset="db")
    # the same magnitudes that do not overflow still work
    assert D.tidy_results(df.assign(a=df["a"] / 10), dataset="db").means[0, 0] == 1e307


def test_id_like_integer_column_is_refused(base):
    """Issue 9.10: a task_id column would be read as an algorithm that beats everyone."""
    with_id = base.assign(task_id=np.arange(100, 100 + len(base)))
    with pytest.raises(ValueError, match=r"column 'task_id'.*ID.*dataset='task_id'.*drop"):
        bbt.win_table(with_id, dataset="db")
    means = base.groupby("db").mean().reset_index()
    with pytest.raises(ValueError, match=r"column 'seed'.*like an ID"):
        D.tidy_results(means.assign(seed=[7 * k + 3 for k in range(len(means))]), dataset="db")
    # the fix it names works: floats are scores
    as_float = with_id.assign(task_id=with_id["task_id"].astype(float))
    assert "task_id" in D.tidy_results(as_float, dataset="db").algorithms


def test_integer_scores_that_are_all_counts_are_not_ids():
    """Error counts per data set are integers too, and may differ on every row."""
    counts = pd.DataFrame({"a": [12, 7, 30, 4], "b": [11, 9, 28, 5]}, index=list("wxyz"))
    tidy = D.tidy_results(counts, lower_is_better=True)
    assert tidy.algorithms == ("a", "b")
    # a repeated integer is no ID either
    mixed = pd.DataFrame({"a": [0.1, 0.2, 0.3], "k": [1, 1, 2]}, index=list("xyz"))
    assert D.tidy_results(mixed).algorithms == ("a", "k")


@pytest.mark.parametrize("value", [2**31, 1e20, "3000000000"])
def test_win_table_counts_beyond_stans_int_are_refused_with_the_given_value(value):
    """Issue 9.14: such counts failed inside Stan; 1e20 was shown as -9223372036854775808."""
    table = pd.DataFrame(
        {"alg1": ["a"], "alg2": ["b"], "win1": pd.Series([value], dtype=object), "win2": [1]}
    )
    with pytest.raises(ValueError, match=r"column 'win1' row 0 has (.*)Stan can count") as err:
        D.check_win_table(table)
    assert repr(value) in str(err.value)
    assert "-9223372036854775808" not in str(err.value)


def test_win_table_row_total_beyond_stans_int_is_refused():
    table = pd.DataFrame({"alg1": ["a"], "alg2": ["b"], "win1": [2**30], "win2": [2**30]})
    with pytest.raises(ValueError, match=r"row 0 has 2147483648 games in all"):
        D.check_win_table(table)
    ok = D.check_win_table(table.assign(win2=2**30 - 1))
    assert int(ok["win1"].iloc[0] + ok["win2"].iloc[0]) == 2**31 - 1


def test_multiindex_columns_say_how_to_flatten(base):
    """Issue 9.19: groupby/agg gives MultiIndex columns such as ('db', '')."""
    agg = base.groupby("db").agg(["mean"]).reset_index()
    with pytest.raises(ValueError, match=r"MultiIndex columns.*\('db', ''\).*flatten.*join"):
        D.tidy_results(agg, dataset="db")
    flat = agg.copy()
    flat.columns = ["_".join(map(str, c)).strip("_") for c in flat.columns]
    assert D.tidy_results(flat, dataset="db").algorithms[0] == "dt_mean"


# --- the CLI's file reader (issue 9.6)


def test_cli_reader_refuses_a_ragged_first_row(tmp_path):
    """pandas made the first column the index: 'db' became an algorithm, scores shifted."""
    from bbt_widget.cli import InputError, read_results

    path = tmp_path / "r.csv"
    path.write_text("db,a,b\nd1,0.5,0.6,0.7\nd2,0.4,0.3\n")
    with pytest.raises(InputError, match=r"line 2: 4 fields, but the header has 3"):
        read_results(str(path))
    path.write_text("db,a,b\nd1,0.5,0.6\nd2,0.4\n")
    with pytest.raises(InputError, match=r"line 3: 2 fields, but the header has 3"):
        read_results(str(path))


def test_cli_reader_refuses_duplicate_headers(tmp_path):
    """pandas renamed the second 'a' to 'a.1', a new algorithm."""
    from bbt_widget.cli import InputError, read_results

    path = tmp_path / "r.csv"
    path.write_text("db,a,a,b\nd1,0.5,0.6,0.7\n")
    with pytest.raises(InputError, match=r"names column 'a' twice"):
        read_results(str(path))


def test_cli_reader_reads_well_formed_files(tmp_path):
    from bbt_widget.cli import read_results

    path = tmp_path / "r.tsv"
    path.write_text('db\ta\tb\n"d,1"\t0.5\t\n\nd2\t0.4\t0.3\n')  # quoted sep, blank line, NaN
    df = read_results(str(path))
    assert list(df.columns) == ["db", "a", "b"]
    assert df["db"].tolist() == ["d,1", "d2"] and np.isnan(df["b"].iloc[0])
    shipped = files("bbt_widget") / "datasets" / "pmlb16_4fold.csv"
    assert read_results(str(shipped)).shape == (528, 17)


def test_folds_restarting_in_each_run_name_the_run_column():
    """Repeated cross-validation numbers its folds again in each run: the duplicate-fold error
    used to be generic; it now names the column that tells the rows apart and the fix."""
    rows = [
        {"db": "d1", "alg": a, "run": r, "fold": f, "acc": 0.5 + 0.01 * (r + f) + (a == "b") * 0.1}
        for a in ("a", "b")
        for r in (1, 2)
        for f in (1, 2, 3)
    ]
    df = pd.DataFrame(rows)
    with pytest.raises(
        ValueError, match=r"fold 1.*column 'run' differs.*df\['fold'\]\.astype.*fold='fold_id'"
    ):
        bbt.fit(df, dataset="db", algorithm="alg", fold="fold", score="acc")
    # the fix the message gives works
    df["fold_id"] = df["run"].astype(str) + "-" + df["fold"].astype(str)
    tidy = D.tidy_results(df, dataset="db", algorithm="alg", fold="fold_id", score="acc")
    assert tidy.fold_counts.max() == 6


# ====================================================== names compared as clean_name gives them


def _base_long(base: pd.DataFrame) -> pd.DataFrame:
    """The paper's 5 x 20 base results in long form (fold labels 0-3)."""
    return base.assign(fold=base.groupby("db").cumcount()).melt(
        id_vars=["db", "fold"], var_name="algorithm", value_name="acc"
    )


LONG = {"dataset": "db", "algorithm": "algorithm", "fold": "fold", "score": "acc"}


def test_long_form_name_with_a_trailing_space_is_the_same_algorithm(base):
    """'svm' and 'svm ' in half of the rows each were two algorithms, ranked 1st and 4th."""
    long = _base_long(base)
    split = long.assign(
        algorithm=np.where(
            (long["algorithm"] == "svm") & (long.index % 2 == 0), "svm ", long["algorithm"]
        )
    )
    tidy = D.tidy_results(split, **LONG)
    assert tidy.algorithms == ("dt", "lda", "lgbm", "xgb", "svm")
    assert _rows(tidy) == _rows(D.tidy_results(long, **LONG))
    [note] = tidy.notes
    assert note.check == "names"
    assert "algorithm names" in note.what and "'svm ' and 'svm' into 'svm'" in note.what
    with pytest.warns(bbt.DataWarning, match=r"'svm ' and 'svm' into 'svm'"):
        table = bbt.win_table(split, **LONG)
    pd.testing.assert_frame_equal(table, bbt.win_table(base, dataset="db"))


def test_nfc_and_nfd_names_are_one_data_set_and_one_algorithm(base):
    """'é' typed (NFC) and pasted as e + combining accent (NFD) look the same: they were two
    data sets (and two wide columns with identical labels)."""
    nfc, nfd = "décision", "de\u0301cision"
    clean = base.rename(columns={"dt": nfc}).replace({"db": {"cmc": "cmç"}})
    mixed = clean.copy()
    cmc = mixed.index[mixed["db"] == "cmç"]
    mixed.loc[cmc[:2], "db"] = "cmc\u0327"  # NFD of the same name, on two of its four folds
    # the column split in two: NFC on even rows, NFD on odd rows (two tables concatenated)
    mixed[nfd] = mixed[nfc].where(mixed.index % 2 == 1)
    mixed[nfc] = mixed[nfc].where(mixed.index % 2 == 0)
    tidy = D.tidy_results(mixed, dataset="db")
    assert tidy.algorithms == (nfc, "lda", "lgbm", "xgb", "svm")
    assert len(tidy.datasets) == 20 and tidy.n_folds == 4
    assert _rows(tidy) == _rows(D.tidy_results(clean, dataset="db"))
    said = " | ".join(n.what for n in tidy.notes)
    # both spellings print alike, so the note shows them escaped
    assert "'cmc\\u0327' and 'cm\\xe7' into 'cmç'" in said
    assert "'d\\xe9cision' and 'de\\u0301cision' into 'décision'" in said


def test_names_are_stripped_without_a_note_when_nothing_merges(base_means):
    """A CSV written with ', ' gives every name a leading space: cleaned, nothing merged."""
    spaced = base_means.rename(index=lambda d: " " + d, columns=lambda a: " " + a)
    tidy = D.tidy_results(spaced)
    assert tidy.datasets == tuple(base_means.index) and tidy.notes == ()
    assert tidy.algorithms == ("dt", "lda", "lgbm", "xgb", "svm")


def test_fold_labels_that_differ_by_whitespace_pair_up(base):
    """Fold labels 'k1' and 'k1 ' for different algorithms are one fold: the paired local
    ROPE compares those folds (with two labels it had no common folds at all)."""
    long = _long(base, "db")
    spaced = long.assign(fold=np.where(long["alg"] == "svm", long["fold"] + " ", long["fold"]))
    keys = {"dataset": "db", "algorithm": "alg", "fold": "fold", "score": "acc"}
    tidy = D.tidy_results(spaced, **keys)
    assert tidy.n_folds == 4 and tidy.fold_mismatch_datasets == ()
    assert "fold labels" in tidy.notes[0].what and "'k1' and 'k1 ' into 'k1'" in tidy.notes[0].what
    with pytest.warns(bbt.DataWarning):
        table = bbt.win_table(spaced, **keys, d_min=0.4)
    pd.testing.assert_frame_equal(table, bbt.win_table(base, dataset="db", d_min=0.4))


def test_wide_columns_that_hold_the_same_algorithm_twice_are_refused(base):
    twice = base.assign(**{"svm ": base["svm"]})
    with pytest.raises(ValueError, match=r"columns 'svm' and 'svm ' are one algorithm") as err:
        D.tidy_results(twice, dataset="db")
    assert "score on row 0" in str(err.value) and "data.drop(columns=['svm '])" in str(err.value)


def test_long_rows_that_become_one_key_are_refused_with_the_raw_names(base):
    long = _base_long(base)
    extra = long.iloc[[0]].assign(algorithm="dt ")  # biomed, dt, fold 0 again, as 'dt '
    with pytest.raises(ValueError) as err:
        D.tidy_results(pd.concat([long, extra], ignore_index=True), **LONG)
    text = str(err.value)
    assert "rows 0 and 400 give two results for one (data set, algorithm, fold)" in text
    assert "data set 'biomed', algorithm 'dt' and 'dt ', fold '0'" in text
    assert "keep one of the two rows" in text


def test_wide_rows_that_become_one_data_set_and_fold_are_refused(small_folds):
    df = small_folds.assign(fold=[1, 2, 1, 2])
    df.loc[1, ["ds", "fold"]] = ["d1 ", 1]  # d1's fold 1 twice, once as 'd1 '
    with pytest.raises(ValueError, match=r"data set 'd1' and 'd1 ', fold '1'"):
        D.tidy_results(df, dataset="ds", fold="fold")


# ========================================================= data sets that give no comparison


def test_data_sets_with_fewer_than_two_scored_algorithms_are_left_out(base):
    """A data set where every algorithm is missing was counted ('5 algorithms on 20 data
    sets'); one where only svm has a score gives no comparison either."""
    algs = ["dt", "lda", "lgbm", "xgb", "svm"]
    holes = base.copy()
    holes.loc[holes["db"] == "vote", algs] = np.nan
    holes.loc[holes["db"] == "cmc", algs[:4]] = np.nan
    tidy = D.tidy_results(holes, dataset="db")
    assert len(tidy.datasets) == 18 and tidy.dropped_datasets == ("vote", "cmc")
    assert not {"cmc", "vote"} & set(tidy.frame["dataset"])
    [note] = tidy.notes
    assert note.check == "no-comparison"
    assert note.what.startswith("2 data sets left out: fewer than two algorithms have a score")
    assert "('vote' (no score), 'cmc' (only 'svm'))" in note.what
    kept = base[~base["db"].isin(["cmc", "vote"])]
    with pytest.warns(bbt.DataWarning, match="2 data sets left out"):
        table = bbt.win_table(holes, dataset="db")
    pd.testing.assert_frame_equal(table, bbt.win_table(kept, dataset="db"))


def test_results_without_any_comparison_are_refused():
    long = pd.DataFrame({"alg": ["a", "b", "a"], "acc": [0.5, 0.7, 0.6]})
    with pytest.raises(ValueError, match=r"nothing to fit.*pass dataset="):
        D.tidy_results(long, algorithm="alg", score="acc")


@pytest.mark.parametrize(
    ("frame", "layout", "match"),
    [
        (
            pd.DataFrame({"ds": ["d1", "d2"], "a": [0.8, 0.7], "b": [0.7, 0.6], "  ": [0.5, 0.5]}),
            {"dataset": "ds"},
            r"algorithm name '  ' of a score column is blank; name the column, e\.g\. "
            r"data\.rename\(columns=\{'  ': 'my_algorithm'\}\)",
        ),
        (
            pd.DataFrame({"ds": ["d1", " ", "d1", " "], "alg": list("aabb"), "acc": [0.1] * 4}),
            {"dataset": "ds", "algorithm": "alg", "score": "acc"},
            r"data set name ' ' on row 1 is blank; give it a name or drop the row",
        ),
        (
            pd.DataFrame({"ds": ["d1", "d2"] * 2, "alg": ["a", "a", "\t", "\t"], "acc": [0.1] * 4}),
            {"dataset": "ds", "algorithm": "alg", "score": "acc"},
            r"algorithm name '\\t' on row 2 is blank",
        ),
    ],
    ids=["wide column", "long data set", "long algorithm"],
)
def test_a_blank_name_is_refused_with_where_it_is(frame, layout, match):
    # a blank name would print as nothing in every table, chart and report
    with pytest.raises(ValueError, match=match):
        bbt.win_table(frame, **layout)
