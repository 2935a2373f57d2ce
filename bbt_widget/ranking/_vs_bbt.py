"""The "BBT vs <ranking model>" chart: each model's own quantities, each on its own axis.

BBT's P(best) is the probability that an algorithm's ability is the largest, and its
expected rank is that of the ability among the algorithms; a ranking model's P(first) is
the probability that the algorithm is ranked first on a new data set, and its expected rank
is the rank on such a data set. Drawn on one axis they read as one quantity estimated twice,
and their values as disagreements (0.49 against 0.12 is no disagreement at all). Putting
the ranks alone (1..n) on one shared axis would compare like with like, but it would show a
Monte Carlo wobble of 0.005 in P(best) as a whole swap of places. So each quantity has its
own panel and axis, titled with what it is, and every panel lists the algorithms in BBT's
order: where the other model orders them otherwise, its dots fall out of sequence.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from ..core.validation import _preview

if TYPE_CHECKING:  # Altair is imported where the chart is drawn
    import altair as alt

__all__ = ["BBT_QUANTITIES", "MODEL_QUANTITIES", "chart_vs_bbt", "vs_bbt_frame"]

#: BBT's columns in :func:`vs_bbt_frame` and what each is.
BBT_QUANTITIES = {
    "bbt_p_best": "P(highest ability)",
    "bbt_expected_rank": "expected rank of ability (1 = best)",
}
#: The ranking model's columns and what each is.
MODEL_QUANTITIES = {
    "model_p_first": "P(ranked first on a new data set)",
    "model_expected_rank": "expected rank on a new data set (1 = best)",
}
#: The two models' point colours (Altair's first two category colours, as before the split).
_COLOURS = {"BBT": "#4c78a8", "model": "#f58518"}
_PANEL_WIDTH = 220
#: The model's HDI columns shown in the tooltip of its quantities (BBT's P(best) and
#: expected rank are probabilities and means of the draws, without an interval).
_HDI = {
    "model_p_first": (("model_p_first_low", "HDI low"), ("model_p_first_high", "HDI high")),
    "model_expected_rank": (("model_rank_low", "HDI low"), ("model_rank_high", "HDI high")),
}


def vs_bbt_frame(fit: Any, bbt: Any) -> pd.DataFrame:
    """One row per algorithm in BBT's order: BBT's ``bbt_p_best`` and
    ``bbt_expected_rank`` beside the ranking model's ``model_p_first`` and
    ``model_expected_rank`` (with the model's HDIs, ``model_p_first_low`` ... ``_high``,
    ``model_rank_low`` ... ``_high``).

    Raises
    ------
    ValueError
        ``bbt`` does not rank every algorithm of ``fit`` (not fitted on the same results).
    """
    theirs = bbt.ranking()
    missing = sorted(set(fit.algorithms) - set(theirs["algorithm"]))
    if missing:
        raise ValueError(
            f"the BBT result does not rank {_preview(missing)}; fit it on the same results"
        )
    theirs = theirs[theirs["algorithm"].isin(fit.algorithms)]
    own = fit.ranking.set_index("algorithm").reindex(theirs["algorithm"])
    return pd.DataFrame(
        {
            "algorithm": theirs["algorithm"].to_numpy(),
            "bbt_p_best": theirs["p_best"].to_numpy(),
            "bbt_expected_rank": theirs["expected_rank"].to_numpy(),
            "model_p_first": own["p_first"].to_numpy(),
            "model_p_first_low": own["p_first_low"].to_numpy(),
            "model_p_first_high": own["p_first_high"].to_numpy(),
            "model_expected_rank": own["expected_rank"].to_numpy(),
            "model_rank_low": own["rank_low"].to_numpy(),
            "model_rank_high": own["rank_high"].to_numpy(),
        }
    )


def chart_vs_bbt(fit: Any, bbt: Any) -> alt.HConcatChart:
    """BBT's column (P(highest ability), expected rank of ability) beside the ranking
    model's (P(ranked first on a new data set), expected rank on one), one panel and axis
    per quantity, the algorithms in BBT's order in every panel."""
    import altair as alt

    from ..charts.encodings import inline_rows

    frame = vs_bbt_frame(fit, bbt)
    data = inline_rows(frame)
    order = list(frame["algorithm"])
    n = len(order)
    label = fit.model_label

    def panel(field: str, title: str, who: str, colour: str) -> alt.Chart:
        rank = field.endswith("expected_rank")
        domain = [1, n] if rank else [0, 1]
        chart: alt.Chart = (
            alt.Chart(data)
            .mark_point(filled=True, size=60, color=colour)
            .encode(
                y=alt.Y("algorithm:N", sort=order, title=None),
                x=alt.X(f"{field}:Q", title=title, scale=alt.Scale(domain=domain)),
                tooltip=[alt.Tooltip("algorithm:N"), alt.Tooltip(f"{field}:Q", title=title)]
                + [alt.Tooltip(f"{f}:Q", title=t) for f, t in _HDI.get(field, ())],
            )
            .properties(title=f"{who}: {title}", width=_PANEL_WIDTH)
        )
        return chart

    bbt_column = alt.vconcat(
        *(panel(f, t, "BBT", _COLOURS["BBT"]) for f, t in BBT_QUANTITIES.items())
    )
    model_column = alt.vconcat(
        *(panel(f, t, label, _COLOURS["model"]) for f, t in MODEL_QUANTITIES.items())
    )
    return alt.hconcat(bbt_column, model_column, title=f"BBT vs {label}")
