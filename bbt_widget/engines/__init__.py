"""Engines: sample the package's models with numpy (no compiler) or run its Stan programs
with cmdstanpy (CmdStan) or PyStan.

>>> draws = sample("bbt", {"n_alg": 3, "i1": [1, 1, 2], "i2": [2, 3, 3],
...                        "win1": [7, 2, 11], "win2": [14, 19, 10]}, seed=1)  # doctest: +SKIP
>>> draws.params["beta"].shape  # doctest: +SKIP
(4, 1000, 3)

``engine="auto"`` picks the numpy engine (exact samplers, no compiler:
``_numpy.NumpyEngine``) for every model, Davidson's included; the engine used is
``Draws.engine``. Each engine is a class that implements :class:`~.base.Engine`
(``_numpy.NumpyEngine``, ``_cmdstan.CmdStanEngine``, ``_pystan.PyStanEngine``);
:func:`get` returns the one instance per name. The functions here check the model, the data
and the settings (:class:`~.base.SamplerSettings`) and hand them to that instance. The Stan
engines run each job in a killable child process through cmdstanpy's or PyStan's public API
(:mod:`._child`); models are compiled once per machine into a user cache directory
(``$BBT_WIDGET_CACHE`` overrides it; it must be private: see ``_cache.check_tree``) and
reused. Set ``BBT_WIDGET_VERBOSE=1`` (or pass ``verbose=True``)
to see the compiler's and Stan's output; by default the engines are silent.
"""

from __future__ import annotations

import importlib
import os
import threading
import time
from collections.abc import Mapping
from typing import Any

from ..core.draws import Draws, ModelName, ProgressCallback, SamplerSettings
from ..core.options import (
    DEFAULT_ADAPT_DELTA,
    DEFAULT_CHAINS,
    DEFAULT_ENGINE,
    DEFAULT_ITER_SAMPLING,
    DEFAULT_ITER_WARMUP,
    DEFAULT_MAX_TREEDEPTH,
    EngineName,
)
from ..core.validation import check_count, check_seed
from ._programs import check_model, prepare_data, program_hash, stan_program
from .base import Engine, EngineError, FitCancelled, RunContext

__all__ = [
    "ENGINES",
    "NUMPY_MODELS",
    "STAN_ENGINES",
    "Draws",
    "Engine",
    "EngineError",
    "FitCancelled",
    "ModelName",
    "ProgressCallback",
    "SamplerSettings",
    "available_engines",
    "compile_model",
    "compile_models",
    "get",
    "iterations",
    "laplace",
    "models_to_compile",
    "prepare_data",
    "program_hash",
    "resolve_engine",
    "sample",
    "shutdown",
    "stan_engine",
    "stan_program",
    "stop_all",
]

#: Engine names: the numpy engine, then the Stan engines in the order "auto" prefers them.
ENGINES: tuple[EngineName, ...] = ("numpy", "cmdstanpy", "pystan")
STAN_ENGINES: tuple[EngineName, ...] = ("cmdstanpy", "pystan")
#: The models the numpy engine samples, which "auto" gives it: all of them.
NUMPY_MODELS: tuple[str, ...] = ("bbt", "bbt_groups", "davidson")

_FIXES = {
    "cmdstanpy": "CmdStan was not found. Install it with `python -m cmdstanpy.install_cmdstan` "
    "(needs internet and a C++ toolchain) or set $CMDSTAN to an existing installation; "
    "engine='pystan' needs neither.",
    "pystan": 'PyStan is not installed: `pip install "bbt-widget[stan]"` (Linux and macOS only; '
    "it needs a C++ compiler such as g++ or clang++).",
}


#: The class of each engine, by name: (module, class). Imported on first use.
_CLASSES = {
    "numpy": ("._numpy", "NumpyEngine"),
    "cmdstanpy": ("._cmdstan", "CmdStanEngine"),
    "pystan": ("._pystan", "PyStanEngine"),
}
_instances: dict[str, Engine] = {}
_instances_lock = threading.Lock()


