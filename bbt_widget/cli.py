"""The ``bbt-widget`` command: the main job without Jupyter.

``bbt-widget report results.csv -o report.html`` fits the BBT model to a results file and
writes a standalone offline report (``.html``, ``.md`` or ``.tex``). ``bbt-widget demo``
runs the paper's base analysis and prints its tables.

Exit codes (for scripts): 0 success; 2 bad arguments, file or data (the message says what
to fix); 3 the Stan engine failed (compile or sampling); 4 the report was written but the
convergence diagnostics failed; 1 anything unexpected.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import pandas as pd

EXIT_OK, EXIT_UNEXPECTED, EXIT_INPUT, EXIT_ENGINE, EXIT_DIAGNOSTICS = 0, 1, 2, 3, 4


class InputError(ValueError):
    """A problem with the command's input the user can fix (exit code 2)."""


def _progress_printer(stream=None) -> Callable[[str, float], None]:
    """Progress on stderr: one line per stage, a live percentage when stderr is a terminal."""
    stream = stream or sys.stderr  # looked up now: tests and notebooks replace sys.stderr
    state = {"stage": None, "shown": -1}
    tty = stream.isatty()

    def progress(stage: str, fraction: float) -> None:
        if stage != state["stage"]:
            if state["stage"] is not None and tty:
                stream.write("\n")
            note = " (first run on this machine: about a minute, then cached)"
            stream.write(f"{stage}...{note if stage == 'compiling' else ''}")
            stream.write("" if tty else "\n")
            state.update(stage=stage, shown=-1)
        pct = int(fraction * 100) if fraction == fraction else -1  # NaN: unknown
        if tty and pct >= 0 and pct != state["shown"]:
            stream.write(f"\r{stage}... {pct:3d}%")
            state["shown"] = pct
        stream.flush()

    return progress


