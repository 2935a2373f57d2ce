"""The report's frequentist and Bayesian baselines beside BBT (``methods=friedman``,
``signed-rank``, ``sign``; ``--with`` on the command line): Friedman's test with Nemenyi's
critical difference and the Wilcoxon-Holm tests, with the assumption checks autorank reports,
and the Bayesian signed-rank and sign tests in score units with their simplex plots.

Each builder reads one :class:`bbt_widget.baselines.AgreementResult` (the baselines computed
once for the report) and returns a :class:`~bbt_widget.outputs.report_sections.Section`
whose methods paragraph cites by author and year (``\\cite`` in LaTeX).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ...core.bidi import isolate
from ...core.wording import counted
from ..methods_text import Styled, cite
from ._sections import Section, Table

if TYPE_CHECKING:
    from ...baselines import AgreementResult
    from ...baselines._common import Means

#: Pairs whose Bayesian tests the table lists (BBT's claimed pairs first); more are in the
#: agreement CSV of the Friedman section or a call of the test itself.
MAX_TABLE_PAIRS = 45
#: Pairs drawn in the probability simplex (the first claimed pairs in BBT's order).
MAX_SIMPLEX_PAIRS = 3
#: Significance level of the tests and of the assumption checks (Bonferroni-corrected there).
ALPHA = 0.05
_CLAIMS = ("a better", "b better", "equivalent")
#: The probability columns of a Bayesian test's table, and their Monte Carlo errors.
_PROBABILITIES = (
    "p_a_better",
    "p_rope",
    "p_b_better",
    "mcse_a_better",
    "mcse_rope",
    "mcse_b_better",
)


def number(x: float) -> str:
    """A statistic or p-value as the tables and the paragraphs both print it."""
    if not np.isfinite(x):
        return "NA"
    return f"{x:.2e}" if 0 < abs(x) < 1e-3 else f"{x:.3f}"


def _table(
    key: str, heading: str, frame: pd.DataFrame, numbers: Sequence[str], missing: str = "NA"
) -> Table:
    """A table whose ``numbers`` columns the report prints as :func:`number` does (a missing
    value as ``missing``); its CSV keeps them whole."""
    shown = frame.assign(
        **{c: [missing if pd.isna(x) else number(float(x)) for x in frame[c]] for c in numbers}
    )
    return Table(key, heading, frame, shown=shown)


def assumption_checks(means: Means) -> tuple[pd.DataFrame, str, float, float]:
    """As autorank: Shapiro-Wilk per algorithm on its per-data-set means (Bonferroni:
    alpha / k), then Bartlett's test of equal variances when every algorithm looks normal,
    Levene's otherwise. Returns the per-algorithm table and (test, statistic, p)."""
    from scipy import stats

    k = len(means.algorithms)
    rows = []
    columns = []
    for j, name in enumerate(means.algorithms):
        x = means.values[:, j]
        x = x[np.isfinite(x)]
        columns.append(x)
        w, p = stats.shapiro(x) if x.size >= 3 and np.ptp(x) > 0 else (np.nan, np.nan)
        rows.append(
            {
                "algorithm": name,
                "n": int(x.size),
                "shapiro_w": float(w),
                "shapiro_p": float(p),
                "normal": bool(p > ALPHA / k) if np.isfinite(p) else False,
            }
        )
    table = pd.DataFrame(rows)
    normal = bool(table["normal"].all())
    test = "Bartlett" if normal else "Levene"
    stat, p = (stats.bartlett if normal else stats.levene)(*columns)
    return table, test, float(stat), float(p)


