"""A standalone, offline report of one fit: HTML (charts inlined as SVG), Markdown or LaTeX.

Every format has the same layout, the answer first: under the diagnostics line, the result
in one sentence (:func:`bbt_widget.outputs.headline.headline`), the ranking chart, the counts
of claims and the pair x pair decision matrix; then the methods paragraph, the data audit,
the optional sections, the detailed charts, the tables, one definition of every table column
and, last, the provenance (seed, input, date, versions, the command that reproduces the
report).

Charts are rendered by vl-convert (in a child process), so the HTML file needs no
JavaScript, no CDN and no network to open; Markdown and LaTeX reports write their figures
(SVG / PDF) into a folder of their own beside the report (``<name>_md_figures``,
``<name>_tex_figures``), so the two never overwrite each other. The LaTeX report is a
complete ``article`` that compiles with ``pdflatex``.

Each format's text comes from its Jinja2 template (``templates/report.html``, ``.md``,
``.tex``, package data); this module gathers the content, renders the charts and writes the
files. User text goes through the format's escaper (:data:`.escape.ESCAPERS`) as the
templates' ``esc`` filter, and the HTML template autoescapes whatever it does not filter.
"""

from __future__ import annotations

import contextlib
import functools
import queue
import re
import threading
import urllib.parse
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import altair as alt
import jinja2
import pandas as pd
from markupsafe import Markup

from ...charts.encodings import at_rest
from ...charts.frames import build_frames
from ...charts.frames_decisions import claim_counts, decision_frame
from ...charts.frames_ppc import ppc_fit_frame, worst_pairs_label, worst_ppc_frame
from ...charts.specs import intervals_chart, rope_overlap_chart, win_matrix_chart
from ...charts.specs_cd import fit_cd_diagram
from ...charts.specs_ppc import static_ppc_chart
from ...charts.specs_summary import (
    LONG_CHART_ROWS,
    decision_matrix_chart,
    ranking_chart,
    with_top_axis,
)
from ...core.options import (
    DEFAULT_HDI,
    DEFAULT_INTERPRETATION,
    DEFAULT_ROPE,
    DEFAULT_TITLE,
    Rule,
    RuleChoice,
    resolve_interpretation,
)
from ...core.validation import check_algorithms
from ...core.wintable import count_wins, with_raw_counts
from .. import export
from .._atomic import atomic_path, atomic_replace_dir
from ..citations import Reference, bibtex, references
from ..escape import html_escape, md_escape, tex_escape
from ..headline import headline
from ..methods_text import (
    REPORT_FORMATS,
    bib_path,
    check_report_paths,
    figures_folder,
    mark_near,
    methods_text,
    paragraphs,
    render,
    tables_folder,
)
from ..tex_chars import REPLACED_MARK
from ._meta import check_provenance, column_definitions, provenance_items
from ._scores import scores_section
from ._sections import Section
from ._sections import Table as _Table

if TYPE_CHECKING:
    from ...core.result import BBTResult

#: How many of the worst-fitting pairs the PPC figure and table show.
PPC_WORST_PAIRS = 12
#: LaTeX tables longer than this are longtables, which break across pages.
_TEX_LONG_ROWS = 35
#: Text columns with a longer cell wrap in LaTeX; together they take this share of the
#: line width (the rest is left for the short columns beside them).
_TEX_WRAP_CHARS = 24
_TEX_WRAP_SHARE = 0.65
#: Columns LaTeX tables leave out to fit the text width, by table key: the summary's ``pair``
#: repeats alg_a and alg_b and its ``median`` is close to ``mean``; the effect sizes' ``mean``
#: is the summary's, and the counts of data sets are the audit's. The HTML and Markdown
#: reports and the CSV tables have them.
_TEX_DROPPED = {
    "pairs": ("pair", "median"),
    "scores": ("n_datasets",),
    "effect-sizes": ("mean", "n_common"),
}
#: A LaTeX table whose unwrapped columns hold more characters than this (each column's
#: longest cell or header) is set in script size, not footnote size.
_TEX_SMALL_CHARS = 66


