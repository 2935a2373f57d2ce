"""What the widget's background views compute, outside the widget class: the data-audit
badge, the weak-rule caveat, the ranking and decision-matrix spec, warming the other Stan
model, and the keywords the robustness sweep accepts. Pure functions of a fit or of
settings; :mod:`bbt_widget.widget.app` decides when they run (on which runner, in which thread).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from .. import engines
from ..core.options import MANY_ALGORITHMS, Rule
from ..core.result import BBTResult
from ..core.run_context import QUIET, RunContext
from ..engines.base import FitCancelled

__all__ = [
    "MANY_ALGORITHMS",
    "RANKING_MODELS",
    "SWEEP_OPTIONS",
    "audit_badge",
    "ranking_model_chart",
    "ranking_model_spec",
    "summary_charts",
    "summary_spec",
    "ttest_spec",
    "warm_model",
    "weak_rule_caveat",
]

log = logging.getLogger(__name__)

#: Values of the ranking view's "Ranking model" switch ("both": BBT and Plackett-Luce).
RANKING_MODELS = ("bbt", "plackett-luce", "mallows", "both")
#: Keywords of ``bbt.sweep`` the robustness section passes on (``sweep_options``); the data
#: layout, ROPE and HDI come from the widget itself.
SWEEP_OPTIONS = (
    "grid",
    "seeds",
    "seed",
    "executor",
    "n_jobs",
    "engine",
    "chains",
    "iter_warmup",
    "iter_sampling",
)


def warm_model(model: str, engine: str) -> None:
    """Compile ``model`` into the cache (a no-op when it is there); failures are only logged:
    the fit that needs the model reports them."""
    try:
        engines.compile_model(model, engine)  # type: ignore[arg-type]
    except Exception:
        log.debug("warming the %s model failed", model, exc_info=True)


def weak_rule_caveat(n_algorithms: int, interpretation: Rule) -> str:
    """The weak-rule caveat of the paper's Sec. 5.6 ('' when it does not apply)."""
    if interpretation != "weak" or n_algorithms <= MANY_ALGORITHMS:
        return ""
    return (
        f"With {n_algorithms} algorithms the weak interpretation grows more confident as more "
        "algorithms are compared, while the strong one does not (Wainer 2022, Sec. 5.6): "
        "consider the strong interpretation."
    )


def audit_badge(result: BBTResult) -> dict[str, Any]:
    """The data-audit badge: the warnings ``fit`` issued for these data, then the notes.

    As ``fit`` does, a comparison-graph finding gives way to the disconnected-groups message
    when the algorithms form separate groups.
    """
    found = result.audit
    grouped = len(result.components) > 1
    warnings = [
        str(f) for f in [*found.errors, *found.warnings] if f.check != "graph" or not grouped
    ]
    if result.disconnected_note:
        warnings.append(result.disconnected_note)
    notes = [str(f) for f in found.findings if f.severity == "info"]
    count = len(warnings)
    label = f"data: {count} warning{'s' if count != 1 else ''}" if count else "data checked"
    return {"ok": not count, "count": count, "label": label, "warnings": warnings, "notes": notes}


#: Seconds of quiet before the ranking view is rebuilt: typing a ROPE or HDI value (or any
#: burst of view changes) then costs one build at the end, not one per change competing with
#: the kernel for the interpreter.
SUMMARY_DELAY = 0.3


def summary_spec(
    result: BBTResult,
    rope: tuple[float, float],
    hdi: float,
    *,
    interpretation: Rule = "strong",
    highlight: Sequence[str] = (),
    quiet: float = SUMMARY_DELAY,
    context: RunContext = QUIET,
) -> dict[str, Any]:
    """The ranking chart, the critical-difference diagram of the ``interpretation``'s claims
    (``highlight``: the algorithms in their own colour) and the weak/strong decision
    matrices of the report (:mod:`bbt_widget.charts.specs_summary`,
    :mod:`~bbt_widget.charts.specs_cd`), data inlined, for any number of algorithms.

    Built on a background thread after the charts above are shown (it imports Altair, which
    the first charts never wait for), once the view settings have been quiet for
    ``quiet`` seconds (``SUMMARY_DELAY`` after a view change; none after a new fit, which
    is no burst): the ``context``'s cancel is set when a newer request replaces this one.
    """
    cancel = context.cancel
    if cancel is not None and quiet > 0 and cancel.wait(quiet):
        raise FitCancelled("a newer view change came")
    import altair as alt

    from ..charts.encodings import flipped_param, highlight_params

    views = summary_charts(result, rope, hdi, interpretation=interpretation, highlight=highlight)
    # the highlight parameters at the top, once: a view that reads them defines them for
    # itself (exported alone), and Altair cannot lift a facet's parameters out of a concat
    parts = []
    for view in views.values():
        part = view.copy(deep=False)
        part.params = alt.Undefined
        parts.append(part)
    chart = alt.vconcat(*parts, spacing=30, params=[*highlight_params(), flipped_param()])
    # the diagram's colours (highlighted or not) and the matrix's (decisions) are two scales:
    # concatenated views share a colour scale unless told otherwise
    chart = chart.resolve_scale(color="independent").configure_view(stroke=None)
    return _plain_spec(chart)


