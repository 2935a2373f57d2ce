"""Bayesian correlated t-test on one data set (Benavoli et al. 2017, Sec. 3).

For the fold differences ``x = b - a`` of one data set (n results of m runs of k-fold
cross-validation), the matching prior gives the Student posterior of the mean difference
(Eq. 6)::

    mu | x ~ St(n - 1, mean(x), (1/n + rho / (1 - rho)) * sd(x)^2)

with ``rho`` the correlation of overlapping training sets (Nadeau and Bengio, Eq. 1-2:
``1 / k``). The probabilities are integrals of this Student density: ``p_left`` over
``(-inf, -rope)`` (a practically better), ``p_rope`` over ``[-rope, rope]``, ``p_right``
over ``(rope, inf)`` (b practically better). With ``sd(x) = 0`` the posterior is a point
mass at the mean (the limit of the Student as its scale goes to 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import altair as alt
import numpy as np
import pandas as pd
from scipy import stats

from ..core.bidi import isolate
from ..core.data import TidyResults
from ..core.options import TTEST_HDI
from ..core.tidy import Layout, Unpack
from ..core.validation import check_hdi
from ._common import TableSummary
from ._cv import FoldDifferences, check_rope_width, fold_differences
from ._simplex import MAX_POINTS, REGIONS, region_decisions, simplex_chart

if TYPE_CHECKING:  # typing.Unpack is Python 3.11; the checker knows it on 3.10 too
    from ..core.tidy import LayoutKeywords


@dataclass(frozen=True)
class CorrelatedTTestResult(TableSummary):
    """Per-data-set Bayesian correlated t-tests of one pair.

    Attributes
    ----------
    table
        One row per data set: ``dataset, alg_a, alg_b, n`` (common folds), ``rho``,
        ``mean`` and ``sd`` of the differences ``b - a``, ``df`` (n - 1), ``scale`` (the
        Student's scale, the square root of Eq. 6's ``(1/n + rho/(1-rho)) sd^2``),
        ``p_left`` (a practically better), ``p_rope``, ``p_right`` (b practically better),
        ``hdi_low``, ``hdi_high`` (the HDI of the mean difference; the Student is symmetric,
        so it is the central interval) and ``decision`` (``"a better"``, ``"equivalent"``,
        ``"b better"`` at probability >= 0.95, else ``"no claim"``).
    rope, hdi
        The ROPE half-width on the scores' scale and the HDI mass.
    dropped
        Data sets where both algorithms have a result but fewer than two common folds.
    """

    table: pd.DataFrame
    rope: float
    hdi: float
    dropped: tuple[str, ...]

    def density(self, dataset: str | None = None, points: int = 201) -> pd.DataFrame:
        """The posterior density of the mean difference, tidy: ``dataset, mu, density``.

        ``dataset=None`` gives every data set. The grid spans the 99.9% central interval
        and the ROPE; a point-mass posterior is drawn as a single spike of density ``inf``.
        """
        rows = self.table if dataset is None else self.table[self.table["dataset"] == dataset]
        if dataset is not None and rows.empty:
            raise ValueError(
                f"{dataset!r} is not one of the tested data sets "
                f"({', '.join(self.table['dataset'][:8])}...)"
            )
        frames = []
        for row in rows.itertuples(index=False):
            if row.scale == 0:
                grid, dens = np.array([row.mean]), np.array([np.inf])
            else:
                half = stats.t.ppf(0.9995, row.df) * row.scale
                low = min(row.mean - half, -1.5 * self.rope)
                high = max(row.mean + half, 1.5 * self.rope)
                grid = np.linspace(low, high, points)
                dens = stats.t.pdf(grid, row.df, loc=row.mean, scale=row.scale)
            frames.append(pd.DataFrame({"dataset": row.dataset, "mu": grid, "density": dens}))
        return pd.concat(frames, ignore_index=True)

    def chart(self, dataset: str) -> alt.LayerChart:
        """The posterior density of one data set with the ROPE band (Benavoli et al. 2017,
        Fig. 4)."""
        dens = self.density(dataset)
        row = self.table[self.table["dataset"] == dataset].iloc[0]
        a, b = isolate(row["alg_a"]), isolate(row["alg_b"])
        title = (
            f"{isolate(dataset)}: {b} - {a}  "
            f"P(left) {row['p_left']:.3f}, P(rope) {row['p_rope']:.3f}, "
            f"P(right) {row['p_right']:.3f}"
        )
        band = (
            alt.Chart(pd.DataFrame({"low": [-self.rope], "high": [self.rope]}))
            .mark_rect(opacity=0.2, color="orange")
            .encode(x="low:Q", x2="high:Q")
        )
        curve = (
            alt.Chart(dens.replace(np.inf, np.nan).dropna())
            .mark_area(opacity=0.6, line=True)
            .encode(
                x=alt.X("mu:Q", title=f"mean difference {b} - {a}"),
                y=alt.Y("density:Q", title="posterior density"),
            )
        )
        returned: alt.LayerChart = alt.layer(band, curve).properties(
            title=title, width=360, height=200
        )
        return returned

    def simplex(self, *, max_points: int = MAX_POINTS) -> alt.LayerChart:
        """Every data set in the probability simplex, at its ``(p_left, p_rope, p_right)``.

        The triangle of Benavoli et al. (2017) with the vertices "a better", "rope", "b
        better" and the regions where each is the most probable shaded. The correlated
        t-test's posterior is one-dimensional (the mean difference): each of its draws lies
        in exactly one region, so drawn as points of the simplex every draw would sit on a
        vertex. What places a data set inside the triangle is its three posterior masses, so
        this chart shows one point per data set there (its name in the tooltip) and, at the
        vertices, how many data sets have that region as the most probable one.
        """
        t = self.table
        theta = t[["p_left", "p_rope", "p_right"]].to_numpy(dtype=float)
        counts = np.bincount(np.argmax(theta, axis=1), minlength=len(REGIONS))
        notes = [f"{c} data set{'' if c == 1 else 's'}" for c in counts]
        title = (
            f"Bayesian correlated t-test, ROPE +-{self.rope:g}: "
            f"posterior masses of {len(t)} data set{'' if len(t) == 1 else 's'}"
        )
        a, b = t["alg_a"].iloc[0], t["alg_b"].iloc[0]
        labels = t["dataset"].astype(str).tolist()
        returned: alt.LayerChart = simplex_chart(
            theta, a, b, notes, title=title, max_points=max_points, labels=labels
        )
        return returned


def correlated_ttest(
    data: pd.DataFrame | TidyResults,
    *,
    a: str,
    b: str,
    on: str | list[str] | None = None,
    run: str | None = None,
    rope: float = 0.01,
    rho: float | None = None,
    hdi: float = TTEST_HDI,
    **layout: Unpack[LayoutKeywords],
) -> CorrelatedTTestResult:
    """Bayesian correlated t-test of ``a`` vs ``b`` on each data set (Benavoli et al. 2017, Eq. 6).

    Parameters
    ----------
    data
        Fold-level results in any layout :func:`bbt_widget.win_table` accepts.
    a, b
        The two algorithms; differences are ``b - a``, so *left* means a is better.
    on
        The data set(s) to test (names); ``None`` tests every data set. (``dataset=`` keeps
        its meaning everywhere in the package: the column naming the data sets.)
    run
        Column numbering the repetitions of cross-validation; with ``fold=`` (the fold
        within a run) it gives ``k`` and thus ``rho = 1/k`` per data set.
    rope
        Half-width of the ROPE on the scores' scale (0.01: one point of accuracy).
    rho
        Correlation of the fold results, ``n_test / n_total`` (Nadeau and Bengio, Eq. 1-2),
        i.e. ``1/k`` for k-fold cross-validation; required unless ``run=`` identifies the
        folds.
    hdi
        Mass of the HDI of the mean difference.
    **layout
        How to read the results: :class:`~bbt_widget.core.tidy.LayoutKeywords`. Not ``sd``
        (the test needs fold-level scores): passing it raises ValueError.

    Returns
    -------
    CorrelatedTTestResult
        ``table`` with one row per data set, ``density()``, ``chart()`` and
        ``simplex()``.

    Raises
    ------
    ValueError
        Bad layout or settings (rope <= 0, rho outside (0, 1), a == b, an unknown
        algorithm or data set, no fold-level scores, unknown rho).
    """
    asked = Layout.from_keywords(layout)
    rope = check_rope_width(rope)
    hdi = check_hdi(hdi)
    diffs = fold_differences(data, asked, a=a, b=b, run=run, rho=rho)
    if not diffs.datasets:
        raise ValueError(
            f"no data set has 2 or more folds where both {diffs.a!r} and {diffs.b!r} have a "
            "result; the correlated t-test needs the spread of the fold differences"
        )
    table = correlated_table(diffs, rope, hdi)
    if on is not None:
        wanted = [on] if isinstance(on, str) else list(on)
        unknown = [d for d in wanted if d not in set(table["dataset"])]
        if unknown:
            why = (
                "it has fewer than two folds where both algorithms have a result"
                if unknown[0] in diffs.dropped
                else "it is not a data set where both algorithms have results"
            )
            raise ValueError(f"on={unknown[0]!r} cannot be tested: {why}")
        table = table.set_index("dataset").loc[wanted].reset_index()
    return CorrelatedTTestResult(table=table, rope=rope, hdi=hdi, dropped=diffs.dropped)


def correlated_table(diffs: FoldDifferences, rope: float, hdi: float) -> pd.DataFrame:
    """The per-data-set table of :class:`CorrelatedTTestResult` from fold differences."""
    n, mean, sd, rho = diffs.n, diffs.mean, diffs.sd, diffs.rho
    scale = np.sqrt((1.0 / n + rho / (1.0 - rho)) * sd**2)
    df = n - 1
    p_left, p_rope, p_right = student_regions(mean, scale, df, rope)
    half = np.where(scale > 0, stats.t.ppf(0.5 + hdi / 2, df) * scale, 0.0)
    table = pd.DataFrame(
        {
            "dataset": list(diffs.datasets),
            "alg_a": diffs.a,
            "alg_b": diffs.b,
            "n": n,
            "rho": rho,
            "mean": mean,
            "sd": sd,
            "df": df,
            "scale": scale,
            "p_left": p_left,
            "p_rope": p_rope,
            "p_right": p_right,
            "hdi_low": mean - half,
            "hdi_high": mean + half,
        }
    )
    table["decision"] = region_decisions(p_left, p_rope, p_right)
    return table


def student_regions(
    loc: np.ndarray, scale: np.ndarray, df: np.ndarray, rope: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Masses of a Student ``St(df, loc, scale)`` below ``-rope``, in ``[-rope, rope]`` and
    above ``rope``; a zero scale is the point mass at ``loc``.

    The tails come from the CDF and the survival function (not ``1 - cdf``), so that a
    tiny tail keeps its precision; the ROPE gets the rest.
    """
    loc, scale, df = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (loc, scale, df)))
    safe = np.where(scale > 0, scale, 1.0)
    left = np.where(scale > 0, stats.t.cdf(-rope, df, loc=loc, scale=safe), loc < -rope)
    right = np.where(scale > 0, stats.t.sf(rope, df, loc=loc, scale=safe), loc > rope)
    left, right = left.astype(float), right.astype(float)
    return left, 1.0 - left - right, right
