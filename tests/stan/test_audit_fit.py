"""The audit inside ``fit`` and the command: its warnings reach the user (real Stan fits)."""

from __future__ import annotations

import warnings

import pytest

import bbt_widget as bbt
from bbt_widget import cli

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
