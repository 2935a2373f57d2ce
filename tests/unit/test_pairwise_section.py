"""The report's "Pairwise tests" section flags the pairs whose hierarchical fit failed its
convergence checks (no Stan: the agreement table and the fits' flags are given)."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from bbt_widget.outputs.report import _sections as rs
from bbt_widget.outputs.report._meta import column_definitions


def _agreement(ok: list[bool]) -> SimpleNamespace:
    table = pd.DataFrame(
        {
            "pair": ["x > y", "x > z", "y > z"],
            "alg_a": ["x", "x", "y"],
            "alg_b": ["y", "z", "z"],
            "bbt": ["a better", "a better", "no claim"],
            "hierarchical": ["a better", "no claim", "no claim"],
            "hier_p_left": [0.99, 0.5, 0.45],
            "hier_p_rope": [0.01, 0.3, 0.10],
            "hier_p_right": [0.0, 0.2, 0.45],
            "bsr": ["a better"] * 3,
            "sign": ["a better"] * 3,
            "wilcoxon": ["a better"] * 3,
            "nemenyi": ["no claim"] * 3,
        }
    )
    # the hierarchical test's own rows, one of them the other way round
    hier = pd.DataFrame({"alg_a": ["x", "z", "y"], "alg_b": ["y", "x", "z"], "diagnostics_ok": ok})
    return SimpleNamespace(
        table=table,
        interpretation="weak",
        hierarchical=SimpleNamespace(table=hier, fits={}, rope=0.01),
    )


def test_pairs_that_failed_the_diagnostics_are_flagged():
    section = rs.pairwise_section(_agreement([True, False, True]))
    frame = section.tables[0].frame
    assert frame["hier_converged"].tolist() == [True, False, True]
    text = " ".join(map(str, section.text))
    assert "failed the convergence checks" in text and "1 pair (x > z;" in text
    notes = dict(column_definitions(frame.columns, hdi=0.95, rope=(0.45, 0.55)))
    assert "convergence checks" in notes["hier_converged"]


def test_no_flag_text_when_every_pair_converged():
    section = rs.pairwise_section(_agreement([True, True, True]))
    assert section.tables[0].frame["hier_converged"].all()
    assert "convergence" not in " ".join(map(str, section.text))
