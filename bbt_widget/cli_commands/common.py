"""What the subcommands share: the exit codes, the error a user can fix, the core's keyword
arguments named as the command's options, the last-resort error messages, and tables printed
for the terminal."""

from __future__ import annotations

import errno
import os
import re
import signal
import sys

import pandas as pd

from ..core.bidi import isolate

EXIT_OK, EXIT_UNEXPECTED, EXIT_INPUT, EXIT_ENGINE, EXIT_DIAGNOSTICS, EXIT_CHARTS = 0, 1, 2, 3, 4, 5

#: Every exit code of the command and what it means: the one table the help and the
#: documentation print (:func:`exit_codes_text`).
EXIT_CODES = {
    EXIT_OK: "success",
    EXIT_UNEXPECTED: "an unexpected error, or memory ran out (the message says what to try)",
    EXIT_INPUT: "bad arguments, file or data, or an input over the size limit (the message "
    "says what to fix); or a file that cannot be read or written (full disk, no permission: "
    "an output is written whole or not at all, so the old one is kept)",
    EXIT_ENGINE: "the Stan engine failed (compile or sampling)",
    EXIT_DIAGNOSTICS: "the report was written but the convergence diagnostics failed",
    EXIT_CHARTS: "the report was written without its charts (the chart renderer failed, e.g. "
    "under ulimit -v)",
    128 + signal.SIGINT: "stopped by SIGINT (Ctrl-C)",
    128 + signal.SIGTERM: "stopped by SIGTERM (timeout, CI, a job scheduler); either way "
    "every Stan process the command started is stopped first",
}


def exit_codes_text() -> str:
    """The exit codes as one paragraph, for the command's help."""
    return "exit codes: " + "; ".join(f"{code} {what}" for code, what in EXIT_CODES.items())


class InputError(ValueError):
    """A problem with the command's input the user can fix (exit code 2)."""


def fixed(frame: pd.DataFrame) -> str:
    """A table for the terminal in fixed-point notation (never 5.00e-01), every text cell and
    column label isolated (:func:`bbt_widget.core.bidi.isolate`), so that a name with
    right-to-left text or a bidi control cannot reorder the rest of its line."""
    text = frame.select_dtypes(include=["object", "string", "category"]).columns
    shown = frame.astype({c: object for c in text}) if len(text) else frame.copy()
    for c in text:
        shown[c] = frame[c].map(lambda v: v if pd.isna(v) else isolate(v))
    shown.columns = [isolate(c) if isinstance(c, str) else c for c in frame.columns]
    return str(shown.to_string(index=False, float_format=lambda x: f"{x:.2f}"))


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
    r"\b(dataset|algorithm|score|fold|d_min|tie_threshold|ties|hyperprior|prior_scale|seed|"
    r"chains|iter_warmup|iter_sampling|lower_is_better|control|n_train|n_test|repeats|adapt_delta|"
    r"max_treedepth|sep|decimal|rho|group)="
    r"(?=([^\s;,.)]?))"
    r"|\b(d_min|tie_threshold|prior_scale|iter_warmup|iter_sampling|lower_is_better|n_train|n_test|"
    r"adapt_delta|max_treedepth|rho)\b"
)


def as_options(message: str) -> str:
    """Name the command's options where the core's messages name keyword arguments."""
    for keyword, flag in _OPTIONS.items():
        message = message.replace(keyword, flag)

    def option(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(3)
        value_follows = bool(m.group(2))  # "dataset='db'" -> "--dataset 'db'"
        return "--" + name.replace("_", "-") + (" " if value_follows else "")

    return _KEYWORD.sub(option, message)


def unexpected(err: BaseException) -> str:
    """An unexpected error for the terminal: its type and message, then its notes (what was
    kept, e.g. where the posterior of a fit whose report failed was saved)."""
    notes = "".join(f"\n{note}" for note in getattr(err, "__notes__", ()))
    return f"{type(err).__name__}: {err}{notes}"


#: Errors of the files the command reads or writes that the user can fix: exit code 2 with
#: "no space left on device: <path>", not an unexpected error.
_FILE_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EACCES, errno.EPERM, errno.EROFS}

#: What to try when memory runs out: the draws and the pairs are what a fit keeps.
OUT_OF_MEMORY = (
    "out of memory: the process could not get more memory (the machine's, or its limit, "
    "ulimit -v); fit fewer algorithms (drop columns from the results), keep fewer draws "
    "(--chains, --iter-sampling), or read a smaller results file"
)


def last_resort(err: Exception) -> int:
    """Say what went wrong with an error no command caught, without a traceback; returns
    the exit code (:data:`EXIT_CODES`)."""
    if isinstance(err, MemoryError):
        print(f"bbt-widget: error: {OUT_OF_MEMORY}", file=sys.stderr)
        return EXIT_UNEXPECTED
    if isinstance(err, OSError) and err.errno in _FILE_ERRORS:
        # a full disk, no permission: the outputs were kept whole (see outputs/_atomic)
        where = f": {err.filename}" if err.filename else ""
        print(f"bbt-widget: error: {os.strerror(err.errno).lower()}{where}", file=sys.stderr)
        return EXIT_INPUT
    print(f"bbt-widget: unexpected error: {unexpected(err)}", file=sys.stderr)
    return EXIT_UNEXPECTED
