"""The ``bbt-widget`` command: the main job without Jupyter.

``bbt-widget report results.csv -o report.html`` fits the BBT model to a results file and
writes a standalone offline report (``.html``, ``.md`` or ``.tex``). ``bbt-widget demo``
runs the paper's base analysis and prints its tables.

Exit codes (for scripts): the table ``EXIT_CODES`` of :mod:`bbt_widget.cli_commands.common`,
which ``bbt-widget --help`` and ``bbt-widget report --help`` print.
"""

from __future__ import annotations

import argparse
import shlex
import signal
import sys
import threading

# The subcommands live in bbt_widget.cli_commands; names below re-exported for old imports.
from bbt_widget.cli_commands.calibrate import calibrate
from bbt_widget.cli_commands.checks import check_before_fit as _check_before_fit  # noqa: F401
from bbt_widget.cli_commands.checks import read_results  # noqa: F401
from bbt_widget.cli_commands.common import (  # noqa: F401
    EXIT_CHARTS,
    EXIT_DIAGNOSTICS,
    EXIT_ENGINE,
    EXIT_INPUT,
    EXIT_OK,
    EXIT_UNEXPECTED,
    InputError,
    exit_codes_text,
    last_resort,
)
from bbt_widget.cli_commands.common import as_options as _as_options
from bbt_widget.cli_commands.common import fixed as _fixed  # noqa: F401
from bbt_widget.cli_commands.demo import demo
from bbt_widget.cli_commands.metrics import (
    add_score_options,
    metric_options,
    metric_words,
    report_metrics,
)
from bbt_widget.cli_commands.progress import Progress as _Progress  # noqa: F401
from bbt_widget.cli_commands.report import add_section_options, report
from bbt_widget.cli_commands.report import compile_models as _compile  # noqa: F401
from bbt_widget.cli_commands.report import import_jsonschema as _import_jsonschema  # noqa: F401
from bbt_widget.cli_commands.terminal import safe_output


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is so that it unwinds (and cleans up) like Ctrl-C."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise _Terminated


def _stop_engines(signum: int) -> int:
    """After SIGINT or SIGTERM: stop the Stan processes, say so, return the exit code."""
    if threading.current_thread() is threading.main_thread():
        # a second signal must not cut the cleanup short (it takes well under a second)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if "bbt_widget.engines" in sys.modules:  # no engine imported: nothing of ours is running
        sys.modules["bbt_widget.engines"].stop_all()
    name = signal.Signals(signum).name
    print(f"\nbbt-widget: stopped by {name}; no Stan process is left running", file=sys.stderr)
    return 128 + signum  # the shell's convention: 130 for SIGINT, 143 for SIGTERM


def _reproduce(argv: list[str] | None, args: argparse.Namespace) -> str:
    """The command line that reproduces this run, with the seed made explicit."""
    words = list(sys.argv[1:] if argv is None else argv)
    if "--seed" not in words and not any(w.startswith("--seed=") for w in words):
        words += ["--seed", str(args.seed)]
    return "bbt-widget " + shlex.join(words)


def _versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    from bbt_widget import __version__

    found = []
    for dist in ("pystan", "httpstan", "cmdstanpy"):
        try:
            found.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            pass
    return f"bbt-widget {__version__} ({', '.join(found)})"


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows every option's default; options without one (flags, None) show none."""

    def _get_help_string(self, action: argparse.Action) -> str:
        if action.default in (None, False, argparse.SUPPRESS) or "%(default)" in (
            action.help or ""
        ):
            return action.help or ""
        return super()._get_help_string(action) or ""


def _add_data_options(p: argparse.ArgumentParser) -> None:
    """How to read the results and count wins: the same for every command that fits."""
    from bbt_widget.core.options import DEFAULT_TIES, TIE_POLICIES

    p.add_argument("results", help="results file (.csv or .tsv)")
    g = p.add_argument_group("reading the results")
    g.add_argument(
        "--dataset",
        help="column naming the data sets (default: the only text column that can be it)",
    )
    g.add_argument(
        "--sep",
        default=None,
        help="column separator: one character such as ';' or '|', or 'tab' (default: "
        "detected from the first lines: , ; tab or |)",
    )
    g.add_argument(
        "--decimal",
        default=None,
        choices=[".", ","],
        help="decimal mark (default: ',' when the separator is not ',' and the numbers are "
        "written like 0,85, else '.')",
    )
    g.add_argument("--algorithm", help="long form: column naming the algorithm")
    add_score_options(p, g)
    g = p.add_argument_group("counting wins")
    g.add_argument(
        "--ties",
        default=DEFAULT_TIES,
        choices=TIE_POLICIES,
        help="tie policy: spread half to each side, add to both, forget, or Davidson's model",
    )
    g.add_argument(
        "--d-min",
        type=float,
        default=None,
        help="local ROPE: a win counts only when the effect size over the folds exceeds this "
        "(e.g. 0.4, the paper's choice; default: compare means)",
    )
    g.add_argument(
        "--tie-threshold",
        type=float,
        default=None,
        help="in score units: on a data set, mean scores differing by no more than this are a "
        "tie, before any local ROPE (e.g. 0.005 = half a point of accuracy; default: none)",
    )
    g.add_argument(
        "--unpaired",
        action="store_true",
        help="local ROPE with unpaired Cohen's d (default: paired d_z over the folds)",
    )


