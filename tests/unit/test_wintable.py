"""bbt_widget.win_table: win/loss/tie counts (paper Sec. 5.2, 5.6, 6.1, 6.2).

Expected tables are typed from the paper (Tables 3a, 3b, 7a, lines ~375-390 and ~520-535
of the paper text) with the correction documented in shared/data/README.md: the paper
counted three ~2e-16 differences of means as wins; they are ties. Everything else is
computed by hand in the test, or by the exact rational-arithmetic oracle below (which
recovers every accuracy as the fraction k/n it is, and so needs no float tolerance).
"""

from __future__ import annotations

import math
import statistics
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget.core import data as D
from bbt_widget.core.wintable import apply_ties

COLUMNS = ["alg1", "alg2", "win1", "win2", "ties"]
RAW = ["raw_win1", "raw_win2", "raw_ties"]


def _table(rows, ties=True):
    df = pd.DataFrame(rows, columns=COLUMNS if ties else COLUMNS[:4])
    if not ties:
        df["ties"] = 0
    return df


def assert_table(got: pd.DataFrame, expected: pd.DataFrame) -> None:
    """The model counts of ``got`` (``win_table`` adds the raw counts after them)."""
    assert list(got.columns) in (COLUMNS, COLUMNS + RAW)
    cols = [c for c in got.columns if c in expected.columns]  # both raw when both have them
    got, expected = got[cols], expected[cols]
    for col in cols[2:]:
        assert pd.api.types.is_integer_dtype(got[col]), col
    got = got.astype({c: "int64" for c in cols[2:]}).reset_index(drop=True)
    got = got.astype({"alg1": object, "alg2": object})
    expected = expected.astype({c: "int64" for c in cols[2:]})
    expected = expected.astype({"alg1": object, "alg2": object})
    pd.testing.assert_frame_equal(got, expected)


def unordered(table: pd.DataFrame, order) -> pd.DataFrame:
    """The table with every pair oriented and sorted by ``order`` (win1/win2 swapped with
    alg1/alg2), to compare tables whose algorithms appeared in different orders."""
    rank = {a: i for i, a in enumerate(order)}
    rows = []
    for a, b, w1, w2, t in table[COLUMNS].itertuples(index=False):
        if rank[a] > rank[b]:
            a, b, w1, w2 = b, a, w2, w1
        rows.append((a, b, int(w1), int(w2), int(t)))
    return _table(sorted(rows, key=lambda r: (rank[r[0]], rank[r[1]])))


# --------------------------------------------------------------------------- paper tables

#: Table 3a as printed (raw counts; three noise "wins" included).
TABLE_3A_PRINTED = _table(
    [
        ("dt", "lda", 6, 13, 1),
        ("dt", "lgbm", 0, 17, 3),
        ("dt", "xgb", 0, 17, 3),
        ("dt", "svm", 5, 14, 1),
        ("lda", "lgbm", 6, 13, 1),
        ("lda", "xgb", 5, 14, 1),
        ("lda", "svm", 5, 15, 0),
        ("lgbm", "xgb", 9, 8, 3),
        ("lgbm", "svm", 10, 9, 1),
        ("xgb", "svm", 11, 8, 1),
    ]
)

#: Table 3a corrected: svm's "win" over lda on vote and lgbm's on colic, xgb's on breast_w
#: are ties (README: lda-svm 5/14/1, lgbm-xgb 8/7/5).
TABLE_3A = _table(
    [
        ("dt", "lda", 6, 13, 1),
        ("dt", "lgbm", 0, 17, 3),
        ("dt", "xgb", 0, 17, 3),
        ("dt", "svm", 5, 14, 1),
        ("lda", "lgbm", 6, 13, 1),
        ("lda", "xgb", 5, 14, 1),
        ("lda", "svm", 5, 14, 1),
        ("lgbm", "xgb", 8, 7, 5),
        ("lgbm", "svm", 10, 9, 1),
        ("xgb", "svm", 11, 8, 1),
    ]
)

#: Table 3b (spread) as printed, with lda-svm 6/15 instead of 5/15.
TABLE_3B = _table(
    [
        ("dt", "lda", 7, 14),
        ("dt", "lgbm", 2, 19),
        ("dt", "xgb", 2, 19),
        ("dt", "svm", 6, 15),
        ("lda", "lgbm", 7, 14),
        ("lda", "xgb", 6, 15),
        ("lda", "svm", 6, 15),
        ("lgbm", "xgb", 11, 10),
        ("lgbm", "svm", 11, 10),
        ("xgb", "svm", 12, 9),
    ],
    ties=False,
)

#: Table 7a (xgb missing on biomed and breast; spread) as printed, lda-svm 6/15 for 5/15.
TABLE_7A = _table(
    [
        ("dt", "lda", 7, 14),
        ("dt", "lgbm", 2, 19),
        ("dt", "xgb", 2, 17),
        ("dt", "svm", 6, 15),
        ("lda", "lgbm", 7, 14),
        ("lda", "xgb", 6, 13),
        ("lda", "svm", 6, 15),
        ("lgbm", "xgb", 10, 9),
        ("lgbm", "svm", 11, 10),
        ("xgb", "svm", 10, 9),
    ],
    ties=False,
)

#: The three floating-point-noise "wins" of the paper: (data set, alg1, alg2).
BASE_ALGS = ("dt", "lda", "lgbm", "xgb", "svm")
NOISY_TIES = [("vote", "lda", "svm"), ("breast_w", "lgbm", "xgb"), ("colic", "lgbm", "xgb")]


# --------------------------------------------------------------------------- helpers


def _drop_xgb_biomed_breast(base: pd.DataFrame) -> pd.DataFrame:
    base.loc[base["db"].isin(["biomed", "breast"]), "xgb"] = np.nan
    return base


def _long(wide: pd.DataFrame, labels=("f1", "f2", "f3", "f4")) -> pd.DataFrame:
    """Wide by fold (column db) -> long: db, fold, alg, acc."""
    wide = wide.assign(fold=[labels[i] for i in wide.groupby("db").cumcount()])
    return wide.melt(id_vars=["db", "fold"], var_name="alg", value_name="acc")


