"""The audit inside ``fit`` and the command: its warnings reach the user (real Stan fits)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bbt_widget as bbt
from bbt_widget import cli
from bbt_widget.outputs.methods_text import methods_text

pytestmark = pytest.mark.stan
SHORT = {"iter_warmup": 200, "iter_sampling": 200}


def test_fit_warns_with_the_audit_and_keeps_it(base):
    data = base.assign(const=0.5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = bbt.fit(data, dataset="db", **SHORT)
    messages = [str(w.message) for w in caught if w.category is bbt.DataWarning]
    assert messages == [
        "column 'const' has the same value (0.5) in every row (column 'const'); a constant "
        "column ties or wins everywhere; check it is an algorithm"
    ]
    assert [f.check for f in res.audit.warnings] == ["constant"]
    assert res.audit.to_frame()["check"].tolist()[:2] == ["constant", "shape"]


def test_clean_results_fit_without_data_warnings(base):
    with warnings.catch_warnings():
        warnings.simplefilter("error", bbt.DataWarning)
        res = bbt.fit(base, dataset="db", **SHORT)
    assert res.audit.ok and res.audit.findings  # notes only (shape, folds, float noise)


def test_command_prints_data_and_group_warnings(tmp_path, capsys, two_groups):
    df = two_groups
    path = tmp_path / "groups.csv"
    df.to_csv(path, index=False)
    code = cli.main(["report", str(path), "-o", str(tmp_path / "r.md"), "--iter-sampling", "300"])
    assert code in (cli.EXIT_OK, cli.EXIT_DIAGNOSTICS)
    err = capsys.readouterr().err
    assert "bbt-widget: warning: " in err and "2 groups" in err
    assert "bbt-widget: warning: 16 missing results" in err


def test_split_names_and_a_data_set_without_results_in_the_fit_and_methods_text(base):
    """'svm ' on half of svm's long rows was a sixth algorithm, ranked apart from 'svm' (the
    methods text claimed 'svm is better than dt' twice); a data set with no result at all was
    counted ('5 algorithms on 20 data sets')."""
    long = base.assign(fold=base.groupby("db").cumcount()).melt(
        id_vars=["db", "fold"], var_name="algorithm", value_name="acc"
    )
    long.loc[long["algorithm"] == "svm", "algorithm"] = ["svm", "svm "] * 40
    long.loc[long["db"] == "vote", "acc"] = np.nan
    keys = {"dataset": "db", "algorithm": "algorithm", "fold": "fold", "score": "acc"}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = bbt.fit(long, **keys, **SHORT)
    messages = [str(w.message) for w in caught if w.category is bbt.DataWarning]
    assert any("merged: 'svm' and 'svm ' into 'svm'" in m for m in messages), messages
    assert any(m.startswith("1 data set left out") and "'vote' (no score)" in m for m in messages)
    assert list(res.algorithms) == ["dt", "lda", "lgbm", "xgb", "svm"]
    assert len(res.summary()) == 10  # pairs of five algorithms
    text = methods_text(res)
    assert "We compared 5 algorithms on 19 data sets" in text
    assert "1 further data set, with a score for fewer than two algorithms, was left out." in text
