"""The Altair chart of a forecast of claims after more data sets: P(some claim) against the
number of more data sets, a line per pair (and rule), from :mod:`.frames_more_data`."""

from __future__ import annotations

from typing import Any

import pandas as pd

from .encodings import alt

__all__ = ["more_data_chart"]


def more_data_chart(frame: pd.DataFrame, *, title: str | None = None) -> Any:
    """P(some claim) against ``n``: a line and points per pair (dashed for the strong rule
    when both rules are drawn), a band of 2 Monte Carlo standard errors, and a rule at 0.5
    (a claim more likely than not above it).

    Parameters
    ----------
    frame
        :func:`~.frames_more_data.more_data_frame`.
    title
        The chart's title (default: says the rules drawn).
    """
    rules = sorted(frame["rule"].unique())
    title = title or f"P(claim) with more data sets ({' and '.join(rules)} rule)"
    domain = [int(frame["n"].min()), int(frame["n"].max())]
    x = alt.X(
        "n:Q", title="more data sets (n)", scale=alt.Scale(type="log", domain=domain, nice=False)
    )
    y = alt.Y("p_claim:Q", title="P(some claim)", scale=alt.Scale(domain=[0, 1]))
    colour = alt.Color("pair:N", title="pair")
    dash = alt.StrokeDash(
        "rule:N",
        title="rule",
        # the weak rule solid, the strong dashed, whichever is drawn
        scale=alt.Scale(domain=["weak", "strong"], range=[[1, 0], [6, 3]]),
        legend=alt.Legend() if len(rules) > 1 else None,
    )
    tooltip = [
        alt.Tooltip("pair:N"),
        alt.Tooltip("rule:N"),
        alt.Tooltip("n:Q"),
        alt.Tooltip("p_claim:Q", title="P(some claim)", format=".2f"),
        alt.Tooltip("mcse:Q", title="MCSE", format=".3f"),
        alt.Tooltip("likeliest:N", title="likeliest claim"),
        alt.Tooltip("p_likeliest:Q", title="its probability", format=".2f"),
    ]
    base = alt.Chart(frame)
    band = base.mark_area(opacity=0.15).encode(
        x=x, y="low:Q", y2="high:Q", color=colour, detail="rule:N"
    )
    # points drawn apart from the lines, so that the legend shows the rules' dashes
    lines = base.mark_line().encode(x=x, y=y, color=colour, strokeDash=dash)
    points = base.mark_point(filled=True).encode(x=x, y=y, color=colour, tooltip=tooltip)
    half = alt.Chart(pd.DataFrame({"y": [0.5]})).mark_rule(strokeDash=[2, 2], color="grey")
    return (band + lines + points + half.encode(y="y:Q")).properties(
        title=title, width=360, height=220
    )
