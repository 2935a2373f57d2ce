"""The numpy engine: the BBT models sampled exactly by Pólya-Gamma Gibbs, in this process,
with no compiler and no worker process (:mod:`._gibbs`). Where the plain model's posterior is
close to normal (many data sets), the draws after the warm-up come from an independence
Metropolis-Hastings kernel instead (:mod:`._independence`): exact too, and cheaper a draw.

It runs every model: ``bbt`` (tie policies add, spread and forget, with or without a local
ROPE, every hyper-prior) and ``bbt_groups``, whose likelihood is binomial-logit, and
Davidson's model (ties as a third outcome, whose probability is not logistic in the difference
of abilities: no Pólya-Gamma form), by the Metropolis-Hastings sampler of :mod:`._davidson`.
The chains run as one batch (arrays over chains). ``engine="auto"`` takes this engine on every
platform.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from ..core.draws import Draws, ModelName, Params, SamplerSettings, fresh_seed
from ..core.run_context import QUIET, RunContext
from . import _davidson, _gibbs, _hmc, _independence, _polya_gamma
from ._converging import Round, checked, converge, tried
from ._design import Design
from ._programs import program_hash
from .base import EngineError

#: The models this engine samples.
MODELS: tuple[ModelName, ...] = ("bbt", "bbt_groups", "davidson")
#: Warm-up and kept draws per chain that a fit on this engine takes by default: the Gibbs
#: chains need no adaptation and forget their start within a few sweeps (R-hat checks it),
#: and their draws are nearly independent (bulk ESS about 0.9 per draw; the independence
#: kernel's, kept every third step, about 0.5; NUTS's draws of this posterior carry up to
#: twice their number: benchmarks/results/gibbs.json).
DEFAULT_ITER_WARMUP = 100
DEFAULT_ITER_SAMPLING = 1000


def describe(
    kernel: str = "gibbs",
    acceptance: float | None = None,
    thin: int = 1,
    *,
    moves: bool = False,
) -> str:
    """The sampler in one phrase, for reports and ``Draws.info``: ``kernel`` is the one
    that gave the kept draws (``_gibbs.sample``'s report), one sweep in ``thin`` kept;
    ``moves``: the Gibbs sweeps were followed by the abilities' Hamiltonian moves."""
    gibbs = (
        "Pólya-Gamma Gibbs sampler (Polson, Scott and Windle 2013), sigma and tau by "
        "collapsed slice sampling; Pólya-Gamma draws by " + _polya_gamma.method()
    )
    if moves and kernel == "gibbs":
        gibbs += (
            "; after each sweep a Hamiltonian Monte Carlo move of the abilities given sigma "
            f"(Neal 2011; {_hmc.LEAPFROGS} leapfrog steps, the Laplace approximation's "
            "covariance as inverse mass matrix)"
        )
    if kernel == "davidson":
        return _davidson.DESCRIPTION + (
            "" if acceptance is None else f" (acceptance rate {acceptance:.2f})"
        )
    if kernel != "independence":
        return gibbs + (f"; one sweep in {thin} kept" if thin > 1 else "")
    return (
        f"{gibbs}, for the warm-up's first sweeps; then an independence Metropolis-Hastings "
        "sampler (Tierney 1994) with the normal approximation at the posterior mode as its "
        f"proposal (acceptance rate {acceptance:.2f}; one step in {_gibbs.THIN} kept)"
    )


class NumpyEngine:
    """The numpy engine (``bbt_widget.engines.get("numpy")``): nothing to compile, no worker
    processes; a fit runs in the calling thread."""

    name: str = "numpy"

    def available(self) -> bool:
        """Always: numpy and SciPy are dependencies."""
        return True

    def problem(self) -> str | None:
        """None: the engine always works (without ``polyagamma`` it uses its fallback)."""
        return None

    def version(self) -> str:
        """numpy's version and the Pólya-Gamma sampler's."""
        return f"numpy {np.__version__}; " + _polya_gamma.method()

    def compile(
        self,
        model: ModelName,
        *,
        context: RunContext = QUIET,
        verbose: bool = False,
    ) -> tuple[Path, float]:
        """Nothing to compile: the sampler's module, and no time spent."""
        return self._program(model), 0.0

    def compiled(self, model: ModelName) -> Path | None:
        """The sampler's module for the models this engine runs (nothing is built)."""
        if model == "davidson":
            return Path(_davidson.__file__)
        return Path(_gibbs.__file__) if model in MODELS else None

    def shutdown(self) -> None:
        """No worker to stop."""

    def _program(self, model: ModelName) -> Path:
        path = self.compiled(model)
        if path is None:
            raise EngineError(refusal(model))
        return path

    def sample(
        self,
        model: ModelName,
        data: dict[str, Any],
        settings: SamplerSettings,
        *,
        context: RunContext = QUIET,
        verbose: bool = False,
    ) -> Draws:
        """Sample ``model`` by Pólya-Gamma Gibbs (Davidson's by :mod:`._davidson`); ``data``
        is already validated. The NUTS settings (``adapt_delta``, ``max_treedepth``) do not
        apply and are ignored."""
        self._program(model)
        start = time.perf_counter()
        seed = fresh_seed(settings.seed)
        rng = np.random.default_rng(seed)
        ran: dict[str, Any] = {}
        run: dict[str, Any] = {
            "chains": settings.chains,
            "iter_warmup": settings.iter_warmup,
            "iter_sampling": settings.iter_sampling,
            "rng": rng,
            "context": context,
            "report": ran,
        }
        kept: dict[str, Any]
        if model == "davidson":
            # its own exact sampler, which draws the replicates with the draws
            kept = _davidson.sample(_davidson.Ties.from_stan_data(data), **run)
            last = Round("davidson", 1)
            convergence = "Metropolis-Hastings (Davidson's model)"
            moves = False
        else:
            design = Design.from_stan_data(data)
            params = _gibbs.sample(design, **run)
            first = Round(ran["kernel"], _gibbs.THIN if ran["kernel"] == "independence" else 1)
            params, rounds = converge(
                design, params, first, ran["run"], settings, context, checked(model)
            )
            last = rounds[-1]
            convergence = tried(rounds)
            moves = ran["run"].moves is not None
            # drawn when the PPC, WAIC or LOO asks, from the generator as the sampler left it
            kept = Params(params, _gibbs.Replicates.after(design, params, rng))
        return Draws(
            params=kept,
            sampler={},
            engine=self.name,
            max_treedepth=settings.max_treedepth,
            timings={"compile": 0.0, "sample": time.perf_counter() - start},
            info={
                "engine_version": self.version(),
                "sampler": describe(last.kernel, ran["acceptance"], last.thin, moves=moves),
                "kernel": last.kernel,
                "thin": last.thin,
                "model": model,
                # the model's definition, whose source both kinds of engine follow
                "stan_hash": program_hash(model),
                "seed": seed,
                "chains": settings.chains,
                "iter_warmup": settings.iter_warmup,
                "iter_sampling": settings.iter_sampling,
                # what was drawn until the diagnostics passed (or the further rounds were spent)
                "convergence": convergence,
                "messages": [],
            },
        )

    def laplace(
        self,
        model: ModelName,
        data: dict[str, Any],
        *,
        draws: int,
        seed: int | None,
        context: RunContext = QUIET,
        verbose: bool = False,
    ) -> Draws:
        """Draws of the Laplace approximation of ``model``'s posterior: the normal law at the
        posterior mode with the inverse of the negative Hessian there as its covariance, on
        this engine's scale (``log sigma`` and the abilities for ``bbt``, the proposal of
        its independence kernel, :mod:`._independence`; ``log sigma``, the abilities'
        contrasts and ``nu`` for ``davidson``, whose abilities' mean is drawn exactly, as
        :mod:`._davidson` samples it), with the program's generated quantities.

        Milliseconds, in this process: the widget's previews on a Stan engine use it, where
        a Stan engine's own approximation starts a process. Not for ``bbt_groups``, whose
        joint posterior mode misplaces the spread between groups
        (``fitting.prepared.GROUP_LAPLACE_REFUSAL``).

        Raises
        ------
        EngineError
            For ``bbt_groups``, or where the posterior has no interior mode (the
            hyper-prior's funnel dominates sparse data): the message says to sample.
        FitCancelled
            The context's cancel was set before it started.
        """
        context.check("cancelled before it started")
        start = time.perf_counter()
        seed = fresh_seed(seed)
        rng = np.random.default_rng(seed)
        if model == "davidson":
            ties = _davidson.Ties.from_stan_data(data)
            proposal = _davidson.find_mode(ties)
        elif model == "bbt":
            design = Design.from_stan_data(data)
            start_point = _independence.start_clear_of_the_funnel(design)
            proposal = _independence.Proposal.at_mode(design, start_point)
        else:
            raise EngineError(f"the numpy engine has no Laplace approximation of {model!r}")
        if proposal is None:
            raise EngineError(
                "the posterior has no interior mode to approximate around (the hyper-prior "
                "dominates these data): sample it instead (fit)"
            )
        theta = proposal.draw(draws, rng)[None]  # one "chain"
        params: dict[str, Any]
        if model == "davidson":
            params = _davidson.outputs(ties, theta, rng)
        else:
            kept = {
                "sigma": np.exp(theta[..., 0]),
                "beta": np.ascontiguousarray(theta[..., 1:]),
            }
            params = Params(kept, _gibbs.Replicates.after(design, kept, rng))
        return Draws(
            params=params,
            sampler={},
            engine=self.name,
            timings={"compile": 0.0, "sample": time.perf_counter() - start},
            info={
                "engine_version": self.version(),
                "model": model,
                "stan_hash": program_hash(model),
                "seed": seed,
                "method": "laplace",
                "draws": draws,
            },
        )


def refusal(model: str) -> str:
    """Why the numpy engine does not sample ``model``, and what does."""
    return (
        f"the numpy engine samples the BBT models ({', '.join(MODELS)}), not {model!r}: use "
        "engine='pystan' or engine='cmdstanpy' for it"
    )
