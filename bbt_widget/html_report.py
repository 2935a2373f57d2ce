"""A standalone, offline report of one fit: HTML (charts inlined as SVG), Markdown or LaTeX.

Charts are rendered to SVG by vl-convert in this process, so the HTML file needs no
JavaScript, no CDN and no network to open; Markdown and LaTeX reports write their figures
(SVG / PDF) into a folder beside the report.
"""

from __future__ import annotations

import html
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
th,td{padding:.2rem .6rem;border-bottom:1px solid #eee;text-align:right}
th:first-child,td:first-child{text-align:left}
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
    """Write the report; the format follows the suffix (``.html``, ``.md``, ``.tex``)."""
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
    methods = result.report(
        format="tex" if fmt == "tex" else "md", interpretation=interpretation, rope=rope, hdi=hdi
    )
    if fmt == "html":
        path.write_text(_html(result, chart_set, tables, methods, title), encoding="utf-8")
        return path
    figures = path.with_name(path.stem + "_figures")
    figures.mkdir(parents=True, exist_ok=True)
    suffix = "pdf" if fmt == "tex" else "svg"
    files = {}
    for name, _caption in _FIGURES:
        files[name] = export.save_chart(chart_set[name], figures / f"{name}.{suffix}")
    rel = {name: f.relative_to(path.parent).as_posix() for name, f in files.items()}
    text = (
        _tex(result, rel, tables, methods, title)
        if fmt == "tex"
        else _md(result, rel, tables, methods, title)
    )
    path.write_text(text, encoding="utf-8")
    return path


def _diag_line(result: BBTResult) -> tuple[bool, str]:
    d = result.diagnostics()
    return d.ok, str(d)


def _html(result, chart_set, tables, methods, title) -> str:
    import vl_convert as vlc

    ok, diag = _diag_line(result)
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f'<p class="{"ok" if ok else "bad"}">{html.escape(diag)}</p>',
        "<h2>Methods and results</h2>",
        f'<div class="methods">{_md_inline_to_html(methods)}</div>',
    ]
    for name, caption in _FIGURES:
        svg = vlc.vegalite_to_svg(chart_set[name].to_dict())
        parts.append(f"<figure>{svg}<figcaption>{html.escape(caption)}</figcaption></figure>")
    for heading, df in tables.items():
        parts.append(f"<h2>{html.escape(heading)}</h2>")
        parts.append(df.to_html(index=False, float_format=lambda x: f"{x:.3f}", border=0))
    parts.append("</body></html>")
    return "\n".join(parts)


def _md_inline_to_html(text: str) -> str:
    """The methods paragraph's Markdown (only *emphasis* and `code`) as HTML."""
    import re

    out = html.escape(text)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    return re.sub(r"\*([^*]+)\*", r"<em>\1</em>", out)


def _md(result, files, tables, methods, title) -> str:
    _ok, diag = _diag_line(result)
    parts = [
        f"# {title}",
        "",
        f"**Diagnostics:** {diag}",
        "",
        "## Methods and results",
        "",
        methods,
        "",
    ]
    for name, caption in _FIGURES:
        parts += [f"![{caption}]({files[name]})", "", f"*{caption}*", ""]
    for heading, df in tables.items():
        parts += [f"## {heading}", "", export.to_markdown(df, digits=3)]
    return "\n".join(parts)


def _tex(result, files, tables, methods, title) -> str:
    _ok, diag = _diag_line(result)
    parts = [
        f"% {title} -- generated by bbt-widget; needs \\usepackage{{booktabs,graphicx}}",
        f"\\section*{{{export.tex_escape(title)}}}",
        f"\\paragraph{{Diagnostics}} {export.tex_escape(diag)}",
        "",
        "\\subsection*{Methods and results}",
        methods,
        "",
    ]
    for name, caption in _FIGURES:
        parts += [
            r"\begin{figure}[htbp]\centering",
            rf"\includegraphics[width=\linewidth]{{{files[name]}}}",
            rf"\caption{{{export.tex_escape(caption)}}}",
            r"\end{figure}",
        ]
    for heading, df in tables.items():
        parts.append(export.to_latex(df, digits=3, caption=heading))
    return "\n".join(parts)
