"""The words of the method, one entry per idea: what P(a > b), the HDI, the ROPE, the local
ROPE, the two rules and the tie policies mean, with the section of the paper that defines
each. The widget's glossary and its controls' tooltips both read them from here (through
:func:`bbt_widget.core.options.as_dict`), so the two cannot say different things.

Sections are those of Wainer, "A Bayesian Bradley-Terry model to compare multiple ML
algorithms on multiple data sets": the ROPE is defined in Sec. 2.3.1 and used in Sec. 5.5;
the tie policies are defined in Sec. 6.2 (Sec. 5.1 applies spread to the base results).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["CONTROL_TERMS", "COST_TEXT", "TERMS", "TIE_RULES", "Term", "control_help"]


@dataclass(frozen=True)
class Term:
    """One idea: its name, what it means, and the paper's section(s) that define it."""

    name: str
    text: str
    section: str

    def cited(self) -> str:
        """The meaning with its section: ``"... (paper Sec. 6.2)."``."""
        return f"{self.text.removesuffix('.')} (paper {self.section})."


#: What a tie on a data set counts as under each tie policy: the ties entry and the pair
#: panel say it in these words (spread is ceil(t / 2) to each side: core/wintable.py).
TIE_RULES: Mapping[str, str] = {
    "add": "a win for both",
    "spread": "half of the ties to each side, rounded up (the paper's choice)",
    "forget": "dropped",
    "davidson": "a third outcome of Davidson's model (Eq. 7)",
}

TERMS: Mapping[str, Term] = {
    "p_ab": Term(
        "P(a > b)",
        "The probability that algorithm a beats algorithm b on a data set, from the abilities "
        "the Bradley-Terry model fits to the wins and losses: P(a > b) = w_a / (w_a + w_b). "
        "The fit gives many draws of it; the charts show their median, HDI and full range.",
        "Sec. 4 and 5.2",
    ),
    "hdi": Term(
        "HDI",
        "Highest density interval: the narrowest interval holding a given share of the draws "
        "(89% by default, to set it apart from a frequentist 95% confidence interval).",
        "Sec. 5.2",
    ),
    "rope": Term(
        "ROPE",
        "Region of practical equivalence on the P(a > b) scale, 0 to 1: when P(a > b) lies "
        "inside it (0.45 to 0.55 by default) the two algorithms are practically equivalent. "
        "The bounds are a choice.",
        "Sec. 2.3.1 and 5.5",
    ),
    "local_rope": Term(
        "Local ROPE",
        "On each data set, a difference of means smaller than d_min times the folds' spread "
        "(Cohen's d, Eq. 4, or paired d_z, Eq. 6) counts as a tie, not a win. d_min = 0.4 "
        "is safe for the usual 3 to 10 folds. The pair panel shows which data sets it made ties.",
        "Sec. 6.1",
    ),
    "weak": Term(
        "Weak rule",
        "Claims from the share of draws: better when P(a > b) > 0.5 in at least 95% of them "
        "(above.50 \u2265 0.95); equivalent when at least 95% are inside the ROPE "
        "(in.rope \u2265 0.95, which wins over 'better'); otherwise no claim.",
        "Sec. 5.5.1 and 9.2",
    ),
    "strong": Term(
        "Strong rule",
        "Claims from the mean of P(a > b): better when the mean is above 0.70; equivalent "
        "when it is inside the ROPE; otherwise no claim. Its claims do not grow more confident "
        "as more algorithms are compared, so it suits many algorithms.",
        "Sec. 5.5.1, 5.6 and 9.3",
    ),
    "ties": Term(
        "Ties",
        "The Bradley-Terry model has no ties, so a tie on a data set counts as: "
        + "; ".join(f"{policy} = {rule}" for policy, rule in TIE_RULES.items())
        + ".",
        "Sec. 6.2",
    ),
}

#: The controls whose tooltip is the entry of one or more terms, by trait.
CONTROL_TERMS: Mapping[str, tuple[str, ...]] = {
    "ties": ("ties",),
    "rope_low": ("rope",),
    "rope_high": ("rope",),
    "hdi": ("hdi",),
    "interpretation": ("weak", "strong"),
}

#: What changing a control costs, as the tag beside it says: a new fit of the model (by the
#: engine chosen: numpy's sampler by default) or a redraw from the draws already made.
COST_TEXT: Mapping[str, str] = {
    "fit": "changing this refits the model: a new sampling run by the engine",
    "view": "changing this redraws from the draws already made: no refit",
}


def control_help(trait: str) -> str:
    """The tooltip of the control ``trait`` when it is a term's ('' otherwise): each term's
    entry, cited, then what changing it costs."""
    terms = [TERMS[key] for key in CONTROL_TERMS.get(trait, ())]
    if not terms:
        return ""
    cost = COST_TEXT["fit"] if trait == "ties" else COST_TEXT["view"]
    entries = " ".join(f"{term.name}: {term.cited()}" for term in terms)
    return f"{entries} {cost[0].upper()}{cost[1:]}."
