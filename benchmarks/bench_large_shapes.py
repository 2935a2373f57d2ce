"""Time and peak memory of the large shapes users hit, each in a fresh process, or the refusal.

Each case runs as its own process under ``nice -n 19``, ``timeout`` and ``/usr/bin/time -v``
(peak resident memory, wall time, exit status); its data are simulated with numpy and written
as CSV (132 data sets of 4 folds for the wide ones). A case refused by the size guards
records the refusal's message. The machine is shared: the load average is recorded before
and after each case, and the cases run one at a time.

Run: ``python benchmarks/bench_large_shapes.py [--only NAME ...] [--timeout SECONDS]``.
Results are merged into ``benchmarks/results/large_shapes.json`` (a case run again replaces
its entry).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
import pandas as pd
from _machine import machine

RESULTS = Path(__file__).parent / "results" / "large_shapes.json"
RNG = np.random.default_rng(2026)


def _wide(n_alg: int, n_datasets: int = 132, folds: int = 4, groups: int = 0) -> pd.DataFrame:
    """Accuracy-like scores: algorithm skill plus data-set difficulty plus noise."""
    skill = np.linspace(0, 0.1, n_alg)
    rows = n_datasets * folds
    base = RNG.uniform(0.6, 0.85, n_datasets).repeat(folds)
    scores = np.clip(base[:, None] + skill + RNG.normal(0, 0.03, (rows, n_alg)), 0, 1)
    df = pd.DataFrame(scores.round(4), columns=[f"alg{i:03d}" for i in range(n_alg)])
    df.insert(0, "db", [f"ds{d:05d}" for d in range(n_datasets) for _ in range(folds)])
    if groups:
        df.insert(1, "family", [f"fam{(i // folds) % groups:03d}" for i in range(rows)])
    return df


def _long_metrics(n_datasets: int, n_alg: int = 5) -> pd.DataFrame:
    """One row per (data set, algorithm) with two metrics: acc (higher) and time (lower)."""
    skill = np.linspace(0, 0.1, n_alg)
    acc = np.clip(RNG.uniform(0.6, 0.85, (n_datasets, 1)) + skill, 0, 1)
    acc = acc + RNG.normal(0, 0.03, acc.shape)
    cost = RNG.lognormal(0, 0.5, (n_datasets, n_alg)) * (1 + np.arange(n_alg))
    return pd.DataFrame(
        {
            "db": np.repeat([f"ds{d:05d}" for d in range(n_datasets)], n_alg),
            "algorithm": np.tile([f"alg{i}" for i in range(n_alg)], n_datasets),
            "acc": acc.ravel().round(4),
            "time": cost.ravel().round(3),
        }
    )


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def _cases(folder: Path) -> dict[str, tuple[str, list[str]]]:
    """name -> (what it is, the command); the inputs are written on demand by ``_write``."""
    out = str(folder / "report.html")
    cli = [sys.executable, "-m", "bbt_widget.cli", "report", "-o", out]
    ranking = (
        "import pandas as pd, bbt_widget as bbt\n"
        "df = pd.read_csv({path!r})\n"
        "res = bbt.ranking_model(df, dataset='db', model='mallows')\n"
        "print(res.diagnostics)\n"
    )
    return {
        "report_51_algorithms": (
            "bbt-widget report, 51 algorithms x 132 data sets (4 folds)",
            [*cli, "--dataset", "db", str(folder / "wide51.csv")],
        ),
        "report_500_algorithms": (
            "bbt-widget report, 500 algorithms x 132 data sets (4 folds)",
            [*cli, "--dataset", "db", str(folder / "wide500.csv")],
        ),
        "metrics_report_20000_datasets": (
            "bbt-widget report --score acc --score time, 5 algorithms x 20,000 data sets",
            [
                *cli,
                "--dataset",
                "db",
                "--algorithm",
                "algorithm",
                "--score",
                "acc",
                "--score",
                "time",
                "--lower-is-better",
                "time",
                str(folder / "metrics20000.csv"),
            ],
        ),
        "group_model_200_groups": (
            "bbt-widget report --group family, 20 algorithms, 200 groups of 2 data sets",
            [*cli, "--dataset", "db", "--group", "family", str(folder / "groups200.csv")],
        ),
        **{
            f"mallows_{n}_algorithms": (
                f"bbt.ranking_model(model='mallows'), {n} algorithms x 132 data sets",
                _python(ranking.format(path=str(folder / f"wide{n}.csv"))),
            )
            for n in (100, 200, 500)
        },
        "hierarchical_pairs_500_algorithms": (
            "bbt.baselines.hierarchical_pairs, 500 algorithms (124,750 pairs) x 132 data sets",
            _python(
                "import pandas as pd\n"
                "from bbt_widget.baselines import hierarchical_pairs\n"
                f"df = pd.read_csv({str(folder / 'wide500.csv')!r})\n"
                "df['fold'] = df.groupby('db').cumcount()\n"
                "res = hierarchical_pairs(df, dataset='db', fold='fold', rho=0.25)\n"
                "print(len(res.table))\n"
            ),
        ),
    }


def _write(name: str, folder: Path) -> None:
    """Write the inputs ``name`` needs (once)."""
    wanted = {
        "report_51_algorithms": ["wide51.csv"],
        "report_500_algorithms": ["wide500.csv"],
        "metrics_report_20000_datasets": ["metrics20000.csv"],
        "group_model_200_groups": ["groups200.csv"],
        "mallows_100_algorithms": ["wide100.csv"],
        "mallows_200_algorithms": ["wide200.csv"],
        "mallows_500_algorithms": ["wide500.csv"],
        "hierarchical_pairs_500_algorithms": ["wide500.csv"],
    }[name]
    for file in wanted:
        path = folder / file
        if path.exists():
            continue
        if file.startswith("wide"):
            df = _wide(int(re.sub(r"\D", "", file)))
        elif file.startswith("metrics"):
            df = _long_metrics(20_000)
        else:
            df = _wide(20, n_datasets=400, folds=4, groups=200)
        df.to_csv(path, index=False)


def _time_v(stderr: str, key: str) -> str | None:
    found = re.search(rf"^\s*{re.escape(key)}: (.*)$", stderr, re.MULTILINE)
    return found.group(1).strip() if found else None


def run_case(name: str, what: str, command: list[str], timeout: int) -> dict[str, Any]:
    """Run one case as a fresh low-priority process; its time, peak memory and outcome."""
    load_before = os.getloadavg()
    start = time.perf_counter()
    done = subprocess.run(
        # time outside timeout: a case killed at its timeout still gives its peak memory
        ["nice", "-n", "19", "/usr/bin/time", "-v", "timeout", str(timeout), *command],
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    stderr = done.stderr
    peak_kb = _time_v(stderr, "Maximum resident set size (kbytes)")
    own = stderr.split("\tCommand being timed:")[0].strip().splitlines()
    return {
        "case": name,
        "what": what,
        "exit_status": done.returncode,
        "timed_out": "exit status 124" in stderr or done.returncode == 124,
        "wall_seconds": round(wall, 1),
        "peak_memory_gb": round(int(peak_kb) / 2**20, 2) if peak_kb else None,
        "cpu_seconds": _cpu(stderr),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "last_output": [line[:400] for line in own[-6:]],
    }


def _cpu(stderr: str) -> float | None:
    user = _time_v(stderr, "User time (seconds)")
    system = _time_v(stderr, "System time (seconds)")
    return round(float(user) + float(system), 1) if user and system else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="case names (default: all)")
    parser.add_argument("--timeout", type=int, default=1200, help="seconds per case")
    parser.add_argument("--folder", type=Path, default=None, help="where the inputs go")
    args = parser.parse_args()
    folder = args.folder or Path(tempfile.mkdtemp(prefix="bbt-large-shapes-"))
    folder.mkdir(parents=True, exist_ok=True)
    cases = _cases(folder)
    names = args.only or list(cases)
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {"cases": {}}
    results["machine"] = machine()
    for name in names:
        _write(name, folder)
        what, command = cases[name]
        print(f"{name}: {what}", file=sys.stderr, flush=True)
        case = run_case(name, what, command, args.timeout)
        case["timeout_seconds"] = args.timeout
        results["cases"][name] = case
        print(json.dumps(case, indent=1), file=sys.stderr, flush=True)
        RESULTS.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
