"""Compile and sample a Stan program with cmdstanpy's ``CmdStanModel`` (run as a script).

Usage: ``python _cmdstan_child.py REQUEST.json``. The CmdStan engine runs this script in a
killable child process of its own (see ``_child.py``), in a scratch working directory. The
request (JSON) holds ``stan_file`` (the program, in the package's private cache, where the
executable is compiled beside it), ``method`` (``"build"``, ``"sample"`` or ``"laplace"``),
``data``, ``seed``, ``out_dir`` and the settings of the method. CmdStan's console output
(its progress lines) goes to stdout, which the engine reads. It writes ``draws.npz`` (one
array per output, shaped (chains, draws[, size])) and ``built.txt`` (the executable) into
``out_dir``, or ``error.txt`` with the reason on failure.

Self-contained (stdlib, numpy, cmdstanpy): it must not import bbt_widget, whose import is slow.
"""

import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np


def _group(names: list[str], values: np.ndarray) -> dict[str, Any]:
    """CmdStan's columns (``beta[2]``) of ``values`` (chains, draws, columns) by output."""
    columns: dict[str, list[int]] = {}
    for j, name in enumerate(names):
        columns.setdefault(name.split("[", 1)[0], []).append(j)
    return {
        base: values[:, :, cols] if "[" in names[cols[0]] else values[:, :, cols[0]]
        for base, cols in columns.items()
    }


def _save(out_dir: Path, arrays: dict[str, Any], request: dict[str, Any]) -> None:
    """``draws.npz``: each output in C order, the request's ``integers`` as int64 (CmdStan
    writes every output as a float: converted here, the engine's process never holds both).

    C order because numpy lays the outputs picked from CmdStan's columns (``_group``) out in
    Fortran order, which ``np.save`` keeps: the engine's
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
    os.umask(0o077)  # the executable compiled into the cache stays private
    request = json.loads(Path(sys.argv[1]).read_text())
    out_dir = Path(request["out_dir"])
    try:
        from cmdstanpy import CmdStanModel

        model = CmdStanModel(stan_file=request["stan_file"])
        (out_dir / "built.txt").write_text(str(model.exe_file))
        run: dict[str, Any] = {"data": request["data"], "seed": request["seed"]}
        if request["method"] == "sample":
            fit = model.sample(
                chains=request["chains"],
                parallel_chains=request["chains"],
                iter_warmup=request["iter_warmup"],
                iter_sampling=request["iter_sampling"],
                adapt_delta=request["adapt_delta"],
                max_treedepth=request["max_treedepth"],
                refresh=max(1, (request["iter_warmup"] + request["iter_sampling"]) // 25),
                show_progress=False,
                show_console=True,
                output_dir=out_dir,
                **run,
            )
            values = np.moveaxis(fit.draws(), 1, 0)  # (chains, draws, columns)
            _save(out_dir, _group(list(fit.column_names), values), request)
        elif request["method"] == "laplace":
            approx = model.laplace_sample(draws=request["draws"], output_dir=out_dir, **run)
            values = approx.draws()[None]  # one "chain"
            names = list(approx.column_names)
            kept = [j for j, name in enumerate(names) if not name.endswith("__")]
            _save(out_dir, _group([names[j] for j in kept], values[:, :, kept]), request)
    except BaseException as error:  # the engine reads the reason
        (out_dir / "error.txt").write_text(f"{type(error).__name__}: {error}")
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
