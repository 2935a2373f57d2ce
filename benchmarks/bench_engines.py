"""Stan engine speed and memory, against plain PyStan measured in the same run.

Cases (4 chains x 1000 warm-up + 1000 draws, the BT model, lognormal hyper-prior):

* ``paper``: the paper's Table 3b, 5 algorithms x 10 pairs. Target: <= 1.0 s end to end.
* ``pmlb16``: 16 algorithms x 120 pairs, 132 games each (simulated). Target: <= 2.5 s.
* ``large``: 100 algorithms x 4950 pairs, 30 games each (simulated). Target: < 60 s, < 1 GiB.

For each: ``engines.sample`` end to end (median of ``--repeat`` runs, in a fresh process so
that the first one is the cold-process case a notebook sees), its breakdown (``Draws.timings``),
divergences and the smallest bulk ESS, and the peak memory of the calling process and of the
sampler processes; then the same with a 1 s pause before each fit (as between two clicks).
Where CmdStan is installed, the cmdstanpy engine end to end is also timed against bare cmdstanpy
sampling (``CmdStanModel.sample``) of the same executable, data and settings (target ratio:
<= 1.2, on ``paper`` and ``pmlb16``), and so is ``bbt.fit`` (``fit_ratio``, for information).
Baseline: the public PyStan API (``stan.build`` on the cached model + ``posterior.sample``) on
the same program and data, in a subprocess whose working directory is a scratch directory.
``--compile`` also times a cold compile into an empty cache (about a minute per model).

Run: ``python benchmarks/bench_engines.py [--repeat N] [--skip-large] [--no-baseline]
[--compile] [--out benchmarks/results/engines.json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from _machine import machine  # noqa: E402  (beside this script)

from bbt_widget import engines  # noqa: E402

TARGETS_S = {"paper": 1.0, "pmlb16": 2.5, "large": 60.0}

TABLE_3B = [
    (1, 2, 7, 14),
    (1, 3, 2, 19),
    (1, 4, 2, 19),
    (1, 5, 6, 15),
    (2, 3, 7, 14),
    (2, 4, 6, 15),
    (2, 5, 5, 15),
    (3, 4, 11, 10),
    (3, 5, 11, 10),
    (4, 5, 12, 9),
]

# Runs in a fresh interpreter: sample `repeat` times, print one JSON line per fit.
_FIT = """
import json, resource, sys, time
sys.path.insert(0, {repo!r})
import numpy as np
import arviz as az
from bbt_widget import engines
data = json.loads(sys.stdin.read())
for rep in range({repeat}):
    time.sleep({pause})
    start = time.perf_counter()
    d = engines.sample("bbt", data, engine="pystan", seed=rep + 1)
    wall = time.perf_counter() - start
    sigma_ess = float(az.ess(d.params["sigma"]))
    beta = d.params["beta"]
    beta_ess = min(float(az.ess(beta[..., j])) for j in range(beta.shape[-1]))
    print(json.dumps({{
        "wall_s": wall,
        "timings": d.timings,
        "divergent": int(d.sampler["divergent__"].sum()),
        "mean_leapfrog": float(d.sampler["n_leapfrog__"].mean()),
        "ess_sigma": sigma_ess,
        "min_ess_beta": beta_ess,
        "maxrss_self_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "maxrss_children_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    }}), flush=True)
    del d, beta
