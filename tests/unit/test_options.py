"""The options are defined once (bbt_widget.options) and every check reads them from there."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget.core import data, options, validation
from bbt_widget.engines import prepare_data

TABLE = pd.DataFrame(
    [("a", "b", 3, 1), ("a", "c", 2, 2), ("b", "c", 1, 3)],
    columns=["alg1", "alg2", "win1", "win2"],
)
STAN_DATA = {"n_alg": 3, "i1": [1, 1, 2], "i2": [2, 3, 3], "win1": [3, 2, 1], "win2": [1, 2, 3]}


def test_the_old_names_are_the_options_module():
    # bbt_widget.data keeps the names users imported, but they are the same objects
    assert data.TIE_POLICIES is options.TIE_POLICIES
    assert data.HYPERPRIORS is options.HYPERPRIORS
    assert data.check_ties is validation.check_ties
    assert data.DEFAULT_SEED == options.DEFAULT_SEED == 1


@pytest.mark.parametrize(
    ("family", "scale"),
    [("lognormal", 0.5), ("cauchy", 1.0), ("half-Cauchy", 1.0), ("normal", 3.0)],
)
def test_each_hyperprior_family_has_appendix_a_default_scale(family, scale):
    # paper Appendix A: lognormal 0.5, half-Cauchy 1.0 (Carpenter), half-normal 3.0
    name, got = validation.check_hyperprior(family)
    assert got == scale
    assert validation.check_hyperprior(family, None) == (name, scale)
    assert validation.check_hyperprior(family, 0.25) == (name, 0.25)  # a set scale wins


@pytest.mark.parametrize(("family", "code", "scale"), [("cauchy", 2, 1.0), ("normal", 3, 3.0)])
def test_stan_data_without_a_scale_takes_the_familys_default(family, code, scale):
    out = prepare_data("bbt", {**STAN_DATA, "hyperprior": family})
    assert (out["hyperprior"], out["prior_scale"]) == (code, scale)
    assert prepare_data("bbt", {**STAN_DATA, "hyperprior": code})["prior_scale"] == scale
    assert prepare_data("bbt", STAN_DATA)["prior_scale"] == 0.5  # lognormal, as before


def test_unknown_hyperprior_lists_the_families_with_their_labels():
    with pytest.raises(ValueError, match=r"'cauchy' \(half-Cauchy\)"):
        validation.check_hyperprior("student")


@pytest.mark.parametrize("bad", [0, 1, 1.2, -0.1, float("nan")])
def test_fit_rejects_adapt_delta_outside_0_1_before_any_fit(bad):
    with pytest.raises(ValueError, match=r"adapt_delta must lie strictly between 0 and 1"):
        bbt.fit(TABLE, adapt_delta=bad, engine="pystan")


@pytest.mark.parametrize("bad", ["0.9", True, None])
def test_fit_rejects_adapt_delta_that_is_not_a_number(bad):
    with pytest.raises(TypeError, match=r"adapt_delta must be a number"):
        bbt.fit(TABLE, adapt_delta=bad, engine="pystan")


@pytest.mark.parametrize("bad", [0, -1, 31, 10.0, True, "12"])
def test_fit_rejects_bad_max_treedepth_before_any_fit(bad):
    with pytest.raises(ValueError, match=r"max_treedepth must be an integer from 1 to 30"):
        bbt.fit(TABLE, max_treedepth=bad, engine="pystan")


def test_interpretations_are_checked_against_the_options():
    assert validation.check_interpretation("strong") == "strong"
    with pytest.raises(ValueError, match=r"must be 'weak' or 'strong', got 'medium'"):
        validation.check_interpretation("medium")


def test_options_travel_as_json():
    sent = json.loads(json.dumps(options.as_dict()))
    assert [t[0] for t in sent["ties"]] == list(options.TIE_POLICIES)
    assert [h[2] for h in sent["hyperpriors"]] == [0.5, 1.0, 3.0]
    assert sent["d_min"] == {"min": 0.0, "max": 1.5, "step": 0.05}
    assert sent["rope"] == [0.45, 0.55] and sent["hdi"] == 0.89


#: Parameters whose defaults are options: a literal elsewhere drifts from the one source
#: (the hierarchical t-test once said hdi=0.95 beside DEFAULT_HDI = 0.89, unnamed).
OPTION_PARAMETERS = ("chains", "iter_warmup", "iter_sampling", "hdi")
#: widget/app.py is at its line limit: its chains default moves when the module is split.
KNOWN_LITERALS = {("widget/app.py", "chains")}


def test_no_literal_default_of_an_option_outside_the_options_module():
    import ast
    from pathlib import Path

    root = Path(bbt.__file__).parent
    found = set()
    for path in root.rglob("*.py"):
        where = path.relative_to(root).as_posix()
        if where == "core/options.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(node, ast.ClassDef):  # dataclass fields: ``chains: int = 4``
                pairs = [
                    (s.target.id, s.value)
                    for s in node.body
                    if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
                ]
            else:
                a = node.args
                positional = [p.arg for p in a.posonlyargs + a.args]
                pairs = list(zip(positional[len(positional) - len(a.defaults) :], a.defaults))
                pairs += [(p.arg, d) for p, d in zip(a.kwonlyargs, a.kw_defaults)]
            for name, default in pairs:
                literal = isinstance(default, ast.Constant) and default.value not in (None, ...)
                if name in OPTION_PARAMETERS and literal:  # None: "the engine's", ...: a Protocol
                    found.add((where, name))
    assert found <= KNOWN_LITERALS, sorted(found - KNOWN_LITERALS)


def test_the_t_tests_keep_their_own_hdi_from_the_options():
    import inspect

    for test in ("correlated_ttest", "hierarchical", "hierarchical_pairs"):
        default = inspect.signature(getattr(bbt.baselines, test)).parameters["hdi"].default
        assert default == options.TTEST_HDI == 0.95, test  # their decision probability
    assert inspect.signature(bbt.ranking_model).parameters["hdi"].default == options.DEFAULT_HDI


def _values(hint: object) -> set[object]:
    """The values a type admits: a Literal's, through unions (``None`` as itself)."""
    from typing import get_args

    args = get_args(hint)
    if not args:
        return {None} if hint is type(None) else {hint}
    return set().union(*(_values(a) if get_args(a) or a is type(None) else {a} for a in args))


