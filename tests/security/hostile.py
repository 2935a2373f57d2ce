"""Hostile names (HTML, Markdown and LaTeX syntax, spreadsheet formulas, line breaks, emoji,
right-to-left text and bidi controls) and a real fit of them, for the security tests."""

from __future__ import annotations

import numpy as np
import pandas as pd

import bbt_widget as bbt

#: Names holding right-to-left letters or bidi controls: an override left open (U+202E)
#: mirrors everything after it, Hebrew letters turn the " > " between two names around, an
#: isolate left open (U+2067) or a PDI that closes nothing (U+2069) unbalances the text around.
BIDI = (
    "\u202eP(right) override",
    "\u05e2\u05d1\u05e8\u05d9\u05ea",
    "open\u2067isolate",
    "stray\u2069\u202bpdi",
)

#: A data set name with a right-to-left override left open.
BIDI_DATASET = "\u202eoverridden-ds"

#: Algorithm names an attacker, a careless user or another tool could produce.
HOSTILE = (
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "a|b",
    "x\ny",
    "=cmd|' /C calc'!A0",
    "+1",
    "-2",
    "@SUM(A1)",
    "c_d*e*",
    "100%",
    "$\\&#{}~^",
    "[link](javascript:alert(1))",
    "`tick` --- \\emph{x}",
    "🚀" * 60,
    "p > q",
    "r vs s",
    *BIDI,
)


def hostile_results(names: tuple[str, ...] = HOSTILE, n_datasets: int = 8) -> pd.DataFrame:
    """Wide results, 2 folds per data set, every algorithm clearly ordered (so the methods
    text names them in claims): algorithm k scores about 0.5 + 0.02 k. The first data set
    is :data:`BIDI_DATASET`."""
    rng = np.random.default_rng(0)
    rows = [
        {
            "db": BIDI_DATASET if d == 0 else f"d{d}",
            **{n: 0.5 + 0.02 * k + rng.normal(0, 0.005) for k, n in enumerate(names)},
        }
        for d in range(n_datasets)
        for _fold in range(2)
    ]
    return pd.DataFrame(rows)


def fit_hostile(names: tuple[str, ...] = HOSTILE) -> bbt.BBTResult:
    """A real PyStan fit with a fixed seed, short chains (the outputs, not the numbers, are
    under test)."""
    return bbt.fit(
        hostile_results(names),
        dataset="db",
        engine="pystan",
        seed=11,
        chains=2,
        iter_warmup=400,
        iter_sampling=400,
    )
