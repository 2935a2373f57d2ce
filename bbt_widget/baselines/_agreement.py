"""BBT's decisions next to the baselines', pair by pair (paper Sec. 7).

The paper compares BBT's weak decision (``above_50 >= 0.95``, Sec. 9.2) with a significant
Nemenyi or Wilcoxon difference, and counts the pairs where only one of them claims
something. The frequentist tests can only claim a difference; BBT and the Bayesian
signed-rank and sign tests can also claim equivalence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import pandas as pd

from ..core.data import TidyResults, as_tidy
from ..core.options import DEFAULT_HDI, DEFAULT_ROPE, Rule
from ..core.posterior import NOT_COMPARED, flip_decision
from ..core.tidy import Layout, Unpack
from ..core.validation import check_count, check_hdi, check_rope, check_seed
from ._common import (
    Means,
    TableSummary,
    check_alpha,
    check_choice,
    check_control,
    check_positive,
    dataset_means,
    selected_pairs,
)
from ._demsar import NemenyiResult, complete_blocks, nemenyi_from_means
from ._hierarchical_pairs import HierarchicalPairsResult
from ._sign import BayesianSignTestResult, sign_from_means
from ._signed_rank import BayesianSignedRankResult, signed_rank_from_means
from ._wilcoxon import ADJUSTMENTS, WilcoxonResult, wilcoxon_from_means

if TYPE_CHECKING:  # typing.Unpack is Python 3.11; the checker knows it on 3.10 too
    from ..core.tidy import LayoutKeywords

INTERPRETATIONS = ("weak", "strong")
_SUMMARY_COLUMNS = ("pair", "alg_a", "alg_b", "above_50", "in_rope", "weak", "strong")
BASELINES = ("nemenyi", "wilcoxon", "bsr", "sign")


class SummaryResult(Protocol):
    """What :func:`agreement` needs from a BBT result (e.g. :class:`bbt_widget.BBTResult`)."""

    def summary(self, rope: Sequence[float] = ..., hdi: float = ...) -> pd.DataFrame: ...


@dataclass(frozen=True)
class AgreementResult(TableSummary):
    """BBT's decision per pair next to each baseline's.

    Attributes
    ----------
    table
        One row per pair in BBT's order (``"a > b"`` as in ``result.summary()``): ``pair,
        alg_a, alg_b``; the decisions ``bbt``, ``nemenyi``, ``wilcoxon``, ``bsr``, ``sign``
        (each ``"a better"``, ``"equivalent"``, ``"no claim"`` or ``"b better"``, seen from
        a); and the numbers behind them: ``bbt_above_50``, ``bbt_in_rope``,
        ``nemenyi_rank_diff`` (mean rank of b minus that of a), ``wilcoxon_p`` (adjusted),
        ``bsr_p_left`` (a better), ``bsr_p_rope``, ``bsr_p_right`` (b better), ``sign_p_left``,
        ``sign_p_rope``, ``sign_p_right`` (the Bayesian sign test's). With
        ``hierarchical=``, also the decision ``hierarchical`` and ``hier_p_left``,
        ``hier_p_rope``, ``hier_p_right``.
    counts
        One row per baseline: ``pairs``; ``agree`` (same decision); ``only_bbt`` (BBT
        claims, the baseline does not); ``only_baseline``; ``conflict`` (both claim, but
        differently).
    rankings
        The algorithms best first by each method (BBT: its summary order; Nemenyi: mean
        rank; Wilcoxon and BSR: median), one column per method.
    nemenyi, wilcoxon, bsr, hierarchical, sign
        The baseline results the table was built from (``hierarchical`` is None unless
        passed).
    interpretation
        ``"weak"`` or ``"strong"``: which BBT decision column was compared.
    control
        The control algorithm when only its pairs were compared (Nemenyi is then
        Bonferroni-Dunn's test and Wilcoxon's p-values are adjusted over its ``k - 1``
        pairs), or ``None``.
    """

    table: pd.DataFrame
    counts: pd.DataFrame
    rankings: pd.DataFrame
    nemenyi: NemenyiResult
    wilcoxon: WilcoxonResult
    bsr: BayesianSignedRankResult
    interpretation: Rule
    hierarchical: HierarchicalPairsResult | None = None
    sign: BayesianSignTestResult | None = None
    control: str | None = None


def agreement(
    data: pd.DataFrame | TidyResults,
    result: SummaryResult,
    *,
    rope: Sequence[float] = DEFAULT_ROPE,
    hdi: float = DEFAULT_HDI,
    interpretation: Rule = "weak",
    alpha: float = 0.05,
    adjust: str = "holm",
    bsr_rope: float = 0.01,
    prior_strength: float = 0.5,
    sign_prior_strength: float = 1.0,
    n_samples: int = 50_000,
    seed: int | None = None,
    hierarchical: HierarchicalPairsResult | None = None,
    control: str | None = None,
    **layout: Unpack[LayoutKeywords],
) -> AgreementResult:
    """Put BBT's decision for every pair next to Nemenyi's, Wilcoxon's, the Bayesian
    signed-rank test's (BSR) and the Bayesian sign test's.

    Parameters
    ----------
    data
        The results the BBT model was fitted on, in any layout
        :func:`bbt_widget.win_table` accepts. Only the algorithms of the BBT result are
        compared (Nemenyi's ranks depend on which algorithms take part).
    result
        A BBT fit (:func:`bbt_widget.fit`), or anything whose ``summary(rope=, hdi=)``
        returns ``pair, alg_a, alg_b, above_50, in_rope, weak, strong`` per pair.
    rope, hdi
        Passed to ``result.summary``: the BBT ROPE on the probability scale (paper
        [0.45, 0.55]) and the HDI mass.
    interpretation
        ``"weak"`` (Sec. 9.2, the paper's comparison in Sec. 7) or ``"strong"``
        (Sec. 9.3).
    alpha
        Significance level of Nemenyi's and Wilcoxon's tests.
    adjust
        Wilcoxon's p-value adjustment: ``"holm"`` or ``"hochberg"`` (the paper's).
    bsr_rope, prior_strength, n_samples, seed
        The Bayesian signed-rank test's ROPE half-width on the scores' scale and its
        settings; see :func:`bayesian_signed_rank`. The sign test uses the same ROPE,
        number of draws and seed.
    sign_prior_strength
        The Bayesian sign test's prior strength, on the ROPE; see
        :func:`bayesian_sign_test`.
    hierarchical
        A :func:`hierarchical_pairs` result on the same data (it is one fit per pair, so
        it is computed once by the caller and joined here): adds its decision per pair.
    control
        Compare only this algorithm's pairs: BBT's control-vs-all decisions (as
        ``result.summary(control=...)``) next to Bonferroni-Dunn's test (Nemenyi with a
        control) and Wilcoxon's tests adjusted over the ``k - 1`` pairs with the control.
    **layout
        How to read the results: :class:`~bbt_widget.core.tidy.LayoutKeywords`;
        ``lower_is_better`` must match the fit, ``sd`` is accepted and not used.

    Returns
    -------
    AgreementResult
        The per-pair ``table``, the ``counts`` of agreements per baseline, the
        ``rankings`` and the baseline results.

    Warns
    -----
    IncompleteBlocksWarning
        When Nemenyi's test had to drop data sets with a missing result.
    """
    asked = Layout.from_keywords(layout)
    rope = check_rope(rope)
    hdi = check_hdi(hdi)
    check_choice(interpretation, "interpretation", INTERPRETATIONS)
    alpha = check_alpha(alpha)
    adjust = check_choice(adjust, "adjust", ADJUSTMENTS)
    bsr_rope = check_positive(bsr_rope, "bsr_rope", "0.01")
    prior_strength = check_positive(prior_strength, "prior_strength", "0.5")
    if prior_strength == 0:
        raise ValueError("prior_strength must be > 0 (Benavoli et al. use 0.5)")
    sign_prior_strength = check_positive(sign_prior_strength, "sign_prior_strength", "1")
    n_samples = check_count(n_samples, "n_samples")
    seed = check_seed(seed)
    # results already read know their orientation
    _check_orientation(
        result, data.lower_is_better if isinstance(data, TidyResults) else asked.lower_is_better
    )
    full = _bbt_summary(result, rope, hdi)
    fitted = list(pd.unique(pd.concat([full["alg_a"], full["alg_b"]])))
    control = check_control(control, fitted)
    summary = full
    if control is not None:
        keep = (full["alg_a"] == control) | (full["alg_b"] == control)
        summary = full[keep].reset_index(drop=True)
    means = dataset_means(as_tidy(data, **asked.as_dict()))
    means = _restrict(means, full)
    test = "Nemenyi's test" if control is None else "Bonferroni-Dunn's test"
    complete, dropped = complete_blocks(means, test)
    nem = nemenyi_from_means(complete, dropped, alpha, control)
    wil = wilcoxon_from_means(means, alpha, adjust, control)
    bsr = signed_rank_from_means(means, bsr_rope, prior_strength, n_samples, seed)
    names, pairs = selected_pairs(means, None, None)
    sign = sign_from_means(
        means, names, pairs, bsr_rope, sign_prior_strength, "rope", n_samples, seed
    )
    table = _side_by_side(summary, interpretation, nem, wil, bsr, hierarchical, sign)
    return AgreementResult(
        table=table,
        counts=_counts(table),
        rankings=_rankings(full, nem, wil, bsr),
        nemenyi=nem,
        wilcoxon=wil,
        bsr=bsr,
        interpretation=interpretation,
        hierarchical=hierarchical,
        sign=sign,
        control=control,
    )


def _check_orientation(result: Any, lower_is_better: bool) -> None:
    settings = getattr(result, "settings", None)
    fitted = settings.get("lower_is_better") if isinstance(settings, Mapping) else None
    if fitted is not None and bool(fitted) != bool(lower_is_better):
        raise ValueError(
            f"the BBT result was fitted with lower_is_better={bool(fitted)}, but "
            f"lower_is_better={bool(lower_is_better)} was passed here; pass the same value "
            "so that both sides agree on which algorithm is better"
        )


def _bbt_summary(result: Any, rope: tuple[float, float], hdi: float) -> pd.DataFrame:
    if not callable(getattr(result, "summary", None)):
        raise TypeError(
            "result must be a BBT fit (bbt_widget.fit(...)) with a summary() method, got "
            f"{type(result).__name__}"
        )
    summary = result.summary(rope=rope, hdi=hdi)
    missing = [c for c in _SUMMARY_COLUMNS if c not in getattr(summary, "columns", ())]
    if missing:
        raise ValueError(
            f"result.summary() lacks the column(s) {', '.join(map(repr, missing))}; "
            "agreement needs a BBT summary with pair, alg_a, alg_b, above_50, in_rope, weak "
            "and strong"
        )
    return summary.reset_index(drop=True)


def _restrict(means: Means, summary: pd.DataFrame) -> Means:
    fitted = list(pd.unique(pd.concat([summary["alg_a"], summary["alg_b"]])))
    unknown = [a for a in fitted if a not in means.algorithms]
    if unknown:
        raise ValueError(
            f"the BBT result compares {unknown[0]!r}, which is not an algorithm of these "
            f"results ({', '.join(means.algorithms)}); pass the data the model was fitted on"
        )
    # Nemenyi's ranks depend on the competitors: compare exactly the fitted algorithms
    return means.subset([a for a in means.algorithms if a in fitted])


def _oriented(
    summary: pd.DataFrame, table: pd.DataFrame, columns: dict[str, str], flip: dict[str, str]
) -> pd.DataFrame:
    """Rows of a baseline table matched to BBT's pairs and seen from BBT's ``alg_a``.

    ``columns`` maps baseline column -> output column; ``flip`` gives, for the columns that
    change when the pair is seen from the other side, how: ``"decision"``, ``"negate"`` or
    the name of the column to swap with.
    """
    index = {(a, b): k for k, (a, b) in enumerate(zip(table["alg_a"], table["alg_b"]))}
    rows = []
    for a, b in zip(summary["alg_a"], summary["alg_b"]):
        same = (a, b) in index
        row = table.iloc[index[(a, b)] if same else index[(b, a)]]
        out = {}
        for src, dst in columns.items():
            value = row[src]
            how = flip.get(src)
            if not same and how == "decision":
                value = flip_decision(value)
            elif not same and how == "negate":
                value = -value
            elif not same and how is not None:
                value = row[how]
            out[dst] = value
        rows.append(out)
    return pd.DataFrame(rows, columns=list(columns.values()))


def _side_by_side(
    summary: pd.DataFrame,
    interpretation: Rule,
    nem: NemenyiResult,
    wil: WilcoxonResult,
    bsr: BayesianSignedRankResult,
    hierarchical: HierarchicalPairsResult | None = None,
    sign: BayesianSignTestResult | None = None,
) -> pd.DataFrame:
    out = summary[["pair", "alg_a", "alg_b"]].copy()
    out["bbt"] = summary[interpretation].astype(str)
    parts = [
        _oriented(
            summary,
            nem.table,
            {"decision": "nemenyi", "rank_diff": "nemenyi_rank_diff"},
            {"decision": "decision", "rank_diff": "negate"},
        ),
        _oriented(
            summary,
            wil.table,
            {"decision": "wilcoxon", f"p_{wil.adjust}": "wilcoxon_p"},
            {"decision": "decision"},
        ),
        _oriented(
            summary,
            bsr.table,
            {
                "decision": "bsr",
                "p_left": "bsr_p_left",
                "p_rope": "bsr_p_rope",
                "p_right": "bsr_p_right",
            },
            {"decision": "decision", "p_left": "p_right", "p_right": "p_left"},
        ),
    ]
    if sign is not None:
        parts.append(
            _oriented(
                summary,
                sign.table,
                {
                    "decision": "sign",
                    "p_left": "sign_p_left",
                    "p_rope": "sign_p_rope",
                    "p_right": "sign_p_right",
                },
                {"decision": "decision", "p_left": "p_right", "p_right": "p_left"},
            )
        )
    if hierarchical is not None:
        _check_covers(summary, hierarchical)
        parts.append(
            _oriented(
                summary,
                hierarchical.table,
                {
                    "decision": "hierarchical",
                    "p_left": "hier_p_left",
                    "p_rope": "hier_p_rope",
                    "p_right": "hier_p_right",
                },
                {"decision": "decision", "p_left": "p_right", "p_right": "p_left"},
            )
        )
    decisions = pd.concat([out, *(p.iloc[:, :1] for p in parts)], axis=1)
    numbers = pd.concat(
        [
            summary[["above_50", "in_rope"]].rename(columns=lambda c: f"bbt_{c}"),
            *(p.iloc[:, 1:] for p in parts),
        ],
        axis=1,
    )
    return pd.concat([decisions, numbers], axis=1)


def _check_covers(summary: pd.DataFrame, hierarchical: HierarchicalPairsResult) -> None:
    have = set(zip(hierarchical.table["alg_a"], hierarchical.table["alg_b"]))
    for a, b in zip(summary["alg_a"], summary["alg_b"]):
        if (a, b) not in have and (b, a) not in have:
            raise ValueError(
                f"hierarchical= has no test of {a!r} vs {b!r}; run hierarchical_pairs on the "
                "same results and algorithms as the BBT fit"
            )


def _counts(table: pd.DataFrame) -> pd.DataFrame:
    bbt = table["bbt"].to_numpy()
    bbt_claims = (bbt != "no claim") & (bbt != NOT_COMPARED)  # never met: no claim either
    rows = []
    for name in (*BASELINES, "hierarchical"):
        if name not in table.columns:
            continue
        base = table[name].to_numpy()
        base_claims = base != "no claim"
        same = bbt == base
        rows.append(
            {
                "baseline": name,
                "pairs": len(table),
                "agree": int(same.sum()),
                "only_bbt": int((bbt_claims & ~base_claims).sum()),
                "only_baseline": int((base_claims & ~bbt_claims).sum()),
                "conflict": int((bbt_claims & base_claims & ~same).sum()),
            }
        )
    return pd.DataFrame(rows)


def _rankings(
    summary: pd.DataFrame,
    nem: NemenyiResult,
    wil: WilcoxonResult,
    bsr: BayesianSignedRankResult,
) -> pd.DataFrame:
    # BBT's summary lists every pair as (better, worse): the best is "a" most often
    names = pd.unique(pd.concat([summary["alg_a"], summary["alg_b"]]))
    ahead = summary["alg_a"].value_counts()
    order = sorted(names, key=lambda a: -ahead.get(a, 0))  # stable: ties keep their order
    return pd.DataFrame(
        {
            "bbt": order,
            "nemenyi": list(nem.mean_ranks.index),
            "wilcoxon": list(wil.medians.index),
            "bsr": list(bsr.medians.index),
        },
        index=pd.RangeIndex(1, len(order) + 1, name="position"),
    )
