"""Real results shipped with the package (see ``NOTICE.md`` in this folder).

``pmlb16_4fold.csv``: accuracy of 16 classifiers with default hyper-parameters on 132 PMLB
data sets, 4-fold cross-validation with the same folds for every classifier; one row per
(data set, fold), column ``db`` names the data set. From the ``data-raw/ll.csv`` file of the
bbtcomp package by Jacques Wainer (MIT License, Copyright (c) 2022 bbtcomp authors): the
"large-large" use case of the BBT paper.
"""

from __future__ import annotations

from importlib.resources import files

import pandas as pd

__all__ = [
    "BASE_ALGORITHMS",
    "BASE_DATASETS",
    "load_base",
    "load_pmlb16",
]

#: The paper's "base results" (Table 2): these classifiers, in the paper's order...
BASE_ALGORITHMS = ("dt", "lda", "lgbm", "xgb", "svm")
#: ...on these 20 data sets.
BASE_DATASETS = (
    "biomed",
    "breast",
    "breast_w",
    "buggyCrx",
    "clean1",
    "cmc",
    "colic",
    "corral",
    "credit_g",
    "diabetes",
    "ionosphere",
    "irish",
    "molecular_b...y_promoters",
    "monk3",
    "prnn_crabs",
    "prnn_synth",
    "saheart",
    "threeOf9",
    "tokyo1",
    "vote",
)


def load_pmlb16() -> pd.DataFrame:
    """All 16 classifiers x 132 data sets, one row per (data set, fold); ``db`` names the set."""
    with (files(__package__) / "pmlb16_4fold.csv").open("rb") as fh:
        return pd.read_csv(fh)


def load_base() -> pd.DataFrame:
    """The paper's base results: dt, lda, lgbm, xgb, svm on 20 data sets, fold rows."""
    df = load_pmlb16()
    df = df[df["db"].isin(BASE_DATASETS)]
    return df[["db", *BASE_ALGORITHMS]].reset_index(drop=True)
