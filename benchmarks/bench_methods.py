"""Time of the other Bayesian methods (issue 11), as ratios to a BBT fit in the same run.

Cases, warm (models compiled; the first call of each is discarded), 4 chains x 1000 + 1000:

* ``hierarchical``: :func:`bbt_widget.baselines.hierarchical` on one pair, 54 data sets x
  100 results (10 runs of 10-fold cross-validation, the size of paper 001's experiment),
  simulated from the model (``_simulate.simulate_cv_results``). Target: <= 20 s per pair on
  this machine (the paper: about 3 minutes with its Stan program).
* ``hierarchical_pmlb16``: rf vs svm on ``pmlb16_4fold.csv`` (132 data sets x 4 folds).
* ``correlated_ttest``: every data set of the 54 x 100 case (closed form, no Stan).
* ``plackett_luce``: :func:`bbt_widget.ranking_model` on ``pmlb16_4fold.csv`` (16 x 132).

The baseline is :func:`bbt_widget.fit` (BT model, spread ties) on the same results, measured
right before in the same process, so ``ratio`` survives a noisy, shared machine. Results go
to ``benchmarks/results/methods.json``.

Run: ``python benchmarks/bench_methods.py [--repeat 2] [--engine pystan]``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import bbt_widget as bbt  # noqa: E402
from bbt_widget import engines  # noqa: E402
from bbt_widget.baselines import correlated_ttest, hierarchical  # noqa: E402
from bbt_widget.baselines._simulate import simulate_cv_results  # noqa: E402

TARGET_S = {"hierarchical": 20.0}
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
    args = parser.parse_args()
    engine = engines.resolve_engine(args.engine)
    warnings.simplefilter("ignore")  # diagnostics are reported in the results instead

    sim = simulate_cv_results(54, 10, 10, mu0=0.01, sigma0=0.01, sigma=(0.01, 0.05), seed=0)
    flat = sim.assign(cv=sim["run"] * 10 + sim["fold"])
    pmlb = bbt.datasets.load_pmlb16()
    cases: dict[str, dict[str, Any]] = {}

    def case(name: str, baseline, method, note: str, diag=None) -> None:
        base_s, _ = _timed(baseline, args.repeat)
        method_s, out = _timed(method, args.repeat)
        cases[name] = {
            "seconds": round(method_s, 3),
            "baseline_bbt_fit_seconds": round(base_s, 3),
            "ratio": round(method_s / base_s, 2),
            "target_s": TARGET_S.get(name),
            "meets_target": method_s <= TARGET_S[name] if name in TARGET_S else None,
            "note": note,
        }
        if diag is not None:
            cases[name]["diagnostics"] = diag(out)
        print(name, cases[name], flush=True)

    def hier_diag(res) -> dict[str, Any]:
        d = res.diagnostics
        return {
            "ok": d.ok,
            "max_rhat": round(d.max_rhat, 3),
            "divergences": d.divergences,
            "min_ess_bulk": round(d.min_ess_bulk),
        }

    fit_sim = lambda: bbt.fit(  # noqa: E731
        flat, dataset="dataset", algorithm="algorithm", score="score", fold="cv", engine=engine
    )
    case(
        "hierarchical",
        fit_sim,
        lambda: hierarchical(sim, a="a", b="b", engine=engine, **LONG),
        "one pair, 54 data sets x 100 results (10 x 10-fold), simulated; baseline: BBT fit "
        "of the same 2 algorithms",
        hier_diag,
    )
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
        lambda: hierarchical(pmlb, a="rf", b="svm", dataset="db", rho=0.25, engine=engine),
        "rf vs svm, 132 data sets x 4 folds; baseline: BBT fit of all 16 algorithms",
        hier_diag,
    )
    case(
        "plackett_luce",
        fit_pmlb,
        lambda: bbt.ranking_model(pmlb, dataset="db", engine=engine),
        "16 algorithms x 132 data sets (ties split); baseline: BBT fit of the same results",
    )
    out = {
        "engine": engine,
        "machine": f"{platform.machine()}, {platform.python_version()}",
        "repeat": args.repeat,
        "cases": cases,
    }
    path = REPO / "benchmarks" / "results" / "methods.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
