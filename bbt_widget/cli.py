"""Command line: ``bbt-widget demo`` runs the paper's base analysis on the default engine."""

from __future__ import annotations

import argparse
import sys
import time

import pandas as pd


def _progress_printer() -> callable:
    last = {"stage": None}

    def progress(stage: str, fraction: float) -> None:
        if stage != last["stage"]:
            note = (
                " (first run on this machine: about a minute, then cached)"
                if stage == ("compiling")
                else ""
            )
            print(f"{stage}...{note}", file=sys.stderr, flush=True)
            last["stage"] = stage

    return progress


def demo(args: argparse.Namespace) -> int:
    """Fit the paper's base results (Table 2) and print Tables 3b, 6 and 5."""
    import bbt_widget as bbt

    base = bbt.datasets.load_base()
    start = time.perf_counter()
    res = bbt.fit(
        base, dataset="db", seed=args.seed, engine=args.engine, progress=_progress_printer()
    )
    took = time.perf_counter() - start
    with pd.option_context("display.width", 120, "display.precision", 2):
        print("Win table (paper Table 3b, with floating-point ties corrected):")
        print(res.win_table.to_string(index=False))
        print("\nP(a > b) (paper Table 6):")
        print(res.summary().to_string(index=False))
        print("\nPosterior predictive check (paper Table 5):")
        print(res.ppc_table().to_string(index=False))
        print(f"\n{res.diagnostics()}")
    print(f"engine {res.engine}, {took:.1f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``bbt-widget`` command."""
    parser = argparse.ArgumentParser(prog="bbt-widget", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("demo", help="fit the paper's base results and print the tables")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--engine", default="auto", choices=["auto", "pystan", "cmdstanpy"])
    p.set_defaults(func=demo)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, TypeError) as err:
        print(f"bbt-widget: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
