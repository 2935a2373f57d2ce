"""What pdflatex can print of a Unicode character, for :func:`bbt_widget.outputs.escape.tex_escape`.

The LaTeX report loads ``inputenc`` (utf8), ``fontenc`` (T1) and Latin Modern, as Debian's
texlive-latex-base and texlive-latex-recommended provide them. With that preamble:

- the characters LaTeX declares for the T1, TS1 and OMS encodings (accented Latin letters,
  quotes, dashes, currency and a few symbols) are written as they are;
- Greek letters and the common mathematical symbols are written as math commands
  (``\\ensuremath{\\alpha}``, ``\\ensuremath{\\geq}``), which print in any preamble;
- invisible characters (zero-width spaces and joiners, the soft hyphen, variation
  selectors, the byte order mark) are dropped;
- everything else (Cyrillic, Greek with accents, CJK, Arabic, emoji...) has no glyph in
  those fonts and would stop pdflatex, so it is written as a visible ``[U+XXXX]``
  (:data:`REPLACED_MARK` starts it, so a report can say that it replaced characters).
"""

from __future__ import annotations

__all__ = ["REPLACED_MARK", "tex_char"]

#: Code points (ranges, inclusive) LaTeX's utf8 input declares for the T1, TS1 and OMS
#: encodings (``t1enc.dfu``, ``ts1enc.dfu``, ``omsenc.dfu``), less the invisible ones.
_PRINTABLE_RANGES = (
    "00A0-00AC 00AE-00B7 00B9-0125 0128-0137 0139-013E 0141-0148 014A-0165 0168-017E 0192 "
    "01C4-01D4 01E2-01E3 01E6-01EB 01F0 01F4-01F5 0218-021B 0232-0233 0237 02C7 02D8-02D9 "
    "02DB 02DD 0E3F 1E02-1E03 1E0D 1E1E-1E21 1E25 1E30-1E31 1E37 1E43 1E45 1E47 1E5B 1E63 "
    "1E6D 1E8E-1E91 1E9E 1EF2-1EF3 2010-2016 2018-201A 201C-201E 2020-2022 2030-2031 "
    "2039-203B 203D 2044 204E 2052 20A1 20A4 20A6 20A9 20AB-20AC 20B1 2103 2116-2117 211E "
    "2120 2122 2126-2127 212E 2190-2193 2329-232A 2422-2423 25E6 25EF 266A 27E8-27E9 "
    "3008-3009 FB00-FB06"
)


def _code_points(ranges: str) -> frozenset[int]:
    out: set[int] = set()
    for item in ranges.split():
        first, _, last = item.partition("-")
        out.update(range(int(first, 16), int(last or first, 16) + 1))
    return frozenset(out)


_PRINTABLE = _code_points(_PRINTABLE_RANGES)

#: Characters that print nothing: dropped (zero-width space, non-joiner, joiner, word joiner,
#: soft hyphen, Mongolian vowel separator, byte order mark, variation selectors).
_INVISIBLE = frozenset("\u200b\u200c\u200d\u2060\u00ad\u180e\ufeff") | frozenset(
    map(chr, range(0xFE00, 0xFE10))
)

_GREEK_LOWER = (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi o pi rho "
    "varsigma sigma tau upsilon phi chi psi omega"
).split()
# capitals without a command of their own look like Latin letters
_GREEK_UPPER = (
    "A B Gamma Delta E Z H Theta I K Lambda M N Xi O Pi P - Sigma T Upsilon Phi X Psi Omega"
).split()


def _greek() -> dict[str, str]:
    out = {}
    for k, name in enumerate(_GREEK_LOWER):
        out[chr(0x03B1 + k)] = "\\" + name if len(name) > 1 else name
    for k, name in enumerate(_GREEK_UPPER):
        if name != "-":  # U+03A2 is unassigned
            out[chr(0x0391 + k)] = "\\" + name if len(name) > 1 else f"\\mathrm{{{name}}}"
    out.update({"\u03d1": r"\vartheta", "\u03d5": r"\phi", "\u03d6": r"\varpi"})
    out.update({"\u03f5": r"\epsilon", "\u03f1": r"\varrho", "\u03c6": r"\varphi"})
    return out


#: Math-mode replacements: Greek letters and the symbols names and captions use.
_MATH = {
    **_greek(),
    "\u2265": r"\geq",
    "\u2264": r"\leq",
    "\u2260": r"\neq",
    "\u2248": r"\approx",
    "\u2261": r"\equiv",
    "\u223c": r"\sim",
    "\u226a": r"\ll",
    "\u226b": r"\gg",
    "\u2212": "-",
    "\u2213": r"\mp",
    "\u2217": r"\ast",
    "\u2218": r"\circ",
    "\u22c5": r"\cdot",
    "\u221e": r"\infty",
    "\u221a": r"\surd",
    "\u221d": r"\propto",
    "\u2202": r"\partial",
    "\u2207": r"\nabla",
    "\u2200": r"\forall",
    "\u2203": r"\exists",
    "\u2205": r"\emptyset",
    "\u2208": r"\in",
    "\u2209": r"\notin",
    "\u2229": r"\cap",
    "\u222a": r"\cup",
    "\u2282": r"\subset",
    "\u2283": r"\supset",
    "\u2286": r"\subseteq",
    "\u2287": r"\supseteq",
    "\u2227": r"\wedge",
    "\u2228": r"\vee",
    "\u2295": r"\oplus",
    "\u2297": r"\otimes",
    "\u2211": r"\sum",
    "\u220f": r"\prod",
    "\u222b": r"\int",
    "\u2032": r"\prime",
    "\u2113": r"\ell",
    "\u21d2": r"\Rightarrow",
    "\u21d0": r"\Leftarrow",
    "\u21d4": r"\Leftrightarrow",
    "\u2194": r"\leftrightarrow",
}
#: Text replacements for characters the T1 and TS1 encodings lack.
_TEXT = {"\u2026": r"\ldots{}", "\u2009": r"\,", "\u202f": r"\,", "\u2007": "~"}

#: How a replaced character starts (``\lbrack{}U+...``): distinct from a literal ``[``, which
#: the escaper writes as ``{[}``, so a report can tell that it replaced characters.
REPLACED_MARK = r"\lbrack{}U+"


def tex_char(ch: str) -> str:
    """LaTeX for one non-ASCII character: itself, a math or text command, ``""`` for an
    invisible character, or ``[U+XXXX]`` when the report's fonts have no glyph for it."""
    if ord(ch) in _PRINTABLE:
        return ch
    if ch in _INVISIBLE:
        return ""
    if ch in _MATH:
        return rf"\ensuremath{{{_MATH[ch]}}}"
    if ch in _TEXT:
        return _TEXT[ch]
    return f"{REPLACED_MARK}{ord(ch):04X}\\rbrack{{}}"
