"""The report's optional sections: robustness (a sweep over analysis choices and the influence
of single data sets), the other methods (Plackett-Luce and Mallows ranking models, pairwise
tests) and, for several metrics, the dominance across metrics and a section per metric.

Each builder turns a finished analysis into a :class:`Section`: its text, tables and charts,
all user text still unescaped (the format writers of :mod:`bbt_widget.outputs.report_render` escape
it), and the sentences it adds to the methods paragraph, citing the paper of what was run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from ...core.bidi import isolate
from ...core.options import DEFAULT_ROPE, Rule
from ...core.wording import counted
from ..methods_text import Styled, cite
from ._first_places import first_places as first_places  # the section's first places

if TYPE_CHECKING:
    from ...baselines import AgreementResult, HierarchicalResult
    from ...core.result import BBTResult
    from ...lab.influence import Influence
    from ...lab.metrics import MetricsResult
    from ...lab.sweep_result import SweepResult
    from ...ranking._mallows import MallowsResult
    from ...ranking._plackett_luce import RankingModelResult

#: The influence table names at most this many data sets per pair (the count has them all).
MAX_NAMED_DATASETS = 8
#: Pairs named in the text of the pairwise section when their fits failed the diagnostics.
MAX_LISTED_PAIRS = 8
_CLAIMS = ("a better", "b better", "equivalent")


@dataclass(frozen=True)
class Table:
    """A table of the report: ``key`` (its anchor and its CSV file's name), ``heading`` and
    the frame, whole (its CSV); ``digits``, the decimals its numbers are shown with (``None``:
    each format's own; the CSV keeps them all); ``shown``, the same cells as the report prints
    them when a format of its own says more than a fixed number of decimals (a p-value of
    1e-5 as 1.00e-05, not 0.000), else ``None``."""

    key: str
    heading: str
    frame: pd.DataFrame
    digits: int | None = None
    shown: pd.DataFrame | None = None

    @property
    def printed(self) -> pd.DataFrame:
        """The cells the report prints: :attr:`shown`, else :attr:`frame`."""
        return self.frame if self.shown is None else self.shown


@dataclass(frozen=True)
class Section:
    """An optional section of the report.

    Attributes
    ----------
    key, heading
        Anchor and title.
    text
        Paragraphs (plain text, escaped by the writer).
    tables
        Its tables.
    charts
        Name -> (Altair chart, caption); names are unique across the report.
    cites
        The parts of :data:`bbt_widget.outputs.citations.CITED_BY` whose works the section
        rests on (listed in the report's references).
    methods
        The section's own methods paragraph, as spans (its citations
        :func:`bbt_widget.outputs.methods_text.cite`, author and year).
    """

    key: str
    heading: str
    text: list[str]
    tables: list[Table]
    charts: dict[str, tuple[Any, str]] = field(default_factory=dict)
    methods: list[str | Styled] = field(default_factory=list)
    cites: tuple[str, ...] = ()


# --------------------------------------------------------------------------- robustness


def sweep_section(sweep: SweepResult, interpretation: Rule) -> Section:
    """Which claims hold in every setting of the sweep and which pairs flip (both rules
    counted; the heatmap and the flips table for ``interpretation``)."""
    rows: list[dict[str, Any]] = []
    for interp in ("weak", "strong"):
        stable = sweep.stable_claims(interp)
        rows.append(
            {
                "interpretation": interp,
                "stable better": int((stable["decision"] != "equivalent").sum()),
                "stable equivalent": int((stable["decision"] == "equivalent").sum()),
                "flipped": int(sweep.flips(interp)["pair"].nunique()),
            }
        )
    counts = pd.DataFrame(rows)
    flips = sweep.flips(interpretation)
    flips = flips.assign(settings=flips["settings"].map("; ".join))
    n_fits = len(sweep.settings)
    varied = ", ".join(sweep._varied())
    text = [
        f"The model was refitted in {counted(n_fits, 'setting')} of the analysis choices "
        f"({varied})"
        + (f"; {counted(sweep.n_failed, 'fit')} failed and are left out" if sweep.n_failed else "")
        + ". A stable claim holds in every setting; a flipped pair gets a different decision "
        "in some setting (near a threshold, Monte Carlo noise alone can flip a pair).",
    ]
    tables = [Table("sweep-counts", "Claims across analysis settings", counts)]
    if len(flips):
        tables.append(Table("sweep-flips", f"Pairs whose {interpretation} decision flips", flips))
    else:
        text.append(f"No pair changes its {interpretation} decision across the settings.")
    caption = (
        f"The {interpretation} decision of every pair (rows, best > worse) in every setting "
        "of the sweep (columns)."
    )
    weak, strong = rows
    methods: list[str | Styled] = [
        f"To check that the claims do not hinge on the analysis choices, the model was refitted "
        f"in {counted(n_fits, 'setting')} ({varied}): {weak['stable better']} differences and "
        f"{weak['stable equivalent']} equivalences hold in every setting under the weak "
        f"interpretation, {strong['stable better']} and {strong['stable equivalent']} under the "
        f"strong one; {counted(weak['flipped'], 'pair')} (weak) and {strong['flipped']} (strong) "
        "change their decision."
    ]
    return Section(
        key="sweep",
        heading="Robustness: analysis choices",
        text=text,
        tables=tables,
        charts={"sweep": (sweep.chart(interpretation), caption)},
        methods=methods,
    )


def influence_section(influence: Influence) -> Section:
    """Per claimed pair, the data sets that change its decision when left out; the chart of
    the most influential pair (the most decision-changing data sets, then the largest shift
    of mean P(a > b))."""
    t = influence.table
    interp = influence.interpretation
    claimed = t[t["decision"].isin(_CLAIMS)]
    rows = []
    for pair, g in claimed.groupby("pair", sort=False):
        changing = g[g["changed"]].sort_values("delta_mean", key=abs, ascending=False)
        names = list(changing["dataset"])
        shown = ", ".join(map(isolate, names[:MAX_NAMED_DATASETS]))
        if len(names) > MAX_NAMED_DATASETS:
            shown += f" and {len(names) - MAX_NAMED_DATASETS} more"
        rows.append(
            {
                "pair": pair,
                "decision": g["decision"].iloc[0],
                "n_changing": len(names),
                "max_shift": float(g["delta_mean"].abs().max()),
                "changing data sets": shown,
            }
        )
    frame = pd.DataFrame(
        rows, columns=["pair", "decision", "n_changing", "max_shift", "changing data sets"]
    )
    frame = frame.sort_values(["n_changing", "max_shift"], ascending=False, kind="stable")
    frame = frame.reset_index(drop=True)
    n_sets = influence.pareto_k.size
    fragile = int((frame["n_changing"] > 0).sum())
    text = [
        f"Each of the {n_sets} data sets was left out in turn (Pareto-smoothed importance "
        f"sampling of the posterior draws, {counted(influence.n_refits, 'exact refit')} where the "
        f"Pareto k exceeded 0.7). {fragile} of the {counted(len(frame), 'claimed pair')} "
        f"({interp} interpretation) change their decision when one data set is left out."
    ]
    charts = {}
    if len(frame):
        top = str(frame["pair"].iloc[0])
        charts["influence"] = (
            influence.chart(top),
            f"The data sets whose removal moves mean P(a > b) of {top} the most (the most "
            "influential claimed pair); black: leaving it out changes the decision.",
        )
    methods: list[str | Styled] = [
        "The influence of single data sets was estimated by leaving each out in turn, with "
        "Pareto-smoothed importance sampling ",
        cite("vehtari2017loo"),
        f" and exact refits where Pareto k > 0.7: {fragile} of "
        f"{counted(len(frame), 'claimed pair')} change their {interp} decision without one "
        "data set.",
    ]
    return Section(
        key="influence",
        heading="Robustness: influence of single data sets",
        text=text,
        tables=[Table("influence", "Data sets that change a claim when left out", frame)],
        charts=charts,
        methods=methods,
        cites=("robustness",),
    )


# --------------------------------------------------------------------------- other methods


def ranking_model_section(
    models: RankingModelResult | MallowsResult | Sequence[RankingModelResult | MallowsResult],
    bbt: BBTResult,
    *,
    interpretation: Rule = "weak",
    rope: tuple[float, float] = DEFAULT_ROPE,
) -> Section:
    """Ranking models next to BBT: P(best) and expected rank from each, P(top-k); for
    Mallows also the consensus, the dispersion and the consensus-rank probabilities; which
    algorithm each ranks first, read with BBT's claims under ``interpretation``.

    ``models``: a Plackett-Luce and/or a Mallows result of
    :func:`bbt_widget.ranking_model`, fitted to the same results as ``bbt``.
    """
    fits = (
        list(models)
        if isinstance(models, (list, tuple))
        else [cast("RankingModelResult | MallowsResult", models)]
    )
    order = list(fits[0].ranking["algorithm"])
    bbt_rank = bbt.ranking().set_index("algorithm").reindex(order)
    columns: dict[str, Any] = {"algorithm": order, "p_best_bbt": bbt_rank["p_best"].to_numpy()}
    for fit in fits:
        own = fit.ranking.set_index("algorithm").reindex(order)
        columns[f"p_best_{_SUFFIX[fit.model_label]}"] = own["p_first"].to_numpy()
    columns["expected_rank_bbt"] = bbt_rank["expected_rank"].to_numpy()
    for fit in fits:
        own = fit.ranking.set_index("algorithm").reindex(order)
        columns[f"expected_rank_{_SUFFIX[fit.model_label]}"] = own["expected_rank"].to_numpy()
    frame = pd.DataFrame(columns)
    labels = " and ".join(f.model_label for f in fits)
    text: list[str] = []
    methods: list[str | Styled] = []
    charts: dict[str, tuple[Any, str]] = {}
    for fit in fits:
        agree = first_places(fit, bbt, interpretation, rope)
        text.append(_ranking_text(fit, agree))
        # the methods paragraph says where the first places stand; the section, why
        lead = first_places(fit, bbt, interpretation, rope, brief=True)
        methods.extend([" "] * bool(methods) + _ranking_methods(fit, lead))
        charts.update(_ranking_charts(fit, bbt))
    return Section(
        key="ranking-models",
        heading="Ranking models",
        cites=tuple(_CITES[f.model_label] for f in fits),
        text=text,
        tables=[Table("ranking-models", f"BBT and {labels}: P(best), expected rank", frame)],
        charts=charts,
        methods=methods,
    )


#: Column suffix of each ranking model in the report's table.
_SUFFIX = {"Plackett-Luce": "pl", "Mallows": "mallows"}
#: Each ranking model's works (``citations.CITED_BY``).
_CITES = {"Plackett-Luce": "plackett-luce", "Mallows": "mallows"}


def _ranking_text(fit: Any, agree: str) -> str:
    """The section's paragraph on ``fit``; ``agree``: its first place against BBT's."""
    n_ds = len(fit.datasets)
    if fit.model_label == "Mallows":
        d = fit.dispersion
        return (
            f"The Mallows model with Kendall's distance was fitted to the rankings of the "
            f"algorithms on each of the {n_ds} data sets. Its most probable consensus ranking "
            f"is {' > '.join(map(isolate, fit.consensus.order))} (posterior probability "
            f"{fit.consensus.probability:.2f}); dispersion beta {d.mean:.3g} "
            f"({d.hdi:.0%} HDI {d.low:.3g} to {d.high:.3g}). {agree}{_ties_text(fit)}"
        )
    return (
        f"The Plackett-Luce model was fitted to the rankings of the algorithms on each of the "
        f"{n_ds} data sets (whole rankings rather than pairwise wins). {agree}{_ties_text(fit)}"
    )


def _ties_text(fit: Any) -> str:
    """The ranking's unsettled neighbours (``tied_text()``), after a space."""
    text = str(fit.tied_text())
    return f" {text}" if text else ""


def _ranking_methods(fit: Any, agree: str) -> list[str | Styled]:
    """The Methods text on ``fit``, each work cited by author and year."""
    s = fit.settings
    if fit.model_label == "Mallows":
        return [
            "A Mallows model with Kendall's distance of the per-data-set rankings (uniform "
            "prior on the consensus ranking, exponential prior with rate "
            f"{s.get('rate', 0.1):g} on the dispersion truncated at {s.get('beta_max', 1e6):g}, "
            "ties split symmetrically, missing results as latent ranks) was fitted ",
            cite("rojasdelgado2022"),
            f" and sampled by Metropolis-Hastings with leap-and-shift proposals of reach "
            f"{s.get('leap')} ",
            cite("vitelli2018mallows"),
            f": {s.get('chains')} chains, {s.get('iter_warmup')} x {s.get('thin')} burn-in "
            f"iterations, {s.get('iter_sampling')} draws kept one every {s.get('thin')}. {agree}",
        ]
    return [
        "As a second view of the ranking, a Plackett-Luce model ",
        cite("plackett1975", "luce1959"),
        " of the per-data-set rankings (Dirichlet prior on the weights, ties split "
        "symmetrically) was fitted ",
        cite("rojasdelgado2022"),
        ", sampled by Gibbs with latent Gamma variables ",
        cite("caron2012"),
        f": {s.get('chains')} chains, {s.get('iter_warmup')} warm-up and "
        f"{s.get('iter_sampling')} kept sweeps each. {agree}",
    ]


def _ranking_charts(fit: Any, bbt: BBTResult) -> dict[str, tuple[Any, str]]:
    label = fit.model_label
    if label == "Plackett-Luce":  # the names the report has always used
        vs, top = "bbt_vs_pl", "top_k"
    else:
        vs, top = f"bbt_vs_{_SUFFIX[label]}", f"top_k_{_SUFFIX[label]}"
    charts = {
        vs: (
            fit.chart_vs_bbt(bbt),
            f"BBT vs {label}, each quantity on its own axis: BBT's probability of the highest "
            f"ability and expected rank of ability; {label}'s probability of ranking first on "
            "a new data set and expected rank on one. They are different quantities: compare "
            "the orderings, not the values.",
        ),
        top: (
            fit.chart_top_k(),
            f"{label}: the probability that each algorithm is among the top k, with HDIs "
            "(Rojas-Delgado et al. 2022, Fig. 3).",
        ),
    }
    if label == "Mallows":
        charts["rank_probabilities_mallows"] = (
            fit.chart_rank_probabilities(),
            "Mallows: the posterior probability of each algorithm's rank in the consensus ranking.",
        )
    return charts


def pairwise_section(agreement: AgreementResult) -> Section:
    """The hierarchical correlated t-test for every pair, joined to BBT and the classical
    tests by :func:`bbt_widget.baselines.agreement`, with the posterior of one pair in the
    probability simplex (:func:`simplex_pair`) by the hierarchical and the signed-rank test."""
    cols = ["pair", "bbt", "hierarchical", "hier_p_left", "hier_p_rope", "hier_p_right"]
    cols += ["hier_converged", "bsr", "sign", "wilcoxon", "nemenyi"]
    frame = agreement.table.assign(hier_converged=_converged(agreement))[cols]
    same = int((frame["bbt"] == frame["hierarchical"]).sum())
    rope = agreement.hierarchical.rope if agreement.hierarchical is not None else None
    text = [
        f"The Bayesian hierarchical correlated t-test compared every pair on the fold results "
        f"(ROPE +-{rope:g} on the scores' scale); it agrees with BBT's {agreement.interpretation} "
        f"decision on {same} of {counted(len(frame), 'pair')}."
    ]
    failed = frame.loc[~frame["hier_converged"], "pair"].astype(str).tolist()
    if failed:
        shown = ", ".join(isolate(p) for p in failed[:MAX_LISTED_PAIRS])
        more = (
            f" and {len(failed) - MAX_LISTED_PAIRS} more" if len(failed) > MAX_LISTED_PAIRS else ""
        )
        text.append(
            f"The hierarchical test's chains failed the convergence checks (R-hat <= 1.01, "
            f"bulk and tail ESS >= 400, no divergence, no saturated tree depth) on "
            f"{counted(len(failed), 'pair')} ({shown}{more}; hier_converged False): read their "
            "hierarchical probabilities and decisions as approximate."
        )
    methods: list[str | Styled] = [
        "Every pair was also compared with the Bayesian hierarchical correlated t-test ",
        cite("corani2017", "benavoli2017"),
        f" on the fold results (ROPE +-{rope:g}; the folds' correlation as in ",
        cite("nadeau2003"),
        f"); it agrees with BBT on {same} of {counted(len(frame), 'pair')}.",
    ]
    charts: dict[str, tuple[Any, str]] = {}
    chosen = simplex_pair(agreement)
    if chosen is not None:
        fit, why = chosen
        first, second = fit.table.iloc[0][["alg_a", "alg_b"]]
        shown = f"{first} vs {second}"
        charts["pairwise_simplex"] = (
            fit.simplex(),
            f"The hierarchical test's posterior of {shown} ({why}) in the probability "
            "simplex: each point is a draw of the probabilities that the next data set "
            f"favours {first}, is practically equivalent or favours {second}; the shaded "
            "regions are where each of the three is the largest.",
        )
        charts["pairwise_simplex_bsr"] = (
            agreement.bsr.simplex(first, second),
            f"The Bayesian signed-rank test's posterior of {shown} on the per-data-set "
            "means, in the same simplex.",
        )
    return Section(
        key="pairwise",
        heading="Pairwise tests",
        cites=("hierarchical",),
        text=text,
        tables=[Table("pairwise", "Hierarchical correlated t-test and BBT per pair", frame)],
        charts=charts,
        methods=methods,
    )


def _converged(agreement: AgreementResult) -> list[bool]:
    """Per row of ``agreement.table``: whether the hierarchical fit of that pair passed its
    diagnostics (``diagnostics_ok`` of :func:`bbt_widget.baselines.hierarchical_pairs`)."""
    if agreement.hierarchical is None:
        return [False] * len(agreement.table)
    table = agreement.hierarchical.table
    ok = {
        frozenset((a, b)): bool(v)
        for a, b, v in zip(table["alg_a"], table["alg_b"], table["diagnostics_ok"])
    }
    return [
        ok.get(frozenset((a, b)), False)
        for a, b in zip(agreement.table["alg_a"], agreement.table["alg_b"])
    ]


def simplex_pair(agreement: AgreementResult) -> tuple[HierarchicalResult, str] | None:
    """The hierarchical fit whose simplex the report draws, and why: the first pair (BBT's
    order) on which the hierarchical test and BBT decide differently, else the pair whose
    hierarchical decision is the closest call (the smallest largest probability). ``None``
    when no pair has a fit."""
    if agreement.hierarchical is None:
        return None
    fits = agreement.hierarchical.fits
    t = agreement.table
    found = [fits.get((a, b)) or fits.get((b, a)) for a, b in zip(t["alg_a"], t["alg_b"])]
    has_fit = [f is not None for f in found]
    if not any(has_fit):
        return None
    differ = [
        k for k, ok in enumerate(has_fit) if ok and t["bbt"].iat[k] != t["hierarchical"].iat[k]
    ]
    if differ:
        first = cast("HierarchicalResult", found[differ[0]])
        return first, "the first pair on which it and BBT differ"
    largest = t[["hier_p_left", "hier_p_rope", "hier_p_right"]].max(axis=1).where(has_fit)
    closest = cast("HierarchicalResult", found[int(np.nanargmin(largest.to_numpy()))])
    return closest, "the closest call of the pairs"


# --------------------------------------------------------------------------- several metrics

#: How many dominance relations the summary sentence names (the table has them all).
MAX_NAMED_DOMINANCE = 6


def _names(names: Sequence[str], most: int = MAX_NAMED_DOMINANCE) -> str:
    shown = [isolate(n) for n in names[:most]]
    if len(names) > most:
        shown.append(f"{len(names) - most} more")
    return ", ".join(shown[:-1]) + (" and " if len(shown) > 1 else "") + shown[-1]


def dominance_summary(
    compared: MetricsResult, interpretation: Rule, rope: tuple[float, float], hdi: float
) -> str:
    """One sentence: the Pareto set under ``interpretation`` and who dominates whom, e.g.
    "Over acc, f1 and time (lower is better: time), under the weak rule, the Pareto set is
    A and C; A dominates B"."""
    front = compared.pareto(interpretation, rope, hdi)
    dom = compared.dominance(interpretation, rope, hdi)
    dom = dom[dom["dominates"]]
    lower = (
        f" (lower is better: {_names(compared.lower_is_better)})"
        if compared.lower_is_better
        else ""
    )
    sentence = (
        f"Over {_names(compared.metrics)}{lower}, under the {interpretation} rule, the Pareto "
        f"set (algorithms no other is claimed better than on some metric and worse on none) is "
        f"{_names(front, len(front))}"
    )
    if not len(dom):
        return sentence + "; no algorithm dominates another."
    pairs = [f"{isolate(a)} dominates {isolate(b)}" for a, b in zip(dom["alg_a"], dom["alg_b"])]
    if len(pairs) > MAX_NAMED_DOMINANCE:
        return sentence + f"; {counted(len(pairs), 'dominance relation')} (table below)."
    return sentence + "; " + "; ".join(pairs) + "."


def metrics_section(
    compared: MetricsResult, interpretation: Rule, rope: tuple[float, float], hdi: float
) -> Section:
    """The dominance across metrics: the summary sentence, the dominance relations, the
    rankings side by side with the Pareto set marked."""
    dom = compared.dominance(interpretation, rope, hdi)
    dom = dom[dom["dominates"]]
    table = pd.DataFrame(
        {
            "dominant": dom["alg_a"],
            "dominated": dom["alg_b"],
            "metrics_better": dom["metrics_better"].map(", ".join),
            "metrics_worse": dom["metrics_worse"].map(", ".join),
        }
    ).reset_index(drop=True)
    failed = [f"{m} ({e})" for m, e in compared.errors.items()]
    text = [dominance_summary(compared, interpretation, rope, hdi)]
    if failed:
        text.append("The fits of these metrics failed and are left out: " + "; ".join(failed))
    text.append(
        f"The body of the report above is the fit of the first metric, {compared.metrics[0]}; "
        "each further metric has its own section below."
    )
    lower = set(compared.lower_is_better)
    directions = ", ".join(
        f"{m} ({'lower' if m in lower else 'higher'} is better)" for m in compared.metrics
    )
    methods: list[str | Styled] = [
        f"The model was fitted once per metric with the same settings ({directions}); an "
        f"algorithm dominates another when it is claimed better ({interpretation} "
        "interpretation) on at least one metric and worse on none, and the Pareto set holds "
        "the algorithms that no other dominates."
    ]
    caption = (
        "Each metric's ranking (mean ability and its HDI), the algorithms in the same rows in "
        f"every column; green: the Pareto set under the {interpretation} interpretation."
    )
    tables = [Table("dominance", "Dominance across metrics", table)] if len(table) else []
    return Section(
        key="metrics",
        heading="Several metrics: dominance",
        text=text,
        tables=tables,
        charts={"metrics": (compared.chart(interpretation, rope, hdi), caption)},
        methods=methods,
    )


def metric_section(
    metric: str,
    index: int,
    result: BBTResult,
    interpretation: Rule,
    rope: tuple[float, float],
    hdi: float,
) -> Section:
    """One further metric's fit: its one-sentence answer, ranking and pairs (``index``
    makes the anchors unique whatever the metric's name)."""
    from ..headline import headline

    summary = result.summary(rope=rope, hdi=hdi)
    ranking = result.ranking(hdi=hdi)
    direction = "lower" if result.settings.get("lower_is_better") else "higher"
    return Section(
        key=f"metric-{index}",
        heading=f"Metric: {metric}",
        text=[
            f"{metric} ({direction} is better): " + headline(summary, ranking, interpretation),
            str(result.diagnostics()),
        ],
        tables=[
            Table(f"metric-{index}-ranking", f"{metric}: ranking", ranking),
            Table(f"metric-{index}-pairs", f"{metric}: P(a > b) per pair", summary),
        ],
    )
