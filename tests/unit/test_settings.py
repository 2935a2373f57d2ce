"""The typed settings of a fit (bbt_widget.core.settings): checked when built, with the core's
own messages; readable as the dictionary a fit's settings always were; picklable."""

from __future__ import annotations

import json
import pickle

import pytest

from bbt_widget.core.draws import SamplerSettings
from bbt_widget.core.options import DEFAULT_TIES, HYPERPRIOR_SCALES
from bbt_widget.core.settings import CountingSettings, FitSettings, PriorSettings
from bbt_widget.core.validation import (
    check_d_min,
    check_flag,
    check_hyperprior,
    check_tie_threshold,
    check_ties,
)

LAYOUT = {
    "dataset": "ds",
    "algorithm": "alg",
    "fold": "fold",
    "score": "acc",
    "sd": False,
    "lower_is_better": False,
}


def _message(check, *args):
    with pytest.raises((TypeError, ValueError)) as exc:
        check(*args)
    return exc.type, str(exc.value)


@pytest.mark.parametrize(
    ("kwargs", "check", "args"),
    [
        ({"ties": "halve"}, check_ties, ("halve",)),
        ({"d_min": -0.1}, check_d_min, (-0.1,)),
        ({"d_min": "0.4"}, check_d_min, ("0.4",)),
        ({"paired": "no"}, check_flag, ("no", "paired")),
        ({"tie_threshold": float("nan")}, check_tie_threshold, (float("nan"),)),
        ({"tie_threshold": True}, check_tie_threshold, (True,)),
    ],
)
def test_counting_settings_refuse_bad_values_with_the_core_message(kwargs, check, args):
    kind, message = _message(check, *args)
    with pytest.raises(kind) as exc:
        CountingSettings(**kwargs)
    assert str(exc.value) == message


@pytest.mark.parametrize(
    ("family", "scale"), [("beta", None), ("normal", -1.0), ("cauchy", "big"), ("normal", 0)]
)
def test_prior_settings_refuse_bad_values_with_the_core_message(family, scale):
    kind, message = _message(check_hyperprior, family, scale)
    with pytest.raises(kind) as exc:
        PriorSettings(family, scale)
    assert str(exc.value) == message


def test_defaults_come_from_the_options():
    assert CountingSettings().as_dict() == {
        "d_min": None,
        "paired": True,
        "ties": DEFAULT_TIES,
        "tie_threshold": None,
    }
    assert PriorSettings().as_dict() == {
        "hyperprior": "lognormal",
        "prior_scale": HYPERPRIOR_SCALES["lognormal"],
    }


def test_prior_resolves_aliases_and_the_default_scale():
    prior = PriorSettings("Half-Normal")
    assert prior.family == "normal" and prior.scale == HYPERPRIOR_SCALES["normal"] == 3.0
    assert PriorSettings("normal", 3) == prior
    assert isinstance(PriorSettings("normal", 3).scale, float)


def test_as_dict_round_trips():
    counting = CountingSettings("davidson", 0.3, False, 0.005)
    assert CountingSettings(**counting.as_dict()) == counting
    prior = PriorSettings("cauchy", 2.0)
    d = prior.as_dict()
    assert PriorSettings(d["hyperprior"], d["prior_scale"]) == prior


def test_equivalent_settings_share_one_key():
    # a tie threshold of 0 is none; paired matters only with a local ROPE
    assert CountingSettings(tie_threshold=0).key() == CountingSettings(tie_threshold=None).key()
    assert CountingSettings(paired=False).key() == CountingSettings(paired=True).key()
    assert CountingSettings(d_min=0.4, paired=False).key() != CountingSettings(d_min=0.4).key()
    assert CountingSettings(tie_threshold=0.01).key() != CountingSettings().key()
    assert (
        PriorSettings("lognormal").key() == PriorSettings("log-normal".replace("-", ""), 0.5).key()
    )
    assert PriorSettings("normal").key() != PriorSettings("normal", 1.0).key()


def _fit_settings() -> FitSettings:
    prepared = FitSettings(
        LAYOUT, CountingSettings("spread", None, True, 0.005), PriorSettings(), "bbt", 7, False
    )
    run = {"chains": 2, "iter_warmup": 50, "iter_sampling": 60, "seed": 7}
    return prepared.fitted("pystan", {**run, "adapt_delta": 0.9, "max_treedepth": 11})


def test_fit_settings_read_as_the_dictionary_they_replace():
    settings = _fit_settings()
    expected = {
        **LAYOUT,
        "d_min": None,
        "paired": None,  # no local ROPE: the folds are not paired
        "ties": "spread",
        "tie_threshold": 0.005,
        "model": "bbt",
        "hyperprior": "lognormal",
        "prior_scale": 0.5,
        "engine": "pystan",
        "chains": 2,
        "iter_warmup": 50,
        "iter_sampling": 60,
        "seed": 7,
        "adapt_delta": 0.9,
        "max_treedepth": 11,
        "win_table_input": False,
    }
    assert dict(settings) == expected and list(settings) == list(expected)
    assert settings == expected and expected == settings
    assert settings["seed"] == 7 and settings.get("method") is None and "ties" in settings
    assert len(settings) == len(expected)
    assert json.loads(json.dumps(dict(settings))) == expected
    assert settings.sampler == SamplerSettings(2, 50, 60, 0.9, 11, 7)
    assert settings.counting.tie_threshold == 0.005 and settings.prior.family == "lognormal"
    with pytest.raises(TypeError):
        settings["seed"] = 2  # type: ignore[index]


