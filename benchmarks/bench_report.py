"""``bbt-widget report`` end to end, as users run it (a new process) and warm in-process,
as ratios to a bare ``fit`` in the same run.

What a user of the command waits for once the model is compiled: Python's start and imports
-> read the CSV -> check every option against the data -> fit -> the other methods
(Plackett-Luce by default) -> write the report (charts to SVG, tables, methods text) -> print
the overview. ``command_cpu_per_core_s`` is its CPU seconds over the machine's cores: the
least wall time it could take on an idle machine. The baseline, measured in the
benchmark's process right before each run, is ``bbt_widget.fit`` alone on the same data and
settings (warm), so the ratios are the cost of the command around one fit and survive a
noisy machine.

Per run: the bare fit (baseline); the command as a subprocess (``python -m bbt_widget report
... -q``, wall time including the interpreter's start: ``command_s``, and the CPU seconds of
that process and its children: ``command_cpu_s``); the command again
in-process after the warm fit (``command_in_process_s``, what this benchmark measured
before); and the report writer alone. ``--baseline-tree PATH`` also runs the subprocess on
another checkout (e.g. the code before a change, from ``git archive``), interleaved.

Case: the shipped ``pmlb16_4fold.csv`` (16 algorithms x 132 data sets, fold rows), HTML
report, default settings. Target on a 2-core machine: the subprocess <= 4 s wall (median).

Run: ``python benchmarks/bench_report.py [--repeat 3] [--format html] [--baseline-tree PATH]
[--note TEXT]``. Results go to ``benchmarks/results/report.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from _machine import machine  # noqa: E402  (beside this script)

import bbt_widget as bbt  # noqa: E402
from bbt_widget import cli  # noqa: E402
from bbt_widget.outputs.report._render import write_report  # noqa: E402

TARGET_S = 4.0
#: The cores the command's processes share: its CPU seconds over these are the least wall
#: time it could take on an idle machine (``command_cpu_per_core_s``), which a loaded one
#: does not change much.
CORES = os.cpu_count() or 1
DATA = REPO / "bbt_widget" / "datasets" / "pmlb16_4fold.csv"


def _children_cpu() -> float:
    """CPU seconds (user + system) of this process's ended children and theirs."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def command_subprocess(fmt: str, folder: Path, tree: Path) -> tuple[float, float]:
    """Wall seconds of ``python -m bbt_widget report`` in a new process, code from ``tree``,
    and the CPU seconds it took with its Stan workers, chains and chart renderer: on a shared
    machine the CPU seconds move less with the load than the wall time."""
    out = folder / f"sub.{fmt}"
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cpu = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "bbt_widget", "report", str(DATA), "-o", str(out), "-q"],
        env=env,
        cwd=folder,
        capture_output=True,
        text=True,
    )
    took = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"bbt-widget report exited with {proc.returncode}: {proc.stderr}")
    return took, _children_cpu() - cpu


def one_run(fmt: str, folder: Path, baseline: Path | None) -> dict[str, float]:
    """A bare fit, then the command as a subprocess (and on the baseline tree), then the
    command in-process, then the report writer alone, on the same data."""
    df = bbt.datasets.load_pmlb16()
    start = time.perf_counter()
    res = bbt.fit(df, dataset="db")
    fit_s = time.perf_counter() - start
    row = {"fit_s": fit_s, "load_average": os.getloadavg()[0]}

    row["command_s"], row["command_cpu_s"] = command_subprocess(fmt, folder, REPO)
    row["ratio_to_fit"] = row["command_s"] / fit_s
    row["command_cpu_per_core_s"] = row["command_cpu_s"] / CORES
    if baseline is not None:
        took, cpu = command_subprocess(fmt, folder, baseline)
        row["baseline_command_s"], row["baseline_command_cpu_s"] = took, cpu
        row["baseline_ratio_to_fit"] = row["baseline_command_s"] / fit_s

    out = folder / f"report.{fmt}"
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = cli.main(["report", str(DATA), "-o", str(out), "-q"])
    row["command_in_process_s"] = time.perf_counter() - start
    if code != cli.EXIT_OK:
        raise RuntimeError(f"bbt-widget report exited with {code}")

    start = time.perf_counter()
    write_report(res, folder / f"again.{fmt}")
    row["write_report_s"] = time.perf_counter() - start
    print(json.dumps({k: round(v, 2) for k, v in row.items()}), flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--format", default="html", choices=["html", "md", "tex"])
    parser.add_argument("--baseline-tree", type=Path, default=None)
    parser.add_argument("--note", default="", help="recorded with the results (e.g. the load)")
    args = parser.parse_args()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        one_run(args.format, Path(tmp), None)  # warm-up: compile if needed, first imports
        runs = [one_run(args.format, Path(tmp), args.baseline_tree) for _ in range(args.repeat)]
    median = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    if args.baseline_tree is not None:
        for r in runs:
            r["command_to_baseline"] = r["command_s"] / r["baseline_command_s"]
            r["cpu_to_baseline"] = r["command_cpu_s"] / r["baseline_command_cpu_s"]
        for key in ("command_to_baseline", "cpu_to_baseline"):
            median[key] = statistics.median(r[key] for r in runs)
    result = {
        "machine": machine(load),
        "note": args.note,
        "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "case": f"pmlb16_4fold.csv (16 x 132), {args.format} report, default settings",
        "baseline_tree": str(args.baseline_tree) if args.baseline_tree else None,
        "target_command_s": TARGET_S,
        "median": median,
        "meets_target": median["command_s"] <= TARGET_S,
        "cpu_per_core_within_target": median["command_cpu_per_core_s"] <= TARGET_S,
        "runs": runs,
    }
    out = REPO / "benchmarks" / "results" / "report.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(median, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
