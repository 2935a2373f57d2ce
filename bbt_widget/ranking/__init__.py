"""Ranking models of the per-data-set rankings, beside BBT's pairwise model.

* :func:`plackett_luce`: the Plackett-Luce model with a Dirichlet prior (Rojas-Delgado et
  al. 2022), sampled by a Gibbs sampler with latent Gamma variables (Caron and Doucet 2012);
* :func:`mallows`: the Bayesian Mallows model with Kendall's distance and an exponential
  prior on its dispersion, sampled by Metropolis-Hastings with leap-and-shift proposals;
* :func:`ranking_model`: either of them by name (``model="plackett-luce"`` or
  ``"mallows"``), as the report's and the widget's ranking sections call them.

Both rank each data set by the algorithms' mean score over folds, with the tie rules
``"split"`` and ``"random"``, and return a result with ``ranking`` (P(first), expected rank,
their HDIs and Monte Carlo errors), ``top_k``, ``before``, ``ppc``, ``diagnostics`` and the
same charts.
"""

from __future__ import annotations

from ._mallows import MallowsResult, mallows
from ._plackett_luce import RankingModelResult, plackett_luce, ranking_model

__all__ = [
    "MallowsResult",
    "RankingModelResult",
    "mallows",
    "plackett_luce",
    "ranking_model",
]
