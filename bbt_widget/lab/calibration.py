"""``bbt.calibration``: do the probabilities predict new data sets? (paper Sec. 8, done two ways)

Protocol (the paper's): repeatedly draw ``n_train`` and ``n_test`` disjoint data sets at
random, fit the BBT model on the training sets with the given settings, and count on the test
sets which algorithm of each pair wins (means compared, no local ROPE). Then score the fit's
predictions against the test counts.

Why the two ways differ: see the Notes of :func:`calibration`.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..core import posterior
from ..core.bidi import pair_label
from ..core.data import as_tidy
from ..core.draws import ProgressCallback
from ..core.options import (
    DEFAULT_CHAINS,
    DEFAULT_ENGINE,
    DEFAULT_HYPERPRIOR,
    DEFAULT_ITER_SAMPLING,
    DEFAULT_ITER_WARMUP,
    DEFAULT_TIES,
    EngineChoice,
    HyperpriorName,
    TiePolicy,
)
from ..core.result import BBTResult
from ..core.run_context import RunContext
from ..core.settings import CountingSettings
from ..core.tidy import TidyResults, Unpack
from ..core.validation import (
    DEFAULT_SEED,
    check_count,
    check_hyperprior,
    check_seed,
)
from ..core.wintable import count_wins
from .batch import FitRequest, check_executor, run_batch, spawn_seeds
from .influence import tidy_subset

if TYPE_CHECKING:
    import altair as alt

    from ..core.tidy import LayoutKeywords

#: HDI masses of the paper's Table 16.
MASSES = (0.9, 0.7, 0.5)
#: above_50 bins of the paper's Table 17.
BINS = ((0.5, 0.7), (0.7, 0.9), (0.9, 1.0))
WAYS = ("paper", "predictive")


def _score(result: BBTResult, request: FitRequest) -> pd.DataFrame:
    """On the worker: one row per pair with a decided test game, every quantity both ways.

    ``request.meta`` holds the test counts (``test``: alg1, alg2, win1, win2), the repeat
    number and the seed of the binomial draws. Only this small frame travels back.
    """
    test = request.meta["test"]
    rng = np.random.default_rng(request.meta["seed"])
    idx = {a: k for k, a in enumerate(result.algorithms)}
    order = posterior.algorithm_order(result.beta)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    # orient each pair as the training fit ranks it (a = the better by mean beta)
    a = [x if rank[idx[x]] < rank[idx[y]] else y for x, y in zip(test["alg1"], test["alg2"])]
    b = [y if ai == x else x for ai, x, y in zip(a, test["alg1"], test["alg2"])]
    swapped = np.array([ai != x for ai, x in zip(a, test["alg1"])])
    win_a = np.where(swapped, test["win2"], test["win1"])
    win_b = np.where(swapped, test["win1"], test["win2"])
    n = win_a + win_b
    keep = n > 0  # a pair whose test games were all ties says nothing about who wins
    pairs = [(idx[x], idx[y]) for x, y, k in zip(a, b, keep) if k]
    p = posterior.pair_probabilities(result.beta, pairs)
    n, win_a = n[keep], win_a[keep]
    rate = win_a / n
    pred = rng.binomial(n, p) / n  # posterior predictive win rates, (draws, pairs)
    p.sort(axis=0)
    pred.sort(axis=0)
    out = {
        "repeat": request.meta["repeat"],
        "pair": [pair_label(a[i], b[i]) for i in np.flatnonzero(keep)],
        "n_games": n,
        "win_a": win_a,
        "empirical": rate,
        "mean": p.mean(axis=0),
        "above_50": (p >= 0.5).mean(axis=0),
        "p_wins_more": (pred > 0.5).mean(axis=0),
    }
    for mass in MASSES:
        for way, draws in zip(WAYS, (p, pred)):
            low, high = posterior.hdi_sorted(draws, mass)
            tag = f"{way}_{round(mass * 100)}"
            out[f"{tag}_low"], out[f"{tag}_high"] = low, high
    return pd.DataFrame(out)


def _strong_table(cases: pd.DataFrame) -> pd.DataFrame:
    """Table 16 for both ways: coverage of the HDIs, misses above/below, err and mad."""
    rows = []
    x = cases["empirical"]
    for way in WAYS:
        row: dict[str, Any] = {"way": way}
        for mass in MASSES:
            tag = f"{way}_{round(mass * 100)}"
            inside = (x >= cases[f"{tag}_low"]) & (x <= cases[f"{tag}_high"])
            row[f"within.{round(mass * 100)}"] = inside.mean()
        row["above90"] = (x > cases[f"{way}_90_high"]).mean()
        row["below90"] = (x < cases[f"{way}_90_low"]).mean()
        rows.append(row)
    table = pd.DataFrame(rows).set_index("way")
    # the point prediction is the same both ways: mean P(a > b) against the empirical rate
    table["err"] = (cases["mean"] - x).mean()
    table["mad"] = (cases["mean"] - x).abs().median()
    return table


def _weak_table(cases: pd.DataFrame) -> pd.DataFrame:
    """Table 17 for both ways: per above_50 bin, expected against actual number of wins."""
    rows = []
    won = cases["win_a"] > cases["n_games"] - cases["win_a"]
    for low, high in BINS:
        last = high >= 1.0
        inside = (cases["above_50"] >= low) & (
            (cases["above_50"] <= high) if last else (cases["above_50"] < high)
        )
        rows.append(
            {
                "bin": f"{low:.1f}-{high:.1f}",
                "cases": int(inside.sum()),
                "expected_paper": cases.loc[inside, "above_50"].sum(),
                "expected_predictive": cases.loc[inside, "p_wins_more"].sum(),
                "actual": int(won[inside].sum()),
            }
        )
    return pd.DataFrame(rows).set_index("bin")


class Calibration:
    """Predictive calibration of BBT on held-out data sets (paper Sec. 8, Tables 16 and 17).

    Attributes
    ----------
    strong
        Table 16, one row per way (``paper``, ``predictive``): ``within.90``, ``within.70``,
        ``within.50`` (share of test win rates inside the HDI of that mass), ``above90``,
        ``below90`` (outside the 90% HDI), ``err`` (mean of mean P(a > b) minus the win
        rate) and ``mad`` (median absolute difference).
    weak
        Table 17, one row per above_50 bin: ``cases``, ``expected_paper`` (sum of
        above_50), ``expected_predictive`` (sum of P(a wins more of the test games)) and
        ``actual`` (pairs where a won more test games).
    cases
        One row per (repeat, pair with decided test games) with every number used.
    failed
        Errors of the repeats whose fit failed (left out of the tables).
    splits
        Per repeat, the (training, test) data-set names.
    """

    def __init__(
        self,
        cases: pd.DataFrame,
        failed: list[str],
        settings: dict[str, Any],
        splits: list[tuple[list[str], list[str]]],
    ) -> None:
        self.cases = cases
        self.splits = splits
        self.failed = failed
        self.settings = settings
        self.strong = _strong_table(cases)
        self.weak = _weak_table(cases)

    def summary(self) -> pd.DataFrame:
        """The coverage of the HDIs of P(a > b), the paper's way and the posterior-predictive
        way (Table 16: ``strong``); the weak rule's table (Table 17) is ``weak``."""
        return self.strong

    def __repr__(self) -> str:
        s = self.strong
        return (
            f"<Calibration: {self.cases['repeat'].nunique()} repeats, "
            f"within.90 {s.loc['paper', 'within.90']:.2f} (paper's way) / "
            f"{s.loc['predictive', 'within.90']:.2f} (predictive)>"
        )

    def chart(self) -> alt.HConcatChart:
        """Coverage of the HDIs against their nominal mass, both ways (left), and expected
        against actual wins per above_50 bin (right)."""
        import altair as alt  # here: altair is slow to import and only charts need it

        cover = [
            {"way": way, "nominal": mass, "observed": self.strong.loc[way, f"within.{m}"]}
            for way in WAYS
            for mass, m in ((mass, round(mass * 100)) for mass in MASSES)
        ]
        colors = alt.Scale(domain=list(WAYS), range=["#d6604d", "#4393c3"])
        diagonal = (
            alt.Chart(pd.DataFrame({"x": [0.0, 1.0]}))
            .mark_line(color="#636363", strokeDash=[3, 3])
            .encode(x="x:Q", y="x:Q")
        )
        points = (
            alt.Chart(pd.DataFrame(cover))
            .mark_line(point=True)
            .encode(
                x=alt.X("nominal:Q", scale=alt.Scale(domain=[0, 1]), title="HDI mass"),
                y=alt.Y("observed:Q", scale=alt.Scale(domain=[0, 1]), title="share inside"),
                color=alt.Color("way:N", scale=colors, legend=alt.Legend(orient="bottom")),
                tooltip=["way:N", "nominal:Q", alt.Tooltip("observed:Q", format=".2f")],
            )
        )
        weak = self.weak.reset_index().melt(
            id_vars=["bin", "cases"],
            value_vars=["expected_paper", "expected_predictive", "actual"],
            var_name="count",
            value_name="wins",
        )
        bars = (
            alt.Chart(weak)
            .mark_bar()
            .encode(
                x=alt.X("count:N", title=None, axis=alt.Axis(labels=False, ticks=False)),
                y=alt.Y("wins:Q", title="wins of the better-ranked algorithm"),
                column=alt.Column("bin:N", title="above.50 bin"),
                color=alt.Color(
                    "count:N",
                    scale=alt.Scale(
                        domain=["expected_paper", "expected_predictive", "actual"],
                        range=["#d6604d", "#4393c3", "#636363"],
                    ),
                    legend=alt.Legend(orient="bottom", title=None),
                ),
                tooltip=["bin:N", "count:N", alt.Tooltip("wins:Q", format=".1f"), "cases:Q"],
            )
            .properties(width=70)
        )
        left = (diagonal + points).properties(
            width=220,
            height=220,
            title=alt.TitleParams(
                "Strong interpretation: HDI coverage of test win rates",
                subtitle="dashed: perfect calibration",
                anchor="start",
            ),
        )
        returned: alt.HConcatChart = alt.hconcat(left, bars).resolve_scale(color="independent")
        return returned


