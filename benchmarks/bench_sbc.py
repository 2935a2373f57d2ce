"""Simulation-based calibration of the default fit, counting the fits whose diagnostics fail.

For each shape (algorithms x data sets: 5 x 20, 12 x 30, 16 x 80, 50 x 30) and each of N
replications: sigma from the default hyper-prior (lognormal(0, 0.5)), abilities
beta ~ Normal(0, sigma), every pair's wins over the data sets binomial; the win table is fitted
by ``bbt.fit`` at its defaults (numpy engine, ``draws="auto"``, seed = the replication). Per
shape: how many default fits ended with failed diagnostics (a ``DiagnosticsWarning``), how many
first rounds failed theirs (what a fit warned of before the engine drew again where they
fail), the kernels that gave the first round's draws, the CPU seconds per fit, and the rank
of each true value (sigma and the contrasts beta_i - beta_0) among 100 of the fit's draws,
evenly spaced over all of them: a chi-square test of each quantity's ranks against uniform
(10 bins), the smallest p-value and whether it passes at 0.001 over the number of quantities.

Run: ``nice -n 19 python benchmarks/bench_sbc.py [--replications 200] [--workers 1]``;
results go to ``benchmarks/results/sbc.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from _machine import machine  # noqa: E402  (beside this script)
from scipy import stats  # noqa: E402

import bbt_widget as bbt  # noqa: E402

SHAPES = ((5, 20), (12, 30), (16, 80), (50, 30))
KEPT = 100  # draws each true value is ranked among: ranks 0..KEPT
BINS = 10
OUT = REPO / "benchmarks" / "results" / "sbc.json"


def simulate(n_alg: int, n_sets: int, rng: np.random.Generator) -> tuple[pd.DataFrame, dict]:
    """A win table drawn from the default model's prior, and the true values."""
    sigma = float(np.exp(0.5 * rng.standard_normal()))
    beta = sigma * rng.standard_normal(n_alg)
    i1, i2 = np.triu_indices(n_alg, 1)
    wins = rng.binomial(n_sets, 1 / (1 + np.exp(beta[i2] - beta[i1])))
    names = np.array([f"a{i:02d}" for i in range(n_alg)])
    table = pd.DataFrame(
        {"alg1": names[i1], "alg2": names[i2], "win1": wins, "win2": n_sets - wins}
    )
    return table, {"sigma": sigma, "beta": dict(zip(names, beta, strict=True))}


def one_fit(shape: tuple[int, int], replication: int) -> dict[str, Any]:
    """One replication: the fit's diagnostics, its first round's verdict and the ranks."""
    rng = np.random.default_rng([shape[0], shape[1], replication])
    table, truth = simulate(*shape, rng)
    cpu = time.process_time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = bbt.fit(table, seed=replication + 1)
    cpu = time.process_time() - cpu
    warned = [str(w.message) for w in caught if issubclass(w.category, bbt.DiagnosticsWarning)]
    diag = res.diagnostics()
    info = res.draws.info
    tried = str(info.get("convergence", ""))
    p = res.draws.params
    beta = p["beta"].reshape(-1, p["beta"].shape[-1])
    sigma = p["sigma"].reshape(-1)
    pick = np.linspace(0, len(sigma) - 1, KEPT).round().astype(int)
    names = list(res.algorithms)
    base = names.index("a00")
    ranks = {"sigma": int((sigma[pick] < truth["sigma"]).sum())}
    for k, name in enumerate(names):
        if k == base:
            continue
        drawn = beta[pick, k] - beta[pick, base]
        ranks[f"{name}-a00"] = int((drawn < truth["beta"][name] - truth["beta"]["a00"]).sum())
    return {
        "ok": bool(diag.ok),
        "warned": warned,
        "first_round_failed": "then" in tried.split("+")[0],
        "kernel": tried.split(",")[0].split(" (")[0],
        "further_rounds": tried.count("then"),
        "max_rhat": diag.max_rhat,
        "min_ess_bulk": diag.min_ess_bulk,
        "min_ess_tail": diag.min_ess_tail,
        "cpu_seconds": cpu,
        "ranks": ranks,
    }


def _uniformity(fits: list[dict[str, Any]]) -> dict[str, Any]:
    """Chi-square p-values of each quantity's ranks against uniform."""
    pvalues = {}
    for name in fits[0]["ranks"]:
        r = np.array([f["ranks"][name] for f in fits])
        counts = np.bincount(r * BINS // (KEPT + 1), minlength=BINS)
        pvalues[name] = float(stats.chisquare(counts).pvalue)
    worst = min(pvalues, key=pvalues.__getitem__)
    return {
        "quantities": len(pvalues),
        "min_pvalue": pvalues[worst],
        "worst": worst,
        "uniform_at_0.001_over_quantities": pvalues[worst] > 0.001 / len(pvalues),
        "sigma_pvalue": pvalues["sigma"],
    }


def bench_shape(
    shape: tuple[int, int], replications: int, workers: int, report: Callable[[dict], None]
) -> dict[str, Any]:
    """The shape's counts; ``report`` is given them every 10 fits done and at the end (a
    run cut short keeps what it measured)."""
    start = time.perf_counter()
    fits: list[dict[str, Any]] = []
    with ProcessPoolExecutor(workers) as pool:
        for fit in pool.map(one_fit, [shape] * replications, range(replications)):
            fits.append(fit)
            if len(fits) % 10 == 0 and len(fits) < replications:
                report(_counts(shape, fits, start))
    result = _counts(shape, fits, start)
    report(result)
    return result


def _counts(shape: tuple[int, int], fits: list[dict[str, Any]], start: float) -> dict[str, Any]:
    failed = [r for r, f in enumerate(fits) if not f["ok"]]
    kernels = [f["kernel"] for f in fits]
    cpu = [f["cpu_seconds"] for f in fits]
    return {
        "shape": f"{shape[0]} x {shape[1]}",
        "replications": len(fits),
        "diagnostics_failed": len(failed),
        "failed_replications": failed,
        "failed_messages": [fits[r]["warned"] for r in failed],
        "first_round_failed": sum(f["first_round_failed"] for f in fits),
        "fits_with_further_rounds": sum(f["further_rounds"] > 0 for f in fits),
        "first_round_kernels": {k: kernels.count(k) for k in sorted(set(kernels))},
        "max_rhat": max(f["max_rhat"] for f in fits),
        "min_ess_bulk": min(f["min_ess_bulk"] for f in fits),
        "min_ess_tail": min(f["min_ess_tail"] for f in fits),
        "cpu_seconds_median": float(np.median(cpu)),
        "cpu_seconds_max": max(cpu),
        "wall_seconds": time.perf_counter() - start,
        "ranks": _uniformity(fits),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=200)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--shapes", nargs="*", default=[f"{a}x{d}" for a, d in SHAPES])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    report: dict[str, Any] = {"machine": machine(), "shapes": {}}
    for spec in args.shapes:
        shape = tuple(int(v) for v in spec.split("x"))
        assert len(shape) == 2

        def keep(result: dict[str, Any], spec: str = spec) -> None:
            report["shapes"][spec] = result
            args.out.write_text(json.dumps(report, indent=1) + "\n")

        result = bench_shape((shape[0], shape[1]), args.replications, args.workers, keep)
        print(json.dumps({k: v for k, v in result.items() if k != "failed_messages"}), flush=True)


if __name__ == "__main__":
    main()
