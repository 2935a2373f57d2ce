"""Build and sample a Stan program with PyStan's public API (run as a script, not imported).

Usage: ``python _pystan_child.py REQUEST.json``. The PyStan engine runs this script in a
process of its own (its own session, so that a cancel kills it with the sampler processes
PyStan starts), in a private scratch working directory (``stan.build`` leaves ``build/``
there), with ``$XDG_CACHE_HOME`` pointed at the package's private cache, which is where
httpstan compiles and caches models. ``stan.build`` calls ``asyncio.run``, which is safe here:
this process has no running event loop, whatever the caller's. PyStan's progress lines on
stderr are what the engine reads to report progress.

The request (JSON) holds ``program``, ``data``, ``seed``, ``method`` (``"build"``,
``"sample"`` or ``"laplace"``) and ``out_dir``, plus the NUTS settings for ``"sample"``
(``chains``, ``num_warmup``, ``num_samples``, ``delta``, ``max_depth``) or ``model`` and
``draws`` for ``"laplace"``, and ``integers``, the outputs saved as int64. It writes
``draws.npz`` (one array per output, shaped (chains, draws[, size])) and ``built.txt``
(httpstan's model folder) into ``out_dir``, or ``error.txt`` with the reason on failure.

Self-contained (stdlib, numpy, PyStan and ``_laplace.py`` beside it): it must not import
bbt_widget, whose import is slow.
"""

import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # the same module, as the type checker finds it in the package
    from bbt_widget.engines._laplace import approximate
else:  # beside this script, which runs as `python <path>`
    from _laplace import approximate


class _Density:
    """The functions ``_laplace.approximate`` calls, through PyStan's public ``Model`` methods."""

    def __init__(self, posterior: Any) -> None:
        self.posterior = posterior

    def constrained_param_names(self, data: object) -> list[str]:
        return list(self.posterior.constrained_param_names)

    def log_prob(self, data: object, x: list[float], adjust: bool) -> float:
        return float(self.posterior.log_prob(x, adjust_transform=adjust))

    def log_prob_grad(self, data: object, x: list[float], adjust: bool) -> list[float]:
        return list(self.posterior.grad_log_prob(x))

    def write_array(self, data: object, x: list[float], tparams: bool, gqs: bool) -> list[float]:
        return list(self.posterior.constrain_pars(x, include_tparams=tparams, include_gqs=gqs))


def _outputs(fit: Any) -> dict[str, Any]:
    """Each output of ``fit`` shaped (chains, draws[, size]): ``fit[name]`` holds the draws
    of all chains with the chain varying fastest."""
    chains = fit.num_chains
    out: dict[str, Any] = {}
    for name in fit.sample_and_sampler_param_names:
        out[name] = np.asarray(fit[name]).reshape(-1, chains).T
    for name, dims in zip(fit.param_names, fit.dims):
        if 0 in dims:  # no element (a model without pairs): the engine adds it empty
            continue
        values = np.asarray(fit[name])
        if dims:
            out[name] = values.reshape(int(np.prod(dims)), -1, chains).transpose(2, 1, 0)
        else:
            out[name] = values.reshape(-1, chains).T
    return out


def _laplace(posterior: Any, request: dict[str, Any]) -> dict[str, Any]:
    names, values, _ = approximate(
        _Density(posterior), request["model"], request["data"], request["draws"], request["seed"]
    )
    out: dict[str, list[int]] = {}
    for j, name in enumerate(names):
        out.setdefault(name.split(".", 1)[0], []).append(j)
    return {
        base: values[:, cols][None] if "." in names[cols[0]] else values[None, :, cols[0]]
        for base, cols in out.items()
    }


def _forget_cached_fits(model_dir: Path) -> None:
    """httpstan keeps the output of every seeded fit under the model (``fits/``): nobody reads
    them again here, and they would fill the cache. Only those over an hour old go: another
    child's fit, just written, is still to be read by its own PyStan."""
    old = time.time() - 3600
    for path in model_dir.rglob("*.jsonlines.gz"):
        if path.stat().st_mtime < old:
            path.unlink(missing_ok=True)


def _save(out_dir: Path, arrays: dict[str, Any], request: dict[str, Any]) -> None:
    """``draws.npz``: each output in C order, the request's ``integers`` as int64 (Stan
    writes every output as a float: converted here, the engine's process never holds both).

    C order because the outputs are transposed views of PyStan's arrays (``_outputs``: the
    chain index varies fastest there), in Fortran order, which ``np.save`` keeps: the engine's
    process would then copy every such array where it flattens the chains (the posterior
    predictive check's ``reshape`` of ``win1_rep``, the largest output with ``log_lik``),
    instead of taking a view. One output at a time, so this process holds one extra copy of
    one output at most.
    """
    integers = set(request.get("integers", ()))
    for name in list(arrays):
        dtype = np.int64 if name in integers else None
        arrays[name] = np.ascontiguousarray(arrays[name], dtype=dtype)
    np.savez(out_dir / "draws.npz", **arrays)


def main() -> None:
    os.umask(0o077)  # what httpstan writes into the cache stays private
    request = json.loads(Path(sys.argv[1]).read_text())
    out_dir = Path(request["out_dir"])
    try:
        import aiohttp.client

        import stan

        # PyStan's HTTP client (aiohttp) gives up on a request after 5 minutes, which a compile
        # on a loaded machine can take; a request cut short leaves the model half-cached.
        # This process is killed on cancel, so it needs no timeout of its own.
        aiohttp.client.DEFAULT_TIMEOUT = aiohttp.ClientTimeout(total=None, sock_connect=30)  # type: ignore[misc]

        program, data, seed = request["program"], request["data"], request["seed"]
        posterior = stan.build(program, data=data, random_seed=seed)  # type: ignore[attr-defined]
        cache = Path(os.environ["XDG_CACHE_HOME"])
        model_dir = next(cache.glob(f"httpstan/*/{posterior.model_name}"))
        (out_dir / "built.txt").write_text(str(model_dir))
        if request["method"] == "sample":
            fit = posterior.sample(
                num_chains=request["chains"],
                num_samples=request["num_samples"],
                num_warmup=request["num_warmup"],
                delta=request["delta"],
                max_depth=request["max_depth"],
                refresh=max(1, (request["num_warmup"] + request["num_samples"]) // 25),
            )
            _forget_cached_fits(model_dir)
            _save(out_dir, _outputs(fit), request)
        elif request["method"] == "laplace":
            _save(out_dir, _laplace(posterior, request), request)
    except BaseException as error:  # the engine reads the reason
        (out_dir / "error.txt").write_text(f"{type(error).__name__}: {error}")
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
