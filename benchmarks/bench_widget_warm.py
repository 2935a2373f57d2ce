"""Time to the widget's first screen with and without Altair imported ahead of time.

The first screen is the headline, the ranking, the critical-difference diagram and the
decision matrices: their chart (``w.summary_spec``) is built with Altair once the first fit
is done. A new widget starts ``import altair`` in a daemon thread as it asks for the fit
(``bbt_widget/widget/warm.py``); "before" is the same code with that call made a no-op.

Each run is a fresh Python process (a cold ``import altair``, as in a new kernel; the view
spec cache is built once beforehand, as on any machine after its first widget) that times
``BBTWidget(...)`` -> ``w.summary_spec`` set, the two variants interleaved. Cases: the
shipped 5 x 20 (``load_base``) and 16 x 132 (``load_pmlb16``) results, numpy engine, no Stan
check. The ratio is the after/before ratio of the medians (below 1: faster).

The import and the numpy engine's fit share the interpreter (the GIL), so the gain is at
most the part of the fit spent outside it; with a Stan engine the chains run in other
processes. Committed run (2 shared cores, load average 5-6, so the spread is wide): 0.87x
on 5 x 20, 0.93x on 16 x 132 (medians of 5).

Run: ``python benchmarks/bench_widget_warm.py [--repeat 7] [--note TEXT]``.
Results go to ``benchmarks/results/widget_warm.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from _machine import machine  # noqa: E402  (beside this script)

CASES = {
    "5x20": "bbt.datasets.load_base(), dataset='db'",
    "16x132": "bbt.datasets.load_pmlb16(), dataset='db', paired=False",
}

#: One run in a fresh process: prints the seconds from the constructor to the summary chart.
_RUN = """\
import time
import bbt_widget as bbt
from bbt_widget.widget import fits
if {before!r}:
    fits.warm_altair = lambda: None
t0 = time.perf_counter()
w = bbt.BBTWidget({args}, engine="numpy", seed=1, stan_check=False)
while not w.summary_spec:  # outside a kernel the runners' events come on draining
    w._runner.drain()
    w._summary_runner.drain()
    time.sleep(0.005)
print(time.perf_counter() - t0)
w.close()
"""


def _run(case: str, before: bool, env: dict[str, str]) -> float:
    code = _RUN.format(before=before, args=CASES[case])
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"the {case} run failed:\n{run.stderr[-2000:]}")
    return float(run.stdout.split()[-1])


def bench(repeat: int) -> dict[str, Any]:
    """Medians of ``repeat`` interleaved runs per case and variant, and their ratio."""
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "BBT_WIDGET_CACHE": cache, "PYTHONPATH": str(REPO)}
        for case in CASES:
            _run(case, True, env)  # builds the spec cache, warms the file cache
            times: dict[str, list[float]] = {"before": [], "after": []}
            for _ in range(repeat):
                times["before"].append(_run(case, True, env))
                times["after"].append(_run(case, False, env))
            before, after = (statistics.median(times[k]) for k in ("before", "after"))
            results[case] = {
                "first_screen_before_median_s": round(before, 3),
                "first_screen_after_median_s": round(after, 3),
                "ratio_after_to_before": round(after / before, 3),
                "before_s": [round(v, 3) for v in times["before"]],
                "after_s": [round(v, 3) for v in times["after"]],
                "repeat": repeat,
            }
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--note", default="")
    args = parser.parse_args()
    load = os.getloadavg()
    results = {
        "machine": {**machine(load), "note": args.note},
        "measure": "BBTWidget(...) -> w.summary_spec set (first screen's charts), fresh process",
        "cases": bench(args.repeat),
    }
    results["machine"]["load_average_at_end"] = os.getloadavg()
    out = REPO / "benchmarks" / "results" / "widget_warm.json"
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(results["cases"], indent=2))


if __name__ == "__main__":
    main()
