"""Methods and results paragraph for a manuscript, generated from a fit (nothing typed by hand),
and the report's text model: its author-year citations (``\\cite`` in LaTeX), the claims near
a threshold and their mark.

Claims are phrased as the paper recommends: Sec. 9.2 (weak interpretation: above_50 and
in_rope with a 0.95 threshold) and Sec. 9.3 (strong interpretation: mean P(a > b) above
0.70 is a claim of superiority, below the ROPE's upper bound of equivalence). Each paragraph
says each fact once and stays within a paper's length (:data:`MAX_ANALYSIS_WORDS`,
:data:`MAX_RESULTS_WORDS`): the report's tables hold what the text leaves out.
"""

from __future__ import annotations

import importlib.metadata as md
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..charts.frames_decisions import claim_counts
from ..core.bidi import isolate
from ..core.options import (
    DEFAULT_HDI,
    DEFAULT_INTERPRETATION,
    DEFAULT_ROPE,
    MANY_ALGORITHMS,
    Interpretation,
    Rule,
    RuleChoice,
    resolve_interpretation,
)
from ..core.posterior import STRONG_THRESHOLD, WEAK_THRESHOLD
from ..core.wording import counted
from ._atomic import owned_files, refuse_link
from .citations import REFERENCES
from .escape import ESCAPERS

if TYPE_CHECKING:
    import pandas as pd

    from ..core.result import BBTResult

#: The report's formats, by file suffix (here, not with the writer, which imports Altair: the
#: command checks its output's suffix and figures folder before any fit, with nothing slow
#: imported).
REPORT_FORMATS = ("html", "md", "tex")


def figures_folder(path: str | Path) -> Path | None:
    """The folder beside a report where it writes its figures: ``<stem>_md_figures`` for
    ``.md``, ``<stem>_tex_figures`` for ``.tex`` (a .md and a .tex report of the same name
    keep their own figures); ``None`` for HTML, whose charts are inline."""
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    return path.with_name(f"{path.stem}_{fmt}_figures") if fmt in ("md", "tex") else None


def tables_folder(path: str | Path) -> Path:
    """The folder beside a report where it writes every table as CSV: ``<stem>_html_tables``
    for ``.html``, ``<stem>_md_tables`` for ``.md``, ``<stem>_tex_tables`` for ``.tex`` (two
    reports of the same name in two formats never share their tables)."""
    path = Path(path)
    return path.with_name(f"{path.stem}_{path.suffix.lstrip('.').lower()}_tables")


def bib_path(path: str | Path) -> Path:
    """The BibTeX file a LaTeX report writes beside it: ``<stem>.bib``, the references of
    the methods it ran (``\\bibliography{<stem>}`` in a manuscript cites them)."""
    return Path(path).with_suffix(".bib")


def check_report_paths(path: str | Path) -> None:
    """Refuse, before any work, a report whose writing would touch what bbt-widget did not
    write: a symbolic link where the report (or its ``.bib``) or one of its folders goes, or
    a figures or tables folder holding a file no earlier report wrote there (see
    :func:`~bbt_widget.outputs._atomic.owned_files`).

    Raises
    ------
    OutputConflictError
        Naming the path and what to do.
    """
    path = Path(path)
    for file in (path, bib_path(path)) if path.suffix.lower() == ".tex" else (path,):
        refuse_link(file)
    figures = figures_folder(path)
    if figures is not None:
        owned_files(figures, "the report's figures folder")
    owned_files(tables_folder(path), "the report's tables folder")


PAPER = (
    "Wainer, A Bayesian Bradley-Terry model to compare multiple ML algorithms on multiple data sets"
)
_TIES = {
    "spread": "each algorithm was given half of the ties, rounded up (spread policy)",
    "add": "each tie was counted as a win for both algorithms (add policy)",
    "forget": "ties were discarded (forget policy)",
    "davidson": "ties were modelled explicitly with Davidson's extension, a trinomial likelihood",
}
#: The hyper-prior on sigma per family: (LaTeX, plain text with Greek letters).
_PRIORS = {
    "lognormal": (r"\mathrm{LogNormal}(0, {s})", "LogNormal(0, {s})"),
    "cauchy": (r"\mbox{half-Cauchy}(0, {s})", "half-Cauchy(0, {s})"),
    "normal": (r"\mbox{half-Normal}(0, {s})", "half-Normal(0, {s})"),
}