def get(name: str) -> Engine:
    """The engine called ``name`` (``"numpy"``, ``"cmdstanpy"`` or ``"pystan"``, not ``"auto"``: see
    :func:`resolve_engine`), whether or not it can run here.

    One instance per name and process. Cheap: nothing is compiled or started, and cmdstanpy
    is not imported.

    Raises
    ------
    ValueError
        For an unknown name.
    """
    if name not in _CLASSES:
        valid = ", ".join(repr(e) for e in ENGINES)
        raise ValueError(f"unknown engine {name!r}; valid engines: {valid}")
    with _instances_lock:
        engine = _instances.get(name)
        if engine is None:
            module, cls = _CLASSES[name]
            engine = _instances[name] = getattr(importlib.import_module(module, __name__), cls)()
        return engine


def available_engines() -> list[str]:
    """Engines that can run here: ``"numpy"`` and those of ``["cmdstanpy", "pystan"]`` found
    (nothing is compiled)."""
    return [name for name in ENGINES if get(name).available()]


def resolve_engine(engine: str = DEFAULT_ENGINE, model: str | None = None) -> EngineName:
    """The engine that ``engine`` designates here for ``model``.

    Parameters
    ----------
    engine
        ``"auto"``: the numpy engine, which samples every model (:data:`NUMPY_MODELS`);
        ``"numpy"``, ``"cmdstanpy"`` or ``"pystan"``.
    model
        The model to run (None: a BBT fit).

    Raises
    ------
    ValueError
        For an unknown name.
    EngineError
        When the engine asked for cannot run here, or the numpy engine is asked for a model it
        does not sample; the message says how to fix it.
    """
    if engine == "auto":
        return "numpy"
    if engine not in ENGINES:
        valid = ", ".join(repr(e) for e in ("auto", *ENGINES))
        raise ValueError(f"unknown engine {engine!r}; valid engines: {valid}")
    if engine == "numpy" and model is not None and model not in NUMPY_MODELS:
        from ._numpy import refusal

        raise EngineError(refusal(model))
    if not get(engine).available():
        raise EngineError(_FIXES[engine])
    return engine


def stan_engine() -> EngineName:
    """The Stan engine that what needs Stan (the Laplace approximation, the widget's
    background check) runs on here: cmdstanpy when cmdstanpy finds a CmdStan installation,
    else PyStan.

    Raises
    ------
    EngineError
        When no Stan engine can run here; the message says what to install.
    """
    name = next((name for name in STAN_ENGINES if get(name).available()), None)
    if name is None:
        raise EngineError(
            "this needs a Stan engine, and none can run here. " + " ".join(_FIXES.values())
        )
    return name


def iterations(
    engine: str, iter_warmup: int | None = None, iter_sampling: int | None = None
) -> tuple[int, int]:
    """Warm-up and kept iterations per chain: those given, else the defaults of ``engine``
    (a resolved name): 1000 and 1000 for NUTS (Stan's), fewer warm-up sweeps for the numpy
    engine's Gibbs sampler, which has nothing to adapt (``_numpy.DEFAULT_ITER_WARMUP``)."""
    if engine == "numpy":
        from ._numpy import DEFAULT_ITER_SAMPLING as sampling
        from ._numpy import DEFAULT_ITER_WARMUP as warmup
    else:
        warmup, sampling = DEFAULT_ITER_WARMUP, DEFAULT_ITER_SAMPLING
    return (
        warmup if iter_warmup is None else iter_warmup,
        sampling if iter_sampling is None else iter_sampling,
    )


def _verbose(verbose: bool | None) -> bool:
    if verbose is not None:
        return verbose
    return os.environ.get("BBT_WIDGET_VERBOSE", "").strip().lower() in {"1", "true", "yes", "on"}


def compile_model(
    model: ModelName,
    engine: str = "auto",
    progress: ProgressCallback | None = None,
    *,
    verbose: bool | None = None,
) -> None:
    """Compile ``model`` for ``engine`` into the cache unless it is there (then a fast no-op).

    Reports ``("compiling", nan)`` about once a second while a compile runs. Useful to warm up
    ahead of the first fit: compiling takes up to a minute, once per machine.
    """
    check_model(model)
    chosen = get(resolve_engine(engine, model))
    chosen.compile(model, context=RunContext(progress), verbose=_verbose(verbose))


