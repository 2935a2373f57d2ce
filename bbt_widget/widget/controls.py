"""The widget's controls and settings: the constructor's arguments checked and turned into the
controls' first values (:func:`initial_controls`), the ``fit`` keywords the controls ask for,
the checks of a changed control, and the problems shown inline instead of raising
(:class:`Controls`, a section object :class:`~bbt_widget.widget.app.BBTWidget` composes).

Controls split by cost, as the core does: the fit controls (ties, local ROPE / d_min, paired,
metric direction, hyper-prior and its scale) change the win table or the model and start a
fit; the view controls (ROPE bounds, HDI mass, control algorithm, interpretation, the group
shown) only re-summarise the draws already there. Every control's value is checked where it
enters (:mod:`~bbt_widget.widget.checks`): one that is not valid is refused, the trait keeps its
last good value (the one the charts show) and the widget says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.options import DEFAULT_D_MIN, resolve_interpretation
from ..core.settings import CountingSettings, PriorSettings
from ..core.tidy import TidyResults
from ..core.validation import check_hdi, check_rope
from .checks import SettingChecks
from .keys import pair_of
from .messages import check_ranking_model, paired_note
from .views import weak_rule_caveat

__all__ = [
    "FIT_TRAITS",
    "TTEST_ROPE",
    "VIEW_TRAITS",
    "Controls",
    "initial_controls",
]

#: The controls whose change needs a new fit.
FIT_TRAITS = (
    "ties",
    "tie_threshold",
    "local_rope",
    "d_min",
    "paired",
    "lower_is_better",
    "hyperprior",
    "prior_scale",
)
#: The controls whose change only re-summarises the draws.
VIEW_TRAITS = ("rope_low", "rope_high", "hdi", "control", "interpretation", "selected_group")
#: What the status line calls each view setting.
VIEW_SETTING_NAMES = {
    "rope_low": "ROPE",
    "rope_high": "ROPE",
    "hdi": "HDI",
    "control": "control algorithm",
    "interpretation": "rule",
    "selected_group": "group",
}
#: The fit controls as the status line names them when a change of one needs no new fit.
FIT_SETTING_NAMES = {
    "ties": "tie policy",
    "tie_threshold": "tie threshold",
    "local_rope": "local ROPE",
    "lower_is_better": "metric direction",
    "hyperprior": "hyper-prior",
    "prior_scale": "prior scale",
}
#: Default ROPE half-width of the correlated t-test (on the scores' scale), as in baselines.
TTEST_ROPE = 0.01


def initial_controls(
    tidy: TidyResults,
    *,
    lower_is_better: bool,
    d_min: float | None,
    paired: bool,
    ties: str,
    tie_threshold: float | None,
    hyperprior: str,
    prior_scale: float | None,
    rope: Sequence[float],
    hdi: float,
    control: str | None,
    interpretation: str,
    ranking_model: str,
    rho: float | None,
    ttest_rope: float,
) -> dict[str, Any]:
    """The widget's first trait values from the constructor's arguments, each checked: bad
    settings raise the core's own message here, before anything is shown."""
    counting = CountingSettings(ties, d_min, paired, tie_threshold)
    prior = PriorSettings(hyperprior, prior_scale)
    d_min = counting.d_min
    rope = check_rope(rope)
    hdi = check_hdi(hdi)
    algorithms = list(tidy.algorithms)
    if control is not None and control not in algorithms:
        raise ValueError(f"control {control!r} is not one of the algorithms {algorithms}")
    interpretation = resolve_interpretation(interpretation, len(algorithms)).rule
    check_ranking_model(ranking_model)
    if rho is not None or ttest_rope != TTEST_ROPE:
        # the baselines import Altair: only for values that are not the (valid) defaults
        from ..baselines._cv import check_rho, check_rope_width

        check_rho(rho)
        check_rope_width(ttest_rope)
    local_ok = tidy.has_folds or tidy.has_sd
    if d_min is not None and not local_ok:
        raise ValueError(
            "d_min needs fold-level scores or an sd table; these results have one score "
            "per data set and algorithm (pass d_min=None)"
        )
    return {
        "algorithms": algorithms,
        "paired_available": tidy.paired_ok,
        "paired_reason": paired_note(tidy.paired_problem),
        "local_rope_available": local_ok,
        "local_rope_reason": "" if local_ok else "no fold-level scores",
        "ties": ties,
        "tie_threshold": counting.tie_threshold or 0.0,
        "local_rope": d_min is not None,
        "d_min": DEFAULT_D_MIN if d_min is None else d_min,
        "paired": counting.paired and tidy.paired_ok,
        "lower_is_better": lower_is_better,  # checked by tidy_results
        "hyperprior": prior.family,
        "prior_scale": prior.scale,
        "rope_low": rope[0],
        "rope_high": rope[1],
        "hdi": hdi,
        "control": control or "",
        "interpretation": interpretation,
        "caveat": weak_rule_caveat(len(algorithms), interpretation),
        "ranking_model": ranking_model,
    }