def _shuffle_within_data_sets(df: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Permute the rows of each data set (whole rows: folds stay paired across algorithms)."""
    parts = [g.iloc[rng.permutation(len(g))] for _, g in df.groupby("db", sort=False)]
    return pd.concat(parts, ignore_index=True)


def _exact(x: float) -> Fraction:
    """An accuracy as the exact fraction k/n it stands for (test sets < 100000 rows)."""
    f = Fraction(float(x)).limit_denominator(100_000)
    assert abs(float(f) - x) < 1e-13, x  # fractions with denominators <= 1e5 are > 1e-10 apart
    return f


def _var(x: list[Fraction]) -> Fraction:
    m = sum(x) / len(x)
    return sum((v - m) ** 2 for v in x) / (len(x) - 1)


def oracle(df: pd.DataFrame, d_min=None, paired=True) -> pd.DataFrame:
    """Raw win/loss/tie counts in exact rational arithmetic, straight from the paper:
    a win iff mean1 - mean2 > d_min * noise (Eq. 4 / Eq. 6), noise = sqrt((s1^2 + s2^2)/2)
    unpaired or the sd of the fold differences paired (ddof=1); compared as squares, so no
    square root and no rounding. One fold (no sd) -> compare means; unpaired, a single fold's
    variance is 0. NaN = missing. Paired with folds that differ between the two algorithms:
    mean and sd of the differences on the common folds; fewer than 2 common -> missing."""
    algs = [c for c in df.columns if c != "db"]
    dm2 = None if d_min is None else Fraction(d_min) ** 2
    cells = {}
    for ds, g in df.groupby("db", sort=False):
        cells[ds] = {a: [None if math.isnan(v) else _exact(v) for v in g[a]] for a in algs}
    stats = {
        (ds, a): (sum(x) / len(x), _var(x) if len(x) > 1 else None)
        for ds, cell in cells.items()
        for a, x in ((a, [v for v in cell[a] if v is not None]) for a in algs)
        if x
    }
    rows = []
    for i, a in enumerate(algs):
        for b in algs[i + 1 :]:
            w1 = w2 = t = 0
            for ds, cell in cells.items():
                if (ds, a) not in stats or (ds, b) not in stats:
                    continue
                (ma, va), (mb, vb) = stats[ds, a], stats[ds, b]
                diff = ma - mb
                noise2 = None
                if dm2 is not None and paired:
                    d = [u - v for u, v in zip(cell[a], cell[b]) if u is not None and v is not None]
                    if [u is None for u in cell[a]] != [v is None for v in cell[b]]:
                        if len(d) < 2:
                            continue  # cannot pair: a missing result
                        diff = sum(d) / len(d)
                    noise2 = _var(d) if len(d) > 1 else None
                elif dm2 is not None:
                    noise2 = ((va or 0) + (vb or 0)) / 2
                limit = 0 if noise2 is None else dm2 * noise2
                if diff > 0 and diff * diff > limit:
                    w1 += 1
                elif diff < 0 and diff * diff > limit:
                    w2 += 1
                else:
                    t += 1
            rows.append((a, b, w1, w2, t))
    return _table(rows)


# =========================================================================== paper tables


def test_table_3a_raw_counts(base):
    assert_table(bbt.win_table(base, dataset="db", ties=None), TABLE_3A)


def test_table_3b_spread(base):
    assert_table(bbt.win_table(base, dataset="db", ties="spread"), TABLE_3B)
    assert_table(bbt.win_table(base, dataset="db"), TABLE_3B)  # spread is the default


def test_table_7a_missing_results(base):
    data = _drop_xgb_biomed_breast(base)
    assert_table(bbt.win_table(data, dataset="db", ties="spread"), TABLE_7A)


def test_table_7a_from_absent_long_rows(base):
    """Rows absent from long form count the same as NaN."""
    long = _long(base)
    long = long[~((long["alg"] == "xgb") & long["db"].isin(["biomed", "breast"]))]
    got = bbt.win_table(long, dataset="db", algorithm="alg", score="acc", fold="fold")
    assert_table(got, TABLE_7A)


def test_table_7a_from_missing_means(base_means):
    base_means.loc[["biomed", "breast"], "xgb"] = np.nan
    assert_table(bbt.win_table(base_means), TABLE_7A)
    long = base_means.reset_index().melt(id_vars="db", var_name="alg", value_name="acc")
    long = long.dropna()
    assert_table(bbt.win_table(long, dataset="db", algorithm="alg", score="acc"), TABLE_7A)


def test_printed_table_3a_differs_only_in_the_noise_pairs():
    """The correction touches exactly lda-svm and lgbm-xgb, by moving wins into ties."""
    diff = (TABLE_3A_PRINTED[["win1", "win2", "ties"]] != TABLE_3A[["win1", "win2", "ties"]]).any(
        axis=1
    )
    changed = TABLE_3A[diff]
    assert list(zip(changed["alg1"], changed["alg2"])) == [("lda", "svm"), ("lgbm", "xgb")]
    totals = TABLE_3A[["win1", "win2", "ties"]].sum(axis=1)
    assert (totals == 20).all()  # every pair met on all 20 data sets
    assert (TABLE_3A_PRINTED[["win1", "win2", "ties"]].sum(axis=1) == 20).all()


@pytest.mark.parametrize(("dataset", "a", "b"), NOISY_TIES)
def test_noise_level_mean_differences_are_ties(base, dataset, a, b):
    sub = base[base["db"] == dataset][["db", a, b]]
    x, y = sub[a].tolist(), sub[b].tolist()
    # the means as floats differ by float noise only...
    noise = abs(sub[a].mean() - sub[b].mean())
    assert 0 < noise < 1e-15
    # ...while the exact accuracies (k/n, test-set sizes 92..175) have equal means
    assert sum(map(_exact, x)) == sum(map(_exact, y))
    assert max(_exact(v).denominator for v in x + y) < 200
    for cols in ([a, b], [b, a]):
        got = bbt.win_table(sub[["db", *cols]], dataset="db", ties=None)
        assert_table(got, _table([(*cols, 0, 0, 1)]))
        means = sub.groupby("db")[cols].mean()
        assert_table(bbt.win_table(means, ties=None), _table([(*cols, 0, 0, 1)]))


def test_noise_ties_also_with_local_rope(base):
    for dataset, a, b in NOISY_TIES:
        sub = base[base["db"] == dataset][["db", a, b]]
        for paired in (True, False):
            got = bbt.win_table(sub, dataset="db", ties=None, d_min=0.0, paired=paired)
            assert got[["win1", "win2", "ties"]].values.tolist() == [[0, 0, 1]]


# =========================================================================== oracle


@pytest.mark.parametrize(
    ("d_min", "paired"),
    [(None, True), (0.0, True), (0.4, True), (0.4, False), (0.2, True), (0.2, False), (1, False)],
)
def test_base_matches_exact_oracle(base, d_min, paired):
    got = bbt.win_table(base, dataset="db", ties=None, d_min=d_min, paired=paired)
    assert_table(got, oracle(base, d_min, paired))


@pytest.mark.parametrize(("d_min", "paired"), [(0.2, True), (0.2, False), (1, False)])
def test_huge_scores_keep_their_wins(base, d_min, paired):
    """Scores above ~1e154 have squared deviations that overflow: every comparison on the
    data set used to become a tie. Scaling by a power of two is exact, so the counts must
    be those of the exact oracle on the scaled data (and of the unscaled data)."""
    scaled = base.assign(**{c: base[c] * 2.0**600 for c in base.columns if c != "db"})
    got = bbt.win_table(scaled, dataset="db", ties=None, d_min=d_min, paired=paired)
    assert got[["win1", "win2"]].to_numpy().sum() > 0  # not every comparison a tie
    assert_table(got, oracle(scaled, d_min, paired))
    assert_table(got, bbt.win_table(base, dataset="db", ties=None, d_min=d_min, paired=paired))


def test_oracle_reproduces_corrected_table_3a(base):
    """The oracle itself agrees with the paper's (corrected) numbers."""
    assert_table(oracle(base), TABLE_3A)


@pytest.mark.parametrize("d_min", [None, 0.4])
def test_all_pmlb16_results_match_exact_oracle(pmlb16, d_min):
    """132 data sets x 120 pairs, including qda missing 2 folds on lymphography."""
    got = bbt.win_table(pmlb16, dataset="db", ties=None, d_min=d_min, paired=False)
    assert_table(got, oracle(pmlb16, d_min, paired=False))


def test_missing_values_matches_exact_oracle(base):
    """Missing scattered folds and whole cells (unpaired: the mean of the remaining folds)."""
    rng = np.random.default_rng(7)
    holes = rng.random(base.shape[0] * 5).reshape(-1, 5) < 0.15
    base.iloc[:, 1:] = base.iloc[:, 1:].mask(holes)
    for d_min in (None, 0.4):
        got = bbt.win_table(base, dataset="db", ties=None, d_min=d_min, paired=False)
        assert_table(got, oracle(base, d_min, paired=False))


# =========================================================================== shapes


def test_every_input_shape_gives_the_same_table(base, base_means):
    rng = np.random.default_rng(0)
    expected = TABLE_3A
    shapes = {}
    shapes["wide by fold"] = bbt.win_table(base, dataset="db", ties=None)
    with_fold = base.assign(cv=base.groupby("db").cumcount() + 1)
    shapes["wide by fold, fold column, shuffled"] = bbt.win_table(
        with_fold.sample(frac=1, random_state=1), dataset="db", fold="cv", ties=None
    )
    shapes["wide by fold, names in index"] = bbt.win_table(base.set_index("db"), ties=None)
    long = _long(base)
    shapes["long"] = bbt.win_table(
        long, dataset="db", algorithm="alg", score="acc", fold="fold", ties=None
    )
    # shuffled long rows change the order of first appearance, hence of the pairs
    shapes["long, shuffled rows"] = bbt.win_table(
        long.iloc[rng.permutation(len(long))],
        dataset="db",
        algorithm="alg",
        score="acc",
        fold="fold",
        ties=None,
    )
    shapes["long, names in index"] = bbt.win_table(
        long.set_index("db"), algorithm="alg", score="acc", fold="fold", ties=None
    )
    shapes["wide means, names in index"] = bbt.win_table(base_means, ties=None)
    shapes["wide means, names in column"] = bbt.win_table(
        base_means.reset_index(), dataset="db", ties=None
    )
    means_long = base_means.reset_index().melt(id_vars="db", var_name="alg", value_name="acc")
    shapes["long means"] = bbt.win_table(
        means_long, dataset="db", algorithm="alg", score="acc", ties=None
    )
    sd = base.groupby("db", sort=False).std()
    shapes["means + sd"] = bbt.win_table(base_means, sd=sd, ties=None)
    for name, got in shapes.items():
        try:
            assert_table(unordered(got, BASE_ALGS), expected)
        except AssertionError as e:
            raise AssertionError(f"shape {name!r}") from e


@pytest.mark.parametrize(("d_min", "paired"), [(0.4, True), (0.4, False), (0.25, True)])
def test_wide_and_long_agree_under_local_rope(base, d_min, paired):
    wide = bbt.win_table(base, dataset="db", ties=None, d_min=d_min, paired=paired)
    long = _long(base).sample(frac=1, random_state=3)
    got = bbt.win_table(
        long,
        dataset="db",
        algorithm="alg",
        score="acc",
        fold="fold",
        ties=None,
        d_min=d_min,
        paired=paired,
    )
    assert_table(unordered(got, BASE_ALGS), wide)


def test_pair_order_follows_first_appearance():
    long = pd.DataFrame(
        {
            "ds": ["d1"] * 3 + ["d2"] * 3,
            "alg": ["c", "a", "b", "b", "a", "c"],
            "acc": [0.9, 0.5, 0.7, 0.6, 0.5, 0.8],
        }
    )
    got = bbt.win_table(long, dataset="ds", algorithm="alg", score="acc", ties=None)
    # d1: c 0.9 > b 0.7 > a 0.5;  d2: c 0.8 > b 0.6 > a 0.5
    assert_table(got, _table([("c", "a", 2, 0, 0), ("c", "b", 2, 0, 0), ("a", "b", 0, 2, 0)]))
    wide = pd.DataFrame({"z": [1.0, 2.0], "y": [2.0, 1.0], "x": [3.0, 3.0]})
    got = bbt.win_table(wide, ties=None)
    assert_table(got, _table([("z", "y", 1, 1, 0), ("z", "x", 0, 2, 0), ("y", "x", 0, 2, 0)]))


def test_table_size_and_types(pmlb16):
    got = bbt.win_table(pmlb16, dataset="db")
    assert len(got) == 16 * 15 // 2
    pairs = list(zip(got["alg1"], got["alg2"]))
    assert len(set(map(frozenset, pairs))) == len(pairs)
    assert pairs[0] == ("lgbm", "svm") and pairs[-1] == ("gbm", "mlp")


# =========================================================================== direction


def test_lower_is_better_on_errors_gives_table_3a(base):
    errors = base.copy()
    errors.iloc[:, 1:] = 1.0 - errors.iloc[:, 1:]
    got = bbt.win_table(errors, dataset="db", ties=None, lower_is_better=True)
    assert_table(got, TABLE_3A)
    negated = base.copy()
    negated.iloc[:, 1:] = -negated.iloc[:, 1:]
    assert_table(bbt.win_table(negated, dataset="db", ties=None, lower_is_better=True), TABLE_3A)


def test_lower_is_better_swaps_wins(base):
    swapped = TABLE_3A.rename(columns={"win1": "win2", "win2": "win1"})[COLUMNS]
    got = bbt.win_table(base, dataset="db", ties=None, lower_is_better=True)
    assert_table(got, swapped)
    for d_min, paired in ((0.4, True), (0.4, False)):
        hi = bbt.win_table(base, dataset="db", ties=None, d_min=d_min, paired=paired)
        lo = bbt.win_table(
            base, dataset="db", ties=None, d_min=d_min, paired=paired, lower_is_better=True
        )
        assert_table(lo, hi.rename(columns={"win1": "win2", "win2": "win1"})[COLUMNS])


def test_lower_is_better_by_hand():
    rmse = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [1.5, 1.0, 3.0]}, index=["x", "y", "z"])
    # x: a smaller -> a wins; y: b smaller -> b wins; z: equal -> tie
    got = bbt.win_table(rmse, lower_is_better=True, ties=None)
    assert_table(got, _table([("a", "b", 1, 1, 1)]))
    rmse.loc["y", "b"] = 4.0
    got = bbt.win_table(rmse, lower_is_better=True, ties=None)
    assert_table(got, _table([("a", "b", 2, 0, 1)]))


