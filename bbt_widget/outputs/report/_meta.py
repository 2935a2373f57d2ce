"""What a report says about itself: how it was made (provenance) and what each of its table
columns means (one definition per column, shared by every format)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from ...core.options import RuleChoice
from ..methods_text import NEAR_NOTE, package_version, rules

if TYPE_CHECKING:
    from ...core.result import BBTResult

#: Keys ``write_report(provenance=...)`` accepts.
PROVENANCE_KEYS = ("command", "input", "seed")


def column_definitions(
    columns: Sequence[str], *, hdi: float, rope: Sequence[float]
) -> list[tuple[str, str]]:
    """One definition per column name, in the order given (each name once).

    Raises
    ------
    KeyError
        For a column with no definition (a new table column must be defined here).
    """
    rule = rules(rope)
    mass = f"{hdi:.0%}"
    known = {
        "interpretation": "the decision rule: weak (Sec. 9.2) or strong (Sec. 9.3).",
        "better": "pairs where one algorithm is claimed better than the other.",
        "equivalent": "pairs claimed practically equivalent.",
        "no claim": "pairs with neither claim.",
        "not compared": (
            "pairs whose algorithms never met on a common data set, even through others."
        ),
        "pairs": "all pairs of algorithms.",
        "algorithm": "the algorithm.",
        "group": "the group (family) of data sets.",
        "datasets": "number of data sets in the group.",
        "pooled": "the decision from the pooled abilities (every data set).",
        "by_group": "the decision from each group's abilities.",
        "status": (
            "'holds in every group' (the same claim in each), 'changes between groups' (a "
            "claim some group does not share) or 'no claim in any group'."
        ),
        "mean_beta": (
            "posterior mean of the ability beta_i minus the mean ability of all algorithms in "
            "the same draw (sum-to-zero convention, paper Sec. 4): 0 is the average algorithm."
        ),
        "low": (
            f"lower end of the {mass} highest-density interval (HDI): of mean_beta in the "
            "ranking, of P(a > b) in the per-pair table."
        ),
        "high": f"upper end of the same {mass} HDI.",
        "p_best": "posterior probability that the algorithm has the largest ability.",
        "expected_rank": "posterior mean of the algorithm's rank (1 = best).",
        "pair": "the pair as 'a > b', a being the algorithm ranked higher.",
        "alg_a": "the first algorithm of the pair (ranked higher).",
        "alg_b": "the second algorithm of the pair.",
        "mean": "posterior mean of P(a > b), the probability that a beats b on a new data set.",
        "median": "posterior median of P(a > b).",
        "delta": f"high - low: the width of the {mass} HDI of P(a > b).",
        "above_50": "posterior probability that P(a > b) > 0.5 (above.50 in the paper).",
        "in_rope": (
            f"posterior probability that P(a > b) lies in the ROPE [{rope[0]:g}, {rope[1]:g}] "
            "(in.rope in the paper)."
        ),
        "weak": (
            "decision " + rule["weak"] + ": 'a better', 'b better', 'equivalent', 'no claim', "
            f"or 'not compared' when the two never met. {NEAR_NOTE}"
        ),
        "strong": (
            "decision " + rule["strong"] + ": 'a better', 'b better', 'equivalent', "
            f"'no claim', or 'not compared' when the two never met. {NEAR_NOTE}"
        ),
        "hdi": "mass of the HDI of each pair's replicated win counts.",
        "proportion": "share of the observed win counts inside that HDI (paper Table 5).",
        "proportion_ties": "share of the observed tie counts inside that HDI (Davidson model).",
        "alg1": "first algorithm of the fitted pair.",
        "alg2": "second algorithm of the fitted pair.",
        "quantity": "win1 (wins of alg1) or ties.",
        "observed": "the observed count.",
        "replicated_mean": "mean of the replicated counts over the posterior draws.",
        "p_tail": (
            "two-sided tail probability of the observed count among the replicated ones, "
            "2 min(P(rep <= obs), P(rep >= obs)); small values mean a poor fit."
        ),
        "win1": (
            "wins of alg1 given to the model: raw_win1 plus the tie policy's share of the ties "
            "(spread: half of them, rounded up, so win1 + win2 may exceed the data sets; add: "
            "all of them; forget and davidson: none)."
        ),
        "win2": "wins of alg2 given to the model: raw_win2 plus the same share of the ties.",
        "ties": (
            "ties given to the model: raw_ties under the Davidson model, else 0 (the other "
            "policies share the ties out or drop them)."
        ),
        "raw_win1": "data sets where alg1 beat alg2 (after the local ROPE).",
        "raw_win2": "data sets where alg2 beat alg1 (after the local ROPE).",
        "raw_ties": "data sets where neither won (after the local ROPE).",
        "severity": "error (fit refuses the data), warning (a result may mislead) or info.",
        "check": "the audit's check that found it.",
        "what": "what was found.",
        "where": "the columns, algorithms or data sets concerned.",
        "fix": "what to do about it.",
        # the scores themselves (the Scores section)
        "n_datasets": "data sets where the algorithm has a score.",
        "mean_score": "mean over those data sets of the algorithm's score (mean over folds).",
        "mean_low": (
            f"lower end of the {mass} percentile bootstrap interval of mean_score (the data "
            "sets resampled; blank where too few data sets give no such interval)."
        ),
        "mean_high": "upper end of the same bootstrap interval.",
        "median_score": "median over the data sets of the algorithm's score.",
        "median_low": (
            f"lower end of the distribution-free {mass} interval of median_score, from its "
            "order statistics (binomial; blank when too few data sets reach that mass)."
        ),
        "median_high": "upper end of the same order-statistic interval.",
        "n_common": "data sets where both algorithms of the pair have a score.",
        "advantage": (
            "median over the common data sets of a's score minus b's (b's minus a's when lower "
            "is better), in score units: positive favours a."
        ),
        "advantage_low": (
            f"lower end of the {mass} order-statistic interval of advantage (blank when too "
            "few common data sets reach that mass)."
        ),
        "advantage_high": "upper end of the same interval.",
        "cliffs_delta": (
            "Cliff's delta of a's scores over b's on the common data sets, P(a's > b's) - "
            "P(a's < b's) over every two of them (unpaired, as autorank computes it; positive "
            "favours a)."
        ),
        "magnitude": (
            "autorank's label of |cliffs_delta|: negligible below 0.147, small below 0.33, "
            "medium below 0.474, large above (Romano et al. 2006)."
        ),
        # robustness (sweep over analysis choices, influence of single data sets)
        "stable better": "pairs claimed different in every setting of the sweep.",
        "stable equivalent": "pairs claimed equivalent in every setting of the sweep.",
        "flipped": "pairs whose decision differs between settings of the sweep.",
        "decision": (
            "the pair's decision under the report's interpretation (in the flips table: the "
            f"decision the settings listed beside it give). {NEAR_NOTE}"
        ),
        "n_settings": "how many settings of the sweep give that decision.",
        "settings": "the settings of the sweep (the choices that vary) giving that decision.",
        "n_changing": "how many data sets change the decision when left out one at a time.",
        "max_shift": "the largest change in mean P(a > b) when one data set is left out.",
        "changing data sets": (
            "the data sets that change the decision when left out, largest shift first."
        ),
        # ranking models and pairwise tests
        "p_best_bbt": "BBT: posterior probability that the algorithm has the largest ability.",
        "p_best_pl": "Plackett-Luce: posterior probability that the algorithm is ranked first.",
        "expected_rank_bbt": "BBT: posterior mean rank (1 = best).",
        "expected_rank_pl": "Plackett-Luce: posterior mean rank (1 = best).",
        "p_best_mallows": (
            "Mallows: posterior mean probability that the algorithm is ranked first on a data "
            "set (Rojas-Delgado et al. 2022, Eq. 20)."
        ),
        "expected_rank_mallows": "Mallows: posterior mean of the expected rank (1 = best).",
        "bbt": "BBT's decision for the pair under the report's interpretation.",
        "hierarchical": (
            "the hierarchical correlated t-test's decision: a side is claimed when at least "
            "95% of the draws make it the most probable region for the next data set."
        ),
        "hier_p_left": "hierarchical test: share of draws in which a is practically better.",
        "hier_p_rope": "hierarchical test: share of draws in which the ROPE is most probable.",
        "hier_p_right": "hierarchical test: share of draws in which b is practically better.",
        "hier_converged": (
            "hierarchical test: the pair's chains passed the convergence checks (R-hat <= "
            "1.01, bulk and tail ESS >= 400, no divergence, no saturated tree depth); if "
            "False, read its probabilities as approximate."
        ),
        "bsr": "the Bayesian signed-rank test's decision on the per-data-set means.",
        "sign": "the Bayesian sign test's decision on the per-data-set means.",
        "wilcoxon": "the pairwise Wilcoxon signed-rank test's decision (adjusted p-values).",
        "nemenyi": "the Nemenyi test's decision on the mean ranks.",
        # the baselines (Friedman, Nemenyi, Wilcoxon-Holm; the Bayesian signed-rank and sign
        # tests)
        "test": "the test, or Nemenyi's critical difference.",
        "statistic": "the test's statistic (for the critical difference: the CD in mean ranks).",
        "df": "its degrees of freedom.",
        "p_value": "its p-value.",
        "more data sets": "the number of data sets like these added in the forecast.",
        "P(a better)": (
            "forecast probability that, with that many more data sets, a is claimed better."
        ),
        "P(b better)": "the same for b claimed better.",
        "P(equivalent)": "the same for the two claimed practically equivalent.",
        "P(no claim)": "the same for the pair still carrying no claim.",
        "MCSE": "the largest Monte Carlo standard error of the four probabilities.",
        "n": "data sets with a score of the algorithm.",
        "shapiro_w": "Shapiro-Wilk's W of the algorithm's per-data-set mean scores.",
        "shapiro_p": "its p-value.",
        "normal": "shapiro_p above alpha / k (Bonferroni, as autorank).",
        "mean_rank": "mean over the data sets of the algorithm's rank (1 = best).",
        "nemenyi_rank_diff": "mean rank of b minus that of a (significant above the CD).",
        "wilcoxon_p": "the Wilcoxon signed-rank test's p-value, Holm-adjusted over the pairs.",
        "baseline": "the frequentist test compared with BBT.",
        "agree": "pairs where the test and BBT decide the same.",
        "only_bbt": "pairs BBT makes a claim on and the test does not.",
        "only_baseline": "pairs the test makes a claim on and BBT does not.",
        "conflict": "pairs both make claims on, differently.",
        "p_a_better": "posterior probability that a is practically better (beyond the ROPE).",
        "p_rope": "posterior probability that the two are practically equivalent (the ROPE).",
        "p_b_better": "posterior probability that b is practically better.",
        "mcse_a_better": "Monte Carlo standard error of p_a_better.",
        "mcse_rope": "Monte Carlo standard error of p_rope.",
        "mcse_b_better": "Monte Carlo standard error of p_b_better.",
        # several metrics
        "dominant": (
            "an algorithm claimed better than the dominated one on at least one metric and "
            "worse on none."
        ),
        "dominated": "the algorithm it dominates.",
        "metrics_better": "the metrics on which the dominant algorithm is claimed better.",
        "metrics_worse": "the metrics on which it is claimed worse (none, for dominance).",
        "pareto_set": (
            "the algorithms no other dominates across the metrics, from the decisions of the "
            "pooled abilities or of the group's."
        ),
    }
    out: list[tuple[str, str]] = []
    for name in dict.fromkeys(str(c) for c in columns):
        out.append((name, known[name]))
    return out


def _python_call(
    result: BBTResult,
    name: str,
    rope: Sequence[float],
    hdi: float,
    interpretation: RuleChoice,
    control: str | None,
) -> str:
    """The Python calls that reproduce a report written from Python."""
    s = result.settings
    keys: tuple[str, ...] = ("dataset", "algorithm", "fold", "score", "lower_is_better")
    keys += ("d_min", "paired", "ties", "tie_threshold", "hyperprior", "prior_scale")
    keys += ("engine", "chains", "iter_warmup")
    keys += ("iter_sampling", "seed")
    fit_args = ", ".join(f"{k}={s[k]!r}" for k in keys if k in s and s[k] is not None)
    write_args = f"rope={tuple(rope)!r}, hdi={hdi!r}, interpretation={interpretation!r}"
    if control is not None:
        write_args += f", control={control!r}"
    return (
        f"res = bbt_widget.fit(data, {fit_args}); "
        f"bbt_widget.outputs.report_render.write_report(res, {name!r}, {write_args})"
    )


def provenance_items(
    result: BBTResult,
    name: str,
    given: Mapping[str, str],
    *,
    rope: Sequence[float],
    hdi: float,
    interpretation: RuleChoice,
    control: str | None,
) -> list[tuple[str, str]]:
    """What a report records about how it was made, as (item, value) rows: the seed, the
    input, the tie threshold when one was set, the date (UTC), the package and engine
    versions, the Stan program and the command that reproduces the report
    (``given["command"]``, else the Python calls).

    Parameters
    ----------
    result
        The fit.
    name
        The report's file name.
    given
        What the caller knows (see :func:`check_provenance`).
    rope, hdi, interpretation, control
        The report's settings, for the Python calls.
    """
    s = result.settings
    info = result.draws.info
    if result.tidy is None:
        source = "a win table given in Python"
    else:
        source = "a DataFrame given in Python"
    stan_hash = info.get("stan_hash", "")
    # counting rules that change the win table beyond the paper's: stated where they apply
    rules = (
        [("tie threshold", f"{s['tie_threshold']:g} (score units)")]
        if s.get("tie_threshold")
        else []
    )
    return [
        # a caller whose fits were seeded from one seed of theirs says so (several metrics)
        ("seed", str(given.get("seed") or s["seed"])),
        *rules,
        ("input", str(given.get("input") or source)),
        ("date", datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")),
        ("bbt-widget", package_version("bbt-widget")),
        ("engine", str(info.get("engine_version") or result.engine)),
        ("Stan program", f"{s['model']}.stan" + (f" (sha256 {stan_hash})" if stan_hash else "")),
        (
            "command",
            str(
                given.get("command")
                or _python_call(result, name, rope, hdi, interpretation, control)
            ),
        ),
    ]


def check_provenance(provenance: Mapping[str, str] | None) -> dict[str, str]:
    """``write_report``'s ``provenance`` as a dict of strings; unknown keys are refused."""
    given = dict(provenance or {})
    unknown = sorted(set(given) - set(PROVENANCE_KEYS))
    if unknown:
        raise ValueError(f"provenance has unknown keys {unknown}; use {', '.join(PROVENANCE_KEYS)}")
    return {k: str(v) for k, v in given.items() if v is not None}
