"""``bbt-widget calibrate``: how well the probabilities predict held-out data sets (paper
Sec. 8), as the paper's Tables 16 and 17 and the calibration chart."""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import pandas as pd

from .checks import (
    check_before_fit,
    check_output,
    guess_dataset,
    layout_options,
    model_options,
    read_results,
)
from .common import EXIT_ENGINE, EXIT_OK, InputError, fixed


def calibrate(args: argparse.Namespace) -> int:
    """Paper Sec. 8 on a results file: Tables 16 and 17 both ways, and the chart."""
    import bbt_widget as bbt
    from bbt_widget.core.data import check_count
    from bbt_widget.engines.base import EngineError
    from bbt_widget.lab.batch import check_executor, text_progress
    from bbt_widget.outputs.export import CHART_FORMATS, save_chart

    out = Path(args.output)
    check_output(out, args.output, CHART_FORMATS, what="the chart")
    for name in ("n_train", "n_test", "repeats"):
        check_count(getattr(args, name), "--" + name.replace("_", "-"))
    try:
        check_executor(args.scheduler, "--scheduler")
    except ValueError:
        raise InputError(
            f"--scheduler {args.scheduler!r} is not a Dask scheduler address; give one with its "
            "port, such as tcp://host:8786, or leave --scheduler out to use the local cores"
        ) from None
    df = read_results(args.results, args.sep, args.decimal)
    dataset = guess_dataset(df, args)
    check_before_fit(df, args, dataset)
    executor = args.scheduler  # a Dask scheduler address, or None: the local cores
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bbt.DataWarning)  # said once, by the audit below
            result = bbt.calibration(
                df,
                **layout_options(args, dataset),
                **model_options(args),
                n_train=args.n_train,
                n_test=args.n_test,
                repeats=args.repeats,
                executor=executor,
                progress=None if args.quiet else text_progress(),
            )
    except EngineError as err:
        print(f"\nbbt-widget: the Stan engine failed: {err}", file=sys.stderr)
        return EXIT_ENGINE
    except ConnectionError as err:
        raise InputError(f"--scheduler {args.scheduler!r}: {err}") from None
    took = time.perf_counter() - start
    if not args.quiet:
        print(f"{args.repeats} repeats in {took:.1f} s, seed {args.seed}", file=sys.stderr)
    for error in result.failed:
        print(f"bbt-widget: warning: a repeat failed and is left out: {error}", file=sys.stderr)
    with pd.option_context("display.width", 120):
        print("Strong interpretation (paper Table 16): test win rates inside the HDIs")
        print(fixed(result.strong.reset_index()))
        print("\nWeak interpretation (paper Table 17): expected and actual wins per above.50 bin")
        print(fixed(result.weak.reset_index()))
    print(
        "\n'paper' compares test win rates with the HDI of the mean P(a > b), as the paper "
        "does; 'predictive' with the posterior-predictive spread of the same number of test "
        "games (see help(bbt_widget.calibration))."
    )
    save_chart(result.chart(), out)
    print(f"wrote {out}")
    print(f"reproduce with: {args.reproduce}")
    return EXIT_OK
