"""Progress on a text stream: the ``progress`` callback of the batch functions
(:func:`text_progress`) and the tqdm bar each stage draws on a terminal (:func:`stage_bar`),
which the command line's progress uses too.

On a terminal a stage is a tqdm bar redrawn in place. In a log (a stream that is not a
terminal: CI, a file, a pipe) redrawing piles carriage returns into one long line, so a
stage writes plain lines instead: one when it starts and one at every tenth done.
"""

from __future__ import annotations

import sys
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tqdm import tqdm

    from ..core.draws import ProgressCallback

__all__ = ["is_terminal", "stage_bar", "text_progress"]


def is_terminal(stream: IO[str]) -> bool:
    """Whether ``stream`` is a terminal, where a bar can be redrawn in place."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty())


def stage_bar(
    label: str, stream: IO[str], *, fraction_known: bool, width: int = 30, leave: bool = True
) -> tqdm:
    """A tqdm bar for one stage: ``label... 42% |####      | 00:07`` when the stage reports
    its fraction done (``update`` it in percent, out of 100; ``set_postfix_str`` adds
    ``, <text>`` after the clock), else ``label... 00:07`` (elapsed
    time only; ``refresh`` it to move the clock).

    tqdm is imported here, on the first bar: the command answers ``--help`` and refuses bad
    options without it.
    """
    from tqdm import tqdm

    if fraction_known:
        form = f"{{desc}}... {{percentage:3.0f}}% |{{bar:{width}}}| {{elapsed}}{{postfix}}"
    else:
        form = "{desc}... {elapsed}"
    return tqdm(
        total=100 if fraction_known else None,
        desc=label,
        file=stream,
        bar_format=form,
        leave=leave,
        dynamic_ncols=False,
        mininterval=0.1,
    )


def text_progress(stream: IO[str] | None = None, width: int = 30) -> ProgressCallback:
    """A ``progress`` callback that shows each stage on ``stream`` (``stderr`` by default).

    On a terminal a tqdm bar ``width`` characters wide; in a log a line when the stage
    starts and one at every tenth done (see the module's docstring).
    """
    out = stream if stream is not None else sys.stderr
    tty = is_terminal(out)
    state: dict[str, Any] = {"stage": None, "bar": None, "tenth": -1}

    def report(stage: str, fraction: float) -> None:
        compiling = stage == "compiling"
        # a new stage, or the same one run again after its bar closed at 100%
        again = tty and state["bar"] is None and not compiling and 0 <= fraction < 1
        if stage != state["stage"] or again:
            if state["bar"] is not None:
                state["bar"].close()
            label = "compiling the Stan model" if compiling else stage
            state.update(stage=stage, bar=None, tenth=-1)
            if tty:
                known = not compiling
                state["bar"] = stage_bar(label, out, fraction_known=known, width=width)
            else:
                out.write(f"{label}...\n")
                out.flush()
        if compiling or fraction != fraction:  # no fraction (NaN): nothing to draw
            return
        percent = 100.0 * min(max(fraction, 0.0), 1.0)
        bar = state["bar"]
        if bar is not None:
            bar.update(percent - bar.n)
            if fraction >= 1.0:
                bar.close()
                state["bar"] = None
        elif not tty and int(percent // 10) > state["tenth"]:
            state["tenth"] = int(percent // 10)
            out.write(f"{stage}: {state['tenth'] * 10}%\n")
            out.flush()

    return report
