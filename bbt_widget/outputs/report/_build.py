"""The whole report, as ``bbt-widget report`` writes it, from Python or the command line.

:func:`write` checks its options once (:class:`~._request.ReportRequest`), fits the results
when given data, checks the optional sections (robustness, the other methods) against the
data before any fit, runs them (:mod:`._optional`) and writes the report with
:func:`bbt_widget.outputs.report_render.write_report`. The command line does exactly this,
so the same data, options and seed give the same report either way.
"""

from __future__ import annotations

import contextlib
import inspect
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ...core.data import as_tidy
from ...core.options import (
    DEFAULT_HDI,
    DEFAULT_INTERPRETATION,
    DEFAULT_ROPE,
    DEFAULT_TITLE,
    Rule,
    RuleChoice,
)
from ...core.tidy import LAYOUT_KEYS, TidyResults
from ._methods import OTHER_METHODS, check_methods, methods_from, read_layout
from ._optional import SAMPLER, SAMPLER_DEFAULTS, optional_sections, start_methods
from ._request import ReportRequest
from ._side_fits import SideFit

# the report writer and its sections (Altair) are imported where used: the command line
# checks its options with this module before the fit and imports those meanwhile
if TYPE_CHECKING:
    from ...core.draws import ProgressCallback
    from ...core.result import BBTResult
    from ...lab.metrics import MetricsResult
    from ._render import ChartsAhead
    from ._sections import Section

__all__ = ["OTHER_METHODS", "ReportRequest", "report_of_fit", "write", "write_metrics"]


def write_metrics(
    compared: MetricsResult,
    path: str | Path,
    *,
    rope: Sequence[float] = DEFAULT_ROPE,
    hdi: float = DEFAULT_HDI,
    interpretation: RuleChoice = DEFAULT_INTERPRETATION,
    control: str | None = None,
    title: str | None = None,
    provenance: Mapping[str, str] | None = None,
    highlight: str | Sequence[str] | None = None,
) -> Path:
    """The report of several metrics (:func:`bbt_widget.compare_metrics`): the title names the
    Pareto set, the body is the first metric's fit, then a section with the dominance across
    metrics (summary, relations, rankings side by side) and a section per further metric.

    ``highlight`` draws these algorithms in their own colour in the body's critical-difference
    diagram, as in the report of one metric.

    Raises
    ------
    ValueError
        When the first metric's fit failed (there is no body to write).
    """
    from . import _sections as rs
    from ._render import write_report
    from ._scores import scores_section

    first = compared.metrics[0]
    if first not in compared.results:
        raise ValueError(
            f"the fit of the first metric {first!r} failed ({compared.errors.get(first)}); "
            "put a metric whose fit succeeded first"
        )
    rule = compared.rule(interpretation)
    rope = (float(rope[0]), float(rope[1]))
    front = compared.pareto(rule, rope, hdi)
    shown = ", ".join(front[:5]) + (f" and {len(front) - 5} more" if len(front) > 5 else "")
    sections = [rs.metrics_section(compared, rule, rope, hdi)]
    for k, m in enumerate(compared.metrics):
        if k > 0 and m in compared.results:  # each metric's section, then its scores
            res = compared.results[m]
            sections.append(rs.metric_section(m, k, res, rule, rope, hdi))
            summary = res.summary(rope=rope, hdi=hdi)
            order = list(res.ranking(hdi=hdi)["algorithm"])
            scores = scores_section(
                res, summary, order, rule=rule, rope=rope, hdi=hdi, prefix=f"metric-{k}-"
            )
            sections += [scores] if scores is not None else []
    if compared.seed is not None:  # the user's seed, not the first metric's spawned one
        provenance = {**(provenance or {}), "seed": _metrics_seed(compared)}
    if compared.groups:
        from ._groups import metrics_group_sections

        sections[1:1] = metrics_group_sections(compared, rule, rope, hdi)
    return write_report(
        compared.results[first],
        path,
        rope=rope,
        hdi=hdi,
        interpretation=interpretation,
        control=control,
        title=title
        or f"Bayesian Bradley-Terry comparison on {', '.join(compared.metrics)}: Pareto set "
        f"{shown} ({rule} rule)",
        provenance=provenance,
        sections=sections,
        highlight=highlight,
    )


