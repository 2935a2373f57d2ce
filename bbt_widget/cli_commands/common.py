"""What the subcommands share: the exit codes, the error a user can fix, the core's keyword
arguments named as the command's options, and tables printed for the terminal."""

from __future__ import annotations

import re

import pandas as pd

EXIT_OK, EXIT_UNEXPECTED, EXIT_INPUT, EXIT_ENGINE, EXIT_DIAGNOSTICS, EXIT_CHARTS = 0, 1, 2, 3, 4, 5


class InputError(ValueError):
    """A problem with the command's input the user can fix (exit code 2)."""


def fixed(frame: pd.DataFrame) -> str:
    """A table for the terminal in fixed-point notation (never 5.00e-01)."""
    return str(frame.to_string(index=False, float_format=lambda x: f"{x:.2f}"))


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
