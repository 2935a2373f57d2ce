"""The highlighted pair's wins, losses and ties per data set, before and after the local ROPE
and the tie policy (paper Sec. 6.1 and 6.2): why each data set went the way it did (its
effect size against d_min, its difference against the tie threshold, or equal means), the
tie policy's arithmetic for the pair, and what the last change of a setting did to its counts.

The counting and its reasons are :func:`bbt_widget.core.wintable.dataset_outcomes`, the rule
the fit counted with; the tie policy's arithmetic is :func:`~bbt_widget.core.wintable.apply_ties`
applied to the pair's counts, in the words of :data:`bbt_widget.core.terms.TIE_RULES`; the
counts given to the model are the fitted table's row. Every text here is free of names: the
front end puts the names beside them, as text.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd

from ..core.posterior import algorithm_order
from ..core.result import BBTResult
from ..core.terms import TIE_RULES
from ..core.wintable import OUTCOMES, apply_ties, dataset_outcomes

__all__ = ["decimals_apart", "pair_panel", "tie_arithmetic"]

#: The words for an outcome of :data:`~bbt_widget.core.wintable.OUTCOMES`.
_WORDS = dict(zip(OUTCOMES, ("a", "b", "tie", "no result"), strict=True))

#: The settings that change how a pair is counted, as the panel names them.
_COUNTING = {
    "d_min": "d_min",
    "paired": "paired",
    "tie_threshold": "tie threshold",
    "ties": "tie policy",
    "lower_is_better": "lower is better",
    "score": "metric",
}

#: Most significant digits shown: the means are equal up to 1e-12 of their size
#: (core/wintable.py's REL_TOL), so more digits would show rounding noise.
_MOST_DIGITS = 12


def decimals_apart(x: float, y: float, least: int) -> int:
    """The fewest decimals, at least ``least``, at which ``x`` and ``y`` print differently
    (``least`` when they never do within :data:`_MOST_DIGITS` significant digits): 0.866640
    and 0.866632 need 5, where 4 would print both as 0.8666."""
    big = max(abs(x), abs(y), 1.0)
    most = max(least, _MOST_DIGITS - 1 - math.floor(math.log10(big)))
    for digits in range(least, most + 1):
        if f"{x:.{digits}f}" != f"{y:.{digits}f}":
            return digits
    return least


def _apart(x: float, bound: float, least: int) -> tuple[str, str]:
    """``x`` (with two significant digits at least) and ``bound``, with the decimals that
    tell them apart: ``("0.0018", "0.40")``, ``("0.39999", "0.40000")``."""
    given = f"{bound:.6g}".partition(".")[2]  # the bound as set: d_min 0.125, not 0.12
    digits = max(decimals_apart(x, bound, least), len(given) if "e" not in given else 0)
    own = 1 - math.floor(math.log10(x)) if 0 < x < 1 else 0
    return f"{x:.{min(max(digits, own), _MOST_DIGITS)}f}", f"{bound:.{digits}f}"


def _counts(outcomes: list[str]) -> dict[str, int]:
    return {
        "a": outcomes.count(OUTCOMES[0]),
        "b": outcomes.count(OUTCOMES[1]),
        "ties": outcomes.count(OUTCOMES[2]),
    }


def _reason(row: Any, d_min: float | None, threshold: float | None) -> str:
    """Why the data set of ``row`` (of :func:`dataset_outcomes`) went as it did, with the
    numbers the rule compared (no names: the front end shows who won beside it)."""
    if row.outcome == OUTCOMES[3]:
        return "no result for one of the two here"
    effect, gap = abs(float(row.effect)), abs(float(row.difference))
    tie = row.outcome == OUTCOMES[2]
    sign = "\u2264" if tie else ">"
    if tie and row.equal:
        return "equal means \u2192 tie"
    said = []
    if d_min is not None:
        if math.isnan(effect):
            said.append("one fold: no spread for an effect size, the means decide")
        elif math.isinf(effect):
            bound = _apart(d_min, d_min, 2)[1]
            said.append(f"effect \u221e > d_min {bound} (the folds' differences never vary)")
        elif not tie or row.rope_tie:
            shown, bound = _apart(effect, d_min, 2)
            said.append(f"effect {shown} {sign} d_min {bound}")
    if threshold and (not tie or row.threshold_tie):
        shown, bound = _apart(gap, threshold, 4)
        said.append(f"difference {shown} {sign} tie threshold {bound}")
    if tie:
        return " and ".join(s for s in said if not s.startswith("one fold")) + " \u2192 tie"
    return "; ".join(said) or "the better mean wins"


def _rows(after: pd.DataFrame, before: pd.DataFrame, settings: Any) -> list[dict[str, Any]]:
    d_min, threshold = settings.get("d_min"), settings.get("tie_threshold")
    rows = []
    for now, was in zip(after.itertuples(), before.itertuples(), strict=True):
        mean_a, mean_b = _finite(now.mean_a), _finite(now.mean_b)
        # enough decimals that two means that count as different print differently
        digits = 4
        if mean_a is not None and mean_b is not None and not was.equal:
            digits = decimals_apart(mean_a, mean_b, 4)
        effect = abs(float(now.effect))
        shown = ""  # no local ROPE, or one fold: no effect size
        if d_min is not None and (now.equal or not math.isnan(effect)):
            shown = _effect_text(effect, d_min, now.equal)
        rows.append(
            {
                "dataset": str(now.dataset),
                "mean_a": mean_a,
                "mean_b": mean_b,
                "digits": digits,
                "effect": shown,
                "before": _WORDS[was.outcome],
                "after": _WORDS[now.outcome],
                "new_tie": now.outcome == OUTCOMES[2] and was.outcome != OUTCOMES[2],
                "reason": _reason(now, d_min, threshold),
            }
        )
    return rows


def _effect_text(effect: float, d_min: float, equal: bool) -> str:
    """The effect as the row's reason gives it (equal means: 0, their rounding noise aside,
    also where the folds agree exactly and the effect is 0 / 0)."""
    if math.isinf(effect):
        return "\u221e"
    return _apart(0.0 if equal else effect, d_min, 2)[0]


def tie_arithmetic(ties: str, after: dict[str, int]) -> dict[str, Any]:
    """The tie policy ``ties`` applied to the pair's counts ``after`` (``a``, ``b``,
    ``ties``) by :func:`~bbt_widget.core.wintable.apply_ties`, and its arithmetic in words:
    ``{"given": counts given to the model, "text": ...}``, e.g. "67 ties \u2192 33.5 to each
    side, rounded up to 34: the model is given 12 + 34 = 46 and 3 + 34 = 37 wins"."""
    raw = pd.DataFrame(
        {"alg1": ["a"], "alg2": ["b"], "win1": [after["a"]], "win2": [after["b"]]}
        | {"ties": [after["ties"]]}
    )
    row = apply_ties(raw, ties).iloc[0]
    given = {"a": int(row["win1"]), "b": int(row["win2"]), "ties": int(row["ties"])}
    t, share = after["ties"], given["a"] - after["a"]
    sums = f"{after['a']} + {share} = {given['a']} and {after['b']} + {share} = {given['b']} wins"
    if ties == "spread":
        half = f"{t / 2:g} to each side" + (f", rounded up to {share}" if t % 2 else "")
        how = f"{t} ties \u2192 {half}: the model is given {sums}"
    elif ties == "add":
        how = f"{t} ties \u2192 all {t} to each side: the model is given {sums}"
    elif ties == "forget":
        how = f"{t} ties \u2192 dropped: the model is given {given['a']} and {given['b']} wins"
    else:
        how = (
            f"{t} ties \u2192 kept: the model is given {given['a']} and {given['b']} wins "
            f"and {given['ties']} ties"
        )
    rule = f"Tie policy {ties} (Sec. 6.2) = {TIE_RULES[ties]}"
    return {"given": given, "text": f"{rule}: {how}."}


