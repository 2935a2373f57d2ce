"""Time of the other Bayesian methods, as ratios to a BBT fit in the same run, and the
hierarchical t-test against baycomp's ``HierarchicalTest`` (the reference implementation).

Cases, warm (models compiled; the first call of each is discarded), default settings:

* ``hierarchical``: :func:`bbt_widget.baselines.hierarchical` on one pair, 54 data sets x
  100 results (10 runs of 10-fold cross-validation, the size of Benavoli et al. 2017's
  Table 12), simulated from the model (``_simulate.simulate_cv_results``); next to it
  ``baycomp``: baycomp's ``HierarchicalTest`` on the same pair at 4 chains x 1500 draws,
  timed once (it builds its Stan program with PyStan; the build is cached and not timed),
  with both answers and ``speedup_vs_baycomp``.
* ``hierarchical_pmlb16``: rf vs svm on ``pmlb16_4fold.csv`` (132 data sets x 4 folds).
* ``hierarchical_pairs_pmlb16``: :func:`bbt_widget.baselines.hierarchical_pairs`, all 120
  pairs of the shipped 16 x 132 results (rho 1/4; ``--algorithms k``: the pairs of the first
  k algorithms) through the batch layer on the local cores, timed once; target <= 300 s with
  >= 114 pairs converged. Next to the wall time: ``cpu_seconds``, the CPU time of the Stan
  processes (the chains run in child processes of this one), and ``load_average``, so that a
  run on a shared machine can be read: ``cpu_seconds / cores`` is the wall time the same work
  takes on idle cores. ``converged_population``: pairs whose draws of mu_0, sigma_0 and nu
  (the parameters P(left), P(rope), P(right) are computed from) pass the same checks.
* ``baycomp_pmlb16``: baycomp's ``HierarchicalTest`` on one pair of the shipped results (rf vs
  svm, 132 data sets x 4 folds) at 4 chains x 1500 draws, next to ours on the same pair in
  the same run (wall and CPU seconds, both answers).
* ``correlated_ttest``: every data set of the 54 x 100 case (closed form, no Stan).
* ``plackett_luce``: :func:`bbt_widget.ranking_model` on ``pmlb16_4fold.csv`` (16 x 132).

The baseline is :func:`bbt_widget.fit` (BT model, spread ties) on the same results, measured
right before in the same process, so ``ratio`` survives a noisy, shared machine. Results go
to ``benchmarks/results/methods.json``.

Run: ``python benchmarks/bench_methods.py [--repeat 2] [--engine pystan] [--no-baycomp]
[--only hierarchical_pairs_pmlb16,baycomp_pmlb16]``. ``--only`` runs some cases and keeps the
others' last results in the file (each case records when and under what load it ran).
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

from _machine import cpu_seconds  # noqa: E402  (beside this script)

import bbt_widget as bbt  # noqa: E402
from bbt_widget import engines  # noqa: E402
from bbt_widget.baselines import (  # noqa: E402
    correlated_ttest,
    hierarchical,
    hierarchical_pairs,
)
from bbt_widget.baselines._simulate import simulate_cv_results  # noqa: E402
from bbt_widget.core.diagnostics import draws_diagnostics  # noqa: E402
from bbt_widget.lab.batch import text_progress  # noqa: E402

TARGET_S = {"hierarchical": 20.0, "hierarchical_pairs_pmlb16": 300.0}
#: Pairs of the shipped results that must pass the diagnostics (of 120).
MIN_CONVERGED = 114
LONG = dict(dataset="dataset", algorithm="algorithm", score="score", fold="fold", run="run")


def _timed(fn, repeat: int) -> tuple[float, Any]:
    fn()  # warm: compile, worker start, imports
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--engine", default="auto")
    parser.add_argument("--no-baycomp", action="store_true", help="skip baycomp's timing")
    parser.add_argument(
        "--only",
        default="",
        help="comma-separated cases to run (default: all); the others keep their last results",
    )
    parser.add_argument(
        "--algorithms",
        type=int,
        default=16,
        help="hierarchical_pairs on the first this many algorithms of the shipped results",
    )
    args = parser.parse_args()
    engine = engines.resolve_engine(args.engine)
    warnings.simplefilter("ignore")  # diagnostics are reported in the results instead

    sim = simulate_cv_results(54, 10, 10, mu0=0.01, sigma0=0.01, sigma=(0.01, 0.05), seed=0)
    flat = sim.assign(cv=sim["run"] * 10 + sim["fold"])
    pmlb = bbt.datasets.load_pmlb16()
    path = REPO / "benchmarks" / "results" / "methods.json"
    only = {c for c in args.only.split(",") if c}
    cases: dict[str, dict[str, Any]] = (
        json.loads(path.read_text())["cases"] if only and path.exists() else {}
    )

    def wanted(name: str) -> bool:
        return not only or name in only

    def write() -> None:  # after every case: a long run killed midway keeps what it measured
        out = {
            "engine": engine,
            "machine": f"{platform.machine()}, {platform.python_version()}, {os.cpu_count()} cores",
            "repeat": args.repeat,
            "cases": cases,
        }
        path.write_text(json.dumps(out, indent=2) + "\n")

    def case(name: str, baseline, method, note: str, diag=None) -> None:
        if not wanted(name):
            return
        base_s, _ = _timed(baseline, args.repeat)
        method_s, out = _timed(method, args.repeat)
        cases[name] = {
            "seconds": round(method_s, 3),
            "baseline_bbt_fit_seconds": round(base_s, 3),
            "ratio": round(method_s / base_s, 2),
            "target_s": TARGET_S.get(name),
            "meets_target": method_s <= TARGET_S[name] if name in TARGET_S else None,
            "note": note,
            **_when(),
        }
        if diag is not None:
            cases[name]["diagnostics"] = diag(out)
        print(name, cases[name], flush=True)
        write()

    def hier_diag(res) -> dict[str, Any]:
        d = res.diagnostics
        return {
            "ok": d.ok,
            "max_rhat": round(d.max_rhat, 3),
            "divergences": d.divergences,
            "min_ess_bulk": round(d.min_ess_bulk),
            "min_ess_tail": round(d.min_ess_tail),
            "sampler": res.settings.get("sampler"),
        }

    fit_sim = lambda: bbt.fit(  # noqa: E731
        flat, dataset="dataset", algorithm="algorithm", score="score", fold="cv", engine=engine
    )
    case(
        "hierarchical",
        fit_sim,
        lambda: hierarchical(sim, a="a", b="b", **LONG),
        "one pair, 54 data sets x 100 results (10 x 10-fold), simulated; baseline: BBT fit "
        "of the same 2 algorithms",
        hier_diag,
    )
    if not args.no_baycomp and wanted("hierarchical"):
        cases["hierarchical"]["baycomp"] = _baycomp(sim, cases["hierarchical"]["seconds"])
        print("baycomp", cases["hierarchical"]["baycomp"], flush=True)
        write()
    case(
        "correlated_ttest",
        fit_sim,
        lambda: correlated_ttest(sim, a="a", b="b", **LONG),
        "54 data sets x 100 results, closed form",
    )
    fit_pmlb = lambda: bbt.fit(pmlb, dataset="db", engine=engine)  # noqa: E731
    case(
        "hierarchical_pmlb16",
        fit_pmlb,
        lambda: hierarchical(pmlb, a="rf", b="svm", dataset="db", rho=0.25),
        "rf vs svm, 132 data sets x 4 folds; baseline: BBT fit of all 16 algorithms",
        hier_diag,
    )
    case(
        "plackett_luce",
        fit_pmlb,
        lambda: bbt.ranking_model(pmlb, dataset="db"),
        "16 algorithms x 132 data sets (ties split); baseline: BBT fit of the same results",
    )
    if not args.no_baycomp and wanted("baycomp_pmlb16"):
        cases["baycomp_pmlb16"] = _baycomp_pmlb(pmlb, engine)
        print("baycomp_pmlb16", cases["baycomp_pmlb16"], flush=True)
        write()
    if wanted("hierarchical_pairs_pmlb16"):
        cases["hierarchical_pairs_pmlb16"] = _all_pairs(pmlb, engine, args.algorithms)
        print("hierarchical_pairs_pmlb16", cases["hierarchical_pairs_pmlb16"], flush=True)
        write()
    print("wrote", path)


def _when() -> dict[str, Any]:
    """When a case ran and the machine's load then (1-minute load average)."""
    return {
        "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_average": round(os.getloadavg()[0], 1),
    }


