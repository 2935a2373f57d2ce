"""The report's "By family" section: for a fit with data sets in groups
(``bbt.fit(..., group=...)``), which claims hold in every group and which change between
groups, and each group's ranking."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ...core.group_result import GroupedBBTResult
from ...core.options import Rule
from ._sections import Section, Table

if TYPE_CHECKING:
    from ...core.result import BBTResult
    from ...lab.metrics import MetricsResult
    from ...lab.sweep_result import SweepResult


def group_chart(
    result: GroupedBBTResult, interpretation: Rule, rope: tuple[float, float], hdi: float
) -> Any:
    """Heatmap of the decisions: pairs (rows, in ``summary()`` order) x groups (columns), the
    pooled decision first; drawn like a sweep's (one palette and one set of tooltips)."""
    from ...charts.specs_robustness import sweep_chart

    per = result.group_summary(rope=rope, hdi=hdi).rename(columns={"group": "setting"})
    pooled = result.summary(rope=rope, hdi=hdi).assign(setting="pooled")
    cells = pd.concat([pooled[per.columns], per], ignore_index=True)
    order = {pair: k for k, pair in enumerate(pooled["pair"])}
    cells = cells.assign(order=cells["pair"].map(order), decision=cells[interpretation], error="")[
        ["pair", "order", "setting", "decision", "mean", "above_50", "in_rope", "error"]
    ]
    return sweep_chart(
        cells,
        legend="decision",
        title=f"Decisions by group ({interpretation} interpretation)",
        subtitle="each group's abilities, beside the pooled ones",
    )


def group_section(
    result: GroupedBBTResult,
    interpretation: Rule,
    rope: tuple[float, float],
    hdi: float,
    *,
    key: str = "groups",
    heading: str = "By family",
) -> Section:
    """The "By family" section of a grouped fit under ``interpretation``; ``key`` names its
    anchor, tables and chart (unique in a report with one such section per metric)."""
    claims = result.group_claims(interpretation, rope=rope, hdi=hdi)
    by_group = claims[result.groups].apply(
        lambda row: "; ".join(f"{g}: {row[g]}" for g in result.groups), axis=1
    )
    # the pairs whose claims change first: what the pooled fit alone would hide
    order = {"changes between groups": 0, "holds in every group": 1, "no claim in any group": 2}
    table = pd.DataFrame(
        {
            "pair": claims["pair"],
            "pooled": claims["pooled"],
            "by_group": by_group,
            "status": claims["status"],
        }
    )
    table = table.iloc[table["status"].map(order).argsort(kind="stable")].reset_index(drop=True)
    counts = claims["status"].value_counts()
    sizes = pd.DataFrame(
        {
            "group": result.groups,
            "datasets": [len(result.group_datasets[g]) for g in result.groups],
        }
    )
    ranking = result.group_ranking(hdi=hdi)[
        ["group", "algorithm", "mean_beta", "p_best", "expected_rank"]
    ]
    best = ranking.groupby("group", sort=False)["algorithm"].first()
    column = result.settings.get("group")
    given = f"column {column!r}" if column and column != "mapping" else "a mapping"
    text = [
        f"The data sets are in {len(result.groups)} groups ({given}): "
        + ", ".join(f"{g} ({n})" for g, n in zip(sizes["group"], sizes["datasets"]))
        + ". Each group has its own abilities, pulled towards the pooled ones of the "
        "rest of the report, so that small groups borrow strength from the others.",
        f"Under the {interpretation} interpretation, "
        f"{counts.get('holds in every group', 0)} pair(s) have the same claim in every group "
        f"and {counts.get('changes between groups', 0)} have a claim that changes between "
        "groups. Best algorithm per group: "
        + ", ".join(f"{g}: {a}" for g, a in best.items())
        + ".",
    ]
    tau = result.draws.params["tau"]
    methods: list[str] = [
        "A hierarchical version of the model gave each group of data sets g its own "
        "abilities beta[g, i] ~ Normal(beta[i], tau), with tau ~ half-Normal(0, "
        f"{float(result.settings.get('tau_scale', 0.5)):g}), each group's wins counted with the "
        "same rules from its own data sets; the claims per group use the same decision rule. "
        f"The posterior median of tau is {float(np.median(tau)):.2f}."
    ]
    prefix = "group" if key == "groups" else key
    return Section(
        key=key,
        heading=heading,
        text=text,
        tables=[
            Table(f"{prefix}_sizes", "Data sets per group", sizes),
            Table(f"{prefix}_claims", "Claims by group", table),
            Table(f"{prefix}_ranking", "Ranking in each group", ranking),
        ],
        charts={
            key: (
                group_chart(result, interpretation, rope, hdi),
                "The decision of each pair (rows) pooled and in each group (columns).",
            )
        },
        methods=list(methods),
    )