def _metrics_seed(compared: MetricsResult) -> str:
    """The user's seed of several metrics' fits, and the seed each metric's fit drew from
    it."""
    from ...lab.batch import spawn_seeds

    n = len(compared.metrics)
    each = ", ".join(f"{m} {s}" for m, s in zip(compared.metrics, spawn_seeds(compared.seed, n)))
    return (
        f"{compared.seed} (metric k of the {n} fitted with numpy.random.SeedSequence("
        f"{compared.seed}).spawn({n})[k]: {each})"
    )


def write(
    result_or_data: BBTResult | pd.DataFrame,
    path: str | Path,
    *,
    data: pd.DataFrame | None = None,
    methods: str | Sequence[str] | None = None,
    robustness: bool = False,
    rho: float | None = None,
    rope: Sequence[float] = DEFAULT_ROPE,
    hdi: float = DEFAULT_HDI,
    interpretation: RuleChoice = DEFAULT_INTERPRETATION,
    control: str | None = None,
    title: str = DEFAULT_TITLE,
    provenance: Mapping[str, str] | None = None,
    progress: ProgressCallback | None = None,
    log: Callable[[str], None] | None = None,
    highlight: str | Sequence[str] | None = None,
    more_data: str | Sequence[int] | None = None,
    **fit_options: Any,
) -> Path:
    """Write the report ``bbt-widget report`` writes: the same sections for the same data,
    options and seed. The format follows the suffix (``.html``, ``.md``, ``.tex``).

    Parameters
    ----------
    result_or_data
        A fit (:func:`bbt_widget.fit`), or results in any layout ``fit`` accepts: they are
        fitted first with ``fit_options``.
    path
        The report file; ``.md`` and ``.tex`` reports write their figures beside it, and
        every report its tables as CSV in ``<stem>_<format>_tables/`` (``r.html``:
        ``r_html_tables/``).
    data
        With a fit: the results it was fitted on, for the other methods and the robustness
        sections (read with the fit's own ``dataset``, ``algorithm``, ... settings). Without
        them those sections read the fit's tidy results.
    methods
        Other methods beside BBT, a list or a comma-separated string of
        :data:`OTHER_METHODS`, added to the defaults (as the command line): in every format,
        Plackett-Luce for data with folds, and the hierarchical t-test when ``rho`` is given
        and the data are small (:func:`check_methods`). With ``"none"`` among them the
        defaults are left out: ``"none"`` alone for BBT alone, ``"none,friedman"`` for
        Friedman alone.
    robustness
        Add the sweep over the analysis choices and the influence of each data set.
    rho
        For the hierarchical t-test: the correlation of fold results, 1/k for k-fold
        cross-validation.
    rope, hdi, control, title, provenance, highlight
        As for :func:`bbt_widget.outputs.report_render.write_report` (``highlight``: the
        algorithms drawn in their own colour in the critical-difference diagram).
    interpretation
        ``"auto"`` (strong with more than 10 algorithms, weak otherwise), ``"weak"`` or
        ``"strong"``; the report says which rule it follows and why.
    progress, log
        Progress of the fits (``progress(stage, fraction)``) and a line per finished step.
    more_data
        Add the "More data sets" section: for the pairs with no claim, the probability that
        this many more data sets (e.g. ``(50, 100)`` or ``"50,100"``) would decide them
        (:meth:`BBTResult.more_data`). Default: no such section.
    **fit_options
        With data: keywords of :func:`bbt_widget.fit` (``dataset``, ``seed``, ...).

    Returns
    -------
    pathlib.Path
        The report written.

    Raises
    ------
    ValueError
        Bad options, checked against the data before any fit.
    OutputConflictError
        A symbolic link where the report or one of its folders goes, or a figures or tables
        folder holding files no earlier report wrote (checked before any fit; an
        ``OSError`` and a ``ValueError``).
    """
    from ...core.result import BBTResult as _Result
    from ...fitting import FIT_KEYWORDS

    _check_keywords(fit_options, FIT_KEYWORDS)
    # every option checked that needs no data; rope and more_data converted to the request's
    request = ReportRequest(
        path, methods, robustness, rho, rope, hdi, interpretation, control, title,  # type: ignore[arg-type]
        provenance, highlight, more_data, progress, log,  # type: ignore[arg-type]
    )  # fmt: skip
    if request.more_data is not None and (
        fit_options.get("ties") == "davidson" or fit_options.get("group") is not None
    ):
        raise ValueError(
            "more_data forecasts the plain Bradley-Terry model: leave it out with "
            "ties='davidson' or group="
        )
    if not isinstance(result_or_data, _Result):
        if data is not None:
            raise ValueError(
                "data= is for a fit given as result_or_data; these are results already"
            )
        return _fit_and_report(result_or_data, request, fit_options)
    if fit_options:
        raise ValueError(
            f"{', '.join(sorted(fit_options))} are options of the fit; "
            "result_or_data is already a fit: pass the results instead to fit them here"
        )
    _check_highlight(highlight, result_or_data.algorithms)
    return report_of_fit(result_or_data, request, data=data)


