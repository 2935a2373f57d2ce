"""End-to-end ``bbt_widget.fit`` time and memory, as a ratio to the bare engine in the same run.

What a user waits for: raw results -> validated input -> win table -> Stan sampling -> draws
-> the result's summary, ranking, PPC table and diagnostics. The baseline, measured in the
same process right before, is the engine alone (``engines.sample``) on the same Stan data, so
``ratio`` is the cost of everything around Stan (1.0 = free) and survives a noisy machine.

Cases (4 chains x 1000 warm-up + 1000 draws, BT model, spread ties, lognormal prior):

* ``base``: the paper's base results, 5 algorithms x 20 data sets, fold rows.
  Target on this machine, warm: <= 1.0 s on PyStan (<= 0.5 s on CmdStan).
* ``pmlb16``: all of ``pmlb16_4fold.csv``, 16 x 132, fold rows. Target <= 2.5 s (<= 1.2 s).
* ``synthetic``: 100 algorithms x 150 data sets of simulated means (seeded). Target < 60 s.
  Peak memory < 1 GiB (the Python process and each sampler process; a cold compile's C++
  compiler is reported apart).

``--cold`` also times a first fit with an empty model cache (compile included; about a
minute per model on PyStan). Results go to ``benchmarks/results/fit.json``.

Fresh processes (``--fresh N``, default 3; ``--only-fresh`` runs this case alone and writes
``benchmarks/results/fit_fresh.json``): what every new kernel and every command pays. Each of
N new Python processes imports bbt_widget, fits ``pmlb16`` (the first fit of the process),
waits a second (as a user's next call would) and fits again (warm, the baseline): ``ratio``
is first / second, in the same process. Target on a 2-core machine, model compiled: <= 1.3.
``--baseline-tree PATH`` runs the same processes on another checkout (e.g. the code before a
change, from ``git archive``), interleaved with this one's, so both see the same load.

Run: ``python benchmarks/bench_fit.py [--repeat 3] [--skip-synthetic] [--cold]
[--fresh 3] [--only-fresh] [--baseline-tree PATH]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from _machine import machine  # noqa: E402  (beside this script)

import bbt_widget as bbt  # noqa: E402
from bbt_widget import engines  # noqa: E402
from bbt_widget.fitting import stan_inputs  # noqa: E402

TARGETS_S = {
    "pystan": {"base": 1.0, "pmlb16": 2.5, "synthetic": 60.0},
    "cmdstanpy": {"base": 0.5, "pmlb16": 1.2, "synthetic": 60.0},
}


def synthetic(n_alg: int = 100, n_ds: int = 150, seed: int = 0) -> pd.DataFrame:
    """Means of ``n_alg`` algorithms on ``n_ds`` data sets: ability + data-set effect + noise."""
    rng = np.random.default_rng(seed)
    ability = rng.normal(0, 0.02, n_alg)
    difficulty = rng.uniform(0.6, 0.95, n_ds)
    scores = difficulty[:, None] + ability[None, :] + rng.normal(0, 0.02, (n_ds, n_alg))
    return pd.DataFrame(
        scores, index=[f"ds{d}" for d in range(n_ds)], columns=[f"alg{a}" for a in range(n_alg)]
    )


def cases(skip_synthetic: bool) -> dict[str, tuple[pd.DataFrame, dict[str, Any]]]:
    out = {
        "base": (bbt.datasets.load_base(), {"dataset": "db"}),
        "pmlb16": (bbt.datasets.load_pmlb16(), {"dataset": "db"}),
    }
    if not skip_synthetic:
        out["synthetic"] = (synthetic(), {})
    return out


def _peak_mb() -> dict[str, float]:
    return {
        "self": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "children": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    }


def run_case(df: pd.DataFrame, kw: dict[str, Any], engine: str, repeat: int) -> dict[str, Any]:
    table = bbt.win_table(df, **kw)
    algorithms = list(bbt.tidy_results(df, **kw).algorithms)
    stan_data, _ = stan_inputs(table, algorithms, "bbt", "lognormal", 0.5)
    rows = []
    for rep in range(repeat):
        # baseline first, then the full pipeline, on the same seed: same work inside Stan
        t0 = time.perf_counter()
        engines.sample("bbt", stan_data, engine=engine, seed=rep + 1)
        engine_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        res = bbt.fit(df, engine=engine, seed=rep + 1, **kw)
        fit_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        res.summary()
        res.ranking()
        res.ppc_table()
        diag = res.diagnostics()
        post_s = time.perf_counter() - t0
        rows.append(
            {
                "engine_only_s": engine_s,
                "fit_s": fit_s,
                "summaries_s": post_s,
                "end_to_end_s": fit_s + post_s,
                "ratio_to_engine": (fit_s + post_s) / engine_s,
                "diagnostics_ok": diag.ok,
            }
        )
    e2e = [r["end_to_end_s"] for r in rows]
    return {
        "n_alg": len(algorithms),
        "n_datasets": int(df[kw["dataset"]].nunique()) if "dataset" in kw else len(df),
        "n_pairs": len(table),
        "median_end_to_end_s": statistics.median(e2e),
        "median_ratio_to_engine": statistics.median(r["ratio_to_engine"] for r in rows),
        "runs": rows,
    }


def cold_fit(engine: str) -> dict[str, float]:
    """A first fit with an empty model cache: compile included."""
    with tempfile.TemporaryDirectory() as cache:
        old = os.environ.get("BBT_WIDGET_CACHE")
        os.environ["BBT_WIDGET_CACHE"] = cache
        try:
            t0 = time.perf_counter()
            res = bbt.fit(bbt.datasets.load_base(), dataset="db", engine=engine, seed=1)
            total = time.perf_counter() - t0
        finally:
            if old is None:
                os.environ.pop("BBT_WIDGET_CACHE", None)
            else:
                os.environ["BBT_WIDGET_CACHE"] = old
    return {"end_to_end_s": total, **{f"timing_{k}_s": v for k, v in res.draws.timings.items()}}


FRESH_TARGET_RATIO = 1.3
#: One fresh process: import, first fit, a pause, second fit; prints a JSON line.
_FRESH_SCRIPT = """
import json, sys, time
t0 = time.perf_counter()
import numpy as np
import bbt_widget as bbt
imported = time.perf_counter() - t0
df = bbt.datasets.load_pmlb16()
def one():
    start = time.perf_counter()
    res = bbt.fit(df, dataset="db", seed=1)
    return time.perf_counter() - start, res
