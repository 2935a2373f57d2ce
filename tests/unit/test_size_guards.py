"""The size guards' gaps: the group model's rows, a container's memory limit, the Mallows
model and the hierarchical test of every pair are estimated and refused before they start."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget.baselines import _sizing
from bbt_widget.baselines._hierarchical_pairs import hierarchical_pairs
from bbt_widget.core import sizing
from bbt_widget.engines import FitCancelled
from bbt_widget.ranking._mallows import mallows
from bbt_widget.ranking._mallows_sampler import mallows_estimate

GB = 2**30


def _cancelled() -> threading.Event:
    """Set: should a guard not fire, the job stops at its first cancellation check."""
    cancel = threading.Event()
    cancel.set()
    return cancel


def _scores(n_alg: int, n_data: int, folds: int = 1, *, groups: int = 0) -> pd.DataFrame:
    """Long results: ``n_alg`` algorithms on ``n_data`` data sets (``groups``: each data set
    its own group, in a ``family`` column)."""
    rng = np.random.default_rng(0)
    rows = [
        {
            "db": f"d{d}",
            "algorithm": f"a{a}",
            "fold": f,
            "score": 0.5 + 0.3 * a / n_alg + rng.normal(0, 0.02),
        }
        for d in range(n_data)
        for a in range(n_alg)
        for f in range(folds)
    ]
    frame = pd.DataFrame(rows)
    if groups:
        frame["family"] = frame["db"].str[1:].astype(int) % groups
    return frame


def _fake_cgroup(root, files: dict[str, str]):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_group_model_counts_its_rows_and_is_refused_in_3_gb(monkeypatch):
    # 20 algorithms x 200 groups: 38,000 (group, pair) rows, not the 190 pooled pairs
    need = sizing.estimate_fit_bytes(20, 38000, "bbt_groups", 4, 1000, n_groups=200)
    assert 5 * GB < need < 7 * GB  # measured 40-41 bytes a row and draw at smaller shapes
    monkeypatch.setattr(sizing, "available_memory", lambda: 3 * GB)
    data = _scores(20, 200, groups=200)
    with pytest.raises(sizing.FitTooLargeError) as info:
        bbt.fit(
            data,
            dataset="db",
            algorithm="algorithm",
            score="score",
            group="family",
            engine="numpy",
            cancel=_cancelled(),
        )
    message = str(info.value)
    assert "20 algorithms in 200 groups: 38000 (group, pair) rows" in message
    assert "fewer groups" in message and "iter_sampling" in message


def test_a_long_group_fit_gives_its_time_and_memory_before_sampling(monkeypatch):
    monkeypatch.setattr(sizing, "available_memory", lambda: 64 * GB)
    data = _scores(20, 20, groups=20)  # 3800 rows x 4 chains x 1100 sweeps: about 64 s
    with pytest.warns(sizing.LongRunWarning, match=r"will take about 64 s and 0\.8 GB"):
        with pytest.raises(FitCancelled):
            bbt.fit(
                data,
                dataset="db",
                algorithm="algorithm",
                score="score",
                group="family",
                engine="numpy",
                cancel=_cancelled(),
            )


def test_available_memory_is_the_smaller_of_the_host_and_the_cgroup(tmp_path, monkeypatch):
    monkeypatch.setattr(sizing, "_host_memory", lambda: 16 * GB)
    v2 = _fake_cgroup(
        tmp_path / "v2",
        {"memory.max": f"{3 * GB}\n", "memory.current": f"{GB}\n", "memory.stat": "anon 1\n"},
    )
    assert sizing.available_memory(v2) == 2 * GB
    # the page cache in the usage is reclaimed before a kill: counted as free
    (v2 / "memory.stat").write_text(f"anon 5\ninactive_file {GB // 2}\n")
    assert sizing.available_memory(v2) == 2 * GB + GB // 2
    unlimited = _fake_cgroup(tmp_path / "max", {"memory.max": "max\n", "memory.current": "7\n"})
    assert sizing.available_memory(unlimited) == 16 * GB
    v1 = _fake_cgroup(
        tmp_path / "v1",
        {"memory/memory.limit_in_bytes": f"{4 * GB}", "memory/memory.usage_in_bytes": f"{GB}"},
    )
    assert sizing.available_memory(v1) == 3 * GB
    v1_free = _fake_cgroup(
        tmp_path / "v1f", {"memory/memory.limit_in_bytes": "9223372036854771712"}
    )
    assert sizing.available_memory(v1_free) == 16 * GB
    assert sizing.available_memory(tmp_path / "none") == 16 * GB


def test_a_fit_too_large_for_the_container_is_refused_not_warned(tmp_path, monkeypatch):
    # the host has 64 GB free; the container's limit leaves 3 GB
    monkeypatch.setattr(sizing, "_host_memory", lambda: 64 * GB)
    root = _fake_cgroup(tmp_path, {"memory.max": f"{3 * GB}", "memory.current": "0"})
    monkeypatch.setattr(sizing, "CGROUP_ROOT", root)
    pairs = [(f"a{i}", f"a{j}") for i in range(300) for j in range(i + 1, 300)]
    table = pd.DataFrame({"alg1": [a for a, _ in pairs], "alg2": [b for _, b in pairs]})
    table[["win1", "win2"]] = 10
    with pytest.raises(sizing.FitTooLargeError, match=r"and 3\.0 GB is available"):
        bbt.fit(table, engine="numpy", cancel=_cancelled())


@pytest.mark.parametrize(("n_alg", "low", "high"), [(100, 1.3, 1.7), (200, 5.0, 5.6)])
def test_the_mallows_estimate_matches_the_measured_peaks(n_alg, low, high):
    # measured: 1.43 GB at 100 algorithms, 5.1 GB at 200 (4 x 1000 draws)
    need, seconds = mallows_estimate(n_alg, 4, 1000, 1000, 20)
    assert low * GB < need < high * GB
    assert seconds > 60


def test_mallows_on_500_algorithms_is_refused_before_sampling(monkeypatch):
    monkeypatch.setattr(sizing, "available_memory", lambda: 16 * GB)
    with pytest.raises(sizing.FitTooLargeError) as info:
        mallows(
            _scores(500, 4), dataset="db", algorithm="algorithm", score="score", cancel=_cancelled()
        )
    message = str(info.value)
    assert message.startswith("the Mallows model of 500 algorithms (4 chains x 1000 draws)")
    assert "iter_sampling" in message and "fewer algorithms" in message


def test_mallows_on_100_algorithms_warns_of_its_time_before_sampling(monkeypatch):
    monkeypatch.setattr(sizing, "available_memory", lambda: 64 * GB)
    with pytest.warns(sizing.LongRunWarning, match=r"Mallows model of 100 .* 1\.\d GB"):
        with pytest.raises(FitCancelled):
            mallows(
                _scores(100, 4),
                dataset="db",
                algorithm="algorithm",
                score="score",
                cancel=_cancelled(),
            )


def test_hierarchical_pairs_estimates_and_refuses_before_the_pairs_are_gathered(monkeypatch):
    # 500 algorithms: 124,750 pairs, tens of GB of results and days on two cores
    need, seconds = _sizing.hierarchical_pairs_estimate(124750, 132, 4, 1000, 2)
    assert need > 30 * GB and seconds > 48 * 3600
    monkeypatch.setattr(sizing, "available_memory", lambda: GB)
    data = _scores(100, 3, folds=2)  # 4950 pairs: about 1.3 GB of results
    with pytest.raises(sizing.FitTooLargeError) as info:
        hierarchical_pairs(
            data,
            dataset="db",
            algorithm="algorithm",
            fold="fold",
            score="score",
            rho=0.5,
            cancel=_cancelled(),
        )
    message = str(info.value)
    assert "every pair of 100 algorithms (4950 pairs" in message
    assert "algorithms=" in message and "iter_sampling" in message


def test_hierarchical_pairs_warns_of_a_long_run_before_fitting(monkeypatch):
    monkeypatch.setattr(sizing, "available_memory", lambda: 64 * GB)
    data = _scores(20, 3, folds=2)  # 190 pairs x 3.7 s on 2 cores: about 6 min
    with pytest.warns(sizing.LongRunWarning, match=r"190 pairs.* will take about 6 min"):
        with pytest.raises(FitCancelled):
            hierarchical_pairs(
                data,
                dataset="db",
                algorithm="algorithm",
                fold="fold",
                score="score",
                rho=0.5,
                n_jobs=2,
                cancel=_cancelled(),
            )
