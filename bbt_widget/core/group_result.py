"""The result of a fit with data sets in groups: the pooled abilities as in any fit, and the
abilities, summaries, rankings and claims of each group."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from . import diagnostics, posterior
from .options import DEFAULT_HDI, DEFAULT_ROPE, Rule
from .result import BBTResult
from .validation import check_hdi, check_interpretation, check_rope
from .wintable import comparison_components

#: Decisions that are claims (the others: "no claim", "not compared").
_CLAIMS = ("a better", "b better", "equivalent")


class GroupedBBTResult(BBTResult):
    """A BBT fit with group-level abilities (``bbt.fit(..., group=...)``).

    ``summary()``, ``ranking()``, ``pair()`` and the other :class:`BBTResult` methods read the
    pooled abilities ``beta``; ``win_table`` is the pooled win table (every data set). The
    groups' abilities ``beta_group[g]`` are partially pooled towards them (``stan/
    bbt_groups.stan``) and summarised by :meth:`group_summary`, :meth:`group_ranking` and
    :meth:`group_claims`.

    Attributes
    ----------
    groups
        Group names, in order of first appearance in the results.
    group_tables
        Per group, its win table (the same counting rules applied to its data sets only).
    group_datasets
        Per group, its data sets.
    """

    def __init__(
        self,
        base: BBTResult,
        groups: Sequence[str],
        group_tables: dict[str, pd.DataFrame],
        group_datasets: dict[str, list[str]],
    ) -> None:
        super().__init__(
            base.draws,
            base.win_table,
            base.algorithms,
            base.settings,
            base._fitted,
            base.tidy,
            base.components,
        )
        self.audit = base.audit
        self.groups = list(groups)
        self.group_tables = dict(group_tables)
        self.group_datasets = {g: list(d) for g, d in group_datasets.items()}

    def __repr__(self) -> str:
        return (
            super()
            .__repr__()
            .replace("<BBTResult:", f"<GroupedBBTResult: {len(self.groups)} groups,")
        )

    # ------------------------------------------------------------------ group draws

    def group_beta(self, group: str) -> np.ndarray:
        """Draws of the abilities in ``group``, shape (chains * draws, algorithms)."""
        if group not in self.groups:
            raise ValueError(f"unknown group {group!r}; the groups are {self.groups}")
        g = self.groups.index(group)
        n = len(self.algorithms)
        b = self.draws.params["beta_group"]
        return b.reshape(-1, b.shape[-1])[:, g * n : (g + 1) * n]

    @cached_property
    def _group_p_sorted(self) -> dict[str, np.ndarray]:
        out = {}
        for g in self.groups:
            p = posterior.pair_probabilities(self.group_beta(g), self._pairs)
            p.sort(axis=0)
            out[g] = p
        return out

    @cached_property
    def _group_compared(self) -> dict[str, np.ndarray]:
        out = {}
        for g, table in self.group_tables.items():
            where = {
                a: k for k, c in enumerate(comparison_components(table, self.algorithms)) for a in c
            }
            a = self.algorithms
            out[g] = np.array([where[a[i]] == where[a[j]] for i, j in self._pairs], dtype=bool)
        return out

    # ------------------------------------------------------------------ group summaries

    def group_summary(
        self, rope: Sequence[float] = DEFAULT_ROPE, hdi: float = DEFAULT_HDI
    ) -> pd.DataFrame:
        """P(a > b) per pair and group, pairs oriented as in :meth:`summary` (pooled order).

        Returns
        -------
        pandas.DataFrame
            ``pair, group, mean, low, high, above_50, in_rope, weak, strong`` (as in
            :meth:`summary`, from the draws of the group's abilities), one row per pair and
            group, groups in order within each pair. A pair whose algorithms never met in a
            group, even through others, is ``"not compared"`` there.
        """
        rope = check_rope(rope)
        hdi = check_hdi(hdi)
        a = self.algorithms
        alg_a = [a[i] for i, _ in self._pairs]
        alg_b = [a[j] for _, j in self._pairs]
        parts = []
        for g in self.groups:
            table = posterior.summarise(
                self._group_p_sorted[g],
                self._pair_labels,
                alg_a,
                alg_b,
                rope,
                hdi,
                self._group_compared[g],
            )
            table.insert(1, "group", g)
            table["order"] = np.arange(len(table))
            parts.append(table)
        both = pd.concat(parts, ignore_index=True).sort_values("order", kind="stable")
        columns = ["pair", "group", "mean", "low", "high", "above_50", "in_rope", "weak", "strong"]
        return both[columns].reset_index(drop=True)

    def group_ranking(self, hdi: float = DEFAULT_HDI) -> pd.DataFrame:
        """:meth:`ranking` of each group's abilities: ``group`` then the ranking columns,
        best first within each group, groups in order."""
        hdi = check_hdi(hdi)
        parts = []
        for g in self.groups:
            table = posterior.ranking(self.group_beta(g), self.algorithms, hdi)
            table.insert(0, "group", g)
            parts.append(table)
        return pd.concat(parts, ignore_index=True)

    def group_claims(
        self,
        interpretation: Rule = "weak",
        rope: Sequence[float] = DEFAULT_ROPE,
        hdi: float = DEFAULT_HDI,
    ) -> pd.DataFrame:
        """Which claims hold in every group and which change between groups.

        Parameters
        ----------
        interpretation
            ``"weak"`` (Sec. 9.2) or ``"strong"`` (Sec. 9.3).
        rope, hdi
            As for :meth:`summary`.

        Returns
        -------
        pandas.DataFrame
            One row per pair (``summary()`` order): ``pair``, ``pooled`` (the pooled
            decision), one column per group with its decision, and ``status``:
            ``"holds in every group"`` (the same claim everywhere), ``"changes between
            groups"`` (a claim in some group that another group does not share) or ``"no
            claim in any group"``.
        """
        interpretation = check_interpretation(interpretation)
        pooled = self.summary(rope=rope, hdi=hdi)
        per = self.group_summary(rope=rope, hdi=hdi)
        wide = per.pivot(index="pair", columns="group", values=interpretation)
        out = pd.DataFrame({"pair": pooled["pair"], "pooled": pooled[interpretation]})
        for g in self.groups:
            out[g] = wide.loc[out["pair"], g].to_numpy()
        decisions = out[self.groups].to_numpy()
        claimed = np.isin(decisions, _CLAIMS)
        same = (decisions == decisions[:, :1]).all(axis=1)
        out["status"] = np.select(
            [same & claimed[:, 0], ~claimed.any(axis=1)],
            ["holds in every group", "no claim in any group"],
            default="changes between groups",
        )
        return out

    def in_group(self, group: str) -> BBTResult:
        """The fit as seen in one group: a :class:`BBTResult` whose abilities are ``group``'s.

        Its ``summary()`` holds :meth:`group_summary`'s rows of ``group`` (pairs oriented as
        in the pooled :meth:`summary`, with all of its columns), its ``ranking()``
        :meth:`group_ranking`'s, and its ``win_table`` is the group's; the summaries,
        rankings and charts that read a result's abilities then show the group (the widget's
        group selector). The model checks (PPC, diagnostics, WAIC) are the grouped fit's own:
        call them on this result, not on the view.
        """
        return _GroupView(self, group)

    # ------------------------------------------------------------------ checks

    @cached_property
    def _fitted_table(self) -> pd.DataFrame:
        """The fitted rows: each group's pairs with games, in the order of the Stan data."""
        parts = []
        for g in self.groups:
            t = self.group_tables[g]
            t = t[(t["win1"] + t["win2"]) > 0].copy()
            t.insert(0, "group", g)
            parts.append(t)
        return pd.concat(parts, ignore_index=True)

    @cached_property
    def idata(self) -> Any:
        """ArviZ InferenceData as for :class:`BBTResult`, one fitted row per group and pair
        (labelled ``"group: a vs b"``)."""
        t = self._fitted_table
        labels = [f"{g}: {a} vs {b}" for g, a, b in zip(t["group"], t["alg1"], t["alg2"])]
        return diagnostics.build_idata(self.draws, self.algorithms, labels, self._observed)

    @cached_property
    def _diagnostics(self) -> diagnostics.Diagnostics:
        return diagnostics.draws_diagnostics(self.draws, ["beta", "sigma", "tau", "beta_group"])


