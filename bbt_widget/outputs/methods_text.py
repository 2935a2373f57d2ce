"""Methods and results paragraph for a manuscript, generated from a fit (nothing typed by hand).

Claims are phrased as the paper recommends: Sec. 9.2 (weak interpretation: above_50 and
in_rope with a 0.95 threshold) and Sec. 9.3 (strong interpretation: mean P(a > b) above
0.70 is a claim of superiority, below the ROPE's upper bound of equivalence).
"""

from __future__ import annotations

import importlib.metadata as md
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..charts.frames_decisions import claim_counts
from ..core.bidi import isolate
from ..core.options import (
    DEFAULT_HDI,
    DEFAULT_INTERPRETATION,
    DEFAULT_ROPE,
    Interpretation,
    Rule,
    RuleChoice,
    resolve_interpretation,
)
from ._atomic import owned_files, refuse_link
from .export import ESCAPERS

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
    "spread": "each tie was counted as half a win for each algorithm, rounded up (spread policy)",
    "add": "each tie was counted as a win for both algorithms (add policy)",
    "forget": "ties were discarded (forget policy)",
    "davidson": "ties were modelled explicitly with Davidson's extension (trinomial likelihood)",
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
            elif span.style == "cite":  # \\cite in LaTeX (the .bib resolves it), else [n]
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
    """The methods paragraph (a paper's "Statistical analysis": metric, data, model, prior,
    ROPE, decision rule, sampler and software, at most 150 words, numbered citations as the
    report's references list them, ``\\cite`` in LaTeX), then a results paragraph
    (diagnostics, posterior predictive check, claims). Seeds, hashes and engine builds are the
    report's provenance.

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
    interpretation = rule.rule
    summary = result.summary(rope=rope, hdi=hdi)
    rope = tuple(float(v) for v in rope)
    # each paragraph is a list of spans, plain text or styled, escaped per format when
    # rendered: names are never read as markup in any format
    analysis = _analysis(result, interpretation, rule.requested, rope)
    spans: list[str | Styled] = []
    for k, part in enumerate(_results(result, summary, rule, rope, hdi)):
        spans += ([" "] if k else []) + ([part] if isinstance(part, str) else part)
    return paragraphs([render(analysis, format), render(spans, format)], format)


def paragraphs(texts: Sequence[str], format: str) -> str:
    """Paragraphs already rendered in ``format``, set apart as that format sets them."""
    if format == "html":  # (a text of paragraphs already is not wrapped again)
        return "".join(t if t.startswith("<p>") else f"<p>{t}</p>" for t in texts if t)
    return "\n\n".join(t for t in texts if t)


def _cite(result: BBTResult, key: str, where: str = "") -> Styled:
    """A numbered citation of ``key``, numbered as the report's references list it (the
    BBT fit's works come first there); ``\\cite`` in LaTeX, resolved by the ``.bib``."""
    from .citations import references

    n = [r.key for r in references(result)].index(key) + 1
    tex = rf"\cite[{where.replace(' ', '~')}]{{{key}}}" if where else rf"\cite{{{key}}}"
    return Styled(tex, "cite", f"[{n}, {where}]" if where else f"[{n}]")


