"""BBT against a ranking model: the chart draws each model's own quantity on its own axis,
and the text calls two algorithms ordered differently only beyond Monte Carlo error.

BBT's P(best) (the ability is the largest) and Plackett-Luce's P(first) (ranked first on a
new data set) are different quantities; the models are compared by their orderings, and a
gap of a few thousandths between two algorithms is Monte Carlo noise. The fits are stand-ins
built from hand-made draws, so each case is exactly the one named.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from bbt_widget.core import posterior
from bbt_widget.core.draws import Draws
from bbt_widget.outputs.report import _sections as rs
from bbt_widget.ranking._common import ranking_table
from bbt_widget.ranking._order import best_indicators, order_gap
from bbt_widget.ranking._plackett_luce import RankingModelResult, _expected_ranks

NAMES = ["lgbm", "rf", "svm"]
CHAINS, DRAWS = 4, 1000


class _BBT:
    """What the ranking-model section reads of a BBT result, from draws of beta."""

    def __init__(self, beta: np.ndarray, decision: str = "no claim") -> None:
        self.algorithms = tuple(NAMES)
        self.draws = Draws(params={"beta": beta}, sampler={}, engine="numpy", timings={})
        self.decision = decision

    def ranking(self, hdi: float = 0.95) -> pd.DataFrame:
        return posterior.ranking(self.draws.params["beta"].reshape(-1, 3), NAMES, hdi)

    def summary(self, rope: tuple[float, float] = (0.45, 0.55)) -> pd.DataFrame:
        pairs = list(itertools.combinations(self.ranking()["algorithm"], 2))
        return pd.DataFrame(
            {
                "pair": [f"{a} > {b}" for a, b in pairs],
                "alg_a": [a for a, _ in pairs],
                "alg_b": [b for _, b in pairs],
                "weak": [self.decision if k == 0 else "a better" for k in range(len(pairs))],
            }
        )


def _pl(theta: np.ndarray) -> RankingModelResult:
    """A Plackett-Luce result from draws of theta (chains, draws, algorithms)."""
    flat = theta.reshape(-1, theta.shape[-1])
    empty = pd.DataFrame(columns=["algorithm", "k", "p", "low", "high"])
    return RankingModelResult(
        ranking=ranking_table(NAMES, flat, _expected_ranks(flat), 0.95, theta.shape[0]),
        top_k=empty,
        before=pd.DataFrame(),
        ppc=pd.DataFrame(),
        diagnostics=None,  # type: ignore[arg-type]
        draws=Draws(params={"theta": theta}, sampler={}, engine="numpy", timings={}),
        algorithms=tuple(NAMES),
        datasets=tuple(f"d{i}" for i in range(20)),
        dropped=(),
        settings={"chains": CHAINS, "iter_warmup": 250, "iter_sampling": DRAWS, "seed": 1},
    )


def _beta(means: tuple[float, float, float], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(means, 1.0, size=(CHAINS, DRAWS, 3))


def _theta(alpha: tuple[float, float, float], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.dirichlet(alpha, size=(CHAINS, DRAWS))


def _swap_top_two(theta: np.ndarray) -> np.ndarray:
    return theta[..., [1, 0, 2]]


def _section_text(bbt: _BBT, pl: RankingModelResult) -> tuple[str, str]:
    section = rs.ranking_model_section(pl, bbt, interpretation="weak")
    methods = "".join(str(part) for part in section.methods)
    return " ".join(section.text), methods


def _tiny_gap() -> tuple[_BBT, RankingModelResult]:
    """lgbm and rf exchangeable under both models, each model's first the other's second."""
    bbt = _BBT(_beta((0.0, 0.0, -3.0), seed=3), decision="equivalent")
    theta = _theta((20.0, 20.0, 5.0), seed=4)
    pl = _pl(theta)
    if pl.ranking["algorithm"].iloc[0] == bbt.ranking()["algorithm"].iloc[0]:
        pl = _pl(_swap_top_two(theta))
    return bbt, pl


def test_a_monte_carlo_sized_gap_is_a_tie_at_this_precision_not_another_order():
    bbt, pl = _tiny_gap()
    assert pl.ranking["algorithm"].iloc[0] != bbt.ranking()["algorithm"].iloc[0]
    gap = bbt.ranking().set_index("algorithm")["p_best"]
    assert abs(gap["lgbm"] - gap["rf"]) < 0.05  # a few hundredths of 4000 draws: noise
    text, methods = _section_text(bbt, pl)
    # it said "the two models order them differently (P(best) 0.496 and 0.491 under BBT,
    # 0.118 and 0.126 under Plackett-Luce)"; the section says why, the methods paragraph
    # only who is first
    assert "order them differently" not in text and "order them differently" not in methods
    assert "tied at this precision" in text
    assert "within 3 Monte Carlo standard errors" in text
    assert "P(highest ability)" in text and "P(ranked first on a new data set)" in text
    assert "P(best)" not in text and "P(best)" not in methods
    for said in (text, methods):
        assert "tie for first place: BBT claims them practically equivalent" in said


def test_a_clear_reversal_is_still_two_orders():
    bbt = _BBT(_beta((1.0, 0.0, -3.0), seed=5))  # P(best) about 0.76 against 0.24
    pl = _pl(_theta((10.0, 20.0, 5.0), seed=6))  # P(first) about 0.29 against 0.57
    text, methods = _section_text(bbt, pl)
    assert text.count("The two models order them differently") == 1
    assert "BBT puts lgbm ahead (P(highest ability) 0.7" in text
    assert "Plackett-Luce puts rf ahead (P(ranked first on a new data set) 0.5" in text
    assert "exceeds 3 Monte Carlo standard errors" in text
    assert "tied at this precision" not in text
    assert text.count("The first place is not settled") == 1
    assert "BBT ranks lgbm first, Plackett-Luce rf" in methods


def test_one_model_tied_the_other_clear_is_no_reversal():
    bbt = _BBT(_beta((0.0, 0.0, -3.0), seed=3), decision="a better")
    first = bbt.ranking()["algorithm"].iloc[0]
    theta = _theta((10.0, 20.0, 5.0), seed=6)  # rf clearly first
    pl = _pl(theta if first == "lgbm" else _swap_top_two(theta))
    text, _ = _section_text(bbt, pl)
    assert "order them differently" not in text
    assert "Plackett-Luce puts" in text and "but BBT has them tied at this precision" in text


def test_one_first_place_is_said_once():
    bbt = _BBT(_beta((1.0, 0.0, -3.0), seed=5))
    text, _ = _section_text(bbt, _pl(_theta((20.0, 10.0, 5.0), seed=6)))
    assert text.endswith("Both models rank lgbm first.")


def test_the_mcse_of_a_gap_is_its_sd_over_the_root_of_its_ess():
    rng = np.random.default_rng(0)
    iid = rng.normal(size=(4, 1000, 3))
    gap = order_gap(iid, NAMES, "lgbm", "rf").mcse
    diff = iid[..., 0] - iid[..., 1]
    assert gap == pytest.approx(diff.std(ddof=1) / math.sqrt(4000), rel=0.1)
    sticky = np.repeat(iid[:, :100], 10, axis=1)  # each draw 10 times: a tenth of the ESS
    assert order_gap(sticky, NAMES, "lgbm", "rf").mcse > 2.5 * gap


def test_order_gap_reads_each_models_own_draws():
    beta = _beta((1.0, 0.0, -3.0), seed=5)
    best = best_indicators(beta)
    assert best.sum(axis=-1).min() == 1 == best.sum(axis=-1).max()
    p_best = posterior.ranking(beta.reshape(-1, 3), NAMES, 0.95).set_index("algorithm")
    gap = order_gap(best, NAMES, "rf", "lgbm")
    assert (gap.ahead, gap.behind) == ("lgbm", "rf")
    assert gap.p_ahead == pytest.approx(p_best.at["lgbm", "p_best"])
    assert gap.settled() and not gap.settled(z=1e6)


def _spec_panels(spec: dict) -> list[dict]:
    """Every single-view panel of a (nested) concatenated spec."""
    for key in ("hconcat", "vconcat"):
        if key in spec:
            return [p for part in spec[key] for p in _spec_panels(part)]
    return [spec]


def test_the_chart_gives_each_quantity_its_own_labelled_axis():
    bbt, pl = _tiny_gap()
    spec = pl.chart_vs_bbt(bbt).to_dict()
    assert spec["title"] == "BBT vs Plackett-Luce"
    panels = _spec_panels(spec)
    axes = {p["encoding"]["x"]["field"]: p["encoding"]["x"]["title"] for p in panels}
    # it was one "P(best)" axis for both models' numbers, told apart by colour
    assert len(axes) == len(panels) == 4
    assert all("color" not in p["encoding"] for p in panels)
    titles = [p["title"] for p in panels]
    assert "BBT: P(highest ability)" in titles
    assert "Plackett-Luce: P(ranked first on a new data set)" in titles
    assert set(axes.values()) == {
        "P(highest ability)",
        "expected rank of ability (1 = best)",
        "P(ranked first on a new data set)",
        "expected rank on a new data set (1 = best)",
    }
    rows = next(iter(spec["datasets"].values()))
    assert {"model", "p_best"}.isdisjoint(rows[0])  # no column holding both models' numbers
    # every panel lists the algorithms in BBT's order, so a reversal shows as such
    order = list(bbt.ranking()["algorithm"])
    assert all(p["encoding"]["y"]["sort"] == order for p in panels)


@pytest.mark.parametrize("model", ["plackett-luce", "mallows"])
def test_first_draws_average_to_each_models_p_first(model):
    """The draws the text's precision is computed from are those of the reported P(first)."""
    import bbt_widget as bbt

    rng = np.random.default_rng(2)
    ranks = np.array([rng.permutation(4) for _ in range(12)], dtype=float)
    data = pd.DataFrame(-ranks, columns=["a", "b", "c", "d"], index=[f"d{k}" for k in range(12)])
    res = bbt.ranking_model(data, model=model, iter_warmup=100, iter_sampling=200, seed=3)
    draws = res.first_draws()
    assert draws.shape == (4, 200, 4)
    p_first = res.ranking.set_index("algorithm")["p_first"]
    assert draws.mean(axis=(0, 1)) == pytest.approx(p_first[list(res.algorithms)].to_numpy())
