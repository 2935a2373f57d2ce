"""The ``bbt-widget`` command: the main job without Jupyter.

``bbt-widget report results.csv -o report.html`` fits the BBT model to a results file and
writes a standalone offline report (``.html``, ``.md`` or ``.tex``). ``bbt-widget demo``
runs the paper's base analysis and prints its tables.

Exit codes (for scripts): 0 success; 2 bad arguments, file or data (the message says what
to fix), or a file that cannot be read or written ("no space left on device: <path>"; an
output is written whole or not at all, so the old one is then unchanged); 3 the Stan engine
failed (compile or sampling); 4 the report was written but the convergence diagnostics
failed; 5 the report was written without its charts (the chart renderer failed, e.g. under
``ulimit -v``); 1 anything unexpected; 130 / 143 stopped by
SIGINT (Ctrl-C) / SIGTERM (``timeout``, CI, a job scheduler), after stopping every Stan
process it started.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import math
import os
import re
import shlex
import signal
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import TextIO

import pandas as pd

EXIT_OK, EXIT_UNEXPECTED, EXIT_INPUT, EXIT_ENGINE, EXIT_DIAGNOSTICS, EXIT_CHARTS = 0, 1, 2, 3, 4, 5


class InputError(ValueError):
    """A problem with the command's input the user can fix (exit code 2)."""


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


class _Progress:
    """Progress on stderr: a line per stage, live percentages and elapsed seconds.

    The compile step reports no fraction, so a ticker thread shows its elapsed time (every
    second on a terminal, every 15 s in a log) instead of one static line for minutes.
    """

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr  # looked up now: tests and notebooks replace stderr
        self.tty = self.stream.isatty()
        self.stage: str | None = None
        self.started = time.perf_counter()
        self.shown = -1
        self.every = 1.0 if self.tty else 15.0  # seconds between elapsed-time lines
        self._lock = threading.Lock()
        self._stop = threading.Event()

    def __call__(self, stage: str, fraction: float) -> None:
        with self._lock:
            if stage != self.stage:
                self._end_stage()
                self.stage, self.started, self.shown = stage, time.perf_counter(), -1
                compiling = stage.startswith("compiling")
                note = " (first run on this machine, then cached)" if compiling else ""
                self._write(f"{stage}{note}...", newline=not self.tty)
                if compiling:
                    self._stop.clear()
                    threading.Thread(target=self._tick, args=(stage,), daemon=True).start()
            pct = int(fraction * 100) if fraction == fraction else -1  # NaN: unknown
            if self.tty and pct >= 0 and pct != self.shown:
                self._write(f"\r{stage}... {pct:3d}%", newline=False)
                self.shown = pct

    def step(self, stage: str) -> None:
        """Start a step that reports no fraction (writing the report)."""
        self(stage, math.nan)

    def done(self, message: str = "") -> None:
        """End the current stage, with a closing message such as "fitted in 1.2 s"."""
        with self._lock:
            self._end_stage()
            self.stage = None
        if message:
            self._write(message, newline=True)

    def _end_stage(self) -> None:
        self._stop.set()
        if self.stage is not None:
            took = time.perf_counter() - self.started
            if self.tty:
                self._write(f"\r{self.stage}... done in {took:.1f} s", newline=True)
            elif took >= 0.5:
                self._write(f"{self.stage}: done in {took:.1f} s", newline=True)

    def _tick(self, stage: str) -> None:
        while not self._stop.wait(self.every):
            with self._lock:
                if self.stage != stage or self._stop.is_set():
                    return
                took = time.perf_counter() - self.started
                # the engines' own stage is "compiling": say what
                what = "compiling the Stan model" if stage == "compiling" else stage
                if self.tty:
                    self._write(f"\r{what}... {took:.0f} s", newline=False)
                else:
                    self._write(f"{what}... {took:.0f} s", newline=True)

    def _write(self, text: str, *, newline: bool) -> None:
        self.stream.write(text + ("\n" if newline else ""))
        self.stream.flush()


