"""A fresh process's first fit: the draws are those of a warm process at the same seed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

import bbt_widget as bbt

REPO = Path(__file__).resolve().parents[2]


def _run(code: str, env: dict[str, str] | None = None) -> str:
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
        env={**os.environ, **(env or {})},
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_a_fresh_processs_first_fit_draws_what_a_warm_process_draws(tmp_path):
    """Same seed, same draws: the first fit of a new interpreter (worker started early,
    diagnostics' imports in a thread) and a fit in this long-running test process."""
    df = bbt.datasets.load_base()
    bbt.fit(df, dataset="db", seed=3)  # this process is warm now
    warm = bbt.fit(df, dataset="db", seed=3)
    path = tmp_path / "beta.npy"
    code = (
        "import numpy as np, bbt_widget as bbt\n"
        "res = bbt.fit(bbt.datasets.load_base(), dataset='db', seed=3)\n"
        f"np.save({str(path)!r}, res.draws.params['beta'])\n"
        "print(res.diagnostics().max_rhat)\n"
    )
    rhat = float(_run(code).strip().splitlines()[-1])
    np.testing.assert_array_equal(np.load(path), warm.draws.params["beta"])
    assert rhat == warm.diagnostics().max_rhat
