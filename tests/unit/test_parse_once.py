"""Results read once: every public entry point takes the TidyResults of ``tidy_results`` as it
takes the table and its layout, and gives the same result."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import altair as alt
import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget.core.data import as_tidy
from bbt_widget.core.tidy import LAYOUT_KEYS, Layout, TidyResults
from bbt_widget.fitting import prepare_fit

#: Few draws on the numpy engine: the two calls must agree, not be precise.
QUICK = {"engine": "numpy", "chains": 1, "iter_warmup": 50, "iter_sampling": 100, "seed": 3}


@pytest.fixture(scope="module")
def long_errors() -> tuple[pd.DataFrame, dict[str, Any]]:
    """The shipped results in long form as errors (lower is better), so that every layout
    keyword but ``sd`` is used, and four algorithms to keep the fits small."""
    base = bbt.datasets.load_base().drop(columns=["svm"])
    base["fold"] = base.groupby("db").cumcount()
    long = base.melt(id_vars=["db", "fold"], var_name="alg", value_name="acc")
    long["err"] = 1.0 - long.pop("acc")
    layout = {
        "dataset": "db",
        "algorithm": "alg",
        "fold": "fold",
        "score": "err",
        "lower_is_better": True,
    }
    return long, layout


def _fit(data: Any, **layout: Any) -> bbt.BBTResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few draws: the diagnostics may complain alike
        return bbt.fit(data, **layout, **QUICK)


def _fit_view(res: bbt.BBTResult) -> tuple[Any, ...]:
    return res.summary(), dict(res.settings), res.win_table, res.beta


def _prepared_view(job: Any) -> tuple[Any, ...]:
    return job.table, job.stan_data, dict(job.settings), job.warnings, job.audit.to_frame()


def _report(data: Any, **layout: Any) -> str:
    """The Markdown report of the results with a side method, its text up to the provenance
    (which holds the time it was written)."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = bbt.report.write(data, Path(folder) / "r.md", methods="friedman", **layout, **QUICK)
        return out.read_text().split("## Provenance", 1)[0]


def _widget(data: Any, **layout: Any) -> Any:
    """The widget's first fit: its summary and the headline."""
    from bbt_widget.widget.app import BBTWidget

    w = BBTWidget(data, **layout, **QUICK, stan_check=False)
    try:
        assert w.wait(120), (w.status_text, w.error)
        return w.result.summary(), w.headline, w.algorithms
    finally:
        w.close()


def _agreement(data: Any, **layout: Any) -> Any:
    fitted = _fit(data, **layout)
    return bbt.baselines.agreement(data, fitted, **layout, n_samples=2000, seed=1)


#: name -> (call, view of the result that must agree): each call takes the results and, for
#: the table, its layout.
ENTRY_POINTS: dict[str, tuple[Callable[..., Any], Callable[[Any], Any]]] = {
    "win_table": (bbt.win_table, lambda r: r),
    "audit": (bbt.audit, lambda r: r.to_frame()),
    "prepare_fit": (
        lambda d, **k: prepare_fit(d, **k, ties="spread", size=(1, 100)),
        _prepared_view,
    ),
    "fit": (_fit, _fit_view),
    "sweep": (
        lambda d, **k: bbt.sweep(d, **k, grid={"ties": ["spread", "add"]}, n_jobs=1, **QUICK),
        lambda r: r.frame,
    ),
    "influence": (lambda d, **k: bbt.influence(_fit(d, **k), refit="none"), lambda r: r.table),
    "calibration": (
        lambda d, **k: bbt.calibration(d, **k, n_train=8, n_test=4, repeats=2, n_jobs=1, **QUICK),
        lambda r: (r.cases, r.settings, r.splits),
    ),
    "ranking_model": (
        lambda d, **k: bbt.ranking_model(d, **k, chains=1, iter_warmup=50, iter_sampling=100),
        lambda r: (r.ranking, r.top_k, r.settings),
    ),
    "mallows": (
        lambda d, **k: bbt.ranking_model(
            d, **k, model="mallows", chains=1, iter_warmup=50, iter_sampling=100
        ),
        lambda r: (r.ranking, r.settings),
    ),
    "friedman": (bbt.baselines.friedman, lambda r: r),
    "nemenyi": (bbt.baselines.nemenyi, lambda r: r),
    "wilcoxon_holm": (bbt.baselines.wilcoxon_holm, lambda r: r),
    "bayesian_signed_rank": (
        lambda d, **k: bbt.baselines.bayesian_signed_rank(d, **k, n_samples=2000, seed=1),
        lambda r: r,
    ),
    "bayesian_sign_test": (
        lambda d, **k: bbt.baselines.bayesian_sign_test(d, **k, n_samples=2000, seed=1),
        lambda r: r,
    ),
    "correlated_ttest": (
        lambda d, **k: bbt.baselines.correlated_ttest(d, **k, a="dt", b="lda", rho=0.25),
        lambda r: r,
    ),
    "hierarchical": (
        lambda d, **k: bbt.baselines.hierarchical(
            d, **k, a="dt", b="lda", rho=0.25, chains=1, iter_warmup=100, iter_sampling=100
        ),
        lambda r: r.table,
    ),
    "hierarchical_pairs": (
        lambda d, **k: bbt.baselines.hierarchical_pairs(
            d,
            **k,
            algorithms=["dt", "lda"],
            rho=0.25,
            chains=1,
            iter_warmup=100,
            iter_sampling=100,
            n_jobs=1,
        ),
        lambda r: r.table.drop(columns="seconds"),  # the time each fit took
    ),
    "agreement": (_agreement, lambda r: r.table),
    "report.write": (_report, lambda r: r),
    "BBTWidget": (_widget, lambda r: r),
    "scores_cd_diagram": (bbt.baselines.scores_cd_diagram, lambda r: r.to_dict()),
}


