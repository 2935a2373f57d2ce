"""A fake CmdStan model executable, for testing the cmdstanpy engine without CmdStan.

``test_engines.py`` builds a fake CmdStan installation whose makefile "compiles" a model into
a launcher of this script. It answers CmdStan's sampling command line with a Stan CSV file
(CmdStan 2.36's layout, as cmdstanpy parses it) holding one chain of real draws from the
PyStan engine, after printing CmdStan's progress lines (``Iteration: 100 / 2000 [  5%]``,
every ``refresh`` iterations, ``FAKE_CMDSTAN_ITERATION_SECONDS`` apart). Environment:
``FAKE_CMDSTAN_REPO`` (the checkout to import bbt_widget from) and ``FAKE_CMDSTAN_MODELS`` (the
bbt-widget cache holding the compiled PyStan models).

It also answers the Laplace approximation's two commands as CmdStan 2.35 does: ``method=optimize
jacobian=1`` writes the mode (one row: ``lp__`` and the model's outputs), and ``method=laplace
mode=<that file> jacobian=1 draws=N`` writes N draws after ``log_p__`` and ``log_q__`` (from
the PyStan engine's Laplace approximation). Either fails as CmdStan would without
``jacobian=1`` (and laplace with a mode file that optimize did not write).
``FAKE_CMDSTAN_OPTIMIZE`` set to ``fail`` makes optimize fail as a search that cannot converge
does, to ``slow`` makes it take a minute; ``FAKE_CMDSTAN_LAPLACE`` set to ``flat`` makes laplace
write NaN draws of ``sigma``, as Eigen's Cholesky factor of a Hessian that is not negative
definite gives.
"""

import json
import os
import sys
import time

sys.path.insert(0, os.environ["FAKE_CMDSTAN_REPO"])
os.environ["BBT_WIDGET_CACHE"] = os.environ["FAKE_CMDSTAN_MODELS"]

import numpy as np

from bbt_widget import engines

SAMPLER = ["lp__", "accept_stat__", "stepsize__", "treedepth__", "n_leapfrog__"]
SAMPLER += ["divergent__", "energy__"]


def main() -> None:
    exe, args = sys.argv[1], sys.argv[2:]
    kv: dict[str, str] = {}
    for arg in args:  # "data file=..." then "output file=...": name the two "file"s
        if "=" in arg:
            key, value = arg.split("=", 1)
            if key == "file":
                key = "output_file" if "data_file" in kv else "data_file"
            kv.setdefault(key, value)
    if kv.get("method") in ("optimize", "laplace"):
        sys.exit(_laplace_step(os.path.basename(exe), kv))
    model, chain = os.path.basename(exe), int(kv["id"])
    warmup, draws = int(kv["num_warmup"]), int(kv["num_samples"])
    total = warmup + draws
    if warmup > 100_000:  # a fit the test cancels: behave like a long warm-up
        for i in range(600):
            print(f"Iteration: {i + 1} / {total} [  0%]  (Warmup)", flush=True)
            time.sleep(0.1)
    # CmdStan's progress lines, every `refresh` iterations, with a little time in between (so
    # that the engine sees intermediate fractions); the draws themselves come after, below
    refresh = int(kv.get("refresh", 100))
    for i in [1, *range(refresh, total, refresh), total]:
        stage = "Warmup" if i <= warmup else "Sampling"
        print(f"Iteration: {i:4d} / {total} [{100 * i // total:3d}%]  ({stage})", flush=True)
        time.sleep(float(os.environ.get("FAKE_CMDSTAN_ITERATION_SECONDS", "0.005")))
    with open(kv["data_file"]) as fh:
        data = json.load(fh)
    d = engines.sample(
        model,
        data,
        engine="pystan",
        chains=1,
        iter_warmup=warmup,
        iter_sampling=draws,
        seed=int(kv["seed"]) + chain,
    )
    names, cols = _columns(d.params)
    names = [*SAMPLER, *names]
    cols = [*(d.sampler[name][0] for name in SAMPLER), *cols]
    header = [
        "stan_version_major = 2",
        "stan_version_minor = 36",
        "stan_version_patch = 0",
        f"model = {model}_model",
        "method = sample (Default)",
        "  sample",
        f"    num_samples = {draws}",
        f"    num_warmup = {warmup}",
        "    save_warmup = false (Default)",
        "    thin = 1 (Default)",
        "    adapt",
        "      engaged = true (Default)",
        f"      delta = {kv.get('delta', 0.8)}",
        "    algorithm = hmc (Default)",
        "      hmc",
        "        engine = nuts (Default)",
        "          nuts",
        f"            max_depth = {kv.get('max_depth', 10)}",
        "        metric = diag_e (Default)",
        "    num_chains = 1 (Default)",
        f"id = {chain}",
        "data",
        f"  file = {kv['data_file']}",
        "random",
        f"  seed = {kv['seed']}",
        "output",
        f"  file = {kv['output_file']}",
    ]
    _write_csv(kv["output_file"], header, names, cols, sampled=True)


