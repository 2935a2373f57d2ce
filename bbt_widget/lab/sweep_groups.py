"""``bbt.sweep(..., group=...)``: every setting fits the group model, and the sweep shows the
decisions of each group across the settings beside the pooled ones.

:func:`grouped_fits` checks the grouping under every setting of the grid (each group's wins
counted with that setting's rules) and builds the batch's fits before the first one starts;
:class:`GroupedSweepResult` is the :class:`~bbt_widget.lab.sweep.SweepResult` of the pooled
abilities with the groups' decisions in :attr:`~GroupedSweepResult.group_frame`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..core.group_result import GroupedBBTResult
from ..core.groups import GroupSpec, assign_groups, check_group_request
from ..core.options import Rule
from ..core.result import BBTResult
from ..core.tidy import TidyResults
from ..core.validation import check_hdi, check_interpretation, check_rope
from ..core.wintable import comparison_components
from .batch import FitRequest, ResultsFit
from .sweep_result import SweepResult, flipped_decisions

#: What a grouped sweep keeps of a fit: the pooled abilities' draws and the groups' (draws x
#: groups * algorithms, group by group), all that travels back from a Dask worker.
GroupDraws = tuple[np.ndarray, np.ndarray]


def group_draws(result: BBTResult, request: FitRequest) -> GroupDraws:
    """The draws a grouped sweep keeps of a fit of the group model."""
    assert isinstance(result, GroupedBBTResult)  # grouped_fits asks for group model fits
    b = result.draws.params["beta_group"]
    return result.beta, b.reshape(-1, b.shape[-1])


def _label(setting: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in setting.items() if k != "replicate")


def grouped_fits(
    data: pd.DataFrame,
    tidy: TidyResults,
    group: GroupSpec,
    settings: Sequence[Mapping[str, Any]],
    layout: Mapping[str, Any],
    fit_options: Mapping[str, Any],
) -> tuple[list[ResultsFit], tuple[str, ...], list[dict[str, list[list[str]]]]]:
    """The fits of a grouped sweep, checked before any starts.

    For every setting the grouping is checked and each group's wins counted with the
    setting's rules (:func:`~bbt_widget.core.groups.assign_groups`): a tie policy the group
    model cannot fit, or a group left without games under some setting, fails here, naming
    the setting.

    Returns
    -------
    fits, groups, components
        One :class:`~bbt_widget.lab.batch.ResultsFit` per setting (``layout`` and
        ``fit_options`` with the setting's), the groups in order, and per setting the
        algorithms that met in each group (directly or through others).
    """
    fits = []
    found: dict[tuple[Any, ...], Any] = {}
    components = []
    groups: tuple[str, ...] = ()
    for s in settings:
        counting = {
            "d_min": s["d_min"],
            "paired": True if s["paired"] is None else bool(s["paired"]),
            "ties": s["ties"],
            "tie_threshold": s.get("tie_threshold"),
        }
        key = tuple(counting.values())
        if key not in found:
            try:
                check_group_request(group, s["ties"], data)
                found[key] = assign_groups(
                    tidy, data, group, dataset=layout.get("dataset"), counting=counting
                )
            except ValueError as exc:
                raise ValueError(f"sweep grid setting {_label(s)}: {exc}") from None
        grouping = found[key]
        groups = grouping.groups
        components.append(
            {g: comparison_components(t, tidy.algorithms) for g, t in grouping.tables.items()}
        )
        options = {
            **layout,
            **fit_options,
            **counting,
            "hyperprior": s["hyperprior"],
            "prior_scale": s["prior_scale"],
            "group": group,
        }
        fits.append(ResultsFit(data, options, dict(s)))
    return fits, groups, components


class GroupedSweepResult(SweepResult):
    """A sweep of the group model (``bbt.sweep(..., group=...)``).

    :attr:`frame`, :meth:`table`, :meth:`flips`, :meth:`stable_claims` and :meth:`chart` are
    those of every sweep, from the pooled abilities of each fit. The groups' decisions are in
    :attr:`group_frame` (and :meth:`group_table` for another ROPE or HDI mass), and
    :meth:`group_flips` lists the (group, pair) decisions that change across the settings.

    Attributes
    ----------
    groups
        The groups, in order.
    group_frame
        The columns of :attr:`frame` with ``group`` before ``pair``: one row per setting,
        group and pair, pairs oriented as in :attr:`frame`.
    """

    def __init__(
        self,
        settings: list[dict[str, Any]],
        draws: list[GroupDraws | None],
        errors: list[str | None],
        algorithms: Sequence[str],
        rope: tuple[float, float],
        hdi: float,
        components: list[list[list[str]]],
        groups: Sequence[str],
        group_components: list[dict[str, list[list[str]]]],
    ) -> None:
        super().__init__(
            settings,
            [None if d is None else d[0] for d in draws],
            errors,
            algorithms,
            rope,
            hdi,
            components,
        )
        self.groups = list(groups)
        n = len(self.algorithms)
        # per group: per setting, the sorted P(a > b) draws and which pairs met in the group
        self._group_p = {
            g: [None if d is None else self._sorted(d[1][:, k * n : (k + 1) * n]) for d in draws]
            for k, g in enumerate(self.groups)
        }
        self._group_beta = {
            g: [None if d is None else d[1][:, k * n : (k + 1) * n] for d in draws]
            for k, g in enumerate(self.groups)
        }
        self._group_linked = {
            g: [self._linked(c[g]) for c in group_components] for g in self.groups
        }
        self.group_frame = self.group_table(rope, hdi)

    def __repr__(self) -> str:
        head = f"<GroupedSweepResult: {len(self.groups)} groups,"
        return super().__repr__().replace("<SweepResult:", head)

    def group_table(
        self, rope: Sequence[float] | None = None, hdi: float | None = None
    ) -> pd.DataFrame:
        """:attr:`group_frame` for another ROPE or HDI mass (re-summarised draws, no refit)."""
        rope = self.rope if rope is None else check_rope(rope)
        hdi = self.hdi if hdi is None else check_hdi(hdi)
        parts = []
        for g in self.groups:
            part = self._tabulate(
                self._group_p[g], self._group_linked[g], rope, hdi, self._group_beta[g]
            )
            part.insert(part.columns.get_loc("pair"), "group", g)
            part["row"] = np.arange(len(part))
            parts.append(part)
        n_pairs = len(self._pairs)
        frame = pd.concat(parts, ignore_index=True)
        # setting by setting, then group by group, pairs in order within each
        frame["setting_index"] = frame["row"] // n_pairs
        frame = frame.sort_values(["setting_index"], kind="stable")
        return frame.drop(columns=["row", "setting_index"]).reset_index(drop=True)

    def group_flips(self, interpretation: Rule = "weak") -> pd.DataFrame:
        """(group, pair) decisions that change across the (successful) settings: ``group,
        pair, decision, n_settings, settings``, one row per group, pair and decision (as
        :meth:`flips`, within each group)."""
        col = check_interpretation(interpretation)
        f = self.group_frame
        return flipped_decisions(f.assign(setting=self._labels(f)), col, ["group", "pair"])
