"""Model checks: convergence diagnostics, posterior predictive checks, WAIC / LOO.

The only module that imports ArviZ (0.x API; ArviZ 1.x needs Python 3.12 and changed
``from_dict``, so the dependency is pinned below 1), and only for the InferenceData, WAIC and
LOO: the convergence diagnostics every fit checks are computed by :mod:`.convergence`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from . import convergence
from .draws import Draws
from .options import DEFAULT_ADAPT_DELTA
from .posterior import hdi_sorted

if TYPE_CHECKING:
    from arviz import ELPDData, InferenceData

#: HDI masses of the PPC coverage table (paper Table 5).
PPC_LEVELS = (0.5, 0.9, 0.95, 1.0)
#: Split R-hat above this means the chains disagree (Vehtari et al. 2021).
RHAT_MAX = 1.01
#: Bulk and tail ESS below this many per chain are too few for stable summaries.
ESS_PER_CHAIN = 100
#: E-BFMI below this means the sampler explored the energy distribution poorly.
EBFMI_MIN = 0.3


@dataclass(frozen=True)
class Diagnostics:
    """Convergence diagnostics of one fit; ``ok`` is False when any check failed.

    Also readable as a mapping (``diag["max_rhat"]``).
    """

    max_rhat: float
    min_ess_bulk: float
    min_ess_tail: float
    divergences: int
    treedepth_saturated: int
    min_ebfmi: float
    ok: bool
    messages: list[str] = field(default_factory=list)
    #: False for draws of a sampler other than NUTS (no divergences, tree depth or energy).
    nuts: bool = True

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)

    def as_dict(self) -> dict[str, Any]:
        """The diagnostics as a plain dict (for JSON, e.g. the widget's badge)."""
        return asdict(self)

    def __str__(self) -> str:
        if self.ok:
            return "diagnostics ok: " + self._numbers()
        return "diagnostics FAILED: " + "; ".join(self.messages)

    def _numbers(self) -> str:
        chains = (
            f"max R-hat {self.max_rhat:.3f}, min ESS bulk {self.min_ess_bulk:.0f} / tail "
            f"{self.min_ess_tail:.0f}"
        )
        if not self.nuts:
            return chains
        return (
            f"{chains}, {self.divergences} divergences, "
            f"{self.treedepth_saturated} saturated tree depths, min E-BFMI {self.min_ebfmi:.2f}"
        )


def _az() -> ModuleType:
    # ArviZ 0.23 announces its 1.x refactor with a FutureWarning on import: not our users'
    # concern, and it would be console noise on every first fit
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        import arviz

    return arviz


def build_idata(
    draws: Draws,
    algorithms: Sequence[str],
    pair_labels: Sequence[str],
    observed: dict[str, np.ndarray],
) -> InferenceData:
    """ArviZ InferenceData: posterior, posterior_predictive, log_likelihood, observed_data.

    ``pair_labels`` name the fitted pairs ("alg1 vs alg2"); ``observed`` maps ``win1`` (and
    ``ties`` under Davidson) to the observed counts of those pairs.
    """
    az = _az()
    p = draws.params
    posterior = {"beta": p["beta"], "sigma": p["sigma"]}
    if "nu" in p:
        posterior["nu"] = p["nu"]
    predictive = {"win1": p["win1_rep"]}
    if "ties_rep" in p and "ties" in observed:
        predictive["ties"] = p["ties_rep"]
    s = draws.sampler
    stats_map = {
        "diverging": "divergent__",
        "tree_depth": "treedepth__",
        "energy": "energy__",
        "acceptance_rate": "accept_stat__",
        "n_steps": "n_leapfrog__",
        "step_size": "stepsize__",
        "lp": "lp__",
    }
    sample_stats = {k: s[v] for k, v in stats_map.items() if v in s}
    if "diverging" in sample_stats:
        sample_stats["diverging"] = sample_stats["diverging"].astype(bool)
    dims = {"beta": ["algorithm"], "win1": ["pair"], "ties": ["pair"], "log_lik": ["pair"]}
    returned: InferenceData = az.from_dict(
        posterior=posterior,
        posterior_predictive=predictive,
        log_likelihood={"win1": p["log_lik"]},
        observed_data={k: np.asarray(v) for k, v in observed.items()},
        sample_stats=sample_stats,
        coords={"algorithm": list(algorithms), "pair": list(pair_labels)},
        dims=dims,
    )
    return returned


def diagnostics(
    idata: InferenceData, draws: Draws, var_names: Sequence[str] | None = None
) -> Diagnostics:
    """R-hat, bulk / tail ESS, divergences, tree-depth saturation and E-BFMI of an
    InferenceData's posterior (the same numbers as :func:`draws_diagnostics` of its draws).

    ``var_names``: the parameters whose R-hat and ESS count (default: BBT's beta, sigma, nu).
    """
    if var_names is None:
        var_names = [v for v in ("beta", "sigma", "nu") if v in idata["posterior"]]
    posterior = {v: idata["posterior"][v].values for v in var_names}
    stats = idata["sample_stats"] if "sample_stats" in idata.groups() else {}
    energy = stats["energy"].transpose("chain", "draw").values if "energy" in stats else None
    return _diagnose(posterior, energy, draws)


def draws_diagnostics(draws: Draws, var_names: Sequence[str]) -> Diagnostics:
    """R-hat, bulk / tail ESS, divergences, tree-depth saturation and E-BFMI of any Stan
    program's draws, R-hat and ESS on the parameters ``var_names``.

    Computed from the arrays (:mod:`.convergence`, ArviZ's numbers without importing it).
    """
    posterior = {v: draws.params[v] for v in var_names}
    return _diagnose(posterior, draws.sampler.get("energy__"), draws)


def _diagnose(
    posterior: dict[str, np.ndarray], energy: np.ndarray | None, draws: Draws
) -> Diagnostics:
    """The checks of :class:`Diagnostics` on draws shaped (chains, draws, ...)."""
    chains = next(iter(posterior.values())).shape[0]
    rhat = _worst(convergence.rhat, posterior, largest=True)
    ess_bulk = _worst(convergence.ess_bulk, posterior, largest=False)
    ess_tail = _worst(convergence.ess_tail, posterior, largest=False)
    s = draws.sampler
    divergences = int(np.sum(s["divergent__"])) if "divergent__" in s else 0
    saturated = int(np.sum(s["treedepth__"] >= draws.max_treedepth)) if "treedepth__" in s else 0
    ebfmi = float(np.min(convergence.bfmi(energy))) if energy is not None else float("nan")
    need = ESS_PER_CHAIN * chains
    messages = []
    if not rhat <= RHAT_MAX:
        messages.append(f"R-hat {rhat:.3f} > {RHAT_MAX}: chains disagree; run longer chains")
    if not ess_bulk >= need:
        messages.append(f"bulk ESS {ess_bulk:.0f} < {need}: increase iter_sampling")
    if not ess_tail >= need:
        messages.append(f"tail ESS {ess_tail:.0f} < {need}: increase iter_sampling")
    if divergences:
        delta = draws.info.get("adapt_delta", DEFAULT_ADAPT_DELTA)
        messages.append(
            f"{divergences} divergent transitions: the posterior may be biased; raise "
            f"adapt_delta (now {delta:g}), e.g. adapt_delta={_higher_delta(delta):g}"
        )
    if saturated:
        depth = draws.max_treedepth
        messages.append(
            f"{saturated} transitions hit the maximum tree depth {depth}: the sampler stopped "
            f"short; raise max_treedepth, e.g. max_treedepth={depth + 2}"
        )
    # E-BFMI needs NUTS's energy; other samplers' draws are judged by R-hat and ESS
    if energy is not None and not ebfmi >= EBFMI_MIN:
        messages.append(f"E-BFMI {ebfmi:.2f} < {EBFMI_MIN}: poor exploration of the energy")
    tried = draws.info.get("convergence")
    if messages and tried:
        # a sampler that draws again where its diagnostics fail says what it drew, so that
        # the advice above reads as what is left to try
        messages.append(f"the sampler drew: {tried}")
    return Diagnostics(
        max_rhat=rhat,
        min_ess_bulk=ess_bulk,
        min_ess_tail=ess_tail,
        divergences=divergences,
        treedepth_saturated=saturated,
        min_ebfmi=ebfmi,
        ok=not messages,
        messages=messages,
        nuts=energy is not None,
    )


def _worst(
    statistic: Callable[[np.ndarray], float], posterior: dict[str, np.ndarray], largest: bool
) -> float:
    """The largest (or smallest) ``statistic`` over every element of every parameter, NaN
    elements skipped within a parameter (as ArviZ's summaries of its results did)."""
    per_parameter = [convergence.per_element(statistic, a) for a in posterior.values()]
    if largest:
        return float(max(np.nanmax(v) for v in per_parameter))
    return float(min(np.nanmin(v) for v in per_parameter))


def ppc_coverage(replicated: np.ndarray, observed: np.ndarray) -> np.ndarray:
    """Proportion of observed counts inside the HDI of their replicates, per PPC level.

    ``replicated`` is (draws, pairs), ``observed`` (pairs,).
    """
    # counts fit in int32: half the memory of the sorted copy (4950 pairs x 4000 draws)
    rep = replicated.astype(np.int32)
    rep.sort(axis=0)
    out = []
    for level in PPC_LEVELS:
        low, high = hdi_sorted(rep, level)
        out.append(float(np.mean((observed >= low) & (observed <= high))))
    return np.array(out)


def ppc_table(draws: Draws, observed: dict[str, np.ndarray]) -> pd.DataFrame:
    """Paper Table 5: ``hdi`` and ``proportion`` (win1); under Davidson also
    ``proportion_ties`` (the paper's Table 12)."""
    p = draws.params
    table = pd.DataFrame({"hdi": PPC_LEVELS})
    table["proportion"] = ppc_coverage(_flat(p["win1_rep"]), observed["win1"])
    if "ties" in observed and "ties_rep" in p:
        table["proportion_ties"] = ppc_coverage(_flat(p["ties_rep"]), observed["ties"])
    return table


def ppc_histogram(
    draws: Draws,
    observed: dict[str, np.ndarray],
    alg1: Sequence[str],
    alg2: Sequence[str],
) -> pd.DataFrame:
    """Per fitted pair and value, how many replicates had that count (paper Fig. 2).

    Rows by quantity, then pair (fitted order), then value (ascending); one ``bincount`` per
    quantity over every pair at once, each pair's counts in a band of its own.
    """
    frames = []
    quantities = [("win1", "win1_rep")]
    if "ties" in observed and "ties_rep" in draws.params:
        quantities.append(("ties", "ties_rep"))
    for name, rep_name in quantities:
        rep = _flat(draws.params[rep_name]).astype(int)
        n_pairs = rep.shape[1]
        width = int(rep.max()) + 1 if rep.size else 1
        # pair k's value v lands in bin k * width + v: row-major non-zeros run pair by pair,
        # values ascending within a pair, as one bincount per pair would give them
        bins = rep + np.arange(n_pairs) * width
        counts = np.bincount(bins.ravel(), minlength=n_pairs * width).reshape(n_pairs, width)
        pair, value = np.nonzero(counts)
        frames.append(
            pd.DataFrame(
                {
                    "alg1": np.asarray(alg1, dtype=object)[pair],
                    "alg2": np.asarray(alg2, dtype=object)[pair],
                    "quantity": name,
                    "value": value,
                    "count": counts[pair, value],
                    "observed": np.asarray(observed[name], dtype=int)[pair],
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def _flat(a: np.ndarray) -> np.ndarray:
    """(chains, draws, ...) -> (chains * draws, ...)."""
    return a.reshape((-1, *a.shape[2:]))


def waic(idata: InferenceData) -> ELPDData:
    """WAIC of the fit (ArviZ ``ELPDData``; lower ``-2 * elpd_waic`` is better)."""
    out: ELPDData = _az().waic(idata, scale="deviance")
    return out


def loo(idata: InferenceData) -> ELPDData:
    """PSIS-LOO of the fit (ArviZ ``ELPDData``), on the deviance scale like WAIC."""
    out: ELPDData = _az().loo(idata, scale="deviance")
    return out


def _higher_delta(delta: float) -> float:
    """A stricter adapt_delta to suggest: 0.95, then 0.99, then halfway to 1."""
    for step in (0.95, 0.99):
        if delta < step:
            return step
    return round(delta + (1 - delta) / 2, 4)