class _Silent(_Progress):
    """``--quiet``: the same calls, nothing written."""

    def _write(self, text: str, *, newline: bool) -> None:
        pass


def read_results(path: str, sep: str | None = None, decimal: str | None = None) -> pd.DataFrame:
    """Read a CSV / TSV results file (separator and decimal mark detected unless given; see
    :func:`bbt_widget.core.csvfile.read_results`), with errors that name the file and the fix."""
    from bbt_widget.core.csvfile import read_results as read

    try:
        return read(path, sep=sep, decimal=decimal)
    except ValueError as err:
        raise InputError(_as_options(str(err))) from None


def _guess_dataset(df: pd.DataFrame, args: argparse.Namespace) -> str | None:
    """Without --dataset, take the one column of text that can name the data sets.

    Wide form: a first column of text. Long form (--algorithm): the only text column that is
    not the algorithm, score or fold column.
    """
    if args.dataset is not None:
        return args.dataset
    if args.algorithm is None:
        first = df.columns[0]
        candidates = [first] if not pd.api.types.is_numeric_dtype(df[first]) else []
    else:
        taken = {args.algorithm, args.score, args.fold}
        candidates = [
            c for c in df.columns if c not in taken and not pd.api.types.is_numeric_dtype(df[c])
        ]
    if len(candidates) != 1:
        return None
    print(
        f"using column {candidates[0]!r} as the data-set names (--dataset to choose)",
        file=sys.stderr,
    )
    return str(candidates[0])


def _layout(args: argparse.Namespace, dataset: str | None) -> dict[str, object]:
    """The keywords that say how to read the results and count wins, as fit takes them."""
    return {
        "dataset": dataset,
        "algorithm": args.algorithm,
        "fold": args.fold,
        "score": args.score,
        "lower_is_better": args.lower_is_better,
        "d_min": args.d_min,
        "paired": not args.unpaired,
    }


def _check_summaries(args: argparse.Namespace) -> None:
    """The report's summary options that need no data: ROPE and HDI mass."""
    from bbt_widget.core.data import check_hdi, check_rope

    try:
        check_rope(args.rope)
    except ValueError as err:
        raise InputError(f"--rope {args.rope[0]:g} {args.rope[1]:g}: {err}") from None
    try:
        check_hdi(args.hdi)
    except ValueError:
        hint = f"did you mean {args.hdi / 100:g}?" if 1 < args.hdi < 100 else "e.g. 0.89"
        raise InputError(
            f"--hdi {args.hdi:g}: the HDI mass is a probability between 0 and 1; {hint}"
        ) from None


def _check_before_fit(df: pd.DataFrame, args: argparse.Namespace, dataset: str | None) -> list[str]:
    """Every data and model option checked against the data before the (slow) fits start.

    Counting the wins reads and validates the results exactly as ``fit`` will (layout, d_min,
    paired mode), in milliseconds. Returns the algorithms, for options that name one.
    """
    from bbt_widget.core.data import check_count, check_hyperprior, check_seed
    from bbt_widget.core.wintable import win_table

    for name in ("chains", "iter_warmup", "iter_sampling"):
        check_count(getattr(args, name), "--" + name.replace("_", "-"))
    check_seed(args.seed)
    check_hyperprior(args.hyperprior, args.prior_scale)
    try:
        table = win_table(df, ties=None, **_layout(args, dataset))
    except (TypeError, ValueError) as err:  # a text column read as an algorithm's scores
        hint = _long_form_hint(df, args) if args.algorithm is None else None
        if hint is None:
            raise
        raise InputError(f"{err}\n{hint}") from None
    games = table["win1"] + table["win2"] + table["ties"]
    if int(games.sum()) == 0:
        raise InputError(
            "no pair of algorithms has a result on a common data set, so there is nothing to "
            "fit; check --dataset (which column names the data sets)"
        )
    return pd.unique(table[["alg1", "alg2"]].to_numpy().ravel()).tolist()