def friedman_section(agreement: AgreementResult, means: Means) -> Section:
    """Friedman's test, Nemenyi's critical difference (with its diagram), Wilcoxon-Holm and
    the assumption checks, and the agreement of Nemenyi and Wilcoxon with BBT's claims."""
    from ...baselines import scores_cd_diagram

    nem = agreement.nemenyi
    fr = nem.friedman
    k, n = len(nem.mean_ranks), nem.n_datasets
    normality, homo, h_stat, h_p = assumption_checks(means)
    n_normal = int(normality["normal"].sum())
    tests = pd.DataFrame(
        [
            ["Friedman chi-square", fr.statistic, f"{fr.df}", fr.pvalue],
            [
                "Iman-Davenport F",
                fr.iman_davenport,
                f"{k - 1}, {(k - 1) * (n - 1)}",
                fr.iman_davenport_pvalue,
            ],
            [f"Nemenyi critical difference (alpha {ALPHA:g})", nem.cd, "", np.nan],
            [f"{homo} (equal variances)", h_stat, f"{k - 1}", h_p],
        ],
        columns=["test", "statistic", "df", "p_value"],
    )
    ranks = nem.mean_ranks.rename("mean_rank").rename_axis("algorithm").reset_index()
    cols = ["pair", "bbt", "nemenyi", "nemenyi_rank_diff", "wilcoxon", "wilcoxon_p"]
    agree = agreement.table[cols].reset_index(drop=True)
    counts = agreement.counts
    counts = counts[counts["baseline"].isin(["nemenyi", "wilcoxon"])].reset_index(drop=True)
    n_sig = int((agreement.table["nemenyi"] != "no claim").sum())
    n_wil = int((agreement.table["wilcoxon"] != "no claim").sum())
    dropped = f" ({len(fr.dropped)} data sets with a missing result left out)" if fr.dropped else ""
    rejects = fr.pvalue <= ALPHA
    text = [
        f"Friedman's test on the per-data-set mean scores of {k} algorithms over {n} data "
        f"sets{dropped}: chi-square({fr.df}) = {number(fr.statistic)}, p = {number(fr.pvalue)} "
        f"(Iman-Davenport F = {number(fr.iman_davenport)}, p = "
        f"{number(fr.iman_davenport_pvalue)}); "
        + (
            "the mean ranks differ."
            if rejects
            else "no difference of mean ranks is shown, and the pairwise tests below should "
            "not be read as claims (Demšar 2006)."
        ),
        f"Nemenyi's critical difference is {number(nem.cd)} mean ranks at alpha {ALPHA:g}: "
        f"{n_sig} of {len(agree)} pairs differ by more. Wilcoxon signed-rank tests with Holm's "
        f"correction find {counted(n_wil, 'pair')} different.",
        f"Assumptions (as autorank checks them): {n_normal} of {k} algorithms' scores look "
        f"normal (Shapiro-Wilk, Bonferroni alpha {ALPHA:g}/{k}); {homo}'s test of equal "
        f"variances gives p = {number(h_p)}. Rank tests need neither; the checks say whether "
        "a parametric test (repeated-measures ANOVA) would have been an option.",
    ]
    refs = ("friedman1937", "demsar2006")
    methods: list[str | Styled] = [
        f"As a frequentist baseline, the algorithms' mean ranks over the {n} data sets were "
        "compared with Friedman's test ",
        cite(*refs),
        f": chi-square({fr.df}) = {number(fr.statistic)}, p = {number(fr.pvalue)}. By "
        "Nemenyi's post-hoc test ",
        cite("nemenyi1963"),
        f", with critical difference {number(nem.cd)} at alpha = {ALPHA:g}, {n_sig} of "
        f"{len(agree)} pairs differ; by pairwise Wilcoxon signed-rank tests ",
        cite("wilcoxon1945"),
        " with Holm's correction ",
        cite("holm1979"),
        f", {counted(n_wil, 'pair')} {'differs' if n_wil == 1 else 'differ'}. Shapiro-Wilk tests ",
        cite("shapiro1965"),
        f" found the scores of {n_normal} of {k} algorithms normal, and {homo}'s test of "
        f"equal variances gave p = {number(h_p)}.",
    ]
    caption = (
        f"Critical-difference diagram (Demšar 2006): mean ranks over {n} data sets; "
        f"algorithms joined by a bar differ by less than the CD ({number(nem.cd)})."
    )
    return Section(
        key="friedman",
        heading="Frequentist baseline: Friedman, Nemenyi, Wilcoxon-Holm",
        text=text,
        tables=[
            _table(
                "friedman-tests",
                "Friedman, Iman-Davenport, Nemenyi CD and equal variances",
                tests,
                ["statistic", "p_value"],
                missing="",
            ),
            _table(
                "friedman-normality",
                "Shapiro-Wilk normality per algorithm",
                normality,
                ["shapiro_w", "shapiro_p"],
            ),
            Table("friedman-ranks", "Mean ranks (1 = best)", ranks, digits=2),
            _table(
                "friedman-agreement",
                "Nemenyi and Wilcoxon-Holm against BBT's decisions",
                agree,
                ["nemenyi_rank_diff", "wilcoxon_p"],
            ),
            Table("friedman-agreement-counts", "Agreement with BBT", counts),
        ],
        charts={"cd_nemenyi": (scores_cd_diagram(nem), caption)},
        methods=methods,
        cites=("friedman",),
    )