def _fit_and_report(
    given: pd.DataFrame, request: ReportRequest, fit_options: Mapping[str, Any]
) -> Path:
    """:func:`write` given results: read them once, check the other methods and start them,
    fit, and write the report of the fit (its draws kept if the report fails)."""
    from ...core.groups import results_only
    from ...fitting import fit

    group = fit_options.get("group")
    # the results without the group column (in wide form it would read as an algorithm)
    data = given if group is None else results_only(given, group)
    layout = read_layout(fit_options)
    # read once: the checks, the fit and every other method take these very results
    tidy = as_tidy(data, **layout, sd=fit_options.get("sd"))
    chosen = check_methods(
        tidy, layout, path=request.path, methods=request.methods,
        robustness=request.robustness, rho=request.rho,
    )  # fmt: skip
    _check_highlight(request.highlight, tidy.algorithms)  # the names, checked before the fit
    started = start_methods(tidy, methods=chosen, hdi=request.hdi, **_fit_sampler(fit_options))
    # the group model reads its groups from the table's group column
    fitted = tidy if group is None else given
    options = fit_options if fitted is given else _without_layout(fit_options)
    result = fit(fitted, progress=request.progress, **options)
    with keeping_posterior(result, request.path):
        return report_of_fit(result, request, data=tidy, started=started)


def _without_layout(fit_options: Mapping[str, Any]) -> dict[str, Any]:
    """The fit's keywords but those that say how to read the results (they were read)."""
    return {k: v for k, v in fit_options.items() if k not in LAYOUT_KEYS}


@contextlib.contextmanager
def keeping_posterior(result: BBTResult, path: str | Path) -> Iterator[None]:
    """Run what follows a fit (its report at ``path``): whatever fails there, the fit, which
    may have taken minutes, is kept: its draws are saved (:func:`keep_posterior`) and the
    error carries a note saying where (printed with it; Python 3.10 has no notes)."""
    try:
        yield
    except Exception as err:
        # a file error there (a full disk, no permission): not beside the report, which
        # must be left as it was
        note = keep_posterior(result, path, beside=not isinstance(err, OSError))
        if hasattr(err, "add_note"):
            err.add_note(note)
        raise


def keep_posterior(result: BBTResult, path: str | Path, *, beside: bool = True) -> str:
    """Save the posterior draws of ``result`` as ``<stem>_posterior.npz`` beside the report
    ``path`` (unless not ``beside``, or it cannot be written there: then in the temporary
    folder), written whole or not at all, and say where, for a report that failed after its
    fit."""
    import tempfile

    from .._atomic import atomic_path

    arrays = {name: np.asarray(v) for name, v in result.draws.params.items()}
    arrays["algorithms"] = np.asarray(result.algorithms, dtype=str)
    target = Path(path)
    folders = [target.parent] if beside else []
    for folder in [*folders, Path(tempfile.gettempdir())]:
        saved = folder / f"{target.stem}_posterior.npz"
        try:
            with atomic_path(saved) as tmp, open(tmp, "wb") as file:
                np.savez_compressed(file, **arrays)  # type: ignore[arg-type]
        except OSError:
            continue
        return (
            f"the fit's posterior draws are saved in {saved} (numpy.load: "
            f"{', '.join(arrays)}; each (chains, draws, ...))"
        )
    return "the fit's posterior draws could not be saved (no folder could be written)"