@dataclass(frozen=True)
class _Content:
    """Everything a format's template puts in the report: user text not yet escaped (the
    template escapes it for its format), the methods paragraph already in that format."""

    title: str
    headline: str
    provenance: list[tuple[str, str]]
    diagnostics_ok: bool
    diagnostics: str
    notes: list[str]
    counts: _Table
    methods: str
    audit: _Table | None
    figures: dict[str, str] | dict[str, bytes] | str
    tables: list[_Table]
    columns: list[tuple[str, str]]
    sections: list[Section]
    references: list[Reference]
    #: Where the tables are as CSV, in a sentence ("" for none).
    tables_note: str = ""


def _figure_captions(hdi: float, interpretation: Rule, ppc_label: str) -> dict[str, str]:
    return {
        "ranking": (
            f"Ranking, best first: posterior mean ability (dot) with its {hdi:.0%} HDI (bar), "
            "centred per draw on the mean ability (sum-to-zero, paper Sec. 4; 0 is the "
            "average algorithm), the probability of being the best and the expected rank."
        ),
        "cd_diagram": (
            f"Critical-difference diagram of the {interpretation} decisions: each algorithm at "
            "its expected rank (1 = best); a bar joins algorithms with no 'better' claim "
            "between any two of them (Demšar's diagram, drawn from BBT's claims instead of a "
            "post-hoc test)."
        ),
        "decisions": (
            "Decision per pair under the weak (left) and the strong (right) interpretation: "
            "the cell in row r and column c says whether r is claimed better than c, worse, "
            "practically equivalent, or neither."
        ),
        "intervals": (
            f"P(a > b) per pair: median (dot), {hdi:.0%} HDI (thick bar), full range (thin "
            f"line); the grey band is the ROPE; colour: the {interpretation} decision "
            "(paper Fig. 1 and 3)."
        ),
        "rope_overlap": "Posterior mass of P(a > b) below, inside and above the ROPE.",
        "ppc": (
            f"Posterior predictive check of {ppc_label}: the worst fit is the observed win "
            "count least likely under the model (smallest p_tail); replicated win counts over "
            "the posterior draws, observed count in black (paper Fig. 2)."
        ),
        "win_matrix": (
            "The win/loss/tie counts given to the model, after the tie policy: wins of the "
            "row over the column (the raw counts are in the win/loss table)."
        ),
    }


_HEADLINE_FIGURES = ("ranking", "cd_diagram", "decisions")
_DETAIL_FIGURES = ("intervals", "rope_overlap", "ppc", "win_matrix")


def _chart_builders(
    result: BBTResult,
    rope: tuple[float, float],
    hdi: float,
    control: str | None,
    interpretation: Rule,
    ranking: pd.DataFrame,
    summary: pd.DataFrame,
    highlight: Sequence[str] = (),
) -> tuple[dict[str, Callable[[], Any]], pd.DataFrame, str]:
    """The report's charts by name in the report's order, each built when its function is
    called (so that one chart can be rendered while the next is built): static titles,
    nothing to click, long ones with an x axis at the top as well. Also the PPC fit of the
    pairs its figure shows, and their label (the report's tables need them either way)."""
    frames = build_frames(
        result, rope=rope, hdi=hdi, control=control, interpretation=interpretation
    )
    order = list(ranking["algorithm"])
    long = len(frames.intervals) > LONG_CHART_ROWS

    def intervals() -> Any:
        chart = intervals_chart(frames.intervals, frames.rope, hdi=hdi)
        if long:
            chart = with_top_axis(chart, domain=[0, 1], title="P(a > b)")
        # set on the chart just built, not by .properties(), which would copy it whole again
        chart.title = alt.TitleParams(
            f"P(a > b): median, {hdi:.0%} HDI, full range",
            subtitle=f"grey band: ROPE; pairs best > worse; colour: {interpretation} decision",
            anchor="start",
        )
        return at_rest(chart)

    def overlap() -> Any:
        chart = rope_overlap_chart(frames.overlap)
        if long:
            chart = with_top_axis(chart, domain=[0, 1], title="posterior mass", fmt="%")
        return at_rest(chart)

    # the PPC frame holds the histogram's columns: no second pass over the replicates
    fit = ppc_fit_frame(frames.ppc)
    worst = worst_ppc_frame(frames.ppc, fit, PPC_WORST_PAIRS)
    shown = set(zip(worst["alg_a"], worst["alg_b"]))
    fit = fit[[p in shown for p in zip(fit["alg1"], fit["alg2"])]].reset_index(drop=True)
    label = worst_pairs_label(len(shown), frames.ppc["key"].nunique())
    counts = claim_counts(summary)
    builders: dict[str, Callable[[], Any]] = {
        "ranking": lambda: ranking_chart(ranking, hdi=hdi),
        "cd_diagram": lambda: fit_cd_diagram(
            result, interpretation, highlight=highlight, rope=rope, hdi=hdi
        ),
        "decisions": lambda: decision_matrix_chart(
            decision_frame(summary, order), counts, clickable=False
        ),
        "intervals": intervals,
        "rope_overlap": overlap,
        "ppc": lambda: static_ppc_chart(worst, label),
        "win_matrix": lambda: at_rest(win_matrix_chart(frames.matrix)),
    }
    assert tuple(builders) == _HEADLINE_FIGURES + _DETAIL_FIGURES
    return builders, fit, label


