"""``bbt-widget report``: fit a results file and write the report (:func:`bbt_widget.report.write`),
with the Stan models compiled and the report's imports warmed while the command fits."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from ..core.options import Rule
from .checks import (
    check_before_fit,
    check_control,
    check_highlight,
    check_model,
    check_output,
    check_summaries,
    dataset_column,
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
    fixed,
)
from .progress import Progress, Silent

if TYPE_CHECKING:
    from ..core.result import BBTResult


def report(args: argparse.Namespace) -> int:
    """Fit a results file and write the report (:func:`bbt_widget.report.write`)."""
    import bbt_widget as bbt
    from bbt_widget.core.options import resolve_interpretation
    from bbt_widget.core.validation import check_adapt_delta, check_max_treedepth
    from bbt_widget.engines.base import EngineError
    from bbt_widget.outputs.export import ChartRenderWarning, prestart_renderer
    from bbt_widget.outputs.methods_text import REPORT_FORMATS, tables_folder
    from bbt_widget.outputs.report._build import keeping_posterior, report_of_fit
    from bbt_widget.outputs.report._methods import check_methods
    from bbt_widget.outputs.report._optional import start_methods
    from bbt_widget.outputs.report._request import ReportRequest

    out = Path(args.output)
    check_output(out, args.output, REPORT_FORMATS)
    check_model(args)  # before any work: the prior's range, the iterations
    # the chart renderer starts now, and loads while this process imports and reads the data
    models = stan_models(args)
    prestart_renderer()
    given = read_results(args.results, args.sep, args.decimal)
    df = results_without_group(given, args)  # the group column is no algorithm's scores
    dataset = guess_dataset(df, args)
    check_summaries(args)
    check_adapt_delta(args.adapt_delta)
    check_max_treedepth(args.max_treedepth)
    tidy, algorithms = check_before_fit(df, args, dataset)  # read once, for every fit
    check_control(args.control, algorithms)
    check_highlight(args.highlight, algorithms)
    more_data = _more_data(args)
    layout = layout_options(args, dataset)
    methods = check_methods(
        tidy, layout, path=out, methods=args.with_methods, robustness=args.robustness, rho=args.rho
    )
    progress = Silent() if args.quiet else Progress()
    # the report's options, checked as the parser read them, before the fit
    request = ReportRequest(
        out,
        # exactly the methods checked above (no defaults added again)
        methods=["none", *methods],
        robustness=args.robustness,
        rho=args.rho,
        rope=(args.rope[0], args.rope[1]),
        hdi=args.hdi,
        interpretation=args.interpretation,
        control=args.control,
        highlight=args.highlight,
        provenance={"command": args.reproduce, "input": Path(args.results).name},
        progress=progress,
        log=progress.done,
        more_data=more_data,
    )
    start = time.perf_counter()
    try:
        compile_models(models, args.engine, progress)
        get_ready(models, args.engine, methods)
        # the other methods' chains start now and run beside the fit's
        started = start_methods(tidy, methods=methods, hdi=args.hdi, **model_options(args))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = bbt.fit(
                tidy if args.group is None else given,
                **layout,
                group=args.group,
                **model_options(args),
                adapt_delta=args.adapt_delta,
                max_treedepth=args.max_treedepth,
                progress=progress,
            )
            took = time.perf_counter() - start
            progress.done(f"fitted in {took:.1f} s with {res.engine}, seed {res.settings['seed']}")
            with keeping_posterior(res, out):
                report_of_fit(res, request, data=tidy, started=started)
            progress.done()
    except EngineError as err:
        progress.done()
        print(f"\nbbt-widget: the Stan engine failed: {err}", file=sys.stderr)
        return EXIT_ENGINE
    # what the data may hide (groups that never met, suspicious columns) is said; failed
    # diagnostics are reported with the exit code at the end
    for w in caught:
        if issubclass(w.category, (bbt.DataWarning, bbt.DisconnectedWarning)):
            print(f"bbt-widget: warning: {as_options(str(w.message))}", file=sys.stderr)
    no_charts = [w for w in caught if issubclass(w.category, ChartRenderWarning)]
    diag = res.diagnostics()
    rule = resolve_interpretation(args.interpretation, len(res.algorithms))
    print_overview(res, tuple(args.rope), args.hdi, rule.rule, args.control, reason=rule.reason)
    print(f"wrote {out}" + (" (without charts)" if no_charts else ""))
    print(f"wrote its tables as CSV in {tables_folder(out)}{os.sep}")
    print(f"reproduce with: {args.reproduce}")
    for w in no_charts:
        print(f"bbt-widget: {w.message}", file=sys.stderr)
    if not diag.ok:
        print("bbt-widget: diagnostics FAILED: " + "; ".join(diag.messages), file=sys.stderr)
        return EXIT_DIAGNOSTICS
    return EXIT_CHARTS if no_charts else EXIT_OK


def add_section_options(parser: argparse.ArgumentParser) -> None:
    """``--group COLUMN``: data sets in groups, a "By family" section (``fit(group=...)``);
    ``--more-data N,N``: a "More data sets" section (``BBTResult.more_data``)."""
    parser.add_argument(
        "--more-data",
        default=None,
        metavar="N,N",
        help="add a 'More data sets' section: for the pairs with no claim, the probability "
        "that this many more data sets like these would decide them, e.g. 50,100",
    )
    parser.add_argument(
        "--group",
        default=None,
        metavar="COLUMN",
        help="column giving each data set's group (family): fit the group model, whose group "
        "abilities are pulled towards the pooled ones, and add a 'By family' section (the "
        "claims that hold in every group and those that change); not with --ties davidson",
    )


def results_without_group(df: pd.DataFrame, args: argparse.Namespace) -> pd.DataFrame:
    """The results without the ``--group`` column, checked to exist (and the tie policy
    to be one the group model fits) before anything else reads the results."""
    if args.group is None:
        return df
    from bbt_widget.core.groups import check_group_request, results_only
    from bbt_widget.core.validation import check_group_column

    check_group_request(args.group, args.ties, df)
    for score in getattr(args, "metrics", None) or [args.score]:
        check_group_column(
            args.group, dataset=args.dataset, algorithm=args.algorithm, fold=args.fold, score=score
        )
    rest = results_only(df, args.group)
    if args.dataset is None and dataset_column(rest, args) is None:
        if dataset_column(df, args) == args.group:  # the one column naming the data sets
            raise InputError(
                f"--group {args.group!r} is the column naming the data sets, and the group "
                "column cannot be the data-set column: give --group the column holding each "
                "data set's family (and --dataset the data sets' column)"
            )
    return rest


def stan_models(args: argparse.Namespace) -> tuple[str, ...]:
    """The Stan model the report samples: BBT's, Davidson's or the group model's. The other
    methods need none: the Plackett-Luce model, the hierarchical t-test and Mallows are
    sampled in numpy."""
    if getattr(args, "group", None) is not None:
        return ("bbt_groups",)
    return ("davidson" if args.ties == "davidson" else "bbt",)


def compile_models(models: tuple[str, ...], engine: str, progress: Progress) -> None:
    """Compile the models the report needs and the cache lacks, all before the first fit,
    one after the other; the progress line says which."""
    from bbt_widget import engines

    missing = engines.models_to_compile(models, engine)  # type: ignore[arg-type]
    if not missing:
        return
    if len(missing) == 1:
        label = f"compiling the Stan model {missing[0]}"
    else:
        label = f"compiling the Stan models {', then '.join(missing)}"
    engines.compile_models(
        tuple(missing),
        engine,
        progress=lambda _stage, fraction: progress(label, fraction),
    )
    progress.done()


def get_ready(models: tuple[str, ...], engine: str, methods: list[str] | None = None) -> None:
    """Once the input is checked, start what the report will wait for, so that it gets
    ready while the command fits (which waits on Stan's processes): the chart renderer
    (:func:`~bbt_widget.outputs.export.prestart_renderer`), and, in a thread, the imports of
    the report writer and of the other ``methods`` (Altair, SciPy's statistics: slow imports,
    which overlap the fit this way). The command's own imports of these modules then wait
    for the thread's to end; an import that fails there fails again, with its error, where
    the command imports the module.
    """
    from bbt_widget.outputs.export import prestart_renderer

    prestart_renderer()
    modules = ["bbt_widget.outputs.report._render", "bbt_widget.outputs.report._sections"]
    for method in methods or ():
        modules += [f"bbt_widget.baselines.{name}" for name in METHOD_MODULES.get(method, ())]
    threading.Thread(
        target=import_all, args=(modules,), name="bbt-widget-imports", daemon=True
    ).start()


#: The modules of the other methods, by name (the report imports them while it fits).
METHOD_MODULES = {
    "plackett-luce": ("_plackett_luce",),
    "hierarchical": ("_hierarchical_pairs", "_agreement"),
}


def import_all(modules: list[str]) -> None:
    """Import ``modules`` (see :func:`get_ready`), jsonschema first without its IRI format
    checks (see :func:`import_jsonschema`) and Altair without its Jupyter widget (see
    :func:`import_altair`); errors are left to the command's own import."""
    with contextlib.suppress(Exception):
        import_jsonschema()
        import_altair()
        for name in modules:
            importlib.import_module(name)


def import_altair() -> None:
    """Import Altair without ``anywidget``, which its ``JupyterChart`` needs: a command
    draws no widget, and anywidget brings ipywidgets and IPython, half of Altair's import
    time. Altair then gives ``JupyterChart`` its stand-in for a machine without anywidget
    (it says to install anywidget when used); anywidget itself stays importable.
    """
    if "altair" in sys.modules:
        return
    blocked = "anywidget" not in sys.modules
    if blocked:
        sys.modules["anywidget"] = None  # type: ignore[assignment]  # not found by Altair
    try:
        import altair  # noqa: F401
    finally:
        if blocked and sys.modules.get("anywidget", False) is None:
            del sys.modules["anywidget"]


def import_jsonschema() -> None:
    """Import jsonschema, which Altair validates chart specs with, without the optional
    ``rfc3987_syntax``: that module builds some 35 Earley parsers as it is imported (most of
    the CPU of Altair's import), only to check the "iri" and "iri-reference" string
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


def print_overview(
    res: BBTResult,
    rope: tuple[float, float],
    hdi: float,
    interpretation: Rule,
    control: str | None,
    *,
    reason: str = "",
) -> None:
    """The ranking and the claims on stdout, so the terminal shows the answer too.

    ``reason`` (which decision rule the claims follow, and why) is printed before the
    claims, as it says ("The claims below follow ...").
    """
    ranking = res.ranking(hdi=hdi)
    summary = res.summary(rope=rope, hdi=hdi, control=control)
    with pd.option_context("display.width", 120):
        print(fixed(ranking))
    print()
    if reason:
        print(reason)
    words = {"a better": "better", "b better": "worse", "equivalent": "equivalent"}
    counts = summary[interpretation].map(lambda d: words.get(d, d)).value_counts()
    claims = ", ".join(f"{n} {kind}" for kind, n in counts.items())
    print(f"{len(summary)} pairs under the {interpretation} interpretation: {claims}")
    better = summary[summary[interpretation] == "a better"]["pair"].tolist()
    if 0 < len(better) <= 15:  # longer lists are in the report
        print("better: " + "; ".join(better))
    equivalent = summary[summary[interpretation] == "equivalent"]["pair"].tolist()
    if equivalent:
        print("equivalent: " + "; ".join(p.replace(" > ", " = ") for p in equivalent))
        # what BBT's equivalence says, so that it is not read as scores within a point
        print(
            f"(equivalent: each wins about as often, P(a > b) inside the ROPE [{rope[0]:g}, "
            f"{rope[1]:g}]; not scores within a point: the report's Scores section has the "
            "score differences)"
        )
    if control is None:
        from bbt_widget.outputs.methods_text import precision_sentence

        print(precision_sentence(res, interpretation, rope, hdi))


def _more_data(args: argparse.Namespace) -> tuple[int, ...] | None:
    """``--more-data``'s numbers of more data sets, checked before the fit, and for a model
    the forecast simulates (not Davidson's, not the group model)."""
    if args.more_data is None:
        return None
    from ..outputs.report._more_data import parse_more_data

    try:
        n = parse_more_data(args.more_data)
    except ValueError as err:
        raise InputError(f"--more-data {args.more_data}: {err}") from None
    if args.ties == "davidson" or args.group is not None:
        raise InputError(
            "--more-data forecasts the plain Bradley-Terry model: leave it out with "
            "--ties davidson or --group"
        )
    return n