def models_to_compile(models: tuple[ModelName, ...], engine: str = "auto") -> list[ModelName]:
    """The models of ``models`` not yet compiled for ``engine`` here (nothing is built).

    Raises
    ------
    EngineError
        The engine cannot run here, or the cache is not private (see ``_cache``).
    """
    for model in models:
        check_model(model)
    return [
        model
        for model in dict.fromkeys(models)
        if get(resolve_engine(engine, model)).compiled(model) is None
    ]


def compile_models(
    models: tuple[ModelName, ...] = ("bbt", "davidson"),
    engine: str = "auto",
    *,
    progress: ProgressCallback | None = None,
    verbose: bool | None = None,
) -> None:
    """Compile several models into the cache (each a fast no-op when cached), e.g. to warm up,
    one after the other; ``progress("compiling", nan)`` is called from this thread about once
    a second while they compile."""
    for model in models:
        check_model(model)
        resolve_engine(engine, model)
    for model in models:
        compile_model(model, engine, progress, verbose=verbose)


def shutdown() -> None:
    """Stop what the engines keep between fits (none of the engines here keeps a process:
    each Stan job runs in a child of its own). For callers that want nothing left behind, e.g.
    a widget being closed."""
    with _instances_lock:
        started = list(_instances.values())  # an engine not made yet keeps nothing
    for engine in started:
        engine.shutdown()


def stop_all(timeout: float = 10.0) -> None:
    """Kill every process the engines started (compiles and fits); ``timeout`` is kept for
    callers and unused (the kill waits for each process).

    For a program ending on a signal (the ``bbt-widget`` command on SIGINT or SIGTERM); the
    same runs at interpreter exit. A compile killed here starts afresh on the next fit.
    """
    from ._child import stop_all as stop_children

    shutdown()
    stop_children()


def _ready(
    model: ModelName,
    data: Mapping[str, Any],
    engine: str,
    context: RunContext,
) -> tuple[dict[str, Any], Engine]:
    """What every engine call checks after the settings: the data (converted for Stan) and
    the engine; raises FitCancelled when the context's cancel is already set."""
    stan_data = prepare_data(model, data)
    chosen = get(resolve_engine(engine, model))
    context.check("cancelled before it started")
    return stan_data, chosen