def read_results(path: str) -> pd.DataFrame:
    """Read a CSV / TSV results file, with errors that name the file and the fix."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"results file {path!r} does not exist")
    if p.is_dir():
        raise InputError(f"{path!r} is a folder; give the results file (.csv or .tsv)")
    sep = "\t" if p.suffix.lower() in (".tsv", ".tab") else ","
    try:
        df = pd.read_csv(p, sep=sep)
    except pd.errors.EmptyDataError:
        raise InputError(f"results file {path!r} is empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as err:
        raise InputError(
            f"cannot read {path!r} as {'TSV' if sep == chr(9) else 'CSV'}: {err}"
        ) from None
    if df.shape[1] < 2:
        raise InputError(
            f"{path!r} has {df.shape[1]} column; a results table needs a data-set column and "
            "a column per algorithm (or --algorithm/--score for long form)"
        )
    return df


def _guess_dataset(df: pd.DataFrame, args: argparse.Namespace) -> str | None:
    """Without --dataset, a first column of text is taken as the data-set names."""
    if args.dataset is not None or args.algorithm is not None:
        return args.dataset
    first = df.columns[0]
    if not pd.api.types.is_numeric_dtype(df[first]):
        print(
            f"using column {first!r} as the data-set names (--dataset to choose)", file=sys.stderr
        )
        return str(first)
    return None


def report(args: argparse.Namespace) -> int:
    """Fit a results file and write the report."""
    import bbt_widget as bbt
    from bbt_widget.engines.base import EngineError
    from bbt_widget.html_report import REPORT_FORMATS, write_report

    out = Path(args.output)
    if out.suffix.lstrip(".").lower() not in REPORT_FORMATS:
        raise InputError(f"-o {args.output!r}: the report must end in .html, .md or .tex")
    if not out.parent.exists():
        raise InputError(f"-o {args.output!r}: folder {str(out.parent)!r} does not exist")
    df = read_results(args.results)
    dataset = _guess_dataset(df, args)
    start = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always", bbt.DiagnosticsWarning)
            res = bbt.fit(
                df,
                dataset=dataset,
                algorithm=args.algorithm,
                fold=args.fold,
                score=args.score,
                lower_is_better=args.lower_is_better,
                d_min=args.d_min,
                paired=not args.unpaired,
                ties=args.ties,
                hyperprior=args.hyperprior,
                prior_scale=args.prior_scale,
                engine=args.engine,
                chains=args.chains,
                iter_warmup=args.iter_warmup,
                iter_sampling=args.iter_sampling,
                seed=args.seed,
                progress=None if args.quiet else _progress_printer(),
            )
    except EngineError as err:
        print(f"\nbbt-widget: the Stan engine failed: {err}", file=sys.stderr)
        return EXIT_ENGINE
    took = time.perf_counter() - start
    if not args.quiet:
        print(f"\nfitted in {took:.1f} s with {res.engine}", file=sys.stderr)
    write_report(
        res,
        out,
        rope=tuple(args.rope),
        hdi=args.hdi,
        interpretation=args.interpretation,
        control=args.control,
    )
    diag = res.diagnostics()
    _print_overview(res, tuple(args.rope), args.hdi, args.interpretation, args.control)
    print(f"wrote {out}")
    if not diag.ok:
        print("bbt-widget: diagnostics FAILED: " + "; ".join(diag.messages), file=sys.stderr)
        return EXIT_DIAGNOSTICS
    return EXIT_OK


def _print_overview(res, rope, hdi, interpretation: str, control: str | None) -> None:
    """The ranking and the claims on stdout, so the terminal shows the answer too."""
    ranking = res.ranking(hdi=hdi)
    summary = res.summary(rope=rope, hdi=hdi, control=control)
    with pd.option_context("display.width", 120, "display.precision", 2):
        print(ranking.to_string(index=False))
    words = {"a better": "better", "b better": "worse", "equivalent": "equivalent"}
    counts = summary[interpretation].map(lambda d: words.get(d, d)).value_counts()
    claims = ", ".join(f"{n} {kind}" for kind, n in counts.items())
    print(f"\n{len(summary)} pairs under the {interpretation} interpretation: {claims}")
    better = summary[summary[interpretation] == "a better"]["pair"].tolist()
    if 0 < len(better) <= 15:  # longer lists are in the report
        print("better: " + "; ".join(better))
    equivalent = summary[summary[interpretation] == "equivalent"]["pair"].tolist()
    if equivalent:
        print("equivalent: " + "; ".join(p.replace(" > ", " = ") for p in equivalent))


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
        print("\nWin table (paper Table 3b, with floating-point ties corrected):")
        print(res.win_table.to_string(index=False))
        print("\nP(a > b) (paper Table 6):")
        print(res.summary().to_string(index=False))
        print("\nPosterior predictive check (paper Table 5):")
        print(res.ppc_table().to_string(index=False))
        print(f"\n{res.diagnostics()}")
    print(f"engine {res.engine}, {took:.1f} s")
    return EXIT_OK


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bbt-widget",
        description="Bayesian Bradley-Terry comparison of ML algorithms.",
        epilog="Exit codes: 0 ok; 2 bad arguments or input; 3 Stan engine failed; "
        "4 report written but diagnostics failed; 1 unexpected error.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser(
        "report",
        help="fit a results file and write an offline report (.html, .md or .tex)",
        description="Fit the BBT model to a results table and write a standalone report "
        "(charts, tables, diagnostics, methods text).",
    )
    r.add_argument("results", help="results file (.csv or .tsv)")
    r.add_argument(
        "-o", "--output", default="report.html", help="report file (default %(default)s)"
    )
    g = r.add_argument_group("reading the results")
    g.add_argument("--dataset", help="column naming the data set (default: a first text column)")
    g.add_argument("--algorithm", help="long form: column naming the algorithm")
    g.add_argument("--score", help="long form: column holding the score")
    g.add_argument("--fold", help="column numbering the folds")
    g.add_argument("--lower-is-better", action="store_true", help="errors, times, RMSE")
    g = r.add_argument_group("counting wins")
    g.add_argument("--ties", default="spread", choices=["spread", "add", "forget", "davidson"])
    g.add_argument("--d-min", type=float, default=None, help="local ROPE threshold (e.g. 0.4)")
    g.add_argument("--unpaired", action="store_true", help="unpaired Cohen's d for the local ROPE")
    g = r.add_argument_group("model and sampler")
    g.add_argument("--hyperprior", default="lognormal", choices=["lognormal", "cauchy", "normal"])
    g.add_argument("--prior-scale", type=float, default=0.5)
    g.add_argument("--engine", default="auto", choices=["auto", "pystan", "cmdstanpy"])
    g.add_argument("--chains", type=int, default=4)
    g.add_argument("--iter-warmup", type=int, default=1000)
    g.add_argument("--iter-sampling", type=int, default=1000)
    g.add_argument("--seed", type=int, default=None)
    g = r.add_argument_group("summaries")
    g.add_argument("--rope", type=float, nargs=2, default=[0.45, 0.55], metavar=("LOW", "HIGH"))
    g.add_argument("--hdi", type=float, default=0.89)
    g.add_argument("--interpretation", default="weak", choices=["weak", "strong"])
    g.add_argument("--control", default=None, help="keep only this algorithm's pairs")
    r.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    r.set_defaults(func=report)

    d = sub.add_parser("demo", help="fit the paper's base results and print the tables")
    d.add_argument("--seed", type=int, default=1)
    d.add_argument("--engine", default="auto", choices=["auto", "pystan", "cmdstanpy"])
    d.set_defaults(func=demo)
    return parser


def _as_options(message: str) -> str:
    """Name the command's options where the core's messages name keyword arguments."""
    for keyword, option in (
        ("paired=False", "--unpaired"),
        ("d_min=None", "no --d-min"),
        ("dataset=", "--dataset "),
        ("lower_is_better", "--lower-is-better"),
    ):
        message = message.replace(keyword, option)
    return message


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``bbt-widget`` command; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, TypeError) as err:  # the core's boundary errors and InputError
        print(f"bbt-widget: error: {_as_options(str(err))}", file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:
        print("bbt-widget: interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # last resort: a message, not a traceback
        print(f"bbt-widget: unexpected error: {type(err).__name__}: {err}", file=sys.stderr)
        return EXIT_UNEXPECTED


if __name__ == "__main__":
    sys.exit(main())