class _GroupView(BBTResult):
    """One group's abilities of a grouped fit, read as a fit of their own
    (:meth:`GroupedBBTResult.in_group`); pairs keep the pooled fit's orientation."""

    def __init__(self, grouped: GroupedBBTResult, group: str) -> None:
        beta = grouped.group_beta(group)  # refuses an unknown group
        table = grouped.group_tables[group]
        # (chains, draws, algorithms), as every fit's abilities: the chains' Monte Carlo
        # error (BBTResult.precision, the summary's settled claims) needs them apart
        chains = grouped.draws.params["beta_group"].shape[:-1]
        draws = replace(grouped.draws, params={"beta": beta.reshape(*chains, beta.shape[-1])})
        fitted = ((table["win1"] + table["win2"]) > 0).to_numpy()
        super().__init__(draws, table, grouped.algorithms, grouped.settings, fitted, grouped.tidy)
        self.audit = grouped.audit
        self.group = group
        #: The group's data sets (its results are among ``tidy``'s, which holds every group's)
        self.group_datasets = list(grouped.group_datasets[group])
        self._pooled_order = grouped._order

    def __repr__(self) -> str:
        return super().__repr__().replace("<BBTResult:", f"<BBTResult of group {self.group!r}:")

    @cached_property
    def _order(self) -> np.ndarray:
        return self._pooled_order
