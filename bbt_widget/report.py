"""Methods and results paragraph for a manuscript, generated from a fit (nothing typed by hand).

Claims are phrased as the paper recommends: Sec. 9.2 (weak interpretation: above_50 and
in_rope with a 0.95 threshold) and Sec. 9.3 (strong interpretation: mean P(a > b) above
0.70 is a claim of superiority, below the ROPE's upper bound of equivalence).
"""

from __future__ import annotations

import importlib.metadata as md
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .export import ESCAPERS

if TYPE_CHECKING:
    from .result import BBTResult

PAPER = (
    "Wainer, A Bayesian Bradley-Terry model to compare multiple ML algorithms on multiple data sets"
)
#: Above this many algorithms the text recalls that above.50 inflates with their number.
MANY_ALGORITHMS = 10
_TIES = {
    "spread": "each tie was counted as half a win for each algorithm, rounded up (spread policy)",
    "add": "each tie was counted as a win for both algorithms (add policy)",
    "forget": "ties were discarded (forget policy)",
    "davidson": "ties were modelled explicitly with Davidson's extension (trinomial likelihood)",
}
_PRIORS = {
    "lognormal": "LogNormal(0, {s})",
    "cauchy": "half-Cauchy(0, {s})",
    "normal": "half-Normal(0, {s})",
}


def _version(dist: str) -> str:
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return "not installed"


def _fmt(x: float) -> str:
    return f"{x:.2f}"


@dataclass(frozen=True)
class _Styled:
    """A span of the paragraph in a style (``"em"`` or ``"code"``); plain spans are str."""

    text: str
    style: str


#: (opening, closing) markup of each style per format; the text between is escaped.
_STYLES = {
    "md": {"em": ("*", "*"), "code": ("`", "`")},
    "tex": {"em": ("\\emph{", "}"), "code": ("\\texttt{", "}")},
    "html": {"em": ("<em>", "</em>"), "code": ("<code>", "</code>")},
}


def _render(spans: Sequence[str | _Styled], format: str) -> str:
    """The paragraph in ``format``: every span escaped once by that format's escaper, so
    names print literally whatever characters they hold."""
    escape = ESCAPERS[format]
    out = []
    for span in spans:
        if isinstance(span, _Styled):
            # code spans hold our own identifiers (file name, hash); Markdown code spans
            # print backslashes literally, so they are not backslash-escaped there
            text = span.text if (format, span.style) == ("md", "code") else escape(span.text)
            opening, closing = _STYLES[format][span.style]
            out.append(opening + text + closing)
        else:
            out.append(escape(span))
    return "".join(out)


