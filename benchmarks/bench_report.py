"""Warm ``bbt-widget report`` end to end, as a ratio to a bare ``fit`` in the same run.

What a user of the command waits for once the model is compiled and Python has imported:
read the CSV -> check every option against the data -> fit -> write the report (charts to
SVG, tables, methods text) -> print the overview. The baseline, measured in the same process
right before each run, is ``bbt_widget.fit`` alone on the same data and settings, so
``ratio_to_fit`` is the cost of the command around the fit and survives a noisy machine.

Case: the shipped ``pmlb16_4fold.csv`` (16 algorithms x 132 data sets, fold rows), HTML
report, default settings. Target on this machine: <= 5 s end to end, import excluded.

Run: ``python benchmarks/bench_report.py [--repeat 3] [--format html]``. Results go to
``benchmarks/results/report.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import bbt_widget as bbt  # noqa: E402
from bbt_widget import cli  # noqa: E402
from bbt_widget.outputs.html_report import write_report  # noqa: E402

TARGET_S = 5.0
DATA = REPO / "bbt_widget" / "datasets" / "pmlb16_4fold.csv"


def one_run(fmt: str, folder: Path) -> dict[str, float]:
    """A bare fit, then the whole command, then the report writer alone, on the same data."""
    df = bbt.datasets.load_pmlb16()
    start = time.perf_counter()
    res = bbt.fit(df, dataset="db")
    fit_s = time.perf_counter() - start

    out = folder / f"report.{fmt}"
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = cli.main(["report", str(DATA), "-o", str(out), "-q"])
    command_s = time.perf_counter() - start
    if code != cli.EXIT_OK:
        raise RuntimeError(f"bbt-widget report exited with {code}")

    start = time.perf_counter()
    write_report(res, folder / f"again.{fmt}")
    write_s = time.perf_counter() - start
    return {
        "fit_s": fit_s,
        "command_s": command_s,
        "write_report_s": write_s,
        "ratio_to_fit": command_s / fit_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--format", default="html", choices=["html", "md", "tex"])
    args = parser.parse_args()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        one_run(args.format, Path(tmp))  # warm-up: compile if needed, first imports
        runs = [one_run(args.format, Path(tmp)) for _ in range(args.repeat)]
    median = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    result = {
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_average_at_start": load,
        },
        "case": f"pmlb16_4fold.csv (16 x 132), {args.format} report, default settings",
        "target_command_s": TARGET_S,
        "median": median,
        "meets_target": median["command_s"] <= TARGET_S,
        "runs": runs,
    }
    out = REPO / "benchmarks" / "results" / "report.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(median, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
