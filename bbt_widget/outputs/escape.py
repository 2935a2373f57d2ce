"""Escapers of user strings: one per text format (LaTeX, Markdown, HTML), and a CSV cell a
spreadsheet would run as a formula made text.

Everything that writes a user string (a name, a caption, a sentence) into a table, a report or
a paste-ready text goes through :data:`ESCAPERS` or :func:`csv_safe`; the exports
(:mod:`bbt_widget.outputs.export`, public as ``bbt.export``) offer them to users.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import pandas as pd

from ..core.bidi import FSI, PDI, balance, strip_controls
from .tex_chars import tex_char

__all__ = ["ESCAPERS", "FORMULA_PREFIXES", "csv_safe", "html_escape", "md_escape", "tex_escape"]

_TEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    # without T1 font encoding a bare <, > or | prints as an inverted "?" or a dash
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    # a cell starting with [ after a row's \\ would be read as its optional argument
    "[": "{[}",
    "]": "{]}",
    # a line break would end a table row or a paragraph: names are one line
    "\n": " ",
    "\t": " ",
}
# Markdown: & < > as entities (no HTML, no entity passes through: CommonMark renders raw HTML),
# the inline-syntax characters behind a backslash (every CommonMark renderer honours that for
# ASCII punctuation), and a line break as <br>, the one tag that never comes from the text.
_MD_SPECIALS = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    "\n": "<br>",
    **{ch: "\\" + ch for ch in "\\`*_[]|~$"},
}
_HTML_SPECIALS = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    '"': "&quot;",
    "'": "&#x27;",
    "\n": "<br>",
}


def _unix_newlines(text: object) -> str:
    # \r\n and a lone \r (old Mac files, Excel cells) are line breaks too
    return str(text).replace("\r\n", "\n").replace("\r", "\n")


#: The two-character comparisons, printed as one sign.
_TEX_COMPARISONS = {">=": r"$\geq$", "<=": r"$\leq$"}
_TEX_TOKENS = re.compile(r">=|<=|.", re.DOTALL)


def _tex_token(token: str) -> str:
    if token in _TEX_COMPARISONS:
        return _TEX_COMPARISONS[token]
    if token in _TEX_SPECIALS:
        return _TEX_SPECIALS[token]
    if " " <= token <= "~":
        return token
    return tex_char(token)


def tex_escape(text: object) -> str:
    """Escape a cell, header or sentence for LaTeX so every character prints literally.

    ``>=`` / ``<=`` become $\\geq$ / $\\leq$, ``--`` stays two hyphens and a line break
    becomes a space. Bidi controls are dropped (pdflatex cannot print them; the name is
    otherwise kept), and other non-ASCII characters go through
    :func:`bbt_widget.outputs.tex_chars.tex_char`: accented Latin letters are kept (the
    report's preamble loads T1 fonts), Greek letters and mathematical symbols become math
    commands, invisible characters are dropped, and a character no pdflatex font of the
    report has (Cyrillic, CJK, emoji...) is written as ``[U+1F680]`` (see
    :data:`bbt_widget.outputs.tex_chars.REPLACED_MARK`), so the document still compiles.
    """
    text = unicodedata.normalize("NFC", strip_controls(_unix_newlines(text)))
    out = "".join(_tex_token(m.group()) for m in _TEX_TOKENS.finditer(text))
    # TeX ligatures: -- and --- would print as dashes
    return out.replace("--", "-{}-").replace("--", "-{}-")


def md_escape(text: object) -> str:
    """Escape a user string (a name, a caption, a sentence) for Markdown.

    ``&``, ``<`` and ``>`` become HTML entities, so no HTML in a name reaches the renderer;
    the inline syntax characters ``\\ ` * _ [ ] | ~ $`` are backslash-escaped, so a name cannot
    start emphasis, code, a link, math or a new table cell; a line break becomes ``<br>``,
    so a name cannot end a table row or start a heading. Bidi controls are paired
    (:func:`bbt_widget.core.bidi.balance`): an isolated name stays isolated, and nothing the
    text opens reverses what follows it.
    """
    return "".join(_MD_SPECIALS.get(ch, ch) for ch in balance(_unix_newlines(text)))


#: The HTML of each bidi isolate: an element the browser isolates the same way.
_HTML_ISOLATES = {
    FSI: "<bdi>",
    "\u2066": '<bdi dir="ltr">',
    "\u2067": '<bdi dir="rtl">',
    PDI: "</bdi>",
}


def html_escape(text: object, *, tags: bool = True) -> str:
    """Escape a user string for HTML text (quotes too); a line break becomes ``<br>``.

    Bidi controls are paired (:func:`bbt_widget.core.bidi.balance`) and each isolate becomes
    a ``<bdi>`` element (an isolated name, :func:`bbt_widget.core.bidi.isolate`, is shown in
    ``<bdi>...</bdi>``), so nothing the text opens reverses what follows it. ``tags=False``
    writes no element at all (for text where markup is not read, such as ``<title>``): line
    breaks stay line breaks and the isolates stay characters.
    """
    if not tags:
        return "".join(_HTML_SPECIALS.get(ch, ch) if ch != "\n" else ch for ch in balance(text))
    return "".join(
        _HTML_SPECIALS.get(ch) or _HTML_ISOLATES.get(ch) or ch
        for ch in balance(_unix_newlines(text))
    )


#: One escaper per text format, for everything that writes user strings.
ESCAPERS = {"md": md_escape, "tex": tex_escape, "html": html_escape}


#: A spreadsheet reads a cell starting with one of these as a formula (OWASP: CSV injection).
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def _formula_safe(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def csv_safe(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` whose text cells and column names that a spreadsheet would run as a
    formula (starting with ``= + - @``, tab or carriage return) start with ``'`` instead.

    Number columns are left alone, so negative numbers stay numbers.
    """
    out = df.copy()
    for col in out.columns:
        values = out[col]
        if pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
            continue
        if isinstance(values.dtype, pd.CategoricalDtype):
            values = values.astype(object)
        out[col] = values.map(_formula_safe)
    out.columns = [_formula_safe(c) for c in out.columns]
    return out
