"""The result of ``bbt.sweep``: the decisions per pair across the settings of a sweep
(:class:`SweepResult`), re-summarised for any ROPE or HDI mass without refitting."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..core import posterior
from ..core import precision as monte_carlo
from ..core.bidi import pair_label
from ..core.options import Rule
from ..core.precision import ConditionalDraws
from ..core.validation import check_hdi, check_interpretation, check_rope

if TYPE_CHECKING:
    import altair as alt

#: Settings a grid may vary, in the order of the frame's setting columns (``tie_threshold`` is
#: a column only when the sweep was given one or varies it).
SETTING_COLUMNS = ("ties", "d_min", "paired", "hyperprior", "prior_scale", "tie_threshold")


def _text(value: Any) -> str:
    """A setting value for labels: None (no local ROPE, paired n/a) reads "none"."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "none"
    return str(value)


def flipped_decisions(frame: pd.DataFrame, col: str, by: list[str]) -> pd.DataFrame:
    """The rows of ``by`` (e.g. a pair, or a group and a pair) whose decision ``col``
    changes across the successful settings of ``frame`` (with a ``setting`` label column):
    ``*by, decision, n_settings, settings``. Settings where the decision is not settled
    (``<col>_settled`` False: an estimate within Monte Carlo error of its threshold) do not
    count: a change within Monte Carlo error is not a flip."""
    f = frame[frame["error"].isna()]
    settled = f"{col}_settled"
    if settled in f:  # a decision within Monte Carlo error of its threshold flips nothing
        f = f[f[settled].astype(bool)]
    n_decisions = f.groupby(by, sort=False)[col].nunique()
    changing = n_decisions[n_decisions > 1].index
    keys = pd.MultiIndex.from_frame(f[by]) if len(by) > 1 else pd.Index(f[by[0]])
    flipped = f[keys.isin(changing)]
    rows = [
        {
            **dict(zip(by, key[:-1])),
            "decision": key[-1],
            "n_settings": len(g),
            "settings": list(g["setting"]),
        }
        for key, g in flipped.groupby([*by, col], sort=False)
    ]
    return pd.DataFrame(rows, columns=[*by, "decision", "n_settings", "settings"])


#: The Monte Carlo standard errors in the frame (as :meth:`BBTResult.precision` names them).
_MCSE = ("mcse_mean", "mcse_above_50", "mcse_in_rope")


