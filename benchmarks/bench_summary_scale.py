"""The summary's cost at many algorithms, against the fit's, as ratios measured in one run
(these machines are shared: the absolute seconds mean little, the ratios more).

Per case (simulated results of 100 algorithms x 30 data sets, one score each, as in
``bench_conditional.py``), one ``draws="fixed"`` fit on the numpy engine, then its first
``summary()`` on fresh copies of the fitted result, ``REPEATS`` times each way, interleaved:

- ``current``: the summary as shipped;
- ``direct``: the same summary with the conditional estimates' log-density evaluated as it
  was before its exponentials were factored by slope (``e^eta`` and ``log1p`` per draw, node
  and game: :func:`_direct_log_density`), the reference the new one is measured against.

Recorded: CPU seconds of the fit, of each summary, and of the conditional estimates' part
(the time in ``_pair_law``), the ratios summary / fit and current / direct, and the largest
difference between the two summaries' numbers (their decisions must be the same).

``--settling``: instead, the default fit (``draws="auto"``) against a ``draws="fixed"`` one of
simulated 50 algorithms x 132 data sets (seed 1), fit and summary CPU seconds, each with the
current log-density and the direct one (how much of settling's cost the conditional estimates
were), merged into the same file under ``"settling"``.

Run: ``python benchmarks/bench_summary_scale.py [--settling]``; results go to
``benchmarks/results/summary_scale.json``.
"""

from __future__ import annotations

import copy
import json
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO / "tests" / "browser"))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from _machine import machine  # noqa: E402  (beside this script)
from simulated import simulated_results  # noqa: E402  (the browser tests' simulation)

import bbt_widget as bbt  # noqa: E402
from bbt_widget.engines import _conditional  # noqa: E402
from bbt_widget.engines._design import softplus  # noqa: E402

REPEATS = 3
CASES = ((100, 30),)