def _all_pairs(pmlb, engine: str, n_algorithms: int) -> dict[str, Any]:
    """``hierarchical_pairs`` on the pairs of the first ``n_algorithms`` shipped algorithms."""
    engines.shutdown()  # what an engine keeps between fits ends: its CPU is not this case's
    algorithms = list(pmlb.columns[1 : 1 + n_algorithms])
    load = _when()
    start, cpu = time.perf_counter(), cpu_seconds()
    pairs = hierarchical_pairs(
        pmlb,
        algorithms=algorithms,
        dataset="db",
        rho=0.25,
        engine=engine,
        progress=text_progress(),
    )
    seconds = time.perf_counter() - start
    engines.shutdown()
    cpu = cpu_seconds() - cpu
    table = pairs.table
    converged = int(table["diagnostics_ok"].sum())
    # the same checks on mu0, sigma0 and nu only, the parameters P(left/rope/right) are made of
    population = [
        draws_diagnostics(pairs.fits[(a, b)].draws, ["mu0", "sigma0", "nu"]).ok
        for a, b in zip(table["alg_a"], table["alg_b"])
    ]
    n = len(table)
    return {
        "seconds": round(seconds, 1),
        "cpu_seconds": round(cpu, 1),
        "idle_2_core_seconds": round(cpu / 2, 1),
        "pairs": n,
        "seconds_per_pair": round(seconds / n, 1),
        "cpu_seconds_per_pair": round(cpu / n, 1),
        "converged": converged,
        "failed_pairs": table.loc[~table["diagnostics_ok"], "pair"].tolist(),
        "converged_population": int(sum(population)),
        "max_rhat": round(float(table["max_rhat"].max()), 3),
        "min_ess_bulk": round(float(table["min_ess_bulk"].min())),
        "min_ess_tail": round(float(table["min_ess_tail"].min())),
        "divergences": int(table["divergences"].sum()),
        "target_s": TARGET_S["hierarchical_pairs_pmlb16"],
        "meets_target": n == 120
        and seconds <= TARGET_S["hierarchical_pairs_pmlb16"]
        and converged >= MIN_CONVERGED,
        "note": f"the pairs of {len(algorithms)} of the shipped 16 algorithms x 132 data sets "
        "(4 folds, rho 1/4), local cores, timed once; target for all 120 pairs: <= 300 s "
        f"with >= {MIN_CONVERGED} converged",
        **load,
        "load_average_end": round(os.getloadavg()[0], 1),
    }


