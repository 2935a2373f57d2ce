"""What ``draws="auto"`` costs and buys: the default fit against ``draws="fixed"``, as ratios
measured in the same run (these machines are noisy).

On the shipped 16 x 132 results and on the paper's 5 x 20 base results, for seeds 1..N
(interleaved), and on simulated results of 50 and 100 algorithms x 132 data sets (the browser
tests' simulation, one score per data set) for fewer seeds: the wall and CPU seconds of
``bbt.fit(...)`` and of its ``summary()`` with ``draws="fixed"`` (one round, 4 x 1000 draws)
and with ``draws="auto"`` (the default), the chains ``auto`` kept, and the claims of both
rules over the seeds: how many pairs change claim between seeds, and how many claims are
left unsettled (``result.unsettled()``). The ratios compare CPU seconds (the machine is
shared: the load average at the start and the end is recorded).

Run: ``python benchmarks/bench_settling.py [--seeds 10] [--large-seeds 3]``; results go to
``benchmarks/results/settling.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO / "tests" / "browser"))

import os  # noqa: E402

import pandas as pd  # noqa: E402
from _machine import machine  # noqa: E402  (beside this script)
from simulated import simulated_results  # noqa: E402  (the browser tests' simulation)

import bbt_widget as bbt  # noqa: E402


def _case(data: pd.DataFrame, layout: dict[str, str], seeds: int) -> dict[str, Any]:
    modes = ("fixed", "auto")
    times: dict[str, list[float]] = {m: [] for m in modes}
    cpu: dict[str, dict[str, list[float]]] = {m: {"fit": [], "summary": []} for m in modes}
    claims: dict[str, list[pd.DataFrame]] = {m: [] for m in modes}
    unsettled: dict[str, list[int]] = {m: [] for m in modes}
    chains = []
    for seed in range(1, seeds + 1):
        for mode in modes:
            start, start_cpu = time.perf_counter(), time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = bbt.fit(data, **layout, engine="numpy", seed=seed, draws=mode)
                fitted = time.process_time()
                # the claims a user reads: the summary's conditional estimates are part of it
                summary = res.summary()
            times[mode].append(time.perf_counter() - start)
            cpu[mode]["fit"].append(fitted - start_cpu)
            cpu[mode]["summary"].append(time.process_time() - fitted)
            claims[mode].append(summary.set_index("pair")[["weak", "strong"]])
            unsettled[mode].append(len(res.unsettled()))
            if mode == "auto":
                chains.append(int(res.draws.params["beta"].shape[0]))
    out: dict[str, Any] = {"algorithms": len(res.algorithms), "seeds": seeds}
    for mode in modes:
        table = pd.concat(claims[mode], axis=1, keys=range(seeds))
        changing = {
            rule: sorted(
                table.xs(rule, axis=1, level=1).loc[lambda t: t.nunique(axis=1) > 1].index.tolist()
            )
            for rule in ("weak", "strong")
        }
        out[mode] = {
            "median_seconds": statistics.median(times[mode]),
            "median_cpu_seconds": {k: statistics.median(v) for k, v in cpu[mode].items()},
            "pairs_changing_claim_over_seeds": changing,
            "unsettled_per_seed": unsettled[mode],
        }
    total = {m: [f + s for f, s in zip(cpu[m]["fit"], cpu[m]["summary"])] for m in modes}
    out["auto_over_fixed_time"] = out["auto"]["median_seconds"] / out["fixed"]["median_seconds"]
    out["auto_over_fixed_cpu"] = statistics.median(total["auto"]) / statistics.median(
        total["fixed"]
    )
    out["fixed_summary_over_fit_cpu"] = statistics.median(cpu["fixed"]["summary"]) / (
        statistics.median(cpu["fixed"]["fit"])
    )
    out["auto_chains_per_seed"] = chains
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--large-seeds", type=int, default=3)
    args = parser.parse_args()
    db = {"dataset": "db"}
    simulated = {"dataset": "dataset", "algorithm": "algorithm", "score": "score"}
    cases = {
        "pmlb16_4fold (16 x 132)": (bbt.datasets.load_pmlb16(), db, args.seeds),
        "base (5 x 20)": (bbt.datasets.load_base(), db, args.seeds),
    }
    for n in (50, 100):
        data = simulated_results(n, 132, 1).drop(columns="fold")
        cases[f"simulated ({n} x 132)"] = (data, simulated, args.large_seeds)
    load = machine()
    results = {name: _case(data, layout, seeds) for name, (data, layout, seeds) in cases.items()}
    record = {
        "machine": load,
        "load_average_at_end": os.getloadavg(),
        "seeds": args.seeds,
        "cases": results,
    }
    target = REPO / "benchmarks" / "results" / "settling.json"
    target.write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
