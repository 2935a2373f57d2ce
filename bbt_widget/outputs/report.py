"""Methods and results paragraph for a manuscript, generated from a fit (nothing typed by hand).

Claims are phrased as the paper recommends: Sec. 9.2 (weak interpretation: above_50 and
in_rope with a 0.95 threshold) and Sec. 9.3 (strong interpretation: mean P(a > b) above
0.70 is a claim of superiority, below the ROPE's upper bound of equivalence).
"""

from __future__ import annotations

import importlib.metadata as md
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.bidi import isolate
from ..core.options import DEFAULT_HDI, DEFAULT_INTERPRETATION, DEFAULT_ROPE, resolve_interpretation
from .charts import claim_counts
from .export import ESCAPERS

if TYPE_CHECKING:
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
    "md": {"em": ("*", "*"), "code": ("`", "`"), "math": ("$", "$")},
    "tex": {"em": ("\\emph{", "}"), "code": ("\\texttt{", "}"), "math": ("$", "$")},
    "html": {"em": ("<em>", "</em>"), "code": ("<code>", "</code>"), "math": ("", "")},
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
    interpretation: str = DEFAULT_INTERPRETATION,
    rope: Sequence[float] = DEFAULT_ROPE,
    hdi: float = DEFAULT_HDI,
) -> str:
    """A methods-and-results paragraph describing exactly what was run and what it supports.

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
    s = result.settings
    summary = result.summary(rope=rope, hdi=hdi)
    rope = tuple(float(v) for v in rope)
    # the paragraph is a list of spans, plain text or styled, escaped per format when
    # rendered: names are never read as markup in any format

    def em(t: str) -> Styled:
        return Styled(t, "em")

    def code(t: str) -> Styled:
        return Styled(t, "code")

    # one entry per sentence: a plain string, or a list of spans when part of it is styled
    parts: list[str | list[str | Styled]] = []
    n_alg = len(result.algorithms)
    if result.tidy is not None:
        n_ds = len(result.tidy.datasets)  # those that give a comparison
        what = f"{n_alg} algorithms on {n_ds} data sets"
        if n_out := len(result.tidy.dropped_datasets):
            what += (
                f" ({n_out} further data set{'s' * (n_out != 1)}, with a score for fewer than "
                f"two algorithms, {'were' if n_out != 1 else 'was'} left out)"
            )
        direction = "lower" if s["lower_is_better"] else "higher"
        count = f"Wins were counted per data set ({direction} scores are better)"
        if s["d_min"] is None:
            count += ", comparing the mean scores over the folds"
        elif s["paired"]:
            count += (
                f", with a paired local ROPE: a win counted only when the effect size d_z over "
                f"the paired fold differences exceeded d_min = {s['d_min']:g}"
            )
            if n_fewer := len(result.tidy.fold_mismatch_datasets):
                count += (
                    f" (on {n_fewer} data set{'s' if n_fewer > 1 else ''} some algorithms "
                    "lacked folds: pairs were paired on the folds both had, and treated as "
                    "missing with fewer than 2)"
                )
        else:
            count += (
                f", with an unpaired local ROPE: a win counted only when Cohen's d exceeded "
                f"d_min = {s['d_min']:g}"
            )
        if s.get("tie_threshold"):
            either = " (a tie under either rule was a tie)" if s["d_min"] is not None else ""
            count += (
                f"; a data set where the two mean scores differed by at most "
                f"{s['tie_threshold']:g} (the tie threshold, in score units) was a tie before "
                f"any local ROPE{either}"
            )
        count += "; missing results were not counted, and means equal up to floating-point "
        count += "noise (relative difference below 1e-12) were ties."
    else:
        what = f"{n_alg} algorithms from a given win/loss table"
        count = "The win/loss counts were taken as given."
    parts.append(
        [
            f"We compared {what} with the Bayesian Bradley-Terry (BBT) model of Wainer (2022, ",
            em(PAPER),
            ", arXiv:2208.04935), which extends Bradley and Terry (1952).",
        ]
    )
    parts.append(rule.reason)
    parts.append(count)
    n_ties = int(result.win_table["ties"].sum()) if s["ties"] == "davidson" else None
    tie_text = _TIES[s["ties"]]
    if n_ties is not None:
        tie_text += f" ({n_ties} ties in all)"
    parts.append(tie_text[0].upper() + tie_text[1:] + ".")
    prior_tex, prior_txt = (
        f.replace("{s}", f"{s['prior_scale']:g}") for f in _PRIORS[s["hyperprior"]]
    )
    model = Styled(
        rf"\beta_i \sim \mathcal{{N}}(0, \sigma),\ \sigma \sim {prior_tex}",
        "math",
        f"\u03b2\u1d62 ~ Normal(0, \u03c3), \u03c3 ~ {prior_txt}",
    )
    info = result.draws.info
    engine = s["engine"]
    engine_v = info.get("engine_version") or package_version(engine)
    engine_v = engine_v if engine_v.startswith(engine) else f"{engine} {engine_v}"
    stan_hash = info.get("stan_hash", "")
    if engine == "numpy":  # the exact Gibbs sampler, no Stan: cite what it rests on
        sampled = (
            ", and its posterior was sampled exactly by a Pólya-Gamma Gibbs sampler (Polson "
            f"et al. 2013) with bbt-widget's numpy engine ({engine_v}; {s['chains']} chains "
            f"of {s['iter_warmup']} warm-up and {s['iter_sampling']} kept sweeps, seed "
            f"{s['seed']}; the model of the Stan program "
        )
    else:
        sampled = (
            f", and the model was sampled with Stan (Carpenter et al. 2017) through {engine_v} "
            f"({s['chains']} chains of {s['iter_warmup']} warm-up and {s['iter_sampling']} "
            f"sampling iterations, seed {s['seed']}; Stan program "
        )
    parts.append(
        [
            "The abilities were given a hierarchical prior ",
            model,
            sampled,
            code(s["model"] + ".stan"),
            *((" sha256 ", code(stan_hash)) if stan_hash else ()),
            ").",
        ]
    )
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
    parts += _claims(summary, interpretation, rope, hdi, order)
    parts.append(
        "Software: "
        + ", ".join(
            f"{name} {package_version(dist)}"
            for name, dist in (
                ("bbt-widget", "bbt-widget"),
                ("numpy", "numpy"),
                ("pandas", "pandas"),
                ("ArviZ", "arviz"),
            )
        )
        + "."
    )
    spans: list[str | Styled] = []
    for k, part in enumerate(parts):
        spans += ([" "] if k else []) + ([part] if isinstance(part, str) else part)
    return render(spans, format)


def rules(rope: Sequence[float]) -> dict[str, str]:
    """The two decision rules in words, by interpretation (one definition for every output)."""
    rope_txt = f"[{rope[0]:g}, {rope[1]:g}]"
    return {
        "weak": (
            "under the weak interpretation (Sec. 9.2 of the BBT paper), a pair is claimed "
            "different when at least 95% of the posterior of P(a > b) lies above 0.5 "
            f"(above.50 >= 0.95) and equivalent when at least 95% lies in the ROPE {rope_txt} "
            "(in.rope >= 0.95)"
        ),
        "strong": (
            "under the strong interpretation (Sec. 9.3 of the BBT paper), a pair is claimed "
            "different when the posterior mean of P(a > b) exceeds 0.70 and equivalent when it "
            f"lies inside the ROPE {rope_txt}"
        ),
    }


def _clearest(summary, interpretation: str) -> tuple[list, list]:
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
    summary, interpretation: str, rope: Sequence[float], hdi: float, order: Sequence[str]
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

        def better_txt(r) -> str:
            return (
                f"{isolate(r.alg_a)} is better than {isolate(r.alg_b)} "
                f"(above.50 = {_fmt(r.above_50)})"
            )

        def equiv_txt(r) -> str:
            return f"{isolate(r.alg_a)} and {isolate(r.alg_b)} (in.rope = {_fmt(r.in_rope)})"
    else:

        def better_txt(r) -> str:
            return (
                f"{isolate(r.alg_a)} is better than {isolate(r.alg_b)} (mean P = {_fmt(r.mean)}, "
                f"{mass} HDI "
                f"[{_fmt(r.low)}, {_fmt(r.high)}])"
            )

        def equiv_txt(r) -> str:
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