@dataclass(frozen=True)
class ChartsAhead:
    """The charts every report has (:data:`_HEADLINE_FIGURES`, :data:`_DETAIL_FIGURES`),
    built, and being rendered in a thread while the report's sections are still to come
    (see :func:`start_charts`): ``key`` says for which options, ``built`` holds the charts
    by name, ``fit`` and ``label`` the PPC table and its label, ``rendered`` their bytes to
    come, and ``batches`` the renderer that renders them and then the sections' charts."""

    key: tuple[Any, ...]
    built: dict[str, Any]
    fit: pd.DataFrame
    label: str
    batches: export.ChartBatches
    rendered: Future[list[bytes]]


def _chart_options(
    result: BBTResult,
    path: str | Path,
    rope: Sequence[float],
    hdi: float,
    interpretation: RuleChoice,
    control: str | None,
    highlight: str | Sequence[str] | None,
) -> tuple[str, list[str], Rule, tuple[float, float], pd.DataFrame, pd.DataFrame]:
    """What the report's charts are drawn from: the format, the highlighted algorithms, the
    rule, the ROPE, the summary and the ranking (checked as :func:`write_report` says)."""
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    if fmt not in REPORT_FORMATS:
        raise ValueError(
            f"unknown report format {path.suffix!r} for {path.name!r}; use .html, .md or .tex"
        )
    shown = [] if highlight is None else check_algorithms(highlight, result.algorithms, "highlight")
    rule = resolve_interpretation(interpretation, len(result.algorithms)).rule
    rope = (float(rope[0]), float(rope[1]))
    summary = result.summary(rope=rope, hdi=hdi, control=control)
    return fmt, shown, rule, rope, summary, result.ranking(hdi=hdi)


def start_charts(
    result: BBTResult,
    path: str | Path,
    *,
    rope: Sequence[float] = DEFAULT_ROPE,
    hdi: float = DEFAULT_HDI,
    interpretation: RuleChoice = DEFAULT_INTERPRETATION,
    control: str | None = None,
    highlight: str | Sequence[str] | None = None,
) -> ChartsAhead:
    """Build the charts every report of ``result`` has and render them in a thread as they
    are built (the first is drawn while the next is built), for :func:`write_report` with
    the same arguments (``charts_ahead=``): a report whose sections wait for other fits (the
    ranking models) renders them meanwhile. The renderer is the one
    :func:`export.prestart_renderer` started, if any."""
    fmt, shown, rule, rope, summary, ranking = _chart_options(
        result, path, rope, hdi, interpretation, control, highlight
    )
    builders, fit, label = _chart_builders(
        result, rope, hdi, control, rule, ranking, summary, shown
    )
    suffix = _SUFFIX[fmt]
    batches = export.ChartBatches()
    specs: queue.SimpleQueue[dict[str, Any] | None] = queue.SimpleQueue()
    rendered: Future[list[bytes]] = Future()

    def render() -> None:
        rendered.set_running_or_notify_cancel()
        out: list[bytes] = []
        try:
            while (spec := specs.get()) is not None:
                out += batches.render([spec], [suffix])
            if len(out) != len(builders):  # building stopped early: its error is raised
                raise export.ChartRenderError("the report's charts were not all built")
            rendered.set_result(out)
        except BaseException as err:  # raised where write_report waits for them
            rendered.set_exception(err)

    threading.Thread(target=render, name="bbt-widget-charts", daemon=True).start()
    built: dict[str, Any] = {}
    try:
        for name, build in builders.items():
            built[name] = build()
            # to Vega-Lite here, not in the thread: Altair in one thread (not validated:
            # see _VALIDATE)
            specs.put(built[name].to_dict(validate=_VALIDATE))
    except BaseException:
        batches.close()
        raise
    finally:
        specs.put(None)
    key = (fmt, rope, hdi, control, rule, tuple(shown))
    return ChartsAhead(key, built, fit, label, batches, rendered)


