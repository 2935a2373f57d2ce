"""``bbt-widget demo``: the paper's base analysis, its tables printed."""

from __future__ import annotations

import argparse
import time

import pandas as pd

from .common import EXIT_OK, fixed
from .progress import Progress


def demo(args: argparse.Namespace) -> int:
    """Fit the paper's base results (Table 2) and print Tables 3b, 6 and 5."""
    import bbt_widget as bbt

    base = bbt.datasets.load_base()
    progress = Progress()
    start = time.perf_counter()
    res = bbt.fit(base, dataset="db", seed=args.seed, engine=args.engine, progress=progress)
    took = time.perf_counter() - start
    progress.done()
    with pd.option_context("display.width", 120):
        print("\nWin table (paper Table 3b, with floating-point ties corrected):")
        print(fixed(res.win_table))
        print("\nP(a > b) (paper Table 6):")
        print(fixed(res.summary()))
        print("\nPosterior predictive check (paper Table 5):")
        print(fixed(res.ppc_table()))
        print(f"\n{res.diagnostics()}")
    print(f"engine {res.engine}, seed {args.seed}, {took:.1f} s")
    return EXIT_OK