def _columns(params: dict[str, np.ndarray]) -> tuple[list[str], list[np.ndarray]]:
    """Stan's flat column names and columns of one chain's outputs."""
    names, cols = [], []
    for name, values in params.items():
        values = values[0]
        if values.ndim == 1:
            names.append(name)
            cols.append(values)
        else:
            for j in range(values.shape[1]):
                names.append(f"{name}.{j + 1}")
                cols.append(values[:, j])
    return names, cols


def _laplace_step(model: str, kv: dict[str, str]) -> int:
    """Answer ``method=optimize`` or ``method=laplace``; return the exit code."""
    method = kv["method"]
    if kv.get("jacobian") != "1":
        print(f"fake CmdStan: {method} without jacobian=1 is not the Laplace mode", flush=True)
        return 65
    with open(kv["data_file"]) as fh:
        data = json.load(fh)
    seed = int(kv["seed"])
    if method == "optimize":
        print("Initial log joint probability = -100.0", flush=True)
        behaviour = os.environ.get("FAKE_CMDSTAN_OPTIMIZE", "")
        if behaviour == "slow":
            time.sleep(60)
        if behaviour == "fail":
            print("Line search failed to achieve a sufficient decrease, no more progress")
            print("Optimization terminated with error: ", flush=True)
            return 70
        # the mean of a wide approximation stands in for the mode: only its layout matters
        d = engines.laplace(model, data, engine="pystan", draws=200, seed=seed)
        names, cols = _columns(d.params)
        header = ["method = optimize", "  optimize", "    jacobian = true"]
        means = [np.array([c.mean()]) for c in cols]
        _write_csv(kv["output_file"], header, ["lp__", *names], [np.array([-100.0]), *means])
        return 0
    with open(kv["mode"]) as fh:
        if "method = optimize" not in fh.read():
            print("CSV file is not output from Stan optimization", flush=True)
            return 65
    print("Calculating Hessian\nGenerating draws\niteration: 0", flush=True)
    draws = int(kv.get("draws", 1000))
    d = engines.laplace(model, data, engine="pystan", draws=draws, seed=seed)
    names, cols = _columns(d.params)
    if os.environ.get("FAKE_CMDSTAN_LAPLACE") == "flat":
        cols[names.index("sigma")] = np.full(draws, np.nan)
    header = ["method = laplace", "  laplace", f"    mode = {kv['mode']}", "    jacobian = true"]
    log_p, log_q = np.full(draws, -100.0), np.full(draws, -5.0)
    _write_csv(kv["output_file"], header, ["log_p__", "log_q__", *names], [log_p, log_q, *cols])
    return 0


def _write_csv(
    path: str, header: list[str], names: list[str], cols: list, sampled: bool = False
) -> None:
    """A Stan CSV file: config comments, column names, the draws (and NUTS's comments)."""
    with open(path, "w") as fh:
        fh.writelines(f"# {line}\n" for line in header)
        fh.write(",".join(names) + "\n")
        if sampled:
            fh.write("# Adaptation terminated\n# Step size = 0.5\n")
            fh.write("# Diagonal elements of inverse mass matrix:\n# 1, 1\n")
        for row in np.column_stack(cols):
            fh.write(",".join(repr(float(x)) for x in row) + "\n")
        if sampled:
            fh.write("# \n#  Elapsed Time: 0.1 seconds (Warm-up)\n")
            fh.write("#                0.1 seconds (Sampling)\n")
            fh.write("#                0.2 seconds (Total)\n# \n")


if __name__ == "__main__":
    main()