#: Whether the report checks its charts against the Vega-Lite schema as it renders them. It
#: does not: they are the package's own, which the tests check (``tests/stan/
#: test_report_ahead.py`` validates every chart of a report), and validating them again at
#: every report would cost about as much CPU as the rest of turning them into Vega-Lite (the
#: figures are on the documentation's performance page).
_VALIDATE = False
#: The figures' file type per report format.
_SUFFIX = {"html": "svg", "md": "svg", "tex": "pdf"}


def write_report(
    result: BBTResult,
    path: str | Path,
    *,
    rope: Sequence[float] = DEFAULT_ROPE,
    hdi: float = DEFAULT_HDI,
    interpretation: RuleChoice = DEFAULT_INTERPRETATION,
    control: str | None = None,
    title: str = DEFAULT_TITLE,
    provenance: Mapping[str, str] | None = None,
    sections: Sequence[Section] = (),
    highlight: str | Sequence[str] | None = None,
    charts_ahead: ChartsAhead | None = None,
) -> Path:
    """Write the report; the format follows the suffix (``.html``, ``.md``, ``.tex``).

    The report (and its figures folder) is written under a temporary name and renamed into
    place when complete: when writing fails (a full disk), the old report and figures are
    left as they were and no partial file remains. Nothing is written through a symbolic
    link, and a figures or tables folder is replaced only when it holds nothing but what an
    earlier report wrote there (:func:`~bbt_widget.outputs.methods_text.check_report_paths`,
    checked first; :class:`~bbt_widget.outputs._atomic.OutputConflictError` otherwise).

    Every name and title goes through the format's escaper (:data:`.escape.ESCAPERS`), so
    it prints literally and no HTML in it runs. When the charts cannot be rendered (see
    :func:`export.render_charts`), the report is written without them, says why, and a
    :class:`export.ChartRenderWarning` is issued.

    Parameters
    ----------
    result
        The fit.
    path
        The report file; ``.md`` and ``.tex`` reports write their figures into
        ``<stem>_md_figures/`` and ``<stem>_tex_figures/`` beside it, and every report its
        tables as CSV into ``<stem>_<format>_tables/`` (``r.html``: ``r_html_tables/``; see
        :func:`~bbt_widget.outputs.methods_text.tables_folder`).
    rope, hdi, control
        As for :meth:`BBTResult.summary`.
    interpretation
        The decision rule the claims follow: ``"auto"`` (strong with more than
        :data:`~bbt_widget.core.options.MANY_ALGORITHMS` algorithms, weak otherwise; see
        :func:`~bbt_widget.core.options.resolve_interpretation`), ``"weak"`` or ``"strong"``.
    title
        The report's title.
    provenance
        What the caller knows about how the report was made: ``"command"`` (the exact
        command line that reproduces it; the CLI passes its own) and ``"input"`` (the input
        file). Without them the report records the Python calls that reproduce it and that
        the data came from Python. The seed, the date and the versions are always recorded.
    sections
        Optional sections after the audit, from :mod:`bbt_widget.outputs.report_sections`
        (robustness: sweep and influence; ranking models; pairwise tests). Their sentences
        are added to the methods paragraph, their columns to the definitions.
    highlight
        Algorithms drawn in their own colour in the headline's critical-difference diagram
        (e.g. the methods a paper proposes).
    charts_ahead
        The report's charts built and being rendered already (:func:`start_charts` with the
        same arguments); they are used, and their renderer then renders the sections'
        charts. Built anew when they were drawn for other options.
    """
    path = Path(path)
    check_report_paths(path)  # before the charts are rendered
    given = check_provenance(provenance)
    fmt, highlight, rule, rope, summary, ranking = _chart_options(
        result, path, rope, hdi, interpretation, control, highlight
    )
    ahead = charts_ahead
    if ahead is not None and ahead.key != (fmt, rope, hdi, control, rule, tuple(highlight)):
        ahead.batches.close()
        ahead = None
    if ahead is None:
        builders, fit, ppc_label = _chart_builders(
            result, rope, hdi, control, rule, ranking, summary, highlight
        )
        built = {name: build() for name, build in builders.items()}
    else:
        built, fit, ppc_label = dict(ahead.built), ahead.fit, ahead.label
    sentence = headline(summary, ranking, rule)
    counts = _Table("claims", "Claims per interpretation", claim_counts(summary))
    # the scores beside the claims: the first section (none for a fit of a win table)
    scores = scores_section(
        result, summary, list(ranking["algorithm"]), rule=rule, rope=rope, hdi=hdi
    )
    sections = ([scores] if scores is not None else []) + list(sections)
    tables = [
        _Table("ranking", "Ranking (abilities centred per draw, sum-to-zero)", ranking),
        _Table("pairs", "P(a > b) per pair", summary),
        _Table("ppc", "Posterior predictive check: HDI coverage", result.ppc_table()),
        _Table(
            "ppc-worst",
            f"Posterior predictive check: {ppc_label}",
            fit,
        ),
        _Table(
            "wins",
            "Win/loss table: the raw counts and the counts given to the model",
            _win_counts(result),
        ),
    ]
    findings = result.audit.to_frame()
    audit = _Table("audit", "Findings of the data audit", findings) if len(findings) else None
    # every table as CSV, whole (the per-pair table with the columns LaTeX leaves out)
    csv_tables = [counts, *([audit] if audit else []), *(t for s in sections for t in s.tables)]
    csv_tables += tables
    if fmt == "tex":  # the columns LaTeX leaves out
        tables = [_tex_fit(t) for t in tables]
        sections = [replace(s, tables=[_tex_fit(t) for t in s.tables]) for s in sections]

    # the claims near their threshold marked in the cells printed (the CSV keep the
    # decisions); only this fit's claims tables (a further metric's have their own fit)
    def marked(t: _Table) -> _Table:
        if t.key not in ("pairs", "effect-sizes"):
            return t
        return replace(t, shown=mark_near(t.printed, summary, rule, rope))

    tables = [marked(t) for t in tables]
    sections = [replace(s, tables=[marked(t) for t in s.tables]) for s in sections]
    cited = [part for sec in sections for part in sec.cites]
    frames = [counts.frame] + [t.frame for t in tables] + ([findings] if audit else [])
    frames += [t.frame for sec in sections for t in sec.tables]
    suffix = _SUFFIX[fmt]
    names = list(_HEADLINE_FIGURES + _DETAIL_FIGURES)
    for sec in sections:
        built.update({name: chart for name, (chart, _) in sec.charts.items()})
        names += list(sec.charts)
    try:
        if ahead is None:
            rendered = export.render_charts(
                [built[n] for n in names], [suffix] * len(names), validate=_VALIDATE
            )
        else:  # the report's own charts, then the sections' in the same renderer
            more = names[len(_HEADLINE_FIGURES + _DETAIL_FIGURES) :]
            rendered = ahead.rendered.result()
            rendered += ahead.batches.render(
                [built[n] for n in more], [suffix] * len(more), validate=_VALIDATE
            )
        figures: dict[str, bytes] | dict[str, str] | str = dict(zip(names, rendered))
    except export.ChartRenderError as err:
        warnings.warn(f"could not render charts: {err}", export.ChartRenderWarning, stacklevel=2)
        figures = f"Charts could not be rendered: {err}."
    finally:
        if ahead is not None:
            ahead.batches.close()
    figure_files: dict[str, bytes] = {}  # file name in the figures folder -> content
    if fmt != "html" and isinstance(figures, dict):
        folder = figures_folder(path)
        assert folder is not None, fmt  # .md and .tex reports have a figures folder
        figure_files = {f"{name}.{suffix}": cast(bytes, data) for name, data in figures.items()}
        figures = {
            name: (folder / f"{name}.{suffix}").relative_to(path.parent).as_posix()
            for name in figures
        }
    diag = result.diagnostics()
    content = _Content(
        title=title,
        headline=sentence,
        provenance=provenance_items(
            result,
            path.name,
            given,
            rope=rope,
            hdi=hdi,
            interpretation=interpretation,
            control=control,
        ),
        diagnostics_ok=diag.ok,
        diagnostics=str(diag),
        notes=[result.disconnected_note[0].upper() + result.disconnected_note[1:] + "."]
        if result.disconnected_note
        else [],
        counts=counts,
        # one paragraph per method: BBT's (and its results), then each other method's
        methods=paragraphs(
            [
                methods_text(result, format=fmt, interpretation=interpretation, rope=rope, hdi=hdi),
                *(render(sec.methods, fmt) for sec in sections if sec.methods),
            ],
            fmt,
        ),
        audit=audit,
        figures=figures,
        tables=tables,
        columns=column_definitions([c for f in frames for c in f.columns], hdi=hdi, rope=rope),
        sections=sections,
        references=references(result, cited),
        tables_note=(
            f"Every table of this report is also written as CSV in {tables_folder(path).name}/ "
            "beside it (one file per table, named after its key, at full precision)."
        ),
    )
    captions = _figure_captions(hdi, rule, ppc_label)
    captions.update({n: cap for sec in sections for n, (_, cap) in sec.charts.items()})
    extra = {bib_path(path): bibtex(result, cited).encode("utf-8")} if fmt == "tex" else {}
    _write(path, _render(fmt, content, captions), figure_files, extra, csv_tables)
    return path


