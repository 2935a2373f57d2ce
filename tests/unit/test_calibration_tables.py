"""Tables 16 and 17 from hand-made cases (no Stan)."""

from __future__ import annotations

import pandas as pd
import pytest

from bbt_widget.lab.calibration import _strong_table, _weak_table


def _cases() -> pd.DataFrame:
    # two pairs: rates 0.8 and 0.3; the paper's HDIs are narrow, the predictive ones wide
    base = {"repeat": [0, 0], "pair": ["a > b", "a > c"], "n_games": [10, 10]}
    cols = {
        "win_a": [8, 3],
        "empirical": [0.8, 0.3],
        "mean": [0.7, 0.6],
        "above_50": [0.95, 0.6],
        "p_wins_more": [0.8, 0.5],
    }
    for way, (lo, hi) in {"paper": (0.65, 0.75), "predictive": (0.2, 0.9)}.items():
        for mass, shrink in ((90, 0.0), (70, 0.05), (50, 0.1)):
            cols[f"{way}_{mass}_low"] = [lo + shrink, lo + shrink]
            cols[f"{way}_{mass}_high"] = [hi - shrink, hi - shrink]
    return pd.DataFrame({**base, **cols})


def test_strong_table_by_hand():
    t = _strong_table(_cases())
    assert t.loc["paper", "within.90"] == 0.0
    assert t.loc["paper", "above90"] == 0.5 and t.loc["paper", "below90"] == 0.5
    assert t.loc["predictive", "within.90"] == 1.0
    assert t.loc["predictive", "within.50"] == 0.5  # 0.3 is outside [0.3 + 0.1, 0.9 - 0.1]
    assert t.loc["paper", "err"] == pytest.approx(((0.7 - 0.8) + (0.6 - 0.3)) / 2)
    assert t.loc["paper", "mad"] == pytest.approx(0.2)  # median of 0.1 and 0.3


def test_weak_table_by_hand():
    t = _weak_table(_cases())
    assert t.loc["0.5-0.7"].to_dict() == {
        "cases": 1,
        "expected_paper": 0.6,
        "expected_predictive": 0.5,
        "actual": 0,
    }
    assert t.loc["0.9-1.0", "actual"] == 1 and t.loc["0.7-0.9", "cases"] == 0