# =========================================================================== missing


def test_missing_results_do_not_count_for_that_pair_only():
    means = pd.DataFrame(
        {"a": [0.9, 0.8, np.nan], "b": [0.7, 0.9, 0.6], "c": [0.5, np.nan, 0.7]},
        index=["d1", "d2", "d3"],
    )
    # a-b: d1 a, d2 b (d3 missing a); a-c: d1 a only; b-c: d1 b, d3 c (d2 missing c)
    got = bbt.win_table(means, ties=None)
    assert_table(got, _table([("a", "b", 1, 1, 0), ("a", "c", 1, 0, 0), ("b", "c", 1, 1, 0)]))
    long = means.rename_axis("ds").reset_index().melt(id_vars="ds", var_name="alg")
    long = long.dropna().rename(columns={"value": "acc"})
    assert len(long) == 7  # the NaN cells are absent rows
    got = bbt.win_table(long, dataset="ds", algorithm="alg", score="acc", ties=None)
    assert_table(got, _table([("a", "b", 1, 1, 0), ("a", "c", 1, 0, 0), ("b", "c", 1, 1, 0)]))


def test_a_missing_fold_averages_the_remaining_folds():
    folds = pd.DataFrame({"db": ["d"] * 3, "a": [0.5, 0.9, np.nan], "b": [0.6, 0.6, 0.8]})
    # a: mean(0.5, 0.9) = 0.7 > b: mean(0.6, 0.6, 0.8) = 0.6667
    got = bbt.win_table(folds, dataset="db", ties=None)
    assert_table(got, _table([("a", "b", 1, 0, 0)]))