def _csv_names(tables: Sequence[_Table]) -> dict[str, pd.DataFrame]:
    """Each table's CSV file name: its key (letters, digits, ``-`` and ``_`` kept, anything
    else ``_``), numbered when two keys would give one name."""
    out: dict[str, pd.DataFrame] = {}
    for t in tables:
        stem = re.sub(r"[^A-Za-z0-9_-]", "_", t.key).strip("_-") or "table"
        name, k = f"{stem}.csv", 2
        while name in out:
            name, k = f"{stem}-{k}.csv", k + 1
        out[name] = t.frame
    return out


def _win_counts(result: BBTResult) -> pd.DataFrame:
    """The fitted win table with the raw counts beside the model's (``raw_win1, raw_win2,
    raw_ties``, before the tie policy); a win table given as data has only its own counts."""
    if result.tidy is None:
        return result.win_table
    s = result.settings
    paired = True if s.get("paired") is None else bool(s["paired"])
    raw = count_wins(
        result.tidy, d_min=s.get("d_min"), paired=paired, tie_threshold=s.get("tie_threshold")
    )
    return with_raw_counts(result.win_table, raw)


def _write(
    path: Path,
    text: str,
    figure_files: Mapping[str, bytes],
    extra: Mapping[Path, bytes] | None = None,
    tables: Sequence[_Table] = (),
) -> None:
    """Write the report, its figures folder, its tables as CSV (:func:`tables_folder`, one file
    per table, cells a spreadsheet would run as a formula neutralised by
    :func:`export.save_table`) and ``extra`` files beside it (the ``.bib`` of a LaTeX report)
    whole, or leave the old ones as they were.

    All are written under temporary names first; then each folder replaces the old one as a
    whole (no stale figure or table survives; an old folder holding anything but what an
    earlier report wrote is refused) and each file replaces its old version (a symbolic link
    is refused, never followed).
    """
    folder = figures_folder(path)
    with contextlib.ExitStack() as stack:
        for other, data in (extra or {}).items():
            stack.enter_context(atomic_path(other)).write_bytes(data)
        report = stack.enter_context(atomic_path(path))
        if figure_files and folder is not None:
            new_folder = stack.enter_context(atomic_replace_dir(folder))
            for name, data in figure_files.items():
                (new_folder / name).write_bytes(data)
        if tables:
            new_tables = stack.enter_context(atomic_replace_dir(tables_folder(path)))
            for name, frame in _csv_names(tables).items():
                export.save_table(frame, new_tables / name)
        report.write_text(text, encoding="utf-8")


