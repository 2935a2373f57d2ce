"""What the security tests share: the real fit of the hostile names, and the model-cache
tests' folders and fake CmdStan."""

from __future__ import annotations

import shutil
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from hostile import fit_hostile, hostile_results

import bbt_widget as bbt
from bbt_widget import engines
from bbt_widget.engines import _child


@pytest.fixture(scope="session")
def hostile_res() -> bbt.BBTResult:
    with warnings.catch_warnings():
        # short chains may miss the ESS targets; the escaping is what is tested
        warnings.simplefilter("ignore", bbt.DiagnosticsWarning)
        return fit_hostile()


@pytest.fixture(scope="session")
def hostile_sections(hostile_res):
    """The report's optional sections on the hostile names: a two-setting sweep, influence,
    Plackett-Luce (real short fits)."""
    from bbt_widget.outputs.report import _sections as rs

    data = hostile_results()
    short = {"chains": 2, "iter_warmup": 300, "iter_sampling": 300}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bbt.DiagnosticsWarning)
        grid = {"ties": ["spread", "forget"]}
        sweep = bbt.sweep(data, dataset="db", grid=grid, engine="pystan", **short)
        pl = bbt.ranking_model(data, dataset="db", **short)  # Gibbs: no engine to choose
    return [
        rs.sweep_section(sweep, "weak"),
        rs.influence_section(bbt.influence(hostile_res, interpretation="weak")),
        rs.ranking_model_section(pl, hostile_res),
    ]


# the model-cache tests' shared set-up (test_cache_ownership, test_cache_paths)


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder under /tmp that every user can enter (pytest's tmp_path is root's alone),
    removed afterwards with whatever the other user left in it."""
    base = Path(tempfile.mkdtemp(prefix="bbt-widget-shared-"))
    base.chmod(0o711)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def good_build() -> Path:
    """httpstan's folder of a complete PyStan build of the bbt model (in the default cache)."""
    if "pystan" not in engines.available_engines():
        pytest.skip("PyStan is not available here")
    module, _ = engines.get("pystan").compile("bbt")
    return module.parent


@pytest.fixture
def fake_cmdstan_home(tmp_path, monkeypatch) -> Path:
    """A CmdStan installation that is found and works (its ``stanc`` runs); it cannot build
    models, so a fit can only use an executable already in the cache."""
    home = tmp_path / "cmdstan-2.36.0"
    (home / "bin").mkdir(parents=True)
    (home / "makefile").write_text("CMDSTAN_VERSION := 2.36.0\n")
    stanc = home / "bin" / "stanc"
    stanc.write_text('#!/bin/sh\necho "stanc3 v2.36.0 (Unix)"\n')
    stanc.chmod(0o755)
    monkeypatch.setenv("CMDSTAN", str(home))
    return home


@pytest.fixture
def no_child(monkeypatch) -> list[str]:
    """Records every Stan child process a test would start, and starts none: a fit refused by
    the cache checks starts nothing (no compile, no load)."""
    calls: list[str] = []

    def run(script: str, *args, **kwargs):
        calls.append(script)
        raise AssertionError(f"{script} was started")

    monkeypatch.setattr(_child, "run", run)
    return calls
