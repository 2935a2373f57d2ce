"""Several metrics on one command line: ``--score`` given once per metric and
``--lower-is-better METRIC``, read into ``args.metrics`` and ``args.lower_metrics``, and the
report of several metrics (one fit per metric, :func:`bbt_widget.compare_metrics`; with
``--group``, one fit of the group model per metric)."""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from .checks import (
    check_control,
    check_highlight,
    check_output,
    check_summaries,
    guess_dataset,
    layout_options,
    model_options,
    read_results,
)
from .common import (
    EXIT_CHARTS,
    EXIT_DIAGNOSTICS,
    EXIT_ENGINE,
    EXIT_OK,
    InputError,
    as_options,
)
from .progress import Progress, Silent


def add_score_options(p: argparse.ArgumentParser, group: Any) -> None:
    """``--score`` (once per metric), ``--fold`` between them as the help lists them, and
    ``--lower-is-better [METRIC]``."""
    p.set_defaults(scores=[], lower_metrics=[])
    group.add_argument(
        "--score",
        action=Scores,
        help="long form: column holding the score; report: give it once per metric "
        "(--score acc --score f1) to fit each and compare them (dominance, Pareto set)",
    )
    group.add_argument("--fold", help="column numbering the cross-validation folds")
    group.add_argument(
        "--lower-is-better",
        nargs="?",
        default=False,
        action=LowerIsBetter,
        metavar="METRIC",
        help="lower scores win (errors, times, RMSE); with several --score, name each such "
        "metric (--lower-is-better time)",
    )


def metric_words(words: list[str]) -> list[str]:
    """``words`` with a file named after ``--lower-is-better`` (and none of the ``--score``
    columns) moved before it, so that it stays the results file: ``--lower-is-better
    results.csv`` is the flag and the results, ``--lower-is-better time`` names a metric."""
    scores = {b for a, b in itertools.pairwise(words) if a == "--score"}
    scores |= {w.split("=", 1)[1] for w in words if w.startswith("--score=")}
    out = list(words)
    for k in range(len(out) - 1):
        nxt = out[k + 1]
        if out[k] == "--lower-is-better" and nxt not in scores and Path(nxt).is_file():
            out[k], out[k + 1] = nxt, out[k]
    return out


class Scores(argparse.Action):
    """``--score``, given once per metric: the first column in ``score`` (one metric), every
    one in ``scores``."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        namespace.scores = [*namespace.scores, values]
        namespace.score = namespace.scores[0]


class LowerIsBetter(argparse.Action):
    """``--lower-is-better`` alone sets the flag (one metric); with a metric's name it adds
    the name to ``lower_metrics`` (several metrics)."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        if values is None:
            namespace.lower_is_better = True
        else:
            namespace.lower_metrics = [*namespace.lower_metrics, values]


def metric_options(args: argparse.Namespace) -> None:
    """``--score`` and ``--lower-is-better`` as one metric (``args.score``, the flag) or as
    several (``args.metrics`` and ``args.lower_metrics``, for the report of several
    metrics); ``args.metrics`` is ``None`` for one."""
    if not hasattr(args, "scores"):
        return
    args.metrics = None
    named = args.lower_metrics
    if len(args.scores) > 1:
        if args.command != "report":
            raise InputError(f"{args.command} takes one --score; several are for the report")
        if args.lower_is_better:
            raise InputError(
                "with several --score, name the metrics where lower is better, e.g. "
                f"--lower-is-better {args.scores[-1]}"
            )
        if args.tie_threshold:  # None and 0 are no threshold, whatever the scale
            # one number in score units would put one scale on every metric (half a point
            # of accuracy on times in seconds); compare_metrics takes one per metric
            thresholds = dict.fromkeys(args.scores, args.tie_threshold)
            raise InputError(
                f"--tie-threshold {args.tie_threshold:g} is in score units, and the metrics "
                f"{', '.join(args.scores)} may each have their own scale; leave it out, or "
                "report each metric with its own --score and --tie-threshold, or in Python "
                f"give one per metric: bbt.compare_metrics(..., tie_threshold={thresholds!r})"
            )
        args.metrics, args.score = args.scores, None
        return
    if any(name != args.score for name in named):
        raise InputError(
            f"--lower-is-better {named[0]}: {named[0]!r} is not the --score column; give "
            "--lower-is-better alone for the one score"
        )
    args.lower_is_better = args.lower_is_better or bool(named)


