"""The widget's exports of the view it shows: every chart (:func:`charts`), the methods
paragraph and the report at the widget's current settings (:func:`methods_text`,
:func:`report`), the ``bbt.fit`` call that reproduces the view (:func:`code`) and the summary
as CSV (:func:`summary_csv`).

Each function takes the widget first and is one of :class:`~bbt_widget.widget.app.BBTWidget`'s
methods (``w.methods_text()``, ...). Why the widget, not its result, gives the view's
settings: a fit (``w.result``, a ``BBTResult``) holds the settings that changed its draws
(ties, d_min, paired, tie threshold, prior, metric, seed), while the ROPE, HDI and decision
rule only re-summarise them: one cached fit serves every ROPE the user tries, so it does not
carry the view's. ``bbt.report.methods_text(w.result)`` therefore writes the defaults of
those three; ``w.methods_text()`` passes the widget's.
"""

from __future__ import annotations

import inspect
import keyword
import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..charts.frames_decisions import influence_frame
from ..charts.frames_groups import group_cells
from ..charts.specs import chart_set
from ..charts.specs_groups import groups_chart
from ..charts.specs_robustness import robustness_chart
from ..core.group_result import GroupedBBTResult
from ..core.options import DEFAULT_HDI, DEFAULT_ROPE
from ..core.settings import PriorSettings
from ..core.validation import check_interpretation
from ..fitting import fit
from .views import ranking_model_chart, summary_charts

if TYPE_CHECKING:
    from ..core.result import BBTResult

#: The widget (``BBTWidget``, whose methods these functions are; not imported: the widget
#: imports this module).
BBTWidget = Any

__all__ = [
    "charts",
    "code",
    "methods_text",
    "on_front_end_message",
    "report",
    "summary_csv",
    "view_settings",
]

#: ``bbt.fit``'s defaults: a setting equal to its default is left out of :func:`code`.
_FIT_DEFAULTS = {
    name: p.default
    for name, p in inspect.signature(fit).parameters.items()
    if p.default is not p.empty
}
#: The keywords of ``bbt.fit`` :func:`code` writes, in this order (the data layout first).
_CODE_ORDER = (
    "dataset",
    "algorithm",
    "fold",
    "score",
    "sd",
    "group",
    "lower_is_better",
    "ties",
    "tie_threshold",
    "d_min",
    "paired",
    "hyperprior",
    "prior_scale",
    "engine",
    "chains",
    "iter_warmup",
    "iter_sampling",
    "seed",
)


def view_settings(widget: BBTWidget) -> dict[str, Any]:
    """The keyword arguments of ``bbt.report.methods_text`` and ``bbt.report.write`` the
    current view controls ask for: ``interpretation``, ``rope`` and ``hdi`` (a fit does not
    carry them: ``bbt.report.methods_text(w.result, **w.view_settings)``)."""
    return {
        "interpretation": widget.interpretation,
        "rope": (widget.rope_low, widget.rope_high),
        "hdi": widget.hdi,
    }


def _view_problem(widget: BBTWidget) -> None:
    """Raise ValueError when a control holds a value the view could not apply."""
    problem = widget._controls.check_view_settings() or widget._controls.check_fit_settings()
    if problem:
        raise ValueError(
            f"the widget's settings cannot be exported as they are: {problem}. Correct the "
            "control first; the charts still show the last valid settings"
        )


def _fit_shown(widget: BBTWidget) -> BBTResult:
    """The full fit of the widget's current settings; RuntimeError naming what to do when
    there is none yet (no fit, one still running, or one that failed)."""
    _view_problem(widget)
    if widget._fitted is None:
        raise RuntimeError(
            "nothing to export yet: the first fit has not finished. Call w.wait() first "
            "(w.refit() for a widget made with autostart=False)"
        )
    if widget._requested_key is not None and widget._requested_key != widget._result_key:
        if widget.error:
            raise RuntimeError(
                f"the fit of the current settings failed ({widget.error}); the charts show "
                "the last fit of other settings. Change the settings back, or fix them, "
                "before exporting"
            )
        raise RuntimeError(
            "a fit of the current settings is still running; call w.wait() before exporting"
        )
    returned: BBTResult = widget._fitted.result
    return returned