def _assert_same(a: Any, b: Any, where: str = "result") -> None:
    """Equal values, DataFrames and arrays included (NaN equal to NaN)."""
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b, obj=where)
    elif isinstance(a, pd.Series):
        pd.testing.assert_series_equal(a, b, obj=where)
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b, err_msg=where)
    elif isinstance(a, alt.TopLevelMixin):
        _assert_same(a.to_dict(), b.to_dict(), where)
    elif dataclasses.is_dataclass(a) and not isinstance(a, type):
        assert type(a) is type(b), where
        for f in dataclasses.fields(a):
            _assert_same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, Mapping):
        assert list(a) == list(b), where
        for k in a:
            _assert_same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and np.isnan(a):
        assert isinstance(b, float) and np.isnan(b), where
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ENTRY_POINTS))
def test_every_entry_point_takes_the_results_read_once(name, long_errors):
    long, layout = long_errors
    call, view = ENTRY_POINTS[name]
    tidy = bbt.tidy_results(long, **layout)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from_table = call(long, **layout)
        from_tidy = call(tidy)
    _assert_same(view(from_tidy), view(from_table), name)


def test_the_layout_given_with_results_read_must_agree(long_errors):
    long, layout = long_errors
    tidy = bbt.tidy_results(long, **layout)
    assert as_tidy(tidy, **layout) is tidy  # the same layout again: nothing to read
    assert as_tidy(tidy, lower_is_better=True) is tidy
    with pytest.raises(ValueError, match=r"score='acc' \(they were read with 'err'\)"):
        bbt.win_table(tidy, score="acc")
    with pytest.raises(ValueError, match=r"lower_is_better=True \(they were read with False\)"):
        as_tidy(bbt.tidy_results(long, **{**layout, "lower_is_better": False}), **layout)
    other = pd.DataFrame({"dt": [0.1]})
    with pytest.raises(ValueError, match="sd=<a 1x1 table>"):
        bbt.baselines.friedman(tidy, sd=other)


def test_layout_holds_the_six_keywords_and_records_sd_as_given():
    assert LAYOUT_KEYS == ("dataset", "algorithm", "fold", "score", "sd", "lower_is_better")
    sd = pd.DataFrame({"a": [0.1]})
    layout = Layout(dataset="db", sd=sd)
    assert layout.given() == ("dataset", "sd")
    assert layout.record()["sd"] is True and layout.as_dict()["sd"] is sd
    with pytest.raises(dataclasses.FrozenInstanceError):
        layout.dataset = "x"  # type: ignore[misc]


def test_results_built_by_hand_know_only_their_orientation():
    frame = pd.DataFrame(
        {"dataset": ["d"] * 2, "algorithm": ["a", "b"], "fold": [0, 0], "score": [1.0, 2.0]}
    )
    tidy = TidyResults(frame, ("a", "b"), ("d",), lower_is_better=True)
    assert tidy.read_with.lower_is_better and tidy.read_with.given() == ("lower_is_better",)
    with pytest.raises(ValueError, match=r"dataset='d' \(they were read with None\)"):
        as_tidy(tidy, dataset="d")


def test_the_audit_of_results_read_checks_their_raw_columns():
    wide = bbt.datasets.load_base()
    wide["const"] = 0.5  # a constant column: only the raw table shows it
    expected = bbt.audit(wide, dataset="db").to_frame()
    assert "constant" in set(expected["check"])
    pd.testing.assert_frame_equal(
        bbt.audit(bbt.tidy_results(wide, dataset="db")).to_frame(), expected
    )


def test_what_needs_the_raw_table_says_so(long_errors):
    long, layout = long_errors
    tidy = bbt.tidy_results(long, **layout)
    with pytest.raises(ValueError, match=r"already read .*dict data set -> group"):
        bbt.fit(tidy, group="db", **QUICK)
    with pytest.raises(ValueError, match=r"run='fold'.*already read"):
        bbt.baselines.correlated_ttest(tidy, a="dt", b="lda", run="fold")
    # several metrics are several score columns of one table; a TidyResults has one score
    with pytest.raises(TypeError, match="one DataFrame with a score column per metric"):
        bbt.compare_metrics(tidy, metrics=["err"])


def test_no_module_but_core_data_reads_a_results_table():
    """The one parser, ``tidy_results``, is called in ``core/data.py`` alone: every other
    module takes results through ``as_tidy``, which reads a table once and passes results
    already read on as they are."""
    import ast
    from pathlib import Path

    package = Path(bbt.__file__).parent
    callers = []
    for path in sorted(package.rglob("*.py")):
        if path == package / "core" / "data.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", getattr(node.func, "attr", ""))
                if name == "tidy_results":
                    callers.append(f"{path.relative_to(package)}:{node.lineno}")
    assert callers == []