def metrics_group_sections(
    compared: MetricsResult, interpretation: Rule, rope: tuple[float, float], hdi: float
) -> list[Section]:
    """For ``compare_metrics(..., group=...)``: the Pareto set in each group (the dominance
    of the report's other sections is of the pooled abilities), then each metric's "By
    family" section."""
    rows = [
        {
            "group": g or "pooled",
            "pareto_set": ", ".join(compared.pareto(interpretation, rope, hdi, group=g)),
        }
        for g in (None, *compared.groups)
    ]
    pareto = Section(
        key="metrics-groups",
        heading="Pareto set by family",
        text=[
            "The dominance above reads the pooled abilities of each metric's fit. Within each "
            "group, from the groups' abilities of the same fits, the Pareto set (the "
            f"algorithms no other dominates, {interpretation} interpretation) is:"
        ],
        tables=[Table("metrics_group_pareto", "Pareto set in each group", pd.DataFrame(rows))],
    )
    sections = [pareto]
    for k, metric in enumerate(compared.metrics):
        result = compared.results.get(metric)
        if isinstance(result, GroupedBBTResult):
            key = "groups" if k == 0 else f"metric-{k}-groups"
            section = group_section(
                result, interpretation, rope, hdi, key=key, heading=f"By family: {metric}"
            )
            # the methods say once how the group model was fitted: the same for every metric
            sections.append(section if k == 0 else replace(section, methods=[]))
    return sections


def group_mapping(result: BBTResult) -> dict[str, str] | None:
    """Data set -> group of a fit of the group model (``None`` for any other fit): the
    groups as that fit had them, for the sweep of the same model."""
    if not isinstance(result, GroupedBBTResult):
        return None
    return {d: g for g, names in result.group_datasets.items() for d in names}


def group_sweep_section(section: Section, sweep: SweepResult, interpretation: Rule) -> Section:
    """The sweep's section (``section``) of a report on the group model, with the group
    decisions that change across the settings (:meth:`GroupedSweepResult.group_flips`)."""
    from ...lab.sweep_groups import GroupedSweepResult

    if not isinstance(sweep, GroupedSweepResult):
        raise TypeError("a sweep of the group model (sweep(..., group=...)) is needed here")
    flips = sweep.group_flips(interpretation)
    changing = flips[["group", "pair"]].drop_duplicates()
    text = [
        *section.text,
        f"Within the groups, {len(changing)} (group, pair) {interpretation} decision(s) change "
        "across the settings"
        + (":" if len(changing) else ": every group's claims hold in every setting."),
    ]
    tables = list(section.tables)
    if len(flips):
        flips = flips.assign(settings=flips["settings"].map("; ".join))
        tables.append(
            Table("sweep-group-flips", f"Group decisions ({interpretation}) that change", flips)
        )
    return replace(section, text=text, tables=tables)


def influence_not_computed() -> Section:
    """What the report says instead of the influence of single data sets on the group model."""
    return Section(
        key="influence",
        heading="Robustness: influence of single data sets",
        text=[
            "The influence of leaving out one data set at a time is not computed for the group "
            "model: leaving a data set out changes its group's win table and the likelihood "
            "of that group's abilities, which the influence analysis (of the model without "
            "groups) does not follow. Fit without groups for the influence on the pooled "
            "claims."
        ],
        tables=[],
    )