def test_pair_with_no_common_data_set_has_zero_counts():
    means = pd.DataFrame({"a": [0.9, np.nan], "b": [np.nan, 0.8], "c": [0.5, 0.5]})
    got = bbt.win_table(means, ties="spread")
    assert_table(got, _table([("a", "b", 0, 0, 0), ("a", "c", 1, 0, 0), ("b", "c", 1, 0, 0)]))


# =========================================================================== tie policies


def test_tie_policy_none_and_davidson_keep_raw_counts(base):
    assert_table(bbt.win_table(base, dataset="db", ties=None), TABLE_3A)
    assert_table(bbt.win_table(base, dataset="db", ties="davidson"), TABLE_3A)


def test_tie_policy_add(base):
    # each tie is a win for both: (w1 + t, w2 + t), ties 0
    expected = _table(
        [
            ("dt", "lda", 7, 14),
            ("dt", "lgbm", 3, 20),
            ("dt", "xgb", 3, 20),
            ("dt", "svm", 6, 15),
            ("lda", "lgbm", 7, 14),
            ("lda", "xgb", 6, 15),
            ("lda", "svm", 6, 15),
            ("lgbm", "xgb", 13, 12),
            ("lgbm", "svm", 11, 10),
            ("xgb", "svm", 12, 9),
        ],
        ties=False,
    )
    assert_table(bbt.win_table(base, dataset="db", ties="add"), expected)


def test_tie_policy_spread(base):
    # ceil(t/2) to each side: t = 1 -> 1, t = 3 -> 2, t = 5 -> 3
    expected = _table(
        [
            ("dt", "lda", 6 + 1, 13 + 1),
            ("dt", "lgbm", 0 + 2, 17 + 2),
            ("dt", "xgb", 0 + 2, 17 + 2),
            ("dt", "svm", 5 + 1, 14 + 1),
            ("lda", "lgbm", 6 + 1, 13 + 1),
            ("lda", "xgb", 5 + 1, 14 + 1),
            ("lda", "svm", 5 + 1, 14 + 1),
            ("lgbm", "xgb", 8 + 3, 7 + 3),
            ("lgbm", "svm", 10 + 1, 9 + 1),
            ("xgb", "svm", 11 + 1, 8 + 1),
        ],
        ties=False,
    )
    assert_table(expected, TABLE_3B)  # the hand computation is the paper's Table 3b
    assert_table(bbt.win_table(base, dataset="db", ties="spread"), expected)


def test_tie_policy_forget(base):
    expected = _table(
        [
            ("dt", "lda", 6, 13),
            ("dt", "lgbm", 0, 17),
            ("dt", "xgb", 0, 17),
            ("dt", "svm", 5, 14),
            ("lda", "lgbm", 6, 13),
            ("lda", "xgb", 5, 14),
            ("lda", "svm", 5, 14),
            ("lgbm", "xgb", 8, 7),
            ("lgbm", "svm", 10, 9),
            ("xgb", "svm", 11, 8),
        ],
        ties=False,
    )
    assert_table(bbt.win_table(base, dataset="db", ties="forget"), expected)