def calibration(
    data: pd.DataFrame | TidyResults,
    *,
    n_train: int = 20,
    n_test: int = 10,
    repeats: int = 50,
    d_min: float | None = None,
    paired: bool = True,
    ties: TiePolicy = DEFAULT_TIES,
    tie_threshold: float | None = None,
    hyperprior: HyperpriorName = DEFAULT_HYPERPRIOR,
    prior_scale: float | None = None,
    engine: EngineChoice = DEFAULT_ENGINE,
    chains: int = DEFAULT_CHAINS,
    iter_warmup: int = DEFAULT_ITER_WARMUP,
    iter_sampling: int = DEFAULT_ITER_SAMPLING,
    seed: int | None = DEFAULT_SEED,
    executor: Any = None,
    n_jobs: int | None = None,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    **layout: Unpack[LayoutKeywords],
) -> Calibration:
    """Paper Sec. 8: fit on ``n_train`` random data sets, predict ``n_test`` others, repeat.

    Parameters
    ----------
    data
        The results, as for :func:`bbt_widget.fit`.
    n_train, n_test, repeats
        Data sets per training and test draw (disjoint), and how many draws.
    d_min, paired, ties, tie_threshold, hyperprior, prior_scale
        Settings of the training fits, as for :func:`bbt_widget.fit` (``prior_scale=None``:
        the hyper-prior family's default scale, recorded in ``settings``; ``tie_threshold``
        is recorded there when set). Test games are always counted without a local ROPE or
        a tie threshold, as in the paper.
    engine, chains, iter_warmup, iter_sampling
        Sampler settings of every fit.
    seed
        Drives the data-set draws, the fit seeds and the predictive binomial draws.
    executor, n_jobs, progress, cancel
        How the fits run; see :func:`bbt_widget.lab.batch.run_batch`.
    **layout
        How to read the results: :class:`~bbt_widget.core.tidy.LayoutKeywords`.

    Returns
    -------
    Calibration
        ``strong`` (Table 16) and ``weak`` (Table 17) both ways, ``cases`` and ``chart()``.
        See the Notes for why the two ways differ.

    Notes
    -----
    Why the two ways differ. The paper (Table 16) checks whether the empirical win rate ``win1 /
    (win1 + win2)`` of the test sets falls inside the HDI of P(a > b), the *mean* probability
    that a beats b. But ten test games are ten coin flips: even if P(a > b) were known exactly
    to be 0.7, the observed rate would have a binomial spread of sd ``sqrt(0.7 * 0.3 / 10) =
    0.14``, wider than most HDIs of P(a > b) themselves. The paper's coverage therefore mixes
    two things, the model's over-confidence and the sampling noise of a small test, and comes
    out far below nominal even for a perfect model. The posterior-predictive way compares the
    test counts with what the model predicts for *those games*: for every posterior draw of P(a
    > b), a binomial draw with the test number of games; its HDI contains the binomial noise, so
    only genuine miscalibration (the model's uncertainty about new data sets being too small)
    remains. Likewise for the weak interpretation (Table 17): ``above_50`` is the probability
    that a is the better algorithm in the population, not that it wins more of ten games; the
    predictive expectation is ``P(Binomial(n, p) > n / 2)`` averaged over the draws.
    """
    n_train = check_count(n_train, "n_train", 2)
    n_test = check_count(n_test, "n_test")
    repeats = check_count(repeats, "repeats")
    seed = check_seed(seed)
    hyperprior, prior_scale = check_hyperprior(hyperprior, prior_scale)
    counting = CountingSettings(ties, d_min, paired, tie_threshold)
    d_min, paired, tie_threshold = counting.d_min, counting.paired, counting.tie_threshold
    check_executor(executor)
    tidy = as_tidy(data, **layout)
    names = list(tidy.datasets)
    if n_train + n_test > len(names):
        raise ValueError(
            f"n_train + n_test = {n_train + n_test} data sets are needed, but the results have "
            f"{len(names)}; lower n_train or n_test"
        )
    split_seed, fit_seed, draw_seed = spawn_seeds(seed, 3)
    rng = np.random.default_rng(split_seed)
    draw_seeds = spawn_seeds(draw_seed, repeats)
    requests = []
    for r in range(repeats):
        chosen = rng.permutation(len(names))
        train = [names[i] for i in sorted(chosen[:n_train])]
        test = [names[i] for i in sorted(chosen[n_train : n_train + n_test])]
        try:  # every table before the first fit: a bad setting fails fast
            table = count_wins(
                tidy_subset(tidy, train), d_min=d_min, paired=paired, tie_threshold=tie_threshold
            )
        except ValueError as exc:
            raise ValueError(f"calibration training sets (repeat {r}): {exc}") from None
        requests.append(
            FitRequest(
                table,
                ties=ties,
                hyperprior=hyperprior,
                prior_scale=prior_scale,
                chains=chains,
                iter_warmup=iter_warmup,
                iter_sampling=iter_sampling,
                engine=engine,
                meta={
                    "repeat": r,
                    "seed": draw_seeds[r],
                    "train": train,
                    "test_sets": test,
                    "test": count_wins(tidy_subset(tidy, test)),
                },
            )
        )
    outcomes = run_batch(
        requests,
        seed=fit_seed,
        executor=executor,
        n_jobs=n_jobs,
        reduce=_score,
        context=RunContext(progress, cancel),
    )
    good = [o.value for o in outcomes if o.ok]
    if not good:
        raise RuntimeError(
            "every calibration fit failed; the first error: " + str(outcomes[0].error)
        )
    settings = {
        "n_train": n_train,
        "n_test": n_test,
        "repeats": repeats,
        "d_min": d_min,
        "paired": paired if d_min is not None else None,
        "ties": ties,
        "hyperprior": hyperprior,
        "prior_scale": prior_scale,
        "seed": seed,
    }
    if tie_threshold:
        settings["tie_threshold"] = tie_threshold
    failed = [f"repeat {o.request.meta['repeat']}: {o.error}" for o in outcomes if not o.ok]
    splits = [(r.meta["train"], r.meta["test_sets"]) for r in requests]
    return Calibration(pd.concat(good, ignore_index=True), failed, settings, splits)