def _direct_log_density(
    nodes: np.ndarray,
    shift: np.ndarray,
    slope: np.ndarray,
    counts: np.ndarray,
    pull: float,
    prior: np.ndarray,
) -> np.ndarray:
    """The reference: ``log1p(e^eta)`` per draw, node and game (the earlier evaluation)."""
    out = (pull - prior[:, None] * nodes / 2) * nodes
    step = max(1, _conditional._CACHE_FLOATS // max(nodes.shape[1] * len(counts), 1))
    for start in range(0, len(nodes), step):
        rows = slice(start, start + step)
        eta = nodes[rows, :, None] * slope
        eta += shift[rows, None, :]
        if eta.max() < 700.0:
            np.exp(eta, out=eta)
            np.log1p(eta, out=eta)
        else:
            eta = softplus(eta)
        out[rows] -= eta @ counts
    return out


def _summary(
    fitted: bbt.BBTResult, direct: bool
) -> tuple[pd.DataFrame, float, float, dict[str, int]]:
    """The first summary of a fresh copy of ``fitted``: the table, its CPU seconds, the CPU
    seconds of its conditional estimates and the pairs each look computed."""
    result = copy.deepcopy(fitted)
    shipped, pair_law = _conditional._log_density, _conditional._pair_law
    spent = [0.0]

    def timed(*args: Any) -> Any:
        start = time.process_time()
        try:
            return pair_law(*args)
        finally:
            spent[0] += time.process_time() - start

    _conditional._pair_law = timed
    if direct:
        _conditional._log_density = _direct_log_density
    try:
        start = time.process_time()
        table = result.summary()
        cpu = time.process_time() - start
        looks = result.conditional_draws.looked() if result.conditional_draws else {}
        return table, cpu, spent[0], {look: len(p) for look, p in looks.items()}
    finally:
        _conditional._log_density, _conditional._pair_law = shipped, pair_law


def _case(n_alg: int, n_datasets: int) -> dict[str, Any]:
    data = simulated_results(n_alg, n_datasets, 1).drop(columns="fold")
    layout = {"dataset": "dataset", "algorithm": "algorithm", "score": "score"}
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = bbt.fit(data, **layout, draws="fixed")
    fit_cpu = time.process_time() - start
    runs: dict[str, dict[str, list[float]]] = {
        way: {"summary": [], "conditional": []} for way in ("current", "direct")
    }
    tables: dict[str, pd.DataFrame] = {}
    looked: dict[str, int] = {}
    for _ in range(REPEATS):
        for way in ("current", "direct"):
            table, cpu, conditional, looked = _summary(fitted, way == "direct")
            runs[way]["summary"].append(cpu)
            runs[way]["conditional"].append(conditional)
            tables[way] = table
    numbers = [c for c in tables["current"].columns if tables["current"][c].dtype.kind == "f"]
    words = [c for c in tables["current"].columns if c not in numbers]
    median = {w: {k: statistics.median(v) for k, v in r.items()} for w, r in runs.items()}
    return {
        "pairs": n_alg * (n_alg - 1) // 2,
        "kernel": fitted.draws.info.get("kernel"),
        "fit_cpu_seconds": round(fit_cpu, 3),
        "summary_cpu_seconds": {w: [round(x, 3) for x in r["summary"]] for w, r in runs.items()},
        "conditional_cpu_seconds": {
            w: [round(x, 3) for x in r["conditional"]] for w, r in runs.items()
        },
        "summary_over_fit": {w: round(m["summary"] / fit_cpu, 3) for w, m in median.items()},
        "current_over_direct": {
            "summary": round(median["current"]["summary"] / median["direct"]["summary"], 3),
            "conditional": round(
                median["current"]["conditional"] / median["direct"]["conditional"], 3
            ),
        },
        "largest_difference": float(
            np.nanmax(
                np.abs(tables["current"][numbers].to_numpy() - tables["direct"][numbers].to_numpy())
            )
        ),
        "same_decisions": bool((tables["current"][words] == tables["direct"][words]).all().all()),
        "pairs_looked_at": looked,
    }


def _settling(n_alg: int = 50, n_datasets: int = 132) -> dict[str, Any]:
    """CPU seconds of fit and summary, ``draws="auto"`` and ``"fixed"``, each with the
    current and the direct log-density (interleaved), and the chains "auto" drew."""
    data = simulated_results(n_alg, n_datasets, 1).drop(columns="fold")
    layout = {"dataset": "dataset", "algorithm": "algorithm", "score": "score"}
    out: dict[str, Any] = {"algorithms": n_alg, "data_sets": n_datasets, "seed": 1}
    shipped = _conditional._log_density
    for way in ("current", "direct"):
        for mode in ("fixed", "auto"):
            if way == "direct":
                _conditional._log_density = _direct_log_density
            try:
                start = time.process_time()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fitted = bbt.fit(data, **layout, draws=mode)
                middle = time.process_time()
                fitted.summary()
                end = time.process_time()
            finally:
                _conditional._log_density = shipped
            out[f"{way} {mode}"] = {
                "fit_cpu_seconds": round(middle - start, 3),
                "summary_cpu_seconds": round(end - middle, 3),
                "chains": int(fitted.draws.params["beta"].shape[0]),
                "unsettled": len(fitted.unsettled()),
            }
        total = {
            m: sum(v for k, v in out[f"{way} {m}"].items() if "seconds" in k)
            for m in ("fixed", "auto")
        }
        out[f"{way} auto_over_fixed_cpu"] = round(total["auto"] / total["fixed"], 3)
    return out


def main() -> None:
    target = REPO / "benchmarks" / "results" / "summary_scale.json"
    record = json.loads(target.read_text()) if target.exists() else {}
    load = machine()
    if "--settling" in sys.argv[1:]:
        record["settling"] = {"machine": load, **_settling()}
        record["settling"]["load_average_at_end"] = machine()["load_average_at_start"]
        print(json.dumps(record["settling"], indent=2))
    else:
        results = {f"simulated ({n} x {d})": _case(n, d) for n, d in CASES}
        record |= {"machine": load, "load_average_at_end": machine()["load_average_at_start"]}
        record["cases"] = results
        print(json.dumps(results, indent=2))
    target.write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    main()
