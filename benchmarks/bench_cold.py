"""Cold start: the first PyStan compile, by compiler option, and a fresh cache to a first report.

For each option, into an empty cache (a temporary ``BBT_WIDGET_CACHE``):

* ``compile_s``: compiling the BT model (``engines.compile_model``), the wait of a newcomer,
  and ``compile_cpu_s``, the compiler's CPU time (less sensitive to other jobs on the machine);
* sampling time (the chains, ``Draws.timings["sample_chains"]``), median over ``--repeat``
  fits of two cases, 5 x 20 (5 algorithms, 20 games a pair) and 16 x 132, interleaved across
  the options (round robin) so that a change of the machine's load hits them alike; each
  option's sampling is given as a ratio to httpstan's default flags (the criterion: at most
  1.10, i.e. sampling no more than 10% slower).

Options: httpstan's default flags (``-O3``, with Python's ``-g``), ``-O3 -g0``, ``-O2 -g0``,
``-O1 -g0``; then both programs compiled in parallel versus one after the other with the
package's flags; then ``cold_report_s``: a fresh cache to the first result of
``bbt-widget report`` on 5 x 20 (``bbt.datasets.load_base()``, dataset column "db"), the
target being at most 40 s on an idle machine. The load average is recorded before and after
each measurement: on a busy machine compile times grow with the load, ratios less so.

Run: ``python benchmarks/bench_cold.py [--repeat N] [--skip-options | --options-only] [--out
benchmarks/results/cold.json]`` (about 10-20 minutes: one cold compile per option).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from _machine import machine  # noqa: E402  (beside this script)

sys.path.insert(0, str(Path(__file__).parent))

from bench_engines import _simulated  # noqa: E402

from bbt_widget import engines  # noqa: E402
from bbt_widget.engines import _toolchain  # noqa: E402

_STD = ("-std=c++14", "-Wno-sign-compare")
OPTIONS: dict[str, tuple[str, ...]] = {
    "httpstan default (-O3, -g)": ("-O3", *_STD),
    "-O3 -g0": ("-O3", "-g0", *_STD),
    "-O2 -g0": ("-O2", "-g0", *_STD),
    "-O1 -g0": ("-O1", "-g0", *_STD),
}
BASELINE = "httpstan default (-O3, -g)"


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _use(cache: Path, flags: tuple[str, ...]) -> None:
    os.environ["BBT_WIDGET_CACHE"] = str(cache)
    engines.get("pystan").COMPILE_ARGS = flags


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _compile(model: str) -> float:
    start = time.perf_counter()
    engines.compile_model(model, "pystan")
    return time.perf_counter() - start


def _compile_with_cpu(model: str) -> tuple[float, float]:
    """Wall and CPU seconds of a compile (the compiler's CPU time, which other jobs on a busy
    machine change far less than the wall time: the fairer comparison of options there)."""
    cpu = _children_cpu()
    wall = _compile(model)
    return wall, _children_cpu() - cpu


def measure_options(repeat: int, root: Path) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for name, flags in OPTIONS.items():
        cache = root / f"opt{len(results)}"
        _use(cache, flags)
        before = _load()
        seconds, cpu = _compile_with_cpu("bbt")
        results[name] = {
            "flags": list(flags),
            "compile_s": seconds,
            "compile_cpu_s": cpu,
            "load_before": before,
        }
        results[name]["load_after"] = _load()
        print(f"{name}: compile {seconds:.1f} s (load {before})", file=sys.stderr, flush=True)
    cases = {"5x20": _simulated(5, 20, seed=3), "16x132": _simulated(16, 132, seed=1)}
    chains: dict[tuple[str, str], list[float]] = {}
    for rep in range(repeat):  # round robin, so that load drifts hit every option alike
        for name, flags in OPTIONS.items():
            _use(root / f"opt{list(OPTIONS).index(name)}", flags)
            for case, data in cases.items():
                d = engines.sample("bbt", data, engine="pystan", seed=rep + 1)
                chains.setdefault((name, case), []).append(d.timings["sample_chains"])
        engines.shutdown()
    for name in OPTIONS:
        for case in cases:
            med = statistics.median(chains[name, case])
            base = statistics.median(chains[BASELINE, case])
            results[name][f"sample_chains_s_{case}"] = med
            results[name][f"sample_ratio_{case}"] = med / base
        for key in ("compile_s", "compile_cpu_s"):
            results[name][key.replace("_s", "_ratio")] = results[name][key] / results[BASELINE][key]
    return results


def measure_parallel(root: Path) -> dict[str, Any]:
    """Both programs one after the other, then in parallel, each into an empty cache."""
    flags = engines.get("pystan").COMPILE_ARGS
    _use(root / "sequential", flags)
    before = _load()
    start = time.perf_counter()
    for model in ("bbt", "davidson"):
        _compile(model)
    sequential = time.perf_counter() - start
    _use(root / "parallel", flags)
    middle = _load()
    start = time.perf_counter()
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(_compile, ("bbt", "davidson")))
    parallel = time.perf_counter() - start
    return {
        "flags": list(flags),
        "sequential_s": sequential,
        "parallel_s": parallel,
        "ratio": parallel / sequential,
        "load_before": [before, middle],
        "load_after": _load(),
    }


def measure_cold_report(root: Path) -> dict[str, Any]:
    """``bbt-widget report`` on 5 x 20 with an empty cache, in a fresh process."""
    import bbt_widget as bbt

    work = root / "report"
    work.mkdir()
    csv = work / "base.csv"
    bbt.datasets.load_base().to_csv(csv, index=False)
    env = {**os.environ, "BBT_WIDGET_CACHE": str(work / "cache"), "PYTHONPATH": str(REPO)}
    before = _load()
    start = time.perf_counter()
    command = [sys.executable, "-m", "bbt_widget", "report", str(csv), "--dataset", "db"]
    proc = subprocess.run(
        [*command, "-o", str(work / "report.html"), "--seed", "1", "-q"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"bbt-widget report failed:\n{proc.stderr}")
    return {
        "seconds": seconds,
        "target_s": 40.0,
        "flags": list(engines.get("pystan").COMPILE_ARGS),
        "load_before": before,
        "load_after": _load(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-options", action="store_true", help="keep those in --out")
    parser.add_argument("--options-only", action="store_true")
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "cold.json"))
    args = parser.parse_args()
    package_flags = engines.get("pystan").COMPILE_ARGS
    out: dict[str, Any] = {
        "machine": {
            **machine(_load()),
            "toolchain": _toolchain.identity(),
            "note": "2 cores shared with other jobs during this run: absolute times grow "
            "with the load; compare the ratios, measured in the same run",
        },
        "engine": engines.get("pystan").version(),
        "package_flags": list(package_flags),
    }
    root = Path(tempfile.mkdtemp(prefix="bbt-widget-bench-cold-"))
    try:
        if args.skip_options:  # keep the options measured by an earlier run
            with contextlib.suppress(OSError, ValueError, KeyError):
                out["options"] = json.loads(Path(args.out).read_text())["options"]
        else:
            out["options"] = measure_options(args.repeat, root)
            engines.get("pystan").COMPILE_ARGS = package_flags
            Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
        if not args.options_only:
            out["parallel"] = measure_parallel(root)
            print("parallel:", out["parallel"], file=sys.stderr, flush=True)
            out["cold_report"] = measure_cold_report(root)
            print("cold report:", out["cold_report"], file=sys.stderr, flush=True)
    finally:
        engines.shutdown()
        shutil.rmtree(root, ignore_errors=True)
    out["machine"]["load_average_at_end"] = _load()
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
