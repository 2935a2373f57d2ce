"""What the conditional estimates cost and buy: a fit's summary with them against the same
fit's summary from the indicators alone, as ratios measured in the same run (these machines
are noisy).

Per case (the shipped 16 x 132 results, and simulated results of 30, 50 and 100 algorithms), one
``draws="fixed"`` fit on the numpy engine, then:

- the wall and CPU seconds of the first ``summary()`` and of ``summary()`` at five more ROPEs (a
  widget's slider), with the conditional estimates and with the indicators
  (``conditional_draws`` set to ``None`` on a second fit of the same seed, the same draws);
- the pairs the conditional estimates looked at (coarsely, and again finely), and the claims
  each way leaves unsettled;
- for the pairs near a threshold, the indicators' MCSE over the conditional estimates' MCSE.

Run: ``python benchmarks/bench_conditional.py``; results go to
``benchmarks/results/conditional.json``.
"""

from __future__ import annotations

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

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from _machine import machine  # noqa: E402  (beside this script)
from simulated import simulated_results  # noqa: E402  (the browser tests' simulation)

import bbt_widget as bbt  # noqa: E402

ROPES = [(0.45, 0.55), (0.44, 0.56), (0.42, 0.58), (0.40, 0.60), (0.38, 0.62), (0.35, 0.65)]


def _timed(res: bbt.BBTResult) -> tuple[list[float], list[float], pd.DataFrame, int]:
    seconds, cpu = [], []
    for rope in ROPES:
        start, start_cpu = time.perf_counter(), time.process_time()
        res.summary(rope=rope)
        seconds.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return seconds, cpu, res.precision(), len(res.unsettled())


def _case(data: pd.DataFrame, layout: dict[str, str]) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the same seed twice: the same draws, one result without its conditional estimates
        res = bbt.fit(data, **layout, engine="numpy", seed=1, draws="fixed")
        plain = bbt.fit(data, **layout, engine="numpy", seed=1, draws="fixed")
    plain.conditional_draws = None
    base, base_cpu, base_errors, base_open = _timed(plain)
    ours, our_cpu, our_errors, our_open = _timed(res)
    looked = res.conditional_draws.looked()  # type: ignore[union-attr]
    refined = our_errors["mcse_above_50"] < base_errors["mcse_above_50"]
    gain = (base_errors["mcse_above_50"] / our_errors["mcse_above_50"])[refined]
    return {
        "algorithms": len(res.algorithms),
        "first_summary_ratio": ours[0] / base[0],
        "rope_change_ratio_median": statistics.median(o / b for o, b in zip(ours[1:], base[1:])),
        "first_summary_seconds": {"conditional": ours[0], "indicators": base[0]},
        "first_summary_cpu_seconds": {"conditional": our_cpu[0], "indicators": base_cpu[0]},
        "rope_change_seconds": {"conditional": ours[1:], "indicators": base[1:]},
        "rope_change_cpu_seconds": {"conditional": our_cpu[1:], "indicators": base_cpu[1:]},
        "pairs": len(res.summary()),
        "pairs_looked_at_coarsely": len(looked["coarse"]),
        "pairs_looked_at_finely": len(looked["fine"]),
        "pairs_looked_at_over_every_draw": len(looked["all"]),
        "unsettled_claims": {"conditional": our_open, "indicators": base_open},
        "mcse_above_50_indicator_over_conditional_median": float(np.median(gain))
        if len(gain)
        else None,
    }


def main() -> None:
    cases = {
        "pmlb16_4fold (16 x 132)": (bbt.datasets.load_pmlb16(), {"dataset": "db"}),
    }
    layout = {"dataset": "dataset", "algorithm": "algorithm", "fold": "fold", "score": "score"}
    for n in (30, 50):
        cases[f"simulated ({n} x 40 x 3)"] = (simulated_results(n, 40, 3), layout)
    # beyond the widget's sizes: 100 algorithms, one score per data set
    hundred = simulated_results(100, 30, 1).drop(columns="fold")
    cases["simulated (100 x 30)"] = (hundred, {k: v for k, v in layout.items() if k != "fold"})
    load = machine()
    results = {name: _case(data, kw) for name, (data, kw) in cases.items()}
    record = {"machine": load, "ropes": ROPES, "cases": results}
    target = REPO / "benchmarks" / "results" / "conditional.json"
    target.write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
