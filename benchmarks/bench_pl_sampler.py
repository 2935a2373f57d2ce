"""The Plackett-Luce model's Gibbs sampler (numpy, the package's) against NUTS on the same
model in Stan (the tests' oracle, ``tests/oracles/stan_twins.py``, with PyStan), on the
report's settings, as ratios measured in the same process.

Per run and sampler: the wall time (Gibbs: ``ranking_model``, the summaries included), the CPU
seconds it took (this process and its children: Stan's chains run in worker processes), the
smallest bulk and tail ESS of the 16 weights, and so the effective draws per CPU second.
The ratios ``gibbs / nuts`` of the same run survive a noisy machine.

Case: the shipped ``pmlb16_4fold.csv`` (16 algorithms x 132 data sets, ties split), 4 chains
x (250 warm-up + 1000 kept), the report's setting. The Stan model is compiled (and its
worker warm) before the first run.

Run: ``python benchmarks/bench_pl_sampler.py [--repeat 5]``; results go to
``benchmarks/results/pl_sampler.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from _machine import cpu_seconds, machine  # noqa: E402  (beside this script)
from oracles import stan_twins  # noqa: E402  (the Stan twin, tests/oracles)

import bbt_widget as bbt  # noqa: E402
from bbt_widget.core.convergence import ess_bulk, ess_tail  # noqa: E402

SETTINGS = {"chains": 4, "iter_warmup": 250, "iter_sampling": 1000}


def _fit(df, sampler: str, seed: int, **settings):
    """Gibbs (``ranking_model``) or NUTS on the Stan twin: anything with draws and
    diagnostics."""
    if sampler == "gibbs":
        return bbt.ranking_model(df, dataset="db", seed=seed, **settings)
    return stan_twins.plackett_luce(df, dataset="db", seed=seed, **settings)


def one(df, sampler: str, seed: int) -> dict[str, float]:
    cpu = cpu_seconds()
    start = time.perf_counter()
    res = _fit(df, sampler, seed, **SETTINGS)
    wall = time.perf_counter() - start
    used = cpu_seconds() - cpu
    theta = res.draws.params["theta"]
    bulk = min(ess_bulk(theta[..., i]) for i in range(theta.shape[2]))
    tail = min(ess_tail(theta[..., i]) for i in range(theta.shape[2]))
    return {
        "wall_s": wall,
        "cpu_s": used,
        "min_ess_bulk": bulk,
        "min_ess_tail": tail,
        "ess_bulk_per_cpu_s": bulk / used,
        "max_rhat": res.diagnostics.max_rhat,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    df = bbt.datasets.load_pmlb16()
    for sampler in ("gibbs", "nuts"):  # compile, start the worker, warm the imports
        _fit(df, sampler, 1, chains=4, iter_warmup=50, iter_sampling=50)
    load = os.getloadavg()
    runs = []
    for seed in range(1, args.repeat + 1):
        row = {"seed": seed}
        for sampler in ("gibbs", "nuts"):
            row |= {f"{sampler}_{k}": v for k, v in one(df, sampler, seed).items()}
        for key in ("wall_s", "cpu_s", "ess_bulk_per_cpu_s"):
            row[f"{key}_gibbs_to_nuts"] = row[f"gibbs_{key}"] / row[f"nuts_{key}"]
        print(json.dumps({k: round(v, 4) for k, v in row.items()}), flush=True)
        runs.append(row)
    median = {k: statistics.median(r[k] for r in runs) for k in runs[0] if k != "seed"}
    result = {
        "machine": machine(load),
        "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "case": "pmlb16_4fold.csv (16 x 132), ties split, 4 x (250 + 1000), as the report",
        "median": median,
        "runs": runs,
    }
    out = REPO / "benchmarks" / "results" / "pl_sampler.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(median, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