def _analysis(
    result: BBTResult, interpretation: Rule, requested: bool, rope: tuple[float, ...]
) -> list[str | Styled]:
    """The statistical-analysis paragraph: metric, data, counting, model, prior, ROPE,
    decision rule, sampler and software, each once, with numbered citations (run details
    such as the seed and hashes are the provenance's)."""
    s = result.settings
    n_alg = len(result.algorithms)
    out: list[str | Styled] = []
    if result.tidy is not None:
        tidy = result.tidy
        what = f"{n_alg} algorithms on {len(tidy.datasets)} data sets"
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
    out += [_cite(result, "wainer2022bbt"), ", which extends Bradley and Terry's model "]
    out += [_cite(result, "bradley1952"), ". "]
    if result.tidy is not None:
        out.append(_counting(s) + " ")
    tie_text = _TIES[s["ties"]]
    out.append(tie_text[0].upper() + tie_text[1:])
    if s["ties"] == "davidson":
        out += [" ", _cite(result, "davidson1970")]
    prior_tex, prior_txt = (
        f.replace("{s}", f"{s['prior_scale']:g}") for f in _PRIORS[s["hyperprior"]]
    )
    model = Styled(
        rf"\beta_i \sim \mathcal{{N}}(0, \sigma),\ \sigma \sim {prior_tex}",
        "math",
        f"\u03b2\u1d62 ~ Normal(0, \u03c3), \u03c3 ~ {prior_txt}",
    )
    out += [". The abilities had the hierarchical prior ", model, ". "]
    rope_txt = f"[{rope[0]:g}, {rope[1]:g}]"
    if interpretation == "weak":
        claim = (
            "at least 95% of the posterior of P(a > b) lay above 0.5, and equivalent when at "
            f"least 95% lay inside the ROPE {rope_txt}"
        )
    else:
        claim = (
            "the posterior mean of P(a > b) exceeded 0.70, and equivalent when it lay inside "
            f"the ROPE {rope_txt}"
        )
    section = "Sec. 9.2" if interpretation == "weak" else "Sec. 9.3"
    out += [f"A pair was claimed different when {claim} ({interpretation} rule "]
    out += [_cite(result, "wainer2022bbt", section)]
    if not requested:  # why auto chose it: the paper's advice by number of algorithms
        out += [
            f", the default for {n_alg} algorithms ",
            _cite(result, "wainer2022bbt", "Sec. 5.6"),
        ]
    out += ["). "]
    out += _sampler(result)
    return out


def _counting(s: Mapping[str, Any]) -> str:
    """How a data set became a win, a loss or a tie, in one sentence."""
    direction = "lower" if s["lower_is_better"] else "higher"
    text = f"A data set was a win for the algorithm with the {direction} mean score"
    if s["d_min"] is not None:
        effect = (
            "the effect size d_z of the paired fold differences" if s["paired"] else ("Cohen's d")
        )
        kind = "paired" if s["paired"] else "unpaired"
        text += f" when {effect} exceeded d_min = {s['d_min']:g} ({kind} local ROPE)"
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
            "The posterior was sampled exactly by Pólya-Gamma Gibbs sampling ",
            _cite(result, "polson2013"),
            " followed by independence Metropolis-Hastings ",
            _cite(result, "tierney1994"),
            f" from the normal approximation at the mode ({runs} kept draws, one every "
            f"{result.draws.info['thin']} steps) with {software} and numpy "
            f"{package_version('numpy')}.",
        ]
    if engine == "numpy" and "davidson" in str(result.draws.info.get("kernel")).split("+"):
        return [
            "The posterior was sampled exactly by Metropolis-Hastings ",
            _cite(result, "tierney1994"),
            " (independence proposals from a mixture of the normal approximation at the mode "
            f"and a wider one, with random-walk and scale moves; {runs} kept draws) with "
            f"{software} and numpy {package_version('numpy')}.",
        ]
    if engine == "numpy":
        return [
            "The posterior was sampled exactly by Pólya-Gamma Gibbs sampling ",
            _cite(result, "polson2013"),
            f" ({runs} kept sweeps) with {software} and numpy {package_version('numpy')}.",
        ]
    return [
        "The posterior was sampled with Stan's NUTS ",
        _cite(result, "carpenter2017stan"),
        f" ({runs} sampling iterations) with {software} and {engine} {package_version(engine)}.",
    ]