def test_option_values_are_literal_types_that_match_their_tables():
    # the option strings are Literal types from core/options.py, so a type checker catches a
    # misspelt ties="spead"; each type lists exactly the values its table and checks accept
    from typing import get_type_hints

    import bbt_widget as bbt
    from bbt_widget import engines
    from bbt_widget.core import options

    assert options.TIE_POLICIES == tuple(options.TIE_LABELS)
    assert options.INTERPRETATIONS == tuple(options.INTERPRETATION_LABELS)
    assert _values(options.HyperpriorFamily) == set(options.HYPERPRIOR_FAMILIES)
    names = set(options.HYPERPRIOR_FAMILIES) | set(options.HYPERPRIOR_ALIASES)
    assert _values(options.HyperpriorName) == names
    assert _values(options.EngineName) == set(engines.ENGINES)
    assert _values(options.EngineChoice) == {"auto", *engines.ENGINES}
    hints = get_type_hints(bbt.fit)
    assert _values(hints["ties"]) == {*options.TIE_POLICIES, None}
    assert _values(hints["hyperprior"]) == names
    assert _values(hints["engine"]) == {"auto", *engines.ENGINES}
    assert _values(hints["draws"]) == set(options.DRAWS_MODES)
    assert _values(get_type_hints(bbt.win_table)["ties"]) == {*options.TIE_POLICIES, None}