def _long_form_hint(df: pd.DataFrame, args: argparse.Namespace) -> str | None:
    """For results read as wide that look like long form (one row per data set, algorithm
    and fold): the options that read them, as a command to copy; else ``None``."""
    from bbt_widget.core.csvfile import long_form_columns

    cols = long_form_columns(df, args.dataset)
    if cols is None:
        return None
    words = [args.command, args.results]
    for option in ("dataset", "algorithm", "score", "fold"):
        if cols[option] is not None:
            words += [f"--{option}", str(cols[option])]
    return (
        f"these results look like long form (one row per data set, algorithm and fold: "
        f"algorithms in column {cols['algorithm']!r}, scores in {cols['score']!r}); read "
        f"them with: bbt-widget {shlex.join(words)}"
    )


def _check_control(control: str | None, algorithms: list[str]) -> None:
    from bbt_widget.core.data import check_algorithms

    if control is not None:
        try:
            check_algorithms([control], algorithms, "--control")
        except ValueError as err:
            raise InputError(str(err)) from None


def _model(args: argparse.Namespace) -> dict[str, object]:
    """The model and sampler keywords of fit, from the command's options."""
    return {
        "ties": args.ties,
        "hyperprior": args.hyperprior,
        "prior_scale": args.prior_scale,
        "engine": args.engine,
        "chains": args.chains,
        "iter_warmup": args.iter_warmup,
        "iter_sampling": args.iter_sampling,
        "seed": args.seed,
    }


def _reproduce(argv: list[str] | None, args: argparse.Namespace) -> str:
    """The command line that reproduces this run, with the seed made explicit."""
    words = list(sys.argv[1:] if argv is None else argv)
    if "--seed" not in words and not any(w.startswith("--seed=") for w in words):
        words += ["--seed", str(args.seed)]
    return "bbt-widget " + shlex.join(words)


def report(args: argparse.Namespace) -> int:
    """Fit a results file and write the report (:func:`bbt_widget.report.write`)."""
    import bbt_widget as bbt
    from bbt_widget import engines
    from bbt_widget.core.options import resolve_interpretation
    from bbt_widget.core.validation import check_adapt_delta, check_max_treedepth
    from bbt_widget.engines.base import EngineError
    from bbt_widget.outputs.export import ChartRenderWarning
    from bbt_widget.outputs.report import REPORT_FORMATS
    from bbt_widget.outputs.report_build import check_methods

    out = Path(args.output)
    _check_output(out, args.output, REPORT_FORMATS)
    # the fit's worker starts now and loads while the results are read and checked
    engines.prestart(_models(args, [])[:1], args.engine)  # type: ignore[arg-type]
    df = read_results(args.results, args.sep, args.decimal)
    dataset = _guess_dataset(df, args)
    _check_summaries(args)
    check_adapt_delta(args.adapt_delta)
    check_max_treedepth(args.max_treedepth)
    algorithms = _check_before_fit(df, args, dataset)
    _check_control(args.control, algorithms)
    layout = _layout(args, dataset)
    methods = check_methods(
        df, layout, path=out, methods=args.with_methods, robustness=args.robustness, rho=args.rho
    )
    progress = _Silent() if args.quiet else _Progress()
    models = _models(args, methods)
    start = time.perf_counter()
    try:
        _compile(models, args.engine, progress)
        _get_ready(models, args.engine)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = bbt.fit(
                df,
                **layout,
                **_model(args),
                adapt_delta=args.adapt_delta,
                max_treedepth=args.max_treedepth,
                progress=progress,
            )
            took = time.perf_counter() - start
            progress.done(f"fitted in {took:.1f} s with {res.engine}, seed {res.settings['seed']}")
            bbt.report.write(
                res,
                out,
                data=df,
                methods=methods or "none",
                robustness=args.robustness,
                rho=args.rho,
                rope=tuple(args.rope),
                hdi=args.hdi,
                interpretation=args.interpretation,
                control=args.control,
                provenance={"command": args.reproduce, "input": Path(args.results).name},
                progress=progress,
                log=progress.done,
            )
            progress.done()
    except EngineError as err:
        progress.done()
        print(f"\nbbt-widget: the Stan engine failed: {err}", file=sys.stderr)
        return EXIT_ENGINE
    # what the data may hide (groups that never met, suspicious columns) is said; failed
    # diagnostics are reported with the exit code at the end
    for w in caught:
        if issubclass(w.category, (bbt.DataWarning, bbt.DisconnectedWarning)):
            print(f"bbt-widget: warning: {_as_options(str(w.message))}", file=sys.stderr)
    no_charts = [w for w in caught if issubclass(w.category, ChartRenderWarning)]
    diag = res.diagnostics()
    rule = resolve_interpretation(args.interpretation, len(res.algorithms))
    _print_overview(res, tuple(args.rope), args.hdi, rule.rule, args.control)
    print(rule.reason)
    print(f"wrote {out}" + (" (without charts)" if no_charts else ""))
    print(f"reproduce with: {args.reproduce}")
    for w in no_charts:
        print(f"bbt-widget: {w.message}", file=sys.stderr)
    if not diag.ok:
        print("bbt-widget: diagnostics FAILED: " + "; ".join(diag.messages), file=sys.stderr)
        return EXIT_DIAGNOSTICS
    return EXIT_CHARTS if no_charts else EXIT_OK