def report_of_fit(
    result: BBTResult,
    request: ReportRequest,
    *,
    data: pd.DataFrame | TidyResults | None,
    started: SideFit | None = None,
) -> Path:
    """The report of a fit: what :func:`write` does once it has one (its request), with the
    side fit :func:`~._optional.start_methods` started before the fit (``started``), if any."""
    from ...core.group_result import GroupedBBTResult
    from ...core.options import resolve_interpretation
    from ._render import write_report

    rule = resolve_interpretation(request.interpretation, len(result.algorithms)).rule
    results = _results_of(result, data)
    sections, ahead = _optional_part(result, results, request, rule, started)
    if isinstance(result, GroupedBBTResult):
        from ._groups import group_section

        sections.insert(0, group_section(result, rule, request.rope, request.hdi))
    if request.more_data is not None:
        from ._more_data import more_data_section

        sections.append(more_data_section(result, request.more_data, rule, request.rope))
    if request.progress is not None:
        request.progress(f"writing {Path(request.path).name}", math.nan)
    return write_report(
        result,
        request.path,
        **request.shown(),
        title=request.title,
        provenance=request.provenance,
        sections=sections,
        charts_ahead=ahead,
    )


def _optional_part(
    result: BBTResult,
    results: TidyResults | None,
    request: ReportRequest,
    rule: Rule,
    started: SideFit | None,
) -> tuple[list[Section], ChartsAhead | None]:
    """The optional sections of the report of ``result`` fitted on ``results`` (``None``: a
    win table, which has none), and the charts every report has, started so that they
    render while those run."""
    from ._render import start_charts

    if results is None:
        if methods_from(request.methods) or request.robustness:
            raise ValueError(
                "the other methods and robustness need the results, not a win table; "
                "pass data= or leave methods and robustness out"
            )
        return [], None
    chosen = check_methods(
        results, {}, path=request.path, methods=request.methods,
        robustness=request.robustness, rho=request.rho,
    )  # fmt: skip
    ahead = None
    if chosen or request.robustness:  # the charts every report has render while those run
        ahead = start_charts(result, request.path, **request.shown())
    try:
        sections = optional_sections(
            result, results, request, methods=chosen, rule=rule, started=started
        )
    except BaseException:
        if ahead is not None:  # no report: its renderer ends now
            ahead.batches.close()
        raise
    return sections, ahead


def _results_of(result: BBTResult, data: pd.DataFrame | TidyResults | None) -> TidyResults | None:
    """The results the other methods read, read once: ``data`` when given (a table read with
    the fit's own layout settings), else the fit's own results as it read them (``None`` for
    a fit of a ready win table)."""
    if data is None:
        return result.tidy
    return as_tidy(data, **read_layout(result.settings))


def _fit_sampler(fit_options: Mapping[str, Any]) -> dict[str, Any]:
    """The sampler settings :func:`bbt_widget.fit` will record given ``fit_options``."""
    from ...core.options import DEFAULT_CHAINS
    from ...core.validation import DEFAULT_SEED

    defaults = {"engine": "auto", "chains": DEFAULT_CHAINS, "seed": DEFAULT_SEED}
    return {k: fit_options.get(k, {**defaults, **SAMPLER_DEFAULTS}[k]) for k in SAMPLER}


def _check_keywords(fit_options: Mapping[str, Any], fit_keywords: frozenset[str]) -> None:
    """Refuse a keyword that is neither :func:`write`'s nor the fit's (``fit_keywords``),
    before anything runs: passed on to ``fit`` it failed as "fit() got an unexpected keyword
    argument", after the other methods had started."""
    params = inspect.signature(write).parameters.items()
    own = {n for n, p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}
    of_fit = fit_keywords - own  # progress is the report's, passed on to the fit
    unknown = sorted(set(fit_options) - of_fit)
    if unknown:
        raise TypeError(
            f"report.write() got an unexpected keyword {unknown[0]!r}; its keywords are "
            f"{', '.join(sorted(own))}, and with results, the fit's: {', '.join(sorted(of_fit))}"
        )


def _check_highlight(highlight: str | Sequence[str] | None, algorithms: Sequence[str]) -> None:
    from ...core.validation import check_algorithms

    if highlight is not None:
        check_algorithms(highlight, algorithms, "highlight")
