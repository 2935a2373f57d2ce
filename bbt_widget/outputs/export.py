"""Exports for manuscripts: tables to LaTeX (booktabs), Markdown and CSV; charts to SVG, PNG
and PDF without a browser or internet (vl-convert); the posterior to netCDF (ArviZ).

The escapers of user strings are :mod:`bbt_widget.outputs.escape`'s, offered here too
(``bbt.export.tex_escape``...).
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import json
import math
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..charts.encodings import LABEL_AXIS
from ..core.bidi import isolate, visible_controls
from ..core.options import DEFAULT_HDI, DEFAULT_ROPE
from ..core.validation import check_flag
from ._atomic import atomic_path, atomic_write_bytes
from .escape import ESCAPERS, FORMULA_PREFIXES, csv_safe, html_escape, md_escape, tex_escape

if TYPE_CHECKING:
    from ..core.result import BBTResult

__all__ = [
    "CHART_FORMATS",
    "ESCAPERS",
    "FORMULA_PREFIXES",
    "TABLE_FORMATS",
    "ChartBatches",
    "ChartRenderError",
    "ChartRenderWarning",
    "csv_safe",
    "csv_text",
    "export_all",
    "html_escape",
    "md_escape",
    "prestart_renderer",
    "render_charts",
    "save_chart",
    "save_posterior",
    "save_table",
    "tex_escape",
    "to_html",
    "to_latex",
    "to_markdown",
]

TABLE_FORMATS = ("tex", "md", "csv")
CHART_FORMATS = ("svg", "png", "pdf")


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


#: A number as :func:`_cell` writes it, which a siunitx ``S`` column parses.
_TEX_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?")


def _tex_cell(value: object, number_column: bool, *, header: bool = False) -> str:
    """A cell escaped for LaTeX; in an ``S`` column anything but a number (the header, an
    empty or a non-finite cell) is braced, which siunitx prints as text."""
    if number_column and (header or not _TEX_NUMBER.fullmatch(str(value))):
        return "{" + tex_escape(value) + "}"
    return tex_escape(value)


def header_lines(header: str, width: int) -> list[str]:
    """``header`` broken after its ``_`` and spaces into lines of at most ``width``
    characters, or of its longest unbreakable piece when that is longer; one line when it
    fits in ``width`` already.

    Examples
    --------
    >>> header_lines("mcse_a_better", 8)
    ['mcse_a_', 'better']
    """
    if len(header) <= width:
        return [header]
    pieces = re.findall(r"[^_ ]*[_ ]|[^_ ]+$", header)
    width = max(width, *(len(p.rstrip()) for p in pieces))
    lines = [""]
    for piece in pieces:
        if lines[-1] and len((lines[-1] + piece).rstrip()) > width:
            lines.append("")
        lines[-1] += piece
    return [line.rstrip() for line in lines]


#: What a ``\label`` key may hold here.
_TEX_LABEL = re.compile(r"[A-Za-z0-9.:_-]+")


def to_latex(
    df: pd.DataFrame,
    *,
    digits: int = 2,
    caption: str | None = None,
    label: str | None = None,
    long: bool = False,
    wrap: Mapping[str, float] | None = None,
    setup: str = "",
    siunitx: bool = True,
    stack_headers: bool = False,
) -> str:
    """A booktabs ``table`` for a manuscript (needs ``\\usepackage{booktabs}``,
    ``\\usepackage{siunitx}`` for its number columns, and ``\\usepackage[T1]{fontenc}`` for
    letters beyond ASCII; see :func:`tex_escape`).

    Numbers are rounded to ``digits`` in siunitx ``S`` columns, aligned on the decimal point
    (their header, and a cell that is not a number, in braces, which ``S`` prints as text);
    text is escaped.

    Parameters
    ----------
    caption
        Text (escaped).
    label
        The ``\\label`` key, written as it is: letters, digits and ``. : _ -`` only
        (ValueError otherwise).
    long
        Write a ``longtable`` (needs ``\\usepackage{longtable}``), which breaks across pages
        and repeats its header, instead of a ``table`` float.
    wrap
        Text columns to wrap, each with its width as a fraction of ``\\linewidth``
        (ragged-right paragraph columns; need ``\\usepackage{array}``).
    setup
        TeX run before the table inside its float or group, e.g.
        ``"\\footnotesize\\setlength{\\tabcolsep}{3pt}"`` (a float resets the font size, so
        it must go inside).
    siunitx
        ``False``: right-aligned ``r`` number columns, for a document without siunitx.
    stack_headers
        Break a header wider than its column's cells after its ``_`` and spaces, onto as
        many lines as its longest piece needs (:func:`header_lines`): a wide table of short
        numbers under long names then fits the text width.
    """
    long = check_flag(long, "long")
    siunitx = check_flag(siunitx, "siunitx")
    stack_headers = check_flag(stack_headers, "stack_headers")
    if label is not None and not _TEX_LABEL.fullmatch(label):
        # written as is (a label is a key, not text), so nothing that would end the command
        raise ValueError(
            f"label {label!r}: use letters, digits and . : _ - only (e.g. 'tab:summary')"
        )
    numeric = _numeric_columns(df)
    number = "S" if siunitx else "r"
    wrap = dict(wrap or {})
    align = "".join(
        rf">{{\raggedright\arraybackslash}}p{{{wrap[c]:.3f}\linewidth}}"
        if c in wrap
        else (number if n else "l")
        for c, n in zip(df.columns, numeric)
    )
    braced = [siunitx and n and c not in wrap for c, n in zip(df.columns, numeric)]
    cells = [[_cell(v, digits) for v in row] for row in df.itertuples(index=False)]
    heads = [_tex_cell(c, b, header=True) for c, b in zip(df.columns, braced)]
    if stack_headers:
        for j, (c, n) in enumerate(zip(df.columns, numeric)):
            lines = header_lines(str(c), max((len(r[j]) for r in cells), default=0))
            if c not in wrap and len(lines) > 1:
                # its lines in a box on the baseline of the last, aligned as the column
                stacked = r"\\".join(tex_escape(line) for line in lines)
                heads[j] = rf"{{\shortstack[{'r' if n else 'l'}]{{{stacked}}}}}"
    head = " & ".join(heads) + r" \\"
    rows = [" & ".join(_tex_cell(v, b) for v, b in zip(row, braced)) + r" \\" for row in cells]
    top = []
    if caption:
        top.append(rf"\caption{{{tex_escape(caption)}}}")
    if label:
        top.append(rf"\label{{{label}}}")
    if long:
        # caption and label end with \\ in a longtable; the header repeats on every page
        # in a group: the setup ends with the table
        lines = ["{" + setup, rf"\begin{{longtable}}{{{align}}}"]
        if top:
            lines.append("".join(top) + r" \\")
        lines += [r"\toprule", head, r"\midrule", r"\endfirsthead"]
        lines += [r"\toprule", head, r"\midrule", r"\endhead", r"\bottomrule", r"\endfoot"]
        lines += [*rows, r"\end{longtable}", "}"]
    else:
        lines = [r"\begin{table}[htbp]", r"\centering" + setup, *top]
        lines += [rf"\begin{{tabular}}{{{align}}}", r"\toprule", head, r"\midrule"]
        lines += [*rows, r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def to_markdown(df: pd.DataFrame, *, digits: int = 2) -> str:
    """A GitHub-flavoured Markdown table (numbers right-aligned, text through
    :func:`md_escape`, a name that can reorder text isolated by
    :func:`bbt_widget.core.bidi.isolate`)."""
    numeric = _numeric_columns(df)
    header = "| " + " | ".join(md_escape(isolate(c)) for c in df.columns) + " |"
    rule = "|" + "|".join("---:" if n else ":---" for n in numeric) + "|"
    rows = [
        "| " + " | ".join(md_escape(isolate(_cell(v, digits))) for v in row) + " |"
        for row in df.itertuples(index=False)
    ]
    return "\n".join([header, rule, *rows]) + "\n"


def to_html(df: pd.DataFrame, *, digits: int = 3) -> str:
    """An HTML ``<table>`` (numbers right-aligned, text through :func:`html_escape`, a name
    that can reorder text in ``<bdi>``)."""
    numeric = _numeric_columns(df)
    align = ['class="num"' if n else 'class="txt"' for n in numeric]
    head = "".join(f"<th {a}>{html_escape(isolate(c))}</th>" for a, c in zip(align, df.columns))
    rows = [
        "<tr>"
        + "".join(
            f"<td {a}>{html_escape(isolate(_cell(v, digits)))}</td>" for a, v in zip(align, row)
        )
        + "</tr>"
        for row in df.itertuples(index=False)
    ]
    return "\n".join(
        ["<table>", f"<thead><tr>{head}</tr></thead>", "<tbody>", *rows, "</tbody>", "</table>"]
    )


def save_table(
    df: pd.DataFrame,
    path: str | Path,
    *,
    digits: int = 2,
    formula_safe: bool = True,
    **kwargs: Any,
) -> Path:
    """Write a table as ``.tex`` (booktabs), ``.md`` or ``.csv`` chosen by the suffix.

    Parameters
    ----------
    df
        The table.
    path
        The file; its suffix picks the format.
    digits
        Decimals of the numbers in ``.tex`` and ``.md`` (CSV keeps full precision).
    formula_safe
        CSV only: prefix text cells that a spreadsheet would run as a formula (starting with
        ``= + - @``, tab or carriage return) with ``'`` (see :func:`csv_safe`). ``False``
        writes the names exactly as they are.
    **kwargs
        ``caption`` and ``label`` for ``.tex``.
    """
    formula_safe = check_flag(formula_safe, "formula_safe")
    path = Path(path)
    fmt = _table_format(path)
    with atomic_path(path) as tmp:
        _write_table(df, tmp, fmt, digits=digits, formula_safe=formula_safe, **kwargs)
    return path


def _table_format(path: Path) -> str:
    fmt = path.suffix.lstrip(".").lower()
    if fmt not in TABLE_FORMATS:
        raise ValueError(
            f"unknown table format {path.suffix!r} for {path.name!r}; use one of "
            + ", ".join(f".{f}" for f in TABLE_FORMATS)
        )
    return fmt


def _write_table(
    df: pd.DataFrame, path: Path, fmt: str, *, digits: int, formula_safe: bool, **kwargs: Any
) -> None:
    """Write the table in format ``fmt`` to ``path`` (a temporary file of :func:`save_table`)."""
    if fmt == "tex":
        path.write_text(to_latex(df, digits=digits, **kwargs), encoding="utf-8")
    elif fmt == "md":
        path.write_text(to_markdown(df, digits=digits), encoding="utf-8")
    else:
        path.write_text(csv_text(df, formula_safe=formula_safe), encoding="utf-8", newline="")


def csv_text(df: pd.DataFrame, *, formula_safe: bool = True) -> str:
    """The table as the CSV text :func:`save_table` writes: no index, rows ended by CRLF, and
    with ``formula_safe`` the cells a spreadsheet would run as a formula neutralised
    (:func:`csv_safe`)."""
    # CRLF rows (RFC 4180): the csv writer then quotes every cell holding a \r or \n,
    # where with "\n" alone a carriage return in a name would split the row for readers
    out = csv_safe(df) if formula_safe else df
    return str(out.to_csv(index=False, lineterminator="\r\n"))


class ChartRenderError(RuntimeError):
    """vl-convert could not render the charts (the tables and text are unaffected)."""


class ChartRenderWarning(UserWarning):
    """A report was written without its charts (see :class:`ChartRenderError`)."""


# Runs in a child process: vl-convert's V8 aborts the whole process when it cannot reserve
# its memory (``ulimit -v`` on HPC nodes), and a failed child is an error we can report,
# where a failed parent is a core dump. The script imports nothing of this package, and
# drops the working directory from the path so no local file shadows json or base64.
_RENDER_SCRIPT = """
import sys
sys.path = [p for p in sys.path if p not in ("", ".")]
import base64, json
import vl_convert as vlc
if "--warm" in sys.argv:  # started ahead of time: start the JavaScript engine while waiting
    try:
        vlc.vegalite_to_svg({"mark": "point", "data": {"values": [{"x": 1}]}})
    except Exception:
        pass  # the charts asked for next fail the same way, and say why
