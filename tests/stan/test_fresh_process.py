"""A fresh process's first fit: its sampler worker is started as the fit begins (before the
data are read), nothing is compiled by that early start, and the draws are those of a warm
process at the same seed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import bbt_widget as bbt
from bbt_widget import engines

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


def test_prestart_starts_one_worker_for_a_compiled_model_and_builds_nothing(tmp_path):
    """``engines.prestart``: a compiled model gets one worker ready at once; a model missing
    from the cache (an empty cache here) is not compiled, and nothing is raised or warned."""
    if "pystan" not in engines.available_engines():
        pytest.skip("PyStan is not available here")
    engines.compile_model("bbt", "pystan")
    code = (
        "import json, warnings\n"
        "warnings.simplefilter('error')\n"
        "from bbt_widget import engines\n"
        "engines.prestart(('bbt',), 'pystan')\n"
        "ready = [w.proc.poll() is None for w in engines.get('pystan').idle_workers()]\n"
        "print(json.dumps(ready))\n"
    )
    assert json.loads(_run(code).strip().splitlines()[-1]) == [True]
    empty = tmp_path / "cache"
    out = _run(code, {"BBT_WIDGET_CACHE": str(empty)})
    assert json.loads(out.strip().splitlines()[-1]) == []
    assert not (empty / "pystan").exists() or not any((empty / "pystan").iterdir())


def test_prestart_of_an_engine_that_cannot_run_is_silent():
    """No engine by that name, or none installed: the fit that follows says so, not this."""
    engines.prestart(("bbt",), "no-such-engine")
    engines.prestart(("no-such-model",), "auto")  # type: ignore[arg-type]
