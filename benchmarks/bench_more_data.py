"""The forecast of claims after more data sets (``BBTResult.more_data``): its speed, its
calibration against real outcomes, and its agreement with full refits.

1. Speed: the 16 x 132 forecast (shipped ``pmlb16_4fold.csv``) at n = 10, 25, 50, 100, 200
   with the default 1000 futures, wall and CPU seconds, beside the fit of the same results
   (the ratio is what compares between machines: these are shared and noisy).
2. Calibration on real outcomes: ``--splits`` times, fit a random subset of 30-40 of the 132
   data sets, forecast each pair's claim for the other ``132 - subset`` under both rules, and
   score it against the claims of the fit on all 132: the Brier score (over the four claims)
   beside the naive forecasts "no change" (the subset's claim, probability 1) and "base rate"
   (each claim's share among the subset fit's pairs), and the reliability curve (forecast
   probability of each claim in bins of 0.1 against how often the full fit made it).
3. Against full refits, on data simulated from the model: the futures the forecast draws from
   the fit of the paper's 5 x 20 results, each refitted by the numpy engine; the forecast's
   share of each claim against the refits' share in the same futures, with the binomial
   Monte Carlo standard error of a share.

Run: ``python benchmarks/bench_more_data.py [--splits 20] [--refits 60]``; results go to
``benchmarks/results/more_data.json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
from _machine import cpu_seconds, machine  # noqa: E402  (beside this script)

import bbt_widget as bbt  # noqa: E402
from bbt_widget.core import posterior  # noqa: E402
from bbt_widget.core.more_data import CLAIM_COLUMNS, Growth, normal_update  # noqa: E402
from bbt_widget.lab.more_data import refits  # noqa: E402

CLAIMS = list(CLAIM_COLUMNS)
P_COLUMNS = [f"p_{c}" for c in CLAIM_COLUMNS.values()]
BINS = np.linspace(0.0, 1.0, 11)


def timed(call: Any) -> tuple[Any, float, float]:
    cpu, start = cpu_seconds(), time.perf_counter()
    out = call()
    return out, time.perf_counter() - start, cpu_seconds() - cpu


def speed(repeat: int) -> dict[str, Any]:
    data = bbt.datasets.load_pmlb16()
    fit, fit_wall, fit_cpu = timed(lambda: bbt.fit(data, dataset="db"))
    fit.summary()  # the summary the forecast reads is cached, as in any session
    runs = [timed(lambda: fit.more_data())[1:] for _ in range(repeat)]
    wall = [w for w, _ in runs]
    return {
        "case": "16 x 132, n = 10, 25, 50, 100, 200, 1000 futures",
        "forecast_wall_s": wall,
        "forecast_cpu_s": [c for _, c in runs],
        "fit_wall_s": fit_wall,
        "fit_cpu_s": fit_cpu,
        "forecast_over_fit": float(np.median(wall) / fit_wall),
        "load_average": os.getloadavg(),
    }


def calibration(splits: int, seed: int) -> dict[str, Any]:
    data = bbt.datasets.load_pmlb16()
    full = bbt.fit(data, dataset="db")
    sets = np.array(full.tidy.datasets)
    rng = np.random.default_rng(seed)
    scored: dict[str, dict[str, list[float]]] = {
        rule: {"forecast": [], "no change": [], "base rate": []} for rule in ("weak", "strong")
    }
    pooled: dict[str, list[tuple[float, float]]] = {"weak": [], "strong": []}
    per_split = []
    for k in range(splits):
        size = int(rng.integers(30, 41))
        chosen = set(rng.choice(sets, size=size, replace=False))
        part = data[data["db"].isin(chosen)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sub = bbt.fit(part, dataset="db", seed=k + 1)
        row: dict[str, Any] = {"split": k, "subset": size}
        for rule in ("weak", "strong"):
            forecast = sub.more_data(n=len(sets) - size, rule=rule, seed=k)
            table = forecast.table
            truth = _claims_of(full, rule, table["alg_a"], table["alg_b"])
            outcome = np.array([[t == c for c in CLAIMS] for t in truth], dtype=float)
            p = table[P_COLUMNS].to_numpy()
            now = np.array([[t == c for c in CLAIMS] for t in table["claim_now"]], dtype=float)
            base = np.broadcast_to(now.mean(axis=0), now.shape)
            for name, q in (("forecast", p), ("no change", now), ("base rate", base)):
                scored[rule][name].append(float(((q - outcome) ** 2).sum(axis=1).mean()))
            pooled[rule].extend(zip(p.ravel(), outcome.ravel()))
            row[rule] = {name: scored[rule][name][-1] for name in scored[rule]}
        per_split.append(row)
        print(f"split {k}: subset {size}, {row}", flush=True)
    return {
        "splits": splits,
        "brier": {
            rule: {name: float(np.mean(v)) for name, v in by.items()} for rule, by in scored.items()
        },
        "brier_se": {
            rule: {name: float(np.std(v, ddof=1) / np.sqrt(len(v))) for name, v in by.items()}
            for rule, by in scored.items()
        },
        "reliability": {rule: _reliability(pairs) for rule, pairs in pooled.items()},
        "per_split": per_split,
    }


def _claims_of(
    fit: bbt.BBTResult, rule: str, alg_a: Sequence[str], alg_b: Sequence[str]
) -> list[str]:
    """The full fit's claim for each pair, seen from ``alg_a``'s side."""
    s = fit.summary()
    own = {(a, b): c for a, b, c in zip(s["alg_a"], s["alg_b"], s[rule])}
    return [own.get((a, b)) or posterior.flip_decision(own[(b, a)]) for a, b in zip(alg_a, alg_b)]


def _reliability(pairs: list[tuple[float, float]]) -> list[dict[str, float]]:
    p, o = (np.array(v) for v in zip(*pairs))
    out = []
    for low, high in itertools.pairwise(BINS):
        inside = (p >= low) & ((p < high) if high < 1 else (p <= high))
        if inside.any():
            out.append(
                {
                    "bin": f"[{low:.1f}, {high:.1f}{']' if high == 1 else ')'}",
                    "count": int(inside.sum()),
                    "mean_forecast": float(p[inside].mean()),
                    "observed": float(o[inside].mean()),
                }
            )
    return out


def against_refits(futures: int, n: int) -> dict[str, Any]:
    fit = bbt.fit(bbt.datasets.load_base(), dataset="db")
    refit = refits(fit, chains=2, iter_sampling=1000, seed=7)
    kept: dict[str, Any] = {}

    def both(
        growth: Growth, pairs: Sequence[tuple[int, int]], rope: tuple[float, float]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        approx = normal_update(growth, pairs, rope)
        kept["normal"], kept["refit"] = approx, refit(growth, pairs, rope)
        return approx

    rope = (0.45, 0.55)
    start = time.perf_counter()
    fit.more_data(n=n, draws=futures, seed=11, grown=both)
    seconds = time.perf_counter() - start
    labels = [f"{fit.algorithms[i]} > {fit.algorithms[j]}" for i, j in fit._pairs]
    out: dict[str, Any] = {"case": f"5 x 20 (base), n = {n}", "futures": futures}
    out["seconds"] = seconds
    for rule in ("weak", "strong"):
        shares = {}
        for method in ("normal", "refit"):
            mean, above, inside = kept[method]
            claims = (
                posterior.weak_decision(above.ravel(), inside.ravel())
                if rule == "weak"
                else posterior.strong_decision(mean.ravel(), rope)
            ).reshape(mean.shape)
            shares[method] = np.array([(claims == c).mean(axis=0) for c in CLAIMS])
        mcse = np.sqrt(shares["refit"] * (1 - shares["refit"]) / futures)
        diff = np.abs(shares["normal"] - shares["refit"])
        out[rule] = {
            "pairs": labels,
            "claims": CLAIMS,
            "forecast": shares["normal"].T.round(4).tolist(),
            "refits": shares["refit"].T.round(4).tolist(),
            "max_abs_difference": float(diff.max()),
            # the largest difference in units of a share's binomial MCSE (at least 1/futures)
            "max_difference_in_mcse": float((diff / np.maximum(mcse, 1 / futures)).max()),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=20)
    parser.add_argument("--refits", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    results = {"machine": machine(), "speed": speed(args.repeat)}
    print(json.dumps(results["speed"], indent=1), flush=True)
    results["against_refits"] = against_refits(args.refits, 20)
    print({k: v for k, v in results["against_refits"].items() if k in ("weak", "strong")})
    results["calibration"] = calibration(args.splits, args.seed)
    out = REPO / "benchmarks" / "results" / "more_data.json"
    out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(results["calibration"]["brier"], indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
