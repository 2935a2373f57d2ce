"""Reference numbers of baycomp's ``HierarchicalTest`` for ``test_hierarchical.py``.

baycomp (Benavoli, Corani, Demsar and Zaffalon's own Python package) builds its Stan program
with PyStan and samples 54 data sets x 100 fold results (10 runs of 10-fold
cross-validation, the shape of Benavoli et al. 2017's Table 12) for minutes, too long for a
test run. This script runs it once on the simulated cases of ``CASES`` and writes
``data/baycomp_hierarchical.json``: baycomp's P(left), P(rope), P(right) (the shares of
posterior draws in which each region is the most probable for the next data set, baycomp's
``Posterior.probs``) and the mean thetas. The test fits our model to the same simulated
data and compares.

Run (minutes; baycomp writes ``last-sample.pickle`` into the working directory, so run it
from a scratch directory): ``python tests/stan/baycomp_reference.py [--nsamples 5000]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bbt_widget.baselines._simulate import simulate_cv_results  # noqa: E402

OUT = Path(__file__).resolve().parent / "data" / "baycomp_hierarchical.json"
ROPE = 0.01
RUNS, FOLDS = 10, 10
#: Simulated cases: keyword arguments of ``simulate_cv_results`` (54 data sets x 10 runs x 10
#: folds) and how many data sets get the very same scores for both algorithms (sd 0).
CASES = {
    "near_rope": dict(mu0=0.01, sigma0=0.01, sigma=(0.01, 0.05), seed=0, identical=0),
    "heavy_tails_ties": dict(
        mu0=0.004, sigma0=0.008, nu=3, sigma=(0.005, 0.04), seed=1, identical=6
    ),
    "clear_winner": dict(mu0=-0.03, sigma0=0.02, sigma=(0.01, 0.05), seed=2, identical=0),
}


def case_data(name: str) -> pd.DataFrame:
    """The long results of case ``name``: ``dataset, run, fold, algorithm, score``."""
    kw = dict(CASES[name])
    identical = kw.pop("identical")
    data = simulate_cv_results(54, RUNS, FOLDS, **kw)
    same = data["dataset"].isin([f"d{i:02d}" for i in range(identical)])
    base = data.loc[same & (data["algorithm"] == "a"), "score"].to_numpy()
    data.loc[same & (data["algorithm"] == "b"), "score"] = base
    return data


def matrices(data: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """baycomp's input: one row per data set, the 100 fold scores of a and of b."""
    wide = data.pivot_table(index=["dataset", "run", "fold"], columns="algorithm", values="score")
    q = wide.index.get_level_values("dataset").nunique()
    return (
        wide["a"].to_numpy().reshape(q, RUNS * FOLDS),
        wide["b"].to_numpy().reshape(q, RUNS * FOLDS),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nsamples", type=int, default=5000, help="draws per chain")
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--cases", nargs="*", default=list(CASES))
    args = parser.parse_args()
    import baycomp

    import stan

    build = stan.build
    stan.build = lambda code, data=None: build(code, data=data, random_seed=1)
    out = json.loads(OUT.read_text()) if OUT.exists() else {}
    out["_about"] = {
        "baycomp": baycomp.__version__ if hasattr(baycomp, "__version__") else "1.0.3",
        "pystan": stan.__version__,
        "rope": ROPE,
        "chains": args.chains,
        "nsamples_per_chain": args.nsamples,
        "priors": "baycomp defaults: nu - 1 ~ Gamma(alpha, beta), alpha ~ unif(1, 2), "
        "beta ~ unif(0.01, 0.1)",
        "script": "tests/stan/baycomp_reference.py",
    }
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        for name in args.cases:
            x, y = matrices(case_data(name))
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theta = baycomp.HierarchicalTest.sample(
                    x,
                    y,
                    ROPE,
                    runs=RUNS,
                    chains=args.chains,
                    nsamples=args.nsamples,
                    random_state=1,
                )
            seconds = time.perf_counter() - start
            probs = np.bincount(theta.argmax(axis=1), minlength=3) / len(theta)
            out[name] = {
                "p": [round(float(v), 4) for v in probs],
                "theta_mean": [round(float(v), 4) for v in theta.mean(axis=0)],
                "draws": len(theta),
                "seconds": round(seconds, 1),
            }
            print(name, out[name], flush=True)
            OUT.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
