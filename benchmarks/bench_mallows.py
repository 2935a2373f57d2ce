"""Time of the Mallows ranking model (numpy Metropolis-Hastings) against the Plackett-Luce
fit (Stan) of the same results, measured in the same run.

Case: :func:`bbt_widget.ranking_model` with ``model="mallows"`` on ``pmlb16_4fold.csv``
(16 algorithms x 132 data sets, ties split) at its defaults (4 chains, thin 20, 1000 x 20
burn-in and 1000 x 20 sampling iterations, leap 3), against ``model="plackett-luce"``
(4 chains x 1000 + 1000, Stan) on the same results right before it. Warm: the first call of
each is discarded (Stan compile, imports). Target: <= 60 s for the Mallows fit.

Second case, ``mallows_pmlb16_missing``: the same per-data-set means with 10% of them
removed at random (seeded), so the sampler also draws the latent places of the missing
results (data augmentation); the baseline is the Plackett-Luce fit of those same means.

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

import numpy as np  # noqa: E402

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


def _case(data, layout: dict[str, Any], engine: str, repeat: int, note: str) -> dict[str, Any]:
    """Plackett-Luce, then Mallows (seeds 1, 2, ...) on ``data``: medians and the ratio."""
    pl_times, _ = _timed(lambda: bbt.ranking_model(data, **layout), repeat)
    seeds = iter(range(1, repeat + 2))
    mallows_times, res = _timed(
        lambda: bbt.ranking_model(data, **layout, model="mallows", seed=next(seeds)), repeat
    )
    pl_s, mallows_s = statistics.median(pl_times), statistics.median(mallows_times)
    diag = res.diagnostics
    case = {
        "seconds": round(mallows_s, 3),
        "all_seconds": [round(t, 3) for t in mallows_times],
        "sampler_seconds": round(res.draws.timings["sample"], 3),
        "baseline_plackett_luce_seconds": round(pl_s, 3),
        "ratio": round(mallows_s / pl_s, 2),
        "target_s": TARGET_S,
        "meets_target": mallows_s <= TARGET_S,
        "note": note,
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
            round(v, 4) for v in (res.dispersion.mean, res.dispersion.low, res.dispersion.high)
        ],
    }
    print(json.dumps(case), flush=True)
    return case


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--engine", default="auto")
    args = parser.parse_args()
    engine = engines.resolve_engine(args.engine)
    warnings.simplefilter("ignore")  # diagnostics are reported in the results instead
    pmlb = bbt.datasets.load_pmlb16()
    means = pmlb.groupby("db").mean()
    holes = np.random.default_rng(0).random(means.shape) < 0.1
    sparse = means.mask(holes)
    note = (
        "16 algorithms x 132 data sets, ties split, defaults (4 chains, thin 20, 1000 burn-in "
        "and 1000 kept draws per chain, leap 3); baseline: the Plackett-Luce Stan fit "
        "(4 x 1000 + 1000) of the same results"
    )
    out = {
        "engine": engine,
        "machine": f"{platform.machine()}, {platform.python_version()}",
        "repeat": args.repeat,
        "cases": {
            "mallows_pmlb16": _case(pmlb, {"dataset": "db"}, engine, args.repeat, note),
            "mallows_pmlb16_missing": _case(
                sparse,
                {},
                engine,
                args.repeat,
                f"the per-data-set means with {int(holes.sum())} of {holes.size} removed at "
                "random (latent ranks); otherwise as mallows_pmlb16",
            ),
        },
    }
    path = REPO / "benchmarks" / "results" / "mallows.json"
    path.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