class SweepResult:
    """Decisions per pair across the settings of a sweep.

    Attributes
    ----------
    frame
        Tidy table: the setting columns (``ties, d_min, paired, hyperprior, prior_scale`` and
        ``replicate`` when several seeds were run), then ``pair, mean, low, high, above_50,
        in_rope, weak, strong`` and ``alg_a, alg_b, error``. Pairs are oriented the same way in
        every setting (by the first successful fit's ranking), so the rows compare directly.
    n_failed
        How many fits failed (their rows carry the error and no numbers).
    rope, hdi
        The ROPE and HDI mass of ``frame``; :meth:`table` recomputes for others, no refit.
    """

    def __init__(
        self,
        settings: list[dict[str, Any]],
        betas: list[np.ndarray | None],
        errors: list[str | None],
        algorithms: Sequence[str],
        rope: tuple[float, float],
        hdi: float,
        components: list[list[list[str]]] | None = None,
        *,
        conditional: Sequence[ConditionalDraws | None] | None = None,
        ess: Sequence[float | None] | None = None,
    ) -> None:
        self.settings = settings
        # per setting, the conditional expectations its pairs near a threshold are estimated
        # by, as the fit's own summary does (None: the indicators' estimates)
        self._conditional = list(conditional) if conditional is not None else [None] * len(settings)
        # per setting, the fit's measured ESS, by which its summary screens its pairs
        self._ess = list(ess) if ess is not None else [None] * len(settings)
        self.errors = errors
        self.algorithms = list(algorithms)
        self.n_failed = sum(e is not None for e in errors)
        ok = [b for b in betas if b is not None]
        # one orientation for all settings, so "a better" means the same in every column
        order = posterior.algorithm_order(ok[0]) if ok else np.arange(len(self.algorithms))
        self._pairs = posterior.ordered_pairs(order)
        self._p_sorted = [None if b is None else self._sorted(b) for b in betas]
        # in draw order, for the Monte Carlo errors of the claims near their thresholds
        self._betas = betas
        # per setting, which pairs met (directly or through others): the rest are not compared
        self._compared = [
            None if c is None else self._linked(c)
            for c in (components if components is not None else [None] * len(settings))
        ]
        self._refined: dict[tuple[int, tuple[float, float]], dict[int, tuple[float, ...]]] = {}
        self.rope, self.hdi = check_rope(rope), check_hdi(hdi)
        self.frame = self.table(rope, hdi)

    def _sorted(self, beta: np.ndarray) -> np.ndarray:
        p = posterior.pair_probabilities(beta, self._pairs)
        p.sort(axis=0)
        return p

    def _linked(self, components: list[list[str]]) -> np.ndarray:
        group = {a: k for k, comp in enumerate(components) for a in comp}
        a = self.algorithms
        return np.array([group[a[i]] == group[a[j]] for i, j in self._pairs], dtype=bool)

    def summary(
        self, rope: Sequence[float] | None = None, hdi: float | None = None
    ) -> pd.DataFrame:
        """Every setting's summary in one tidy frame: :meth:`table` (the fits' ROPE and HDI
        by default)."""
        return self.table(rope, hdi)

    def __repr__(self) -> str:
        n = len(self.settings)
        pairs = len(self._pairs)
        return f"<SweepResult: {n} fits ({self.n_failed} failed), {pairs} pairs>"

    def table(self, rope: Sequence[float] | None = None, hdi: float | None = None) -> pd.DataFrame:
        """The tidy frame for another ROPE or HDI mass (re-summarised draws, no refit)."""
        rope = self.rope if rope is None else check_rope(rope)
        hdi = self.hdi if hdi is None else check_hdi(hdi)
        return self._tabulate(self._p_sorted, self._compared, rope, hdi, self._betas)

    def _tabulate(
        self,
        p_sorted: Sequence[np.ndarray | None],
        compared: Sequence[np.ndarray | None],
        rope: tuple[float, float],
        hdi: float,
        betas: Sequence[np.ndarray | None],
    ) -> pd.DataFrame:
        """The tidy frame of sorted P(a > b) draws and compared-pair masks, one per setting
        (the pooled abilities', or one group's), with ``betas`` the abilities' draws in draw
        order (draws, algorithms): as :meth:`BBTResult.summary`, a decision is made only
        when it holds within 3 Monte Carlo standard errors of the estimates, and
        ``weak_settled`` / ``strong_settled`` say where that was so; ``mcse_mean``,
        ``mcse_above_50``, ``mcse_in_rope`` are those errors where a threshold is near
        (NaN where every value within reach decides the same)."""
        a = self.algorithms
        labels = [pair_label(a[i], a[j]) for i, j in self._pairs]
        alg_a = [a[i] for i, _ in self._pairs]
        alg_b = [a[j] for _, j in self._pairs]
        parts = []
        rows = zip(
            self.settings, p_sorted, self.errors, compared, betas, self._conditional, self._ess
        )
        for index, (setting, p, error, linked, beta, conditional, ess) in enumerate(rows):
            if p is None or beta is None:
                part = pd.DataFrame({"pair": labels, "alg_a": alg_a, "alg_b": alg_b})
                for col in ("mean", "low", "high", "above_50", "in_rope"):
                    part[col] = np.nan
                part["weak"] = part["strong"] = "failed"
                part["weak_settled"] = part["strong_settled"] = False
                for col in _MCSE:
                    part[col] = np.nan
            else:
                part = posterior.summarise(p, labels, alg_a, alg_b, rope, hdi, linked)
                # the chains come back joined: one sequence of draws for the errors
                errors = monte_carlo.screened_precision(
                    part, p, beta[np.newaxis], self._pairs, rope, monte_carlo.DEFAULT_Z, ess=ess
                )
                if conditional is not None and betas is self._betas:  # the pooled abilities'
                    known = self._refined.setdefault((index, rope), {})
                    # the fit's summary's rows: the same pairs refined, whatever the seed
                    part, errors = monte_carlo.refined(
                        part, errors, conditional, self._pairs, rope, known=known, n_draws=len(beta)
                    )
                weak_ok, strong_ok = monte_carlo.settled_rules(
                    part, errors, rope, monte_carlo.DEFAULT_Z
                )
                part = monte_carlo.settled_decisions(part, errors, rope, monte_carlo.DEFAULT_Z)
                part["weak_settled"], part["strong_settled"] = weak_ok, strong_ok
                for col in _MCSE:
                    part[col] = errors[col].to_numpy(dtype=float)
            part["error"] = error
            for key, value in setting.items():
                part[key] = value
            parts.append(part)
        frame = pd.concat(parts, ignore_index=True)
        keys = [k for k in self.settings[0] if k in (*SETTING_COLUMNS, "replicate")]
        for k in ("d_min", "paired", "tie_threshold"):  # None ("no ROPE") stays None, not NaN
            if k in frame:
                frame[k] = frame[k].astype(object).where(frame[k].notna(), None)
        cols = [*keys, "pair", "mean", "low", "high", "above_50", "in_rope", "weak", "strong"]
        settled = ["weak_settled", "strong_settled", *_MCSE]
        return frame[[*cols, *settled, "alg_a", "alg_b", "error"]]

    # ------------------------------------------------------------------ claims

    def _varied(self) -> list[str]:
        f = self.frame
        keys = [k for k in (*SETTING_COLUMNS, "replicate") if k in f.columns]
        return [k for k in keys if f[k].map(_text).nunique() > 1] or keys[:1]

    def setting_labels(self) -> pd.Series:
        """A short name per row of :attr:`frame` (and of :meth:`table`) naming its setting,
        from the settings that vary in this sweep (e.g. ``"ties=add, d_min=0.2"``)."""
        return self._labels()

    def _labels(self, frame: pd.DataFrame | None = None) -> pd.Series:
        """A short name per row's setting (of :attr:`frame`, or of ``frame`` with the same
        setting columns), from the settings that vary in this sweep."""
        f = self.frame if frame is None else frame
        varied = self._varied()

        def label(row: pd.Series) -> str:
            # no local ROPE: d_min=None, and paired does not apply (left out)
            return ", ".join(
                f"{k}={'None' if pd.isna(v) else v}"
                for k, v in zip(varied, row)
                if not (k == "paired" and pd.isna(v))
            )

        return f[varied].astype(object).apply(label, axis=1)

    def flips(self, interpretation: Rule = "weak") -> pd.DataFrame:
        """Pairs whose decision changes across the (successful) settings.

        One row per (pair, decision): ``pair, decision, n_settings, settings`` (the settings
        giving that decision), among the settings where the decision is settled (no
        estimate within 3 Monte Carlo standard errors of its threshold): a change within
        Monte Carlo error is not a flip. ``seeds=3`` shows the spread between seeds too.
        """
        col = check_interpretation(interpretation)
        return flipped_decisions(self.frame.assign(setting=self._labels()), col, ["pair"])

    def stable_claims(self, interpretation: Rule = "weak") -> pd.DataFrame:
        """Claims ("a better" or "equivalent") that hold in every setting, with the range of
        mean P(a > b) across settings; empty when every fit failed."""
        col = check_interpretation(interpretation)
        f = self.frame[self.frame["error"].isna()]
        rows = []
        for pair, g in f.groupby("pair", sort=False):
            decisions = g[col].unique()
            if len(decisions) == 1 and decisions[0] != "no claim":
                rows.append(
                    {
                        "pair": pair,
                        "decision": decisions[0],
                        "mean_min": g["mean"].min(),
                        "mean_max": g["mean"].max(),
                        "n_settings": len(g),
                    }
                )
        return pd.DataFrame(
            rows, columns=["pair", "decision", "mean_min", "mean_max", "n_settings"]
        )

    def chart(self, interpretation: Rule = "weak", *, cell: int = 14) -> alt.Chart:
        """Heatmap: pairs (rows, best > worse) x settings (columns), coloured by decision.

        Drawn by :func:`bbt_widget.charts.specs_robustness.sweep_chart`, beside the
        widget's flips chart of the same decisions.
        """
        # here: the chart module loads Altair, slow to import, which only charts need
        from ..charts.specs_robustness import sweep_chart

        col = check_interpretation(interpretation)
        f = self.frame.assign(setting=self._labels(), decision=lambda d: d[col])
        f["order"] = f.groupby("pair", sort=False).ngroup()
        f = f[["pair", "order", "setting", "decision", "mean", "above_50", "in_rope", "error"]]
        failed = f"{self.n_failed} of {len(self.settings)} fits failed"
        returned: alt.Chart = sweep_chart(
            f,
            legend=f"{col} decision",
            title=f"Decisions across analysis settings ({col} interpretation)",
            subtitle=failed if self.n_failed else "a = the first algorithm of the pair",
            cell=cell,
        )
        return returned
