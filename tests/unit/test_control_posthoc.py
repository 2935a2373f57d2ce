"""All-versus-control post-hoc tests: Bonferroni-Dunn (``nemenyi(control=)``), Wilcoxon
with Holm over the k - 1 pairs with the control (``wilcoxon_holm(control=)``), their
control-centred diagram and ``agreement(control=)``.

Known answers: Demšar (2006) Table 5(b) for the Bonferroni-Dunn critical values, the base
results' mean ranks (paper Table 13: xgb 2.30, lgbm 2.35, svm 2.65, lda 3.45, dt 4.25 over
20 data sets) and Holm's adjustment written out by hand over scipy's Wilcoxon p-values.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bbt_widget.baselines import agreement, nemenyi, scores_cd_diagram, wilcoxon_holm

#: Demšar (2006) Table 5(b): Bonferroni-Dunn critical values q_alpha for k = 2..10. At alpha
#: 0.05 and k = 9 the table prints 2.724, 0.01 off its own definition (the normal quantile at
#: 1 - 0.05 / 16 is 2.7344) while every other entry matches it to the third decimal: the
#: definition's value is kept here.
BONFERRONI_DUNN_05 = [1.960, 2.241, 2.394, 2.498, 2.576, 2.638, 2.690, 2.734, 2.773]
BONFERRONI_DUNN_10 = [1.645, 1.960, 2.128, 2.241, 2.326, 2.394, 2.450, 2.498, 2.539]


def _ranked(k: int, n: int = 6) -> pd.DataFrame:
    """n data sets (rows) of k algorithms (columns) with distinct scores."""
    rng = np.random.default_rng(k)
    return pd.DataFrame(rng.random((n, k)), columns=[f"a{i}" for i in range(k)])


@pytest.mark.parametrize("k", range(3, 11))
def test_bonferroni_dunn_critical_values_are_demsars_table_5b(k):
    data = _ranked(k)
    for alpha, table in ((0.05, BONFERRONI_DUNN_05), (0.10, BONFERRONI_DUNN_10)):
        res = nemenyi(data, alpha=alpha, control="a0")
        assert res.q_alpha == pytest.approx(table[k - 2], abs=6e-4)
        se = np.sqrt(k * (k + 1) / (6 * len(data)))
        assert res.cd == pytest.approx(res.q_alpha * se)
        assert len(res.table) == k - 1  # the control against each other one only
        assert all("a0" in (a, b) for a, b in zip(res.table["alg_a"], res.table["alg_b"]))


def test_bonferroni_dunn_on_the_base_results(base):
    # mean ranks xgb 2.30, lgbm 2.35, svm 2.65, lda 3.45, dt 4.25; N = 20, k = 5:
    # se = sqrt(5 * 6 / (6 * 20)) = 0.5, so the CD is q_alpha / 2
    res = nemenyi(base, dataset="db", alpha=0.10, control="lda")
    assert res.cd == pytest.approx(2.241 / 2, abs=3e-4)
    t = res.table.set_index("pair")
    assert list(t.index) == ["xgb > lda", "lgbm > lda", "svm > lda", "lda > dt"]
    assert t["rank_diff"].tolist() == pytest.approx([1.15, 1.10, 0.80, 0.80])
    # 1.15 > 1.12: xgb differs from the control; every other difference is within the CD
    assert t["significant"].tolist() == [True, False, False, False]
    assert t.loc["xgb > lda", "decision"] == "a better"
    # the p-value: two-sided normal p of |dR| / se, times the k - 1 = 4 comparisons
    z = np.array([1.15, 1.10, 0.80, 0.80]) / 0.5
    assert t["pvalue"].to_numpy() == pytest.approx(np.minimum(1, 4 * 2 * stats.norm.sf(z)))
    assert (t["pvalue"] <= 0.10).tolist() == t["significant"].tolist()
    # Nemenyi over all 10 pairs is more conservative: its CD (2.459 / 2) misses xgb vs lda
    every = nemenyi(base, dataset="db", alpha=0.10)
    assert every.cd == pytest.approx(2.459 / 2, abs=3e-4)
    assert not every.table.set_index("pair").loc["xgb > lda", "significant"]
    assert every.control is None and res.control == "lda"


def test_bonferroni_dunn_groups_join_the_control_to_what_it_does_not_beat(base):
    res = nemenyi(base, dataset="db", control="dt")  # CD = 2.498 / 2 = 1.249
    # dt (4.25) is within the CD of lda (3.45) only
    assert res.groups() == [("dt", "lda")]
    res = nemenyi(base, dataset="db", alpha=0.10, control="lda")
    assert res.groups() == [("lda", "lgbm"), ("lda", "svm"), ("lda", "dt")]


def _holm_by_hand(p: list[float]) -> list[float]:
    """Holm's step-down adjustment: the i-th smallest of m p-values times (m - i), then the
    running maximum, capped at 1."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def test_wilcoxon_holm_with_a_control_adjusts_over_its_k_minus_1_pairs():
    rng = np.random.default_rng(3)
    n, k = 14, 5
    means = pd.DataFrame(
        rng.normal(0, 1, (n, k)) + np.linspace(0.9, 0, k), columns=["ctl", "b", "c", "d", "e"]
    )
    res = wilcoxon_holm(means, control="ctl")
    assert res.control == "ctl"
    t = res.table
    assert len(t) == k - 1
    assert all("ctl" in (a, b) for a, b in zip(t["alg_a"], t["alg_b"]))
    # 14 distinct continuous differences: R's wilcox.test uses the exact distribution
    raw = [
        float(stats.wilcoxon(means[a] - means[b], method="exact").pvalue)
        for a, b in zip(t["alg_a"], t["alg_b"])
    ]
    assert t["pvalue"].tolist() == pytest.approx(raw)
    assert t["p_holm"].tolist() == pytest.approx(_holm_by_hand(raw))
    assert (t["significant"] == (t["p_holm"] <= 0.05)).all()
    # the same raw p-values in the all-pairs table, adjusted over 10 pairs there
    every = wilcoxon_holm(means).table.set_index("pair")
    for pair, p, adj in zip(t["pair"], t["pvalue"], t["p_holm"]):
        assert every.loc[pair, "pvalue"] == pytest.approx(p)
        assert every.loc[pair, "p_holm"] >= adj