def _models(args: argparse.Namespace, methods: list[str]) -> tuple[str, ...]:
    """The Stan models the report samples: BBT's (or Davidson's), and the other methods'."""
    models = ["davidson" if args.ties == "davidson" else "bbt"]
    if "plackett-luce" in methods:
        models.append("plackett_luce")
    if "hierarchical" in methods:
        models.append("hierarchical_ttest")
    return tuple(models)


def _compile(models: tuple[str, ...], engine: str, progress: _Progress) -> None:
    """Compile the models the report needs and the cache lacks, all before the first fit:
    at once when the machine has a core free for each, the progress line says which."""
    from bbt_widget import engines

    missing = engines.models_to_compile(models, engine)  # type: ignore[arg-type]
    if not missing:
        return
    if len(missing) == 1:
        label = f"compiling the Stan model {missing[0]}"
    elif engines.compiles_in_parallel(len(missing)):
        label = f"compiling the Stan models {' and '.join(missing)} in parallel"
    else:
        label = (
            f"compiling the Stan models {', then '.join(missing)}, one after the other "
            "(the machine's cores are busy)"
        )
    engines.compile_models(
        tuple(missing),  # type: ignore[arg-type]
        engine,
        progress=lambda _stage, fraction: progress(label, fraction),
    )
    progress.done()


def _get_ready(models: tuple[str, ...], engine: str) -> None:
    """Once the input is checked, start what the report will wait for, so that it gets
    ready while the command fits (which waits on Stan's processes): the Stan worker of each
    model the report samples (:func:`bbt_widget.engines.prestart`), the chart renderer
    (:func:`~bbt_widget.outputs.export.prestart_renderer`), and, in a thread, the imports of
    the report writer and of the other methods (Altair, SciPy's statistics: seconds on a
    loaded machine). The command's own imports of these modules then wait for the thread's
    to end; an import that fails there fails again, with its error, where the command
    imports the module.
    """
    from bbt_widget import engines
    from bbt_widget.outputs.export import prestart_renderer

    engines.prestart(models, engine)  # type: ignore[arg-type]
    prestart_renderer()
    modules = ["bbt_widget.outputs.html_report", "bbt_widget.outputs.report_sections"]
    if len(models) > 1:
        modules.append("bbt_widget.baselines")
    threading.Thread(
        target=_import_all, args=(modules,), name="bbt-widget-imports", daemon=True
    ).start()


def _import_all(modules: list[str]) -> None:
    """Import ``modules`` (see :func:`_get_ready`), jsonschema first without its IRI format
    checks (see :func:`_import_jsonschema`); errors are left to the command's own import."""
    with contextlib.suppress(Exception):
        _import_jsonschema()
        for name in modules:
            importlib.import_module(name)


