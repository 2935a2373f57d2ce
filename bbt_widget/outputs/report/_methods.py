"""Which other methods a report runs beside BBT, checked against the data before any fit.

``methods=`` (``--with`` on the command line) names them; the defaults depend on the data
(:func:`check_methods`), the same in every format.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ...core.data import as_tidy
from ...core.tidy import MIN_RANKED_DATASETS, TidyResults

#: The other methods a report can add besides BBT (``methods=``; ``--with`` on the command line).
OTHER_METHODS = ("hierarchical", "plackett-luce", "mallows", "friedman", "signed-rank", "sign")
#: The baselines among them, each a section of its own (``report_baselines``).
BASELINES = ("friedman", "signed-rank", "sign")
#: The ranking models among them (a "Ranking models" section together).
_RANKING_MODELS = (
    "plackett-luce",
    "mallows",
)  #: Largest pairs x data sets for which an HTML report runs the hierarchical t-test without
#: ``methods`` (given ``rho``): 10 pairs x 132 data sets (5 algorithms on the shipped results'
#: 132 data sets, or 20 pairs on 66): a pair of 132 data sets of 4 folds takes about 3.5 s of
#: CPU (``benchmarks/results/methods.json``), so about 20 s on two cores; larger data
#: asks for ``methods=["hierarchical"]``.
PAIRWISE_DEFAULT_MAX = 10 * 132


def methods_from(words: str | Sequence[str] | None) -> list[str] | None:
    """The methods ``methods=`` names, in :data:`OTHER_METHODS` order (``"none"`` left out):
    ``None`` for ``None`` (the defaults alone), ``[]`` for ``"none"``; a comma-separated
    string is split. Whether the defaults stay: :func:`keeps_defaults`."""
    names = _words(words)
    return None if names is None else [m for m in OTHER_METHODS if m in names]


def keeps_defaults(words: str | Sequence[str] | None) -> bool:
    """Whether ``methods=`` adds to the default methods (:func:`check_methods`): unless it
    holds ``"none"`` (``"none"`` alone: no other method; ``"none,friedman"``: Friedman
    alone)."""
    names = _words(words)
    return names is None or "none" not in names


def _words(words: str | Sequence[str] | None) -> list[str] | None:
    """The names in ``methods=``, checked; ``None`` for ``None``."""
    if words is None:
        return None
    given = words
    if isinstance(words, str):
        words = words.split(",")
    names = [str(w).strip() for w in words if str(w).strip()]
    unknown = [w for w in names if w not in (*OTHER_METHODS, "none")]
    if unknown or not names:
        shown = given if isinstance(given, str) else ",".join(map(str, given))
        raise ValueError(
            f"methods={shown!r}: give 'none' or a comma-separated list of "
            f"{', '.join(OTHER_METHODS)} (e.g. methods=hierarchical,plackett-luce), added to "
            "the default methods; add 'none' to leave those out (none,friedman)"
        )
    return names


def check_methods(
    data: pd.DataFrame | TidyResults,
    layout: Mapping[str, Any],
    *,
    path: str | Path,
    methods: str | Sequence[str] | None = None,
    robustness: bool = False,
    rho: float | None = None,
) -> list[str]:
    """The other methods to run, each checked against the data before any fit.

    The defaults, in every format, so that the HTML, Markdown and LaTeX reports of the same
    data have the same sections: Plackett-Luce for data with folds where it can run, and
    the hierarchical t-test too when ``rho`` is given and pairs x data sets is at most
    :data:`PAIRWISE_DEFAULT_MAX` (it is one fit per pair). The methods ``methods`` names are
    added to them, unless it holds ``"none"`` (:func:`keeps_defaults`). A ``rho`` that no
    hierarchical t-test uses is refused. ``robustness`` (leaving each data set out) needs
    enough data sets.

    Parameters
    ----------
    data, layout
        The results (a table or as read) and how to read them (``dataset``, ``algorithm``,
        ``fold``, ``score``, ``lower_is_better``), as given to the fit.
    path
        The report file.

    Raises
    ------
    ValueError
        Naming the keyword and the fix.
    """
    # the checks read the data alone: the methods themselves (Altair, SciPy) are imported
    # where they run, so that the command line can import them while it fits
    from ...lab.influence import MIN_DATASETS

    tidy = as_tidy(data, **read_layout(layout))
    if robustness and len(tidy.datasets) < MIN_DATASETS:
        raise ValueError(
            f"robustness=True leaves each data set out in turn and needs at least "
            f"{MIN_DATASETS} data sets; these results have {len(tidy.datasets)}"
        )
    ranked = int(tidy.ranked.sum())
    named = methods_from(methods) or []
    defaults = []
    if keeps_defaults(methods):
        if tidy.has_folds and ranked >= MIN_RANKED_DATASETS:
            defaults.append("plackett-luce")
        n_alg, n_data = len(tidy.algorithms), len(tidy.datasets)
        small = n_alg * (n_alg - 1) // 2 * n_data <= PAIRWISE_DEFAULT_MAX
        if tidy.has_folds and small and rho is not None:
            defaults.append("hierarchical")
    chosen = [m for m in OTHER_METHODS if m in named or m in defaults]
    for model in _RANKING_MODELS:
        if model in chosen and ranked < MIN_RANKED_DATASETS:
            raise ValueError(
                f"methods={model} needs at least {MIN_RANKED_DATASETS} data sets where 2 or "
                f"more algorithms have a result; these results have {ranked}"
            )
    if rho is not None and "hierarchical" not in chosen:
        raise ValueError(
            f"rho={rho:g} is used only by the hierarchical t-test; add methods=hierarchical "
            "or leave rho out"
        )
    if "hierarchical" in chosen:
        if not tidy.has_folds:
            raise ValueError(
                "methods=hierarchical needs the results of every fold (several rows per data "
                "set and algorithm); these results have one score per data set"
            )
        if rho is None:
            raise ValueError(
                "methods=hierarchical needs rho, the correlation of results from overlapping "
                "training sets: 1/k for k-fold cross-validation (e.g. rho=0.1 for 10 folds)"
            )
        if not 0.0 < rho < 1.0:
            raise ValueError(f"rho={rho:g}: must lie strictly between 0 and 1")
        from ...baselines._hierarchical_pairs import check_pairs

        try:  # every pair has enough data sets with common folds
            check_pairs(tidy, **read_layout(layout), rho=rho)
        except ValueError as err:
            raise ValueError(f"methods=hierarchical: {err}") from None
    return chosen


#: How the results were read: the keys of a fit's settings the other methods take too.
LAYOUT = ("dataset", "algorithm", "fold", "score", "lower_is_better")


def read_layout(layout: Mapping[str, Any]) -> dict[str, Any]:
    """The :data:`LAYOUT` keywords of ``layout`` (a fit's keywords or settings), unset ones
    ``None`` (``lower_is_better``: ``False``)."""
    return {k: layout.get(k) for k in LAYOUT} | {
        "lower_is_better": bool(layout.get("lower_is_better"))
    }
