"""The highlighted pair's wins, losses and ties per data set, before and after the local ROPE
and the tie policy (paper Sec. 6.1 and 6.2): which data sets the local ROPE made ties, and
what the model was given for the pair.

The counting is :func:`bbt_widget.core.wintable.dataset_outcomes`, the rule the fit counted
with; the counts given to the model are the fitted table's row. Names go to the front end as
data, which shows them as text.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.posterior import algorithm_order
from ..core.result import BBTResult
from ..core.wintable import OUTCOMES, dataset_outcomes

__all__ = ["pair_panel"]

#: The words for an outcome of :data:`~bbt_widget.core.wintable.OUTCOMES`.
_WORDS = dict(zip(OUTCOMES, ("a", "b", "tie", "no result"), strict=True))


def _counts(outcomes: list[str]) -> dict[str, int]:
    return {
        "a": outcomes.count(OUTCOMES[0]),
        "b": outcomes.count(OUTCOMES[1]),
        "ties": outcomes.count(OUTCOMES[2]),
    }


def _policy_words(ties: str, n_ties: int) -> str:
    if ties == "spread":
        return f"each side gets half of the {n_ties} ties, rounded up"
    if ties == "add":
        return f"each side gets every one of the {n_ties} ties as a win"
    if ties == "forget":
        return f"the {n_ties} ties are left out"
    return f"the {n_ties} ties are kept as ties (Davidson's model)"


def pair_panel(result: BBTResult | None, key: str) -> dict[str, Any]:
    """What the panel of the pair ``key`` (``charts.pair_key(a, b)``) shows for ``result``.

    Returns
    -------
    dict
        ``{}`` without a pair or a result. Else ``a`` and ``b`` (the better-ranked first),
        ``problem`` (why no data set can be shown, else ``""``), ``rows`` (per data set, of
        one group's view of a grouped fit (``in_group``) the group's data sets:
        ``dataset``, ``mean_a``, ``mean_b``, ``before`` and ``after``: ``"a"``, ``"b"``,
        ``"tie"`` or ``"no result"``, and ``new_tie``: a tie only under the local ROPE),
        ``before``, ``after`` and ``model`` (counts ``a``, ``b``, ``ties``: on the means,
        after the local ROPE and tie threshold, and given to the model after the tie
        policy), ``local_rope`` (whether the fit used one) and ``note`` (the rules in words,
        citing the paper).
    """
    if result is None or not key:
        return {}
    try:
        names = [str(n) for n in json.loads(key)]
    except ValueError:
        return {}
    if len(names) != 2 or not set(names) <= set(result.algorithms):
        return {}
    rank = {result.algorithms[i]: r for r, i in enumerate(algorithm_order(result.beta))}
    a, b = sorted(names, key=lambda n: rank[n])
    settings = result.settings
    ties = str(settings.get("ties") or "spread")
    d_min = settings.get("d_min")
    panel: dict[str, Any] = {"a": a, "b": b, "local_rope": d_min is not None, "problem": ""}
    table = result.win_table
    row = table[
        ((table["alg1"] == a) & (table["alg2"] == b))
        | ((table["alg1"] == b) & (table["alg2"] == a))
    ]
    if len(row):
        first = str(row["alg1"].iloc[0]) == a
        win1, win2 = int(row["win1"].iloc[0]), int(row["win2"].iloc[0])
        panel["model"] = {
            "a": win1 if first else win2,
            "b": win2 if first else win1,
            "ties": int(row["ties"].iloc[0]) if "ties" in row else 0,
        }
    if result.tidy is None:
        panel["problem"] = "the fit was given a win table: there are no per-data-set results"
        return panel
    threshold = settings.get("tie_threshold")
    before = dataset_outcomes(result.tidy, a, b, tie_threshold=threshold)
    after = dataset_outcomes(
        result.tidy,
        a,
        b,
        d_min=d_min,
        paired=bool(settings.get("paired", True)),
        tie_threshold=threshold,
    )
    group = getattr(result, "group_datasets", None)  # one group's view of a grouped fit
    if group is not None:
        before, after = (t[t["dataset"].isin(group)] for t in (before, after))
    was, now = before["outcome"].tolist(), after["outcome"].tolist()
    panel["rows"] = [
        {
            "dataset": str(name),
            "mean_a": _finite(mean_a),
            "mean_b": _finite(mean_b),
            "before": _WORDS[x],
            "after": _WORDS[y],
            "new_tie": y == OUTCOMES[2] and x != OUTCOMES[2],
        }
        for name, mean_a, mean_b, x, y in zip(
            before["dataset"], before["mean_a"], before["mean_b"], was, now, strict=True
        )
    ]
    panel["before"], panel["after"] = _counts(was), _counts(now)
    new_ties = sum(r["new_tie"] for r in panel["rows"])
    if d_min is None:
        rope = "Local ROPE off: the mean scores decide each data set (turn it on to see "
        rope += "which data sets become ties, Sec. 6.1)."
    else:
        effect = "paired d_z, Eq. 6" if settings.get("paired", True) else "Cohen's d, Eq. 4"
        rope = (
            f"Local ROPE d_min = {float(d_min):.2f} ({effect}, Sec. 6.1): {new_ties} of "
            f"{len(was)} data sets became ties."
        )
    policy = _policy_words(ties, panel["after"]["ties"])
    panel["note"] = f"{rope} Tie policy '{ties}' (Sec. 6.2): {policy}."
    return panel


def _finite(value: Any) -> float | None:
    number = float(value)
    return number if number == number and abs(number) != float("inf") else None