def _import_jsonschema() -> None:
    """Import jsonschema, which Altair validates chart specs with, without the optional
    ``rfc3987_syntax``: that module builds some 35 Earley parsers as it is imported (1-2 s
    of CPU, most of Altair's import), only to check the "iri" and "iri-reference" string
    formats, which no Vega-Lite schema uses (``tests/unit/test_cli_warm.py`` checks the
    schema). It stays importable afterwards; only this process's jsonschema format checker
    goes without those two formats.
    """
    if "jsonschema" in sys.modules:
        return
    blocked = "rfc3987_syntax" not in sys.modules
    if blocked:
        sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]  # "import" fails
    try:
        import jsonschema  # noqa: F401
    finally:
        if blocked and sys.modules.get("rfc3987_syntax", False) is None:
            del sys.modules["rfc3987_syntax"]


def _check_output(
    out: Path, given: str, formats: tuple[str, ...], what: str = "the report"
) -> None:
    """Refuse an output path that cannot be written to, before any fit."""
    if out.is_dir():
        example = str(out / f"{'report' if what == 'the report' else 'chart'}.{formats[0]}")
        raise InputError(f"-o {given!r} is a folder; give a file name such as {example!r}")
    if out.suffix.lstrip(".").lower() not in formats:
        endings = ", ".join(f".{f}" for f in formats[:-1]) + f" or .{formats[-1]}"
        raise InputError(f"-o {given!r}: {what} must end in {endings}")
    folder = out.parent
    if not folder.is_dir():
        raise InputError(f"-o {given!r}: folder {str(folder)!r} does not exist")
    from bbt_widget.outputs.html_report import figures_folder

    figures = figures_folder(out) if what == "the report" else None
    if figures is not None and figures.exists() and not figures.is_dir():
        raise InputError(
            f"-o {given!r}: {str(figures)!r} (for the figures) is a file; move it away or "
            "choose another report name"
        )
    # a real write, not os.access: that ignores read-only mounts, ACLs and root's rights;
    # outputs are written beside their final name and renamed, so the folder must take a file
    target = out
    try:
        if out.exists():
            with open(out, "a", encoding="utf-8"):
                pass
        target = folder
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as err:
        raise InputError(
            f"-o {given!r}: cannot write to {str(target)!r} "
            f"({os.strerror(err.errno) if err.errno else err}); choose a writable folder"
        ) from None


def _fixed(frame: pd.DataFrame) -> str:
    """A table for the terminal in fixed-point notation (never 5.00e-01)."""
    return frame.to_string(index=False, float_format=lambda x: f"{x:.2f}")


def _print_overview(res, rope, hdi, interpretation: str, control: str | None) -> None:
    """The ranking and the claims on stdout, so the terminal shows the answer too."""
    ranking = res.ranking(hdi=hdi)
    summary = res.summary(rope=rope, hdi=hdi, control=control)
    with pd.option_context("display.width", 120):
        print(_fixed(ranking))
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
    progress = _Progress()
    start = time.perf_counter()
    res = bbt.fit(base, dataset="db", seed=args.seed, engine=args.engine, progress=progress)
    took = time.perf_counter() - start
    progress.done()
    with pd.option_context("display.width", 120):
        print("\nWin table (paper Table 3b, with floating-point ties corrected):")
        print(_fixed(res.win_table))
        print("\nP(a > b) (paper Table 6):")
        print(_fixed(res.summary()))
        print("\nPosterior predictive check (paper Table 5):")
        print(_fixed(res.ppc_table()))
        print(f"\n{res.diagnostics()}")
    print(f"engine {res.engine}, seed {args.seed}, {took:.1f} s")
    return EXIT_OK


