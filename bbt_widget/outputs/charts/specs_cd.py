"""The critical-difference diagram of a BBT fit (frames: :func:`.frames_decisions.cd_groups`).

Demšar's diagram, drawn from BBT's decisions instead of a frequentist post-hoc test: the
algorithms at their expected rank (or mean ability), a bar joining each maximal run of
algorithms with no "better" claim between any two of them, and the algorithms the reader
names in ``highlight`` in their own colour. The drawing is the baselines' own
(:func:`bbt_widget.baselines._cd_diagram.critical_difference_chart`), so the BBT, Nemenyi
and Wilcoxon-Holm diagrams look alike and can be set side by side.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ...core.options import resolve_interpretation
from ...core.validation import check_count
from .encodings import LABEL_MAX_CHARS, alt
from .frames_decisions import cd_groups

if TYPE_CHECKING:
    from ...core.result import BBTResult

__all__ = ["CD_POSITIONS", "cd_diagram"]

#: Where :func:`cd_diagram` places each algorithm: its posterior expected rank (1 = best) or
#: its posterior mean ability (sum-to-zero).
CD_POSITIONS = ("expected_rank", "ability")


def cd_diagram(
    result: BBTResult,
    interpretation: str = "strong",
    highlight: str | Iterable[str] | None = None,
    position: str = "expected_rank",
    *,
    rope: Sequence[float] = (0.45, 0.55),
    hdi: float = 0.89,
    width: int = 480,
    title: str | None = None,
) -> Any:
    """A critical-difference diagram of a BBT fit.

    Parameters
    ----------
    result
        The fit (:func:`bbt_widget.fit`).
    interpretation
        Whose "better" claims separate the algorithms: ``"strong"`` (paper Sec. 9.3, the
        default), ``"weak"`` (Sec. 9.2) or ``"auto"`` (strong beyond 10 algorithms).
    highlight
        Algorithms to draw in their own colour, with a legend (e.g. the methods a paper
        proposes, apart from the baselines).
    position
        ``"expected_rank"`` (posterior mean rank, 1 = best: the axis of Demšar's diagram) or
        ``"ability"`` (posterior mean ability, sum-to-zero; the best on the left).
    rope, hdi
        As for :meth:`~bbt_widget.BBTResult.summary`: the decisions depend on both.
    width
        Width of the axis in pixels (labels are drawn beside it).
    title
        Chart title; by default the rule and what the bars mean.

    Returns
    -------
    altair.LayerChart
        A self-contained chart (data inline), exported like every chart
        (:func:`bbt_widget.export.save_chart`: SVG, PNG, PDF).

    Raises
    ------
    ValueError
        An unknown ``interpretation`` or ``position``, or a ``highlight`` that is not an
        algorithm of the fit.
    """
    from ...baselines._cd_diagram import critical_difference_chart

    width = check_count(width, "width")
    rule = resolve_interpretation(interpretation, len(result.algorithms)).rule
    if position not in CD_POSITIONS:
        raise ValueError(
            f"position must be one of {', '.join(map(repr, CD_POSITIONS))}, got {position!r}"
        )
    ranking = result.ranking(hdi=hdi).set_index("algorithm")
    ability = position == "ability"
    column = "mean_beta" if ability else "expected_rank"
    positions = ranking[column].sort_values(ascending=not ability, kind="stable")
    order = [str(a) for a in positions.index]
    groups = cd_groups(result.summary(rope=rope, hdi=hdi), order, rule)
    if title is None:
        title = alt.TitleParams(
            f"BBT critical-difference diagram ({rule} interpretation)",
            subtitle=f"bars join algorithms with no {rule} 'better' claim between any two",
            anchor="start",
        )
    axis = "mean ability (sum-to-zero)" if ability else "expected rank (1 = best)"
    return critical_difference_chart(
        positions,
        groups,
        axis_title=axis,
        higher_is_better=ability,
        highlight=highlight,
        width=width,
        title=title,
        max_chars=LABEL_MAX_CHARS,
    )
