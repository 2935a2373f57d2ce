"""How many draws the report's Plackett-Luce section needs: effective sample sizes and
Monte Carlo errors of what the report shows, by chains x (warm-up + sampling) iterations.

The report's "Ranking models" section shows, from the Plackett-Luce fit, each algorithm's
P(best) (``p_first``, mean and HDI), its expected rank (mean and HDI) and P(top-k) (mean and
HDI, one panel per k), and the methods compare its first place with BBT's. For each setting
and seed this records, over every algorithm (and pair, and k):

* ``min_ess_bulk`` / ``min_ess_tail``: the smallest bulk and tail ESS (Vehtari et al. 2021,
  the package's own estimators, ``bbt_widget.core.convergence``) of the per-draw quantities
  the tables summarise: theta (P(best)), the expected rank, P(a before b) for every pair,
  and P(top-k) for every algorithm and k (each draw's P(top-k) simulated from 200 rankings,
  as the report does);
* ``max_mcse_p_best`` / ``max_mcse_rank`` / ``max_mcse_top_k``: the largest Monte Carlo
  standard error of a reported mean (posterior sd / sqrt(bulk ESS));
* ``max_diff_*``: the largest difference of the reported means (P(best), expected rank,
  P(top-k)) from the reference setting's at the same seed (4 x (1000 + 1000), the fit's
  default), and whether the top algorithm is the same;
* ``sample_chains_s``: the chains' wall time (both cores), for the cost.

Case: the shipped ``pmlb16_4fold.csv`` (16 algorithms x 132 data sets), ties split, as the
report runs it, with its Gibbs sampler (numpy). Run:
``python benchmarks/bench_pl_draws.py [--seeds 1 2 3]``; results go to
``benchmarks/results/pl_draws.json`` (``pl_draws_nuts.json`` holds an earlier run of NUTS,
when the package had a Stan sampler for this model).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
from _machine import machine  # noqa: E402  (beside this script)

import bbt_widget as bbt  # noqa: E402
from bbt_widget.core.convergence import ess_bulk, ess_tail  # noqa: E402
from bbt_widget.ranking import _plackett_luce as pl  # noqa: E402

#: (chains, warm-up, sampling); the first is the reference (the fit's defaults).
SETTINGS = [
    (4, 1000, 1000),
    (4, 250, 1000),
    (4, 200, 1000),
    (4, 150, 1000),
    (4, 500, 500),
    (4, 300, 700),
    (4, 300, 300),
]


def _per_draw(theta: np.ndarray, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The reported quantities per draw, shape (chains, draws, ...)."""
    chains, draws, n = theta.shape
    flat = theta.reshape(-1, n)
    before = flat[:, :, None] / (flat[:, :, None] + flat[:, None, :])
    iu = np.triu_indices(n, 1)
    top = np.zeros((len(flat), n, n))
    for start in range(0, len(flat), 100):
        pos = pl._simulated_positions(flat[start : start + 100], pl.TOPK_SIMULATIONS, rng)
        for place in range(n):
            top[start : start + 100, :, place] = (pos == place).mean(axis=1)
    top = np.minimum(np.cumsum(top, axis=2), 1.0)[:, :, :-1]  # P(top k), k < n
    return {
        "p_best": theta,
        "rank": pl._expected_ranks(flat).reshape(chains, draws, n),
        "before": before[:, iu[0], iu[1]].reshape(chains, draws, -1),
        "top_k": top.reshape(chains, draws, -1),
    }


