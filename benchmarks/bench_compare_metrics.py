"""Several metrics at once: ``bbt.compare_metrics`` with 3 metrics against the plain fit.

The shipped PMLB results (16 algorithms x 132 data sets, 4 folds) have one metric, the
accuracy. Two more are derived deterministically (a fixed seed, so every run has the same
data): ``f1`` = the accuracy plus Normal(0, 0.01) noise per fold score, and ``time`` (lower is
better) = a per-algorithm cost (1 + its column index) times a Gamma(4, 0.25) draw per fold
score. They only make the three fits differ; the timing is what is measured. In the same
process, interleaved over ``--repeats`` rounds: one plain ``bbt.fit`` of the accuracy, three
plain fits one after the other (acc, f1, time), and ``compare_metrics`` of the three through
the batch layer on the local cores (all with the default 4 chains x 1000 + 1000). Ratios are
of medians, to the one plain fit.

Run: ``python benchmarks/bench_compare_metrics.py [--repeats N]
[--out benchmarks/results/compare_metrics.json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import bbt_widget as bbt  # noqa: E402

METRICS = ["acc", "f1", "time"]
LAYOUT = {"dataset": "db", "algorithm": "algorithm", "fold": "fold"}


def three_metrics() -> pd.DataFrame:
    """The PMLB results in long form with the derived ``f1`` and ``time`` columns."""
    wide = bbt.datasets.load_pmlb16()
    wide = wide.assign(fold=wide.groupby("db").cumcount())
    algorithms = [c for c in wide.columns if c not in ("db", "fold")]
    long = wide.melt(id_vars=["db", "fold"], var_name="algorithm", value_name="acc")
    rng = np.random.default_rng(2024)
    cost = long["algorithm"].map({a: 1.0 + k for k, a in enumerate(algorithms)})
    return long.assign(
        f1=long["acc"] + rng.normal(0.0, 0.01, len(long)),
        time=cost * rng.gamma(4.0, 0.25, len(long)),
    )


def _timed(run: Any) -> float:
    time.sleep(0.2)  # a pause between runs
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def interleaved_ratios(runs: dict[str, Any], repeats: int) -> dict[str, dict[str, Any]]:
    """Time each of ``runs`` ``repeats`` times, interleaved (so that the machine's load
    falls on all alike), and give each its median and ratio to ``runs["plain_fit"]``."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            times[name].append(_timed(run))
    base = statistics.median(times["plain_fit"])
    rows = {
        name: {
            "median_s": round(statistics.median(t), 3),
            "ratio_to_plain_fit": round(statistics.median(t) / base, 3),
            "runs_s": [round(x, 3) for x in t],
        }
        for name, t in times.items()
    }
    width = max(map(len, rows))
    for name, row in rows.items():
        print(f"{name:{width}s} {row['median_s']:7.2f} s  x{row['ratio_to_plain_fit']:.2f}")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--out", type=Path, default=REPO / "benchmarks/results/compare_metrics.json"
    )
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # the derived metrics' audit notes are not the point
    data = three_metrics()
    bbt.engines.compile_models(("bbt",))

    def plain() -> None:
        bbt.fit(data, score="acc", **LAYOUT)

    def sequential() -> None:
        for m in METRICS:
            bbt.fit(data, score=m, lower_is_better=m == "time", **LAYOUT)

    def compared() -> None:
        bbt.compare_metrics(data, metrics=METRICS, lower_is_better=["time"], **LAYOUT)

    runs = {"plain_fit": plain, "three_plain_fits": sequential, "compare_metrics": compared}
    rows = interleaved_ratios(runs, args.repeats)
    result = compared_once = bbt.compare_metrics(
        data, metrics=METRICS, lower_is_better=["time"], **LAYOUT
    )
    report = {
        "benchmark": "bench_compare_metrics",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "engine": result.results["acc"].engine,
        "data": "pmlb16 (16 algorithms x 132 data sets x 4 folds), f1 and time derived",
        "repeats": args.repeats,
        "note": __doc__.split("\n\n")[1].replace("\n", " "),
        "timings": rows,
        "pareto_weak": compared_once.pareto("weak"),
    }
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
