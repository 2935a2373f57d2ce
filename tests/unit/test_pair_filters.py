"""Which pairs the widget's pairwise view lists (widget/pair_filters.py): the filters, the
focus, the search, the pages and the highlighted pair kept on the page, on the interval
frame of a real fit and on a hand-made one; the widget's default at 50 algorithms."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import traitlets

import bbt_widget as bbt
from bbt_widget.charts.frames import interval_frame
from bbt_widget.charts.pairs import pair_key
from bbt_widget.widget.fitted import fit_ranges
from bbt_widget.widget.pair_filters import (
    FILTER_ALGORITHMS,
    PAIR_FILTERS,
    PAIRS_PER_PAGE,
    default_filter,
    reveal,
    select_pairs,
    shown_frames,
)


def _frame(pairs: list[tuple[str, str, str]]) -> pd.DataFrame:
    """An interval frame's columns the filter reads: (alg_a, alg_b, verdict) per pair."""
    return pd.DataFrame(
        {
            "key": [pair_key(a, b) for a, b, _ in pairs],
            "alg_a": [a for a, _, _ in pairs],
            "alg_b": [b for _, b, _ in pairs],
            "verdict": [v for _, _, v in pairs],
        }
    )


#: a > b > c > d: a-b and c-d undecided, b-c a neighbour pair with a claim
PAIRS = [
    ("a", "b", "no claim"),
    ("a", "c", "better"),
    ("a", "d", "better"),
    ("b", "c", "better"),
    ("b", "d", "equivalent"),
    ("c", "d", "no claim"),
]
RANKING = ["a", "b", "c", "d"]


def _names(selection) -> list[list[str]]:
    return [json.loads(k) for k in selection.keys]


def test_each_filter_lists_its_pairs_in_its_order():
    frame = _frame(PAIRS)
    assert _names(select_pairs(frame, RANKING, how="all")) == [sorted(p[:2]) for p in PAIRS]
    # the undecided first, then every other pair in summary order
    assert _names(select_pairs(frame, RANKING, how="undecided")) == [
        ["a", "b"],
        ["c", "d"],
        ["a", "c"],
        ["a", "d"],
        ["b", "c"],
        ["b", "d"],
    ]
    assert _names(select_pairs(frame, RANKING, how="neighbours")) == [
        ["a", "b"],
        ["b", "c"],
        ["c", "d"],
    ]
    # the undecided, then the neighbours with a claim; b-d (equivalent, not neighbours) out
    both = select_pairs(frame, RANKING, how="undecided_neighbours")
    assert _names(both) == [["a", "b"], ["c", "d"], ["b", "c"]]
    assert (both.matched, both.total, both.pages) == (3, 6, 1)


def test_focus_and_search_narrow_any_filter():
    frame = _frame(PAIRS)
    assert _names(select_pairs(frame, RANKING, how="all", focus="d")) == [
        ["a", "d"],
        ["b", "d"],
        ["c", "d"],
    ]
    # every word in one of the two names, case-folded
    assert _names(select_pairs(frame, RANKING, search=" A  D ")) == [["a", "d"]]
    assert select_pairs(frame, RANKING, search="zzz").keys == ()
    assert _names(select_pairs(frame, RANKING, how="neighbours", search="c")) == [
        ["b", "c"],
        ["c", "d"],
    ]