def test_spread_rounds_half_ties_up():
    raw = _table([("a", "b", 0, 0, t) for t in range(6)])
    raw["alg2"] = [f"b{t}" for t in range(6)]
    got = apply_ties(raw, "spread")
    assert got["win1"].tolist() == [0, 1, 1, 2, 2, 3]
    assert got["win2"].tolist() == [0, 1, 1, 2, 2, 3]
    assert got["ties"].tolist() == [0] * 6


@pytest.mark.parametrize(
    ("ties", "expected"),
    [
        (None, (3, 1, 4)),
        ("davidson", (3, 1, 4)),
        ("add", (7, 5, 0)),
        ("spread", (5, 3, 0)),
        ("forget", (3, 1, 0)),
    ],
)
def test_apply_ties_by_hand(ties, expected):
    raw = _table([("a", "b", 3, 1, 4)])
    got = apply_ties(raw, ties)
    assert tuple(got.loc[0, ["win1", "win2", "ties"]]) == expected
    assert raw.loc[0, "ties"] == 4  # input not modified


def test_apply_ties_validates():
    with pytest.raises(ValueError, match="unknown tie policy"):
        apply_ties(_table([("a", "b", 3, 1, 4)]), "halves")
    with pytest.raises(ValueError, match="must hold counts"):
        apply_ties(_table([("a", "b", -3, 1, 4)]), "spread")


# =========================================================================== local ROPE


def test_cmc_lgbm_xgb_is_a_tie_under_local_rope(base):
    """Paper Sec. 6 / Table 9: lgbm 'wins' cmc by 0.001 on the means, a tie under d_min=0.4."""
    cmc = base[base["db"] == "cmc"][["db", "lgbm", "xgb"]]
    lgbm, xgb = cmc["lgbm"].tolist(), cmc["xgb"].tolist()
    diff = statistics.mean(lgbm) - statistics.mean(xgb)
    d = diff / math.sqrt((statistics.stdev(lgbm) ** 2 + statistics.stdev(xgb) ** 2) / 2)
    d_z = diff / statistics.stdev([u - v for u, v in zip(lgbm, xgb)])
    assert 0.0005 < diff < 0.001
    assert 0.02 < d < 0.03  # Eq. 3
    assert 0.03 < d_z < 0.04  # Eq. 5
    assert_table(bbt.win_table(cmc, dataset="db", ties=None), _table([("lgbm", "xgb", 1, 0, 0)]))
    for paired in (True, False):
        got = bbt.win_table(cmc, dataset="db", ties=None, d_min=0.4, paired=paired)
        assert_table(got, _table([("lgbm", "xgb", 0, 0, 1)]))
        # the threshold sits between d (or d_z) and nothing else: just below it, a win again
        just_below = (d_z if paired else d) * 0.99
        got = bbt.win_table(cmc, dataset="db", ties=None, d_min=just_below, paired=paired)
        assert_table(got, _table([("lgbm", "xgb", 1, 0, 0)]))
        just_above = (d_z if paired else d) * 1.01
        got = bbt.win_table(cmc, dataset="db", ties=None, d_min=just_above, paired=paired)
        assert_table(got, _table([("lgbm", "xgb", 0, 0, 1)]))


def test_paired_wins_where_unpaired_ties():
    """Consistent small fold differences on widely varying folds."""
    df = pd.DataFrame({"db": ["d"] * 4, "a": [0.50, 0.60, 0.70, 0.80]})
    df["b"] = [0.49, 0.58, 0.69, 0.79]
    # differences 0.01, 0.02, 0.01, 0.01: mean 0.0125, sd sqrt((3 * 0.0025^2 + 0.0075^2)/3)
    # = 0.005 -> d_z = 2.5. Unpaired: sd_a = sqrt(0.05/3) = 0.1291, sd_b = 0.1285 -> d ~ 0.097
    d_z = 0.0125 / 0.005
    d = 0.0125 / math.sqrt((0.05 / 3 + statistics.variance([0.49, 0.58, 0.69, 0.79])) / 2)
    assert abs(d - 0.097) < 0.001
    paired = bbt.win_table(df, dataset="db", ties=None, d_min=0.4)
    unpaired = bbt.win_table(df, dataset="db", ties=None, d_min=0.4, paired=False)
    assert_table(paired, _table([("a", "b", 1, 0, 0)]))
    assert_table(unpaired, _table([("a", "b", 0, 0, 1)]))
    # d_z = 2.5: a win just below, a tie just above
    assert bbt.win_table(df, dataset="db", ties=None, d_min=d_z * 0.99)["win1"].item() == 1
    assert bbt.win_table(df, dataset="db", ties=None, d_min=d_z * 1.01)["ties"].item() == 1


def test_unpaired_wins_where_paired_ties():
    """Anti-correlated folds: sd of the differences exceeds the pooled sd."""
    df = pd.DataFrame(
        {"db": ["d"] * 4, "a": [0.80, 0.70, 0.80, 0.70], "b": [0.70, 0.78, 0.70, 0.78]}
    )
    # diff of means 0.75 - 0.74 = 0.01. sd_a = 0.05 * sqrt(4/3), sd_b = 0.04 * sqrt(4/3):
    # d = 0.01 / sqrt((0.0025 + 0.0016) * 2/3) = 0.1913. Differences 0.1, -0.08, 0.1, -0.08:
    # sd = 0.09 * sqrt(4/3) = 0.1039 -> d_z = 0.0962.
    d = 0.01 / math.sqrt((0.0025 + 0.0016) * 2 / 3)
    d_z = 0.01 / (0.09 * math.sqrt(4 / 3))
    assert abs(d - 0.1913) < 1e-4 and abs(d_z - 0.0962) < 1e-4
    paired = bbt.win_table(df, dataset="db", ties=None, d_min=0.15)
    unpaired = bbt.win_table(df, dataset="db", ties=None, d_min=0.15, paired=False)
    assert_table(paired, _table([("a", "b", 0, 0, 1)]))
    assert_table(unpaired, _table([("a", "b", 1, 0, 0)]))