def _baycomp_pmlb(pmlb, engine: str) -> dict[str, Any]:
    """rf vs svm on the shipped results: baycomp's HierarchicalTest (4 chains x 1500 draws,
    its build cached by a short first run, not timed) and ours, wall and CPU seconds."""
    import tempfile

    import baycomp
    import numpy as np

    x, y = (pmlb[k].to_numpy().reshape(-1, 4) for k in ("rf", "svm"))
    load = _when()
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)  # baycomp pickles its last sample into the working directory
        try:
            baycomp.HierarchicalTest.sample(x[:3], y[:3], 0.01, runs=1, chains=1, nsamples=10)
            start, cpu = time.perf_counter(), cpu_seconds()
            theta = baycomp.HierarchicalTest.sample(x, y, 0.01, runs=1, chains=4, nsamples=1500)
            seconds, cpu = time.perf_counter() - start, cpu_seconds() - cpu
        finally:
            os.chdir(here)
    engines.shutdown()
    start, ours_cpu = time.perf_counter(), cpu_seconds()
    ours = hierarchical(pmlb, a="rf", b="svm", dataset="db", rho=0.25)
    ours_seconds = time.perf_counter() - start
    engines.shutdown()
    ours_cpu = cpu_seconds() - ours_cpu
    row = ours.table.iloc[0]
    return {
        "seconds": round(seconds, 1),
        "cpu_seconds": round(cpu, 1),
        "ours_seconds": round(ours_seconds, 1),
        "ours_cpu_seconds": round(ours_cpu, 1),
        "speedup_vs_baycomp": round(seconds / ours_seconds, 1),
        "p_baycomp": [
            round(float(v), 3) for v in np.bincount(theta.argmax(1), minlength=3) / len(theta)
        ],
        "p_ours": [round(float(row[k]), 3) for k in ("p_left", "p_rope", "p_right")],
        "ours_diagnostics_ok": bool(ours.diagnostics.ok),
        "note": "rf vs svm, 132 data sets x 4 folds; baycomp 4 chains x 1500 draws (+1000 "
        "warm-up), ours at its defaults, same run (baycomp's chains may run in processes "
        "that outlive the call: its cpu_seconds can be an undercount)",
        **load,
    }


def _baycomp(sim, ours_seconds: float) -> dict[str, Any]:
    """baycomp's HierarchicalTest on the simulated pair: 4 chains x 1500 draws, timed once
    after a short run that builds (and caches) its Stan program."""
    import tempfile

    import baycomp
    import numpy as np

    wide = sim.pivot_table(index=["dataset", "run", "fold"], columns="algorithm", values="score")
    x, y = (wide[k].to_numpy().reshape(54, 100) for k in ("a", "b"))
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)  # baycomp pickles its last sample into the working directory
        try:
            baycomp.HierarchicalTest.sample(x[:3], y[:3], 0.01, runs=10, chains=1, nsamples=10)
            os.remove("last-sample.pickle")
            start = time.perf_counter()
            theta = baycomp.HierarchicalTest.sample(x, y, 0.01, runs=10, chains=4, nsamples=1500)
            seconds = time.perf_counter() - start
        finally:
            os.chdir(here)
    ours = hierarchical(sim, a="a", b="b", **LONG).table.iloc[0]
    return {
        "seconds": round(seconds, 1),
        "speedup_vs_baycomp": round(seconds / ours_seconds, 1),
        "p_baycomp": [
            round(float(v), 3) for v in np.bincount(theta.argmax(1), minlength=3) / len(theta)
        ],
        "p_ours": [round(float(ours[k]), 3) for k in ("p_left", "p_rope", "p_right")],
        "note": "baycomp 4 chains x 1500 draws (+1000 warm-up) on the same pair, same run",
    }


if __name__ == "__main__":
    main()
