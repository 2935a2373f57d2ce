"""The group model's group deviations non-centred (``stan/bbt_groups.stan``) against centred.

``bbt_groups.stan`` samples ``beta_group = beta + tau * z`` with ``z ~ std_normal()``
(non-centred). The centred alternative samples ``beta_group ~ normal(beta, tau)`` directly;
it is built here from the same program text with the parameters and the prior of the group
deviations swapped, nothing else changed. Both are compiled and sampled by PyStan itself
(``stan.build``, the same path for both, 4 chains x 1000 + 1000, the same seed), on the
shipped PMLB results (16 algorithms x 132 data sets) in the 4 families of
``bench_groups.with_families``, interleaved over ``--repeats`` rounds after one untimed run
of each (PyStan's first sampling in a process pays one-off costs). The same seed gives the same
draws in every round, so the rounds time the sampler only.

Recorded per variant: the sampling time (median; compile excluded), the smallest bulk and
tail ESS over sigma, tau, beta and beta_group, that ESS per second of the median time, the
largest R-hat, the divergent transitions and the posterior median of tau.

Run: ``python benchmarks/bench_group_centring.py [--repeats N]
[--out benchmarks/results/group_centring.json]``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
from bench_groups import with_families  # noqa: E402

from bbt_widget.core import convergence  # noqa: E402
from bbt_widget.engines import prepare_data, stan_program  # noqa: E402
from bbt_widget.fitting import prepare_fit  # noqa: E402

#: The non-centred lines of bbt_groups.stan and their centred replacements.
CENTRED = {
    "  matrix[n_alg, n_groups] z;                        // non-centred group deviations\n": (
        "  vector[n_alg * n_groups] beta_group;              // centred group abilities\n"
    ),
    "  vector[n_alg * n_groups] beta_group = to_vector(rep_matrix(beta, n_groups) + tau * z);\n": (
        ""
    ),
    "  to_vector(z) ~ std_normal();\n": (
        "  beta_group ~ normal(to_vector(rep_matrix(beta, n_groups)), tau);\n"
    ),
}
PARAMETERS = ("sigma", "tau", "beta", "beta_group")
SEED = 1


def centred_program() -> str:
    """``bbt_groups.stan`` (includes expanded) with centred group deviations."""
    text = stan_program("bbt_groups")
    for old, new in CENTRED.items():
        if old not in text:
            raise SystemExit(f"bbt_groups.stan changed: cannot find {old.strip()!r}")
        text = text.replace(old, new)
    return text


def build(program: str, data: dict[str, Any]) -> Any:
    """``stan.build`` in a scratch directory (it leaves ``build/`` there), quietly."""
    import stan

    here = os.getcwd()
    with tempfile.TemporaryDirectory() as scratch:
        os.chdir(scratch)
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                return stan.build(program, data=data, random_seed=SEED)
        finally:
            os.chdir(here)


def run(model: Any) -> dict[str, Any]:
    """One fit: its sampling time and diagnostics."""
    start = time.perf_counter()
    with contextlib.redirect_stderr(io.StringIO()):
        fit = model.sample(num_chains=4, num_warmup=1000, num_samples=1000)
    seconds = time.perf_counter() - start
    chains = fit.num_chains
    worst = {"ess_bulk": np.inf, "ess_tail": np.inf, "rhat": 0.0}
    for name in PARAMETERS:
        flat = np.atleast_2d(fit[name])  # (elements, draws * chains), chains interleaved
        for row in flat.reshape(-1, flat.shape[-1]):
            draws = row.reshape(-1, chains).T  # (chains, draws)
            worst["ess_bulk"] = min(worst["ess_bulk"], float(convergence.ess_bulk(draws)))
            worst["ess_tail"] = min(worst["ess_tail"], float(convergence.ess_tail(draws)))
            worst["rhat"] = max(worst["rhat"], float(convergence.rhat(draws)))
    return {
        "seconds": seconds,
        **worst,
        "divergences": int(np.sum(fit["divergent__"])),
        "tau_median": float(np.median(fit["tau"])),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/group_centring.json")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    job = prepare_fit(with_families(), dataset="db", group="family", ties="spread", size=(4, 1000))
    data = prepare_data("bbt_groups", job.stan_data)
    models = {
        "non_centred": build(stan_program("bbt_groups"), data),
        "centred": build(centred_program(), data),
    }
    for model in models.values():
        run(model)  # untimed: the first sampling in this process
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in models}
    for _ in range(args.repeats):
        for name, model in models.items():
            runs[name].append(run(model))
            print(name, {k: round(v, 3) for k, v in runs[name][-1].items()})
    base = statistics.median(r["seconds"] for r in runs["non_centred"])
    rows = {}
    for name, results in runs.items():
        seconds = statistics.median(r["seconds"] for r in results)
        ess = min(r["ess_bulk"] for r in results)
        rows[name] = {
            "median_s": round(seconds, 3),
            "ratio_to_non_centred": round(seconds / base, 3),
            "runs_s": [round(r["seconds"], 3) for r in results],
            "min_ess_bulk": round(ess, 1),
            "min_ess_tail": round(min(r["ess_tail"] for r in results), 1),
            "min_ess_bulk_per_s": round(ess / seconds, 2),
            "max_rhat": round(max(r["rhat"] for r in results), 4),
            "divergences": [r["divergences"] for r in results],
            "tau_median": round(statistics.median(r["tau_median"] for r in results), 3),
        }
    report = {
        "benchmark": "bench_group_centring",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "engine": "pystan (stan.build, both variants)",
        "data": "pmlb16 (16 algorithms x 132 data sets x 4 folds), 4 families by name hash",
        "repeats": args.repeats,
        "note": __doc__.split("\n\n")[1].replace("\n", " "),
        "variants": rows,
    }
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
