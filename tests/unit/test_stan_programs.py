"""The BBT programs share one included file; both engines compile it (httpstan's stanc)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from bbt_widget.engines import _programs

COMMON = "bbt_common.stanfunctions"
STANC = Path(__import__("httpstan").__file__).parent / "stanc"


@pytest.mark.parametrize("model", ["bbt", "davidson", "bbt_groups"])
def test_basis_and_hyperprior_come_from_the_shared_file(model):
    source = _programs.stan_source(model)
    assert f"#include {COMMON}" in source
    # the code itself is written once, in the included file
    for piece in ("inv_sqrt(k * (k - 1.0))", "lognormal(0", "cauchy(0", "2.0 * sum(n_games)"):
        assert piece not in source.split("functions {", 1)[1], piece
    program = _programs.stan_program(model)
    assert "#include" not in "\n".join(ln.split("//")[0] for ln in program.splitlines())
    assert "matrix helmert_basis(int n)" in program
    assert "real sigma_prior_lpdf(" in program


def test_program_hash_covers_the_included_file(tmp_path, monkeypatch):
    stan = tmp_path / "stan"
    shutil.copytree(_programs.stan_file("bbt").parent, stan)
    monkeypatch.setattr(_programs, "stan_file", lambda model: stan / f"{model}.stan")
    before = _programs.program_hash("bbt"), _programs.program_hash("davidson")
    common = stan / COMMON
    common.write_text(common.read_text() + "\n// an edit\n")
    after = _programs.program_hash("bbt"), _programs.program_hash("davidson")
    assert before[0] != after[0] and before[1] != after[1]


def test_a_missing_include_is_named(tmp_path, monkeypatch):
    (tmp_path / "bbt.stan").write_text("functions {\n#include gone.stanfunctions\n}\n")
    monkeypatch.setattr(_programs, "stan_file", lambda model: tmp_path / f"{model}.stan")
    with pytest.raises(FileNotFoundError, match=r"gone\.stanfunctions"):
        _programs.stan_program("bbt")


@pytest.mark.skipif(not STANC.is_file(), reason="httpstan's stanc is not installed")
@pytest.mark.parametrize("model", ["bbt", "davidson", "bbt_groups"])
def test_stanc_compiles_both_forms(model, tmp_path):
    raw = tmp_path / f"{model}.stan"
    raw.write_text(_programs.stan_source(model))
    # as cmdstanpy compiles it: the file as written, with the package's stan folder to include
    include = f"--include-paths={_programs.include_dir(model)}"
    ok = subprocess.run([STANC, include, raw, f"--o={tmp_path / 'a.hpp'}"], capture_output=True)
    assert ok.returncode == 0, ok.stderr.decode()
    alone = subprocess.run([STANC, raw, f"--o={tmp_path / 'b.hpp'}"], capture_output=True)
    assert alone.returncode != 0  # the include is real: without the path stanc cannot find it
    # as httpstan compiles it: one string, includes expanded
    expanded = tmp_path / f"{model}_expanded.stan"
    expanded.write_text(_programs.stan_program(model))
    out = subprocess.run([STANC, expanded, f"--o={tmp_path / 'c.hpp'}"], capture_output=True)
    assert out.returncode == 0, out.stderr.decode()


def test_group_model_data_are_checked():
    base = {"n_alg": 3, "i1": [1, 2], "i2": [2, 3], "win1": [2, 1], "win2": [0, 1]}
    data = _programs.prepare_data("bbt_groups", {**base, "n_groups": 2, "group": [1, 2]})
    assert data["group"] == [1, 2] and data["n_groups"] == 2
    assert data["tau_scale"] == 0.5  # GROUP_TAU_SCALE, the documented default
    with pytest.raises(ValueError, match=r"needs 'group'"):
        _programs.prepare_data("bbt_groups", {**base, "n_groups": 2})
    with pytest.raises(ValueError, match=r"outside 1\.\.2"):
        _programs.prepare_data("bbt_groups", {**base, "n_groups": 2, "group": [1, 3]})
    with pytest.raises(ValueError, match=r"tau_scale must be a positive"):
        _programs.prepare_data(
            "bbt_groups", {**base, "n_groups": 2, "group": [1, 2], "tau_scale": 0.0}
        )
