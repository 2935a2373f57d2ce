"""Shared fixtures: the real results shipped with the package (no Stan, no network)."""

from __future__ import annotations

import pandas as pd
import pytest

from bbt_widget import datasets


@pytest.fixture(scope="session")
def _pmlb16_once() -> pd.DataFrame:
    return datasets.load_pmlb16()


@pytest.fixture(scope="session")
def _base_once() -> pd.DataFrame:
    return datasets.load_base()


@pytest.fixture
def pmlb16(_pmlb16_once: pd.DataFrame) -> pd.DataFrame:
    """All 16 classifiers x 132 PMLB data sets, one row per (data set, fold); ``db`` names
    the data set. A fresh copy per test, so a test may modify it."""
    return _pmlb16_once.copy()


@pytest.fixture
def base(_base_once: pd.DataFrame) -> pd.DataFrame:
    """The paper's base results (``datasets.load_base()``): columns ``db, dt, lda, lgbm,
    xgb, svm``, 4 fold rows for each of 20 data sets. A fresh copy per test."""
    return _base_once.copy()


@pytest.fixture
def base_means(base: pd.DataFrame) -> pd.DataFrame:
    """The base results averaged over folds (the paper's Table 2): one row per data set,
    data-set names in the index."""
    return base.groupby("db", sort=False).mean()