def test_bad_control_names_the_value_and_the_algorithms(base):
    message = r"control 'rf' is not an algorithm of these results; choose one of .*'xgb'"
    for fn in (nemenyi, wilcoxon_holm, scores_cd_diagram):
        with pytest.raises(ValueError, match=message):
            fn(base, dataset="db", control="rf")
    with pytest.raises(ValueError, match=message):
        scores_cd_diagram(base, dataset="db", test="wilcoxon", control="rf")


class _Summary:
    """A BBT fit's summary() stand-in: every pair of the base results, best first."""

    def __init__(self, rows):
        self.rows = rows
        self.settings = {"lower_is_better": False}

    def summary(self, rope=(0.45, 0.55), hdi=0.89):
        t = pd.DataFrame(self.rows, columns=["alg_a", "alg_b", "above_50", "in_rope", "weak"])
        t.insert(0, "pair", t["alg_a"] + " > " + t["alg_b"])
        t["strong"] = t["weak"]
        return t


_BBT = [
    ("xgb", "lgbm", 0.56, 0.49, "no claim"),
    ("xgb", "svm", 0.82, 0.37, "no claim"),
    ("xgb", "lda", 1.00, 0.01, "a better"),
    ("xgb", "dt", 1.00, 0.00, "a better"),
    ("lgbm", "svm", 0.77, 0.40, "no claim"),
    ("lgbm", "lda", 1.00, 0.01, "a better"),
    ("lgbm", "dt", 1.00, 0.00, "a better"),
    ("svm", "lda", 0.99, 0.05, "a better"),
    ("svm", "dt", 0.99, 0.00, "a better"),
    ("lda", "dt", 0.50, 0.96, "equivalent"),
]


def test_agreement_with_a_control_lines_up_the_control_pairs(base):
    res = agreement(base, _Summary(_BBT), dataset="db", control="dt", seed=1, n_samples=2000)
    assert res.control == "dt"
    t = res.table.set_index("pair")
    assert list(t.index) == ["xgb > dt", "lgbm > dt", "svm > dt", "lda > dt"]
    # Bonferroni-Dunn (CD 1.249) finds xgb, lgbm and svm better than dt, not lda (0.80)
    assert res.nemenyi.control == "dt" and res.nemenyi.cd == pytest.approx(1.2489, abs=1e-3)
    assert t["nemenyi"].tolist() == ["a better", "a better", "a better", "no claim"]
    assert res.wilcoxon.control == "dt" and len(res.wilcoxon.table) == 4
    assert t["bbt"].tolist() == ["a better", "a better", "a better", "equivalent"]
    assert res.counts.set_index("baseline").loc["nemenyi", "pairs"] == 4
    # the rankings still rank every algorithm
    assert list(res.rankings["nemenyi"]) == ["xgb", "lgbm", "svm", "lda", "dt"]
    with pytest.raises(ValueError, match="control 'rf' is not an algorithm"):
        agreement(base, _Summary(_BBT), dataset="db", control="rf")


def _values(spec: dict) -> list[dict]:
    return [v for d in spec["datasets"].values() for v in d]


def test_control_centred_diagram(base):
    spec = scores_cd_diagram(base, dataset="db", control="dt", highlight=["svm"]).to_dict()
    values = _values(spec)
    # one bar from the control to each algorithm it does not differ from: lda only
    groups = [v for v in values if v.get("kind") == "group"]
    assert [(g["x"], g["x2"]) for g in groups] == [pytest.approx((3.45 - 0.03, 4.25 + 0.03))]
    # the CD interval is centred on the control (4.25 +- 1.249, cut at the axis end 5)
    (cd,) = [v for v in values if v.get("kind") == "cd"]
    assert (cd["x"], cd["x2"]) == pytest.approx((4.25 - 1.2489, 5.0), abs=1e-3)
    assert "Bonferroni-Dunn vs dt" in spec["title"]
    # the control gets its own mark
    assert any(
        layer.get("mark", {}).get("shape") == "diamond" and "dt" in str(layer.get("transform"))
        for layer in spec["layer"]
    )
