"""Many fits through the batch layer: sweep, influence and calibration, ratios in one run.

* ``sweep``: the default 12-setting sweep (ties x d_min) on the shipped 16 x 132 results, run
  four ways in each round: on **one core** (this process and every process it starts pinned to
  one CPU, one fit at a time: the serial baseline of a speed-up on 2 cores), **serial** (one
  fit at a time on both cores: a loop of ``fit`` calls), **local processes** (the batch layer,
  all cores) and a Dask ``LocalCluster`` with 2 worker processes (started and warmed up before
  the clock starts).
  Target: at least 1.7x faster than serial on 2 cores, i.e. ``speedup_local_vs_one_core`` (the
  time on one core over the time on both) at least 1.7: the batch layer turns a second core
  into speed. Against a loop of default fits the gain is small on 2 cores (about 1.1x):
  ``fit`` already runs its 4 chains in parallel processes, so each fit of the loop keeps both
  cores busy and only the short parts that are not sampling can overlap; the batch layer's
  gain grows with the cores beyond the chains of one fit (a cluster). Under load, parallel
  runs take a larger share of a shared machine and show more.
* ``influence``: PSIS leave-one-data-set-out for all 20 data sets of the base results against
  exact refits (``refit="all"``). Target: at least 10x faster, agreeing within 0.02 in mean
  P(a > b).
* ``calibration``: 50 repeats with ``n_train=20``, ``n_test=10`` on 16 x 132. Target: under
  2 GiB peak memory (this process and, separately, the largest child process); wall time
  recorded.

Every fit: 4 chains x 1000 warm-up + 1000 draws. Results go to ``benchmarks/results/batch.json``.

Run: ``python benchmarks/bench_batch.py [--rounds 3] [--repeats 50] [--skip-dask]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from _machine import machine  # noqa: E402  (beside this script)

os.environ["PYTHONPATH"] = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])

import bbt_widget as bbt  # noqa: E402

warnings.simplefilter("ignore", bbt.DiagnosticsWarning)


def _peak_mb() -> dict[str, float]:
    return {
        "self": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "largest_child": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    }


def _timed(fn, *args, **kwargs) -> tuple[Any, float]:
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


@contextlib.contextmanager
def _one_core() -> Iterator[None]:
    """Run this process, and every process it starts meanwhile, on one CPU."""
    allowed = os.sched_getaffinity(0)
    bbt.engines.shutdown()  # idle engine workers started before would keep every core
    os.sched_setaffinity(0, {min(allowed)})
    try:
        yield
    finally:
        bbt.engines.shutdown()  # workers started on one core would stay there
        os.sched_setaffinity(0, allowed)


def bench_sweep(skip_dask: bool, rounds: int) -> dict[str, Any]:
    """Serial, local and Dask runs interleaved ``rounds`` times; medians of the ratios.

    Interleaving keeps the three under the same background load (a shared machine), and the
    ratios are taken within each round.
    """
    from contextlib import ExitStack

    data = bbt.datasets.load_pmlb16()
    bbt.fit(bbt.datasets.load_base(), dataset="db", ties="davidson")  # compile / warm both
    bbt.fit(bbt.datasets.load_base(), dataset="db")
    runs: list[dict[str, Any]] = []
    same: list[bool] = []
    with ExitStack() as stack:
        client = None
        if not skip_dask:
            from distributed import Client, LocalCluster

            cluster = stack.enter_context(
                LocalCluster(
                    n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
                )
            )
            client = stack.enter_context(Client(cluster))
            # warm-up: each worker loads bbt_widget and finds the compiled models in its cache
            bbt.sweep(
                bbt.datasets.load_base(),
                dataset="db",
                grid={"ties": ["spread", "davidson", "add", "forget"]},
                executor=client,
                iter_warmup=50,
                iter_sampling=50,
            )
        for _ in range(rounds):
            run: dict[str, Any] = {"load_average": os.getloadavg()[0]}
            with _one_core():
                one_core, run["one_core_s"] = _timed(bbt.sweep, data, dataset="db", n_jobs=1)
            serial, run["serial_s"] = _timed(bbt.sweep, data, dataset="db", n_jobs=1)
            local, run["local_processes_s"] = _timed(bbt.sweep, data, dataset="db")
            run["speedup_local"] = run["serial_s"] / run["local_processes_s"]
            run["speedup_local_vs_one_core"] = run["one_core_s"] / run["local_processes_s"]
            same.append(serial.frame["mean"].equals(local.frame["mean"]))
            same.append(one_core.frame["mean"].equals(local.frame["mean"]))
            if client is not None:
                remote, run["dask_s"] = _timed(bbt.sweep, data, dataset="db", executor=client)
                run["speedup_dask"] = run["serial_s"] / run["dask_s"]
                run["speedup_dask_vs_one_core"] = run["one_core_s"] / run["dask_s"]
                same.append(serial.frame["mean"].equals(remote.frame["mean"]))
            runs.append(run)
    out: dict[str, Any] = {
        "settings": len(serial.settings),
        "failed": serial.n_failed + local.n_failed,
        "same_numbers_every_executor": all(same),
        "median_speedup_local_vs_one_core": statistics.median(
            r["speedup_local_vs_one_core"] for r in runs
        ),
        "median_speedup_local": statistics.median(r["speedup_local"] for r in runs),
    }
    if client is not None:
        out["median_speedup_dask_vs_one_core"] = statistics.median(
            r["speedup_dask_vs_one_core"] for r in runs
        )
        out["median_speedup_dask"] = statistics.median(r["speedup_dask"] for r in runs)
    out["target_speedup_vs_one_core"] = 1.7
    out["runs"] = runs
    return out


def bench_influence() -> dict[str, Any]:
    result = bbt.fit(bbt.datasets.load_base(), dataset="db")
    psis, t_psis = _timed(bbt.influence, result, refit="none")
    exact, t_exact = _timed(bbt.influence, result, refit="all")
    diff = np.abs(psis.table["mean_loo"] - exact.table["mean_loo"])
    return {
        "data_sets": int(psis.pareto_k.size),
        "psis_s": t_psis,
        "exact_refits_s": t_exact,
        "speedup": t_exact / t_psis,
        "max_abs_diff_mean": float(diff.max()),
        "mean_abs_diff_mean": float(diff.mean()),
        "max_pareto_k": float(psis.pareto_k.max()),
        "decisions_changed_psis": int(psis.table["changed"].sum()),
        "decisions_changed_exact": int(exact.table["changed"].sum()),
        "target_speedup": 10.0,
        "target_agreement": 0.02,
    }


def bench_calibration(repeats: int) -> dict[str, Any]:
    """Run in a fresh process (``--only-calibration``) so that its peak memory is its own."""
    calib, t = _timed(bbt.calibration, bbt.datasets.load_pmlb16(), dataset="db", repeats=repeats)
    return {
        "repeats": repeats,
        "wall_s": t,
        "peak_mb": _peak_mb(),
        "target_peak_mb": 2048,
        "within_90": calib.strong["within.90"].to_dict(),
        "table_16": calib.strong.round(3).to_dict(orient="index"),
        "table_17": calib.weak.round(2).to_dict(orient="index"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--skip-dask", action="store_true")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved sweep rounds")
    parser.add_argument("--only-calibration", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--only-sweep", action="store_true", help="measure the sweep, keep the rest of the file"
    )
    args = parser.parse_args()
    if args.only_calibration:
        print(json.dumps(bench_calibration(args.repeats)))
        return
    report = {
        "machine": machine(),
        "settings": "4 chains x 1000 warm-up + 1000 draws per fit, engine "
        + bbt.engines.resolve_engine(),
    }
    out = REPO / "benchmarks" / "results" / "batch.json"
    report["sweep"] = bench_sweep(args.skip_dask, args.rounds)
    print(json.dumps(report["sweep"], indent=1), flush=True)
    if args.only_sweep:
        kept = json.loads(out.read_text())
        kept["sweep"] = report["sweep"]
        kept["sweep"]["machine"] = {**report["machine"], "load_average_at_end": os.getloadavg()}
        out.write_text(json.dumps(kept, indent=1) + "\n")
        print(f"wrote {out}")
        return
    report["influence"] = bench_influence()
    print(json.dumps(report["influence"], indent=1), flush=True)
    child = subprocess.run(
        [sys.executable, __file__, "--only-calibration", "--repeats", str(args.repeats)],
        capture_output=True,
        text=True,
        check=True,
    )
    report["calibration"] = json.loads(child.stdout.strip().splitlines()[-1])
    print(json.dumps(report["calibration"], indent=1), flush=True)
    report["machine"]["load_average_at_end"] = os.getloadavg()
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