def test_eq4_uses_root_mean_variance_with_ddof_1():
    """a = [2, 4, 6], b = [0, 2, 4]: diff 2, both sd (ddof=1) = 2, so d = 2 / 2 = 1.
    Wrong variants would give: no square root 2 / 4 = 0.5; ddof=0 sd = 1.633 -> d = 1.22."""
    df = pd.DataFrame({"db": ["d"] * 3, "a": [2.0, 4.0, 6.0], "b": [0.0, 2.0, 4.0]})
    for d_min, w1, t in ((0.9, 1, 0), (1.1, 0, 1), (0.6, 1, 0)):
        got = bbt.win_table(df, dataset="db", ties=None, d_min=d_min, paired=False)
        assert_table(got, _table([("a", "b", w1, 0, t)]))
    # paired: the differences are all 2, sd 0, so any d_min leaves a win
    got = bbt.win_table(df, dataset="db", ties=None, d_min=100.0)
    assert_table(got, _table([("a", "b", 1, 0, 0)]))


def test_eq4_pools_variances_not_standard_deviations():
    """a = [9, 10, 11] (sd 1), b = [4, 7, 10] (sd 3): diff 3, d = 3 / sqrt(5) = 1.342;
    averaging the sds instead would give 3 / 2 = 1.5."""
    df = pd.DataFrame({"db": ["d"] * 3, "a": [9.0, 10.0, 11.0], "b": [4.0, 7.0, 10.0]})
    assert abs(3 / math.sqrt(5) - 1.342) < 1e-3
    got = bbt.win_table(df, dataset="db", ties=None, d_min=1.4, paired=False)
    assert_table(got, _table([("a", "b", 0, 0, 1)]))
    got = bbt.win_table(df, dataset="db", ties=None, d_min=1.3, paired=False)
    assert_table(got, _table([("a", "b", 1, 0, 0)]))
    # losses are symmetric: swap the columns
    got = bbt.win_table(df[["db", "b", "a"]], dataset="db", ties=None, d_min=1.3, paired=False)
    assert_table(got, _table([("b", "a", 0, 1, 0)]))


def test_effect_exactly_at_d_min_is_a_tie():
    """Eq. 4: tie if mu1 - mu2 <= d_min * sd. a = [0, 1, 2], b = [-2, -1, 0]: diff 2, both sd
    exactly 1, so d = 2 exactly (every number here is exact in binary)."""
    df = pd.DataFrame({"db": ["d"] * 3, "a": [0.0, 1.0, 2.0], "b": [-2.0, -1.0, 0.0]})
    got = bbt.win_table(df, dataset="db", ties=None, d_min=2.0, paired=False)
    assert_table(got, _table([("a", "b", 0, 0, 1)]))
    got = bbt.win_table(df, dataset="db", ties=None, d_min=1.75, paired=False)
    assert_table(got, _table([("a", "b", 1, 0, 0)]))
    # paired: a - b = [2, 2, 2] has sd 0, so it is a clear win whatever d_min
    got = bbt.win_table(df, dataset="db", ties=None, d_min=2.0, paired=True)
    assert_table(got, _table([("a", "b", 1, 0, 0)]))


def test_paired_identical_folds_tie_and_zero_sd_with_a_difference_wins():
    df = pd.DataFrame(
        {
            "db": ["same"] * 2 + ["shift"] * 2,
            "a": [0.5, 0.7, 0.5, 0.7],
            "b": [0.5, 0.7, 0.25, 0.45],
        }
    )
    for paired in (True, False):
        got = bbt.win_table(df, dataset="db", ties=None, d_min=0.4, paired=paired)
        # same: equal -> tie; shift: paired sd 0 -> win; unpaired d = 0.25/0.1414 = 1.77 -> win
        assert_table(got, _table([("a", "b", 1, 0, 1)]))


def test_one_fold_data_set_falls_back_to_comparing_means():
    df = pd.DataFrame(
        {
            "db": ["many"] * 4 + ["one"],
            "a": [0.50, 0.60, 0.70, 0.80, 0.61],
            "b": [0.49, 0.61, 0.68, 0.79, 0.60],
        }
    )
    # 'many': diff 0.0075, d and d_z far below 10 -> tie; 'one': a single fold, no sd ->
    # compared by its means -> a wins, whatever d_min
    for paired in (True, False):
        got = bbt.win_table(df, dataset="db", ties=None, d_min=10.0, paired=paired)
        assert_table(got, _table([("a", "b", 1, 0, 1)]))


def test_one_fold_everywhere_in_unpaired_mode_with_one_multi_fold_set(base):
    """has_folds is true as soon as one data set has folds; the others compare means."""
    one = base.groupby("db", sort=False).head(1)
    cmc = base[base["db"] == "cmc"]
    data = pd.concat([one[one["db"] != "cmc"], cmc], ignore_index=True)
    got = bbt.win_table(data, dataset="db", ties=None, d_min=0.4, paired=False)
    no_rope = bbt.win_table(data, dataset="db", ties=None)
    # only cmc can change; it holds lgbm-xgb (win -> tie) among others
    assert_table(got, oracle(data, 0.4, paired=False))
    lgbm_xgb = (got["alg1"] == "lgbm") & (got["alg2"] == "xgb")
    assert got.loc[lgbm_xgb, "ties"].item() == no_rope.loc[lgbm_xgb, "ties"].item() + 1


def test_d_min_zero_equals_comparing_means(base, pmlb16):
    means = bbt.win_table(base, dataset="db", ties=None)
    assert_table(bbt.win_table(base, dataset="db", ties=None, d_min=0), means)
    assert_table(bbt.win_table(base, dataset="db", ties=None, d_min=0, paired=False), means)
    means = bbt.win_table(pmlb16, dataset="db", ties=None)
    assert_table(bbt.win_table(pmlb16, dataset="db", ties=None, d_min=0.0, paired=False), means)


def test_local_rope_only_turns_wins_into_ties(base):
    plain = bbt.win_table(base, dataset="db", ties=None)
    for paired in (True, False):
        prev = plain
        for d_min in (0.1, 0.2, 0.4, 0.8, 1.6):
            got = bbt.win_table(base, dataset="db", ties=None, d_min=d_min, paired=paired)
            assert (got["win1"] <= plain["win1"]).all() and (got["win2"] <= plain["win2"]).all()
            assert (got[["win1", "win2", "ties"]].sum(axis=1) == 20).all()
            assert (got["ties"] >= prev["ties"]).all()  # more ties as d_min grows
            prev = got


