"""The result of one BBT fit: draws plus everything the paper reports about them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from . import diagnostics, posterior
from . import more_data as forecasts
from . import precision as monte_carlo
from .audit import Audit
from .bidi import isolate, pair_label
from .draws import Draws
from .options import DEFAULT_HDI, DEFAULT_ROPE, RuleChoice, resolve_interpretation
from .settings import FitSettings
from .tidy import TidyResults
from .validation import check_algorithms, check_hdi, check_rope, check_seed

if TYPE_CHECKING:
    from arviz import ELPDData, InferenceData

#: At most this many pairs are summarised from their own draws of P(a > b), without sorting
#: every pair's (what settling's re-check of its open claims asks).
_FEW_PAIRS = 64


class BBTResult:
    """Posterior of a Bayesian Bradley-Terry fit and its summaries.

    Summaries are recomputed from the cached draws on every call, so changing the ROPE,
    the HDI mass or the selection never refits.

    Attributes
    ----------
    win_table
        The win table that was fitted (``alg1, alg2, win1, win2, ties``).
    algorithms
        Algorithm names in input order.
    settings
        Every setting of the fit (data keywords, model, prior, sampler, seed used).
    engine
        The engine that sampled (``"numpy"``, ``"pystan"`` or ``"cmdstanpy"``).
    draws
        The raw :class:`~bbt_widget.core.draws.Draws`.
    tidy
        The validated input results, or ``None`` when a ready win table was given.
    components
        Groups of algorithms linked by games (one group when every algorithm met every
        other, directly or through others), largest first. Pairs across groups are
        ``"not compared"`` in :meth:`summary`.
    audit
        What :func:`bbt_widget.audit` found in the input results (empty for a ready win
        table or a result built by hand); ``fit`` issued its warnings as ``DataWarning``.
    conditional_draws
        Where the draws are the plain model's posterior draws from its data (``None`` for
        the group and Davidson models, an approximation, or a result built by hand): a
        function that gives, per draw, the pairs' probabilities given the rest of the draw
        (:data:`~.precision.ConditionalDraws`; the fit binds it to its data and draws). The
        summaries then estimate the probabilities of the pairs near a threshold by these
        conditional expectations (:func:`~.precision.refined`).
    """

    conditional_draws: monte_carlo.ConditionalDraws | None = None

    def __init__(
        self,
        draws: Draws,
        win_table: pd.DataFrame,
        algorithms: Sequence[str],
        settings: Mapping[str, Any],
        fitted: np.ndarray,
        tidy: TidyResults | None = None,
        components: Sequence[Sequence[str]] | None = None,
    ) -> None:
        self.draws = draws
        self.win_table = win_table
        self.algorithms = list(algorithms)
        # a fit's settings (a read-only mapping, with its groups as attributes) or a dict
        self.settings: Mapping[str, Any] = (
            settings if isinstance(settings, FitSettings) else dict(settings)
        )
        self.engine = draws.engine
        self.tidy = tidy
        self._fitted = np.asarray(fitted, dtype=bool)
        if components is None:  # e.g. built by hand: the fitted table's games link them
            from .wintable import comparison_components

            components = comparison_components(win_table, self.algorithms)
        self.components = [list(c) for c in components]
        self.audit = Audit()

    @property
    def disconnected_note(self) -> str:
        """A warning sentence when some algorithms never met ('' when all are linked)."""
        return disconnected_message(self.components) if len(self.components) > 1 else ""

    @cached_property
    def _compared(self) -> np.ndarray:
        """Per pair (summary order): whether its two algorithms are in one group."""
        group = {a: k for k, comp in enumerate(self.components) for a in comp}
        a = self.algorithms
        return np.array([group[a[i]] == group[a[j]] for i, j in self._pairs], dtype=bool)

    def __repr__(self) -> str:
        s = self.settings
        return (
            f"<BBTResult: {len(self.algorithms)} algorithms, {len(self.win_table)} pairs, "
            f"ties={s.get('ties')!r}, d_min={s.get('d_min')!r}, engine={self.engine!r}>"
        )

    # ------------------------------------------------------------------ cached draws

    @cached_property
    def beta(self) -> np.ndarray:
        """Draws of beta, shape (chains * draws, algorithms)."""
        b = self.draws.params["beta"]
        return b.reshape(-1, b.shape[-1])

    @cached_property
    def _order(self) -> np.ndarray:
        return posterior.algorithm_order(self.beta)

    @cached_property
    def _pairs(self) -> list[tuple[int, int]]:
        return posterior.ordered_pairs(self._order)

    @cached_property
    def _pair_labels(self) -> list[str]:
        # pair_label's "a > b", each name isolated once (not once per pair: the check of a
        # name's characters is most of the cost)
        isolated = [isolate(name) for name in self.algorithms]
        return [f"{isolated[i]} > {isolated[j]}" for i, j in self._pairs]

    @cached_property
    def _p_sorted(self) -> np.ndarray:
        # sorted once: every HDI, ROPE mass and median is then a cheap lookup
        return posterior.sorted_pair_probabilities(self.beta, self._pairs)

    def _pair_mask(self, control: str | None, selected: Iterable[str] | None) -> np.ndarray:
        mask = np.ones(len(self._pairs), dtype=bool)
        idx = {a: k for k, a in enumerate(self.algorithms)}
        if control is not None:
            (control,) = check_algorithms([control], self.algorithms, "control")
            c = idx[control]
            mask &= np.array([c in p for p in self._pairs])
        if selected is not None:
            chosen = {idx[a] for a in check_algorithms(selected, self.algorithms, "selected")}
            mask &= np.array([i in chosen and j in chosen for i, j in self._pairs])
        return mask

    def _columns(self, mask: np.ndarray) -> np.ndarray:
        # all pairs (the common case): the cached array itself, not a 160 MB copy
        if mask.all():
            return self._p_sorted
        if "_p_sorted" not in self.__dict__ and mask.sum() <= _FEW_PAIRS:
            # a few pairs (settling re-checks its open claims): theirs alone, not every pair's
            return posterior.sorted_pair_probabilities(
                self.beta, [q for q, m in zip(self._pairs, mask) if m]
            )
        return self._p_sorted[:, mask]

    # ------------------------------------------------------------------ summaries

    def summary(
        self,
        rope: Sequence[float] = DEFAULT_ROPE,
        hdi: float = DEFAULT_HDI,
        control: str | None = None,
        selected: Iterable[str] | None = None,
    ) -> pd.DataFrame:
        """P(a > b) per pair, ordered as in the paper (best vs each worse one, ...).

        Parameters
        ----------
        rope
            ROPE on the probability scale (paper: [0.45, 0.55]).
        hdi
            Mass of the highest-density interval ``low``-``high`` (paper: 0.89).
        control
            Keep only this algorithm's pairs (comparison against a control).
        selected
            Keep only pairs whose two algorithms are both in this subset.

        Returns
        -------
        pandas.DataFrame
            ``pair`` ("a > b"), ``alg_a``, ``alg_b``, ``mean``, ``median``, ``low``,
            ``high``, ``delta``, ``above_50``, ``in_rope``, ``weak`` (Sec. 9.2) and
            ``strong`` (Sec. 9.3) decisions: ``"a better"``, ``"equivalent"``,
            ``"no claim"`` (or ``"b better"``), and ``"not compared"`` under both when
            the two algorithms never met, even through others (see ``components``). A
            decision is made only when it holds for every value within 3 Monte Carlo
            standard errors of the estimates (else ``"no claim"``; :meth:`unsettled` names
            those pairs): a claim that another seed could flip is not made.
        """
        rope = check_rope(rope)
        hdi = check_hdi(hdi)
        mask = self._pair_mask(control, selected)
        table, errors = self._estimated(mask, rope, hdi, monte_carlo.DEFAULT_Z)
        return monte_carlo.settled_decisions(table, errors, rope, monte_carlo.DEFAULT_Z)

    def _estimated(
        self, mask: np.ndarray, rope: tuple[float, float], hdi: float, z: float
    ) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The summary of the pairs in ``mask`` before the Monte Carlo check of its claims,
        with the MCSE of its rows near a threshold (:meth:`_screened_precision`, NaN
        elsewhere), those rows estimated by their conditional expectations where the fit
        allows it (:attr:`conditional_draws`)."""
        a = self.algorithms
        pairs = [p for p, m in zip(self._pairs, mask) if m]
        table = posterior.summarise(
            self._columns(mask),
            [lab for lab, m in zip(self._pair_labels, mask) if m],
            [a[i] for i, _ in pairs],
            [a[j] for _, j in pairs],
            rope,
            hdi,
            self._compared[mask],
        )
        errors = self._screened_precision(table, mask, rope, z)
        if self.conditional_draws is None:
            return table, errors
        known: dict[int, tuple[float, ...]] = self.__dict__.setdefault(
            "_refined_by_rope", {}
        ).setdefault(tuple(float(v) for v in rope), {})
        return monte_carlo.refined(
            table,
            errors,
            self.conditional_draws,
            [self._pairs[i] for i in np.flatnonzero(mask)],
            rope,
            known=known,
            keys=np.flatnonzero(mask),
            z=z,
            n_draws=len(self.beta),
        )

    def _screened_precision(
        self, table: pd.DataFrame, mask: np.ndarray, rope: tuple[float, float], z: float
    ) -> pd.DataFrame:
        """The MCSE of ``table``'s rows (the summary of the pairs in ``mask``) where a
        quantity may lie within ``z`` MCSE of a threshold (:func:`~.precision.
        near_thresholds`), NaN where
        none can: rows settled whatever their exact MCSE. Each pair's MCSE is computed once
        per ROPE and kept."""
        known: dict[int, tuple[float, ...]] = self.__dict__.setdefault(
            "_mcse_by_rope", {}
        ).setdefault(tuple(float(v) for v in rope), {})
        return monte_carlo.screened_precision(
            table,
            self._columns(mask),
            self.draws.params["beta"],
            [self._pairs[i] for i in np.flatnonzero(mask)],
            rope,
            z,
            known=known,
            keys=np.flatnonzero(mask),
            ess=self._measured_ess,
        )

    @property
    def _measured_ess(self) -> float:
        """The fit's smallest bulk or tail ESS over its parameters (the tail ESS is that of
        the 5% and 95% quantiles' indicators, averages like ``above_50``): the effective
        sample size the screen of pairs near a threshold takes for every reported average."""
        diag = self.diagnostics()
        return float(min(diag.min_ess_bulk, diag.min_ess_tail))

    def pair(
        self,
        a: str,
        b: str,
        rope: Sequence[float] = DEFAULT_ROPE,
        hdi: float = DEFAULT_HDI,
    ) -> pd.Series:
        """The summary of P(a > b) for one pair, oriented as asked.

        :meth:`summary` orders each pair best first, so ``summary()`` may hold "b > a" where
        the reader asked about a against b. This gives the same statistics with ``a`` first:
        the draws of P(b > a) turned into 1 - P(b > a), so the mean, the HDI, ``above_50``,
        ``in_rope`` and the decisions all read as "a against b".

        Parameters
        ----------
        a, b
            Two different algorithms of the fit.
        rope, hdi
            As for :meth:`summary`.

        Returns
        -------
        pandas.Series
            The :meth:`summary` columns for the pair "a > b" (``weak``/``strong`` say
            ``"a better"`` when ``a`` wins).
        """
        rope = check_rope(rope)
        hdi = check_hdi(hdi)
        a, b = check_algorithms([a, b], self.algorithms, "pair")
        if a == b:
            raise ValueError(f"pair needs two different algorithms, got {a!r} twice")
        idx = {name: k for k, name in enumerate(self.algorithms)}
        i, j = idx[a], idx[b]
        k = next(k for k, p in enumerate(self._pairs) if set(p) == {i, j})
        flipped = self._pairs[k] != (i, j)
        # the pair as stored, with the ROPE seen from its side, estimated and decided as in
        # summary() (conditional estimates near a threshold, claims only where settled)
        stored_rope = (1.0 - rope[1], 1.0 - rope[0]) if flipped else rope
        mask = np.arange(len(self._pairs)) == k
        table, errors = self._estimated(mask, stored_rope, hdi, monte_carlo.DEFAULT_Z)
        row = monte_carlo.settled_decisions(table, errors, stored_rope, monte_carlo.DEFAULT_Z).iloc[
            0
        ]
        return _mirrored(row, a, b) if flipped else row

    def pair_draws(
        self,
        control: str | None = None,
        selected: Iterable[str] | None = None,
        *,
        sort: bool = False,
    ) -> pd.DataFrame:
        """Draws of P(a > b): one column per pair (summary order), one row per draw.

        With ``sort`` each column is sorted ascending (row ``i`` is then no longer draw
        ``i``): a copy of the draws the summaries use, computed once per result, for whatever
        depends on the values only (ranges, quantiles). Otherwise they are computed anew.
        """
        mask = self._pair_mask(control, selected)
        labels = [lab for lab, m in zip(self._pair_labels, mask) if m]
        if sort:
            return pd.DataFrame(self._columns(mask), columns=labels, copy=True)
        pairs = [p for p, m in zip(self._pairs, mask) if m]
        # in draw order, not cached: the sorted copy already holds one (draws x pairs)
        return pd.DataFrame(posterior.pair_probabilities(self.beta, pairs), columns=labels)

    def precision(self, rope: Sequence[float] = DEFAULT_ROPE) -> pd.DataFrame:
        """The Monte Carlo standard error of each pair's reported probabilities.

        Parameters
        ----------
        rope
            The ROPE of ``in_rope`` (as for :meth:`summary`).

        Returns
        -------
        pandas.DataFrame
            ``pair``, ``alg_a``, ``alg_b`` (in :meth:`summary` order), ``mcse_mean`` (of
            the mean of P(a > b)), ``mcse_above_50`` and ``mcse_in_rope``: ``sd / sqrt(ESS)``
            of each average over the draws, with the chains' effective sample size of it
            (:mod:`~bbt_widget.core.precision`); for the pairs :meth:`summary` estimates by
            their conditional expectations (near a threshold), of those estimates.
        """
        rope = check_rope(rope)
        # computed once per ROPE: the report's text, the terminal and unsettled() all ask
        known: dict[tuple[float, ...], pd.DataFrame] = self.__dict__.setdefault(
            "_precision_by_rope", {}
        )
        key = tuple(float(v) for v in rope)
        if key not in known:
            table = monte_carlo.pair_precision(self.draws.params["beta"], self._pairs, rope)
            if self.conditional_draws is not None:
                # the pairs the summary estimates by their conditional expectations: theirs
                mask = np.ones(len(self._pairs), dtype=bool)
                errors = self._estimated(mask, rope, DEFAULT_HDI, monte_carlo.DEFAULT_Z)[1]
                table = errors.combine_first(table)[table.columns]
            a = self.algorithms
            names = {
                "pair": self._pair_labels,
                "alg_a": [a[i] for i, _ in self._pairs],
                "alg_b": [a[j] for _, j in self._pairs],
            }
            known[key] = pd.concat([pd.DataFrame(names), table], axis=1)
        return known[key].copy()

    def unsettled(
        self,
        rope: Sequence[float] = DEFAULT_ROPE,
        hdi: float = DEFAULT_HDI,
        z: float = monte_carlo.DEFAULT_Z,
    ) -> pd.DataFrame:
        """The claims that could change with the seed: per pair and rule, the quantity that
        decides the claim (``in_rope`` and ``above_50`` against 0.95 for the weak rule; the
        mean against the ROPE's bounds and 0.70 for the strong rule) where it lies within
        ``z`` Monte Carlo standard errors of a threshold (:meth:`precision`).

        Returns
        -------
        pandas.DataFrame
            ``pair``, ``alg_a``, ``alg_b``, ``rule``, ``claim`` (the decision made),
            ``quantity``, ``value``,
            ``threshold`` and ``mcse``; empty when every claim is settled at this precision.
        """
        rope = check_rope(rope)
        hdi = check_hdi(hdi)
        return self._unsettled(np.ones(len(self._pairs), dtype=bool), rope, hdi, z)

    def _unsettled(
        self, mask: np.ndarray, rope: tuple[float, float], hdi: float, z: float
    ) -> pd.DataFrame:
        """:meth:`unsettled` among the pairs in ``mask`` (summary order) alone."""
        table, errors = self._estimated(mask, rope, hdi, z)
        summary = monte_carlo.settled_decisions(table, errors, rope, z)
        return monte_carlo.unsettled(summary, errors, rope, z)

    def unsettled_among(
        self, pairs: Iterable[tuple[str, str]], z: float = monte_carlo.DEFAULT_Z
    ) -> pd.DataFrame:
        """:meth:`unsettled` at the default ROPE and HDI, of the pairs of algorithms
        ``pairs`` (either way round) alone: what sampling by decision re-checks after a
        later round, without a summary of every pair."""
        wanted = {frozenset(p) for p in pairs}
        a = self.algorithms
        mask = np.array([frozenset((a[i], a[j])) in wanted for i, j in self._pairs], dtype=bool)
        return self._unsettled(mask, DEFAULT_ROPE, DEFAULT_HDI, z)

    def disagreements(
        self,
        other: BBTResult,
        rope: Sequence[float] = DEFAULT_ROPE,
        hdi: float = DEFAULT_HDI,
        z: float = 4.0,
    ) -> list[str]:
        """Where ``other``, a fit of the same settings (e.g. on another engine), says
        something else: per pair, means of P(a > b) further apart than ``z`` Monte Carlo
        standard errors of their difference, or a weak or strong decision that differs
        although neither fit has it unsettled at ``z`` standard errors (:meth:`unsettled`:
        a claim that close to its threshold may fall either way with the seed). Empty when
        they agree.

        Raises
        ------
        ValueError
            When the two fits are not of the same algorithms.
        """
        if sorted(self.algorithms) != sorted(other.algorithms):
            raise ValueError("the two fits are not of the same algorithms")
        rope = check_rope(rope)
        errors = [fit.precision(rope) for fit in (self, other)]
        near = {
            (frozenset((r.alg_a, r.alg_b)), r.rule)
            for fit in (self, other)
            for r in fit.unsettled(rope, hdi, z).itertuples(index=False)
        }
        theirs_error = {
            frozenset((r.alg_a, r.alg_b)): r.mcse_mean for r in errors[1].itertuples(index=False)
        }
        found = []
        ours = self.summary(rope, hdi)
        # the other fit's summary rows (its estimates, refined as this one's are), by pair
        swap = {"a better": "b better", "b better": "a better"}
        their_rows = {
            frozenset((r.alg_a, r.alg_b)): r for r in other.summary(rope, hdi).itertuples()
        }
        for row, error in zip(ours.itertuples(index=False), errors[0]["mcse_mean"]):
            key = frozenset((row.alg_a, row.alg_b))
            r = their_rows[key]
            same = r.alg_a == row.alg_a
            theirs = {
                "mean": r.mean if same else 1.0 - r.mean,
                "weak": r.weak if same else swap.get(r.weak, r.weak),
                "strong": r.strong if same else swap.get(r.strong, r.strong),
            }
            joint = float(np.hypot(error, theirs_error[key]))
            if abs(row.mean - theirs["mean"]) > z * joint:
                found.append(
                    f"{row.pair}: mean P {row.mean:.3f} here, {theirs['mean']:.3f} there "
                    f"(more than {z:g} Monte Carlo standard errors apart)"
                )
            for rule in ("weak", "strong"):
                if getattr(row, rule) != theirs[rule] and (key, rule) not in near:
                    found.append(
                        f"{row.pair}: {rule} rule {getattr(row, rule)!r} here, "
                        f"{theirs[rule]!r} there"
                    )
        return found

    def more_data(
        self,
        n: int | Sequence[int] = forecasts.DEFAULT_N,
        rule: RuleChoice | None = None,
        *,
        rope: Sequence[float] = DEFAULT_ROPE,
        draws: int = forecasts.DEFAULT_FUTURES,
        seed: int | None = 0,
        grown: forecasts.GrownPosterior | None = None,
        pairs: Iterable[Sequence[str]] | None = None,
    ) -> forecasts.MoreData:
        """How many more data sets would settle each claim: for ``n`` more data sets like
        these, the posterior predictive probability that each pair carries each claim.

        Each future draws abilities from this posterior, win counts per new data set from the
        model (a pair meets as often as it met, ties at its own observed rate), applies the
        fit's tie policy, and decides the grown counts' posterior by ``rule``
        (:mod:`~bbt_widget.core.more_data`). It assumes the new data sets are exchangeable with
        the old ones (drawn from the same population); a suite chosen to favour one method
        breaks that.

        Parameters
        ----------
        n
            The numbers of more data sets (positive integers, each once), e.g. ``(50, 100)``.
        rule
            ``"weak"``, ``"strong"``, or ``None``/``"auto"``: the rule ``"auto"`` picks for
            this many algorithms (:func:`~.options.resolve_interpretation`).
        rope
            The ROPE of the claims (as for :meth:`summary`).
        draws
            Futures simulated per ``n`` (the Monte Carlo standard error of a probability is
            at most ``0.5 / sqrt(draws)``).
        seed
            With the fit's seed, the entropy of the futures: the same call gives the same
            numbers, and the same futures for every ``rule`` and ``rope`` (``None``: a fresh
            seed).
        grown
            The posterior of the grown counts (:data:`~.more_data.GrownPosterior`); default
            the normal approximation of the abilities given sigma
            (:func:`~.more_data.normal_update`). ``bbt_widget.lab.more_data.refits(result)``
            gives full refits by the numpy engine (the reference: slow).
        pairs
            Forecast these pairs only, each two algorithm names in either order, e.g.
            ``[("xgb", "lgbm")]`` (default: every pair). The futures are the same: a pair's
            rows equal its rows in the forecast of every pair, for less work.

        Returns
        -------
        MoreData
            ``table``: per pair and ``n``, ``alg_a, alg_b, n, p_a_better, p_b_better,
            p_equivalent, p_no_claim`` and their ``mcse_*``; ``settles``: per pair open now,
            the smallest ``n`` at which a claim is more likely than not.

        Raises
        ------
        ValueError
            For bad ``n``, ``rule``, ``rope``, ``draws`` or ``pairs``, and for a fit of the
            Davidson or group model (the forecast simulates the plain model).
        """
        model = self.settings.get("model", "bbt")
        if model != "bbt" or "sigma" not in self.draws.params:
            raise ValueError(
                f"more_data forecasts the plain Bradley-Terry model; this fit is of the "
                f"{model!r} model. Fit with ties='spread', 'add' or 'forget' and no group= "
                "to forecast"
            )
        chosen = resolve_interpretation(rule or "auto", len(self.algorithms)).rule
        keep = self._pairs_named(pairs)
        claims_now = self.summary(rope)[chosen][keep].tolist()
        seed = check_seed(seed)  # None: a fresh seed, drawn once for the key and the futures
        if grown is None:  # another rule, pairs or ROPE reuses these futures' updates
            key = (forecasts.check_n(n), draws, seed)
            store = self.__dict__.setdefault("_more_data", {})
            grown = forecasts.Remembered(store, key, self._pairs)
        return forecasts.forecast(
            beta=self.beta,
            sigma=self.draws.params["sigma"].ravel(),
            raw=self._raw_counts,
            algorithms=self.algorithms,
            ties=self.settings.get("ties"),
            datasets=None if self.tidy is None else len(self.tidy.datasets),
            pairs=[p for p, k in zip(self._pairs, keep) if k],
            compared=self._compared[keep],
            claims_now=claims_now,
            n=n,
            rule=chosen,
            rope=rope,
            futures=draws,
            seed=[int(self.settings.get("seed") or 0), seed],
            grown=grown,
            method=getattr(grown, "method", "custom"),
        )

    def _pairs_named(self, pairs: Iterable[Sequence[str]] | None) -> np.ndarray:
        """Which of the summary's pairs ``pairs`` names (each two algorithms, either order;
        ``None``: every pair), checked."""
        if pairs is None:
            return np.ones(len(self._pairs), dtype=bool)
        index = {a: k for k, a in enumerate(self.algorithms)}
        wanted = set()
        for pair in [pairs] if isinstance(pairs, str) else pairs:
            if isinstance(pair, str) or len(pair) != 2 or pair[0] == pair[1]:
                raise ValueError(
                    f"pairs: each pair is two different algorithms, e.g. [('a', 'b')]; got {pair!r}"
                )
            a, b = check_algorithms(list(pair), self.algorithms, "pairs")
            wanted.add(frozenset((index[a], index[b])))
        if not wanted:
            raise ValueError("pairs: name at least one pair, or leave pairs=None for every pair")
        return np.array([frozenset(p) in wanted for p in self._pairs], dtype=bool)

    @cached_property
    def _raw_counts(self) -> pd.DataFrame:
        """The wins and ties before the tie policy: counted again from the results, or the
        fitted table itself for a ready win table (its ties as the policy left them)."""
        if self.tidy is None:
            return self.win_table
        from .wintable import count_wins

        s = self.settings
        return count_wins(
            self.tidy,
            d_min=s.get("d_min"),
            paired=bool(s.get("paired", True)) if s.get("paired") is not None else True,
            tie_threshold=s.get("tie_threshold"),
        )

    def rope_mass(
        self,
        rope: Sequence[float] = DEFAULT_ROPE,
        control: str | None = None,
        selected: Iterable[str] | None = None,
    ) -> pd.DataFrame:
        """Posterior mass of P(a > b) below, inside and above the ROPE, per pair."""
        rope = check_rope(rope)
        mask = self._pair_mask(control, selected)
        below, inside, above = posterior.rope_mass(self._columns(mask), rope)
        labels = [lab for lab, m in zip(self._pair_labels, mask) if m]
        return pd.DataFrame({"pair": labels, "below": below, "inside": inside, "above": above})

    def ranking(self, hdi: float = DEFAULT_HDI) -> pd.DataFrame:
        """Per algorithm, best first: ``mean_beta``, its HDI ``low``-``high``, ``p_best``
        (probability of the largest beta) and ``expected_rank`` (1 = best)."""
        return posterior.ranking(self.beta, self.algorithms, check_hdi(hdi))

    # ------------------------------------------------------------------ checks

    @cached_property
    def _fitted_table(self) -> pd.DataFrame:
        return self.win_table[self._fitted].reset_index(drop=True)

    @cached_property
    def _observed(self) -> dict[str, np.ndarray]:
        t = self._fitted_table
        obs = {"win1": t["win1"].to_numpy()}
        if self.settings.get("ties") == "davidson":
            obs["ties"] = t["ties"].to_numpy()
        return obs

    @cached_property
    def idata(self) -> InferenceData:
        """ArviZ InferenceData: posterior, posterior_predictive, log_likelihood,
        observed_data and sample_stats; algorithm names and pairs as coordinates."""
        t = self._fitted_table
        labels = [f"{a} vs {b}" for a, b in zip(t["alg1"], t["alg2"])]
        return diagnostics.build_idata(self.draws, self.algorithms, labels, self._observed)

    def ppc_table(self) -> pd.DataFrame:
        """Posterior predictive check as in paper Table 5: for each HDI mass (0.5, 0.9,
        0.95, 1.0) the proportion of observed win counts inside the HDI of their
        replicates; under Davidson also ``proportion_ties``."""
        return diagnostics.ppc_table(self.draws, self._observed)

    def ppc_histogram(self) -> pd.DataFrame:
        """Replicated counts per fitted pair: ``alg1, alg2, quantity, value, count,
        observed`` (paper Fig. 2)."""
        t = self._fitted_table
        return diagnostics.ppc_histogram(
            self.draws, self._observed, list(t["alg1"]), list(t["alg2"])
        )

    @cached_property
    def _diagnostics(self) -> diagnostics.Diagnostics:
        # from the parameters' draws only: every fit checks them, and the full InferenceData
        # (with the predictions and the log-likelihood, the bulk of the draws) is built when
        # asked
        if self.settings.get("method") == "laplace":
            # independent draws of an approximation: no chains to compare, no sampler
            n = float(self.settings["draws"])
            nan = float("nan")
            return diagnostics.Diagnostics(nan, n, n, 0, 0, nan, ok=True)
        names = [v for v in ("beta", "sigma", "nu") if v in self.draws.params]
        return diagnostics.draws_diagnostics(self.draws, names)

    def diagnostics(self) -> diagnostics.Diagnostics:
        """Max R-hat, min bulk / tail ESS, divergences, tree-depth saturation, min E-BFMI
        and ``ok``. A Laplace approximation (``settings["method"] == "laplace"``, the
        widget's preview) has no sampler to check: R-hat and E-BFMI are NaN, the ESS is
        its number of independent draws, and ``ok`` is True."""
        return self._diagnostics

    def waic(self) -> ELPDData:
        """WAIC (ArviZ ``ELPDData``, deviance scale: lower is better)."""
        return diagnostics.waic(self.idata)

    def loo(self) -> ELPDData:
        """PSIS-LOO (ArviZ ``ELPDData``, deviance scale: lower is better)."""
        return diagnostics.loo(self.idata)


