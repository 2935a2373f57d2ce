"""The headline names whom each leader beats: hostile names are named as they are (bidi
names isolated), never read as markup by the medium that shows them, and cannot reorder or
merge the sentence's lists."""

from __future__ import annotations

import itertools

import pandas as pd
from hostile import HOSTILE
from test_bidi_names import assert_isolated

from bbt_widget.core.bidi import isolate
from bbt_widget.outputs import export
from bbt_widget.outputs.headline import headline


def _listed(names: list[str]) -> str:
    shown = [isolate(n) for n in names]
    return ", ".join(shown[:-1]) + " and " + shown[-1]


def test_hostile_names_are_named_as_beaten_each_once_and_isolated() -> None:
    order = list(HOSTILE[:6]) + list(HOSTILE[-4:])  # markup, formulas and bidi names
    first, second = order[:2]
    rows = []
    for a, b in itertools.combinations(order, 2):
        if (a, b) == (first, second):
            decision = "equivalent"
        elif a == first or (a == second and order.index(b) >= 4):
            decision = "a better"
        else:
            decision = "no claim"
        rows.append({"alg_a": a, "alg_b": b, "weak": decision})
    summary, ranking = pd.DataFrame(rows), pd.DataFrame({"algorithm": order})
    text = headline(summary, ranking, "weak")
    assert text == (
        f"{_listed([first, second])} are practically equivalent and all better than "
        f"{_listed(order[4:])}; {isolate(first)} also better than {_listed(order[2:4])}; "
        f"{len(order) - 1 + len(order) - 4} of {len(rows)} pairs decided under the weak rule"
    )
    assert_isolated(text, "headline")
    html = export.ESCAPERS["html"](text)
    assert "<script>" not in html and "<img" not in html