def sample(
    model: ModelName,
    data: Mapping[str, Any],
    *,
    engine: str = "auto",
    chains: int = DEFAULT_CHAINS,
    iter_warmup: int = DEFAULT_ITER_WARMUP,
    iter_sampling: int = DEFAULT_ITER_SAMPLING,
    seed: int | None = None,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    max_treedepth: int = DEFAULT_MAX_TREEDEPTH,
    adapt_delta: float = DEFAULT_ADAPT_DELTA,
    verbose: bool | None = None,
) -> Draws:
    """Sample the posterior of one of the package's models: with NUTS on a Stan engine, or
    on the numpy engine by Pólya-Gamma Gibbs (``"bbt"`` and ``"bbt_groups"``) or
    Metropolis-Hastings (``"davidson"``).

    Parameters
    ----------
    model
        ``"bbt"`` (Bradley-Terry, Eq. 2 of the paper), ``"davidson"`` (with ties, Eq. 7),
        or ``"bbt_groups"`` (the group model).
    data
        The program's data: ``n_alg``, ``i1``, ``i2`` (1-based algorithm indices), ``win1``,
        ``win2`` (and ``ties`` for Davidson); optional ``n_pairs`` (default ``len(i1)``),
        ``hyperprior`` (1 lognormal, 2 half-Cauchy, 3 half-normal, default 1) and
        ``prior_scale`` (default 0.5). Lists or numpy arrays. See :func:`prepare_data`.
    engine
        ``"auto"``, ``"numpy"``, ``"cmdstanpy"`` or ``"pystan"``; see :func:`resolve_engine`.
    chains, iter_warmup, iter_sampling
        Chains (run in parallel; on the numpy engine, as one batch) and warm-up / kept
        iterations per chain.
    seed
        Random seed in [0, 2**31 - 1]: with PyStan a seed makes the draws reproducible on the
        same machine. ``None`` draws one (recorded in ``Draws.info["seed"]``). These and the
        NUTS settings below make a :class:`~.base.SamplerSettings`, which checks them.
    progress
        ``progress(stage, fraction)`` called from this thread: ``("compiling", nan)`` while a
        compile runs, ``("sampling", f)`` with f from 0 to 1: the share of all chains'
        iterations done, from Stan's progress lines (about 25 per chain), with both engines.
    cancel
        When set (from any thread), the fit stops within about 0.1 s, its processes are
        killed (on Linux, macOS and Windows) and :class:`FitCancelled` is raised. A compile
        in progress is not stopped: it finishes in the background for the next fit.
    max_treedepth, adapt_delta
        NUTS settings (Stan's defaults).
    verbose
        Pass the compiler's and Stan's output to stderr; default from ``$BBT_WIDGET_VERBOSE``.

    Returns
    -------
    Draws
        Arrays shaped (chains, draws, ...), integer outputs as int64; ``timings`` holds
        ``compile`` (0 when cached), ``sample`` and ``total`` seconds.

    Raises
    ------
    ValueError
        Invalid data or settings.
    EngineError
        The engine is unavailable, or compiling or sampling failed (with Stan's messages).
    FitCancelled
        ``cancel`` was set.
    """
    start = time.perf_counter()
    check_model(model)
    settings = SamplerSettings(
        chains=chains,
        iter_warmup=iter_warmup,
        iter_sampling=iter_sampling,
        adapt_delta=adapt_delta,
        max_treedepth=max_treedepth,
        seed=seed,
    )
    context = RunContext(progress, cancel)
    stan_data, chosen = _ready(model, data, engine, context)
    draws = chosen.sample(model, stan_data, settings, context=context, verbose=_verbose(verbose))
    draws.timings["total"] = time.perf_counter() - start
    draws.info["engine_requested"] = engine
    return draws


def laplace(
    model: ModelName,
    data: Mapping[str, Any],
    *,
    engine: str = "auto",
    draws: int = 1000,
    seed: int | None = None,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    verbose: bool | None = None,
) -> Draws:
    """Draws from the Laplace approximation of the posterior of ``"bbt"`` or ``"davidson"``.

    The normal approximation at the posterior mode, mapped back to the model's parameters. A
    Stan engine's is on Stan's unconstrained scale, with the Jacobian of the constraints
    (CmdStan's ``laplace`` method), in a child process; the numpy engine's is on its own
    scale (``log sigma`` and the abilities), in milliseconds in this process: the widget's
    previews use it. Its P(a > b) intervals are close to a full fit's on real data
    (``benchmarks/bench_laplace.py``); it has no sampler diagnostics.

    Parameters
    ----------
    model, data, seed, progress, cancel, verbose
        As for :func:`sample`.
    engine
        As for :func:`sample`, but ``"auto"`` is a Stan engine (:func:`stan_engine`).
    draws
        Number of approximate draws.

    Returns
    -------
    Draws
        Arrays shaped (1, draws, ...) (one "chain"), no sampler outputs;
        ``info["method"] == "laplace"``.

    Raises
    ------
    ValueError
        Invalid data or settings.
    EngineError
        The engine is unavailable or has no Laplace method here, or the approximation failed
        (no mode found, or a flat direction at the mode).
    FitCancelled
        ``cancel`` was set.
    """
    start = time.perf_counter()
    if check_model(model) not in ("bbt", "davidson"):
        raise ValueError(f"the Laplace approximation is for 'bbt' and 'davidson', not {model!r}")
    draws = check_count(draws, "draws")
    seed = None if seed is None else check_seed(seed)
    if engine == "auto":  # Stan's, the reference (the numpy engine's is asked for by name)
        engine = stan_engine()
    context = RunContext(progress, cancel)
    stan_data, chosen = _ready(model, data, engine, context)
    result = chosen.laplace(
        model,
        stan_data,
        draws=draws,
        seed=seed,
        context=context,
        verbose=_verbose(verbose),
    )
    result.timings["total"] = time.perf_counter() - start
    result.info["engine_requested"] = engine
    return result