def charts(widget: BBTWidget) -> dict[str, Any]:
    """Altair charts of every view shown, data inlined (for ``chart.save(...)``).

    Keys: ``ranking``, ``cd_diagram`` (the critical-difference diagram of the chosen rule's
    claims) and ``decisions`` (the weak and strong decision matrices), at the widget's ROPE,
    HDI and rule, as the report names them; ``intervals``, ``rope_overlap``, ``ppc``,
    ``coverage``, ``win_matrix`` and ``linked`` (the pairwise charts in one linked view, with
    the highlighted pair and the focus algorithm; the pairs listed, as the filter, search
    and page of the pairwise view choose them); with data sets in groups also ``groups``
    (the pairs x groups decision heatmap); once a sweep ran, ``robustness`` (its flips and the
    highlighted pair's influence); once a ranking model is shown, ``ranking_model`` (BBT
    against Plackett-Luce or Mallows). Empty before the first fit. Made from :attr:`result`
    (the chosen group's view of it when a group is chosen), never from a preview.

    Raises
    ------
    ValueError
        A control holds a value the view could not apply (e.g. a ROPE whose low bound is not
        below its high one).
    """
    frames, fitted = widget._frames, widget._fitted
    if not frames or fitted is None:
        return {}
    _view_problem(widget)
    rope, hdi = (widget.rope_low, widget.rope_high), widget.hdi
    shown = widget._groups.shown(fitted) or fitted
    out = summary_charts(
        shown.result, rope, hdi, interpretation=widget.interpretation, highlight=widget._highlight
    )
    # the pairs listed (filter, search, page: widget/pairs_section), not all of them
    listed = widget._pairs.listed(frames)
    out.update(chart_set(listed, hdi=hdi, selected_pair=widget.selected_pair, focus=widget.focus))
    if widget.sweep_data:  # the robustness view: the sweep's flips, the pair's influence
        shown_data = {"flips": pd.DataFrame(widget.sweep_data)}
        shown_data["influence"] = (
            pd.DataFrame(widget.influence_data)
            if widget.influence_data
            else influence_frame(None, widget.selected_pair)
        )
        out["robustness"] = robustness_chart(
            shown_data, selected_pair=widget.selected_pair, focus=widget.focus
        )
    model = widget.mallows if widget.ranking_model == "mallows" else widget.plackett_luce
    if widget.ranking_model != "bbt" and model is not None:
        out["ranking_model"] = ranking_model_chart(model, fitted.result)
    if isinstance(fitted.result, GroupedBBTResult):
        groups = list(fitted.result.groups)
        chosen = widget.selected_group
        cells = group_cells(fitted.result, interpretation=widget.interpretation, rope=rope, hdi=hdi)
        out["groups"] = groups_chart(
            cells,
            selected_pair=widget.selected_pair,
            focus=widget.focus,
            column=groups.index(chosen) + 1 if chosen in groups else 0,
        )
    return out


def methods_text(widget: BBTWidget, format: str = "md") -> str:
    """The methods and results paragraphs of the fit shown, at the widget's rule, ROPE and HDI.

    Exactly ``bbt.report.methods_text(w.result, format=format, **w.view_settings)``:
    ``bbt.report.methods_text(w.result)`` alone writes the default rule and ROPE, since a fit
    does not carry the view's (see :mod:`bbt_widget.widget.export`). The fit's own settings
    (metric, ties, tie threshold, local ROPE d_min and paired, prior) come with it. With data
    sets in groups, the paragraph describes the whole fit, every group.

    Parameters
    ----------
    format
        ``"md"`` (Markdown), ``"tex"`` (LaTeX) or ``"html"`` (an HTML fragment).

    Raises
    ------
    RuntimeError
        No fit of the current settings to describe yet (call ``w.wait()``), or its fit failed.
    ValueError
        A control holds a value the view could not apply.
    """
    from ..outputs.methods_text import methods_text as text_of

    return text_of(_fit_shown(widget), format=format, **view_settings(widget))


def report(widget: BBTWidget, path: str | Path, **options: Any) -> Path:
    """Write the report of the fit shown, at the widget's settings: exactly
    ``bbt.report.write(w.result, path, data=<the widget's results>, **w.view_settings,
    control=<the control algorithm>, highlight=<highlight>, **options)``.

    Parameters
    ----------
    path
        The report file; its suffix picks the format (``.html``, ``.md``, ``.tex``).
    **options
        Other keywords of :func:`bbt_widget.report.write` (``methods``, ``robustness``,
        ``rho``, ``title``, ``provenance``, ...); not the view's own settings.

    Returns
    -------
    pathlib.Path
        The report written.

    Raises
    ------
    TypeError
        An option that is one of the widget's settings (set the control instead).
    RuntimeError, ValueError
        As for :func:`methods_text`.
    """
    from ..outputs.report._build import write

    view = {
        **view_settings(widget),
        "control": widget.control or None,
        "highlight": list(widget._highlight) or None,
    }
    taken = sorted(set(options) & (set(view) | {"data"}))
    if taken:
        raise TypeError(
            f"{', '.join(taken)}: the report takes these from the widget; set the widget's "
            "control (e.g. w.rope_low, w.interpretation) instead of passing them"
        )
    result = _fit_shown(widget)
    return write(result, path, data=widget._data, **view, **options)


