"""Data sets in groups: ``bbt.fit(..., group=...)`` with 4 families against the plain fit.

The shipped PMLB results (16 algorithms x 132 data sets, 4 folds) have no families; each data
set is assigned one deterministically, family ``"F<k>"`` with k = the first byte of the
SHA-256 of its name modulo 4, so every run (and every machine) has the same groups. In the same
process, interleaved over ``--repeats`` rounds: the plain ``bbt.fit`` and the grouped fit of
the same results (both with the default 4 chains x 1000 + 1000). Ratios are of medians, to the
plain fit. Also recorded: the family sizes, the grouped fit's diagnostics and posterior median
of tau, and how many pairs' weak claims hold in every family or change between families.

Run: ``python benchmarks/bench_groups.py [--repeats N] [--out benchmarks/results/groups.json]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import sys
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from bench_compare_metrics import interleaved_ratios  # noqa: E402

import bbt_widget as bbt  # noqa: E402

N_FAMILIES = 4


def family(name: str) -> str:
    """The family of a data set: the first byte of the SHA-256 of its name, modulo 4."""
    return f"F{hashlib.sha256(name.encode()).digest()[0] % N_FAMILIES}"


def with_families() -> pd.DataFrame:
    """The PMLB results (wide by fold) with a ``family`` column."""
    wide = bbt.datasets.load_pmlb16()
    return wide.assign(family=wide["db"].map(family))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/groups.json")
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # the diagnostics are recorded below
    data = with_families()
    plain_data = data.drop(columns="family")
    bbt.engines.compile_models(("bbt", "bbt_groups"))

    runs = {
        "plain_fit": lambda: bbt.fit(plain_data, dataset="db"),
        "group_fit": lambda: bbt.fit(data, dataset="db", group="family"),
    }
    rows = interleaved_ratios(runs, args.repeats)
    grouped = bbt.fit(data, dataset="db", group="family")
    diag = grouped.diagnostics()
    status = grouped.group_claims("weak")["status"].value_counts()
    report = {
        "benchmark": "bench_groups",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "engine": grouped.engine,
        "data": "pmlb16 (16 algorithms x 132 data sets x 4 folds), 4 families by name hash",
        "repeats": args.repeats,
        "note": __doc__.split("\n\n")[1].replace("\n", " "),
        "timings": rows,
        "families": {g: len(d) for g, d in grouped.group_datasets.items()},
        "group_fit": {
            "diagnostics_ok": bool(diag.ok),
            "max_rhat": round(float(diag.max_rhat), 4),
            "min_ess_bulk": round(float(diag.min_ess_bulk), 1),
            "divergences": int(diag.divergences),
            "tau_median": round(float(np.median(grouped.draws.params["tau"])), 3),
            "weak_claims": {k: int(v) for k, v in status.items()},
        },
    }
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