def summary_charts(
    result: BBTResult,
    rope: tuple[float, float],
    hdi: float,
    *,
    interpretation: Rule,
    highlight: Sequence[str] = (),
) -> dict[str, Any]:
    """The ranking view's charts by the names the report gives them, data inlined:
    ``ranking``, ``cd_diagram`` (the ``interpretation``'s claims, ``highlight`` in its own
    colour) and ``decisions`` (the weak and strong decision matrices)."""
    from ..charts.frames_decisions import claim_counts, decision_frame
    from ..charts.pairs import unsettled_keys
    from ..charts.specs_cd import fit_cd_diagram
    from ..charts.specs_summary import decision_matrix_chart, ranking_chart

    summary = result.summary(rope=rope, hdi=hdi)
    ranking = result.ranking(hdi=hdi)
    unsettled = unsettled_keys(result.unsettled(rope=rope, hdi=hdi))
    decisions = decision_frame(summary, list(ranking["algorithm"]), unsettled)
    return {
        "ranking": ranking_chart(ranking, hdi=hdi),
        "cd_diagram": fit_cd_diagram(
            result, interpretation, highlight=highlight, rope=rope, hdi=hdi
        ),
        "decisions": decision_matrix_chart(decisions, claim_counts(summary)),
    }


def _plain_spec(chart: Any) -> dict[str, Any]:
    """An Altair chart as a Vega-Lite dict, data inlined, no remote ``$schema`` address."""
    spec = chart.to_dict(validate=False)
    spec.pop("$schema", None)  # nothing that looks like a remote address goes to the browser
    returned: dict[str, Any] = spec
    return returned


def ranking_model_spec(pl: Any, result: BBTResult, **_runner: Any) -> dict[str, Any]:
    """:func:`ranking_model_chart` as a Vega-Lite dict, data inlined."""
    return _plain_spec(ranking_model_chart(pl, result))


def ranking_model_chart(pl: Any, result: BBTResult) -> Any:
    """The ranking-model panel: BBT vs the model (P(best), expected rank) above the model's
    P(top-k) (paper 003, Fig. 3), and for Mallows its consensus-rank probabilities. ``pl``
    is a ``RankingModelResult`` or a ``MallowsResult``."""
    import altair as alt

    charts = [pl.chart_vs_bbt(result), pl.chart_top_k()]
    if hasattr(pl, "chart_rank_probabilities"):
        charts.append(pl.chart_rank_probabilities())
    return alt.vconcat(*charts, spacing=30).configure_view(stroke=None)


def ttest_spec(
    data: Any,
    *,
    a: str,
    b: str,
    on: str,
    seed: int | None = None,
    context: RunContext = QUIET,
    **options: Any,
) -> dict[str, Any]:
    """The correlated t-test posterior of ``b - a`` on data set ``on`` (paper 001, Eq. 6) as
    a density with the ROPE band, beside the pair's Bayesian signed-rank test over every data
    set in the probability simplex (same ROPE; ``seed`` seeds its draws). ``options`` are the
    layout, ``lower_is_better``, ``rope`` and ``rho``; ``context`` is the runner's (the tests
    are quick: nothing to report or stop)."""
    import altair as alt

    from ..baselines import bayesian_signed_rank, correlated_ttest

    test = correlated_ttest(data, a=a, b=b, on=on, **options)
    means_options = {k: v for k, v in options.items() if k != "rho"}
    signed_rank = bayesian_signed_rank(data, a=a, b=b, seed=seed, **means_options)
    chart = alt.hconcat(test.chart(on), signed_rank.simplex(), spacing=30)
    return _plain_spec(chart)
