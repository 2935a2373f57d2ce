"""A standalone, offline report of one fit: HTML (charts inlined as SVG), Markdown or LaTeX.

Charts are rendered to SVG by vl-convert (in a child process), so the HTML file needs no
JavaScript, no CDN and no network to open; Markdown and LaTeX reports write their figures
(SVG / PDF) into a folder beside the report.
"""

from __future__ import annotations

import urllib.parse
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from . import charts, export

if TYPE_CHECKING:
    from .result import BBTResult

REPORT_FORMATS = ("html", "md", "tex")
#: Charts of a report, in order, with their captions.
_FIGURES = (
    (
        "intervals",
        "P(a > b) per pair: median (dot), HDI (thick bar), full range (thin line); "
        "the grey band is the ROPE (paper Fig. 1 and 3).",
    ),
    ("rope_overlap", "Posterior mass of P(a > b) below, inside and above the ROPE."),
    (
        "ppc",
        "Posterior predictive check: replicated win counts per pair, observed count "
        "marked (paper Fig. 2).",
    ),
    ("win_matrix", "The win/loss/tie table that was fitted."),
)

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:70rem;
margin:2rem auto;padding:0 1rem;color:#222;line-height:1.45}
h1{font-size:1.6rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:.9rem;margin:.5rem 0}
th,td{padding:.2rem .6rem;border-bottom:1px solid #eee}
.num{text-align:right}.txt{text-align:left}
.ok{color:#1a7f37}.bad{color:#b42318;font-weight:600}
figure{margin:1rem 0}figcaption{font-size:.85rem;color:#555}
.methods{background:#f7f7f9;padding:.8rem 1rem;border-radius:6px}
"""


def write_report(
    result: BBTResult,
    path: str | Path,
    *,
    rope: Sequence[float] = (0.45, 0.55),
    hdi: float = 0.89,
    interpretation: str = "weak",
    control: str | None = None,
    title: str = "Bayesian Bradley-Terry comparison",
) -> Path:
    """Write the report; the format follows the suffix (``.html``, ``.md``, ``.tex``).

    Every name and title goes through the format's escaper (:data:`export.ESCAPERS`), so
    it prints literally and no HTML in it runs. When the charts cannot be rendered (see
    :func:`export.render_charts`), the report is written without them, says why, and a
    :class:`export.ChartRenderWarning` is issued.
    """
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    if fmt not in REPORT_FORMATS:
        raise ValueError(
            f"unknown report format {path.suffix!r} for {path.name!r}; use .html, .md or .tex"
        )
    rope = (float(rope[0]), float(rope[1]))
    chart_set = charts.result_charts(
        result, rope=rope, hdi=hdi, control=control, interpretation=interpretation
    )
    tables = {
        "Summary: P(a > b) per pair": result.summary(rope=rope, hdi=hdi, control=control),
        "Ranking": result.ranking(hdi=hdi),
        "Posterior predictive check (HDI coverage)": result.ppc_table(),
        "Win/loss table": result.win_table,
    }
    methods = result.report(format=fmt, interpretation=interpretation, rope=rope, hdi=hdi)
    suffix = {"html": "svg", "md": "svg", "tex": "pdf"}[fmt]
    names = [name for name, _caption in _FIGURES]
    try:
        rendered = export.render_charts([chart_set[n] for n in names], [suffix] * len(names))
        figures: dict[str, bytes] | str = dict(zip(names, rendered))
    except export.ChartRenderError as err:
        warnings.warn(f"could not render charts: {err}", export.ChartRenderWarning, stacklevel=2)
        figures = f"Charts could not be rendered: {err}."
    if fmt == "html":
        text = _html(result, figures, tables, methods, title)
    else:
        if isinstance(figures, dict):
            figures = _write_figures(path, figures, suffix)
        write = _tex if fmt == "tex" else _md
        text = write(result, figures, tables, methods, title)
    path.write_text(text, encoding="utf-8")
    return path


def _write_figures(path: Path, rendered: dict[str, bytes], suffix: str) -> dict[str, str]:
    """Write the figures into ``<report>_figures/``; their paths relative to the report."""
    folder = path.with_name(path.stem + "_figures")
    folder.mkdir(parents=True, exist_ok=True)
    rel = {}
    for name, data in rendered.items():
        file = folder / f"{name}.{suffix}"
        file.write_bytes(data)
        rel[name] = file.relative_to(path.parent).as_posix()
    return rel


def _diag_line(result: BBTResult) -> tuple[bool, str]:
    d = result.diagnostics()
    return d.ok, str(d)


def _html(result, figures, tables, methods, title) -> str:
    esc = export.html_escape
    ok, diag = _diag_line(result)
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{esc(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
        f'<p class="{"ok" if ok else "bad"}">{esc(diag)}</p>',
        "<h2>Methods and results</h2>",
        f'<div class="methods">{methods}</div>',
    ]
    if isinstance(figures, str):
        parts.append(f'<p class="bad">{esc(figures)}</p>')
    else:
        for name, caption in _FIGURES:
            svg = figures[name].decode("utf-8")
            parts.append(f"<figure>{svg}<figcaption>{esc(caption)}</figcaption></figure>")
    for heading, df in tables.items():
        parts.append(f"<h2>{esc(heading)}</h2>")
        parts.append(export.to_html(df, digits=3))
    parts.append("</body></html>")
    return "\n".join(parts)


def _md(result, figures, tables, methods, title) -> str:
    esc = export.md_escape
    _ok, diag = _diag_line(result)
    parts = [
        f"# {esc(title)}",
        "",
        f"**Diagnostics:** {esc(diag)}",
        "",
        "## Methods and results",
        "",
        methods,
        "",
    ]
    if isinstance(figures, str):
        parts += [f"**{esc(figures)}**", ""]
    else:
        for name, caption in _FIGURES:
            # the path is percent-encoded: a report named "a (1).md" keeps a working link
            target = urllib.parse.quote(figures[name])
            parts += [f"![{esc(caption)}]({target})", "", f"*{esc(caption)}*", ""]
    for heading, df in tables.items():
        parts += [f"## {esc(heading)}", "", export.to_markdown(df, digits=3)]
    return "\n".join(parts)


def _tex(result, figures, tables, methods, title) -> str:
    esc = export.tex_escape
    _ok, diag = _diag_line(result)
    parts = [
        f"% {' '.join(title.split())} -- generated by bbt-widget; "
        "needs \\usepackage{booktabs,graphicx}",
        f"\\section*{{{esc(title)}}}",
        f"\\paragraph{{Diagnostics}} {esc(diag)}",
        "",
        "\\subsection*{Methods and results}",
        methods,
        "",
    ]
    if isinstance(figures, str):
        parts += [f"\\paragraph{{Charts}} {esc(figures)}", ""]
    else:
        for name, caption in _FIGURES:
            parts += [
                r"\begin{figure}[htbp]\centering",
                rf"\includegraphics[width=\linewidth]{{{figures[name]}}}",
                rf"\caption{{{esc(caption)}}}",
                r"\end{figure}",
            ]
    for heading, df in tables.items():
        parts.append(export.to_latex(df, digits=3, caption=heading))
    return "\n".join(parts)