def _results(
    result: BBTResult, summary: Any, rule: Interpretation, rope: tuple[float, ...], hdi: float
) -> list[str | list[str | Styled]]:
    """The results paragraph: what reading and counting left out, the diagnostics, the
    posterior predictive check, which decision rule the claims follow and why (``rule``),
    the claims and their Monte Carlo precision."""
    interpretation = rule.rule
    s = result.settings
    parts: list[str | list[str | Styled]] = []
    if result.tidy is not None:
        if n_out := len(result.tidy.dropped_datasets):
            parts.append(
                f"{n_out} further data set{'s' * (n_out != 1)}, with a score for fewer than "
                f"two algorithms, {'were' if n_out != 1 else 'was'} left out."
            )
        if s["d_min"] is not None and s["paired"]:
            if n_fewer := len(result.tidy.fold_mismatch_datasets):
                parts.append(
                    f"On {n_fewer} data set{'s' if n_fewer > 1 else ''} some algorithms "
                    "lacked folds: pairs were paired on the folds both had, and treated as "
                    "missing with fewer than 2."
                )
        parts.append(
            "Missing results were not counted, and means equal up to floating-point noise "
            "(relative difference below 1e-12) were ties."
        )
    if s["ties"] == "davidson":
        parts.append(f"There were {int(result.win_table['ties'].sum())} ties in all.")
    diag = result.diagnostics()
    if diag.ok:
        nuts = f", no divergent transitions, E-BFMI >= {diag.min_ebfmi:.2f}" if diag["nuts"] else ""
        parts.append(
            f"All convergence diagnostics passed (max R-hat {diag.max_rhat:.3f}, min bulk ESS "
            f"{diag.min_ess_bulk:.0f}, min tail ESS {diag.min_ess_tail:.0f}{nuts})."
        )
    else:
        parts.append(
            "Convergence diagnostics FAILED (" + "; ".join(diag.messages) + "): the results "
            "below should not be reported before this is fixed."
        )
    ppc = result.ppc_table().set_index("hdi")["proportion"]
    parts.append(
        f"In the posterior predictive check, {ppc[0.9]:.0%} of the observed win counts fell "
        f"inside the 90% HDI of their replicates ({ppc[0.5]:.0%} inside the 50% HDI)."
    )
    order = [str(a) for a in result.ranking(hdi=hdi)["algorithm"]]
    parts.append(rule.reason)
    parts += _claims(summary, interpretation, rope, hdi, order)
    parts.append(precision_sentence(result, interpretation, rope, hdi))
    return parts


#: Pairs above which the Monte Carlo errors are not computed for the text (a second or so
#: per thousand pairs).
PRECISION_MAX_PAIRS = 5000