def package_version(dist: str) -> str:
    """The installed version of ``dist``, or ``"not installed"``."""
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return "not installed"


def _fmt(x: float) -> str:
    return f"{x:.2f}"


@dataclass(frozen=True)
class Styled:
    """A span of the paragraph in a style (``"em"``, ``"code"`` or ``"math"``); plain spans
    are str. A math span's ``text`` is LaTeX, set as inline math in LaTeX and Markdown
    (``$...$``); HTML shows ``plain``, the same formula in text with Greek letters."""

    text: str
    style: str
    plain: str = ""


#: (opening, closing) markup of each style per format; the text between is escaped.
_STYLES = {
    "md": {"em": ("*", "*"), "code": ("`", "`"), "math": ("$", "$"), "cite": ("", "")},
    "tex": {
        "em": ("\\emph{", "}"),
        "code": ("\\texttt{", "}"),
        "math": ("$", "$"),
        "cite": ("", ""),
    },
    "html": {
        "em": ("<em>", "</em>"),
        "code": ("<code>", "</code>"),
        "math": ("", ""),
        "cite": ("", ""),
    },
}


def render(spans: Sequence[str | Styled], format: str) -> str:
    """The paragraph in ``format``: every span escaped once by that format's escaper, so
    names print literally whatever characters they hold."""
    escape = ESCAPERS[format]
    out = []
    for span in spans:
        if isinstance(span, Styled):
            # code spans hold our own identifiers (file name, hash); Markdown code spans
            # print backslashes literally, so they are not backslash-escaped there
            if span.style == "math":  # our own LaTeX, not user text; HTML prints it as text
                text = escape(span.plain) if format == "html" else span.text
            elif span.style == "cite":  # \\cite in LaTeX (the .bib resolves it), else author-year
                text = span.text if format == "tex" else escape(span.plain)
            elif (format, span.style) == ("md", "code"):
                text = span.text
            else:
                text = escape(span.text)
            opening, closing = _STYLES[format][span.style]
            out.append(opening + text + closing)
        else:
            out.append(escape(span))
    return "".join(out)


def methods_text(
    result: BBTResult,
    *,
    format: str = "md",
    interpretation: RuleChoice = DEFAULT_INTERPRETATION,
    rope: Sequence[float] = DEFAULT_ROPE,
    hdi: float = DEFAULT_HDI,
) -> str:
    """The analysis paragraph (a paper's "Statistical analysis": metric, data, model, prior,
    ROPE, decision rule, sampler and software, at most :data:`MAX_ANALYSIS_WORDS` words), then
    the results paragraph (diagnostics, posterior predictive check, claims, at most
    :data:`MAX_RESULTS_WORDS` words), each fact once, cited by author and year
    (``\\cite`` in LaTeX). Seeds, hashes and engine builds are the report's provenance.

    Parameters
    ----------
    result
        The fit to describe.
    format
        ``"md"`` (Markdown), ``"tex"`` (LaTeX) or ``"html"`` (an HTML fragment).
    interpretation
        The rule the named claims follow: ``"auto"`` (strong with more than 10 algorithms,
        weak otherwise, :func:`bbt_widget.core.options.resolve_interpretation`), ``"weak"``
        (Sec. 9.2) or ``"strong"`` (Sec. 9.3). The paragraph says which and why.
    rope, hdi
        ROPE and HDI mass of the claims.
    """
    if format not in _STYLES:
        raise ValueError(f"format must be 'md', 'tex' or 'html', got {format!r}")
    rule = resolve_interpretation(interpretation, len(result.algorithms))
    summary = result.summary(rope=rope, hdi=hdi)
    rope = tuple(float(v) for v in rope)
    # each paragraph is a list of spans, plain text or styled, escaped per format when
    # rendered: names are never read as markup in any format
    analysis = _analysis(result, rule, rope)
    results = " ".join(_results(result, summary, rule.rule, rope, hdi))
    return paragraphs([render(analysis, format), render([results], format)], format)


def paragraphs(texts: Sequence[str], format: str) -> str:
    """Paragraphs already rendered in ``format``, set apart as that format sets them."""
    if format == "html":  # (a text of paragraphs already is not wrapped again)
        return "".join(t if t.startswith("<p>") else f"<p>{t}</p>" for t in texts if t)
    return "\n\n".join(t for t in texts if t)