def _ess(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    cols = values.reshape(values.shape[0], values.shape[1], -1)
    bulk, tail = [], []
    for k in range(cols.shape[2]):
        column = cols[:, :, k]
        if np.ptp(column) == 0:  # constant (e.g. P(top k) = 1): nothing to estimate
            continue
        bulk.append(ess_bulk(column))
        tail.append(ess_tail(column))
    return np.array(bulk), np.array(tail)


def one(df, chains: int, warmup: int, sampling: int, seed: int) -> dict[str, Any]:
    res = pl.ranking_model(
        df,
        dataset="db",
        chains=chains,
        iter_warmup=warmup,
        iter_sampling=sampling,
        seed=seed,
    )
    n = len(res.algorithms)
    theta = res.draws.params["theta"].reshape(chains, sampling, n)
    quantities = _per_draw(theta, np.random.default_rng(seed))
    row: dict[str, Any] = {
        "chains": chains,
        "iter_warmup": warmup,
        "iter_sampling": sampling,
        "seed": seed,
        # Stan's chains run in parallel (their wall time); Gibbs's side by side in one thread
        "sample_chains_s": res.draws.timings.get("sample_chains", res.draws.timings["sample"]),
        "max_rhat": res.diagnostics.max_rhat,
    }
    bulks, tails = [], []
    for name, values in quantities.items():
        bulk, tail = _ess(values)
        bulks.append(bulk.min())
        tails.append(tail.min())
        row[f"min_ess_bulk_{name}"] = float(bulk.min())
        row[f"min_ess_tail_{name}"] = float(tail.min())
        if name in ("p_best", "rank", "top_k"):
            sd = values.reshape(-1, values.shape[-1]).std(axis=0)
            sd = sd[sd > 0]
            row[f"max_mcse_{name}"] = float((sd / np.sqrt(bulk)).max())
    row["min_ess_bulk"] = float(min(bulks))
    row["min_ess_tail"] = float(min(tails))
    row["_ranking"] = res.ranking.set_index("algorithm")
    row["_top_k"] = res.top_k.set_index(["algorithm", "k"])["p"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    args = parser.parse_args()
    df = bbt.datasets.load_pmlb16()
    # compile (NUTS), warm the imports
    pl.ranking_model(df, dataset="db", iter_warmup=50, iter_sampling=50)
    load = os.getloadavg()
    runs = []
    for seed in args.seeds:
        reference = None
        for chains, warmup, sampling in SETTINGS:
            row = one(df, chains, warmup, sampling, seed)
            ranking, top_k = row.pop("_ranking"), row.pop("_top_k")
            if reference is None:
                reference = (ranking, top_k)
            ref_ranking, ref_top = reference
            same = ranking.reindex(ref_ranking.index)
            row["max_diff_p_best"] = float((same["p_first"] - ref_ranking["p_first"]).abs().max())
            row["max_diff_rank"] = float(
                (same["expected_rank"] - ref_ranking["expected_rank"]).abs().max()
            )
            row["max_diff_top_k"] = float((top_k.reindex(ref_top.index) - ref_top).abs().max())
            row["same_first"] = bool(ranking.index[0] == ref_ranking.index[0])
            print(
                json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()}),
                flush=True,
            )
            runs.append(row)
    summary = {}
    for chains, warmup, sampling in SETTINGS:
        rows = [
            r
            for r in runs
            if (r["chains"], r["iter_warmup"], r["iter_sampling"]) == (chains, warmup, sampling)
        ]
        summary[f"{chains}x({warmup}+{sampling})"] = {
            "min_ess_bulk": min(r["min_ess_bulk"] for r in rows),
            "min_ess_tail": min(r["min_ess_tail"] for r in rows),
            **{
                key: max(r[key] for r in rows)
                for key in rows[0]
                if key.startswith(("max_mcse", "max_diff", "max_rhat"))
            },
            "same_first_all_seeds": all(r["same_first"] for r in rows),
            "median_sample_chains_s": float(np.median([r["sample_chains_s"] for r in rows])),
        }
    result = {
        "machine": machine(load),
        "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "case": "pmlb16_4fold.csv (16 x 132), Plackett-Luce, ties split, prior 1",
        "sampler": "gibbs",
        "summary": summary,
        "runs": runs,
    }
    out = REPO / "benchmarks" / "results" / "pl_draws.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(summary, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