@pytest.mark.parametrize("d_min", [0.1, 0.4, 1.0])
def test_means_plus_sd_equals_folds_unpaired(base, base_means, d_min):
    sd = base.groupby("db", sort=False).std(ddof=1)
    from_folds = bbt.win_table(base, dataset="db", ties=None, d_min=d_min, paired=False)
    from_sd = bbt.win_table(base_means, sd=sd, ties=None, d_min=d_min, paired=False)
    assert_table(from_sd, from_folds)
    # and with the data-set names in a column, sd rows in another order
    from_sd = bbt.win_table(
        base_means.reset_index(),
        dataset="db",
        sd=sd.iloc[::-1].reset_index(),
        ties=None,
        d_min=d_min,
        paired=False,
    )
    assert_table(from_sd, from_folds)


def test_effect_equal_to_d_min_in_real_data_is_a_tie_whatever_the_input(base):
    """threeOf9 has 128-row folds, so its accuracies are exact in binary. lgbm = [1, 1, 1, 1],
    svm = [1, 125/128, 127/128, 1]: diff = 1/128, s_svm^2 = (1 + 4 + 0 + 1) / 128^2 / 3
    = 1/8192, so sqrt((0 + 1/8192) / 2) = 1/128 and d = 1 exactly: a tie at d_min = 1
    (Eq. 4), from folds and from means + sd (sd computed by pandas), a win just below."""
    t9 = base[base["db"] == "threeOf9"][["db", "lgbm", "svm"]]
    assert t9["lgbm"].tolist() == [1.0] * 4
    assert sorted(t9["svm"].tolist()) == [125 / 128, 127 / 128, 1.0, 1.0]
    means = t9.groupby("db").mean()
    sd = t9.groupby("db").std()
    for d_min, expected in ((1.0, (0, 0, 1)), (0.999, (1, 0, 0))):
        want = _table([("lgbm", "svm", *expected)])
        folds = bbt.win_table(t9, dataset="db", ties=None, d_min=d_min, paired=False)
        assert_table(folds, want)
        from_sd = bbt.win_table(means, sd=sd, ties=None, d_min=d_min, paired=False)
        assert_table(from_sd, want)


def test_means_plus_sd_by_hand():
    means = pd.DataFrame({"a": [0.80, 0.80], "b": [0.78, 0.70]}, index=["d1", "d2"])
    sd = pd.DataFrame({"a": [0.03, 0.03], "b": [0.04, 0.04]}, index=["d1", "d2"])
    # noise = sqrt((0.0009 + 0.0016)/2) = 0.03536; d1: 0.02 / 0.03536 = 0.566; d2: 2.83
    assert_table(
        bbt.win_table(means, sd=sd, ties=None, d_min=0.4, paired=False),
        _table([("a", "b", 2, 0, 0)]),
    )
    assert_table(
        bbt.win_table(means, sd=sd, ties=None, d_min=0.6, paired=False),
        _table([("a", "b", 1, 0, 1)]),
    )
    assert_table(bbt.win_table(means, sd=sd, ties=None), _table([("a", "b", 2, 0, 0)]))


def test_pmlb16_paired_false_handles_lymphography(pmlb16):
    got = bbt.win_table(pmlb16, dataset="db", ties=None, d_min=0.4, paired=False)
    totals = got[["win1", "win2", "ties"]].sum(axis=1)
    assert (totals == 132).all()  # qda keeps 2 folds on lymphography, still compared
    without = pmlb16[pmlb16["db"] != "lymphography"]
    paired = bbt.win_table(without, dataset="db", ties=None, d_min=0.4)  # now possible
    assert (paired[["win1", "win2", "ties"]].sum(axis=1) == 131).all()


# =========================================================================== fold order


@pytest.mark.parametrize(
    ("d_min", "paired"), [(None, True), (0.4, True), (0.4, False), (0.2, True), (0.0, False)]
)
def test_reordering_folds_never_changes_a_table(base, d_min, paired):
    rng = np.random.default_rng(2024)
    expected = bbt.win_table(base, dataset="db", ties=None, d_min=d_min, paired=paired)
    if d_min is None:
        assert_table(expected, TABLE_3A)
    else:
        assert_table(expected, oracle(base, d_min, paired))
    for _ in range(20):
        shuffled = _shuffle_within_data_sets(base, rng)
        got = bbt.win_table(shuffled, dataset="db", ties=None, d_min=d_min, paired=paired)
        assert_table(got, expected)


def test_reordering_folds_with_missing_results(base):
    rng = np.random.default_rng(5)
    data = _drop_xgb_biomed_breast(base)
    expected = oracle(data, 0.4, paired=True)
    for _ in range(10):
        shuffled = _shuffle_within_data_sets(data, rng)
        assert_table(bbt.win_table(shuffled, dataset="db"), TABLE_7A)
        got = bbt.win_table(shuffled, dataset="db", ties=None, d_min=0.4)
        assert_table(got, expected)


def test_reordering_folds_of_all_pmlb16(pmlb16):
    rng = np.random.default_rng(11)
    for d_min in (None, 0.4):
        expected = bbt.win_table(pmlb16, dataset="db", ties=None, d_min=d_min, paired=False)
        for _ in range(3):
            shuffled = _shuffle_within_data_sets(pmlb16, rng)
            got = bbt.win_table(shuffled, dataset="db", ties=None, d_min=d_min, paired=False)
            assert_table(got, expected)


def test_reordering_long_rows_never_changes_a_table(base):
    rng = np.random.default_rng(99)
    long = _long(base)
    for d_min, paired in ((None, True), (0.4, True), (0.4, False)):
        expected = bbt.win_table(base, dataset="db", ties=None, d_min=d_min, paired=paired)
        for _ in range(5):
            got = bbt.win_table(
                long.iloc[rng.permutation(len(long))],
                dataset="db",
                algorithm="alg",
                score="acc",
                fold="fold",
                ties=None,
                d_min=d_min,
                paired=paired,
            )
            assert_table(unordered(got, BASE_ALGS), expected)


# =========================================================================== issue 9.4 / 9.5


def test_paired_missing_folds_match_exact_oracle(base):
    """Issue 9.4: scattered missing folds, paired: each pair on the folds both have."""
    rng = np.random.default_rng(7)
    holes = rng.random(base.shape[0] * 5).reshape(-1, 5) < 0.15
    base.iloc[:, 1:] = base.iloc[:, 1:].mask(holes)
    assert D.tidy_results(base, dataset="db").fold_mismatch_datasets  # the case under test
    for d_min in (0.0, 0.2, 0.4):
        got = bbt.win_table(base, dataset="db", ties=None, d_min=d_min)
        assert_table(got, oracle(base, d_min, paired=True))


