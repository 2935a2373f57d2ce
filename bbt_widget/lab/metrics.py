"""``bbt.compare_metrics``: one BBT fit per metric, and which algorithms dominate others.

Papers report several metrics (accuracy and F1, error and training time) and readers rank them
by hand. :func:`compare_metrics` fits the BBT model once per metric, through the batch layer
(:mod:`bbt_widget.lab.batch`: local cores or a Dask cluster, one seed per metric from the
user's seed), and :class:`MetricsResult` lines the decisions up: per pair and metric, which
algorithm is claimed better; per ordered pair, on which metrics ``a`` is better and on which
worse. ``a`` *dominates* ``b`` when it is claimed better on at least one metric and worse on
none; the *Pareto set* holds the algorithms no other dominates.

The metrics are score columns of long-form results (one row per data set, algorithm and
perhaps fold, one column per metric):

>>> import bbt_widget as bbt
>>> res = bbt.compare_metrics(  # doctest: +SKIP
...     df, metrics=["acc", "f1", "time"], lower_is_better=["time"],
...     dataset="db", algorithm="algorithm", fold="fold")
>>> res.dominance("weak")  # doctest: +SKIP
>>> res.pareto("weak")  # doctest: +SKIP
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..core.bidi import isolate, pair_label
from ..core.draws import ProgressCallback
from ..core.group_result import GroupedBBTResult
from ..core.groups import check_group_request
from ..core.names import clean_name, joined, shown
from ..core.options import (
    DEFAULT_HDI,
    DEFAULT_INTERPRETATION,
    DEFAULT_ROPE,
    DEFAULT_TIES,
    Rule,
    RuleChoice,
)
from ..core.options import resolve_interpretation as _resolve
from ..core.posterior import flip_decision
from ..core.result import BBTResult
from ..core.run_context import RunContext
from ..core.validation import (
    DEFAULT_SEED,
    check_adapt_delta,
    check_count,
    check_hdi,
    check_max_treedepth,
    check_rope,
    check_sampler_counts,
    check_tie_threshold,
)
from ..fitting import SAMPLER_SETTINGS, prepare_fit
from .batch import ResultsFit, check_executor, run_batch

if TYPE_CHECKING:
    import altair as alt

#: What a pair's decision is on a metric where one of the two algorithms has no results.
MISSING = "missing"
#: A decision read the other way round (b against a); the others read the same both ways.
#: Keywords of :func:`bbt_widget.fit` that :func:`compare_metrics` sets itself, per metric.
_PER_METRIC = ("score", "lower_is_better")
#: Sampler keywords of :func:`bbt_widget.fit`, handed to :meth:`PreparedFit.sample`.
_SAMPLER = SAMPLER_SETTINGS
#: The keywords of :func:`bbt_widget.fit` that ``compare_metrics`` passes on, the same for
#: every metric (``score`` and ``lower_is_better`` are per metric; ``sd`` tables and the
#: seed, progress and cancel of the whole batch are not among them).
FIT_OPTIONS = (
    "dataset",
    "algorithm",
    "fold",
    "d_min",
    "paired",
    "ties",
    "tie_threshold",
    "hyperprior",
    "prior_scale",
    "engine",
    "group",
    *_SAMPLER,
)


def _metric_list(metrics: Any, name: str = "metrics") -> list[str]:
    """``metrics`` as a list of distinct column names (a single name is a list of one)."""
    if isinstance(metrics, str):
        metrics = [metrics]
    if not isinstance(metrics, Iterable) or isinstance(metrics, (bytes, Mapping)):
        raise TypeError(
            f"{name} must be a list of score columns, e.g. ['acc', 'f1', 'time']; got "
            f"{type(metrics).__name__} {metrics!r}"
        )
    out = [str(m) for m in list(metrics)]
    if not out:
        raise ValueError(f"{name} is empty; give the score columns to compare, e.g. ['acc', 'f1']")
    dup = sorted({m for m in out if out.count(m) > 1})
    if dup:
        raise ValueError(f"{name} names {dup[0]!r} more than once; give each metric once")
    # names are compared as the results' names are: "acc" and "acc " would be two metrics
    # that every table and chart shows alike
    first: dict[str, str] = {}
    for m in out:
        seen = first.setdefault(clean_name(m), m)
        if seen != m:
            raise ValueError(
                f"{name} names {joined(shown([seen, m]))}, one name once surrounding whitespace "
                "is removed and Unicode is normalised (NFC); give each metric once, or rename "
                "one of the columns if they are different metrics"
            )
    return out


def _check_not_layout(chosen: list[str], layout: Mapping[str, Any], name: str) -> None:
    """Refuse a metric that is a column of the layout (the data sets, algorithms, folds or
    groups): read as scores, fold numbers or IDs would be fitted as a metric."""
    for role in ("dataset", "algorithm", "fold", "group"):
        column = layout.get(role)
        if not isinstance(column, str):
            continue
        hit = [m for m in chosen if clean_name(m) == clean_name(column)]
        if hit:
            what = "data-set" if role == "dataset" else role
            raise ValueError(
                f"{name}: {hit[0]!r} is the {what} column ({role}={column!r}), not a score; "
                f"leave it out of {name}"
            )


def metric_thresholds(tie_threshold: Any, metrics: Sequence[str]) -> dict[str, Any]:
    """Each metric's tie threshold, from ``compare_metrics``' ``tie_threshold``: ``None``, one
    number for one metric (or 0, no threshold, for all), or a mapping metric -> threshold
    (a metric left out has none). The values are checked by each metric's fit.

    A tie threshold is in score units: one number for several metrics would put one scale on
    all of them, half a point of accuracy on times in seconds, so it is refused.

    Raises
    ------
    ValueError
        One number above 0 for several metrics (the message gives the mapping to pass), or
        a mapping naming a column that is not one of ``metrics``.
    """
    if isinstance(tie_threshold, Mapping):
        stray = [str(k) for k in tie_threshold if k not in metrics]
        if stray:
            raise ValueError(
                f"tie_threshold names {stray[0]!r}, which is not one of the metrics "
                f"{list(metrics)}; give a threshold for some of the metrics (a metric left "
                "out has none)"
            )
        return {m: tie_threshold.get(m) for m in metrics}
    if tie_threshold is not None and len(metrics) > 1 and check_tie_threshold(tie_threshold):
        example = dict.fromkeys(metrics, tie_threshold)
        raise ValueError(
            f"tie_threshold={tie_threshold!r} is in score units, and {len(metrics)} metrics "
            f"({', '.join(metrics)}) may have as many scales (half a point of accuracy is "
            "nothing in seconds); give each metric its own, e.g. "
            f"tie_threshold={example!r} (a metric left out has none)"
        )
    return dict.fromkeys(metrics, tie_threshold)


def _empty_list(value: Any) -> bool:
    """Whether ``value`` is an empty list or tuple (no metric where lower is better)."""
    return isinstance(value, (list, tuple)) and not value


def check_metrics(
    data: pd.DataFrame,
    metrics: Any,
    lower_is_better: Any,
    name: str = "metrics",
    layout: Mapping[str, Any] | None = None,
) -> tuple[list[str], list[str]]:
    """The metrics (score columns of ``data``) and those where lower is better, checked.

    ``name`` is the argument the metrics were given as (``metrics`` of ``compare_metrics``,
    ``score`` of the widget), named in the messages; ``layout`` holds the ``dataset``,
    ``algorithm``, ``fold`` and ``group`` columns, which no metric may be.

    Raises
    ------
    TypeError, ValueError
        Not a list of names, a name twice (also once names are compared as the results'
        are: "acc" and "acc "), a metric that is not a column of ``data`` or that is a
        column of the ``layout``, or a ``lower_is_better`` metric that is not one of
        ``metrics``.
    """
    chosen = _metric_list(metrics, name)
    _check_not_layout(chosen, layout or {}, name)
    if not isinstance(data, pd.DataFrame):
        raise TypeError(
            "several metrics need the results as one DataFrame with a score column per "
            f"metric (long form: algorithm=, dataset=); got {type(data).__name__}"
        )
    columns = [str(c) for c in data.columns]
    absent = [m for m in chosen if m not in columns]
    if absent:
        raise ValueError(
            f"{name}: {absent[0]!r} is not a column of the results (columns: "
            f"{', '.join(columns)}); each metric is a score column of long-form results"
        )
    if lower_is_better is None or lower_is_better is False or _empty_list(lower_is_better):
        lower: list[str] = []  # [] is none, as the command line gives it without the flag
    elif lower_is_better is True:
        raise TypeError(
            "lower_is_better=True is ambiguous with several metrics; name the metrics where a "
            f"lower score is better, e.g. lower_is_better=[{chosen[-1]!r}]"
        )
    else:
        lower = _metric_list(lower_is_better, "lower_is_better")
    stray = [m for m in lower if m not in chosen]
    if stray:
        raise ValueError(
            f"lower_is_better names {stray[0]!r}, which is not one of the metrics "
            f"{chosen}; lower_is_better must be a subset of {name}"
        )
    return chosen, lower


class MetricsResult:
    """BBT fits of the same algorithms on several metrics, side by side.

    Attributes
    ----------
    results
        Metric -> :class:`~bbt_widget.BBTResult` (fits that failed are absent; see ``errors``).
    metrics
        The metrics, in the order given.
    lower_is_better
        The metrics where a lower score is better.
    algorithms
        Every algorithm of any metric, in order of first appearance.
    errors
        Metric -> the error of its fit, for fits that failed.
    warnings
        Metric -> the diagnostics warnings of its fit.
    groups
        With ``compare_metrics(..., group=...)``: the groups (each metric's result is then a
        :class:`~bbt_widget.GroupedBBTResult`); otherwise empty.
    seed
        The user's seed of :func:`compare_metrics` (metric ``k`` was fitted with
        ``spawn_seeds(seed, n)[k]``), or ``None`` when not known.
    """

    def __init__(
        self,
        results: Mapping[str, BBTResult],
        metrics: Sequence[str],
        lower_is_better: Sequence[str] = (),
        errors: Mapping[str, str] | None = None,
        warnings: Mapping[str, list[str]] | None = None,
        seed: int | None = None,
    ) -> None:
        self.results = dict(results)
        self.seed = seed
        self.metrics = list(metrics)
        self.lower_is_better = list(lower_is_better)
        self.errors = dict(errors or {})
        self.warnings = dict(warnings or {})
        seen: dict[str, None] = {}
        for m in self.metrics:
            if m in self.results:
                seen.update(dict.fromkeys(self.results[m].algorithms))
        self.algorithms = list(seen)
        grouped = [r for r in self.results.values() if isinstance(r, GroupedBBTResult)]
        self.groups: list[str] = list(grouped[0].groups) if grouped else []

    def summary(
        self,
        interpretation: RuleChoice = DEFAULT_INTERPRETATION,
        rope: Sequence[float] = DEFAULT_ROPE,
        hdi: float = DEFAULT_HDI,
    ) -> pd.DataFrame:
        """The decisions per pair and metric: :meth:`decisions` of the pooled abilities."""
        return self.decisions(interpretation, rope, hdi)

    def __repr__(self) -> str:
        failed = f", {len(self.errors)} failed" if self.errors else ""
        return (
            f"<MetricsResult: {len(self.metrics)} metrics ({', '.join(self.metrics)}), "
            f"{len(self.algorithms)} algorithms{failed}>"
        )

    def rule(self, interpretation: RuleChoice = DEFAULT_INTERPRETATION) -> Rule:
        """The decision rule ``interpretation`` stands for (``"auto"``: by the number of
        algorithms, as for a single fit)."""
        return _resolve(interpretation, len(self.algorithms)).rule

    def decisions(
        self,
        interpretation: RuleChoice = DEFAULT_INTERPRETATION,
        rope: Sequence[float] = DEFAULT_ROPE,
        hdi: float = DEFAULT_HDI,
        group: str | None = None,
    ) -> pd.DataFrame:
        """Pair x metric table of decisions.

        One row per unordered pair (algorithms in :attr:`algorithms` order): ``pair``
        ("a > b"), ``alg_a``, ``alg_b``, then one column per metric with that fit's decision
        read as a against b: ``"a better"``, ``"b better"``, ``"equivalent"``, ``"no claim"``,
        ``"not compared"`` (never met), ``"missing"`` (no results of a or b on that metric)
        or ``"failed"`` (the metric's fit failed).

        ``group``: with ``compare_metrics(..., group=...)``, the decisions of that group's
        abilities (:meth:`GroupedBBTResult.group_summary`); ``None`` (default): the pooled
        abilities (``summary()``), as :meth:`dominance` and :meth:`pareto` read them.
        """
        col = self.rule(interpretation)
        rope, hdi = check_rope(rope), check_hdi(hdi)
        self._check_group(group)
        # each fit's summary once, read both ways round: (a, b) -> decision of a against b
        oriented = {}
        for m, result in self.results.items():
            summary = _summary(result, group, rope, hdi)
            both = {}
            for a, b, d in zip(summary["alg_a"], summary["alg_b"], summary[col]):
                both[(a, b)] = d
                both[(b, a)] = flip_decision(d)
            oriented[m] = both
        algs = self.algorithms
        rows = []
        for i, a in enumerate(algs):
            for b in algs[i + 1 :]:
                row: dict[str, Any] = {"pair": pair_label(a, b), "alg_a": a, "alg_b": b}
                for m in self.metrics:
                    row[m] = oriented[m].get((a, b), MISSING) if m in oriented else "failed"
                rows.append(row)
        return pd.DataFrame(rows, columns=["pair", "alg_a", "alg_b", *self.metrics])

    def _check_group(self, group: str | None) -> None:
        """Refuse a ``group`` these fits do not have, naming the groups they have."""
        if group is None:
            return
        if not self.groups:
            raise ValueError(
                f"group={group!r}: these fits have no groups; run compare_metrics(..., "
                "group='<column>') to compare the metrics within each group"
            )
        if group not in self.groups:
            raise ValueError(f"unknown group {group!r}; the groups are {self.groups}")

    def dominance(
        self,
        interpretation: RuleChoice = DEFAULT_INTERPRETATION,
        rope: Sequence[float] = DEFAULT_ROPE,
        hdi: float = DEFAULT_HDI,
        group: str | None = None,
    ) -> pd.DataFrame:
        """One row per ordered pair: ``alg_a``, ``alg_b``, ``metrics_better`` and
        ``metrics_worse`` (the metrics where a is claimed better than b, and worse) and
        ``dominates``: a is claimed better on at least one metric and worse on none.
        ``group``: of one group's decisions (see :meth:`decisions`); default the pooled."""
        return dominance_table(self.decisions(interpretation, rope, hdi, group), self.metrics)

    def pareto(
        self,
        interpretation: RuleChoice = DEFAULT_INTERPRETATION,
        rope: Sequence[float] = DEFAULT_ROPE,
        hdi: float = DEFAULT_HDI,
        group: str | None = None,
    ) -> list[str]:
        """The algorithms no other dominates (the Pareto set), in :attr:`algorithms` order;
        ``group``: within one group (see :meth:`decisions`); default the pooled abilities."""
        return pareto_set(self.dominance(interpretation, rope, hdi, group), self.algorithms)

    def group_decisions(
        self,
        interpretation: RuleChoice = DEFAULT_INTERPRETATION,
        rope: Sequence[float] = DEFAULT_ROPE,
        hdi: float = DEFAULT_HDI,
    ) -> pd.DataFrame:
        """:meth:`decisions` pooled and in every group, stacked: a ``group`` column first
        (``"pooled"``, then the groups in order), then the columns of :meth:`decisions`.

        Raises
        ------
        ValueError
            When the fits have no groups (``compare_metrics`` without ``group=``).
        """
        if not self.groups:
            raise ValueError(
                "these fits have no groups; run compare_metrics(..., group='<column>') for "
                "the decisions within each group"
            )
        parts = [
            self.decisions(interpretation, rope, hdi, g).assign(group=g or "pooled")
            for g in (None, *self.groups)
        ]
        frame = pd.concat(parts, ignore_index=True)
        return frame[["group", *[c for c in frame.columns if c != "group"]]]

    def rankings(self, hdi: float = DEFAULT_HDI) -> pd.DataFrame:
        """Every metric's :meth:`BBTResult.ranking` stacked, with a ``metric`` column first."""
        parts = [self.results[m].ranking(hdi).assign(metric=m) for m in self.results]
        frame = pd.concat(parts, ignore_index=True)
        return frame[["metric", *[c for c in frame.columns if c != "metric"]]]

    def chart(
        self,
        interpretation: RuleChoice = DEFAULT_INTERPRETATION,
        rope: Sequence[float] = DEFAULT_ROPE,
        hdi: float = DEFAULT_HDI,
    ) -> alt.FacetChart:
        """The rankings side by side, one column per metric: each algorithm's mean ability
        with its HDI, algorithms in the same rows in every column (the Pareto set first),
        coloured by whether they are in the Pareto set."""
        import altair as alt  # here: altair is slow to import and only charts need it

        from ..core.palette import DECISION_COLORS, NEUTRAL_COLORS

        front = set(self.pareto(interpretation, rope, hdi))
        frame = self.rankings(hdi)
        frame["set"] = ["Pareto set" if a in front else "dominated" for a in frame["algorithm"]]
        mean_rank = frame.groupby("algorithm", sort=False)["expected_rank"].mean()
        order = sorted(mean_rank.index, key=lambda a: (a not in front, mean_rank[a]))
        colours = {"Pareto set": DECISION_COLORS["better"], "dominated": NEUTRAL_COLORS["interval"]}
        y = alt.Y("algorithm:N", sort=order, title=None)
        # the layers hold no data of their own: a layer's data would be drawn whole in
        # every panel, and only the facet's data is split by metric
        base = alt.Chart()
        ranges = base.mark_rule().encode(
            x=alt.X("low:Q", title="ability (mean, HDI)"),
            x2="high:Q",
            y=y,
            color=alt.Color("set:N", legend=None),
        )
        points = base.mark_point(filled=True, size=60).encode(
            x="mean_beta:Q",
            y=y,
            color=alt.Color(
                "set:N",
                scale=alt.Scale(domain=list(colours), range=list(colours.values())),
                legend=alt.Legend(title=None, orient="bottom"),
            ),
            tooltip=[
                alt.Tooltip("metric:N"),
                alt.Tooltip("algorithm:N"),
                alt.Tooltip("mean_beta:Q", format=".2f", title="mean ability"),
                alt.Tooltip("expected_rank:Q", format=".2f", title="expected rank"),
                alt.Tooltip("p_best:Q", format=".3f", title="P(best)"),
                alt.Tooltip("set:N"),
            ],
        )
        rule = self.rule(interpretation)
        returned: alt.FacetChart = (
            alt.layer(ranges, points)
            .properties(width=160)
            .facet(
                column=alt.Column("metric:N", sort=list(self.results), title=None),
                data=frame,
            )
            .resolve_scale(x="independent")
            .properties(
                title=alt.TitleParams(
                    "Rankings per metric",
                    subtitle=f"Pareto set under the {rule} interpretation: "
                    f"{', '.join(isolate(a) for a in order if a in front)}",
                    anchor="start",
                )
            )
        )
        return returned


def _summary(
    result: BBTResult, group: str | None, rope: tuple[float, float], hdi: float
) -> pd.DataFrame:
    """``result.summary()``, or the rows of ``group`` in its group summary (same columns)."""
    if group is None:
        return result.summary(rope=rope, hdi=hdi)
    assert isinstance(result, GroupedBBTResult)  # MetricsResult._check_group saw groups
    per = result.group_summary(rope=rope, hdi=hdi)
    pooled = result.summary(rope=rope, hdi=hdi)  # the same pairs, with alg_a and alg_b
    rows = per[per["group"] == group].drop(columns="group").reset_index(drop=True)
    return rows.assign(alg_a=pooled["alg_a"].to_numpy(), alg_b=pooled["alg_b"].to_numpy())


def dominance_table(decisions: pd.DataFrame, metrics: Sequence[str]) -> pd.DataFrame:
    """The dominance rows of a pair x metric decision table (:meth:`MetricsResult.decisions`).

    For each unordered pair, two rows (a against b, then b against a). A metric counts for
    a when its decision is ``"a better"`` (for the row b against a: ``"b better"``);
    ``"equivalent"``, ``"no claim"``, ``"not compared"``, ``"missing"`` and ``"failed"`` count
    on neither side.
    """
    rows = []
    for rec in decisions.to_dict("records"):
        a_wins = [m for m in metrics if rec[m] == "a better"]
        b_wins = [m for m in metrics if rec[m] == "b better"]
        for x, y, better, worse in (
            (rec["alg_a"], rec["alg_b"], a_wins, b_wins),
            (rec["alg_b"], rec["alg_a"], b_wins, a_wins),
        ):
            rows.append(
                {
                    "alg_a": x,
                    "alg_b": y,
                    "metrics_better": better,
                    "metrics_worse": worse,
                    "dominates": bool(better) and not worse,
                }
            )
    columns = ["alg_a", "alg_b", "metrics_better", "metrics_worse", "dominates"]
    return pd.DataFrame(rows, columns=columns)


def pareto_set(dominance: pd.DataFrame, algorithms: Sequence[str]) -> list[str]:
    """The algorithms that no row of ``dominance`` says are dominated, in the given order."""
    dominated = set(dominance.loc[dominance["dominates"], "alg_b"])
    return [a for a in algorithms if a not in dominated]


def compare_metrics(
    data: pd.DataFrame,
    *,
    metrics: Sequence[str],
    lower_is_better: Sequence[str] | None = None,
    seed: int | None = DEFAULT_SEED,
    executor: Any = None,
    n_jobs: int | None = None,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    **options: Any,
) -> MetricsResult:
    """Fit the BBT model once per metric and compare the decisions across metrics.

    Parameters
    ----------
    data
        Long-form results with one score column per metric: ``algorithm=`` names the
        algorithm column, ``dataset=`` (and ``fold=``) the data sets (and folds).
    metrics
        The score columns to compare, e.g. ``["acc", "f1", "time"]``.
    lower_is_better
        The metrics where a lower score is better (errors, times), a subset of ``metrics``.
    seed
        One seed for all fits: metric ``k`` uses ``SeedSequence(seed).spawn(n)[k]``, so the
        numbers do not depend on the executor.
    executor, n_jobs
        ``None`` runs the fits on all local cores; a ``dask.distributed.Client`` (or
        scheduler address) one Dask task per metric. See
        :func:`bbt_widget.lab.batch.run_batch`.
    progress, cancel
        As for :func:`bbt_widget.fit`, for all the fits.
    **options
        Any other keyword of :func:`bbt_widget.fit` (the layout ``dataset``, ``algorithm``,
        ``fold``; ``d_min``, ``paired``, ``ties``, the hyper-prior, the engine and the
        sampler settings), the same for every metric. ``score`` is not one: the metrics are
        the score columns, none of which may be the ``dataset``, ``algorithm``, ``fold`` or
        ``group`` column. ``tie_threshold`` is in score units, so it is given per metric,
        ``tie_threshold={"acc": 0.005, "time": 0.5}`` (a metric left out has none); one
        number is accepted for one metric only (see :func:`metric_thresholds`). ``group``
        (a column of ``data`` or a dict data set -> group, as for :func:`bbt_widget.fit`)
        fits the group model per metric: each ``results[metric]`` is then a
        :class:`~bbt_widget.GroupedBBTResult`, the dominance and the Pareto set are of the
        pooled abilities unless a method is given ``group=``, and
        :meth:`MetricsResult.group_decisions` stacks the decisions of every group.

    Returns
    -------
    MetricsResult
        ``results`` (metric -> BBTResult), ``decisions()``, ``dominance()``, ``pareto()``,
        ``rankings()`` and ``chart()`` (and ``groups``, ``group_decisions()`` with ``group=``).

    Raises
    ------
    TypeError, ValueError
        Bad metrics or options, or results a metric cannot be fitted on: checked for every
        metric before the first fit starts.
    """
    if "score" in options:
        raise ValueError(
            "compare_metrics takes the score columns as metrics=[...], not score=; e.g. "
            f"metrics=[{options['score']!r}, ...]"
        )
    unknown = sorted(set(options) - set(FIT_OPTIONS))
    if unknown:
        raise TypeError(
            f"compare_metrics got an unexpected keyword {unknown[0]!r}; the options of "
            f"every metric's fit are {', '.join(FIT_OPTIONS)}"
        )
    metrics, lower = check_metrics(data, metrics, lower_is_better, layout=options)
    thresholds = metric_thresholds(options.get("tie_threshold"), metrics)
    if options.get("group") is not None:  # the same for every metric: said once
        check_group_request(options["group"], options.get("ties", DEFAULT_TIES), data)
    check_executor(executor)
    if n_jobs is not None:
        check_count(n_jobs, "n_jobs")
    sampler = {k: options[k] for k in _SAMPLER if k in options}
    # iterations left as None are the engine's defaults (engines.iterations)
    size = (sampler.get("chains", 4), sampler.get("iter_sampling"))
    check_sampler_counts(sampler)
    if "adapt_delta" in sampler:
        check_adapt_delta(sampler["adapt_delta"])
    if "max_treedepth" in sampler:
        check_max_treedepth(sampler["max_treedepth"])
    jobs = []
    for m in metrics:
        per_metric = {
            "ties": DEFAULT_TIES,
            **options,
            "score": m,
            "lower_is_better": m in lower,
            "tie_threshold": thresholds[m],
        }
        counting = {k: v for k, v in per_metric.items() if k not in _SAMPLER}
        try:  # every metric read, counted and checked before the first fit
            prepared = prepare_fit(data, **counting, seed=seed, size=size)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"metric {m!r}: {exc}") from None
        prepared.warn(stacklevel=2)
        jobs.append(ResultsFit(data, per_metric, {"metric": m}))
    outcomes = run_batch(
        jobs, seed=seed, executor=executor, n_jobs=n_jobs, context=RunContext(progress, cancel)
    )
    return MetricsResult(
        {o.request.meta["metric"]: o.value for o in outcomes if o.ok},
        metrics,
        lower,
        errors={o.request.meta["metric"]: str(o.error) for o in outcomes if not o.ok},
        warnings={o.request.meta["metric"]: o.warnings for o in outcomes},
        seed=seed,
    )
