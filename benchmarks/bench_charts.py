"""CPU time of building the HTML report's charts with Altair and turning them into Vega-Lite,
against the same work by another checkout of the code (``--baseline-tree``).

Why: in ``bbt-widget report`` the main process builds the report's charts after the fit,
and that is on the command's critical path (its target is 4 s wall on 2 cores). The work
timed is what the report does with them: ``report_render._charts`` (the frames and the 7
charts every report has: ranking, cd_diagram, decisions, intervals, rope_overlap, ppc,
win_matrix), ``to_dict`` of each (``export._spec``, unvalidated, as the report renders
them), and the Plackett-Luce section's charts (``bbt_vs_pl``, ``top_k``) built and turned
into Vega-Lite. Rendering (vl-convert, another process) is not timed.

Each run is a new Python process per checkout, the two interleaved so that both see the
same load: it fits the shipped ``pmlb16_4fold.csv`` (16 algorithms x 132 data sets,
default settings, fixed seed) and the Plackett-Luce model, imports Altair, then times the
charts once (``first_*``: what a fresh ``bbt-widget report`` process pays) and again
``--repeat`` times (median: ``warm_*``). Times are CPU seconds of the process
(``time.process_time``), which a shared machine moves less than wall time; the ratios
(this checkout over the baseline) are medians over runs of each run's ratio.
``altair_import`` is a plain ``import altair`` (the command imports it while it fits, in
a thread, without the modules it does not need), for scale only.

Run: ``python benchmarks/bench_charts.py [--runs 3] [--repeat 7] [--baseline-tree PATH]
[--note TEXT]``, where PATH holds the code to compare with, e.g. ``git archive main | tar
-x -C /tmp/base``. Results go to ``benchmarks/results/charts.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

from _machine import machine  # noqa: E402  (beside this script)

#: The timings each run reports, in CPU seconds.
PARTS = ("build", "to_dict", "section", "total")


def _time_once(result, pl) -> dict[str, float]:
    """CPU seconds of the report's charts (built, then to_dict) and of the Plackett-Luce
    section's charts, built as ``write_report`` builds them."""
    from bbt_widget.core.options import DEFAULT_HDI, DEFAULT_ROPE
    from bbt_widget.outputs import export
    from bbt_widget.outputs.report import _render as rr
    from bbt_widget.outputs.report import _sections as rs

    _, shown, rule, rope, summary, ranking = rr._chart_options(
        result, "report.html", DEFAULT_ROPE, DEFAULT_HDI, "auto", None, None
    )
    start = time.process_time()
    built, _, _ = rr._charts(result, rope, DEFAULT_HDI, None, rule, ranking, summary, shown)
    built_at = time.process_time()
    specs = [export._spec(chart, False) for chart in built.values()]
    specs_at = time.process_time()
    section = rs._ranking_charts(pl, result)
    specs += [export._spec(chart, False) for chart, _ in section.values()]
    end = time.process_time()
    assert len(specs) == 9, len(specs)
    return {
        "build": built_at - start,
        "to_dict": specs_at - built_at,
        "section": end - specs_at,
        "total": end - start,
    }


def worker(repeat: int) -> None:
    """One run, in this process (code from ``PYTHONPATH``): fit, then time the charts."""
    import bbt_widget as bbt

    data = bbt.datasets.load_pmlb16()
    result = bbt.fit(data, dataset="db", seed=1)
    pl = bbt.ranking_model(data, dataset="db", seed=1)
    start = time.process_time()
    import altair  # noqa: F401  (imported by the report before its charts; timed apart)

    row = {"altair_import": time.process_time() - start}
    first = _time_once(result, pl)
    warm = [_time_once(result, pl) for _ in range(repeat)]
    row.update({f"first_{k}": v for k, v in first.items()})
    row.update({f"warm_{k}": statistics.median(w[k] for w in warm) for k in PARTS})
    print(json.dumps(row))


def run(tree: Path, repeat: int) -> dict[str, float]:
    """A worker on the code of ``tree`` in a new process; its timings."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--worker", "--repeat", str(repeat)],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"worker on {tree} exited with {proc.returncode}: {proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="new processes per checkout")
    parser.add_argument("--repeat", type=int, default=7, help="warm repeats in each process")
    parser.add_argument("--baseline-tree", type=Path, default=None)
    parser.add_argument("--note", default="", help="recorded with the results (e.g. the load)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.repeat)
        return
    load = os.getloadavg()
    runs = []
    for _ in range(args.runs):
        row = {f"new_{k}": v for k, v in run(REPO, args.repeat).items()}
        if args.baseline_tree is not None:
            base = run(args.baseline_tree.resolve(), args.repeat)
            row.update({f"baseline_{k}": v for k, v in base.items()})
            for when in ("first", "warm"):
                for part in PARTS:
                    key = f"{when}_{part}"
                    row[f"{key}_to_baseline"] = row[f"new_{key}"] / base[key]
        row["load_average"] = os.getloadavg()[0]
        print(json.dumps({k: round(v, 3) for k, v in row.items()}), flush=True)
        runs.append(row)
    median = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    result = {
        "machine": machine(load),
        "note": args.note,
        "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "case": (
            "pmlb16_4fold.csv (16 x 132), default settings, seed 1: the 7 charts of every "
            "report and the 2 Plackett-Luce charts, built + to_dict (CPU s)"
        ),
        "baseline_tree": str(args.baseline_tree) if args.baseline_tree else None,
        "runs_per_checkout": args.runs,
        "warm_repeats": args.repeat,
        "median": median,
        "runs": runs,
    }
    out = REPO / "benchmarks" / "results" / "charts.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(median, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
