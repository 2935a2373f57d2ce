"""One vocabulary for results: every result class of the public API answers ``summary()``
with a DataFrame, whatever method made it (the fit, the lab, the baselines, the ranking
models, the audit), so that a user who learnt ``bbt.fit(...).summary()`` can read any of
them the same way."""

from __future__ import annotations

import inspect
import warnings

import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget import baselines, ranking


def _result_classes() -> dict[str, type]:
    """Every class of the public API whose instances are results (``...Result``, and the
    lab's and the audit's results)."""
    found: dict[str, type] = {}
    for module in (bbt, baselines, ranking):
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.isclass(value) and (
                name.endswith("Result") or name in ("Audit", "Influence", "Calibration")
            ):
                found[name] = value
    return found


def test_every_result_class_has_a_summary_method():
    classes = _result_classes()
    assert {"BBTResult", "SweepResult", "HierarchicalResult", "MallowsResult", "Audit"} <= set(
        classes
    )
    missing = [n for n, c in classes.items() if not callable(getattr(c, "summary", None))]
    assert not missing, f"no summary(): {missing}"


@pytest.fixture(scope="module")
def results() -> dict[str, object]:
    """One result of each kind, on the shipped results, at quick settings."""
    base = bbt.datasets.load_base()
    folds = bbt.datasets.load_pmlb16()
    quick = {"chains": 2, "iter_sampling": 200}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short chains: the diagnostics say so
        fit = bbt.fit(base, dataset="db", seed=1, **quick)
        half = {d: ("a" if k % 2 else "b") for k, d in enumerate(base["db"].unique())}
        return {
            "BBTResult": fit,
            "GroupedBBTResult": bbt.fit(base, dataset="db", group=half, seed=1, **quick),
            "SweepResult": bbt.sweep(base, dataset="db", grid={"ties": ["spread"]}, n_jobs=1),
            "Influence": bbt.influence(fit, refit="none"),
            "Calibration": bbt.calibration(
                base, dataset="db", n_train=10, n_test=5, repeats=2, n_jobs=1, **quick
            ),
            "Audit": bbt.audit(base, dataset="db"),
            "FriedmanResult": baselines.friedman(base, dataset="db"),
            "NemenyiResult": baselines.nemenyi(base, dataset="db"),
            "WilcoxonResult": baselines.wilcoxon_holm(base, dataset="db"),
            "BayesianSignedRankResult": baselines.bayesian_signed_rank(
                base, dataset="db", n_samples=2000, seed=1
            ),
            "BayesianSignTestResult": baselines.bayesian_sign_test(
                base, dataset="db", n_samples=2000, seed=1
            ),
            "CorrelatedTTestResult": baselines.correlated_ttest(
                folds, a="rf", b="xgb", dataset="db", rho=1 / 4
            ),
            "AgreementResult": baselines.agreement(base, fit, dataset="db", n_samples=2000),
            "RankingModelResult": ranking.plackett_luce(base, dataset="db", seed=1),
            "MallowsResult": ranking.mallows(
                base, dataset="db", seed=1, chains=2, burn_in=100, iter_sampling=200
            ),
        }


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        "BBTResult",
        "GroupedBBTResult",
        "SweepResult",
        "Influence",
        "Calibration",
        "Audit",
        "FriedmanResult",
        "NemenyiResult",
        "WilcoxonResult",
        "BayesianSignedRankResult",
        "BayesianSignTestResult",
        "CorrelatedTTestResult",
        "AgreementResult",
        "RankingModelResult",
        "MallowsResult",
    ],
)
def test_summary_gives_a_frame(results, name):
    result = results[name]
    assert type(result).__name__ == name
    summary = result.summary()
    assert isinstance(summary, pd.DataFrame) and len(summary.columns) > 0
