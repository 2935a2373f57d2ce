"""The draws a Stan child saves reach the engine's process in C order, integers as int64.

Both children build their outputs as (chains, draws, size) arrays that numpy lays out in
Fortran order: PyStan's by transposing its arrays (the chain index varies fastest there),
CmdStan's by picking columns by index. Saved as they are, they came back in Fortran order,
and every place that flattens the chains (``reshape(-1, size)``: the posterior predictive
check, the summaries) copied the largest arrays instead of taking a view, which raised a
fit's peak memory above its estimate (``core/sizing``).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from bbt_widget.engines import _child

ENGINES = Path(_child.__file__).parent


def _child_module(name: str) -> ModuleType:
    """A child script loaded as it runs: from its folder, beside ``_laplace``."""
    had_laplace = "_laplace" in sys.modules  # the PyStan child imports it from its folder
    sys.path.insert(0, str(ENGINES))
    try:
        spec = importlib.util.spec_from_file_location(f"_test_{name}", ENGINES / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(ENGINES))
        if not had_laplace:
            sys.modules.pop("_laplace", None)
    return module


def _pystan_like(chains: int, draws: int, size: int) -> np.ndarray:
    """An output as ``_pystan_child._outputs`` shapes it: PyStan's (size, draws * chains)
    array, the chain varying fastest, read as (chains, draws, size)."""
    flat = np.arange(size * draws * chains, dtype=float).reshape(size, draws * chains)
    return flat.reshape(size, -1, chains).transpose(2, 1, 0)


def _cmdstan_like(chains: int, draws: int, size: int) -> np.ndarray:
    """An output as ``_cmdstan_child._group`` picks it from CmdStan's (chains, draws,
    columns) view of ``fit.draws()``."""
    columns = np.arange(draws * chains * (size + 2), dtype=float)
    values = np.moveaxis(columns.reshape(draws, chains, size + 2), 1, 0)
    return values[:, :, list(range(1, size + 1))]


@pytest.mark.parametrize(
    ("child", "output"),
    [("_pystan_child", _pystan_like), ("_cmdstan_child", _cmdstan_like)],
)
def test_saved_draws_load_in_c_order_so_flattening_the_chains_copies_nothing(
    child: str, output, tmp_path: Path
) -> None:
    log_lik, win1_rep, sigma = output(4, 50, 7), output(4, 50, 7), output(4, 50, 1)[..., 0]
    assert not log_lik.flags.c_contiguous  # as the child builds it
    arrays = {"log_lik": log_lik, "win1_rep": win1_rep, "sigma": sigma}
    expected = {name: values.copy() for name, values in arrays.items()}
    _child_module(child)._save(tmp_path, arrays, {"integers": ["win1_rep", "divergent__"]})
    with np.load(tmp_path / "draws.npz") as saved:
        loaded = {name: saved[name] for name in saved.files}
    assert set(loaded) == set(expected)
    for name, values in loaded.items():
        assert values.flags.c_contiguous, name
        np.testing.assert_array_equal(values, expected[name])
        flat = values.reshape(-1, *values.shape[2:])  # what the PPC and summaries do
        assert np.shares_memory(flat, values), name
    assert loaded["win1_rep"].dtype == np.int64 and loaded["log_lik"].dtype == np.float64