for line in sys.stdin:  # a batch of charts a line, answered by a line, until stdin closes
    out = []
    for spec, fmt, scale in json.loads(line):
        if fmt == "svg":
            data = vlc.vegalite_to_svg(spec).encode("utf-8")
        elif fmt == "png":
            data = vlc.vegalite_to_png(spec, scale=scale)
        else:
            data = vlc.vegalite_to_pdf(spec)
        out.append(base64.b64encode(data).decode("ascii"))
    sys.stdout.write(json.dumps(out) + "\\n")
    sys.stdout.flush()
"""


def _spec(chart: Any, validate: bool = True) -> dict[str, Any]:
    """The chart's Vega-Lite dict, every axis cutting long labels by code point (see
    :data:`charts.LABEL_AXIS`) unless the chart says otherwise; an Altair chart is checked
    against the Vega-Lite schema unless not ``validate``."""
    spec = dict(chart.to_dict(validate=validate) if hasattr(chart, "to_dict") else chart)
    config = dict(spec.get("config", {}))
    config["axis"] = {**LABEL_AXIS, **config.get("axis", {})}
    spec["config"] = config
    returned: dict[str, Any] = _visible(spec)
    return returned


def _visible(value: Any) -> Any:
    """``value`` (a spec) with control characters in its text shown as escapes
    (:func:`~bbt_widget.core.bidi.visible_controls`): a name holding ESC, BEL, NUL, a
    vertical tab (Excel's line break in a cell) or U+FFFE made the renderer abort, and every
    chart of a report with it."""
    if isinstance(value, str):
        return visible_controls(value)
    if isinstance(value, dict):
        return {_visible(k): _visible(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_visible(v) for v in value]
    return value


def _chart_format(path: Path) -> str:
    fmt = path.suffix.lstrip(".").lower()
    if fmt not in CHART_FORMATS:
        raise ValueError(
            f"unknown chart format {path.suffix!r} for {path.name!r}; use one of "
            + ", ".join(f".{f}" for f in CHART_FORMATS)
        )
    return fmt


def _render_failure(proc: subprocess.CompletedProcess[str]) -> str:
    """What to tell the user when the renderer failed. A limit on virtual memory
    (``ulimit -v``, common on HPC nodes) is blamed only when this process has one: the
    renderer inherits it, and V8 aborts when it cannot reserve its heap."""
    limited = _address_space_limited()
    if proc.returncode < 0:
        try:
            name = signal.Signals(-proc.returncode).name
        except ValueError:
            name = f"signal {-proc.returncode}"
        if limited:
            return (
                f"the chart renderer (vl-convert) was killed by {name}; it needs a few GB "
                "of virtual memory, and this process has a limit on it (`ulimit -v`, "
                "common on HPC nodes): raise or remove the limit to get the charts"
            )
        return (
            f"the chart renderer (vl-convert) was killed by {name}, with no limit on "
            "virtual memory set: the machine may have run out of memory (close other "
            "programs, or report fewer algorithms), or the renderer crashed on these "
            "charts (please report it, with the results' algorithm names)"
        )
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    last = lines[-1] if lines else f"exit code {proc.returncode}"
    out_of_memory = proc.returncode in (133, 134) or "out of memory" in proc.stderr.lower()
    if out_of_memory and limited:
        last += " (this process's virtual memory limit, `ulimit -v`, is the likely cause)"
    return f"the chart renderer (vl-convert) failed: {last}"


def _address_space_limited() -> bool:
    """Whether this process runs under a finite virtual memory limit (RLIMIT_AS)."""
    try:
        import resource
    except ImportError:  # Windows: no such limit
        return False
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return soft != resource.RLIM_INFINITY


#: The renderer process started ahead of time by :func:`prestart_renderer`, for the next
#: :func:`render_charts` of this process.
_prestarted: subprocess.Popen[str] | None = None
_prestarted_lock = threading.Lock()


def _start_renderer(*extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _RENDER_SCRIPT, *extra],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )


def prestart_renderer() -> None:
    """Start the chart renderer's process now, for the next :func:`render_charts` of this
    process: Python, vl-convert and its JavaScript engine (started on a one-point chart)
    then get ready while the caller fits, where the first chart of a fresh renderer waits
    for them (about a second; several on a loaded machine). The ``bbt-widget report``
    command calls it as it starts. Best effort: if it cannot start, rendering starts its own.
    """
    global _prestarted
    with _prestarted_lock:
        if _prestarted is None or _prestarted.poll() is not None:
            with contextlib.suppress(OSError):
                _prestarted = _start_renderer("--warm")


def _take_renderer() -> subprocess.Popen[str]:
    global _prestarted
    with _prestarted_lock:
        proc, _prestarted = _prestarted, None
    return proc if proc is not None else _start_renderer()


def _stop_prestarted() -> None:
    """At exit: a renderer started ahead of time and never used is ended, not left waiting."""
    global _prestarted
    with _prestarted_lock:
        proc, _prestarted = _prestarted, None
    if proc is not None:
        proc.kill()
        proc.communicate()


def _forget_prestarted() -> None:
    """In a forked child: the renderer (its pipes) is the parent's."""
    global _prestarted, _prestarted_lock
    _prestarted, _prestarted_lock = None, threading.Lock()


atexit.register(_stop_prestarted)
if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_forget_prestarted)


