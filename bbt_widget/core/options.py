"""The model and decision options, defined once.

Every list of choices the user sees (tie policies, hyper-priors and their default scales, the
d_min range, the tie threshold's step, the interpretations) and the paper's ROPE / HDI
defaults live here. Validation (:mod:`bbt_widget.core.validation`), fitting, the Stan data
(:mod:`bbt_widget.engines._programs`), the command line, the reports and the widget read
them from this module, so that adding a choice is one edit. This module imports nothing from
the package: every layer may use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, get_args

from .terms import CONTROL_TERMS, COST_TEXT, TERMS, control_help

__all__ = [
    "AUTO_INTERPRETATION",
    "DEFAULT_ADAPT_DELTA",
    "DEFAULT_CHAINS",
    "DEFAULT_DRAWS",
    "DEFAULT_D_MIN",
    "DEFAULT_ENGINE",
    "DEFAULT_HDI",
    "DEFAULT_HYPERPRIOR",
    "DEFAULT_INTERPRETATION",
    "DEFAULT_ITER_SAMPLING",
    "DEFAULT_ITER_WARMUP",
    "DEFAULT_MAX_TREEDEPTH",
    "DEFAULT_ROPE",
    "DEFAULT_SEED",
    "DEFAULT_TIES",
    "DEFAULT_TIE_THRESHOLD",
    "DEFAULT_TITLE",
    "DRAWS_MODES",
    "D_MIN_RANGE",
    "D_MIN_STEP",
    "GROUP_TAU_SCALE",
    "HDI_RANGE",
    "HYPERPRIORS",
    "HYPERPRIOR_ALIASES",
    "HYPERPRIOR_FAMILIES",
    "HYPERPRIOR_SCALES",
    "INTERPRETATIONS",
    "INTERPRETATION_CHOICES",
    "INTERPRETATION_LABELS",
    "MANY_ALGORITHMS",
    "MIN_ITER_SAMPLING",
    "PRIOR_SCALE_RANGE",
    "SETTLE_BUDGET",
    "SETTLE_MEMORY",
    "TIE_LABELS",
    "TIE_POLICIES",
    "TIE_THRESHOLD_STEP",
    "TTEST_HDI",
    "DrawsMode",
    "EngineChoice",
    "EngineName",
    "HyperPrior",
    "HyperpriorFamily",
    "HyperpriorName",
    "Interpretation",
    "Rule",
    "RuleChoice",
    "TiePolicy",
    "as_dict",
    "resolve_interpretation",
]

#: The seed ``fit``, the widget and the command use unless told otherwise, so that the same data
#: and settings give the same numbers in every run; another seed is an explicit choice.
DEFAULT_SEED = 1

#: Tie policies (paper Sec. 6.2) and their one-line labels, in the order the controls show them.
TIE_LABELS = MappingProxyType(
    {
        "add": "add (tie = win for both)",
        "spread": "spread (half to each)",
        "forget": "forget (drop ties)",
        "davidson": "Davidson model",
    }
)
#: What ``ties=`` takes (``None`` as well: the raw counts).
TiePolicy = Literal["add", "spread", "forget", "davidson"]
TIE_POLICIES: tuple[TiePolicy, ...] = get_args(TiePolicy)
DEFAULT_TIES: TiePolicy = "spread"


@dataclass(frozen=True)
class HyperPrior:
    """One hyper-prior family on sigma, the spread of the abilities (paper Appendix A).

    Attributes
    ----------
    code
        The value of the Stan programs' ``hyperprior`` data field.
    label
        Name shown to the user.
    default_scale
        The scale used when the user sets none: the one Appendix A gives for this family.
    """

    code: int
    label: str
    default_scale: float


#: Hyper-prior families. Default scales from the paper's Appendix A: lognormal 0.5 (the
#: paper's choice), half-Cauchy 1.0 (Carpenter), half-normal 3.0 (Issa Mattos and Ramos).
HYPERPRIOR_FAMILIES = MappingProxyType(
    {
        "lognormal": HyperPrior(1, "log-normal", 0.5),
        "cauchy": HyperPrior(2, "half-Cauchy", 1.0),
        "normal": HyperPrior(3, "half-normal", 3.0),
    }
)
#: Family name -> Stan ``hyperprior`` code.
HYPERPRIORS = MappingProxyType({k: v.code for k, v in HYPERPRIOR_FAMILIES.items()})
#: Family name -> default scale.
HYPERPRIOR_SCALES = MappingProxyType({k: v.default_scale for k, v in HYPERPRIOR_FAMILIES.items()})
#: Other spellings accepted for the families.
HYPERPRIOR_ALIASES = MappingProxyType(
    {
        "half-cauchy": "cauchy",
        "halfcauchy": "cauchy",
        "half_cauchy": "cauchy",
        "half-normal": "normal",
        "halfnormal": "normal",
        "half_normal": "normal",
    }
)
#: The hyper-prior families by name, and every spelling ``hyperprior=`` accepts.
HyperpriorFamily = Literal["lognormal", "cauchy", "normal"]
HyperpriorName = Literal[
    "lognormal",
    "cauchy",
    "normal",
    "half-cauchy",
    "halfcauchy",
    "half_cauchy",
    "half-normal",
    "halfnormal",
    "half_normal",
]
DEFAULT_HYPERPRIOR: HyperpriorFamily = "lognormal"
#: The hyper-prior scales a fit accepts, for every family: the numpy sampler was checked to
#: fit the paper's results in seconds over this whole range (1e-6 to 1e6, with every family's
#: default near 1). Far outside it the arithmetic breaks down rather than the model: a
#: half-normal scale of 1e-10 takes many times a usual fit's time, a log-normal one of 1e-20
#: gives NaN draws. At the bounds the prior has said all it can: 1e-6 pins sigma (to 0 for the
#: half-normal, to 1 for the log-normal), 1e6 leaves it free.
PRIOR_SCALE_RANGE: tuple[float, float] = (1e-6, 1e6)
#: Scale of the half-normal prior on tau, the spread of an ability between groups of data sets
#: (``bbt.fit(..., group=...)``, logit scale). 0.5 puts 95% of the prior mass on tau < 1, i.e.
#: a group may move P(a > b) from 0.5 to about 0.73, while groups whose data say nothing else
#: are pulled towards the pooled abilities.
GROUP_TAU_SCALE = 0.5

#: Range and step of the local-ROPE threshold d_min (Cohen's d) offered by the controls; any
#: finite d_min >= 0 is valid in code. The paper uses 0.4.
D_MIN_RANGE: tuple[float, float] = (0.0, 1.5)
D_MIN_STEP = 0.05
DEFAULT_D_MIN = 0.4

#: The tie threshold in score units: on a data set, two mean scores (over the folds) that
#: differ by no more than it are a tie, before any local ROPE (a tie under either rule is a
#: tie). ``None`` (or 0) counts every difference, as the paper does; papers that state
#: "differences below 0.5 points are ties" on accuracies in [0, 1] use 0.005. Any finite
#: value >= 0 is valid; the control steps by :data:`TIE_THRESHOLD_STEP` from 0.
DEFAULT_TIE_THRESHOLD: float | None = None
TIE_THRESHOLD_STEP = 0.001

#: Decision rules (paper Sec. 9.2 / 9.3) and their labels.
INTERPRETATION_LABELS = MappingProxyType(
    {"weak": "weak (0.95 rule)", "strong": "strong (0.70 rule)"}
)
#: A decision rule, and what ``interpretation=`` accepts where a rule is reported.
Rule = Literal["weak", "strong"]
RuleChoice = Literal["auto", "weak", "strong"]
INTERPRETATIONS: tuple[Rule, ...] = get_args(Rule)
#: The rule chosen from the number of algorithms (:func:`resolve_interpretation`).
AUTO_INTERPRETATION: Literal["auto"] = "auto"
#: What ``interpretation=`` accepts where a rule is reported: ``"auto"`` or one of the rules.
INTERPRETATION_CHOICES: tuple[RuleChoice, ...] = (AUTO_INTERPRETATION, *INTERPRETATIONS)
DEFAULT_INTERPRETATION: RuleChoice = AUTO_INTERPRETATION
#: The engines ``engine=`` names (``"auto"``: the numpy engine where it samples the model,
#: else the first Stan engine found).
EngineName = Literal["numpy", "cmdstanpy", "pystan"]
EngineChoice = Literal["auto", "numpy", "cmdstanpy", "pystan"]
DEFAULT_ENGINE: EngineChoice = "auto"
#: Beyond this many algorithms the weak rule's above_50 inflates with their number (paper
#: Sec. 5.6): ``"auto"`` then takes the strong interpretation, and the widget and the report
#: advise it when the weak one is chosen.
MANY_ALGORITHMS = 10

#: Why a number of algorithms calls for the strong rule (paper Sec. 5.6), for every output.
_SEC_5_6 = (
    "the weak interpretation grows more confident as more algorithms are compared, while the "
    "strong interpretation does not (Wainer 2022, Sec. 5.6)"
)


@dataclass(frozen=True)
class Interpretation:
    """The decision rule a report uses, and why.

    Attributes
    ----------
    rule
        ``"weak"`` (paper Sec. 9.2) or ``"strong"`` (Sec. 9.3).
    requested
        Whether the user chose the rule (``False``: ``"auto"`` chose it).
    reason
        One sentence for the reader: which rule the claims follow and why.
    """

    rule: Rule
    requested: bool
    reason: str


def resolve_interpretation(interpretation: str, n_algorithms: int) -> Interpretation:
    """The rule for ``interpretation`` (``"auto"``, ``"weak"`` or ``"strong"``) with
    ``n_algorithms`` compared, and the sentence that says why.

    ``"auto"`` is the strong interpretation with more than :data:`MANY_ALGORITHMS` algorithms
    (paper Sec. 5.6: the weak rule's probabilities grow with the number of algorithms) and the
    weak interpretation otherwise.

    Raises
    ------
    ValueError
        For any other value of ``interpretation``.
    """
    if interpretation not in INTERPRETATION_CHOICES:
        choices = ", ".join(map(repr, INTERPRETATION_CHOICES))
        raise ValueError(f"interpretation must be one of {choices}, got {interpretation!r}")
    many = n_algorithms > MANY_ALGORITHMS
    n = f"{n_algorithms} algorithms"
    if interpretation == AUTO_INTERPRETATION:
        if many:
            return Interpretation(
                "strong",
                False,
                f"The claims below follow the strong interpretation, taken by default "
                f"because with {n} (more than {MANY_ALGORITHMS}) the strong interpretation is "
                f"the one to report: {_SEC_5_6}.",
            )
        return Interpretation(
            "weak",
            False,
            f"The claims below follow the weak interpretation, taken by default for {n} "
            f"(the strong interpretation is advised beyond {MANY_ALGORITHMS} algorithms, Sec. "
            "5.6 of Wainer 2022).",
        )
    if not many:
        reason = f"The claims below follow the {interpretation} interpretation, as requested."
    elif interpretation == "strong":
        reason = (
            f"The claims below follow the strong interpretation, as requested; with {n} the "
            f"strong interpretation is the one to report: {_SEC_5_6}."
        )
    else:
        reason = (
            f"The claims below follow the weak interpretation, as requested, although with {n} "
            f"the strong interpretation is the one to report: {_SEC_5_6}."
        )
    return Interpretation(interpretation, True, reason)


#: The paper's region of practical equivalence for P(a > b), and HDI mass.
DEFAULT_ROPE: tuple[float, float] = (0.45, 0.55)
DEFAULT_HDI = 0.89
#: The HDI masses the widget's control offers (inclusive); in code any mass in (0, 1) is valid.
HDI_RANGE: tuple[float, float] = (0.5, 0.99)
#: A report's title unless one is given.
DEFAULT_TITLE = "Bayesian Bradley-Terry comparison"
#: The HDI mass of the Bayesian t-tests of the baselines (correlated, hierarchical): the
#: posterior probability at which those tests decide (0.95, Benavoli et al. 2017), where
#: BBT's summaries keep the paper's 0.89.
TTEST_HDI = 0.95

#: NUTS settings (Stan's defaults). Raise adapt_delta (e.g. 0.95, 0.99) against divergent
#: transitions, max_treedepth (e.g. 12) against saturated tree depths.
DEFAULT_ADAPT_DELTA = 0.8
DEFAULT_MAX_TREEDEPTH = 10
#: Chains (run in parallel) and warm-up / kept iterations per chain (Stan's defaults).
DEFAULT_CHAINS = 4
DEFAULT_ITER_WARMUP = 1000
DEFAULT_ITER_SAMPLING = 1000
#: The fewest kept iterations per chain: the split R-hat and the effective sample size cut
#: each chain in two halves of at least two draws; with fewer, every diagnostic is NaN and
#: no claim can be made.
MIN_ITER_SAMPLING = 4

#: How many draws a fit keeps: ``"auto"`` samples in rounds until no claim lies within Monte
#: Carlo error of its threshold (or the budget below is spent); ``"fixed"`` keeps exactly
#: ``chains * iter_sampling``.
DrawsMode = Literal["auto", "fixed"]
DRAWS_MODES: tuple[DrawsMode, ...] = ("auto", "fixed")
DEFAULT_DRAWS: DrawsMode = "auto"
#: ``draws="auto"``: at most this many times the first round's draws in all.
SETTLE_BUDGET = 4
#: ``draws="auto"``: the kept draws (beta, and per fitted pair the log-likelihood and
#: replicated wins) may not grow past this many bytes for the extra rounds.
SETTLE_MEMORY = 1 << 30


def as_dict() -> dict[str, Any]:
    """All options as plain JSON-able data, e.g. for the front end (one trait)."""
    return {
        "ties": [[k, v] for k, v in TIE_LABELS.items()],
        "hyperpriors": [[k, v.label, v.default_scale] for k, v in HYPERPRIOR_FAMILIES.items()],
        "interpretations": [[k, v] for k, v in INTERPRETATION_LABELS.items()],
        "d_min": {"min": D_MIN_RANGE[0], "max": D_MIN_RANGE[1], "step": D_MIN_STEP},
        "tie_threshold": {"min": 0.0, "step": TIE_THRESHOLD_STEP},
        "prior_scale": {"min": PRIOR_SCALE_RANGE[0], "max": PRIOR_SCALE_RANGE[1]},
        "rope": list(DEFAULT_ROPE),
        "hdi": DEFAULT_HDI,
        "hdi_range": {"min": HDI_RANGE[0], "max": HDI_RANGE[1]},
        # the glossary and the tooltips of the controls that are a term, from one table
        "terms": [[key, t.name, t.text, t.section] for key, t in TERMS.items()],
        "control_help": {trait: control_help(trait) for trait in CONTROL_TERMS},
        "cost": dict(COST_TEXT),
    }
