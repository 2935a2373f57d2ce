"""Reading one chain's Stan CSV file: the CmdStan engine's reader against ``stanio.read_csv``.

The CmdStan engine reads each chain's CSV file as the chain ends (``_cmdstan._read_csv``,
pandas' C parser); the last chain's file is read while the caller waits. ``stanio`` (a
dependency of cmdstanpy, so installed with the engine) reads the same files with
``numpy.loadtxt``. Both are timed here, interleaved, on files shaped as CmdStan writes them
for the BT model (the sampler's seven columns, sigma, beta_rot, beta, win1_rep and log_lik;
comment lines before the header, after it and at the end), 1000 draws each:

* ``base``: 5 algorithms, 10 pairs (the paper's base results);
* ``pmlb16``: 16 algorithms, 120 pairs (the PMLB table).

No CmdStan needed: the files are written here. ``ratio`` is stanio's median time over the
engine reader's (above 1: stanio is slower). Both must give the same numbers.

Run: ``python benchmarks/bench_csv.py [--repeat 15] [--out benchmarks/results/csv.json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import stanio  # noqa: E402

from bbt_widget.engines._cmdstan import _read_csv  # noqa: E402

SAMPLER = ["lp__", "accept_stat__", "stepsize__", "treedepth__", "n_leapfrog__", "divergent__"]
CASES = {"base": (5, 10), "pmlb16": (16, 120)}


def write_chain(path: Path, n_alg: int, n_pairs: int, draws: int, seed: int) -> None:
    """A Stan CSV file of ``draws`` rows with the BT model's columns (random values)."""
    names = [*SAMPLER, "energy__", "sigma"]
    names += [f"beta_rot.{i}" for i in range(1, n_alg)]
    names += [f"beta.{i}" for i in range(1, n_alg + 1)]
    names += [f"win1_rep.{i}" for i in range(1, n_pairs + 1)]
    names += [f"log_lik.{i}" for i in range(1, n_pairs + 1)]
    rng = np.random.default_rng(seed)
    block = rng.standard_normal((draws, len(names)))
    with path.open("w") as f:
        f.write("# stan_version_major = 2\n# model = bbt_model\n# method = sample (Default)\n")
        f.write(",".join(names) + "\n")
        f.write("# Adaptation terminated\n# Step size = 0.41\n# Diagonal elements of inverse mass")
        f.write(" matrix:\n# 1, 1, 1\n")
        np.savetxt(f, block, delimiter=",", fmt="%.6g")
        f.write("# \n#  Elapsed Time: 0.05 seconds (Warm-up)\n")


def measure(path: Path, repeat: int) -> dict[str, Any]:
    engine_s, stanio_s = [], []
    for _ in range(repeat):  # interleaved: both see the same load
        start = time.perf_counter()
        names, ours = _read_csv(path)
        engine_s.append(time.perf_counter() - start)
        start = time.perf_counter()
        header, theirs = stanio.read_csv(str(path))
        stanio_s.append(time.perf_counter() - start)
    assert header.split(",") == names
    np.testing.assert_array_equal(ours, theirs[0])
    engine, other = statistics.median(engine_s), statistics.median(stanio_s)
    return {
        "columns": len(names),
        "engine_reader_median_s": round(engine, 5),
        "stanio_median_s": round(other, 5),
        "ratio": round(other / engine, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/csv.json")
    args = parser.parse_args()
    out: dict[str, Any] = {
        "benchmark": "bench_csv",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "stanio": stanio.__version__,
        "load_before": os.getloadavg()[0],
        "note": (__doc__ or "").split("\n\n")[1].replace("\n", " "),
        "cases": [],
    }
    with tempfile.TemporaryDirectory(prefix="bbt-widget-bench-csv-") as folder:
        for seed, (case, (n_alg, n_pairs)) in enumerate(CASES.items()):
            path = Path(folder) / f"{case}.csv"
            write_chain(path, n_alg, n_pairs, 1000, seed)
            result = {"case": case, "draws": 1000, **measure(path, args.repeat)}
            out["cases"].append(result)
            print(
                f"{case:7} {result['columns']} columns: engine reader "
                f"{result['engine_reader_median_s'] * 1000:.1f} ms, stanio "
                f"{result['stanio_median_s'] * 1000:.1f} ms (x{result['ratio']})"
            )
    out["load_after"] = os.getloadavg()[0]
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
