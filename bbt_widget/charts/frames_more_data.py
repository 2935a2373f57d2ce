"""The tidy frame of a forecast of claims after more data sets (:meth:`BBTResult.more_data`):
P(some claim) per pair, rule and number of more data sets, for the chart of
:mod:`.specs_more_data` (pandas and numpy only)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from ..core.bidi import pair_label
from ..core.more_data import MoreData

__all__ = ["more_data_frame"]


def more_data_frame(
    forecasts: MoreData | Iterable[MoreData], pairs: Sequence[tuple[str, str]] | None = None
) -> pd.DataFrame:
    """P(some claim) against ``n`` per pair and rule, with a band of 2 Monte Carlo standard
    errors.

    Parameters
    ----------
    forecasts
        One forecast, or several (e.g. one per rule, for the same pair and settings).
    pairs
        Keep these pairs only (``(alg_a, alg_b)`` as in the forecast's table); default all.

    Returns
    -------
    pandas.DataFrame
        ``pair`` (label "a > b"), ``alg_a``, ``alg_b``, ``rule``, ``n``, ``p_claim``,
        ``mcse``, ``low`` and ``high`` (the band, within [0, 1]), and the likeliest claim
        ``likeliest`` with its probability ``p_likeliest``.
    """
    listed = [forecasts] if isinstance(forecasts, MoreData) else list(forecasts)
    frames = []
    for forecast in listed:
        t = forecast.table
        if pairs is not None:
            keep = set(pairs)
            t = t[[(a, b) in keep for a, b in zip(t["alg_a"], t["alg_b"])]]
        claims = t[["p_a_better", "p_b_better", "p_equivalent"]].to_numpy()
        names = np.array(["a better", "b better", "equivalent"])
        p_claim = 1.0 - t["p_no_claim"].to_numpy()
        mcse = t["mcse_no_claim"].to_numpy()
        frames.append(
            pd.DataFrame(
                {
                    "pair": [pair_label(a, b) for a, b in zip(t["alg_a"], t["alg_b"])],
                    "alg_a": t["alg_a"].to_numpy(),
                    "alg_b": t["alg_b"].to_numpy(),
                    "rule": forecast.rule,
                    "n": t["n"].to_numpy(),
                    "p_claim": p_claim,
                    "mcse": mcse,
                    "low": np.clip(p_claim - 2 * mcse, 0.0, 1.0),
                    "high": np.clip(p_claim + 2 * mcse, 0.0, 1.0),
                    "likeliest": names[claims.argmax(axis=1)] if len(t) else [],
                    "p_likeliest": claims.max(axis=1) if len(t) else [],
                }
            )
        )
    return pd.concat(frames, ignore_index=True)