def precision_sentence(
    result: BBTResult,
    interpretation: Rule,
    rope: Sequence[float],
    hdi: float,
    z: float = 3.0,
) -> str:
    """The Monte Carlo precision of the claims under ``interpretation``, in a sentence:
    the largest standard error of a reported mean of P(a > b), and the claims whose deciding
    quantity lies within ``z`` standard errors of its threshold (they could change with the
    seed: "unsettled at this precision"), or that there are none."""
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
    errors = f"the means of P(a > b) carry Monte Carlo standard errors up to {largest:.2g}"
    if found.empty:
        return (
            f"Every claim lies more than {z:g} Monte Carlo standard errors from its threshold "
            f"({errors})."
        )
    listed = "; ".join(
        f"{r.pair} ({r.quantity.replace('_', '.')} {_with_error(r.value, r.mcse)} against "
        f"{r.threshold:g})"
        for r in found.itertuples(index=False)
    )
    n = len(found)
    drawn = _draws_phrase(result)
    return (
        f"{n} pair{'s' if n != 1 else ''} lie{'' if n != 1 else 's'} within {z:g} Monte Carlo "
        f"standard errors of a threshold after {drawn}: a claim there could change with the "
        f"seed, so none is made (unsettled at this precision): {listed} ({errors})."
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
    return list(better.itertuples(index=False)), list(equiv.itertuples(index=False))


def _claims(
    summary: pd.DataFrame,
    interpretation: Rule,
    rope: Sequence[float],
    hdi: float,
    order: Sequence[str],
) -> list[str]:
    """Sentences: both rules, the counts under each, and by name the claims a reader needs:
    those between neighbours in the ranking (``order``, best first) and every equivalence;
    the table holds the others."""
    rule = rules(rope)
    out = [
        "Two decision rules were applied: "
        + rule["weak"]
        + "; "
        + rule["strong"]
        + ". Pairs that meet neither condition carry no claim."
    ]
    counts = {r["interpretation"]: r for r in claim_counts(summary).to_dict("records")}
    n = len(summary)

    def tally(interp: str) -> str:
        c = counts[interp]
        return (
            f"the {interp} interpretation claims {_n(c['better'], 'difference')} and "
            f"{_n(c['equivalent'], 'equivalence')} ({_n(c['no claim'], 'pair')} without a claim)"
        )

    out.append(f"Of the {n} pairs, {tally('weak')}; {tally('strong')}.")
    if apart := counts["weak"]["not compared"]:
        out.append(
            f"The {apart} pair{'s' if apart > 1 else ''} across groups of algorithms that "
            "never met on a common data set were not compared."
        )
    better, equiv = _clearest(summary, interpretation)
    mass = f"{hdi:.0%}"
    if interpretation == "weak":

        def better_txt(r: Any) -> str:
            return (
                f"{isolate(r.alg_a)} is better than {isolate(r.alg_b)} "
                f"(above.50 = {_fmt(r.above_50)})"
            )

        def equiv_txt(r: Any) -> str:
            return f"{isolate(r.alg_a)} and {isolate(r.alg_b)} (in.rope = {_fmt(r.in_rope)})"
    else:

        def better_txt(r: Any) -> str:
            return (
                f"{isolate(r.alg_a)} is better than {isolate(r.alg_b)} (mean P = {_fmt(r.mean)}, "
                f"{mass} HDI "
                f"[{_fmt(r.low)}, {_fmt(r.high)}])"
            )

        def equiv_txt(r: Any) -> str:
            return f"{isolate(r.alg_a)} and {isolate(r.alg_b)} (mean P = {_fmt(r.mean)})"

    n_claims = len(better) + len(equiv)
    if n_claims == 0:
        out.append(f"No pair supports a claim under the {interpretation} interpretation.")
        return out
    # the claims between neighbours in the ranking, in ranking order
    rank = {name: k for k, name in enumerate(order)}
    neighbours = sorted(
        (r for r in better if abs(rank[str(r.alg_a)] - rank[str(r.alg_b)]) == 1),
        key=lambda r: min(rank[str(r.alg_a)], rank[str(r.alg_b)]),
    )
    named = len(neighbours) + len(equiv)
    if neighbours:
        out.append(
            f"Under the {interpretation} interpretation, between neighbours in the ranking we "
            "claim that " + _join([better_txt(r) for r in neighbours]) + "."
        )
    elif better:
        out.append(
            f"Under the {interpretation} interpretation, no algorithm is claimed better than "
            "its neighbour in the ranking."
        )
    if equiv:
        out.append(
            (
                "We claim"
                if neighbours or better
                else f"Under the {interpretation} interpretation we claim"
            )
            + " practical equivalence of "
            + _join([equiv_txt(r) for r in equiv])
            + "."
        )
    if rest := n_claims - named:
        out.append(
            f"The other {_n(rest, 'claim')} {'are' if rest > 1 else 'is'} in the table of "
            f"P(a > b) per pair (column {interpretation})."
        )
    return out


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _join(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return "; ".join(items[:-1]) + "; and " + items[-1]


def _with_error(value: float, error: float) -> str:
    """``value ± error`` with the error to two significant digits and the value to as many
    decimals (at least four): conditional estimates carry errors of 1e-5 and less, which a
    fixed four decimals would print as 0.0000."""
    decimals = 4 if not error > 0 else max(4, 1 - math.floor(math.log10(error)))
    return f"{value:.{decimals}f} ± {error:.{decimals}f}"
