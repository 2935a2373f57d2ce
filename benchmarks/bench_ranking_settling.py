"""What ``draws="auto"`` costs and buys for the ranking models: Plackett-Luce and Mallows at
their default settings with ``draws="fixed"`` against ``draws="auto"`` (the default), as
ratios measured in the same run (these machines are noisy).

On the shipped 16 x 132 results and on the paper's 5 x 20 base results, for seeds 1..N
(interleaved): the wall seconds of ``bbt.ranking_model(...)``, the rounds ``auto`` drew, and
the claims over the seeds. A claim is the order of two algorithms in ``ranking``:

* ``pairs_reordered_over_seeds``: pairs of algorithms that the ``ranking`` table puts in a
  different order in some seed (what a reader of the table alone would see change);
* ``settled_reversals``: pairs settled one way in a seed (``claims()``, gap beyond 3 MCSE)
  and settled the other way in another (the rule says: never);
* ``unsettled_per_seed``: the claims ``unsettled()`` names in each seed.

Run: ``python benchmarks/bench_ranking_settling.py [--seeds 10]``; results go to
``benchmarks/results/ranking_settling.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from itertools import combinations
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import pandas as pd  # noqa: E402
from _machine import machine  # noqa: E402  (beside this script)

import bbt_widget as bbt  # noqa: E402
from bbt_widget.ranking._order import ORDER_Z  # noqa: E402

MODES = ("fixed", "auto")


def _settled(result: Any) -> set[tuple[str, str]]:
    claims = result.claims()
    far = (claims["value"] - claims["threshold"]).abs() > ORDER_Z * claims["mcse"]
    return set(zip(claims["alg_a"][far], claims["alg_b"][far]))


def _case(data: pd.DataFrame, model: str, seeds: int) -> dict[str, Any]:
    times: dict[str, list[float]] = {m: [] for m in MODES}
    orders: dict[str, list[list[str]]] = {m: [] for m in MODES}
    settled: dict[str, list[set[tuple[str, str]]]] = {m: [] for m in MODES}
    unsettled: dict[str, list[int]] = {m: [] for m in MODES}
    rounds = []
    for seed in range(1, seeds + 1):
        for mode in MODES:
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = bbt.ranking_model(data, dataset="db", model=model, seed=seed, draws=mode)
            times[mode].append(time.perf_counter() - start)
            orders[mode].append([str(a) for a in res.ranking["algorithm"]])
            settled[mode].append(_settled(res))
            unsettled[mode].append(len(res.unsettled()))
            if mode == "auto":
                rounds.append(int(res.settings["rounds"]))
    out: dict[str, Any] = {}
    for mode in MODES:
        names = orders[mode][0]
        reordered = sorted(
            f"{a} / {b}"
            for a, b in combinations(sorted(names), 2)
            if len({o.index(a) < o.index(b) for o in orders[mode]}) > 1
        )
        every = set().union(*settled[mode])
        out[mode] = {
            "median_seconds": statistics.median(times[mode]),
            "pairs_reordered_over_seeds": reordered,
            "settled_reversals": sorted(f"{a} > {b}" for a, b in every if (b, a) in every),
            "unsettled_per_seed": unsettled[mode],
        }
    out["auto_over_fixed_time"] = out["auto"]["median_seconds"] / out["fixed"]["median_seconds"]
    out["auto_over_fixed_total_time"] = sum(times["auto"]) / sum(times["fixed"])
    out["auto_rounds_per_seed"] = rounds
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    cases = {
        "pmlb16_4fold (16 x 132)": bbt.datasets.load_pmlb16(),
        "base (5 x 20)": bbt.datasets.load_base(),
    }
    results = {
        f"{model}, {name}": _case(data, model, args.seeds)
        for model in ("plackett-luce", "mallows")
        for name, data in cases.items()
    }
    record = {"machine": machine(), "seeds": args.seeds, "cases": results}
    target = REPO / "benchmarks" / "results" / "ranking_settling.json"
    target.write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