def test_a_laplace_run_has_no_sampler():
    base = _fit_settings()
    laplace = FitSettings(LAYOUT, base.counting, base.prior, "bbt", 7, False).fitted(
        "cmdstanpy", {"method": "laplace", "draws": 400, "seed": 7}
    )
    assert laplace.sampler is None
    assert list(laplace)[-5:] == ["engine", "method", "draws", "seed", "win_table_input"]


def test_fit_settings_pickle_round_trip():
    settings = _fit_settings()
    again = pickle.loads(pickle.dumps(settings))
    assert again == settings and dict(again) == dict(settings)
    assert again.sampler == settings.sampler and again.counting == settings.counting


def test_a_prepared_fit_and_its_result_carry_fit_settings():
    import numpy as np

    import bbt_widget as bbt
    from bbt_widget.core.draws import Draws
    from bbt_widget.fitting import prepare_fit

    job = prepare_fit(
        bbt.datasets.load_base(), dataset="db", ties="spread", d_min=None, size=(2, 10)
    )
    assert isinstance(job.settings, FitSettings)
    assert job.settings["paired"] is None and job.settings["prior_scale"] == 0.5
    n_alg, n_pairs = job.stan_data["n_alg"], job.stan_data["n_pairs"]
    rng = np.random.default_rng(0)
    draws = Draws(
        params={
            "beta": rng.normal(size=(2, 10, n_alg)),
            "sigma": rng.gamma(2.0, size=(2, 10)),
            "win1_rep": rng.binomial(2, 0.5, size=(2, 10, n_pairs)),
            "log_lik": rng.normal(-1.0, 0.1, size=(2, 10, n_pairs)),
        },
        sampler={},
        engine="pystan",
    )
    run = {"chains": 2, "iter_warmup": 10, "iter_sampling": 10, "seed": job.settings["seed"]}
    result = job.result(draws, {**run, "adapt_delta": 0.8, "max_treedepth": 10})
    assert isinstance(result.settings, FitSettings) and result.settings["engine"] == "pystan"
    assert result.settings.sampler == SamplerSettings(2, 10, 10, 0.8, 10, job.settings["seed"])
    # results travel to worker processes: the settings come back equal
    again = pickle.loads(pickle.dumps(result))
    assert again.settings == result.settings
    assert isinstance(again.settings, FitSettings)


def test_agreement_reads_the_direction_from_fit_settings():
    # code that read the settings dict must read a fit's FitSettings as well
    import bbt_widget as bbt
    from bbt_widget.baselines import agreement

    class Fitted:
        settings = FitSettings(
            {**LAYOUT, "lower_is_better": True},
            CountingSettings(),
            PriorSettings(),
            "bbt",
            1,
            False,
        )

        def summary(self, rope=(0.45, 0.55), hdi=0.89):  # pragma: no cover - not reached
            raise AssertionError("the direction is checked first")

    with pytest.raises(ValueError, match="fitted with lower_is_better=True"):
        agreement(bbt.datasets.load_base(), Fitted(), dataset="db")


def test_the_widget_files_equivalent_fits_under_one_key():
    from bbt_widget.widget.keys import fit_keys

    base = {
        "dataset": "db",
        "algorithm": None,
        "fold": None,
        "score": None,
        "sd": None,
        "lower_is_better": False,
        "d_min": None,
        "paired": True,
        "ties": "spread",
        "tie_threshold": None,
        "hyperprior": "lognormal",
        "prior_scale": None,
        "engine": "auto",
        "seed": 1,
    }
    same = [
        {"tie_threshold": 0},
        {"tie_threshold": 0.0},
        {"paired": False},  # no local ROPE: the folds are not paired
        {"prior_scale": 0.5},  # lognormal's default scale
        {"hyperprior": "LogNormal"},
    ]
    for change in same:
        assert fit_keys({**base, **change}) == fit_keys(base), change
    differ = [
        {"tie_threshold": 0.005},
        {"ties": "davidson"},
        {"prior_scale": 0.6},
        {"seed": 2},
        {"d_min": 0.4},
    ]
    for change in differ:
        assert fit_keys({**base, **change})[0] != fit_keys(base)[0], change
    # a new prior keeps the wins counted; new counting settings keep the results read
    key, counted, read = fit_keys({**base, "hyperprior": "normal"})
    assert key != fit_keys(base)[0] and counted == fit_keys(base)[1]
    key, counted, read = fit_keys({**base, "d_min": 0.4, "paired": False})
    assert counted != fit_keys(base)[1] and read == fit_keys(base)[2]
    with pytest.raises(ValueError, match="unknown tie policy"):
        fit_keys({**base, "ties": "halve"})


def test_recounting_without_a_tie_policy_is_refused_as_prepare_fit_refuses_it():
    import bbt_widget as bbt
    from bbt_widget.fitting import prepare_fit

    job = prepare_fit(bbt.datasets.load_base(), dataset="db", ties="spread", size=(2, 10))
    prior = {"hyperprior": "lognormal", "prior_scale": None}
    with pytest.raises(ValueError, match="fit needs a tie policy"):
        job.recount(d_min=None, paired=True, ties=None, size=(2, 10), **prior)
    with pytest.raises(ValueError, match="fit needs a tie policy"):
        prepare_fit(bbt.datasets.load_base(), dataset="db", ties=None, size=(2, 10))
