"""The widget's "Settings as code" export (``w.code()``) is Python a user runs: no value that
reaches it may turn into code. Every setting is checked where it enters (from Python and from
the browser), and the code writes only checked values as ``repr`` of plain Python values.

Hostile values: a line break that ends the comment the interpretation is written into, then a
line of code; values that are no literals (``nan``, ``inf``, numpy scalars).
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bbt_widget.widget.app import BBTWidget
from bbt_widget.widget.checks import SettingRefused

FIT_TIMEOUT = 300


def _payload(marker: Path) -> str:
    """A line of Python that leaves a file behind when run, after a line break."""
    return f"weak\nopen({str(marker)!r}, 'w').write('ran')\n#"


#: The string settings the front end syncs, each given a line of code after a line break.
STRING_TRAITS = ("interpretation", "ties", "hyperprior", "control", "focus", "metric")


@pytest.fixture(scope="module")
def widget(request: pytest.FixtureRequest) -> BBTWidget:
    from bbt_widget import datasets

    w = BBTWidget(datasets.load_base(), dataset="db", engine="numpy", seed=3, stan_check=False)
    request.addfinalizer(w.close)
    assert w.wait(FIT_TIMEOUT), w.error
    return w


def _only_the_fit_and_its_summary(code: str) -> None:
    """The code is the import, ``result = bbt.fit(...)`` and ``summary = result.summary(...)``,
    every argument a literal (or the data's name): nothing else runs."""
    tree = ast.parse(code)
    assert [type(node) for node in tree.body] == [ast.Import, ast.Assign, ast.Assign]
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    assert [ast.unparse(c.func) for c in calls] == ["bbt.fit", "result.summary"]
    for call in calls:
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            if not isinstance(arg, ast.Name):
                ast.literal_eval(arg)  # a literal, nothing that runs


@pytest.mark.parametrize("name", STRING_TRAITS)
def test_a_line_of_code_in_a_setting_never_reaches_the_code(
    widget: BBTWidget, name: str, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    payload = _payload(marker)
    with pytest.raises(SettingRefused, match=f"{name} = "):
        setattr(widget, name, payload)  # from Python
    widget.set_state({name: payload})  # from the browser: refused, the old value kept
    assert getattr(widget, name) != payload and name in widget.input_errors
    code = widget.code()
    assert "open(" not in code and "\n#\n" not in code
    _only_the_fit_and_its_summary(code)
    assert not marker.exists()


def test_the_code_runs_the_fit_and_nothing_else(widget: BBTWidget, tmp_path: Path) -> None:
    """Run: after every hostile value was refused, the code reproduces the view's summary and
    leaves no file behind."""
    from bbt_widget import datasets

    marker = tmp_path / "ran"
    for name in STRING_TRAITS:
        widget.set_state({name: _payload(marker)})
    widget.set_state({"tie_threshold": float("nan"), "prior_scale": float("inf")})
    code = widget.code()
    namespace: dict = {"df": datasets.load_base()}
    exec(code, namespace)
    assert not marker.exists()
    pd.testing.assert_frame_equal(namespace["summary"], widget.summary)


@pytest.mark.parametrize(
    ("name", "value"),
    [("tie_threshold", float("nan")), ("prior_scale", float("inf")), ("d_min", float("nan"))],
)
def test_no_literal_numbers_are_refused_where_they_enter(
    widget: BBTWidget, name: str, value: float
) -> None:
    with pytest.raises(SettingRefused, match=f"{name} = {value!r} not applied"):
        setattr(widget, name, value)
    assert "nan" not in widget.code() and "inf" not in widget.code()


@pytest.mark.slow
def test_numpy_values_are_written_as_plain_python(base: pd.DataFrame) -> None:
    """A layout given as numpy strings and settings given as numpy numbers: the code writes
    ``'alg'`` and ``0.8``, never ``np.str_('alg')`` (which fails when run without numpy
    imported as np)."""
    long = base.melt(id_vars="db", var_name="alg", value_name="acc")
    long["fold"] = long.groupby(["db", "alg"]).cumcount()
    w = BBTWidget(
        long,
        dataset=np.str_("db"),
        algorithm=np.str_("alg"),
        fold=np.str_("fold"),
        score=np.str_("acc"),
        engine="numpy",
        seed=np.int64(4),
        stan_check=False,
    )
    try:
        assert w.wait(FIT_TIMEOUT), w.error
        w.hdi = np.float64(0.8)
        w.tie_threshold = np.float64(0.001)
        assert w.wait(FIT_TIMEOUT), w.error
        code = w.code()
        assert "np." not in code and "algorithm='alg'" in code and "hdi=0.8" in code
        assert "tie_threshold=0.001" in code
        namespace: dict = {"df": long}
        exec(code, namespace)  # no NameError for np
        pd.testing.assert_frame_equal(namespace["summary"], w.summary)
    finally:
        w.close()
