"""The command's options checked against each other and the data before any (slow) fit: the
results file read, the data-set column guessed, the layout, model, summary and output options
checked, each error naming the option and the fix (:class:`~.common.InputError`, exit 2)."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from .common import InputError, as_options

if TYPE_CHECKING:
    from bbt_widget.core.tidy import TidyResults


def read_results(path: str, sep: str | None = None, decimal: str | None = None) -> pd.DataFrame:
    """Read a CSV / TSV results file (separator and decimal mark detected unless given; see
    :func:`bbt_widget.core.csvfile.read_results`), with errors that name the file and the fix."""
    from bbt_widget.core.csvfile import read_results as read

    try:
        return read(path, sep=sep, decimal=decimal)
    except ValueError as err:
        raise InputError(as_options(str(err))) from None


def guess_dataset(df: pd.DataFrame, args: argparse.Namespace) -> str | None:
    """Without --dataset, take the one column of text that can name the data sets.

    Wide form: a first column of text. Long form (--algorithm): the only text column that is
    not the algorithm, score or fold column.
    """
    if args.dataset is not None:
        returned: str | None = args.dataset
        return returned
    found = dataset_column(df, args)
    if found is not None:
        print(
            f"using column {found!r} as the data-set names (--dataset to choose)", file=sys.stderr
        )
    return found


def dataset_column(df: pd.DataFrame, args: argparse.Namespace) -> str | None:
    """The column :func:`guess_dataset` takes as the data-set names (without saying so), or
    ``None`` when there is not exactly one."""
    if args.algorithm is None:
        first = df.columns[0]
        candidates = [first] if not pd.api.types.is_numeric_dtype(df[first]) else []
    else:
        taken = {args.algorithm, args.score, args.fold}
        candidates = [
            c for c in df.columns if c not in taken and not pd.api.types.is_numeric_dtype(df[c])
        ]
    return str(candidates[0]) if len(candidates) == 1 else None


def layout_options(args: argparse.Namespace, dataset: str | None) -> dict[str, Any]:
    """The keywords that say how to read the results and count wins, as fit takes them."""
    return {
        "dataset": dataset,
        "algorithm": args.algorithm,
        "fold": args.fold,
        "score": args.score,
        "lower_is_better": args.lower_is_better,
        "d_min": args.d_min,
        "paired": not args.unpaired,
        "tie_threshold": args.tie_threshold,
    }


def check_summaries(args: argparse.Namespace) -> None:
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


def check_before_fit(
    df: pd.DataFrame, args: argparse.Namespace, dataset: str | None
) -> tuple[TidyResults, list[str]]:
    """Every data and model option checked against the data before the (slow) fits start.

    Reads the results once, as ``fit`` would, and counts the wins (layout, d_min, paired
    mode), in milliseconds. Returns the results as read, for the fits and the other methods
    to take as they are, and the algorithms, for options that name one.
    """
    from bbt_widget.core.data import as_tidy
    from bbt_widget.core.wintable import win_table

    check_model(args)
    layout = layout_options(args, dataset)
    counting = {k: layout.pop(k) for k in ("d_min", "paired", "tie_threshold")}
    try:
        tidy = as_tidy(df, **layout)
        table = win_table(tidy, ties=None, **counting)
    except (TypeError, ValueError) as err:  # a text column read as an algorithm's scores
        hint = long_form_hint(df, args) if args.algorithm is None else None
        if hint is None:
            raise
        raise InputError(f"{err}\n{hint}") from None
    games = table["win1"] + table["win2"] + table["ties"]
    if int(games.sum()) == 0:
        raise InputError(
            "no pair of algorithms has a result on a common data set, so there is nothing to "
            "fit; check --dataset (which column names the data sets)"
        )
    return tidy, pd.unique(table[["alg1", "alg2"]].to_numpy().ravel()).tolist()


def check_model(args: argparse.Namespace) -> None:
    """The model and sampler options, which need no data: the iterations, the seed and the
    hyper-prior's scale (its range, :data:`bbt_widget.core.options.PRIOR_SCALE_RANGE`)."""
    from bbt_widget.core.settings import PriorSettings
    from bbt_widget.core.validation import check_sampler_counts, check_seed

    sampler = {name: getattr(args, name) for name in ("chains", "iter_warmup", "iter_sampling")}
    check_sampler_counts(sampler, as_options=True)  # None: the engine's default
    check_seed(args.seed)
    PriorSettings(args.hyperprior, args.prior_scale)


def long_form_hint(df: pd.DataFrame, args: argparse.Namespace) -> str | None:
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


def check_control(control: str | None, algorithms: list[str]) -> None:
    from bbt_widget.core.data import check_algorithms

    if control is not None:
        try:
            check_algorithms([control], algorithms, "--control")
        except ValueError as err:
            raise InputError(str(err)) from None


def check_highlight(names: list[str] | None, algorithms: list[str]) -> None:
    from bbt_widget.core.data import check_algorithms

    try:
        check_algorithms(names or [], algorithms, "--highlight")
    except ValueError as err:
        raise InputError(str(err)) from None


def model_options(args: argparse.Namespace) -> dict[str, Any]:
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


def check_output(out: Path, given: str, formats: tuple[str, ...], what: str = "the report") -> None:
    """Refuse an output path that cannot be written to, before any fit."""
    if out.is_dir():
        example = str(out / f"{'report' if what == 'the report' else 'chart'}.{formats[0]}")
        raise InputError(f"-o {given!r} is a folder; give a file name such as {example!r}")
    if out.suffix.lstrip(".").lower() not in formats:
        endings = ", ".join(f".{f}" for f in formats[:-1]) + f" or .{formats[-1]}"
        raise InputError(f"-o {given!r}: {what} must end in {endings}")
    from bbt_widget.outputs._atomic import missing_folder

    problem = missing_folder(out)
    if problem is not None:
        raise InputError(f"-o {given!r}: {problem}")
    folder = out.parent
    from bbt_widget.outputs._atomic import OutputConflictError, refuse_link
    from bbt_widget.outputs.methods_text import check_report_paths

    try:  # a link where an output goes, a folder holding the user's files
        check_report_paths(out) if what == "the report" else refuse_link(out)
    except OutputConflictError as err:
        raise InputError(f"-o {given!r}: {err}") from None
    # a real write, not os.access: that ignores read-only mounts, ACLs and root's rights;
    # outputs are written beside their final name and renamed, so the folder must take a file
    target = out
    try:
        if out.exists():  # opened as it is: not through a link, not waiting on a FIFO
            no_follow = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
            os.close(os.open(out, os.O_WRONLY | os.O_APPEND | no_follow))
        target = folder
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as err:
        raise InputError(
            f"-o {given!r}: cannot write to {str(target)!r} "
            f"({os.strerror(err.errno) if err.errno else err}); choose a writable folder"
        ) from None