#: The longest analysis and results paragraphs, in words (a paper's methods section).
MAX_ANALYSIS_WORDS = 150
MAX_RESULTS_WORDS = 100


def cite(*keys: str, where: str = "") -> Styled:
    """An author-year citation of ``keys`` (:data:`~bbt_widget.outputs.citations.REFERENCES`),
    e.g. "(Wainer 2022, Sec. 9.3)" or "(Friedman 1937; Demšar 2006)", with ``where`` the
    place in the (single) work; ``\\cite`` in LaTeX, resolved by the report's ``.bib``."""
    names = "; ".join(REFERENCES[k].short for k in keys)
    joined = ",".join(keys)
    if where:
        tex = rf"\cite[{where.replace(' ', '~')}]{{{joined}}}"
        return Styled(tex, "cite", f"({names}, {where})")
    return Styled(rf"\cite{{{joined}}}", "cite", f"({names})")


def _analysis(
    result: BBTResult, rule: Interpretation, rope: tuple[float, ...]
) -> list[str | Styled]:
    """The statistical-analysis paragraph: metric, data, counting, model, prior, ROPE,
    decision rule and why, sampler and software, each once (run details such as the seed and
    hashes are the provenance's)."""
    s = result.settings
    n_alg = len(result.algorithms)
    out: list[str | Styled] = []
    if result.tidy is not None:
        tidy = result.tidy
        what = f"{n_alg} algorithms on {counted(len(tidy.datasets), 'data set')}"
        counts = tidy.fold_counts[tidy.fold_counts > 0]
        if tidy.has_folds:
            k = int(counts.max())
            what += f" ({k if counts.min() == k else f'up to {k}'} folds each)"
        if s.get("score"):
            direction = "lower" if s["lower_is_better"] else "higher"
            what += f" by {s['score']} ({direction} is better)"
    else:
        what = f"{n_alg} algorithms from a given win/loss table"
    out += [f"We compared {what} with the Bayesian Bradley-Terry (BBT) model "]
    out += [cite("wainer2022bbt", "bradley1952"), ". "]
    if result.tidy is not None:
        out.append(_counting(s) + " ")
    tie_text = _TIES[s["ties"]]
    out.append(tie_text[0].upper() + tie_text[1:])
    if s["ties"] == "davidson":
        out += [" ", cite("davidson1970")]
    prior_tex, prior_txt = (
        f.replace("{s}", f"{s['prior_scale']:g}") for f in _PRIORS[s["hyperprior"]]
    )
    model = Styled(
        rf"\beta_i \sim \mathcal{{N}}(0, \sigma),\ \sigma \sim {prior_tex}",
        "math",
        f"\u03b2\u1d62 ~ Normal(0, \u03c3), \u03c3 ~ {prior_txt}",
    )
    out += [". The abilities had the hierarchical prior ", model, ". "]
    out += _rule_sentence(rule, rope, n_alg)
    out += _sampler(result)
    return out


def _rule_sentence(rule: Interpretation, rope: tuple[float, ...], n_alg: int) -> list[str | Styled]:
    """The decision rule the claims follow, and why it was taken, in one sentence."""
    rope_txt = f"[{rope[0]:g}, {rope[1]:g}]"
    if rule.rule == "weak":
        claim = (
            "at least 95% of the posterior of P(a > b) lay above 0.5, and equivalent when at "
            f"least 95% lay inside the ROPE {rope_txt}"
        )
    else:
        claim = (
            "the posterior mean of P(a > b) exceeded 0.70, and equivalent when it lay inside "
            f"the ROPE {rope_txt}"
        )
    section = "Sec. 9.2" if rule.rule == "weak" else "Sec. 9.3"
    many = n_alg > MANY_ALGORITHMS
    if not rule.requested:  # auto: the paper's advice by number of algorithms (Sec. 5.6)
        why = (
            f", advised beyond {MANY_ALGORITHMS} algorithms"
            if many
            else f", the paper's choice for up to {MANY_ALGORITHMS} algorithms"
        )
    elif rule.rule == "weak" and many:
        why = f", although the paper advises the strong rule beyond {MANY_ALGORITHMS} algorithms"
    else:
        why = ""
    where = f"Secs. 5.6 and {section[5:]}" if why else section
    return [
        f"A pair was claimed different when {claim}: the {rule.rule} rule{why} ",
        cite("wainer2022bbt", where=where),
        ". ",
    ]


