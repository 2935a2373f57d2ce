"""Time of the Mallows ranking model (numpy Metropolis-Hastings) against the Plackett-Luce
fit (Stan) of the same results, measured in the same run.

Case: :func:`bbt_widget.ranking_model` with ``model="mallows"`` on ``pmlb16_4fold.csv``
(16 algorithms x 132 data sets, ties split) at its defaults (4 chains, thin 20, 1000 x 20
burn-in and 1000 x 20 sampling iterations, leap 3), against ``model="plackett-luce"``
(4 chains x 1000 + 1000, Stan) on the same results right before it. Warm: the first call of
each is discarded (Stan compile, imports). Target: <= 60 s for the Mallows fit.

Results go to ``benchmarks/results/mallows.json``, with the Mallows fit's diagnostics and
acceptance rates. Run: ``python benchmarks/bench_mallows.py [--repeat 3] [--engine pystan]``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import bbt_widget as bbt  # noqa: E402
from bbt_widget import engines  # noqa: E402

TARGET_S = 60.0


def _timed(fn, repeat: int) -> tuple[list[float], Any]:
    fn()  # warm: compile, worker start, imports
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return times, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--engine", default="auto")
    args = parser.parse_args()
    engine = engines.resolve_engine(args.engine)
    warnings.simplefilter("ignore")  # diagnostics are reported in the results instead
    pmlb = bbt.datasets.load_pmlb16()
    pl_times, _ = _timed(lambda: bbt.ranking_model(pmlb, dataset="db", engine=engine), args.repeat)
    seeds = iter(range(1, 1 + args.repeat + 1))
    mallows_times, res = _timed(
        lambda: bbt.ranking_model(pmlb, dataset="db", model="mallows", seed=next(seeds)),
        args.repeat,
    )
    pl_s, mallows_s = statistics.median(pl_times), statistics.median(mallows_times)
    diag = res.diagnostics
    out = {
        "engine": engine,
        "machine": f"{platform.machine()}, {platform.python_version()}",
        "repeat": args.repeat,
        "cases": {
            "mallows_pmlb16": {
                "seconds": round(mallows_s, 3),
                "all_seconds": [round(t, 3) for t in mallows_times],
                "sampler_seconds": round(res.draws.timings["sample"], 3),
                "baseline_plackett_luce_seconds": round(pl_s, 3),
                "ratio": round(mallows_s / pl_s, 2),
                "target_s": TARGET_S,
                "meets_target": mallows_s <= TARGET_S,
                "note": (
                    "16 algorithms x 132 data sets, ties split, defaults (4 chains, thin 20, "
                    "1000 burn-in and 1000 kept draws per chain, leap 3); baseline: the "
                    "Plackett-Luce Stan fit (4 x 1000 + 1000) of the same results"
                ),
                "diagnostics": {
                    "ok": diag.ok,
                    "max_rhat": round(diag.max_rhat, 4),
                    "min_ess_bulk": round(diag.min_ess_bulk),
                    "min_ess_tail": round(diag.min_ess_tail),
                },
                "acceptance": {
                    "rho": [round(a, 3) for a in res.draws.info["accept_rho"]],
                    "beta": [round(a, 3) for a in res.draws.info["accept_beta"]],
                },
                "consensus_probability": round(res.consensus.probability, 4),
                "dispersion": [
                    round(v, 4)
                    for v in (res.dispersion.mean, res.dispersion.low, res.dispersion.high)
                ],
            }
        },
    }
    print(json.dumps(out["cases"], indent=2), flush=True)
    path = REPO / "benchmarks" / "results" / "mallows.json"
    path.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