def methods_text(
    result: BBTResult,
    *,
    format: str = "md",
    interpretation: str = "weak",
    rope: Sequence[float] = (0.45, 0.55),
    hdi: float = 0.89,
) -> str:
    """A methods-and-results paragraph describing exactly what was run and what it supports.

    Parameters
    ----------
    result
        The fit to describe.
    format
        ``"md"`` (Markdown), ``"tex"`` (LaTeX) or ``"html"`` (an HTML fragment).
    interpretation
        ``"weak"`` (Sec. 9.2) or ``"strong"`` (Sec. 9.3).
    rope, hdi
        ROPE and HDI mass of the claims.
    """
    if format not in _STYLES:
        raise ValueError(f"format must be 'md', 'tex' or 'html', got {format!r}")
    if interpretation not in ("weak", "strong"):
        raise ValueError(f"interpretation must be 'weak' or 'strong', got {interpretation!r}")
    s = result.settings
    summary = result.summary(rope=rope, hdi=hdi)
    rope = tuple(float(v) for v in rope)
    # the paragraph is a list of spans, plain text or styled, escaped per format when
    # rendered: names are never read as markup in any format

    def em(t: str) -> _Styled:
        return _Styled(t, "em")

    def code(t: str) -> _Styled:
        return _Styled(t, "code")

    # one entry per sentence: a plain string, or a list of spans when part of it is styled
    parts: list[str | list[str | _Styled]] = []
    n_alg = len(result.algorithms)
    if result.tidy is not None:
        n_ds = len(result.tidy.datasets)
        what = f"{n_alg} algorithms on {n_ds} data sets"
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
        count += "; missing results were not counted, and means equal up to floating-point "
        count += "noise (relative difference below 1e-12) were ties."
    else:
        what = f"{n_alg} algorithms from a given win/loss table"
        count = "The win/loss counts were taken as given."
    parts.append(
        [f"We compared {what} with the Bayesian Bradley-Terry (BBT) model (", em(PAPER), ")."]
    )
    parts.append(count)
    n_ties = int(result.win_table["ties"].sum()) if s["ties"] == "davidson" else None
    tie_text = _TIES[s["ties"]]
    if n_ties is not None:
        tie_text += f" ({n_ties} ties in all)"
    parts.append(tie_text[0].upper() + tie_text[1:] + ".")
    prior = _PRIORS[s["hyperprior"]].format(s=f"{s['prior_scale']:g}")
    info = result.draws.info
    engine = s["engine"]
    engine_v = info.get("engine_version") or _version(engine)
    engine_v = engine_v if engine_v.startswith(engine) else f"{engine} {engine_v}"
    stan_hash = info.get("stan_hash", "")
    parts.append(
        [
            f"The abilities were given a hierarchical prior beta_i ~ Normal(0, sigma), sigma ~ "
            f"{prior}, and the model was sampled with Stan through {engine_v} "
            f"({s['chains']} chains of {s['iter_warmup']} warm-up and {s['iter_sampling']} "
            f"sampling iterations, seed {s['seed']}; Stan program ",
            code(s["model"] + ".stan"),
            *((" sha256 ", code(stan_hash)) if stan_hash else ()),
            ").",
        ]
    )
    diag = result.diagnostics()
    if diag.ok:
        parts.append(
            f"All convergence diagnostics passed (max R-hat {diag.max_rhat:.3f}, min bulk ESS "
            f"{diag.min_ess_bulk:.0f}, min tail ESS {diag.min_ess_tail:.0f}, no divergent "
            f"transitions, E-BFMI >= {diag.min_ebfmi:.2f})."
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
    parts.append(_claims(summary, interpretation, rope, hdi))
    if interpretation == "weak" and n_alg > MANY_ALGORITHMS:
        parts.append(
            f"With {n_alg} algorithms, note that the weak interpretation grows more confident "
            "as more algorithms are compared, while the strong interpretation does not (Sec. "
            "5.6 of the BBT paper); consider reporting the strong interpretation as well."
        )
    parts.append(
        "Software: "
        + ", ".join(
            f"{name} {_version(dist)}"
            for name, dist in (
                ("bbt-widget", "bbt-widget"),
                ("numpy", "numpy"),
                ("pandas", "pandas"),
                ("ArviZ", "arviz"),
            )
        )
        + "."
    )
    spans: list[str | _Styled] = []
    for k, part in enumerate(parts):
        spans += ([" "] if k else []) + ([part] if isinstance(part, str) else part)
    return _render(spans, format)


def _claims(summary, interpretation: str, rope: tuple[float, float], hdi: float) -> str:
    col = interpretation
    better = summary[summary[col] == "a better"]
    equiv = summary[summary[col] == "equivalent"]
    none = summary[summary[col] == "no claim"]
    rope_txt = f"[{rope[0]:g}, {rope[1]:g}]"
    if interpretation == "weak":
        rule = (
            f"Under the weak interpretation (Sec. 9.2 of the BBT paper), a pair is claimed "
            f"different when at least 95% of the posterior of P(a > b) lies above 0.5 "
            f"(above.50 >= 0.95) and equivalent when at least 95% lies in the ROPE {rope_txt} "
            f"(in.rope >= 0.95)."
        )

        def better_txt(r) -> str:
            return f"{r.alg_a} is better than {r.alg_b} (above.50 = {_fmt(r.above_50)})"

        def equiv_txt(r) -> str:
            return f"{r.alg_a} and {r.alg_b} (in.rope = {_fmt(r.in_rope)})"
    else:
        rule = (
            f"Under the strong interpretation (Sec. 9.3 of the BBT paper), a pair is claimed "
            f"different when the mean of P(a > b) exceeds 0.70 and equivalent when it is below "
            f"{rope[1]:g}."
        )
        mass = f"{hdi:.0%}"

        def better_txt(r) -> str:
            return (
                f"{r.alg_a} is better than {r.alg_b} (mean P = {_fmt(r['mean'])}, {mass} HDI "
                f"[{_fmt(r.low)}, {_fmt(r.high)}])"
            )

        def equiv_txt(r) -> str:
            return f"{r.alg_a} and {r.alg_b} (mean P = {_fmt(r['mean'])})"

    out = [rule]
    if len(better):
        out.append("We claim that " + _join([better_txt(r) for _, r in better.iterrows()]) + ".")
    if len(equiv):
        out.append(
            "We claim practical equivalence of "
            + _join([equiv_txt(r) for _, r in equiv.iterrows()])
            + "."
        )
    if len(better) == 0 and len(equiv) == 0:
        out.append("No pair supports a claim at this threshold.")
    if len(apart := summary[summary[col] == "not compared"]):
        out.append(
            f"The {len(apart)} pair{'s' if len(apart) > 1 else ''} across groups of algorithms "
            "that never met on a common data set were not compared."
        )
    if len(none):
        out.append(
            f"For the remaining {len(none)} pair{'s' if len(none) > 1 else ''} "
            f"({', '.join(none['pair'])}) we make no claim."
        )
    return " ".join(out)


def _join(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return "; ".join(items[:-1]) + "; and " + items[-1]