def _counting(s: Mapping[str, Any]) -> str:
    """How a data set became a win, a loss or a tie, in one sentence."""
    direction = "lower" if s["lower_is_better"] else "higher"
    text = f"On each data set where both had a score, the {direction} mean score won"
    if s["d_min"] is not None:
        effect = "the paired effect size d_z" if s["paired"] else "the unpaired Cohen's d"
        text += f" when {effect} over the folds exceeded d_min = {s['d_min']:g} (local ROPE)"
    if s.get("tie_threshold"):
        either = " (a tie under either rule was a tie)" if s["d_min"] is not None else ""
        text += (
            f"; mean scores differing by at most {s['tie_threshold']:g} (the tie threshold, "
            f"in score units) were a tie{either}"
        )
    return text + "."


def _sampler(result: BBTResult) -> list[str | Styled]:
    """The sampler, its settings and the software, in one sentence."""
    s = result.settings
    engine = s["engine"]
    # draws="auto" may have added chains until the claims settled: the chains kept are told
    runs = f"{_chains_kept(result)} chains of {s['iter_warmup']} warm-up and "
    runs += str(s["iter_sampling"])
    software = f"bbt-widget {package_version('bbt-widget')}"
    if engine == "numpy" and "independence" in str(result.draws.info.get("kernel")).split("+"):
        # the Gibbs sweeps started the warm-up; the kept draws are the independence kernel's
        return [
            "Pólya-Gamma Gibbs sampling ",
            cite("polson2013"),
            f" began the {s['iter_warmup']} warm-up iterations; the posterior being near "
            "normal, a cheaper independence Metropolis-Hastings kernel with a normal proposal ",
            cite("tierney1994"),
            f" then drew {_chains_kept(result)} chains of {s['iter_sampling']} draws, thinned "
            f"by {result.draws.info['thin']} ({software}, numpy {package_version('numpy')}).",
        ]
    if engine == "numpy" and "davidson" in str(result.draws.info.get("kernel")).split("+"):
        return [
            "The posterior was sampled exactly by Metropolis-Hastings ",
            cite("tierney1994"),
            " (independence proposals from a mixture of the normal approximation at the mode "
            f"and a wider one, with random-walk and scale moves; {runs} kept draws) with "
            f"{software} and numpy {package_version('numpy')}.",
        ]
    if engine == "numpy":
        return [
            "The posterior was sampled by Pólya-Gamma Gibbs sampling ",
            cite("polson2013"),
            f", {runs} kept sweeps ({software}, numpy {package_version('numpy')}).",
        ]
    return [
        "The posterior was sampled with Stan's NUTS ",
        cite("carpenter2017stan"),
        f", {runs} sampling iterations ({software}, {engine} {package_version(engine)}).",
    ]


def _words(parts: Sequence[str]) -> int:
    return sum(len(p.split()) for p in parts)


def _results(
    result: BBTResult, summary: pd.DataFrame, rule: Rule, rope: tuple[float, ...], hdi: float
) -> list[str]:
    """The results paragraph, sentence by sentence: what reading and counting left out, the
    diagnostics, the posterior predictive check, the claims under ``rule`` (counted, then as
    many named as the paragraph's :data:`MAX_RESULTS_WORDS` leave room for, the table holding
    the others), those near a threshold, and their Monte Carlo precision."""
    s = result.settings
    head: list[str] = []
    if result.tidy is not None:
        if n_out := len(result.tidy.dropped_datasets):
            head.append(
                f"{counted(n_out, 'further data set')}, with a score for fewer than two "
                f"algorithms, {'was' if n_out == 1 else 'were'} left out."
            )
        if s["d_min"] is not None and s["paired"]:
            if n_fewer := len(result.tidy.fold_mismatch_datasets):
                head.append(
                    f"On {counted(n_fewer, 'data set')} some algorithms lacked folds: pairs "
                    "were paired on the folds both had, and treated as missing with fewer "
                    "than 2."
                )
    if s["ties"] == "davidson":
        head.append(f"There were {counted(int(result.win_table['ties'].sum()), 'tie')} in all.")
    diag = result.diagnostics()
    if diag.ok:
        nuts = f", no divergent transitions, E-BFMI >= {diag.min_ebfmi:.2f}" if diag["nuts"] else ""
        head.append(
            f"Convergence diagnostics passed (max R-hat {diag.max_rhat:.3f}, min bulk ESS "
            f"{diag.min_ess_bulk:.0f}, min tail ESS {diag.min_ess_tail:.0f}{nuts})."
        )
    else:
        head.append(
            "Convergence diagnostics FAILED (" + "; ".join(diag.messages) + "): do not report "
            "these results until this is fixed."
        )
    ppc = result.ppc_table().set_index("hdi")["proportion"]
    head.append(
        f"Posterior predictive check: {ppc[0.9]:.0%} of the observed win counts inside their "
        f"90% HDI ({ppc[0.5]:.0%} inside the 50%)."
    )
    head.append(_tally(summary, rule))
    near = near_threshold(summary, rule, rope)
    tail = [precision_sentence(result, rule, rope, hdi)]
    if n_near := int(near.sum()):
        tail.insert(0, near_sentence(n_near))
    order = [str(a) for a in result.ranking(hdi=hdi)["algorithm"]]
    room = MAX_RESULTS_WORDS - _words(head) - _words(tail)
    return head + _claims(summary, rule, order, near, room) + tail