def test_pages_are_capped_and_clamped_and_keep_the_highlighted_pair():
    names = [f"alg{i:02d}" for i in range(50)]
    pairs = [(a, b, "better") for i, a in enumerate(names) for b in names[i + 1 :]]
    frame = _frame(pairs)
    first = select_pairs(frame, names, how="all")
    assert len(first.keys) == PAIRS_PER_PAGE and first.pages == -(-1225 // PAIRS_PER_PAGE)
    last = select_pairs(frame, names, how="all", page=10_000)
    assert last.page == first.pages - 1 and len(last.keys) == 1225 - PAIRS_PER_PAGE * last.page
    assert select_pairs(frame, names, how="all", page=-3).page == 0
    # the highlighted pair, on another page, is listed first on this one
    far = pair_key("alg48", "alg49")
    pinned = select_pairs(frame, names, how="all", pinned=far)
    assert pinned.keys[0] == far and len(pinned.keys) == PAIRS_PER_PAGE + 1
    # not when the focus leaves it out
    assert far not in select_pairs(frame, names, focus="alg00", pinned=far).keys


def test_an_unknown_filter_is_refused_naming_the_filters():
    with pytest.raises(ValueError, match="undecided_neighbours"):
        select_pairs(_frame(PAIRS), RANKING, how="best")


def test_shown_frames_cut_rows_and_order_them_as_listed():
    overlap = pd.DataFrame(
        {"key": np.repeat([pair_key(a, b) for a, b, _ in PAIRS], 3), "order": 0, "mass": 1.0}
    )
    rope = pd.DataFrame({"low": [0.45], "high": [0.55]})
    keys = [pair_key("c", "d"), pair_key("a", "b")]
    out = shown_frames({"intervals": _frame(PAIRS), "overlap": overlap, "rope": rope}, keys)
    assert out["intervals"]["key"].tolist() == keys
    assert out["intervals"]["order"].tolist() == [0, 1]
    assert out["overlap"]["key"].tolist() == [keys[0]] * 3 + [keys[1]] * 3
    assert out["rope"] is rope


@pytest.mark.slow
def test_undecided_and_neighbours_on_a_real_fit(base: pd.DataFrame):
    result = bbt.fit(base, dataset="db", engine="numpy", seed=1)
    summary = result.summary()
    frame = interval_frame(summary, fit_ranges(result), "strong")
    ranking = list(result.ranking()["algorithm"])
    chosen = select_pairs(frame, ranking, how="undecided_neighbours")
    by_key = frame.set_index("key")
    rank = {name: i for i, name in enumerate(ranking)}
    undecided = [k for k in chosen.keys if by_key.loc[k, "verdict"] == "no claim"]
    assert undecided == [k for k in frame["key"] if by_key.loc[k, "verdict"] == "no claim"]
    for key in chosen.keys[len(undecided) :]:
        a, b = json.loads(key)
        assert abs(rank[a] - rank[b]) == 1, key


def test_default_filter_from_thirty_algorithms():
    assert default_filter(FILTER_ALGORITHMS - 1) == "all"
    assert default_filter(FILTER_ALGORITHMS) == "undecided_neighbours"
    assert set(PAIR_FILTERS) == {"all", "undecided", "neighbours", "undecided_neighbours"}


def _fifty() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    skill = np.sort(rng.normal(0, 0.05, 50))[::-1]
    rows = [
        (f"d{d}", f"alg{a:02d}", 0.7 + skill[a] + rng.normal(0, 0.03))
        for d in range(30)
        for a in range(50)
    ]
    return pd.DataFrame(rows, columns=["dataset", "algorithm", "score"])


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:BBT fit diagnostics")
def test_the_widget_opens_fifty_algorithms_on_a_page_of_undecided_and_neighbours():
    # short chains: what is checked is which rows the filters cut from the frames, not how
    # well the posterior is sampled (the default chains take minutes at 50 algorithms)
    w = bbt.BBTWidget(
        _fifty(),
        dataset="dataset",
        algorithm="algorithm",
        score="score",
        engine="numpy",
        seed=1,
        stan_check=False,
        chains=2,
        iter_warmup=200,
        iter_sampling=200,
    )
    try:
        assert w.wait(300), w.error
        assert w.pair_filter == "undecided_neighbours" and w.focus == ""
        assert len(w.view_data["intervals"]["key"]) == PAIRS_PER_PAGE
        assert w.pair_rows["total"] == 1225 and w.pair_rows["pages"] > 1
        verdicts = w.view_data["intervals"]["verdict"]
        assert verdicts[0] == "no claim"
        # another filter, a search and a page: rows cut from the same frames, no re-summary
        w.pair_filter = "all"
        w.pair_page = 2
        assert w.pair_rows["page"] == 2 and w.pair_rows["matched"] == 1225
        w.pair_search = "alg01 alg02"
        assert w.pair_page == 0 and w.view_data["intervals"]["pair"] == ["alg01 > alg02"]
        assert w.view_data["overlap"]["key"] == [pair_key("alg01", "alg02")] * 3
        # exported as listed: the pairwise charts of w.charts hold the pairs shown
        spec = w.charts["intervals"].to_dict()
        rows = [r for rows in spec["datasets"].values() for r in rows if "verdict" in r]
        assert {r["key"] for r in rows} == {pair_key("alg01", "alg02")}
        with pytest.raises(traitlets.TraitError, match="undecided_neighbours"):
            w.pair_filter = "best"
        # a view emptied (a preview dropped before any full fit) stays empty on a new filter
        w.view_data = {}
        w.pair_filter = "neighbours"
        assert w.view_data == {}
    finally:
        w.close()


def test_reveal_changes_as_little_as_it_can_and_says_what():
    # shown already: nothing changes
    shown = reveal(["b", "c"], RANKING, focus="b", search="")
    assert (shown.focus, shown.search, shown.text) == ("b", "", "showing b vs c")
    # a focus on neither: the better-ranked of the two, whatever the key's order
    shown = reveal(["d", "c"], RANKING, focus="a", search="")
    assert shown.focus == "c"
    assert shown.text == "showing c vs d; 'Show pairs of' set to c"  # better-ranked first
    # a search that does not find the pair is cleared, one that does is kept
    assert reveal(["a", "b"], RANKING, search="a b").search == "a b"
    shown = reveal(["c", "d"], RANKING, search="a")
    assert (shown.focus, shown.search) == ("", "")
    assert shown.text == "showing c vs d; search cleared"
    # one algorithm: its pairs; a search for another name is cleared
    shown = reveal(["c"], RANKING, focus="a", search="b")
    assert (shown.focus, shown.search) == ("c", "")
    assert shown.text == "showing the pairs of c; 'Show pairs of' set to c; search cleared"
    # the pair it reveals is listed by select_pairs, whatever the filter and the page
    for a, b in [(a, b) for a, b, _ in PAIRS]:
        for focus in ["", *RANKING]:
            shown = reveal([a, b], RANKING, focus=focus, search="d")
            listed = select_pairs(
                _frame(PAIRS),
                RANKING,
                how="neighbours",
                focus=shown.focus,
                search=shown.search,
                pinned=pair_key(a, b),
                page=5,
                per_page=1,
            )
            assert pair_key(a, b) in listed.keys, (a, b, focus)


@pytest.mark.slow
def test_a_click_on_a_matrix_cell_or_an_algorithm_shows_it():
    """At 16 algorithms "Show pairs of" opens on the top algorithm; a click on the cell of
    two others (the front end's message) lists and highlights that pair and says so."""
    w = bbt.BBTWidget(
        bbt.datasets.load_pmlb16(), dataset="db", paired=False, seed=1, stan_check=False
    )
    try:
        assert w.wait(300), w.error
        top = w.focus
        assert top and top not in ("svm", "dt")
        w._handle_custom_msg({"action": "show", "pair": pair_key("svm", "dt")}, [])
        assert w.selected_pair == pair_key("dt", "svm")
        assert w.focus in ("svm", "dt")
        assert pair_key("dt", "svm") in w.view_data["intervals"]["key"]
        other = "dt" if w.focus == "svm" else "svm"  # the focus: the better-ranked of the two
        assert (
            w.pair_rows["note"] == f"showing {w.focus} vs {other}; 'Show pairs of' set to {w.focus}"
        )
        # a ranking row: that algorithm's pairs, the highlighted pair kept when it is one
        w._handle_custom_msg({"action": "show", "algorithm": "dt"}, [])
        assert w.focus == "dt" and w.selected_pair == pair_key("dt", "svm")
        assert w.pair_rows["note"].startswith("showing the pairs of dt")
        # a change of the list made otherwise clears the note
        w.pair_filter = "undecided"
        assert w.pair_rows["note"] == ""
        # names that are not the widget's change nothing
        w._handle_custom_msg({"action": "show", "pair": pair_key("<b>x</b>", "dt")}, [])
        w._handle_custom_msg({"action": "show", "algorithm": "nope"}, [])
        assert w.focus == "dt" and w.selected_pair == pair_key("dt", "svm")
    finally:
        w.close()
