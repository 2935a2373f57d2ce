"""The numpy engine (Pólya-Gamma Gibbs) against PyStan's NUTS (and CmdStan where one is
installed), as ratios measured in the same run: these machines are noisy.

Warm process, per case and engine, interleaved over ``--repeat`` runs: the wall and CPU
seconds of ``bbt.fit`` (the whole call) and of its sampling alone, the smallest bulk and tail
ESS over every beta and sigma, and so the bulk ESS per second. The numpy engine runs twice:
at its defaults (4 x (100 + 1000)) and at the fewest sweeps that give every beta and sigma a
bulk ESS of 400 (4 x (25 + 150), doubled until it does); PyStan and CmdStan at Stan's
defaults (4 x (1000 + 1000)). Cases: the paper's base results (5 x 20), the shipped
``pmlb16_4fold.csv`` (16 x 132), and simulated wide tables of 50 x 132 and 200 x 500 (Stan
skipped at 200 x 500: it would take many minutes a fit), with the Laplace preview on each Stan
engine that the widget showed first before the numpy engine.

Fresh process, ``--repeat`` times: a whole ``python -c`` that imports the package and fits
the 16 x 132 results, numpy (both settings) against PyStan; and the ``bbt-widget report``
command on them with an empty model cache and no C++ compiler on PATH (numpy; the target is
3 s), against the same command on PyStan with its model compiled.

Run: ``python benchmarks/bench_gibbs.py [--repeat 3] [--skip-large]``; results go to
``benchmarks/results/gibbs.json``. PyStan's model is compiled (and its workers warm) before
anything is timed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from _machine import cpu_seconds, machine  # noqa: E402  (beside this script)

import bbt_widget as bbt  # noqa: E402
from bbt_widget import engines  # noqa: E402
from bbt_widget.core.convergence import ess_bulk, ess_tail  # noqa: E402
from bbt_widget.fitting import fit_laplace  # noqa: E402

#: The fewest sweeps tried first for bulk ESS >= 400 (doubled until reached).
ESS_SETTING = {"chains": 4, "iter_warmup": 25, "iter_sampling": 150}


def simulated(n_alg: int, n_sets: int, seed: int = 0) -> pd.DataFrame:
    """A wide table: one row per data set, one column of scores per algorithm."""
    rng = np.random.default_rng(seed)
    ability = np.sort(rng.normal(0, 0.03, n_alg))[::-1]
    difficulty = rng.uniform(0.55, 0.8, n_sets)
    noise = rng.normal(0, 0.03, (n_sets, n_alg))
    scores = np.clip(difficulty[:, None] + ability[None, :] + noise, 0.0, 0.999)  # accuracies
    frame = pd.DataFrame(scores, columns=[f"alg{k:03d}" for k in range(n_alg)])
    return frame.assign(db=[f"d{k}" for k in range(n_sets)])


def one(df: pd.DataFrame, engine: str, **sampler: Any) -> dict[str, float]:
    cpu, start = cpu_seconds(), time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # diagnostics are recorded, not warned
        res = bbt.fit(df, dataset="db", engine=engine, seed=1, **sampler)
    wall, used = time.perf_counter() - start, cpu_seconds() - cpu
    p = res.draws.params
    quantities = [p["beta"][..., j] for j in range(p["beta"].shape[-1])] + [p["sigma"]]
    bulk = min(ess_bulk(q) for q in quantities)
    return {
        "wall_s": wall,
        "cpu_s": used,
        "sample_s": res.draws.timings["sample"],
        "min_ess_bulk": bulk,
        "min_ess_tail": min(ess_tail(q) for q in quantities),
        "ess_bulk_per_s": bulk / wall,
        "iterations": res.settings["iter_warmup"] + res.settings["iter_sampling"],
        "diagnostics_ok": float(res.diagnostics().ok),
    }


def laplace(df: pd.DataFrame, engine: str) -> float:
    """Wall seconds of the Laplace preview the widget showed before the numpy engine
    (``bbt.fit_laplace`` on a Stan engine: the mode, its Hessian, 1000 draws)."""
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit_laplace(df, dataset="db", engine=engine, seed=1)
    return time.perf_counter() - start


def ess_setting(df: pd.DataFrame) -> dict[str, int]:
    """The fewest sweeps (from ESS_SETTING, warm-up and kept draws doubled) giving every beta
    and sigma a bulk ESS >= 400 and R-hat <= 1.01 (the fit's diagnostics pass)."""
    setting = dict(ESS_SETTING)
    while True:
        got = one(df, "numpy", **setting)
        if got["min_ess_bulk"] >= 400 and got["diagnostics_ok"]:
            return setting
        setting = {**setting, "iter_warmup": 2 * setting["iter_warmup"]}
        setting["iter_sampling"] *= 2


def warm_case(name: str, df: pd.DataFrame, stan: list[str], repeat: int) -> dict[str, Any]:
    setting = ess_setting(df)
    for engine in stan:
        one(df, engine, iter_sampling=100)  # compile, start the workers
    runs = []
    for _ in range(repeat):
        row = {f"numpy_default_{k}": v for k, v in one(df, "numpy").items()}
        row |= {f"numpy_ess400_{k}": v for k, v in one(df, "numpy", **setting).items()}
        for engine in stan:
            row |= {f"{engine}_{k}": v for k, v in one(df, engine).items()}
            row[f"laplace_{engine}_wall_s"] = laplace(df, engine)
            row[f"wall_numpy_ess400_to_laplace_{engine}"] = (
                row["numpy_ess400_wall_s"] / row[f"laplace_{engine}_wall_s"]
            )
            for kind in ("default", "ess400"):
                row[f"wall_numpy_{kind}_to_{engine}"] = (
                    row[f"numpy_{kind}_wall_s"] / row[f"{engine}_wall_s"]
                )
                row[f"ess_per_s_numpy_{kind}_to_{engine}"] = (
                    row[f"numpy_{kind}_ess_bulk_per_s"] / row[f"{engine}_ess_bulk_per_s"]
                )
        print(name, json.dumps({k: round(v, 4) for k, v in row.items()}), flush=True)
        runs.append(row)
    median = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    return {"case": name, "ess400_setting": setting, "stan_engines": stan, "median": median}


def _timed(command: list[str], env: dict[str, str], cwd: str) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=env, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - start


def _no_compiler_path(folder: Path) -> str:
    """A PATH of this venv's scripts and a copy of /usr/bin without any C/C++ compiler."""
    bins = folder / "bin"
    bins.mkdir()
    compilers = ("gcc", "g++", "cc", "c++", "cpp", "clang")
    for tool in Path("/usr/bin").iterdir():
        if not any(tool.name.startswith(c) or f"-{c}" in tool.name for c in compilers):
            (bins / tool.name).symlink_to(tool)
    return f"{Path(sys.executable).parent}:{bins}"


def fresh(repeat: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="bench-gibbs-"))
    csv = work / "pmlb16.csv"
    bbt.datasets.load_pmlb16().to_csv(csv, index=False)
    fit = (
        "import bbt_widget as bbt, bbt_widget.datasets as d; "
        "bbt.fit(d.load_pmlb16(), dataset='db', {})"
    )
    ess400 = ", ".join(f"{k}={v}" for k, v in ESS_SETTING.items())
    env = dict(os.environ)
    no_cc = {**env, "PATH": _no_compiler_path(work)}
    bbt_cmd = str(Path(sys.executable).parent / "bbt-widget")
    runs = []
    for _ in range(repeat):
        cache = tempfile.mkdtemp(prefix="cache-", dir=work)  # empty: nothing compiled
        row = {
            "fit_numpy_default_s": _timed(
                [sys.executable, "-c", fit.format("engine='numpy'")], env, str(work)
            ),
            "fit_numpy_ess400_s": _timed(
                [sys.executable, "-c", fit.format(ess400)],
                env,
                str(work),
            ),
            "fit_pystan_s": _timed(
                [sys.executable, "-c", fit.format("engine='pystan'")], env, str(work)
            ),
            "report_numpy_no_compiler_empty_cache_s": _timed(
                [bbt_cmd, "report", str(csv), "-o", "r.html", "-q"],
                {**no_cc, "BBT_WIDGET_CACHE": cache},
                str(work),
            ),
            "report_pystan_s": _timed(
                [bbt_cmd, "report", str(csv), "-o", "s.html", "-q", "--engine", "pystan"],
                env,
                str(work),
            ),
        }
        row["fit_numpy_default_to_pystan"] = row["fit_numpy_default_s"] / row["fit_pystan_s"]
        row["fit_numpy_ess400_to_pystan"] = row["fit_numpy_ess400_s"] / row["fit_pystan_s"]
        row["report_numpy_to_pystan"] = (
            row["report_numpy_no_compiler_empty_cache_s"] / row["report_pystan_s"]
        )
        print("fresh", json.dumps({k: round(v, 3) for k, v in row.items()}), flush=True)
        runs.append(row)
    shutil.rmtree(work, ignore_errors=True)
    return {
        "median": {k: statistics.median(r[k] for r in runs) for k in runs[0]},
        "runs": runs,
        "report_target_s": 3.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-large", action="store_true", help="no 200 x 500 case")
    args = parser.parse_args()
    load = os.getloadavg()
    stan = [e for e in ("pystan", "cmdstanpy") if e in engines.available_engines()]
    cases = [
        ("base_5x20", bbt.datasets.load_base(), stan),
        ("pmlb16_16x132", bbt.datasets.load_pmlb16(), stan),
        ("simulated_50x132", simulated(50, 132), stan),
    ]
    if not args.skip_large:
        cases.append(("simulated_200x500", simulated(200, 500), []))
    warm = [warm_case(name, df, engines_, args.repeat) for name, df, engines_ in cases]
    result = {
        "machine": machine(load),
        "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cmdstan": "found" if "cmdstanpy" in stan else "not installed here: not measured",
        "targets": {
            "16x132 ESS>=400 warm": 0.25,
            "16x132 fresh process": 1.0,
            "50x132 warm": 1.0,
            "200x500 warm": 10.0,
            "report fresh, no compiler": 3.0,
        },
        "warm": warm,
        "fresh": fresh(args.repeat),
    }
    out = REPO / "benchmarks" / "results" / "gibbs.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