def _tally(summary: pd.DataFrame, rule: Rule) -> str:
    """The claims under ``rule`` counted, in one sentence."""
    c = claim_counts(summary).set_index("interpretation").loc[rule]
    n_better, n_equiv = int(c["better"]), int(c["equivalent"])
    text = (
        f"Of the {counted(len(summary), 'pair')}, {n_better} {'was' if n_better == 1 else 'were'} "
        f"claimed different and {n_equiv} equivalent"
    )
    if apart := int(c["not compared"]):
        text += (
            f"; {counted(apart, 'pair')} across groups of algorithms that never met on a "
            "common data set were not compared"
        )
    return text + "."


#: How close (in probability) a claim's deciding quantity may come to its threshold before
#: the report marks the claim with :data:`NEAR_MARK`.
NEAR_MARGIN = 0.005
NEAR_MARK = "\u2020"


#: What the mark means, for the definitions of the columns that carry it.
NEAR_NOTE = (
    f"{NEAR_MARK} marks a claim within {NEAR_MARGIN:g} of its threshold: a small change in the "
    "data could change it."
)


def near_sentence(n: int) -> str:
    """What :data:`NEAR_MARK` means, in one sentence, for ``n`` marked claims."""
    one = n == 1
    return (
        f"{counted(n, 'claim')} ({NEAR_MARK}) {'lies' if one else 'lie'} within "
        f"{NEAR_MARGIN:g} of {'its threshold' if one else 'their thresholds'}: a small change "
        f"in the data could change {'it' if one else 'them'}."
    )


def near_threshold(summary: pd.DataFrame, rule: Rule, rope: Sequence[float]) -> pd.Series:
    """Per row of ``summary``: whether ``rule`` makes a claim there whose deciding quantity
    lies within :data:`NEAR_MARGIN` of the threshold it passed (weak: ``above_50`` for a
    difference, ``in_rope`` for an equivalence, against 0.95; strong: the mean against 0.70
    or the ROPE's bounds)."""
    decision = summary[rule].astype(str)
    differ = decision.isin(["a better", "b better"])
    same = decision == "equivalent"
    mean = summary["mean"].astype(float)
    if rule == "weak":
        above = summary["above_50"].astype(float)
        gap_differ = (np.maximum(above, 1 - above) - WEAK_THRESHOLD).abs()
        gap_same = (summary["in_rope"].astype(float) - WEAK_THRESHOLD).abs()
    else:
        gap_differ = (np.maximum(mean, 1 - mean) - STRONG_THRESHOLD).abs()
        gap_same = np.minimum(mean - float(rope[0]), float(rope[1]) - mean).abs()
    return (differ & (gap_differ < NEAR_MARGIN)) | (same & (gap_same < NEAR_MARGIN))