def calibrate(args: argparse.Namespace) -> int:
    """Paper Sec. 8 on a results file: Tables 16 and 17 both ways, and the chart."""
    import bbt_widget as bbt
    from bbt_widget.core.data import check_count
    from bbt_widget.engines.base import EngineError
    from bbt_widget.lab.batch import check_executor, text_progress
    from bbt_widget.outputs.export import CHART_FORMATS, save_chart

    out = Path(args.output)
    _check_output(out, args.output, CHART_FORMATS, what="the chart")
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
    dataset = _guess_dataset(df, args)
    _check_before_fit(df, args, dataset)
    executor = args.scheduler  # a Dask scheduler address, or None: the local cores
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bbt.DataWarning)  # said once, by the audit below
            result = bbt.calibration(
                df,
                **_layout(args, dataset),
                **_model(args),
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
        print(_fixed(result.strong.reset_index()))
        print("\nWeak interpretation (paper Table 17): expected and actual wins per above.50 bin")
        print(_fixed(result.weak.reset_index()))
    print(
        "\n'paper' compares test win rates with the HDI of the mean P(a > b), as the paper "
        "does; 'predictive' with the posterior-predictive spread of the same number of test "
        "games (see help(bbt_widget.calibration))."
    )
    save_chart(result.chart(), out)
    print(f"wrote {out}")
    print(f"reproduce with: {args.reproduce}")
    return EXIT_OK


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
        return super()._get_help_string(action)


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
    g.add_argument("--score", help="long form: column holding the score")
    g.add_argument("--fold", help="column numbering the cross-validation folds")
    g.add_argument(
        "--lower-is-better", action="store_true", help="lower scores win (errors, times, RMSE)"
    )
    g = p.add_argument_group("counting wins")
    g.add_argument(
        "--ties",
        default=DEFAULT_TIES,
        choices=TIE_POLICIES,
        help="tie policy: spread half to each side, add to both, forget, or fit the Davidson model",
    )
    g.add_argument(
        "--d-min",
        type=float,
        default=None,
        help="local ROPE: a win counts only when the effect size over the folds exceeds this "
        "(e.g. 0.4, the paper's choice; default: compare means)",
    )
    g.add_argument(
        "--unpaired",
        action="store_true",
        help="local ROPE with unpaired Cohen's d (default: paired d_z over the folds)",
    )


def _add_model_options(p: argparse.ArgumentParser) -> None:
    """The model and the sampler: the same for every command that fits."""
    from bbt_widget.core.options import DEFAULT_HYPERPRIOR, DEFAULT_SEED, HYPERPRIOR_SCALES
    from bbt_widget.outputs.report_build import SAMPLER_DEFAULTS

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
        choices=["auto", "pystan", "cmdstanpy"],
        help="Stan engine; auto takes CmdStan when a working one is installed, else PyStan",
    )
    g.add_argument("--chains", type=int, default=4, help="Markov chains")
    g.add_argument(
        "--iter-warmup",
        type=int,
        default=SAMPLER_DEFAULTS["iter_warmup"],
        help="warm-up iterations per chain",
    )
    g.add_argument(
        "--iter-sampling",
        type=int,
        default=SAMPLER_DEFAULTS["iter_sampling"],
        help="draws per chain",
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
        epilog="Exit codes: 0 ok; 2 bad arguments or input, or a file that cannot be "
        "written (full disk, no permission; the old file is kept); 3 Stan engine failed; "
        "4 report written but diagnostics failed; 5 report written without charts; "
        "1 unexpected error.",
    )
    parser.add_argument("--version", action="version", version=_versions())
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser(
        "report",
        help="fit a results file and write an offline report (.html, .md or .tex)",
        description="Fit the BBT model to a results table and write a standalone report "
        "(charts, tables, diagnostics, methods text). Every option is checked against the "
        "data before the fit starts.",
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
        help="other methods beside BBT, comma-separated: plackett-luce and mallows (a "
        "'Ranking models' section; mallows: the Mallows model with Kendall's distance, "
        "--iter-warmup and --iter-sampling its burn-in and kept draws), hierarchical (a "
        "'Pairwise tests' section: the hierarchical correlated t-test for every pair, needs "
        "--rho), or none. Default in an HTML report of data with folds: plackett-luce, and "
        "hierarchical when --rho is given and pairs x data sets <= 6 x 132 (e.g. 4 "
        "algorithms x 132 data sets: about 2 minutes on two cores)",
    )
    g.add_argument(
        "--rho",
        type=float,
        default=None,
        help="for --with hierarchical: correlation of fold results, 1/k for k-fold "
        "cross-validation (Nadeau and Bengio 2003; Benavoli et al. 2017, Eq. 1-2)",
    )
    r.set_defaults(func=report)

    c = sub.add_parser(
        "calibrate",
        help="how well the probabilities predict held-out data sets (paper Sec. 8)",
        description="Fit on --n-train random data sets, predict --n-test others, --repeats "
        "times; print the paper's Tables 16 and 17 both the paper's way and the "
        "posterior-predictive way, and write the calibration chart.",
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
        "--engine", default="auto", choices=["auto", "pystan", "cmdstanpy"], help="Stan engine"
    )
    d.set_defaults(func=demo)
    return parser