def report_metrics(args: argparse.Namespace) -> int:
    """The report of several metrics (``--score`` more than once): one fit per metric
    through the batch layer (:func:`bbt_widget.compare_metrics`), the dominance across them
    (:func:`bbt_widget.outputs.report._build.write_metrics`)."""
    import pandas as pd

    import bbt_widget as bbt
    from bbt_widget.core.validation import check_adapt_delta, check_max_treedepth
    from bbt_widget.engines.base import EngineError
    from bbt_widget.outputs.export import ChartRenderWarning
    from bbt_widget.outputs.methods_text import REPORT_FORMATS, tables_folder
    from bbt_widget.outputs.report._build import write_metrics
    from bbt_widget.outputs.report._sections import dominance_summary

    from .report import compile_models, get_ready, results_without_group, stan_models

    out = Path(args.output)
    check_output(out, args.output, REPORT_FORMATS)
    if args.robustness or args.with_methods not in (None, "none") or args.rho is not None:
        raise InputError(
            # rho: as_options writes the option (a literal --rho would become ----rho)
            "--robustness, --with and rho apply to one --score; with several metrics, "
            "leave them out (or report each metric with its own --score)"
        )
    given = read_results(args.results, args.sep, args.decimal)
    df = results_without_group(given, args)  # the group column is no algorithm's scores
    dataset = guess_dataset(df, args)
    check_summaries(args)
    check_adapt_delta(args.adapt_delta)
    check_max_treedepth(args.max_treedepth)
    if args.algorithm in df.columns:
        algorithms = [str(a) for a in pd.unique(df[args.algorithm])]
        if args.control is not None:
            check_control(args.control, algorithms)
        check_highlight(args.highlight, algorithms)
    layout = layout_options(args, dataset)
    for key in ("score", "lower_is_better"):
        layout.pop(key)
    model = model_options(args)
    seed = model.pop("seed")
    progress = Silent() if args.quiet else Progress()
    models = stan_models(args)
    start = time.perf_counter()
    try:
        compile_models(models, args.engine, progress)
        get_ready(models, args.engine)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            compared = bbt.compare_metrics(
                given,
                metrics=args.metrics,
                group=args.group,
                lower_is_better=args.lower_metrics,
                seed=seed,
                **layout,
                **model,
                adapt_delta=args.adapt_delta,
                max_treedepth=args.max_treedepth,
                progress=progress,
            )
            took = time.perf_counter() - start
            progress.done(f"fitted {len(args.metrics)} metrics in {took:.1f} s, seed {seed}")
            write_metrics(
                compared,
                out,
                rope=tuple(args.rope),
                hdi=args.hdi,
                interpretation=args.interpretation,
                control=args.control,
                provenance={"command": args.reproduce, "input": Path(args.results).name},
                highlight=args.highlight,
            )
            progress.done()
    except EngineError as err:
        progress.done()
        print(f"\nbbt-widget: the Stan engine failed: {err}", file=sys.stderr)
        return EXIT_ENGINE
    for w in caught:
        if issubclass(w.category, (bbt.DataWarning, bbt.DisconnectedWarning)):
            print(f"bbt-widget: warning: {as_options(str(w.message))}", file=sys.stderr)
    for metric, error in compared.errors.items():
        print(f"bbt-widget: the fit of {metric} failed: {error}", file=sys.stderr)
    no_charts = [w for w in caught if issubclass(w.category, ChartRenderWarning)]
    rule = compared.rule(args.interpretation)
    rope = (float(args.rope[0]), float(args.rope[1]))
    print(dominance_summary(compared, rule, rope, args.hdi))
    print(f"wrote {out}" + (" (without charts)" if no_charts else ""))
    print(f"wrote its tables as CSV in {tables_folder(out)}{os.sep}")
    print(f"reproduce with: {args.reproduce}")
    for w in no_charts:
        print(f"bbt-widget: {w.message}", file=sys.stderr)
    bad = [m for m in compared.results if not compared.results[m].diagnostics().ok]
    if bad:
        print(f"bbt-widget: diagnostics FAILED for {', '.join(bad)}", file=sys.stderr)
    # a failed fit is left out of the report, whose other metrics stand: as failed diagnostics
    if bad or compared.errors:
        return EXIT_DIAGNOSTICS
    return EXIT_CHARTS if no_charts else EXIT_OK