def mark_near(
    frame: pd.DataFrame, summary: pd.DataFrame, rule: Rule, rope: Sequence[float]
) -> pd.DataFrame:
    """``frame`` (a table with ``alg_a`` and ``alg_b``) with :data:`NEAR_MARK` after each
    decision of a claim near its threshold (:func:`near_threshold`): in its ``weak`` and
    ``strong`` columns by their own rule, in its ``decision`` column by ``rule``, the report's.
    The report's tables show it; their CSV files keep the decisions as they are."""
    columns = [c for c in ("weak", "strong", "decision") if c in frame.columns]
    if not columns or not {"alg_a", "alg_b"} <= set(frame.columns):
        return frame
    keys = [frozenset(p) for p in zip(summary["alg_a"].astype(str), summary["alg_b"].astype(str))]
    out = frame.copy()
    rows = [frozenset(p) for p in zip(frame["alg_a"].astype(str), frame["alg_b"].astype(str))]
    for column in columns:
        which = cast("Rule", column) if column in ("weak", "strong") else rule
        near = {k for k, n in zip(keys, near_threshold(summary, which, rope)) if n}
        hit = [row in near for row in rows]
        out[column] = [f"{v} {NEAR_MARK}" if h else v for v, h in zip(out[column], hit)]
    return out


#: Pairs above which the Monte Carlo errors are not computed for the text (a second or so
#: per thousand pairs).
PRECISION_MAX_PAIRS = 5000


#: Pairs the precision sentence names when they lie near a threshold (``unsettled()`` has
#: them all).
MAX_UNSETTLED_NAMED = 3


def precision_sentence(
    result: BBTResult,
    interpretation: Rule,
    rope: Sequence[float],
    hdi: float,
    z: float = 3.0,
) -> str:
    """The Monte Carlo precision of the claims under ``interpretation``, in a sentence:
    the pairs whose deciding quantity lies within ``z`` standard errors of a threshold of
    the rule (they could change with the seed, so no claim is made: "unsettled at this
    precision"), or that there are none, with the largest standard error of a mean of
    P(a > b)."""
    pairs = len(result.algorithms) * (len(result.algorithms) - 1) // 2
    if pairs > PRECISION_MAX_PAIRS:
        return (
            f"Monte Carlo standard errors were not computed for the text ({pairs} pairs; "
            "`result.unsettled()` gives them)."
        )
    rope = (float(rope[0]), float(rope[1]))
    largest = float(result.precision(rope)["mcse_mean"].max())
    found = result.unsettled(rope, hdi, z)
    found = found[found["rule"] == interpretation].drop_duplicates("pair")
    errors = f"at most {largest:.2g}"
    if found.empty:
        return f"No pair lies within {z:g} Monte Carlo standard errors ({errors}) of a threshold."
    listed = [
        f"{r.pair} ({r.quantity.replace('_', '.')} {_with_error(r.value, r.mcse)} against "
        f"{r.threshold:g})"
        for r in found.itertuples(index=False)
    ]
    if len(listed) > MAX_UNSETTLED_NAMED:
        more = len(listed) - MAX_UNSETTLED_NAMED
        listed = [*listed[:MAX_UNSETTLED_NAMED], f"{more} more (`result.unsettled()`)"]
    n = len(found)
    return (
        f"{counted(n, 'pair')} {'lies' if n == 1 else 'lie'} within {z:g} Monte Carlo "
        f"standard errors ({errors}) of a threshold after {_draws_phrase(result)}, so no "
        f"claim is made (unsettled at this precision): {'; '.join(listed)}."
    )


def _chains_kept(result: BBTResult) -> int:
    """The chains the fit kept: ``draws="auto"`` may have added some to the first round's."""
    s = result.settings
    return int(s.get("chains_drawn") or s.get("chains") or 0)


def _draws_phrase(result: BBTResult) -> str:
    """How many draws the fit kept, and why (the rounds of ``draws="auto"``)."""
    s = result.settings
    total = _chains_kept(result) * int(s.get("iter_sampling") or 0)
    if s.get("draws") == "auto" and int(s.get("rounds") or 1) > 1:
        return f"{total} draws (sampling went on while a claim could still settle)"
    return f"{total} draws"


def rules(rope: Sequence[float]) -> dict[str, str]:
    """The two decision rules in words, by interpretation (one definition for every output)."""
    rope_txt = f"[{rope[0]:g}, {rope[1]:g}]"
    return {
        "weak": (
            "under the weak interpretation (Wainer 2022, Sec. 9.2), a pair is claimed "
            "different when at least 95% of the posterior of P(a > b) lies above 0.5 "
            f"(above.50 >= 0.95) and equivalent when at least 95% lies in the ROPE {rope_txt} "
            "(in.rope >= 0.95)"
        ),
        "strong": (
            "under the strong interpretation (Wainer 2022, Sec. 9.3), a pair is claimed "
            "different when the posterior mean of P(a > b) exceeds 0.70 and equivalent when it "
            f"lies inside the ROPE {rope_txt}"
        ),
    }