#: The core's keyword arguments, as the command's options, for its error messages.
_OPTIONS = {
    "paired=False": "--unpaired",
    "paired=True": "no --unpaired",
    "d_min=None": "no --d-min",
    "lower_is_better=True": "--lower-is-better",
    "robustness=True": "--robustness",
    "methods=": "--with ",
}
#: ``name=`` in a message is a keyword argument; an underscored name is one even when bare.
_KEYWORD = re.compile(
    r"\b(dataset|algorithm|score|fold|d_min|ties|hyperprior|prior_scale|seed|chains|"
    r"iter_warmup|iter_sampling|lower_is_better|control|n_train|n_test|repeats|adapt_delta|"
    r"max_treedepth|sep|decimal|rho)="
    r"(?=([^\s;,.)]?))"
    r"|\b(d_min|prior_scale|iter_warmup|iter_sampling|lower_is_better|n_train|n_test|"
    r"adapt_delta|max_treedepth|rho)\b"
)


def _as_options(message: str) -> str:
    """Name the command's options where the core's messages name keyword arguments."""
    for keyword, option in _OPTIONS.items():
        message = message.replace(keyword, option)

    def option(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(3)
        value_follows = bool(m.group(2))  # "dataset='db'" -> "--dataset 'db'"
        return "--" + name.replace("_", "-") + (" " if value_follows else "")

    return _KEYWORD.sub(option, message)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``bbt-widget`` command; returns the exit code."""
    # SIGTERM (timeout, CI, Jupyter's kernel shutdown) ends the command as Ctrl-C does: the
    # compiler and sampler processes are killed and their temporary folders removed, where
    # Python's default would exit at once and leave them behind.
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    if threading.current_thread() is threading.main_thread():  # only it may set handlers
        signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        return _run(argv)
    except KeyboardInterrupt as stop:
        return _stop_engines(signal.SIGTERM if isinstance(stop, _Terminated) else signal.SIGINT)
    finally:
        if threading.current_thread() is threading.main_thread():
            for sig, handler in handlers.items():
                signal.signal(sig, handler)


#: Errors of the files the command reads or writes that the user can fix: exit code 2 with
#: "no space left on device: <path>", not an unexpected error.
_FILE_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EACCES, errno.EPERM, errno.EROFS}


def _run(argv: list[str] | None) -> int:
    args = _parser().parse_args(argv)
    args.reproduce = _reproduce(argv, args)
    try:
        return args.func(args)
    except (ValueError, TypeError) as err:  # the core's boundary errors and InputError
        print(f"bbt-widget: error: {_as_options(str(err))}", file=sys.stderr)
        return EXIT_INPUT
    except Exception as err:  # last resort: a message, not a traceback
        if isinstance(err, OSError) and err.errno in _FILE_ERRORS:
            # a full disk, no permission: the outputs were kept whole (see outputs/_atomic)
            where = f": {err.filename}" if err.filename else ""
            print(f"bbt-widget: error: {os.strerror(err.errno).lower()}{where}", file=sys.stderr)
            return EXIT_INPUT
        print(f"bbt-widget: unexpected error: {type(err).__name__}: {err}", file=sys.stderr)
        return EXIT_UNEXPECTED


if __name__ == "__main__":
    sys.exit(main())