def pair_panel(
    result: BBTResult | None, key: str, previous: dict[str, Any] | None = None
) -> dict[str, Any]:
    """What the panel of the pair ``key`` (``charts.pair_key(a, b)``) shows for ``result``.

    Parameters
    ----------
    result, key
        The fit and the pair.
    previous
        The panel shown before (the trait's value): when it is of the same pair under other
        counting settings and the pair's counts differ, ``changed`` says how.

    Returns
    -------
    dict
        ``{}`` without a pair or a result. Else ``a`` and ``b`` (the better-ranked first),
        ``problem`` (why no data set can be shown, else ``""``), ``rows`` (per data set, of
        one group's view of a grouped fit (``in_group``) the group's data sets:
        ``dataset``, ``mean_a``, ``mean_b``, ``digits`` (decimals that tell the two means
        apart), ``effect`` (the local ROPE's effect size, ``""`` without one), ``before``
        and ``after``: ``"a"``, ``"b"``, ``"tie"`` or ``"no result"``, ``new_tie``: a tie
        only under the local ROPE, and ``reason``: why, in numbers), ``before``, ``after``
        and ``model`` (counts ``a``, ``b``, ``ties``: on the means, after the local ROPE
        and tie threshold, and given to the model after the tie policy), ``local_rope``
        (whether the fit used one), ``note`` (the local ROPE's rule in words, citing the
        paper), ``arithmetic`` (the tie policy, in the glossary's words, and its sums for the
        pair), ``settings`` (the counting
        settings, as text) and ``changed`` (see ``previous``; ``{}`` when nothing did).
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
    panel["settings"] = {key: _setting_text(key, settings.get(key)) for key in _COUNTING}
    panel["changed"] = {}
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
    panel["rows"] = _rows(after, before, settings)
    panel["before"], panel["after"] = _counts(was), _counts(now)
    panel["arithmetic"] = tie_arithmetic(ties, panel["after"])["text"]
    new_ties = sum(r["new_tie"] for r in panel["rows"])
    if d_min is None:
        rope = "Local ROPE off: the mean scores decide each data set (turn it on to see "
        rope += "which data sets become ties, Sec. 6.1)."
    else:
        effect = "paired d_z, Eq. 6" if settings.get("paired", True) else "Cohen's d, Eq. 4"
        shown = _apart(float(d_min), float(d_min), 2)[1]
        rope = (
            f"Local ROPE d_min = {shown} ({effect}, Sec. 6.1): {new_ties} of "
            f"{len(was)} data sets became ties."
        )
    panel["note"] = rope
    panel["changed"] = _changed(previous or {}, panel)
    return panel


def _setting_text(key: str, value: Any) -> str:
    if value is None:
        return "default" if key == "score" else "off"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _changed(previous: dict[str, Any], panel: dict[str, Any]) -> dict[str, Any]:
    """How the pair's counts moved from ``previous`` (the panel shown before) to ``panel``:
    ``settings`` (``[name, was, now]`` of each counting setting changed), ``moves``
    (``[was, now, data sets]``: outcomes ``"a"``, ``"b"``, ``"tie"``, ``"no result"`` of
    this panel's ``a`` and ``b``, e.g. ``["a", "tie", 5]``: 5 wins of ``a`` became ties) and
    ``model`` (``[name, was, now]`` of the counts given to the model that changed). ``{}``
    for another pair or no change; the same pair under the same settings keeps the line
    it had."""
    if {previous.get("a"), previous.get("b")} != {panel["a"], panel["b"]}:
        return {}
    if previous.get("settings") == panel["settings"]:
        return dict(previous.get("changed") or {})
    swap = previous["a"] != panel["a"]  # the ranking flipped: the old "a" is now "b"
    flip = {"a": "b", "b": "a"} if swap else {}
    old = {r["dataset"]: flip.get(r["after"], r["after"]) for r in previous.get("rows", [])}
    moves: dict[tuple[str, str], int] = {}
    for row in panel.get("rows", []):
        was = old.get(row["dataset"])
        if was is not None and was != row["after"]:
            moves[(was, row["after"])] = moves.get((was, row["after"]), 0) + 1
    before_model = dict(previous.get("model") or {})
    if swap:
        before_model = {"a": before_model.get("b"), "b": before_model.get("a")} | {
            "ties": before_model.get("ties")
        }
    model = [
        [name, before_model.get(name), count]
        for name, count in (panel.get("model") or {}).items()
        if before_model.get(name) is not None and before_model.get(name) != count
    ]
    if not moves and not model:
        return {}
    was, now = previous["settings"], panel["settings"]
    # paired only says how the local ROPE counts: not worth a word when it is off either side
    rope_off = "off" in (was.get("d_min"), now["d_min"])
    return {
        "settings": [
            [label, was.get(key, ""), now[key]]
            for key, label in _COUNTING.items()
            if was.get(key) != now[key] and not (key == "paired" and rope_off)
        ],
        "moves": [[was, now, n] for (was, now), n in moves.items()],
        "model": model,
    }


def _finite(value: Any) -> float | None:
    number = float(value)
    return number if number == number and abs(number) != float("inf") else None
