"""What the command writes to a terminal: never a control character from the data.

Algorithm, data-set and metric names come from the user's results file, and a terminal obeys
control characters: ESC sequences clear the screen, colour text ("FAKE: all claims
verified" in green), set the window title or write the clipboard (OSC 52); a carriage return
overwrites the start of a line. Every line the command prints therefore goes through
:class:`SafeStream`, which writes each such character as its visible escape (``\\x1b``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from ..core.bidi import visible_controls


def escape_controls(text: str, *, keep_cr: bool = False) -> str:
    """``text`` with every control character (but newline and tab, and with ``keep_cr``
    the carriage return) written as its escape, e.g. ESC as ``\\x1b``
    (:func:`bbt_widget.core.bidi.visible_controls`)."""
    return visible_controls(text, keep_cr=keep_cr)


class SafeStream:
    """A text stream that writes through to ``stream`` with control characters escaped
    (:func:`escape_controls`); every other attribute is the stream's."""

    def __init__(self, stream: TextIO, *, keep_cr: bool = False) -> None:
        self._stream = stream
        self._keep_cr = keep_cr

    def write(self, text: str) -> int:
        self._stream.write(escape_controls(text, keep_cr=self._keep_cr))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def safe_output() -> Iterator[None]:
    """Within: ``sys.stdout`` and ``sys.stderr`` escape control characters (stderr keeps
    the carriage returns of its progress bars)."""
    out, err = sys.stdout, sys.stderr
    sys.stdout = SafeStream(out)
    sys.stderr = SafeStream(err, keep_cr=True)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err
