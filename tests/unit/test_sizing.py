"""The size guard: a fit too large for the machine's memory is refused before sampling."""

from __future__ import annotations

import itertools
import threading

import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget.core import sizing


def _all_pairs(n_alg: int) -> pd.DataFrame:
    """A ready win table where every two of ``n_alg`` algorithms met (10 wins each way)."""
    pairs = list(itertools.combinations([f"alg{k}" for k in range(n_alg)], 2))
    return pd.DataFrame(
        {"alg1": [a for a, _ in pairs], "alg2": [b for _, b in pairs], "win1": 10, "win2": 10}
    )


def test_500_algorithms_at_default_settings_are_refused_before_sampling(monkeypatch):
    monkeypatch.setattr(sizing, "available_memory", lambda: 8 * 2**30)  # an 8 GB machine
    cancel = threading.Event()
    cancel.set()  # should the guard not fire, the fit stops before any sampling
    with pytest.raises(sizing.FitTooLargeError) as info:
        bbt.fit(_all_pairs(500), engine="pystan", cancel=cancel)
    message = str(info.value)
    # the figure: about 16 GB (124750 pairs x 4000 draws)
    need = float(message.split("needs about ")[1].split(" GB")[0])
    assert 14 <= need <= 18
    assert "124750 fitted pairs" in message and "8.0 GB is available" in message
    for setting in ("iter_sampling", "--iter-sampling", "--chains", "4 x "):
        assert setting in message
    # the settings it suggests do fit
    suggested = int(message.split("such as 4 x ")[1].split(")")[0])
    assert sizing.estimate_fit_bytes(500, 124750, "bbt", 4, suggested) <= 0.9 * 8 * 2**30
    assert sizing.estimate_fit_bytes(500, 124750, "bbt", 4, suggested + 10) > 0.9 * 8 * 2**30


def test_a_fit_taking_most_of_the_memory_warns_and_a_small_one_is_silent():
    need = sizing.estimate_fit_bytes(100, 4950, "davidson", 4, 1000)
    with pytest.warns(UserWarning, match="needs about"):
        sizing.check_fit_size(100, 4950, "davidson", 4, 1000, available=int(need / 0.7))
    sizing.check_fit_size(100, 4950, "davidson", 4, 1000, available=3 * need)  # no warning
    with pytest.raises(sizing.FitTooLargeError):
        sizing.check_fit_size(100, 4950, "davidson", 4, 1000, available=need)


def test_the_estimate_grows_with_pairs_times_draws():
    small = sizing.estimate_fit_bytes(50, 1225, "bbt", 4, 1000)
    assert sizing.estimate_fit_bytes(50, 1225, "bbt", 4, 2000) > 1.8 * small - 2**28
    assert sizing.estimate_fit_bytes(50, 1225, "davidson", 4, 1000) > small  # + ties_rep
    assert sizing.available_memory() is None or sizing.available_memory() > 0


@pytest.mark.parametrize(
    ("test", "per_draw"),
    [("bayesian_sign_test", 64), ("bayesian_signed_rank", 336)],  # 20 data sets: 2 x 21 x 8
)
def test_monte_carlo_draws_too_many_for_memory_are_refused_before_drawing(
    monkeypatch, base, test, per_draw
):
    # numpy refused them with "Unable to allocate 224 GiB", naming no setting
    monkeypatch.setattr(sizing, "available_memory", lambda: 8 * 2**30)  # an 8 GB machine
    run = getattr(bbt.baselines, test)
    with pytest.raises(sizing.FitTooLargeError) as info:
        run(base, dataset="db", a="svm", b="dt", n_samples=10**12)
    message = str(info.value)
    assert message.startswith("n_samples=1000000000000: the draws of the Bayesian")
    assert f"({per_draw} bytes a draw), and 8.0 GB is available" in message
    most = int(message.split("use at most n_samples=")[1].split(" ")[0])
    assert most == int(0.9 * 8 * 2**30) // per_draw
    sizing.check_draws_memory(most, per_draw // 8, "x", available=8 * 2**30)  # fits
    with pytest.raises(sizing.FitTooLargeError):
        sizing.check_draws_memory(most + 1, per_draw // 8, "x", available=8 * 2**30)


def test_the_plain_models_time_grows_with_pairs_times_draws_and_the_kernel_bounds_it():
    fast, slow = sizing.estimate_fit_seconds(
        "bbt", "numpy", 1225, 4, 1100, n_alg=50, iter_sampling=1000
    )
    # the independence kernel (three cheap steps a draw) is the fastest, Gibbs sweeps the slowest
    assert 0 < fast < slow
    twice = sizing.estimate_fit_seconds("bbt", "numpy", 2450, 4, 1100, n_alg=50, iter_sampling=1000)
    longer = sizing.estimate_fit_seconds(
        "bbt", "numpy", 1225, 4, 2100, n_alg=50, iter_sampling=2000
    )
    assert twice is not None and longer is not None
    assert twice[1] > 1.8 * slow and longer[1] > 1.8 * slow
    # the summary covers every pair of algorithms, fitted or not
    wider = sizing.estimate_fit_seconds(
        "bbt", "numpy", 1225, 4, 1100, n_alg=100, iter_sampling=1000
    )
    assert wider is not None and wider[0] > fast
    # NUTS's time depends on the data: no estimate, and no warning from one
    assert (
        sizing.estimate_fit_seconds("bbt", "pystan", 1225, 4, 2000, n_alg=50, iter_sampling=1000)
        is None
    )


def test_a_long_plain_fit_gives_its_time_and_memory_before_sampling(monkeypatch):
    monkeypatch.setattr(sizing, "available_memory", lambda: 64 * 2**30)
    cancel = threading.Event()
    cancel.set()  # the warning comes before any sampling; the fit then stops at once
    with pytest.warns(sizing.LongRunWarning) as caught:
        with pytest.raises(bbt.engines.FitCancelled):
            bbt.fit(_all_pairs(300), engine="numpy", cancel=cancel)
    (warning,) = [w for w in caught if issubclass(w.category, sizing.LongRunWarning)]
    message = str(warning.message)
    # 44850 pairs x 4 chains: about 2 min with the independence kernel, 10 min by Gibbs sweeps
    # (and the abilities' Hamiltonian moves)
    assert "300 algorithms (44850 fitted pairs, 4 chains x 100 + 1000 iterations)" in message
    assert "between 2 min and 10 min" in message and "5.7 GB of memory" in message
    for fix in ("iter_sampling", "--chains", "draws='fixed'", "fewer algorithms"):
        assert fix in message


def test_a_plain_fit_beyond_memory_is_refused_naming_its_size_and_the_fix(monkeypatch):
    monkeypatch.setattr(sizing, "available_memory", lambda: 4 * 2**30)  # a 4 GB machine
    with pytest.raises(sizing.FitTooLargeError) as info:
        bbt.fit(_all_pairs(300), engine="numpy", cancel=threading.Event())
    message = str(info.value)
    assert "needs about 5.7 GB" in message and "300 algorithms, 44850 fitted pairs" in message
    assert "4 chains x 1000 draws" in message and "4.0 GB is available" in message
    assert "fewer draws" in message and "compare fewer algorithms" in message
