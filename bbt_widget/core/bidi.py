"""Names that cannot reorder the text around them (Unicode bidirectional isolation).

A name is text the user chose, and text can change the direction of what follows it: a
right-to-left override (U+202E) left open mirrors every later word of a sentence, and a
Hebrew or Arabic name turns the ``" > "`` between two names around. Wherever a name is
written among other text, :func:`isolate` wraps it in FIRST STRONG ISOLATE (U+2068) ... POP
DIRECTIONAL ISOLATE (U+2069): inside, the name keeps its own direction and its own controls;
outside, it is one neutral character. Names with nothing that can reorder text (Latin
letters, digits, punctuation, emoji...) are returned as they are, so the usual reports, tables
and methods paragraphs hold no invisible characters.

The output formats translate the isolates (:mod:`bbt_widget.outputs.export`): ``<bdi>`` in
HTML, the characters themselves in Markdown and plain text, nothing in LaTeX (pdflatex cannot
print bidi controls; :func:`strip_controls`). This module imports nothing from the package.
"""

from __future__ import annotations

import re
import unicodedata

#: C0 controls but line feed and tab, DEL, the C1 controls and the noncharacters U+FFFE and
#: U+FFFF: what a terminal obeys and what the chart renderer (vl-convert) aborts on.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ufffe\uffff]")
#: The same without the carriage return, which progress bars write on purpose.
_CONTROLS_BUT_CR = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffe\uffff]")

__all__ = [
    "BIDI_CONTROLS",
    "FSI",
    "PDI",
    "balance",
    "isolate",
    "needs_isolation",
    "pair_label",
    "strip_controls",
    "visible_controls",
]

#: FIRST STRONG ISOLATE and POP DIRECTIONAL ISOLATE: what :func:`isolate` wraps a name in.
FSI, PDI = "\u2068", "\u2069"
#: Embeddings and overrides (LRE, RLE, LRO, RLO), each closed by PDF (U+202C).
_EMBEDDINGS = frozenset("\u202a\u202b\u202d\u202e")
_PDF = "\u202c"
#: Isolate initiators (LRI, RLI, FSI), each closed by PDI.
_ISOLATES = frozenset("\u2066\u2067\u2068")
#: Every explicit bidi formatting character and the directional marks (LRM, RLM, ALM):
#: what a LaTeX report drops.
BIDI_CONTROLS = frozenset(
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
)
#: Bidi classes that can reorder the text around them: right-to-left letters (R, AL),
#: Arabic digits (AN) and the explicit controls.
_REORDERING = frozenset(
    {"R", "AL", "AN", "LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"}
)


def needs_isolation(text: str) -> bool:
    """Whether ``text`` holds a character that can reorder the text around it (a
    right-to-left letter, an Arabic digit or a bidi control)."""
    return any(unicodedata.bidirectional(ch) in _REORDERING for ch in str(text))


def _pair(text: str) -> tuple[str, list[str]]:
    """``text`` without the PDIs and PDFs that close nothing, and what it leaves open ("e" per
    embedding or override, "i" per isolate, innermost last)."""
    out: list[str] = []
    stack: list[str] = []
    for ch in text:
        if ch in _EMBEDDINGS:
            stack.append("e")
        elif ch in _ISOLATES:
            stack.append("i")
        elif ch == _PDF:
            if not stack or stack[-1] != "e":
                continue
            stack.pop()
        elif ch == PDI:
            if "i" not in stack:
                continue
            # a PDI also ends the embeddings opened after its isolate
            while stack.pop() != "i":
                pass
        out.append(ch)
    return "".join(out), stack


def balance(text: object) -> str:
    """``text`` with its bidi controls paired, so nothing it opens stays open after it.

    An isolate initiator (LRI, RLI, FSI) is closed by the next unmatched PDI, which also ends
    the embeddings and overrides opened inside it (as the Unicode bidi algorithm does); a PDF
    closes the last embedding or override when no isolate was opened after it. PDIs and PDFs
    that close nothing are dropped, and whatever is still open at the end is closed there.
    """
    out, stack = _pair(str(text))
    return out + "".join(_PDF if kind == "e" else PDI for kind in reversed(stack))


def isolate(name: object) -> str:
    """``name`` as it must be written among other text: wrapped in FSI ... PDI when it can
    reorder text, else unchanged.

    Inside, the name's own isolates are paired (a stray PDI dropped, an open one closed) so
    that the final PDI closes this isolate; an override or embedding left open ends there.
    """
    text = str(name)
    if not needs_isolation(text):
        return text
    out, stack = _pair(text)
    return FSI + out + PDI * stack.count("i") + PDI


def pair_label(a: object, b: object) -> str:
    """The display label ``"a > b"`` of a pair, each name isolated (:func:`isolate`)."""
    return f"{isolate(a)} > {isolate(b)}"


def strip_controls(text: object) -> str:
    """``text`` without bidi controls and directional marks (for LaTeX, which cannot print
    them); every other character kept."""
    return "".join(ch for ch in str(text) if ch not in BIDI_CONTROLS)


def visible_controls(text: str, *, keep_cr: bool = False) -> str:
    """``text`` with every control character (but newline and tab, and with ``keep_cr`` the
    carriage return) and the noncharacters U+FFFE and U+FFFF written as visible escapes
    (ESC as ``\\x1b``, U+FFFE as ``\\ufffe``): a name from a results file then neither
    drives a terminal nor stops the chart renderer, and still shows what it holds."""
    pattern = _CONTROLS_BUT_CR if keep_cr else _CONTROLS
    return pattern.sub(
        lambda m: (
            f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}"
        ),
        text,
    )