"""

# Plain PyStan: build (cached by httpstan after the first time) and sample.
_BASELINE = """
import json, sys, time
import stan
data = json.loads(sys.stdin.read())
program = {program!r}
t0 = time.perf_counter()
posterior = stan.build(program, data=data, random_seed=1)
t1 = time.perf_counter()
fit = posterior.sample(num_chains=4, num_warmup=1000, num_samples=1000)
t2 = time.perf_counter()
beta = fit["beta"]
print(json.dumps({{"build_s": t1 - t0, "sample_s": t2 - t1, "wall_s": t2 - t0}}))
"""


def _simulated(n_alg: int, games: int, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    beta = rng.normal(0.0, 1.0, n_alg)
    i1, i2 = np.triu_indices(n_alg, 1)
    win1 = rng.binomial(games, 1.0 / (1.0 + np.exp(-(beta[i1] - beta[i2]))))
    return {
        "n_alg": n_alg,
        "n_pairs": int(i1.size),
        "i1": (i1 + 1).tolist(),
        "i2": (i2 + 1).tolist(),
        "win1": win1.tolist(),
        "win2": (games - win1).tolist(),
    }


def cases(skip_large: bool) -> dict[str, dict[str, Any]]:
    out = {
        "paper": {
            "n_alg": 5,
            "n_pairs": 10,
            "i1": [r[0] for r in TABLE_3B],
            "i2": [r[1] for r in TABLE_3B],
            "win1": [r[2] for r in TABLE_3B],
            "win2": [r[3] for r in TABLE_3B],
        },
        "pmlb16": _simulated(16, 132, seed=1),
    }
    if not skip_large:
        out["large"] = _simulated(100, 30, seed=2)
    return out


def _run(code: str, data: dict, timeout: float) -> list[dict]:
    with tempfile.TemporaryDirectory(prefix="bbt-bench-") as cwd:
        proc = subprocess.run(
            [sys.executable, "-c", code],
            input=json.dumps(data),
            capture_output=True,
            text=True,
            cwd=cwd,
            timeout=timeout,
            check=False,
        )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def bench_compile() -> dict[str, float]:
    out = {}
    with tempfile.TemporaryDirectory(prefix="bbt-bench-cache-") as cache:
        env = dict(os.environ, BBT_WIDGET_CACHE=cache)
        for model in ("bbt", "davidson"):
            code = (
                f"import sys, time; sys.path.insert(0, {str(REPO)!r}); "
                "from bbt_widget import engines; t = time.perf_counter(); "
                f"engines.compile_model({model!r}, 'pystan'); print(time.perf_counter() - t); "
                f"t = time.perf_counter(); engines.compile_model({model!r}, 'pystan'); "
                "print(time.perf_counter() - t)"
            )
            lines = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
            ).stdout.split()
            out[f"{model}_cold_s"] = float(lines[0])
            out[f"{model}_warm_s"] = float(lines[1])
    return out


def _win_table(data: dict[str, Any]):
    """The case as the win table ``bbt.fit`` takes (algorithms named a1, a2, ...)."""
    import pandas as pd

    names = [f"a{k}" for k in range(1, data["n_alg"] + 1)]
    return pd.DataFrame(
        {
            "alg1": [names[i - 1] for i in data["i1"]],
            "alg2": [names[i - 1] for i in data["i2"]],
            "win1": data["win1"],
            "win2": data["win2"],
        }
    )


def bench_cmdstan(data_by_case: dict[str, dict[str, Any]], repeat: int) -> dict[str, Any]:
    """The cmdstanpy engine end to end against bare cmdstanpy sampling of the same executable,
    data and settings (target: a ratio of at most 1.2), where CmdStan is installed.

    Each repetition runs, in turn: ``engines.sample`` (the engine end to end: the chains, and
    the draws read into arrays), bare ``CmdStanModel.sample`` (which parses no draw: its
    result reads the CSV files only when asked) and ``bbt.fit`` on the same counts (also
    the win-table checks and the diagnostics, for information). Medians; alternated, so that
    load changes from other processes hit all three alike.
    """
    import warnings

    import cmdstanpy

    import bbt_widget as bbt

    cmdstan = engines.get("cmdstanpy")

    engines.compile_model("bbt", "cmdstanpy")  # compiled once per machine, not timed here
    exe, _ = cmdstan.compile("bbt")
    model = cmdstanpy.CmdStanModel(exe_file=str(exe))
    out: dict[str, Any] = {"engine_version": cmdstan.version(), "repeat": repeat}
    for name, data in data_by_case.items():
        full = engines.prepare_data("bbt", data)
        table = _win_table(data)
        ours, bare, fits = [], [], []
        for rep in range(repeat):
            start = time.perf_counter()
            engines.sample("bbt", full, engine="cmdstanpy", seed=rep + 1)
            ours.append(time.perf_counter() - start)
            with cmdstanpy.disable_logging(), tempfile.TemporaryDirectory() as out_dir:
                start = time.perf_counter()
                model.sample(
                    data=full,
                    chains=4,
                    iter_warmup=1000,
                    iter_sampling=1000,
                    seed=rep + 1,
                    output_dir=out_dir,
                    show_progress=False,
                )
                bare.append(time.perf_counter() - start)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # diagnostics warnings of some seeds
                start = time.perf_counter()
                bbt.fit(table, engine="cmdstanpy", seed=rep + 1)
                fits.append(time.perf_counter() - start)
        out[name] = {
            "engine_median_s": statistics.median(ours),
            "bare_cmdstanpy_median_s": statistics.median(bare),
            "ratio": statistics.median(ours) / statistics.median(bare),
            "target_ratio": 1.2,
            "fit_median_s": statistics.median(fits),
            "fit_ratio": statistics.median(fits) / statistics.median(bare),
            "engine_runs_s": ours,
            "bare_runs_s": bare,
            "fit_runs_s": fits,
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-large", action="store_true")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--compile", action="store_true", help="also time a cold compile")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    started = time.perf_counter()
    engines.compile_model("bbt", "pystan")  # compiled once per machine, not timed here
    report: dict[str, Any] = {
        "machine": machine(),
        "engine": engines.sample(
            "bbt", cases(True)["paper"], engine="pystan", iter_sampling=10
        ).info["engine_version"],
        "scope": "one run: every case, its plain-PyStan baseline and the CmdStan comparison",
        "cases": {},
    }
    if args.compile:
        report["compile"] = bench_compile()
        print("compile:", {k: round(v, 2) for k, v in report["compile"].items()}, flush=True)
    program = engines.stan_program("bbt")  # the #include lines expanded, as PyStan needs
    for name, data in cases(args.skip_large).items():
        repeat = 1 if name == "large" else args.repeat
        fits = _run(_FIT.format(repo=str(REPO), repeat=repeat, pause=0.0), data, timeout=1800)
        walls = [f["wall_s"] for f in fits]
        case: dict[str, Any] = {
            "n_alg": data["n_alg"],
            "n_pairs": data["n_pairs"],
            "first_fit_s": walls[0],
            "median_fit_s": statistics.median(walls),
            "target_s": TARGETS_S[name],
            "fits": fits,
        }
        if name != "large":
            # a pause before each fit, as between two clicks
            paused = _run(_FIT.format(repo=str(REPO), repeat=repeat, pause=1.0), data, 1800)
            case["median_fit_after_pause_s"] = statistics.median(f["wall_s"] for f in paused)
            case["fits_after_pause"] = paused
        if not args.no_baseline and name != "large":
            full = engines.prepare_data("bbt", data)  # with the default hyper-prior filled in
            _run(_BASELINE.format(program=program), full, timeout=1800)  # compiles the 1st time
            base = _run(_BASELINE.format(program=program), full, timeout=1800)
            case["baseline_plain_pystan"] = base[0]
            case["ratio_to_baseline"] = case["median_fit_s"] / base[0]["wall_s"]
        report["cases"][name] = case
        summary = {
            k: round(v, 3) if isinstance(v, float) else v
            for k, v in case.items()
            if k not in ("fits", "fits_after_pause", "baseline_plain_pystan")
        }
        print(name, summary, flush=True)
    if "cmdstanpy" in engines.available_engines():
        small = {k: v for k, v in cases(True).items() if k != "large"}
        # each fit is short: more repetitions, against the noise of a shared machine
        report["cmdstanpy"] = bench_cmdstan(small, max(args.repeat, 11))
        summary = {
            name: {k: round(v, 3) for k, v in case.items() if isinstance(v, float)}
            for name, case in report["cmdstanpy"].items()
            if isinstance(case, dict)
        }
        print("cmdstanpy:", summary, flush=True)
    else:
        report["cmdstanpy"] = "no CmdStan installation found: ratio not measured"
    report["load_average_at_end"] = os.getloadavg()
    report["bench_seconds"] = time.perf_counter() - started
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