def test_pmlb16_paired_matches_exact_oracle(pmlb16):
    """The shipped 16 x 132 data (qda has 2 of 4 folds on lymphography), paired."""
    got = bbt.win_table(pmlb16, dataset="db", ties=None, d_min=0.4)
    assert_table(got, oracle(pmlb16, 0.4, paired=True))


def test_paired_on_common_folds_uses_their_mean_difference():
    """a = (.5, .6, .9), c = (-, .5, .7): common folds 1, 2 give differences .1, .2: mean
    .15, sd sqrt(.005) = .0707, d_z = 2.12. (The difference of the full means, .0667, would
    be a tie at d_min = 2.)"""
    df = pd.DataFrame({"db": ["x"] * 3, "a": [0.5, 0.6, 0.9], "c": [np.nan, 0.5, 0.7]})
    assert_table(
        bbt.win_table(df, dataset="db", ties=None, d_min=2.0), _table([("a", "c", 1, 0, 0)])
    )
    assert_table(
        bbt.win_table(df, dataset="db", ties=None, d_min=2.2), _table([("a", "c", 0, 0, 1)])
    )


def test_paired_with_one_common_fold_is_a_missing_result():
    """a and c share only fold 1 on data set x: no pairing possible, x counts for neither;
    on y they share all folds."""
    df = pd.DataFrame(
        {
            "db": ["x", "x", "x", "y", "y"],
            "a": [0.5, 0.6, np.nan, 0.5, 0.6],
            "c": [np.nan, 0.1, 0.2, 0.1, 0.3],
        }
    )
    assert_table(
        bbt.win_table(df, dataset="db", ties=None, d_min=0.4), _table([("a", "c", 1, 0, 0)])
    )
    # unpaired or without local ROPE, x still counts (means of what exists)
    assert bbt.win_table(df, dataset="db", ties=None, d_min=0.4, paired=False)["win1"].item() == 2
    assert bbt.win_table(df, dataset="db", ties=None)["win1"].item() == 2


def test_unpaired_single_fold_keeps_the_other_spread():
    """Issue 9.5: a = (.5, .7, .9): mean .7, variance .04; b has the single fold .6, taken as
    variance 0. Pooled SD (Eq. 4) = sqrt(.04 / 2) = .1414, d = .1 / .1414 = .707: a win at
    d_min = .6, a tie at .8 (ignoring a's spread would compare means: a win)."""
    df = pd.DataFrame({"db": ["x"] * 3, "a": [0.5, 0.7, 0.9], "b": [0.6, np.nan, np.nan]})
    for d_min, expected in ((0.6, (1, 0, 0)), (0.8, (0, 0, 1))):
        got = bbt.win_table(df, dataset="db", ties=None, d_min=d_min, paired=False)
        assert_table(got, _table([("a", "b", *expected)]))


# =========================================================================== issue 9.8


def test_win_table_takes_a_ready_win_table_as_given():
    """Issue 9.8: like fit, win_table reads alg1, alg2, win1, win2 (ties) as counts."""
    ready = _table([("a", "b", 3, 1, 2), ("a", "c", 0, 4, 1), ("b", "c", 2, 2, 0)])
    assert_table(bbt.win_table(ready, ties=None), ready)
    assert_table(bbt.win_table(ready, ties="davidson"), ready)
    # spread: ceil(t/2) to each side
    expected = _table([("a", "b", 4, 2, 0), ("a", "c", 1, 5, 0), ("b", "c", 2, 2, 0)])
    assert_table(bbt.win_table(ready), expected)
    no_ties = ready.drop(columns="ties")
    assert_table(bbt.win_table(no_ties, ties=None), ready.assign(ties=0))
    with pytest.raises(ValueError, match=r"ready win table.*d_min, lower_is_better"):
        bbt.win_table(ready, d_min=0.4, lower_is_better=True)


# =========================================================================== issue 9.3


def test_comparison_components_follow_games_not_rows():
    from bbt_widget.core.wintable import comparison_components

    table = _table(
        [
            ("a", "b", 1, 0, 0),
            ("a", "c", 0, 0, 0),  # a row, but no data set in common: no link
            ("c", "d", 0, 0, 2),  # ties are games: linked
            ("b", "e", 0, 0, 0),
        ]
    )
    assert comparison_components(table, ["a", "b", "c", "d", "e"]) == [
        ["a", "b"],
        ["c", "d"],
        ["e"],
    ]
    base_table = bbt.win_table(bbt.datasets.load_base(), dataset="db", ties=None)
    algs = ["dt", "lda", "lgbm", "xgb", "svm"]
    assert comparison_components(base_table, algs) == [algs]


def test_win_table_shows_raw_counts_beside_the_model_counts(base):
    """The spread policy gives each side half the ties, rounded up: the model's counts add
    up to more games than data sets. The raw counts are what the labels say."""
    table = bbt.win_table(base, dataset="db").set_index(["alg1", "alg2"])
    # paper Table 3b (spread): dt - lda 7 / 14 / 0, from 6 / 13 and 1 tie on 20 data sets
    assert tuple(table.loc[("dt", "lda"), ["win1", "win2", "ties"]]) == (7, 14, 0)
    assert tuple(table.loc[("dt", "lda"), RAW]) == (6, 13, 1)
    n_sets = base["db"].nunique()
    assert (table[RAW].sum(axis=1) == n_sets).all()  # one raw outcome per data set
    half_up = (table["raw_ties"] + 1) // 2
    assert (table["win1"] == table["raw_win1"] + half_up).all()
    for policy, given in (("add", table["raw_ties"]), ("forget", 0)):
        other = bbt.win_table(base, dataset="db", ties=policy).set_index(["alg1", "alg2"])
        assert (other[RAW] == table[RAW]).all().all()
        assert (other["win2"] == other["raw_win2"] + given).all()
    davidson = bbt.win_table(base, dataset="db", ties="davidson")
    assert (davidson["ties"] == davidson["raw_ties"]).all()
    # the table goes back into fit as a ready win table: the model counts are used
    again = bbt.win_table(bbt.win_table(base, dataset="db"), ties=None)
    assert list(again["win1"]) == list(table["win1"])