# --------------------------------------------------------------------------- LaTeX


def _tex_breakable(text: str) -> str:
    """Escaped text in which a long path or command may break after ``/`` and ``=``."""
    out = tex_escape(text)
    return out.replace("/", "/\\allowbreak{}").replace("=", "=\\allowbreak{}")


def _tex_fit(t: _Table) -> _Table:
    """``t`` without the columns LaTeX leaves out (:data:`_TEX_DROPPED`; a key ending in
    ``-<key>``, a metric's table of a report of several metrics, as ``<key>``)."""
    kind = next((k for k in _TEX_DROPPED if t.key == k or t.key.endswith(f"-{k}")), "")
    dropped = [c for c in _TEX_DROPPED.get(kind, ()) if c in t.frame.columns]
    if not dropped:
        return t
    shown = None if t.shown is None else t.shown.drop(columns=dropped)
    return replace(t, frame=t.frame.drop(columns=dropped), shown=shown)


def _tex_table(t: _Table) -> str:
    """A booktabs table with caption and label; a longtable when it is long. Small type and
    narrow column gaps keep the wide per-pair table inside an article's text width; a table
    wider still (:data:`_TEX_SMALL_CHARS`) has its long headers on several lines
    (:func:`export.header_lines`) and is set smaller again when it is wide even so."""
    frame = t.printed
    numeric = frame.select_dtypes("number").columns
    digits = 2 if t.digits is None else t.digits
    cells = {  # the longest cell of each column, as the table prints it
        c: max(
            [len(f"{v:.{digits}f}" if isinstance(v, float) else str(v)) for v in frame[c]],
            default=0,
        )
        for c in frame.columns
    }
    flat = {c: max(n, len(str(c))) for c, n in cells.items()}
    long_text = [c for c in frame.columns if c not in numeric and flat[c] > _TEX_WRAP_CHARS]
    # wrapped columns take their share of the line whatever they hold: the others count
    rest = [c for c in frame.columns if c not in long_text]
    stack = sum(flat[c] for c in rest) > _TEX_SMALL_CHARS
    if stack:
        flat = {c: max(n, *map(len, export.header_lines(str(c), n))) for c, n in cells.items()}
    wide = sum(flat[c] for c in rest) > _TEX_SMALL_CHARS
    size = (
        "\\scriptsize\\setlength{\\tabcolsep}{2pt}"
        if wide
        else "\\footnotesize\\setlength{\\tabcolsep}{3pt}"
    )
    return export.to_latex(
        frame,
        digits=digits,
        caption=t.heading,
        label=f"tab:bbt-{t.key}",
        long=len(frame) > _TEX_LONG_ROWS,
        wrap={c: _TEX_WRAP_SHARE / len(long_text) for c in long_text},
        setup=size,
        stack_headers=stack,
    )