class Controls:
    """The checks of the widget's controls and the problems it shows (see the module doc).

    Parameters
    ----------
    widget
        The :class:`~bbt_widget.widget.app.BBTWidget` whose controls these are.
    scale_chosen
        Whether the user chose the hyper-prior's scale (then a new family keeps it); else
        each family gets its own default scale (paper Appendix A).
    """

    def __init__(self, widget: Any, *, scale_chosen: bool) -> None:
        self.w = widget
        self.scale_chosen = scale_chosen
        self._setting_default_scale = False
        #: The fit control whose change asked for the refit under way ('' for ``refit()``).
        self.changed = ""
        #: The problems shown in ``message``, by where they come from.
        self.problems: dict[str, str] = {}
        # every setting checked where it enters (widget/checks.py): refused values never
        # reach the views; the first values are checked here too
        self.checks = SettingChecks(widget, self.set_problem)
        # before the views' own observer: the status says what the change did
        widget.observe(self.on_view_setting, names=list(VIEW_TRAITS))

    def on_view_setting(self, change: dict[str, Any]) -> None:
        """A view setting changed: redrawn from the same fit. The status line says so, not
        the last fit's "done in 4.4 s", which would claim a fit this change did not run (a
        fit in progress keeps its own status)."""
        w = self.w
        if w.status == "done":
            name = VIEW_SETTING_NAMES.get(change["name"], change["name"])
            w.status_text = f"{name} changed: no refit"

    def fit_settings(self) -> dict[str, Any]:
        """The keyword arguments of ``bbt_widget.fit`` the current controls ask for."""
        w = self.w
        return {
            **w._data_kwargs,
            "lower_is_better": w.lower_is_better,
            "d_min": w.d_min if w.local_rope else None,
            # paired only matters with a local ROPE; normalised so the cache key is stable
            "paired": bool(w.paired and w.paired_available) if w.local_rope else True,
            "ties": w.ties,
            # 0 is no threshold, as None: one cache key for both
            "tie_threshold": w.tie_threshold or None,
            "hyperprior": w.hyperprior,
            "prior_scale": w.prior_scale,
            # one round of draws, shown at once: the summary makes no claim within Monte
            # Carlo error of its threshold, and bbt.fit's later rounds would make every
            # change wait
            "draws": "fixed",
            **w._sampler_kwargs,
            **w._groups.fit_keywords,  # group=, for a widget with data sets in groups
        }

    def on_fit_setting(self, change: dict[str, Any]) -> None:
        """A fit control changed: refit, after giving a new hyper-prior family its default
        scale unless the user chose one."""
        w = self.w
        if change["name"] == "prior_scale" and not self._setting_default_scale:
            self.scale_chosen = True
        elif change["name"] == "hyperprior" and not self.scale_chosen:
            try:
                default = PriorSettings(change["new"]).scale
            except (TypeError, ValueError):
                default = None  # refit() shows the problem
            if default is not None and default != w.prior_scale:
                # the family's own default scale; its change refits, with the new family
                self._setting_default_scale = True
                try:
                    w.prior_scale = default
                finally:
                    self._setting_default_scale = False
                return
        self.changed = change["name"]  # named in the status if no fit is needed
        w.refit()

    def unchanged_fit_text(self, changed: str) -> str:
        """The status when the fit controls ask for the fit already shown: what changed and
        why it needs no fit (``changed``: the control, '' for a plain ``refit()``)."""
        if not changed:
            return "done (no change)"
        name = FIT_SETTING_NAMES.get(changed, changed)
        if changed in ("d_min", "paired") and not self.w.local_rope:
            return f"{name} changed: no refit (the local ROPE is off)"
        return f"{name} changed: no refit (the fit shown has these settings)"

    def on_focus(self, change: dict[str, Any]) -> None:
        w = self.w
        value = change["new"]
        problem = ""
        if value and value not in w.algorithms:
            problem = f"focus: {value!r} is not one of the algorithms ({', '.join(w.algorithms)})"
        self.set_problem("focus", problem)
        if value and w.selected_pair and value not in pair_of(w.selected_pair):
            # the highlighted pair is not among the pairs now shown: keeping it would dim
            # every pair of the new view
            w.selected_pair = ""

    def check_fit_settings(self) -> str:
        """The problem of the fit controls ('' when they are fine)."""
        w = self.w
        if w.local_rope and not w.local_rope_available:
            return f"local ROPE unavailable: {w.local_rope_reason}"
        return "\n".join(self.checks.problems(FIT_TRAITS))

    def check_view_settings(self) -> str:
        """Every problem of the summary controls, one per line ('' when all are fine)."""
        return "\n".join(self.checks.problems(VIEW_TRAITS))

    def set_problem(self, where: str, problem: str) -> None:
        """Show ``problem`` in the widget's message ('' clears the one from ``where``)."""
        if problem:
            self.problems[where] = problem
        else:
            self.problems.pop(where, None)
        self.w.message = "\n".join(self.problems.values())
