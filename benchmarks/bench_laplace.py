"""Previews (issue 10): is the Laplace approximation as accurate as a short NUTS run, and how fast?

For the paper's base results (5 x 20) and the PMLB table (16 x 132), each with ties spread
(Bradley-Terry) and with the Davidson model, this compares against a full fit (``bbt.fit``:
4 chains x 1000 draws), on the columns ``summary()`` reports per pair (mean P(a > b), the HDI
bounds, above.50, in.rope, and the weak / strong decisions):

* ``laplace``: ``fit_laplace`` (a Stan engine's approximation) with the widget's
  ``PREVIEW_DRAWS`` draws (and with 1000);
* ``laplace_numpy``: the numpy engine's approximation with ``PREVIEW_DRAWS`` draws, what the
  widget's previews show (``PreparedFit.laplace(engine="numpy")``);
* ``short_nuts``: the previews' former short run, one chain per core (2 here) x 150 warm-up
  iterations and 150 draws.

The errors are the largest and the mean absolute differences over the pairs, averaged over
``--seeds`` seeds of the approximations (the reference fit has its own Monte Carlo error,
about 0.002 on the means). Timings: each method's median wall time over the seeds as a ratio
to the full fit's, in the same process, interleaved.

Run: ``python benchmarks/bench_laplace.py [--seeds N] [--out benchmarks/results/laplace.json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import pandas as pd  # noqa: E402

import bbt_widget as bbt  # noqa: E402
from bbt_widget.fitting import fit_laplace, prepare_fit  # noqa: E402
from bbt_widget.widget.preview import PREVIEW_DRAWS  # noqa: E402

COLUMNS = ("mean", "low", "high", "above_50", "in_rope")
CASES = [
    ("base_5x20", "load_base", "spread"),
    ("base_5x20", "load_base", "davidson"),
    ("pmlb16_16x132", "load_pmlb16", "spread"),
    ("pmlb16_16x132", "load_pmlb16", "davidson"),
]


def _errors(summary: pd.DataFrame, reference: pd.DataFrame) -> dict[str, float]:
    out: dict[str, float] = {}
    for column in COLUMNS:
        diff = (summary[column].to_numpy() - reference[column].to_numpy()).__abs__()
        out[f"{column}_max"] = float(diff.max())
        out[f"{column}_mean"] = float(diff.mean())
    for rule in ("weak", "strong"):
        out[f"{rule}_decisions_differ"] = int((summary[rule] != reference[rule]).sum())
    return out


def _average(rows: list[dict[str, float]]) -> dict[str, float]:
    return {key: round(statistics.fmean(r[key] for r in rows), 4) for key in rows[0]}


def bench_case(name: str, loader: str, ties: str, seeds: int) -> dict[str, Any]:
    data = getattr(bbt.datasets, loader)()
    kw = {"dataset": "db", "ties": ties}
    methods = {
        "laplace": lambda seed: fit_laplace(data, draws=PREVIEW_DRAWS, seed=seed, **kw),
        "laplace_1000": lambda seed: fit_laplace(data, draws=1000, seed=seed, **kw),
        "laplace_numpy": lambda seed: prepare_fit(
            data, seed=seed, size=(1, PREVIEW_DRAWS), **kw
        ).laplace(draws=PREVIEW_DRAWS, engine="numpy"),
        "short_nuts": lambda seed: bbt.fit(
            data, chains=2, iter_warmup=150, iter_sampling=150, seed=seed, **kw
        ),
    }
    reference = bbt.fit(data, seed=12345, **kw).summary()
    errors: dict[str, list[dict[str, float]]] = {m: [] for m in methods}
    times: dict[str, list[float]] = {m: [] for m in (*methods, "full_fit")}
    for seed in range(1, seeds + 1):
        t0 = time.perf_counter()
        bbt.fit(data, seed=seed, **kw)
        times["full_fit"].append(time.perf_counter() - t0)
        for method, run in methods.items():
            time.sleep(0.2)  # a pause between runs, as between two clicks
            t0 = time.perf_counter()
            result = run(seed)
            times[method].append(time.perf_counter() - t0)
            errors[method].append(_errors(result.summary(), reference))
        time.sleep(0.2)
    full_s = statistics.median(times["full_fit"])
    return {
        "case": name,
        "ties": ties,
        "pairs": len(reference),
        "full_fit_median_s": round(full_s, 3),
        "methods": {
            method: {
                "median_s": round(statistics.median(times[method]), 4),
                "ratio_to_full_fit": round(statistics.median(times[method]) / full_s, 3),
                **_average(errors[method]),
            }
            for method in methods
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/laplace.json")
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # short runs miss the diagnostics thresholds by design
    bbt.engines.compile_models(("bbt", "davidson"))
    cases = []
    for name, loader, ties in CASES:
        case = bench_case(name, loader, ties, args.seeds)
        cases.append(case)
        for method, row in case["methods"].items():
            print(
                f"{name} {ties:8s} {method:12s} x{row['ratio_to_full_fit']:.3f} of the fit; "
                f"mean err max {row['mean_max']:.4f}, HDI low/high max "
                f"{row['low_max']:.4f}/{row['high_max']:.4f}, above.50 max "
                f"{row['above_50_max']:.4f}, in.rope max {row['in_rope_max']:.4f}, decisions "
                f"differ weak {row['weak_decisions_differ']} strong "
                f"{row['strong_decisions_differ']}"
            )
    report = {
        "benchmark": "bench_laplace",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "preview_draws": PREVIEW_DRAWS,
        "seeds": args.seeds,
        "note": __doc__.split("\n\n")[1].replace("\n", " "),
        "cases": cases,
    }
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