#: Said once in a LaTeX report in which :func:`.escape.tex_escape` replaced characters.
_TEX_REPLACED_NOTE = (
    "Characters that the fonts of this LaTeX report cannot print (for example Cyrillic, "
    "Chinese or emoji in names) are written as [U+XXXX], their Unicode code point; the HTML "
    "and Markdown reports show them as they are."
)


def _render(fmt: str, c: _Content, captions: dict[str, str]) -> str:
    """The report's text in ``fmt`` from its template (``templates/report.<fmt>``)."""
    figures: Mapping[str, object] = {}
    if isinstance(c.figures, dict):
        figures = c.figures
        if fmt == "html":  # the SVG goes in as it is: markup, not text to escape
            figures = {n: Markup(cast(bytes, svg).decode("utf-8")) for n, svg in figures.items()}
    context = {
        "c": c,
        "captions": captions,
        "figures": figures,
        "charts_failed": isinstance(c.figures, str),
        "headline_figures": _HEADLINE_FIGURES,
        "detail_figures": _DETAIL_FIGURES,
        "replaced_note": "",
    }
    template = _template(fmt)
    text = template.render(context)
    if fmt == "tex" and REPLACED_MARK in text:
        # characters were replaced: say once, at the top, what [U+XXXX] means
        text = template.render(context | {"replaced_note": _TEX_REPLACED_NOTE})
    return text


@functools.cache
def _template(fmt: str) -> jinja2.Template:
    """The report template of ``fmt`` (package data), with the format's escaper as the ``esc``
    filter (and function) and its table writer as a filter. Autoescaping is on for HTML, so a
    value a template does not pass through ``esc`` is still escaped."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("bbt_widget.outputs.report", "templates"),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html",), default=False),
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    esc: Callable[..., str]
    if fmt == "html":

        def esc(text: object, *, tags: bool = True) -> str:
            return Markup(html_escape(text, tags=tags))

        env.filters["html_table"] = lambda t: Markup(
            export.to_html(t.printed, digits=3 if t.digits is None else t.digits)
        )
    elif fmt == "md":
        esc = md_escape
        env.filters["md_table"] = lambda t: export.to_markdown(
            t.printed, digits=3 if t.digits is None else t.digits
        )
        env.filters["quote"] = urllib.parse.quote
    else:
        esc = tex_escape
        env.filters["tex_table"] = _tex_table
        env.filters["breakable"] = env.globals["breakable"] = _tex_breakable
    env.filters["esc"] = env.globals["esc"] = esc
    return env.get_template(f"report.{fmt}")