def code(widget: BBTWidget, data: str = "df", sd: str = "sd") -> str:
    """Python that reproduces the view: the ``bbt.fit`` call of the widget's current
    settings (the data layout and every setting that is not ``fit``'s default, the seed
    included), then the summary the widget shows (its ROPE, HDI, control algorithm and
    group). Run on the same results it gives the same numbers.

    Parameters
    ----------
    data
        The name of the results' variable in the code (the DataFrame given to the widget,
        its group column included).
    sd
        The name of the standard deviations' variable, for a widget given ``sd=``.

    Returns
    -------
    str
        Lines of Python: the import, ``result = bbt.fit(...)``, ``summary = ...``.

    Raises
    ------
    ValueError
        ``data`` or ``sd`` is not a Python name; a control holds a value the view could not
        apply (as for :func:`methods_text`); a setting that is no plain value (named).
    """
    for name, given in (("data", data), ("sd", sd)):
        if not (isinstance(given, str) and given.isidentifier() and not keyword.iskeyword(given)):
            raise ValueError(f"{name} must be a Python variable name, like 'df'; got {given!r}")
    _view_problem(widget)  # only checked values are written
    settings = widget.fit_settings
    if settings.get("prior_scale") == PriorSettings(settings["hyperprior"]).scale:
        settings["prior_scale"] = None  # the family's default: what fit takes by itself
    if settings.get("seed") is None and widget._fitted is not None:
        settings["seed"] = widget._fitted.result.settings.get("seed")  # the seed drawn for it
    args = [data]
    # the known keywords in a readable order, then any other the widget passes to fit
    for key in [*_CODE_ORDER, *(k for k in settings if k not in _CODE_ORDER)]:
        value = settings.get(key)
        if key == "sd":
            if value is not None:
                args.append(f"sd={sd}")
            continue
        if value == _FIT_DEFAULTS.get(key):  # fit's default (None: no default, not given)
            continue
        args.append(f"{key}={_literal(value, key)}")
    rope = (float(widget.rope_low), float(widget.rope_high))
    summary_args = [
        f"{name}={_literal(value, name)}"
        for name, value, default in (
            ("rope", rope, tuple(DEFAULT_ROPE)),
            ("hdi", float(widget.hdi), DEFAULT_HDI),
            ("control", widget.control or None, None),
        )
        if value != default
    ]
    group = widget.selected_group
    of = "result" if group is None else f"result.in_group({_literal(group, 'selected_group')})"
    rule = str(check_interpretation(widget.interpretation))  # a rule's name: safe in a comment
    return "\n".join(
        [
            "import bbt_widget as bbt",
            "",
            f"result = bbt.fit({', '.join(args)})",
            f"summary = {of}.summary({', '.join(summary_args)})",
            f"# the view's decisions follow the {rule} rule: summary[{rule!r}]",
            "",
        ]
    )


def on_front_end_message(widget: BBTWidget, content: Any, _buffers: Any) -> None:
    """The front end's "Settings as code" section asks for :func:`code`: sent back in a
    custom message (``{"code": ...}``), shown as text."""
    if isinstance(content, dict) and content.get("action") == "code":
        widget.send({"code": code(widget)})


def _literal(value: Any, setting: str) -> str:
    """``value`` as a Python literal: the ``repr`` of plain values (numpy scalars made plain),
    lists, tuples and dicts of them; ValueError naming ``setting`` for anything else, or a
    number that is not finite (``nan`` and ``inf`` are no literals)."""
    if isinstance(value, np.generic):
        value = value.item()  # a numpy scalar: its repr is not a literal in numpy 2
    if value is None or type(value) in (bool, int, str):
        return repr(value)
    if type(value) is float:
        if not math.isfinite(value):
            raise ValueError(f"{setting} is {value!r}, which cannot be written as Python code")
        return repr(value)
    if type(value) is list:
        return "[" + ", ".join(_literal(v, setting) for v in value) + "]"
    if type(value) is tuple:
        items = ", ".join(_literal(v, setting) for v in value)
        return f"({items},)" if len(value) == 1 else f"({items})"
    if isinstance(value, Mapping):
        pairs = (f"{_literal(k, setting)}: {_literal(v, setting)}" for k, v in value.items())
        return "{" + ", ".join(pairs) + "}"
    raise ValueError(
        f"{setting} is {type(value).__name__} {value!r}, which cannot be written as Python code"
    )


def summary_csv(widget: BBTWidget, path: str | Path | None = None) -> str | Path:
    """The summary the widget shows (:attr:`summary`) as CSV, safe to open in a spreadsheet:
    a name that a spreadsheet would run as a formula (starting with ``= + - @``, a tab or a
    carriage return) starts with ``'`` instead (``bbt_widget.outputs.export.csv_safe``).

    Parameters
    ----------
    path
        A ``.csv`` file to write (whole or not at all); ``None`` returns the text.

    Returns
    -------
    str or pathlib.Path
        The CSV text, or the file written.

    Raises
    ------
    ValueError
        ``path`` does not end in ``.csv``; or as for :func:`methods_text`.
    RuntimeError
        As for :func:`methods_text`.
    """
    from ..outputs.export import csv_text, save_table

    if path is not None and Path(path).suffix.lower() != ".csv":
        raise ValueError(
            f"summary_csv writes CSV: give a path ending in .csv, not {str(path)!r} "
            "(bbt_widget.outputs.export.save_table writes .md and .tex tables)"
        )
    _fit_shown(widget)
    summary = widget.summary
    if summary is None:  # pragma: no cover - a fit shown always has its summary
        raise RuntimeError("nothing to export yet: call w.wait() first")
    return csv_text(summary) if path is None else save_table(summary, path)