def disconnected_message(components: Sequence[Sequence[str]]) -> str:
    """Why pairs across groups of algorithms that never met are not compared."""
    groups = "; ".join("{" + ", ".join(map(isolate, c)) + "}" for c in components)
    return (
        f"the algorithms form {len(components)} groups that never met on a common data set, "
        f"even through others: {groups}. Only the prior relates abilities across groups, so "
        "pairs across groups are marked 'not compared' in summary() and never claimed; give "
        "results on shared data sets to compare them"
    )


def _mirrored(row: pd.Series, a: str, b: str) -> pd.Series:
    """A summary row of "b > a" read as "a > b": P(a > b) = 1 - P(b > a), so the mean,
    median and HDI mirror around 0.5, ``above_50`` becomes its complement (P(b > a) = 0.5
    has no mass), ``in_rope`` and the HDI's width stay, and each side's win changes side."""
    out = row.copy()
    out["pair"], out["alg_a"], out["alg_b"] = pair_label(a, b), a, b
    for column in ("mean", "median", "above_50"):
        out[column] = 1.0 - row[column]
    out["low"], out["high"] = 1.0 - row["high"], 1.0 - row["low"]
    out["weak"] = posterior.flip_decision(row["weak"])
    out["strong"] = posterior.flip_decision(row["strong"])
    return out
