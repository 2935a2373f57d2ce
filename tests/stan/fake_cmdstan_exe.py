"""A fake CmdStan model executable, for testing the cmdstanpy engine without CmdStan.

``test_engines.py`` builds a fake CmdStan installation whose makefile "compiles" a model into
a launcher of this script. It answers CmdStan's sampling command line with a Stan CSV file
(CmdStan 2.36's layout, as cmdstanpy parses it) holding one chain of real draws from the
PyStan engine, after printing CmdStan's progress lines (``Iteration: 100 / 2000 [  5%]``,
every ``refresh`` iterations, ``FAKE_CMDSTAN_ITERATION_SECONDS`` apart). Environment:
``FAKE_CMDSTAN_REPO`` (the checkout to import bbt_widget from) and ``FAKE_CMDSTAN_MODELS`` (the
bbt-widget cache holding the compiled PyStan models).
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
    names, cols = [], []
    for name in SAMPLER:
        names.append(name)
        cols.append(d.sampler[name][0])
    for name, values in d.params.items():
        values = values[0]
        if values.ndim == 1:
            names.append(name)
            cols.append(values)
        else:
            for j in range(values.shape[1]):
                names.append(f"{name}.{j + 1}")
                cols.append(values[:, j])
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
    with open(kv["output_file"], "w") as fh:
        fh.writelines(f"# {line}\n" for line in header)
        fh.write(",".join(names) + "\n")
        fh.write("# Adaptation terminated\n# Step size = 0.5\n")
        fh.write("# Diagonal elements of inverse mass matrix:\n# 1, 1\n")
        for row in np.column_stack(cols):
            fh.write(",".join(repr(float(x)) for x in row) + "\n")
        fh.write("# \n#  Elapsed Time: 0.1 seconds (Warm-up)\n")
        fh.write(
            "#                0.1 seconds (Sampling)\n#                0.2 seconds (Total)\n# \n"
        )


if __name__ == "__main__":
    main()