def _clearest(summary: pd.DataFrame, interpretation: Rule) -> tuple[list[Any], list[Any]]:
    """Better and equivalence claims under ``interpretation``, clearest first, as rows with
    the better algorithm as ``alg_a``."""
    col = summary[interpretation].astype(str)
    better = summary[col.isin(["a better", "b better"])].copy()
    flip = col[better.index] == "b better"
    better.loc[flip, ["alg_a", "alg_b"]] = better.loc[flip, ["alg_b", "alg_a"]].to_numpy()
    for name in ("mean", "above_50"):
        better.loc[flip, name] = 1.0 - better.loc[flip, name]
    lo, hi = better.loc[flip, "low"].copy(), better.loc[flip, "high"].copy()
    better.loc[flip, "low"], better.loc[flip, "high"] = 1.0 - hi, 1.0 - lo
    equiv = summary[col == "equivalent"].copy()
    equiv["_gap"] = (equiv["mean"] - 0.5).abs()
    if interpretation == "weak":
        better = better.sort_values(["above_50", "mean"], ascending=False, kind="stable")
        equiv = equiv.sort_values(["in_rope", "_gap"], ascending=[False, True], kind="stable")
    else:
        better = better.sort_values(["mean", "low"], ascending=False, kind="stable")
        equiv = equiv.sort_values("_gap", kind="stable")
    return list(better.itertuples()), list(equiv.itertuples())


def _claims(
    summary: pd.DataFrame,
    interpretation: Rule,
    order: Sequence[str],
    near: pd.Series,
    room: int,
) -> list[str]:
    """Sentences naming the claims a reader needs first, in at most ``room`` words (the first
    in any case): those between neighbours in the ranking (``order``, best first), then the
    equivalences,
    clearest first, each with the quantity that decided it and marked when ``near`` its
    threshold; the table of P(a > b) per pair holds the others."""
    better, equiv = _clearest(summary, interpretation)
    if not better and not equiv:
        return []
    marked = set(summary.index[near.to_numpy()])
    rank = {name: k for k, name in enumerate(order)}
    neighbours = sorted(
        (r for r in better if abs(rank[str(r.alg_a)] - rank[str(r.alg_b)]) == 1),
        key=lambda r: min(rank[str(r.alg_a)], rank[str(r.alg_b)]),
    )
    weak = interpretation == "weak"
    items: list[str] = []
    for kind, rows in (("better", neighbours), ("equivalent", equiv)):
        for k, r in enumerate(rows):
            value = r.mean if not weak else (r.above_50 if kind == "better" else r.in_rope)
            label = "mean P(a > b) " if not weak and not items else ""
            if weak and not k:
                label = "above.50 " if kind == "better" else "in.rope "
            # words, not ">": a name may hold " > " itself
            link = "is better than" if kind == "better" else "is equivalent to"
            mark = NEAR_MARK if r.Index in marked else ""
            items.append(
                f"{isolate(r.alg_a)} {link} {isolate(r.alg_b)} ({label}{_fmt(value)}{mark})"
            )
    total = len(better) + len(equiv)
    # as many as fit, in that order (the words grow with each one named); the first always,
    # the answer a reader looks for even when long names or failed diagnostics take the room
    shown = len(items)
    while shown > 1 and _words(_named(items[:shown], total - shown)) > room:
        shown -= 1
    return _named(items[:shown], total - shown)


def _named(items: list[str], rest: int) -> list[str]:
    """The sentence naming the claims ``items``; ``rest``: how many the table holds besides."""
    out = ["We claim " + "; ".join(items) + "."] if items else []
    if rest:
        other = "other " if out else ""
        what = "claim" if rest == 1 else f"{rest} claims"
        out.append(f"The per-pair table of P(a > b) has the {other}{what}.")
    return out


def _with_error(value: float, error: float) -> str:
    """``value ± error`` with the error to two significant digits and the value to as many
    decimals (at least four): conditional estimates carry errors of 1e-5 and less, which a
    fixed four decimals would print as 0.0000."""
    decimals = 4 if not error > 0 else max(4, 1 - math.floor(math.log10(error)))
    return f"{value:.{decimals}f} ± {error:.{decimals}f}"
