"""The report's "More data sets" section: for the pairs with no claim, how likely ``n`` more
data sets like these would decide them (:meth:`BBTResult.more_data`), in a sentence per pair
of interest, a table and a chart of P(claim) against ``n``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd

from ...core.bidi import isolate, pair_label
from ...core.more_data import DEFAULT_N, check_n
from ...core.options import Rule
from ..methods_text import Styled
from ._sections import Section, Table

if TYPE_CHECKING:
    from ...core.result import BBTResult

__all__ = ["MAX_SENTENCES", "more_data_section", "more_data_sentence", "parse_more_data"]

#: Open pairs given a sentence of their own (those likeliest to be decided first).
MAX_SENTENCES = 8
#: Open pairs drawn in the chart.
MAX_DRAWN = 8

#: How the forecast is computed, for the reader (at most 100 words).
HOW = (
    "How it was computed: each of {futures} simulated futures takes abilities from the "
    "posterior, adds n data sets on which each pair meets as often as before, ties at its "
    "observed rate and is otherwise won with the model's probability, applies the tie policy, "
    "and updates the abilities by their normal approximation given sigma. A probability is "
    "the share of futures carrying the claim under the {rule} rule (Monte Carlo error at most "
    "{mcse:.3f}). It assumes new data sets exchangeable with these; a suite chosen to favour "
    "one method breaks that."
)


def parse_more_data(value: str | int | Sequence[int]) -> tuple[int, ...]:
    """The numbers of more data sets of ``--more-data 50,100`` (or a list of ints).

    Raises
    ------
    ValueError
        Naming the value and the form expected.
    """
    if isinstance(value, str):
        parts = [p.strip() for p in value.split(",")]
        if not all(p.isdigit() for p in parts):
            raise ValueError(
                f"more data sets must be positive integers separated by commas, e.g. 50,100; "
                f"got {value!r}"
            )
        value = [int(p) for p in parts]
    return check_n(value)


def more_data_section(
    result: BBTResult, n: Sequence[int], interpretation: Rule, rope: tuple[float, float]
) -> Section:
    """The "More data sets" section for ``n`` more data sets under ``interpretation``.

    The forecast runs on the numbers asked for and those of the default grid
    (:data:`~bbt_widget.core.more_data.DEFAULT_N`), so that the chart draws a curve; the
    sentences and the table give the numbers asked for.
    """
    from ...charts.frames_more_data import more_data_frame
    from ...charts.specs_more_data import more_data_chart

    asked = check_n(n)
    forecast = result.more_data(sorted(set(asked) | set(DEFAULT_N)), interpretation, rope=rope)
    table = forecast.table
    settles = forecast.settles
    text: list[str] = []
    if settles.empty:
        text.append(
            f"Every pair carries a claim under the {interpretation} rule: there is nothing "
            "for more data sets to decide."
        )
        tables: list[Table] = []
        charts = {}
    else:
        largest = asked[-1]
        at_largest = table[(table["n"] == largest) & (table["claim_now"] == "no claim")]
        ranked = at_largest.assign(p_claim=1.0 - at_largest["p_no_claim"]).sort_values(
            "p_claim", ascending=False, kind="stable"
        )
        text.append(
            f"{len(settles)} pairs carry no claim under the {interpretation} rule. For the "
            f"{min(MAX_SENTENCES, len(ranked))} likeliest to be decided:"
        )
        text.extend(
            more_data_sentence(table, str(row.alg_a), str(row.alg_b), asked, interpretation)
            for row in ranked.head(MAX_SENTENCES).itertuples(index=False)
        )
        likely = settles["smallest_n"].notna().sum()
        text.append(
            f"Of the {len(settles)} open pairs, {likely} would more likely than not carry a "
            f"claim within {forecast.n[-1]} more data sets; the others would probably stay "
            "open (under the strong rule, pairs whose P(a > b) lies between the ROPE and 0.70 "
            "stay open however many data sets are added)."
        )
        shown = table[table["claim_now"] == "no claim"]
        shown = shown[shown["n"].isin(asked)]
        frame = pd.DataFrame(
            {
                "pair": [pair_label(a, b) for a, b in zip(shown["alg_a"], shown["alg_b"])],
                "more data sets": shown["n"].to_numpy(),
                "P(a better)": shown["p_a_better"].to_numpy(),
                "P(b better)": shown["p_b_better"].to_numpy(),
                "P(equivalent)": shown["p_equivalent"].to_numpy(),
                "P(no claim)": shown["p_no_claim"].to_numpy(),
                "MCSE": shown[[c for c in shown.columns if c.startswith("mcse_")]]
                .max(axis=1)
                .to_numpy(),
            }
        )
        tables = [Table("more_data", "Forecast claims of the open pairs", frame, digits=2)]
        drawn = list(zip(ranked["alg_a"], ranked["alg_b"]))[:MAX_DRAWN]
        chart = more_data_chart(more_data_frame(forecast, drawn))
        charts = {
            "more_data": (
                chart,
                f"P(some claim) against the number of more data sets, for the "
                f"{len(drawn)} open pairs likeliest to be decided ({interpretation} rule)",
            )
        }
    mcse = 0.5 / forecast.futures**0.5
    text.append(HOW.format(futures=forecast.futures, rule=interpretation, mcse=mcse))
    methods: list[str | Styled] = [
        f"For the pairs with no claim, the probability that {', '.join(map(str, asked))} more "
        "data sets like these would decide them was forecast by posterior predictive "
        f"simulation ({forecast.futures} futures, abilities updated by their normal "
        "approximation given sigma)."
    ]
    return Section("more_data", "More data sets", text, tables, charts, methods=methods)


def more_data_sentence(
    table: pd.DataFrame, a: str, b: str, asked: Sequence[int], interpretation: Rule
) -> str:
    """'a vs b: 50 / 100 more data sets like these would decide it with probability 0.31 /
    0.62; at 100 the likeliest claim is ... with probability ...', for the pair ``(a, b)``
    (as in the forecast's ``table``, :attr:`MoreData.table`) at the ``asked`` numbers of more
    data sets, names isolated (:func:`~bbt_widget.core.bidi.isolate`)."""
    rows = table[(table["alg_a"] == a) & (table["alg_b"] == b) & table["n"].isin(asked)]
    ns = " / ".join(str(int(v)) for v in rows["n"])
    ps = " / ".join(f"{1.0 - p:.2f}" for p in rows["p_no_claim"])
    last = rows.iloc[-1]
    claims = {
        "p_a_better": f"{isolate(a)} better",
        "p_b_better": f"{isolate(b)} better",
        "p_equivalent": "equivalent",
    }
    best = max(claims, key=lambda c: float(last[c]))
    return (
        f"{isolate(a)} vs {isolate(b)}: {ns} more data sets like these would decide it with "
        f"probability {ps}; at {int(last['n'])} the likeliest claim is {claims[best]} under "
        f"the {interpretation} rule, with probability {float(last[best]):.2f}."
    )
