"""The engines (numpy and both Stan engines) implement the one interface of
``engines/base.py``, and the sampler settings are checked once, when they are built.

No Stan here: these tests build the engines and the settings but never compile or sample
(the fits of each engine are in ``tests/stan``; CmdStan's run where CmdStan is found).
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import typing
from pathlib import Path

import pytest

from bbt_widget import engines
from bbt_widget.core import options
from bbt_widget.core.draws import SamplerSettings
from bbt_widget.engines import _cmdstan, _numpy, _pystan
from bbt_widget.engines.base import Engine

#: The methods the protocol promises (its attributes other than ``name``).
PROTOCOL_METHODS = sorted(
    name
    for name, value in vars(Engine).items()
    if inspect.isfunction(value) and not name.startswith("_")
)
CLASSES = {
    "numpy": _numpy.NumpyEngine,
    "pystan": _pystan.PyStanEngine,
    "cmdstanpy": _cmdstan.CmdStanEngine,
}


def test_the_protocol_names_what_the_issue_asks_for():
    assert {"available", "compile", "sample", "laplace", "shutdown"} <= set(PROTOCOL_METHODS)
    assert "name" in typing.get_type_hints(Engine)


@pytest.mark.parametrize("name", engines.ENGINES)
def test_each_engine_is_an_engine(name):
    engine = engines.get(name)
    assert isinstance(engine, Engine)  # runtime_checkable: every member is there
    assert isinstance(engine, CLASSES[name])
    assert engine.name == name


@pytest.mark.parametrize("name", engines.ENGINES)
@pytest.mark.parametrize("method", PROTOCOL_METHODS)
def test_each_method_has_the_protocols_signature(name, method):
    """Same parameters, kinds and defaults as the protocol (an engine may give a default to
    a parameter the protocol requires, and add optional parameters after them)."""
    promised = inspect.signature(getattr(Engine, method))
    actual = inspect.signature(getattr(CLASSES[name], method))
    expected = list(promised.parameters.values())
    got = list(actual.parameters.values())
    why = f"{name}.{method}{actual} differs from Engine.{method}{promised}"
    assert [(p.name, p.kind) for p in got[: len(expected)]] == [
        (p.name, p.kind) for p in expected
    ], why
    for want, have in zip(expected, got):
        assert want.annotation == have.annotation, why
        if want.default is not inspect.Parameter.empty:
            assert have.default == want.default, why
    extra = got[len(expected) :]
    assert all(p.default is not inspect.Parameter.empty for p in extra), extra
    assert actual.return_annotation == promised.return_annotation


def test_get_returns_one_instance_per_name():
    assert engines.get("pystan") is engines.get("pystan")
    assert engines.get("cmdstanpy") is engines.get("cmdstanpy")
    assert engines.get("pystan") is not engines.get("cmdstanpy")


@pytest.mark.parametrize("bad", ["auto", "stan", ""])
def test_get_names_the_valid_engines(bad):
    with pytest.raises(ValueError, match=r"unknown engine .*'numpy', 'cmdstanpy', 'pystan'"):
        engines.get(bad)


_IMPORTERS = {"import_module", "find_spec", "__import__"}


def test_no_module_of_the_package_imports_httpstan():
    """PyStan is reached through its public API only (``stan.build``, ``posterior.sample``):
    no module of the package imports httpstan, whose internals change between releases."""
    package = Path(engines.__file__).parent.parent
    importers = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Call) and node.args:  # import_module, find_spec
                func = node.func
                called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                first = node.args[0]
                if called in _IMPORTERS and isinstance(first, ast.Constant):
                    names = [str(first.value)]
            if any(name.split(".")[0] == "httpstan" for name in names):
                importers.append(str(path.relative_to(package)))
    assert importers == []


def test_shutdown_reaches_only_the_engines_made():
    """``engines.shutdown`` asks each engine made so far; it makes none (no import of an
    engine's module for nothing)."""
    calls = []
    made = dict(engines._instances)

    class Recorder:
        def __init__(self, name):
            self.name = name

        def shutdown(self):
            calls.append(self.name)

    try:
        engines._instances.clear()
        engines._instances["pystan"] = Recorder("pystan")  # type: ignore[assignment]
        engines.shutdown()
        assert calls == ["pystan"]
    finally:
        engines._instances.clear()
        engines._instances.update(made)


# ----------------------------------------------------------------------------- settings


def test_sampler_settings_defaults_come_from_the_options():
    s = SamplerSettings()
    assert (s.chains, s.iter_warmup, s.iter_sampling) == (
        options.DEFAULT_CHAINS,
        options.DEFAULT_ITER_WARMUP,
        options.DEFAULT_ITER_SAMPLING,
    )
    assert (s.adapt_delta, s.max_treedepth, s.seed) == (
        options.DEFAULT_ADAPT_DELTA,
        options.DEFAULT_MAX_TREEDEPTH,
        options.DEFAULT_SEED,
    )
    # the public functions' keyword defaults are the same values
    for function in (engines.sample,):
        params = inspect.signature(function).parameters
        for field in ("chains", "iter_warmup", "iter_sampling", "adapt_delta", "max_treedepth"):
            assert params[field].default == getattr(s, field), field


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"chains": 0}, ValueError, "chains must be an integer >= 1, got 0"),
        ({"chains": 2.0}, ValueError, "chains must be an integer >= 1"),
        ({"iter_sampling": 0}, ValueError, "iter_sampling must be an integer >= 4"),
        # with fewer than 4 draws per chain every split R-hat is NaN and no claim is made
        ({"iter_sampling": 1}, ValueError, "iter_sampling must be at least 4, got 1: the "),
        ({"iter_sampling": 3}, ValueError, "iter_sampling must be at least 4, got 3"),
        ({"iter_warmup": -1}, ValueError, "iter_warmup must be an integer >= 0"),
        ({"adapt_delta": 1.0}, ValueError, "adapt_delta must lie strictly between 0 and 1"),
        ({"adapt_delta": "0.9"}, TypeError, "adapt_delta must be a number"),
        ({"max_treedepth": 31}, ValueError, "max_treedepth must be an integer from 1 to 30"),
        ({"seed": -1}, ValueError, "seed must be an integer in"),
        ({"seed": 2**31}, ValueError, "seed must be an integer in"),
    ],
)
def test_sampler_settings_check_themselves(change, error, message):
    with pytest.raises(error, match=message):
        SamplerSettings(**change)


def test_sampler_settings_are_plain_frozen_values():
    import numpy as np

    s = SamplerSettings(chains=np.int64(2), iter_warmup=0, adapt_delta=np.float32(0.5), seed=None)
    assert type(s.chains) is int and type(s.adapt_delta) is float
    assert s.iter_warmup == 0 and s.seed is None and s.iterations == 1000
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.chains = 3  # type: ignore[misc]
    assert s.as_dict() == {
        "chains": 2,
        "iter_warmup": 0,
        "iter_sampling": 1000,
        "adapt_delta": 0.5,
        "max_treedepth": 10,
        "seed": None,
    }


def test_engines_sample_checks_the_settings_before_the_data_or_the_engine():
    """The settings object is what checks them: a bad setting is named even with data that
    are wrong too and an engine that is unknown."""
    with pytest.raises(ValueError, match="max_treedepth must be an integer from 1 to 30"):
        engines.sample("bbt", {}, engine="nonsense", max_treedepth=0)
    with pytest.raises(ValueError, match="draws must be an integer >= 1"):
        engines.laplace("bbt", {}, engine="nonsense", draws=0)
