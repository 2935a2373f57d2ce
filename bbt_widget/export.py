"""Exports for manuscripts: tables to LaTeX (booktabs), Markdown and CSV; charts to SVG, PNG
and PDF without a browser or internet (vl-convert); the posterior to netCDF (ArviZ).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from .result import BBTResult

TABLE_FORMATS = ("tex", "md", "csv")
CHART_FORMATS = ("svg", "png", "pdf")

_TEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"$\sim$",
    "^": r"\textasciicircum{}",
    # pair labels "a > b": without T1 font encoding a bare > prints as an inverted "?"
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}


def tex_escape(text: object) -> str:
    """Escape LaTeX special characters in a cell, header or sentence (``>=`` -> $\\geq$)."""
    # the two-character comparisons first, through placeholders the table leaves alone
    text = str(text).replace(">=", "\x00ge").replace("<=", "\x00le")
    out = "".join(_TEX_SPECIALS.get(ch, ch) for ch in text)
    return out.replace("\x00ge", r"$\geq$").replace("\x00le", r"$\leq$")


def _cell(value: Any, digits: int) -> str:
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return "" if math.isnan(value) else f"{value:.{digits}f}"
    return str(value)


def _numeric_columns(df: pd.DataFrame) -> list[bool]:
    return [
        pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])
        for c in df.columns
    ]


def to_latex(
    df: pd.DataFrame,
    *,
    digits: int = 2,
    caption: str | None = None,
    label: str | None = None,
) -> str:
    """A booktabs ``table`` for a manuscript (needs ``\\usepackage{booktabs}``).

    Numbers are right-aligned and rounded to ``digits``; text is escaped.
    """
    numeric = _numeric_columns(df)
    align = "".join("r" if n else "l" for n in numeric)
    lines = [r"\begin{table}[htbp]", r"\centering"]
    if caption:
        lines.append(rf"\caption{{{tex_escape(caption)}}}")
    if label:
        lines.append(rf"\label{{{label}}}")
    lines += [rf"\begin{{tabular}}{{{align}}}", r"\toprule"]
    lines.append(" & ".join(tex_escape(c) for c in df.columns) + r" \\")
    lines.append(r"\midrule")
    for row in df.itertuples(index=False):
        lines.append(" & ".join(tex_escape(_cell(v, digits)) for v in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def to_markdown(df: pd.DataFrame, *, digits: int = 2) -> str:
    """A GitHub-flavoured Markdown table (numbers right-aligned)."""
    numeric = _numeric_columns(df)

    def esc(text: str) -> str:
        return text.replace("|", r"\|")

    header = "| " + " | ".join(esc(str(c)) for c in df.columns) + " |"
    rule = "|" + "|".join("---:" if n else ":---" for n in numeric) + "|"
    rows = [
        "| " + " | ".join(esc(_cell(v, digits)) for v in row) + " |"
        for row in df.itertuples(index=False)
    ]
    return "\n".join([header, rule, *rows]) + "\n"


def save_table(df: pd.DataFrame, path: str | Path, *, digits: int = 2, **kwargs: Any) -> Path:
    """Write a table as ``.tex`` (booktabs), ``.md`` or ``.csv`` chosen by the suffix."""
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    if fmt == "tex":
        path.write_text(to_latex(df, digits=digits, **kwargs), encoding="utf-8")
    elif fmt == "md":
        path.write_text(to_markdown(df, digits=digits), encoding="utf-8")
    elif fmt == "csv":
        df.to_csv(path, index=False)
    else:
        raise ValueError(
            f"unknown table format {path.suffix!r} for {path.name!r}; use one of "
            + ", ".join(f".{f}" for f in TABLE_FORMATS)
        )
    return path


def save_chart(chart: Any, path: str | Path, *, scale: float = 2.0) -> Path:
    """Write an Altair chart as SVG, PNG or PDF (by suffix) with vl-convert: no browser,
    no network."""
    import vl_convert as vlc

    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    if fmt not in CHART_FORMATS:
        raise ValueError(
            f"unknown chart format {path.suffix!r} for {path.name!r}; use one of "
            + ", ".join(f".{f}" for f in CHART_FORMATS)
        )
    spec = chart.to_dict() if hasattr(chart, "to_dict") else chart
    if fmt == "svg":
        path.write_text(vlc.vegalite_to_svg(spec), encoding="utf-8")
    elif fmt == "png":
        path.write_bytes(vlc.vegalite_to_png(spec, scale=scale))
    else:
        path.write_bytes(vlc.vegalite_to_pdf(spec))
    return path


def save_posterior(result: BBTResult, path: str | Path) -> Path:
    """Write the ArviZ InferenceData (posterior, predictive, log-likelihood, observed data,
    sample stats) to netCDF."""
    path = Path(path)
    result.idata.to_netcdf(str(path))
    return path


def export_all(
    result: BBTResult,
    folder: str | Path,
    *,
    formats: Sequence[str] = TABLE_FORMATS,
    rope: Sequence[float] = (0.45, 0.55),
    hdi: float = 0.89,
) -> list[Path]:
    """Write the summary, ranking and win tables in every format, and the posterior."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tables = {
        "summary": result.summary(rope=rope, hdi=hdi),
        "ranking": result.ranking(hdi=hdi),
        "win_table": result.win_table,
    }
    written = [
        save_table(df, folder / f"{name}.{fmt}") for name, df in tables.items() for fmt in formats
    ]
    written.append(save_posterior(result, folder / "posterior.nc"))
    return written
