"""The summary's cost at many algorithms, against the fit's and against a baseline
checkout's summary, as ratios measured in one run (these machines are shared: the absolute
seconds mean little, the ratios more).

Per case (simulated results of n algorithms x d data sets, one score each: the browser
tests' simulation, as in ``bench_conditional.py``), each measurement in a fresh Python
process, so that its peak memory is its own:

- ``fixed``: ``bbt.fit(draws="fixed")`` on the numpy engine, then its first ``summary()``:
  the CPU seconds of each, the peak resident memory after the fit and after the summary,
  and the pairs each look of the conditional estimates computed; with this checkout's code
  and, given ``--baseline REF``, with the package as it was at that commit (exported by
  ``git archive``), the two interleaved;
- ``default``: ``bbt.fit()`` (``draws="auto"``, what users get) and its summary, with this
  checkout's code: CPU seconds and peak memory, the issue's targets.

Recorded per case: the CPU seconds, summary / fit, this summary / the baseline's, the largest
difference between the two summaries' numbers and whether their claims are the same.

Run: ``python benchmarks/bench_summary_scale.py [--baseline REF] [--cases 100x132,200x132]``;
results go to ``benchmarks/results/summary_scale.json``.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _machine import cpu_seconds, machine  # noqa: E402  (beside this script)

CASES = ((100, 132), (200, 132))


def _worker(root: str, n_alg: int, n_datasets: int, draws: str, table_path: str) -> None:
    """In a fresh process: fit and summarise one case with the package under ``root``,
    print the measurements as JSON and pickle the summary to ``table_path``."""
    import resource
    import warnings

    sys.path.insert(0, str(REPO / "tests" / "browser"))
    sys.path.insert(0, root)
    from simulated import simulated_results

    import bbt_widget as bbt

    assert Path(bbt.__file__).resolve().is_relative_to(Path(root).resolve()), bbt.__file__

    def peak_mb() -> float:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux

    layout = {"dataset": "dataset", "algorithm": "algorithm", "score": "score"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # a small fit and summary first: what a process imports on its first fit is not
        # the case's cost
        small = simulated_results(6, 10, 1).drop(columns="fold")
        bbt.fit(small, **layout, draws=draws).summary()
        data = simulated_results(n_alg, n_datasets, 1).drop(columns="fold")
        start = cpu_seconds()
        fitted = bbt.fit(data, **layout, draws=draws)
    middle = cpu_seconds()
    after_fit = peak_mb()
    table = fitted.summary()
    end = cpu_seconds()
    conditional = fitted.conditional_draws
    looked = conditional.looked() if conditional is not None else {}
    with open(table_path, "wb") as f:
        pickle.dump(table, f)
    print(
        json.dumps(
            {
                "fit_cpu_seconds": round(middle - start, 3),
                "summary_cpu_seconds": round(end - middle, 3),
                "summary_over_fit": round((end - middle) / (middle - start), 3),
                "peak_mb_after_fit": round(after_fit),
                "peak_mb_after_summary": round(peak_mb()),
                "chains": int(fitted.draws.params["beta"].shape[0]),
                "kernel": fitted.draws.info.get("kernel"),
                "pairs_looked_at": {look: len(p) for look, p in looked.items()},
                "unsettled": len(fitted.unsettled()),
            }
        )
    )


def _run(root: Path, n_alg: int, n_datasets: int, draws: str, table: Path) -> dict[str, Any]:
    """One measurement in a fresh interpreter."""
    command = [sys.executable, __file__, "--worker", str(root), str(n_alg), str(n_datasets)]
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [*command, draws, str(table)], env=env, capture_output=True, text=True, check=True
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _compared(ours: Path, theirs: Path) -> dict[str, Any]:
    """The largest difference between two summaries' numbers, and whether their claims
    agree."""
    import numpy as np

    with open(ours, "rb") as f:
        a = pickle.load(f)
    with open(theirs, "rb") as f:
        b = pickle.load(f)
    numbers = [c for c in a.columns if a[c].dtype.kind == "f"]
    words = [c for c in a.columns if c not in numbers]
    return {
        "largest_difference": float(
            np.nanmax(np.abs(a[numbers].to_numpy() - b[numbers].to_numpy()))
        ),
        "same_claims": bool((a[words] == b[words]).all().all()),
    }


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["--worker"]:
        root, n_alg, n_datasets, draws, table = args[1:]
        _worker(root, int(n_alg), int(n_datasets), draws, table)
        return
    baseline = args[args.index("--baseline") + 1] if "--baseline" in args else None
    cases = CASES
    if "--cases" in args:
        spec = args[args.index("--cases") + 1]
        cases = tuple(tuple(int(v) for v in c.split("x")) for c in spec.split(","))  # type: ignore[misc]
    target = REPO / "benchmarks" / "results" / "summary_scale.json"
    record: dict[str, Any] = {"machine": machine(), "baseline": baseline, "cases": {}}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        roots = {"current": REPO}
        if baseline is not None:
            roots["baseline"] = work / "baseline"
            roots["baseline"].mkdir()
            archive = subprocess.run(
                ["git", "-C", str(REPO), "archive", baseline, "bbt_widget", "stan"],
                capture_output=True,
                check=True,
            )
            subprocess.run(
                ["tar", "-x", "-C", str(roots["baseline"])], input=archive.stdout, check=True
            )
        for n_alg, n_datasets in cases:
            case: dict[str, Any] = {"pairs": n_alg * (n_alg - 1) // 2}
            for way, root in roots.items():
                table = work / f"{way}-{n_alg}.pkl"
                case[f"fixed, {way}"] = _run(root, n_alg, n_datasets, "fixed", table)
                print(n_alg, n_datasets, way, case[f"fixed, {way}"], flush=True)
            if baseline is not None:
                ours, theirs = case["fixed, current"], case["fixed, baseline"]
                case["current_over_baseline_summary"] = round(
                    ours["summary_cpu_seconds"] / theirs["summary_cpu_seconds"], 3
                )
                case["summaries"] = _compared(
                    work / f"current-{n_alg}.pkl", work / f"baseline-{n_alg}.pkl"
                )
            default = _run(REPO, n_alg, n_datasets, "auto", work / f"auto-{n_alg}.pkl")
            default["fit_and_summary_cpu_seconds"] = round(
                default["fit_cpu_seconds"] + default["summary_cpu_seconds"], 3
            )
            case["default, current"] = default
            print(n_alg, n_datasets, "default", default, flush=True)
            record["cases"][f"simulated ({n_alg} x {n_datasets})"] = case
    record["load_average_at_end"] = os.getloadavg()
    target.write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(record, indent=2))


if __name__ == "__main__":
    main()
