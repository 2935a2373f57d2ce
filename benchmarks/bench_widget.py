"""Widget latency: control change -> new chart data, against baselines from the same run.

For the paper's base results (5 algorithms x 20 data sets) and the full PMLB table
(16 x 132) this measures, in one process:

* ``rope``: Python time from ``w.rope_low = x`` to the new chart data, serialised to JSON as
  the kernel would send it. Baseline: the core's own ``result.summary(rope=...)``.
  Target: <= 50 ms at 16 algorithms.
* ``refit``: from a fit control change (a hyper-prior scale the widget has not fitted) to
  the new chart data, waiting for the background fit. Baseline: ``bbt.fit`` with the same
  settings, called directly just before. Target: refit <= fit + 0.3 s.
* ``cache``: going back to settings fitted before (no fit).

Run: ``python benchmarks/bench_widget.py [--repeat N] [--out benchmarks/results/widget.json]``.
The first fit of a new machine compiles the Stan model; that compile is done (and reported)
before anything is timed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import bbt_widget as bbt  # noqa: E402
from bbt_widget import charts  # noqa: E402
from bbt_widget.widget import BBTWidget  # noqa: E402

ROPE_TARGET_S = 0.050
REFIT_OVERHEAD_TARGET_S = 0.3


def _median(values: list[float]) -> float:
    return float(statistics.median(values))


def _send_cost(w: BBTWidget, names: list[str]) -> None:
    """Serialise the changed traits as ipywidgets would for the comm message."""
    json.dumps(w.get_state(names), allow_nan=False)


def bench_case(name: str, data: Any, repeat: int, refits: int) -> dict[str, Any]:
    kw = {"dataset": "db", "seed": 11}
    started = time.perf_counter()
    w = BBTWidget(data, **kw)
    assert w.wait(900), (w.status_text, w.error)
    first_fit_s = time.perf_counter() - started
    res = w.result
    n_alg = len(res.algorithms)

    # --- ROPE change: core baseline vs widget ------------------------------------------
    lows = [0.40 + 0.001 * (i % 40) for i in range(repeat)]
    core_times, widget_times, python_times = [], [], []
    for low in lows:
        t0 = time.perf_counter()
        res.summary(rope=(low, 0.55))
        core_times.append(time.perf_counter() - t0)
    for low in lows:
        t0 = time.perf_counter()
        w.rope_low = low
        _send_cost(w, ["view_data", "rope_low"])
        widget_times.append(time.perf_counter() - t0)
        python_times.append(w.last_view_seconds)
    w.rope_low = 0.45

    # --- refit: direct fit baseline vs widget refit, same settings, interleaved -----------
    # (the widget's cache is its own, so the direct fit gives it no head start)
    fit_times, refit_times = [], []
    scales = [round(0.5 + 0.05 * (i + 1), 3) for i in range(refits)]
    for scale in scales:
        t0 = time.perf_counter()
        bbt.fit(data, prior_scale=scale, **kw)
        fit_times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        w.prior_scale = scale
        assert w.wait(900), (w.status_text, w.error)
        _send_cost(w, ["view_data", "fit_data", "diagnostics", "status", "status_text"])
        refit_times.append(time.perf_counter() - t0)

    # --- cache hit: back to the first scale -----------------------------------------------
    cache_times = []
    for scale in scales:
        t0 = time.perf_counter()
        w.prior_scale = scale
        _send_cost(w, ["view_data", "fit_data", "diagnostics"])
        cache_times.append(time.perf_counter() - t0)
    w.close()

    fit_s, refit_s = _median(fit_times), _median(refit_times)
    rope_s, core_s = _median(widget_times), _median(core_times)
    return {
        "case": name,
        "algorithms": n_alg,
        "pairs": n_alg * (n_alg - 1) // 2,
        "first_fit_s": round(first_fit_s, 3),  # includes the Stan compile on a new machine
        "engine": res.engine,
        "rope": {
            "widget_median_s": round(rope_s, 5),
            "widget_max_s": round(max(widget_times), 5),
            "python_resummary_median_s": round(_median(python_times), 5),
            "baseline_core_summary_median_s": round(core_s, 5),
            "ratio_to_baseline": round(rope_s / core_s, 2),
            "target_s": ROPE_TARGET_S,
            "meets_target": rope_s <= ROPE_TARGET_S,
            "repeat": repeat,
        },
        "refit": {
            "widget_median_s": round(refit_s, 3),
            "baseline_fit_median_s": round(fit_s, 3),
            "overhead_s": round(refit_s - fit_s, 3),
            "ratio_to_baseline": round(refit_s / fit_s, 3),
            "target": f"refit <= fit + {REFIT_OVERHEAD_TARGET_S} s",
            "meets_target": refit_s <= fit_s + REFIT_OVERHEAD_TARGET_S,
            "repeat": refits,
        },
        "cache_hit": {
            "widget_median_s": round(_median(cache_times), 5),
            "ratio_to_fit": round(_median(cache_times) / fit_s, 4),
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30, help="ROPE changes per case")
    parser.add_argument("--refits", type=int, default=3, help="refits per case")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "widget.json")
    parser.add_argument("--quick", action="store_true", help="base results only")
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    charts.view_spec()  # built once per process: report it, keep it out of the timings
    spec_s = time.perf_counter() - t0

    cases = [("base_5x20", bbt.datasets.load_base())]
    if not args.quick:
        cases.append(("pmlb16_16x132", bbt.datasets.load_pmlb16()))
    results = [bench_case(name, data, args.repeat, args.refits) for name, data in cases]
    report = {
        "benchmark": "bench_widget",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "spec_build_once_s": round(spec_s, 3),
        "note": (
            "rope: control change -> chart data serialised, vs the core's summary() alone; "
            "refit: control change -> background fit -> chart data, vs bbt.fit() alone"
        ),
        "cases": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    for case in results:
        r, f = case["rope"], case["refit"]
        print(
            f"{case['case']}: ROPE {r['widget_median_s'] * 1e3:.1f} ms "
            f"(core summary {r['baseline_core_summary_median_s'] * 1e3:.1f} ms, "
            f"x{r['ratio_to_baseline']}, target {'met' if r['meets_target'] else 'MISSED'}); "
            f"refit {f['widget_median_s']:.2f} s vs fit {f['baseline_fit_median_s']:.2f} s "
            f"(+{f['overhead_s']:.2f} s, target {'met' if f['meets_target'] else 'MISSED'}); "
            f"cache hit {case['cache_hit']['widget_median_s'] * 1e3:.1f} ms"
        )
    print(f"written {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
