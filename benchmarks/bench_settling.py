"""What ``draws="auto"`` costs and buys: the default fit against ``draws="fixed"``, as ratios
measured in the same run (these machines are noisy).

On the shipped 16 x 132 results and on the paper's 5 x 20 base results, for seeds 1..N
(interleaved): the wall seconds of ``bbt.fit(...).summary()`` with ``draws="fixed"`` (one
round, 4 x 1000 draws) and with ``draws="auto"`` (the default), the chains ``auto`` kept,
and the claims of both rules over the seeds: how many pairs change claim between seeds, and
how many claims are left unsettled (``result.unsettled()``).

Run: ``python benchmarks/bench_settling.py [--seeds 10]``; results go to
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

import pandas as pd  # noqa: E402
from _machine import machine  # noqa: E402  (beside this script)

import bbt_widget as bbt  # noqa: E402


def _case(data: pd.DataFrame, seeds: int) -> dict[str, Any]:
    times: dict[str, list[float]] = {"fixed": [], "auto": []}
    claims: dict[str, list[pd.DataFrame]] = {"fixed": [], "auto": []}
    unsettled: dict[str, list[int]] = {"fixed": [], "auto": []}
    chains = []
    for seed in range(1, seeds + 1):
        for mode in ("fixed", "auto"):
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = bbt.fit(data, dataset="db", engine="numpy", seed=seed, draws=mode)
                # the claims a user reads: the summary's conditional estimates are part of it
                summary = res.summary()
            times[mode].append(time.perf_counter() - start)
            claims[mode].append(summary.set_index("pair")[["weak", "strong"]])
            unsettled[mode].append(len(res.unsettled()))
            if mode == "auto":
                chains.append(int(res.draws.params["beta"].shape[0]))
    out: dict[str, Any] = {"shape": [int(data.shape[1] - 1), int(data.shape[0])]}
    for mode in ("fixed", "auto"):
        table = pd.concat(claims[mode], axis=1, keys=range(seeds))
        changing = {
            rule: sorted(
                table.xs(rule, axis=1, level=1).loc[lambda t: t.nunique(axis=1) > 1].index.tolist()
            )
            for rule in ("weak", "strong")
        }
        out[mode] = {
            "median_seconds": statistics.median(times[mode]),
            "pairs_changing_claim_over_seeds": changing,
            "unsettled_per_seed": unsettled[mode],
        }
    out["auto_over_fixed_time"] = out["auto"]["median_seconds"] / out["fixed"]["median_seconds"]
    out["auto_chains_per_seed"] = chains
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    cases = {
        "pmlb16_4fold (16 x 132)": bbt.datasets.load_pmlb16(),
        "base (5 x 20)": bbt.datasets.load_base(),
    }
    results = {name: _case(data, args.seeds) for name, data in cases.items()}
    record = {"machine": machine(), "seeds": args.seeds, "cases": results}
    target = REPO / "benchmarks" / "results" / "settling.json"
    target.write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