def render_charts(
    charts: Sequence[Any], formats: Sequence[str], *, scale: float = 2.0, validate: bool = True
) -> list[bytes]:
    """Render Altair charts (or Vega-Lite dicts) to SVG, PNG or PDF bytes, offline, in one
    child process (the one :func:`prestart_renderer` started, if any). Altair charts are
    checked against the Vega-Lite schema first unless not ``validate`` (the report's own
    charts, which the tests check).

    Raises
    ------
    ChartRenderError
        When vl-convert fails or its process dies (e.g. V8 under ``ulimit -v``); this
        process is unharmed and can still write everything else.
    """
    jobs = [[_spec(c, validate), fmt, scale] for c, fmt in zip(charts, formats, strict=True)]
    renderer = _take_renderer()
    try:
        stdout, stderr = renderer.communicate(json.dumps(jobs) + "\n")
    finally:
        if renderer.poll() is None:  # interrupted: never leave it running
            renderer.kill()
            renderer.communicate()
    proc = subprocess.CompletedProcess(renderer.args, renderer.returncode, stdout, stderr)
    if proc.returncode != 0:
        raise ChartRenderError(_render_failure(proc))
    return [base64.b64decode(data) for data in json.loads(proc.stdout)]


class ChartBatches:
    """Charts rendered in batches by one renderer process (the one :func:`prestart_renderer`
    started, if any): a report renders the charts it has while it waits for the rest (its
    other methods' fits), and then those, without a second renderer's start. Each batch is
    rendered as :func:`render_charts` renders it, the same bytes; batches given from
    several threads are rendered one after the other. :meth:`close` ends the process (also
    after an error); a batch after it raises :class:`ChartRenderError`.
    """

    def __init__(self) -> None:
        self._proc: subprocess.Popen[str] | None = _take_renderer()
        self._lock = threading.Lock()

    def render(
        self,
        charts: Sequence[Any],
        formats: Sequence[str],
        *,
        scale: float = 2.0,
        validate: bool = True,
    ) -> list[bytes]:
        """Render one batch (see :func:`render_charts`).

        Raises
        ------
        ChartRenderError
            When vl-convert fails or its process dies (then every later batch fails too).
        """
        jobs = [[_spec(c, validate), fmt, scale] for c, fmt in zip(charts, formats, strict=True)]
        with self._lock:
            proc = self._proc
            line = ""
            if proc is not None and proc.stdin is not None and proc.stdout is not None:
                with contextlib.suppress(OSError):  # it died: said below, with its stderr
                    proc.stdin.write(json.dumps(jobs) + "\n")
                    proc.stdin.flush()
                    line = proc.stdout.readline()
            if not line:
                self._close_locked()
                raise ChartRenderError(self._failure or "the chart renderer was closed")
        return [base64.b64decode(data) for data in json.loads(line)]

    _failure: str | None = None

    def close(self) -> None:
        """End the renderer (it ends by itself once its input is closed)."""
        with self._lock:
            self._close_locked()

    def _close_locked(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            _, stderr = proc.communicate(timeout=10)
        except (subprocess.TimeoutExpired, OSError, ValueError):
            proc.kill()
            _, stderr = proc.communicate()
        if proc.returncode != 0 and self._failure is None:
            done = subprocess.CompletedProcess(proc.args, proc.returncode, "", stderr or "")
            self._failure = _render_failure(done)


def save_chart(chart: Any, path: str | Path, *, scale: float = 2.0) -> Path:
    """Write an Altair chart as SVG, PNG or PDF (by suffix) with vl-convert: no browser,
    no network (rendered in a child process, see :func:`render_charts`)."""
    path = Path(path)
    (data,) = render_charts([chart], [_chart_format(path)], scale=scale)
    return atomic_write_bytes(path, data)


def save_posterior(result: BBTResult, path: str | Path) -> Path:
    """Write the ArviZ InferenceData (posterior, predictive, log-likelihood, observed data,
    sample stats) to netCDF."""
    path = Path(path)
    with atomic_path(path) as tmp:
        result.idata.to_netcdf(str(tmp))
    return path


def export_all(
    result: BBTResult,
    folder: str | Path,
    *,
    formats: Sequence[str] = TABLE_FORMATS,
    rope: Sequence[float] = DEFAULT_ROPE,
    hdi: float = DEFAULT_HDI,
    formula_safe: bool = True,
) -> list[Path]:
    """Write the summary, ranking and win tables in every format, and the posterior.

    ``formula_safe`` is passed to :func:`save_table`: by default CSV cells that a
    spreadsheet would run as a formula start with ``'``.
    """
    # before anything is written: no half-written folder for a bad argument
    formula_safe = check_flag(formula_safe, "formula_safe")
    unknown = [f for f in formats if f not in TABLE_FORMATS]
    if unknown:
        raise ValueError(
            f"unknown table format {unknown[0]!r}; use any of {', '.join(TABLE_FORMATS)}"
        )
    folder = Path(folder)
    tables = {
        "summary": result.summary(rope=rope, hdi=hdi),
        "ranking": result.ranking(hdi=hdi),
        "win_table": result.win_table,
    }
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    try:
        # every file is written under a temporary name first and all are renamed into place
        # at the end: a failure (a full disk) leaves the old files, none half-replaced
        with contextlib.ExitStack() as stack:
            for name, df in tables.items():
                for fmt in formats:
                    path = folder / f"{name}.{fmt}"
                    tmp = stack.enter_context(atomic_path(path))
                    _write_table(df, tmp, fmt, digits=2, formula_safe=formula_safe)
                    written.append(path)
            path = folder / "posterior.nc"
            result.idata.to_netcdf(str(stack.enter_context(atomic_path(path))))
            written.append(path)
    except BaseException:
        if created:  # a folder made for this call is not left behind empty
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    return written