def _add_model_options(p: argparse.ArgumentParser) -> None:
    """The model and the sampler: the same for every command that fits."""
    from bbt_widget.core.options import DEFAULT_HYPERPRIOR, DEFAULT_SEED, HYPERPRIOR_SCALES
    from bbt_widget.outputs.report._optional import SAMPLER_DEFAULTS

    g = p.add_argument_group("model and sampler")
    g.add_argument(
        "--hyperprior",
        default=DEFAULT_HYPERPRIOR,
        choices=tuple(HYPERPRIOR_SCALES),
        help="prior on the spread of the abilities (paper Appendix A)",
    )
    family_scales = ", ".join(f"{k} {v:g}" for k, v in HYPERPRIOR_SCALES.items())
    g.add_argument(
        "--prior-scale",
        type=float,
        default=None,
        help=f"scale of the hyper-prior (default: the family's, paper Appendix A: {family_scales})",
    )
    g.add_argument(
        "--engine",
        default="auto",
        choices=["auto", "numpy", "pystan", "cmdstanpy"],
        help="engine; auto: numpy (exact samplers, no compiler); pystan: "
        'pip install "bbt-widget[stan]", with a C++ compiler; cmdstanpy: a CmdStan install',
    )
    g.add_argument("--chains", type=int, default=4, help="Markov chains")
    g.add_argument(
        "--iter-warmup",
        type=int,
        default=SAMPLER_DEFAULTS["iter_warmup"],
        help="warm-up iterations per chain (default: the engine's, 100 numpy, 1000 Stan)",
    )
    g.add_argument(
        "--iter-sampling",
        type=int,
        default=SAMPLER_DEFAULTS["iter_sampling"],
        help="draws per chain (default: the engine's, 1000)",
    )
    g.add_argument(
        "--seed",
        type=int,
        default=DEFAULT_SEED,
        help="random seed; the same seed, data and options give the same numbers",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")


def _parser() -> argparse.ArgumentParser:
    from bbt_widget.core.options import (
        DEFAULT_ADAPT_DELTA,
        DEFAULT_HDI,
        DEFAULT_INTERPRETATION,
        DEFAULT_MAX_TREEDEPTH,
        DEFAULT_ROPE,
        DEFAULT_SEED,
        INTERPRETATION_CHOICES,
        MANY_ALGORITHMS,
    )

    parser = argparse.ArgumentParser(
        prog="bbt-widget",
        description="Bayesian Bradley-Terry comparison of ML algorithms.",
        epilog=exit_codes_text(),
    )
    parser.add_argument("--version", action="version", version=_versions())
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser(
        "report",
        help="fit a results file and write an offline report (.html, .md or .tex)",
        description="Fit the BBT model to a results table and write a standalone report "
        "(charts, tables, diagnostics, methods text). Every option is checked against the "
        "data before the fit starts.",
        epilog=exit_codes_text(),
        formatter_class=_HelpFormatter,
    )
    _add_data_options(r)
    r.add_argument("-o", "--output", default="report.html", help="report file: .html, .md or .tex")
    _add_model_options(r)
    g = r.add_argument_group("NUTS sampler (when the diagnostics ask for it)")
    g.add_argument(
        "--adapt-delta",
        type=float,
        default=DEFAULT_ADAPT_DELTA,
        help="target acceptance rate; raise it (e.g. 0.95) against divergent transitions",
    )
    g.add_argument(
        "--max-treedepth",
        type=int,
        default=DEFAULT_MAX_TREEDEPTH,
        help="maximum tree depth; raise it (e.g. 12) when transitions hit it",
    )
    g = r.add_argument_group("summaries")
    g.add_argument(
        "--rope",
        type=float,
        nargs=2,
        default=list(DEFAULT_ROPE),
        metavar=("LOW", "HIGH"),
        help="region of practical equivalence for P(a > b)",
    )
    g.add_argument("--hdi", type=float, default=DEFAULT_HDI, help="HDI probability mass, in (0, 1)")
    g.add_argument(
        "--interpretation",
        default=DEFAULT_INTERPRETATION,
        choices=INTERPRETATION_CHOICES,
        help="decision rule (paper Sec. 9.2 / 9.3): auto takes strong with more than "
        f"{MANY_ALGORITHMS} algorithms (paper Sec. 5.6), weak otherwise; the report says which",
    )
    g.add_argument(
        "--control", default=None, help="keep only this algorithm's pairs (default: all pairs)"
    )
    g.add_argument(
        "--highlight",
        action="append",
        default=None,
        metavar="NAME",
        help="draw this algorithm in its own colour in the critical-difference diagram "
        "(repeat for several, e.g. the methods the paper proposes)",
    )
    g = r.add_argument_group("robustness and other methods")
    g.add_argument(
        "--robustness",
        action="store_true",
        help="add the sweep over analysis choices (tie policies x d_min, each a refit with "
        "--chains/--iter-warmup/--iter-sampling) and the influence of leaving each data set "
        "out: stable claims, flips, the data sets that change a claim",
    )
    g.add_argument(
        "--with",
        dest="with_methods",
        default=None,
        metavar="METHODS",
        help="other methods beside BBT, comma-separated, added to the defaults: "
        "plackett-luce and mallows (a 'Ranking models' section; mallows: Mallows with "
        "Kendall's distance, --iter-warmup and --iter-sampling its burn-in and draws), "
        "hierarchical (the hierarchical correlated t-test per pair, needs --rho), friedman "
        "(Friedman, Nemenyi CD, Wilcoxon-Holm), signed-rank and sign (the Bayesian tests); "
        "none leaves the defaults out (none alone: BBT alone; none,friedman: Friedman alone). "
        "Defaults, in every format, for data with folds: plackett-luce, and hierarchical when "
        "--rho is given and pairs x data sets <= 10 x 132 (e.g. 5 algorithms x 132 data sets: "
        "about 20 s on two cores)",
    )
    g.add_argument(
        "--rho",
        type=float,
        default=None,
        help="for --with hierarchical: correlation of fold results, 1/k for k-fold "
        "cross-validation (Nadeau and Bengio 2003; Benavoli et al. 2017, Eq. 1-2)",
    )
    add_section_options(r)
    r.set_defaults(func=report)

    c = sub.add_parser(
        "calibrate",
        help="how well the probabilities predict held-out data sets (paper Sec. 8)",
        description="Fit on --n-train random data sets, predict --n-test others, --repeats "
        "times; print the paper's Tables 16 and 17 both the paper's way and the "
        "posterior-predictive way, and write the calibration chart.",
        epilog=exit_codes_text(),
        formatter_class=_HelpFormatter,
    )
    _add_data_options(c)
    c.add_argument(
        "-o", "--output", default="calibration.svg", help="chart file: .svg, .png or .pdf"
    )
    _add_model_options(c)
    g = c.add_argument_group("calibration")
    g.add_argument("--n-train", type=int, default=20, help="data sets per training fit")
    g.add_argument("--n-test", type=int, default=10, help="held-out data sets per repeat")
    g.add_argument("--repeats", type=int, default=50, help="random train/test draws")
    g.add_argument(
        "--scheduler",
        default=None,
        help="address of a Dask scheduler (tcp://host:8786) to run the fits on "
        "(default: the local cores)",
    )
    c.set_defaults(func=calibrate)

    d = sub.add_parser(
        "demo",
        help="fit the paper's base results and print the tables",
        formatter_class=_HelpFormatter,
    )
    d.add_argument("--seed", type=int, default=DEFAULT_SEED, help="random seed")
    d.add_argument(
        "--engine", default="auto", choices=["auto", "numpy", "pystan", "cmdstanpy"], help="engine"
    )
    d.set_defaults(func=demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``bbt-widget`` command; returns the exit code."""
    # SIGTERM ends the command as Ctrl-C does: engine processes killed, their folders removed
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    if threading.current_thread() is threading.main_thread():  # only it may set handlers
        signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        with safe_output():  # no control character from the data reaches the terminal
            return _run(argv)
    except KeyboardInterrupt as stop:
        return _stop_engines(signal.SIGTERM if isinstance(stop, _Terminated) else signal.SIGINT)
    finally:
        if threading.current_thread() is threading.main_thread():
            for sig, handler in handlers.items():
                signal.signal(sig, handler)


def _run(argv: list[str] | None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(metric_words(words))
    args.reproduce = _reproduce(argv, args)
    try:
        metric_options(args)
        if getattr(args, "metrics", None):  # report with several --score
            return report_metrics(args)
        return int(args.func(args))
    except (ValueError, TypeError) as err:  # the core's boundary errors and InputError
        print(f"bbt-widget: error: {_as_options(str(err))}", file=sys.stderr)
        return EXIT_INPUT
    except Exception as err:  # a message, not a traceback (memory, full disk, the rest)
        return last_resort(err)


if __name__ == "__main__":
    sys.exit(main())