first_s, first = one()
time.sleep(1.0)
second_s, second = one()
same = all(np.array_equal(first.draws.params[k], second.draws.params[k]) for k in ("beta", "sigma"))
print(json.dumps({"import_s": imported, "first_fit_s": first_s, "second_fit_s": second_s,
                  "ratio": first_s / second_s, "same_draws": bool(same),
                  "first_timings": first.draws.timings, "second_timings": second.draws.timings}))
"""


def fresh_process(tree: Path) -> dict[str, Any]:
    """One new interpreter importing bbt_widget from ``tree``: its first and second fit."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", _FRESH_SCRIPT],
        env=env,
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
        check=True,
    )
    row = json.loads(out.stdout.strip().splitlines()[-1])
    row["process_wall_s"] = time.perf_counter() - start
    return row


def fresh_case(runs: int, baseline: Path | None) -> dict[str, Any]:
    """``runs`` fresh processes of this tree (and of ``baseline``, interleaved)."""
    trees = {"this": REPO} if baseline is None else {"this": REPO, "baseline": baseline}
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for _ in range(runs):
        for name, tree in trees.items():
            row = fresh_process(tree)
            row["load_average"] = os.getloadavg()[0]
            rows[name].append(row)
            print(
                f"fresh {name:8s} first {row['first_fit_s']:.2f} s, second "
                f"{row['second_fit_s']:.2f} s, x{row['ratio']:.2f} "
                f"(load {row['load_average']:.1f})",
                flush=True,
            )
    out: dict[str, Any] = {"target_ratio": FRESH_TARGET_RATIO}
    for name, tree_rows in rows.items():
        ratio = statistics.median(r["ratio"] for r in tree_rows)
        out[name] = {
            "tree": str(trees[name]),
            "median_ratio_first_to_second": ratio,
            "median_first_fit_s": statistics.median(r["first_fit_s"] for r in tree_rows),
            "median_second_fit_s": statistics.median(r["second_fit_s"] for r in tree_rows),
            "median_import_s": statistics.median(r["import_s"] for r in tree_rows),
            "meets_target": ratio <= FRESH_TARGET_RATIO,
            "same_draws_first_and_second": all(r["same_draws"] for r in tree_rows),
            "runs": tree_rows,
        }
    if baseline is not None:
        out["first_fit_to_baseline_first_fit"] = statistics.median(
            a["first_fit_s"] / b["first_fit_s"] for a, b in zip(rows["this"], rows["baseline"])
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-synthetic", action="store_true")
    parser.add_argument("--cold", action="store_true")
    parser.add_argument("--fresh", type=int, default=3, help="fresh processes (0: none)")
    parser.add_argument("--only-fresh", action="store_true")
    parser.add_argument("--baseline-tree", type=Path, default=None)
    parser.add_argument("--note", default="", help="recorded with the results (e.g. the load)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    results = REPO / "benchmarks" / "results"
    if args.only_fresh:
        engines.compile_model("bbt")  # compiled: the case is the process, not the compiler
        report = {
            "machine": machine(),
            "note": args.note,
            "case": "pmlb16 (16 x 132, fold rows), default fit settings, seed 1",
            "fresh_process": fresh_case(args.fresh, args.baseline_tree),
        }
        out = Path(args.out or results / "fit_fresh.json")
        out.write_text(json.dumps(report, indent=1) + "\n")
        print(f"wrote {out}")
        return
    args.out = args.out or str(results / "fit.json")

    report: dict[str, Any] = {
        "machine": machine(),
        "note": args.note,
        "settings": "4 chains x 1000 warm-up + 1000 draws, BT model, spread ties",
        "engines": {},
    }
    for engine in engines.available_engines():
        engines.compile_model("bbt", engine=engine)  # warm: compile excluded below
        per_engine: dict[str, Any] = {"cases": {}}
        for name, (df, kw) in cases(args.skip_synthetic).items():
            result = run_case(df, kw, engine, args.repeat if name != "synthetic" else 1)
            result["target_s"] = TARGETS_S[engine][name]
            result["meets_target"] = result["median_end_to_end_s"] <= result["target_s"]
            # high-water marks so far (they only grow: the largest case runs last)
            result["peak_memory_mb_so_far"] = _peak_mb()
            per_engine["cases"][name] = result
            print(
                f"{engine:9s} {name:9s} {result['median_end_to_end_s']:7.2f} s end to end "
                f"(target {result['target_s']} s), x{result['median_ratio_to_engine']:.2f} "
                "the engine alone",
                flush=True,
            )
        # before the cold compile: the compiler's own memory is not the fit's
        per_engine["peak_memory_mb_fitting"] = _peak_mb()
        if args.cold:
            per_engine["cold_first_fit"] = cold_fit(engine)
            print(f"{engine:9s} cold first fit {per_engine['cold_first_fit']}", flush=True)
        report["engines"][engine] = per_engine
    if args.fresh:
        report["fresh_process"] = fresh_case(args.fresh, args.baseline_tree)
    fitting = [e["peak_memory_mb_fitting"] for e in report["engines"].values()]
    report["peak_memory_under_1_gib"] = all(v < 1024 for f in fitting for v in f.values())
    print(f"peak memory while fitting (MB): {fitting}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