def bayesian_test_section(agreement: AgreementResult, kind: str) -> Section:
    """The Bayesian signed-rank (``kind="signed-rank"``) or sign test in score units for BBT's
    claimed pairs (all pairs when BBT claims none), at most :data:`MAX_TABLE_PAIRS`, with
    their Monte Carlo errors and the first :data:`MAX_SIMPLEX_PAIRS` pairs in the simplex."""
    test = agreement.bsr if kind == "signed-rank" else agreement.sign
    assert test is not None  # agreement() always runs both
    name = "Bayesian signed-rank test" if kind == "signed-rank" else "Bayesian sign test"
    prefix = "bsr" if kind == "signed-rank" else "sign"
    t = agreement.table
    claimed = t[t["bbt"].isin(_CLAIMS)]
    chosen = claimed if len(claimed) else t
    shown = chosen.head(MAX_TABLE_PAIRS)
    own = test.table.set_index(["alg_a", "alg_b"])
    rows = []
    for a, b, pair, bbt, dec in zip(
        shown["alg_a"], shown["alg_b"], shown["pair"], shown["bbt"], shown[prefix]
    ):
        key, swap = ((a, b), False) if (a, b) in own.index else ((b, a), True)
        r = own.loc[key]
        left, right = ("p_right", "p_left") if swap else ("p_left", "p_right")
        m_left, m_right = ("mcse_right", "mcse_left") if swap else ("mcse_left", "mcse_right")
        rows.append(
            {
                "pair": pair,
                "bbt": bbt,
                prefix: dec,
                "p_a_better": float(r[left]),
                "p_rope": float(r["p_rope"]),
                "p_b_better": float(r[right]),
                "mcse_a_better": float(r[m_left]),
                "mcse_rope": float(r["mcse_rope"]),
                "mcse_b_better": float(r[m_right]),
            }
        )
    frame = pd.DataFrame(rows, columns=["pair", "bbt", prefix, *_PROBABILITIES])
    same = int((frame["bbt"] == frame[prefix]).sum()) if len(frame) else 0
    open_pairs = [
        str(pair)
        for a, b, pair in zip(shown["alg_a"], shown["alg_b"], shown["pair"])
        if bool(own.loc[(a, b) if (a, b) in own.index else (b, a), "unsettled"])
    ]
    unsettled = (
        f" Unsettled at this precision (a region within 3 Monte Carlo standard errors of "
        f"0.95, so another seed could decide otherwise; no claim made): {', '.join(open_pairs)}."
        if open_pairs
        else ""
    )
    which = (
        f"BBT's {len(claimed)} claimed pairs" if len(claimed) else "every pair (BBT claims none)"
    )
    capped = (
        f" The table shows the first {MAX_TABLE_PAIRS} of {len(chosen)} (BBT's order)."
        if len(chosen) > MAX_TABLE_PAIRS
        else ""
    )
    text = [
        f"The {name} compared {which} on the per-data-set mean scores, in score units with "
        f"a ROPE of +-{test.rope:g} ({test.n_samples} Monte Carlo draws, seed {test.seed}); a "
        "region is decided when its probability reaches 0.95 by 3 Monte Carlo standard errors "
        f"(mcse_* columns). It agrees with BBT's {agreement.interpretation} decision on "
        f"{same} of {len(frame)} pairs.{capped}{unsettled}"
    ]
    refs = ("benavoli2014", "benavoli2017") if kind == "signed-rank" else ("benavoli2017",)
    pool = f"BBT's {len(claimed)} claimed pairs" if len(claimed) else f"the {len(t)} pairs"
    compared = (
        f"The first {len(frame)} of {pool} (in BBT's order)"
        if capped
        else f"{which[0].upper()}{which[1:]}"
    )
    methods: list[str | Styled] = [
        f"{compared} were also compared with the {name} ",
        cite(*refs),
        f" on the per-data-set mean scores (ROPE +-{test.rope:g} in score units, Dirichlet "
        f"prior strength {test.prior_strength:g}, {test.n_samples} Monte Carlo draws); a "
        "region was decided when its posterior probability exceeded 0.95 by three Monte Carlo "
        f"standard errors. It agrees with BBT on {same} of {len(frame)} pairs.",
    ]
    charts: dict[str, tuple[Any, str]] = {}
    for a, b in list(zip(shown["alg_a"], shown["alg_b"]))[:MAX_SIMPLEX_PAIRS]:
        i = len(charts) + 1
        charts[f"simplex_{prefix}_{i}"] = (
            test.simplex(a, b),
            f"The {name}'s posterior of {isolate(a)} vs {isolate(b)} in the probability "
            "simplex: each point a draw of the probabilities that a data set favours "
            f"{isolate(a)}, is practically equivalent or favours {isolate(b)}.",
        )
    return Section(
        key=kind,
        heading=name,
        text=text,
        tables=[_table(kind, f"{name} per pair (score units)", frame, _PROBABILITIES)],
        charts=charts,
        methods=methods,
        cites=(kind,),
    )
