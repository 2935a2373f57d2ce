"""The convergence statistics every fit checks (``core/convergence.py``): ArviZ's numbers to
the last bit, without importing ArviZ (whose import cost a fresh process's first fit more
than its sampling)."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

from bbt_widget.core import convergence, diagnostics
from bbt_widget.core.draws import Draws


def _az():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        import arviz

    return arviz


def _cases() -> list[np.ndarray]:
    """Draws shaped (chains, draws): well mixed, autocorrelated, rounded (tied values), one
    chain stuck apart, constant, odd counts, and too short for the statistics."""
    rng = np.random.default_rng(7)
    normal = rng.normal(size=(4, 1000))
    stuck = normal.copy()
    stuck[2] += 3.0
    return [
        normal,
        np.cumsum(rng.normal(size=(4, 500)), axis=1),  # a random walk: low ESS, high R-hat
        np.round(rng.normal(size=(4, 400)), 1),  # many ties in the ranks
        stuck,
        np.full((4, 100), 0.25),
        rng.normal(size=(3, 101)),
        rng.normal(size=(1, 200)),  # one chain: no R-hat, an ESS
        rng.normal(size=(2, 3)),  # too few draws: NaN
        rng.gamma(0.3, size=(4, 1000)),  # skewed, as sigma is
    ]


@pytest.mark.filterwarnings("ignore:invalid value encountered")  # the constant case, as ArviZ
@pytest.mark.parametrize("index", range(len(_cases())))
def test_rhat_and_ess_equal_arviz(index: int) -> None:
    az = _az()
    ary = _cases()[index]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ArviZ logs a warning for the short case
        expected = [
            float(az.rhat(ary)),
            float(az.ess(ary, method="bulk")),
            float(az.ess(ary, method="tail")),
        ]
    got = [convergence.rhat(ary), convergence.ess_bulk(ary), convergence.ess_tail(ary)]
    # the normal scores come from the standard library, ArviZ's from scipy: equal to 1e-15
    np.testing.assert_allclose(got, expected, rtol=1e-12)  # NaN where ArviZ gives NaN


def test_nan_draws_give_nan() -> None:
    ary = np.random.default_rng(1).normal(size=(4, 100))
    ary[1, 5] = np.nan
    assert np.isnan(convergence.rhat(ary))
    assert np.isnan(convergence.ess_bulk(ary))
    assert np.isnan(convergence.ess_tail(ary))


def test_bfmi_equals_arviz() -> None:
    energy = np.cumsum(np.random.default_rng(3).normal(size=(4, 1000)), axis=1)
    np.testing.assert_array_equal(convergence.bfmi(energy), _az().bfmi(energy))


def test_fft_length_is_scipys() -> None:
    from scipy.fftpack import next_fast_len

    for target in range(1, 5000):
        assert convergence._next_fast_len(target) == next_fast_len(target), target


def _draws(seed: int = 0) -> Draws:
    """Draws of a BBT-shaped posterior: beta (4 chains x 500 x 5 algorithms), sigma, energy."""
    rng = np.random.default_rng(seed)
    beta = np.cumsum(rng.normal(scale=0.3, size=(4, 500, 5)), axis=1) * 0.1 + rng.normal(
        size=(4, 500, 5)
    )
    sampler = {
        "energy__": np.cumsum(rng.normal(size=(4, 500)), axis=1),
        "divergent__": np.zeros((4, 500)),
        "treedepth__": np.full((4, 500), 3),
    }
    params = {"beta": beta, "sigma": rng.gamma(2.0, size=(4, 500))}
    return Draws(params=params, sampler=sampler, engine="pystan")


def test_diagnostics_equal_those_of_the_inference_data() -> None:
    """The fit's diagnostics from its arrays equal ArviZ's on its InferenceData: max R-hat
    and min ESS over every element of every parameter, min E-BFMI."""
    az = _az()
    draws = _draws()
    diag = diagnostics.draws_diagnostics(draws, ["beta", "sigma"])
    idata = az.from_dict(
        posterior=dict(draws.params), sample_stats={"energy": draws.sampler["energy__"]}
    )

    def worst(ds, pick):
        return float(pick([pick(v.values) for v in ds.data_vars.values()]))

    assert diag.max_rhat == worst(az.rhat(idata), np.nanmax)
    assert diag.min_ess_bulk == worst(az.ess(idata, method="bulk"), np.nanmin)
    assert diag.min_ess_tail == worst(az.ess(idata, method="tail"), np.nanmin)
    assert diag.min_ebfmi == float(np.min(az.bfmi(idata)))
    assert diagnostics.diagnostics(idata, draws, ["beta", "sigma"]) == diag


def test_diagnostics_import_neither_arviz_nor_scipy() -> None:
    """Every fit's diagnostics, in a fresh process, import no ArviZ, SciPy (not even
    ``scipy.special``), xarray or matplotlib (seconds of imports on a loaded machine)."""
    code = (
        "import sys, numpy as np\n"
        "from bbt_widget.core import diagnostics\n"
        "from bbt_widget.core.draws import Draws\n"
        "rng = np.random.default_rng(0)\n"
        "d = Draws(params={'beta': rng.normal(size=(4, 200, 3)), 'sigma': rng.gamma(2.0,"
        " size=(4, 200))}, sampler={'energy__': rng.normal(size=(4, 200))}, engine='pystan')\n"
        "print(diagnostics.draws_diagnostics(d, ['beta', 'sigma']).ok)\n"
        "print(sorted(m for m in ('arviz', 'scipy', 'xarray', 'matplotlib')"
        " if m in sys.modules))\n"
    )
    out = _fresh_process(code)
    assert out.stdout.split("\n")[:2] == ["True", "[]"], out.stdout + out.stderr


def test_a_numpy_fit_and_its_summary_import_no_scipy() -> None:
    """The default engine's whole fit (sampling, replicated wins, log-likelihood,
    diagnostics, summary) in a fresh process imports neither SciPy nor ArviZ: a fresh
    process's first fit, the CLI's and a notebook's, would pay for them."""
    code = (
        "import sys\n"
        "import bbt_widget as bbt\n"
        "import pandas as pd, numpy as np\n"
        "rng = np.random.default_rng(0)\n"
        "df = pd.DataFrame(rng.normal(0.7, 0.05, (12, 4)), columns=list('abcd'))"
        ".assign(db=[f'd{k}' for k in range(12)])\n"
        "res = bbt.fit(df, dataset='db', engine='numpy', iter_warmup=20, iter_sampling=40)\n"
        "res.summary()\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'scipy', 'arviz'}))\n"
    )
    out = _fresh_process(code)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout + out.stderr


def _fresh_process(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` run by a new interpreter (nothing imported yet), its output captured."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    )
