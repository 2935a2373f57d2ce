"""Standard comparison procedures next to BBT (paper Sec. 7), for papers and teaching.

* :func:`friedman` and :func:`nemenyi`: Demšar's procedure (Sec. 7.1), with
  :func:`scores_cd_diagram` for the critical-difference plot (Figure 6, Table 13; also of the
  Wilcoxon-Holm tests, with ``highlight=`` for the algorithms to pick out);
* :func:`wilcoxon_holm`: pairwise Wilcoxon signed-rank tests with Holm and Hochberg
  adjustment, as R's ``pairwise.wilcox.test`` (Sec. 7.2, Table 14);
* ``control=`` (:func:`nemenyi`, :func:`wilcoxon_holm`, :func:`agreement`,
  :func:`scores_cd_diagram`): one algorithm against each other one, ``k - 1`` tests
  (Bonferroni-Dunn for Nemenyi; Holm over ``k - 1`` for Wilcoxon);
* :func:`bayesian_signed_rank`: Benavoli et al.'s Bayesian signed-rank test with a ROPE
  (Sec. 7.3, Table 15);
* :func:`bayesian_sign_test`: the Bayesian sign test with a ROPE (Benavoli et al. 2017,
  Sec. 4.1; baycomp's ``SignTest``), on the per-data-set means;
* :func:`correlated_ttest`: the Bayesian correlated t-test on each data set (Benavoli et
  al. 2017, Sec. 3), from the fold-level differences of one pair;
* :func:`hierarchical` and :func:`hierarchical_pairs`: the Bayesian hierarchical correlated
  t-test over all data sets (Corani et al. 2017; Benavoli et al. 2017, Sec. 4.3), a fit in
  numpy per pair, the pairs run through the batch layer as sweeps are;
* :func:`agreement`: a BBT fit's decision for each pair next to the baselines'.

Conventions shared by all of them:

* they take the same data and keywords as :func:`bbt_widget.win_table` and work on the
  per-data-set means (mean over folds); ``sd=`` is accepted and ignored;
* means equal up to floating-point noise count as equal (as in ``win_table``);
* Friedman and Nemenyi need complete blocks: data sets where an algorithm has no result are
  dropped, listed in ``dropped`` and announced by an :class:`IncompleteBlocksWarning`;
  pairwise tests use the data sets where both algorithms have a result;
* per-pair tables read ``"a > b"`` with a ranked above b by that method, and decide with
  the vocabulary of :meth:`bbt_widget.BBTResult.summary`: ``"a better"``,
  ``"equivalent"``, ``"no claim"``, ``"b better"``;
* the results with ``p_left``, ``p_rope``, ``p_right`` (signed-rank, sign, correlated and
  hierarchical t-tests) draw their posterior in the probability simplex with
  ``simplex()`` (Benavoli et al. 2017's triangle).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._agreement import AgreementResult, agreement
    from ._cd_diagram import scores_cd_diagram
    from ._correlated import CorrelatedTTestResult, correlated_ttest
    from ._demsar import FriedmanResult, IncompleteBlocksWarning, NemenyiResult, friedman, nemenyi
    from ._hierarchical import HierarchicalResult, hierarchical
    from ._hierarchical_pairs import HierarchicalPairsResult, hierarchical_pairs
    from ._sign import BayesianSignTestResult, bayesian_sign_test
    from ._signed_rank import BayesianSignedRankResult, bayesian_signed_rank
    from ._wilcoxon import WilcoxonResult, hochberg, holm, wilcoxon_holm

#: The module that defines each public name. They are imported on first use: several need
#: SciPy's statistics (a second or more of imports), which the ranking models, imported from
#: this package too (``_plackett_luce``, ``_mallows``), and the report's default section do
#: not.
_HOME = {
    "AgreementResult": "_agreement",
    "agreement": "_agreement",
    "scores_cd_diagram": "_cd_diagram",
    "CorrelatedTTestResult": "_correlated",
    "correlated_ttest": "_correlated",
    "FriedmanResult": "_demsar",
    "IncompleteBlocksWarning": "_demsar",
    "NemenyiResult": "_demsar",
    "friedman": "_demsar",
    "nemenyi": "_demsar",
    "HierarchicalResult": "_hierarchical",
    "hierarchical": "_hierarchical",
    "HierarchicalPairsResult": "_hierarchical_pairs",
    "hierarchical_pairs": "_hierarchical_pairs",
    "BayesianSignTestResult": "_sign",
    "bayesian_sign_test": "_sign",
    "BayesianSignedRankResult": "_signed_rank",
    "bayesian_signed_rank": "_signed_rank",
    "WilcoxonResult": "_wilcoxon",
    "hochberg": "_wilcoxon",
    "holm": "_wilcoxon",
    "wilcoxon_holm": "_wilcoxon",
}

__all__ = [
    "AgreementResult",
    "BayesianSignTestResult",
    "BayesianSignedRankResult",
    "CorrelatedTTestResult",
    "FriedmanResult",
    "HierarchicalPairsResult",
    "HierarchicalResult",
    "IncompleteBlocksWarning",
    "NemenyiResult",
    "WilcoxonResult",
    "agreement",
    "bayesian_sign_test",
    "bayesian_signed_rank",
    "correlated_ttest",
    "friedman",
    "hierarchical",
    "hierarchical_pairs",
    "hochberg",
    "holm",
    "nemenyi",
    "scores_cd_diagram",
    "wilcoxon_holm",
]


def __getattr__(name: str) -> Any:
    if name in _HOME:
        value = getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
        globals()[name] = value  # found directly from now on
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
