"""``audit``: findings about a results table before any fit (no Stan)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from bbt_widget.core.audit import Audit, audit, audit_tidy
from bbt_widget.core.data import TidyResults, tidy_results


def _checks(result: Audit, severity: str | None = None) -> list[str]:
    return [f.check for f in result.findings if severity in (None, f.severity)]


def test_shipped_results_shape_partial_folds_and_float_noise(pmlb16):
    result = audit(pmlb16, dataset="db")
    assert result.ok and not result.errors
    frame = result.to_frame()
    assert list(frame.columns) == ["severity", "check", "what", "where", "fix"]
    shape = frame[frame["check"] == "shape"].iloc[0]
    assert shape["what"] == "16 algorithms, 132 data sets (4 folds on 132 data sets)"
    # qda lacks two folds on lymphography (the paper's data as shipped)
    partial = frame[frame["check"] == "missing"].iloc[0]
    assert "qda on lymphography (2 of 4)" in partial["where"]
    assert "15 pairs share fewer folds" in frame[frame["check"] == "folds"].iloc[0]["what"]
    noise = frame[frame["check"] == "float-noise"].iloc[0]
    assert noise["severity"] == "info" and noise["what"].startswith("81 differences")


def test_base_results_float_noise_ties_of_table_3a(base):
    noise = audit(base, dataset="db").to_frame().query("check == 'float-noise'").iloc[0]
    # the three ties the paper's Table 3a counted as wins
    assert noise["what"].startswith("3 differences")
    for pair in ("lda - svm on vote", "lgbm - xgb on breast_w", "lgbm - xgb on colic"):
        assert pair in noise["where"]


def test_disconnected_groups_and_pairs_that_never_met():
    nan = np.nan
    df = pd.DataFrame(
        {
            "db": ["a", "b", "c", "d"],
            "x": [0.8, 0.7, nan, nan],
            "y": [0.7, 0.9, nan, nan],
            "z": [nan, nan, 0.6, 0.5],
            "w": [nan, nan, 0.7, 0.5],
        }
    )
    result = audit(df, dataset="db")
    graph = [f for f in result.findings if f.check == "graph"]
    assert graph[0].severity == "warning" and "2 groups" in graph[0].what
    assert graph[0].where == "x, y | z, w"
    assert graph[1].what == "4 pairs of algorithms never met on a data set"
    missing = next(f for f in result.findings if f.check == "missing")
    assert missing.what == "8 missing results (algorithm x data set)"
    assert "z: a, b (2)" in missing.where
    same = next(f for f in result.findings if f.check == "all-equal")
    assert same.where == "d"  # z and w both scored 0.5 there


def test_suspicious_columns(base):
    df = base.assign(task_id=np.arange(len(base)), const=0.5, pct=base["dt"] * 100)
    result = audit(df, dataset="db")
    warned = {f.check: f for f in result.warnings}
    assert set(warned) == {"id-column", "constant", "mixed-scale"}
    assert "'task_id'" in warned["id-column"].what and "dataset=" in warned["id-column"].fix
    assert warned["constant"].what == "column 'const' has the same value (0.5) in every row"
    assert "percentages: 'pct'" in warned["mixed-scale"].where


def test_never_raises_and_reports_what_fit_refuses(base):
    refused = audit(base, dataset="nope")
    assert _checks(refused, "error") == ["input"]
    assert "'nope' is not a column" in refused.errors[0].what
    # with a fold column, a repeated row is a duplicate key
    with_fold = base.assign(fold=base.groupby("db").cumcount())
    with_fold = pd.concat([with_fold, with_fold.iloc[[0]]])
    dup = audit(with_fold, dataset="db", fold="fold")
    assert dup.errors and "two rows for fold" in dup.errors[0].what
    assert audit(pd.DataFrame({"alg1": ["a"], "alg2": ["b"], "win1": [1], "win2": [0]})).ok


@pytest.mark.parametrize("name", ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>"])
def test_html_escapes_names(base, name):
    df = base.rename(columns={"dt": name}).assign(const=0.5)
    df = df.rename(columns={"const": name + "2"})
    page = audit(df, dataset="db")._repr_html_()
    assert "<script>" not in page and "<img" not in page
    assert "&lt;script&gt;" in page or "&lt;img" in page


def test_repr_lists_counts_and_findings(base):
    text = repr(audit(base.assign(const=0.5), dataset="db"))
    assert text.splitlines()[0] == "Audit: 0 errors, 1 warnings, 3 notes"
    assert "[warning] column 'const'" in text


def _long(base: pd.DataFrame) -> pd.DataFrame:
    return base.assign(fold=base.groupby("db").cumcount()).melt(
        id_vars=["db", "fold"], var_name="algorithm", value_name="acc"
    )


LONG = {"dataset": "db", "algorithm": "algorithm", "fold": "fold", "score": "acc"}


@pytest.mark.parametrize("layout", ["wide by fold", "fold column", "wide means", "long"])
def test_mixed_scales_are_found_in_every_layout(base, layout):
    """dt in percent among fractions: in long form it was ranked first with no warning."""
    pct = base.assign(dt=base["dt"] * 100)
    if layout == "wide by fold":
        result = audit(pct, dataset="db")
    elif layout == "fold column":
        result = audit(pct.assign(k=pct.groupby("db").cumcount()), dataset="db", fold="k")
    elif layout == "wide means":
        result = audit(pct.groupby("db", sort=False).mean())
    else:
        result = audit(_long(pct), **LONG)
    [found] = [f for f in result.warnings if f.check == "mixed-scale"]
    assert found.where == "fractions: 'lda', 'lgbm', 'xgb', 'svm'; percentages: 'dt'"
    assert "divide the percentages by 100" in found.fix


def test_whole_percentages_count_but_whole_counts_do_not(base):
    long = _long(base)
    is_dt = long["algorithm"] == "dt"
    rounded = long.assign(acc=np.where(is_dt, np.round(long["acc"] * 100), long["acc"]))
    assert "mixed-scale" in _checks(audit(rounded, **LONG), "warning")
    counts = long.assign(acc=np.round(long["acc"] * np.where(is_dt, 100, 1)))  # all whole
    assert "mixed-scale" not in _checks(audit(counts, **LONG))


def test_a_data_set_without_results_is_left_out_without_numpy_warnings(base):
    """It was counted (20 data sets), and numpy warned 'All-NaN slice encountered'."""
    base.loc[base["db"] == "vote", ["dt", "lda", "lgbm", "xgb", "svm"]] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = audit(base, dataset="db")
    [left_out] = [f for f in result.warnings if f.check == "no-comparison"]
    assert left_out.what.startswith("1 data set left out") and "'vote' (no score)" in left_out.what
    assert "missing" not in _checks(result)  # its five missing results are not counted
    shape = next(f for f in result.findings if f.check == "shape")
    assert shape.what == "5 algorithms, 19 data sets (4 folds on 19 data sets)"


def test_all_equal_check_on_results_with_an_empty_data_set(base):
    """Results built by hand (as subsets are) may list a data set with no score at all."""
    tidy = tidy_results(base, dataset="db")
    with_empty = TidyResults(tidy.frame, tidy.algorithms, (*tidy.datasets, "empty"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = audit_tidy(with_empty)
    assert "all-equal" not in [f.check for f in found]


def test_merged_names_are_warnings_of_the_audit(base):
    long = _long(base)
    long.loc[long["algorithm"] == "svm", "algorithm"] = [" svm", "svm"] * 40
    result = audit(long, **LONG)
    [merged] = [f for f in result.warnings if f.check == "names"]
    assert str(merged) == (
        "algorithm names that differ only by invisible characters, surrounding whitespace or "
        "Unicode form (NFC) were "
        "merged: ' svm' and 'svm' into 'svm'; if they are different, rename them so that they "
        "differ in more than that"
    )
    assert result.findings[1].what.startswith("5 algorithms, 20 data sets")
