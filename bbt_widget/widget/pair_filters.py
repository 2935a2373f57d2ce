"""Which pairs the widget's pairwise view lists: a filter (every pair, the undecided ones
first, the ranking's neighbours, or both), the pairs of one algorithm ("Show pairs of"), a
search by name, and pages of at most :data:`PAIRS_PER_PAGE` rows.

With 50 algorithms there are 1,225 pairs: drawn at once their chart is tens of thousands of
pixels tall, and the pairs of the best algorithm alone (the old default) are the least
informative ones, all claimed better. The pairs still undecided and those of neighbours in
the ranking are where a reader looks first, so from :data:`FILTER_ALGORITHMS` algorithms on
they are what the view opens on. Pure pandas; :mod:`.pairs_section` applies it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

__all__ = [
    "FILTER_ALGORITHMS",
    "PAIRS_PER_PAGE",
    "PAIR_FILTERS",
    "PairSelection",
    "Reveal",
    "default_filter",
    "reveal",
    "select_pairs",
    "shown_frames",
]

#: The filters, by value, with what the drop-down says of each.
PAIR_FILTERS: Mapping[str, str] = {
    "all": "all pairs",
    "undecided": "undecided first",
    "neighbours": "ranking neighbours",
    "undecided_neighbours": "undecided and neighbours",
}
#: From this many algorithms on, the view opens on the undecided pairs and the neighbours.
FILTER_ALGORITHMS = 30
#: Rows of one page of the pairwise view (about 20 px each).
PAIRS_PER_PAGE = 40


def default_filter(n_algorithms: int) -> str:
    """The filter the view opens on for ``n_algorithms`` algorithms."""
    return "undecided_neighbours" if n_algorithms >= FILTER_ALGORITHMS else "all"


@dataclass(frozen=True)
class PairSelection:
    """The pairs one page shows (``keys``, in the order drawn) and how many matched."""

    keys: tuple[str, ...]
    matched: int
    total: int
    page: int
    pages: int
    per_page: int

    def as_dict(self, how: str) -> dict[str, object]:
        """For the front end's pager (trait ``pair_rows``), with the filters it offers."""
        return {
            "filters": [list(item) for item in PAIR_FILTERS.items()],
            "filter": how,
            "shown": len(self.keys),
            "matched": self.matched,
            "total": self.total,
            "page": self.page,
            "pages": self.pages,
            "per_page": self.per_page,
        }


def _matches(text: str, a: str, b: str) -> bool:
    """Every word of ``text`` is in one of the two names (case-folded): "lgbm xgb" finds
    that pair, "svm" every pair of an algorithm whose name holds it."""
    names = (a.casefold(), b.casefold())
    return all(any(word in name for name in names) for word in text.casefold().split())


def select_pairs(
    intervals: pd.DataFrame,
    ranking: Sequence[str],
    *,
    how: str = "all",
    focus: str = "",
    search: str = "",
    pinned: str = "",
    page: int = 0,
    per_page: int = PAIRS_PER_PAGE,
) -> PairSelection:
    """The pairs of the interval frame to draw.

    Parameters
    ----------
    intervals
        :func:`~bbt_widget.charts.frames.interval_frame`: ``key``, ``alg_a``,
        ``alg_b``, ``verdict``, in summary order (best against each worse one).
    ranking
        The algorithms, best first: neighbours are next to each other here.
    how
        One of :data:`PAIR_FILTERS`. ``"undecided"`` keeps every pair but lists the ones
        with no claim first; ``"neighbours"`` keeps the pairs next to each other in the
        ranking; ``"undecided_neighbours"`` the pairs with no claim, then the neighbours.
    focus
        Only this algorithm's pairs (``""``: every algorithm's).
    search
        Only the pairs whose names hold every word of it (case-folded).
    pinned
        A pair key listed first on the page whatever the page (the highlighted pair), when
        the focus and search keep it.
    page, per_page
        Which page (from 0; clamped to the pages there are) of how many rows.
    """
    if how not in PAIR_FILTERS:
        raise ValueError(f"pair filter {how!r} is not one of {list(PAIR_FILTERS)}")
    rank = {name: i for i, name in enumerate(ranking)}
    keys = intervals["key"].astype(str).tolist()
    alg_a = intervals["alg_a"].astype(str).tolist()
    alg_b = intervals["alg_b"].astype(str).tolist()
    undecided = (intervals["verdict"] == "no claim").tolist()
    candidates = [
        i
        for i in range(len(keys))
        if (not focus or focus in (alg_a[i], alg_b[i]))
        and (not search.strip() or _matches(search, alg_a[i], alg_b[i]))
    ]
    kept = candidates
    near = {
        i for i in kept if abs(rank.get(alg_a[i], -9) - rank.get(alg_b[i], -9)) == 1
    }  # an algorithm not ranked (no such name) is nobody's neighbour
    if how == "neighbours":
        kept = [i for i in kept if i in near]
    elif how == "undecided_neighbours":
        kept = [i for i in kept if undecided[i]] + [
            i for i in kept if i in near and not undecided[i]
        ]
    elif how == "undecided":
        kept = [i for i in kept if undecided[i]] + [i for i in kept if not undecided[i]]
    rows = [keys[i] for i in kept]
    pages = max(1, -(-len(rows) // per_page))
    page = min(max(int(page), 0), pages - 1)
    shown = rows[page * per_page : (page + 1) * per_page]
    if pinned and pinned not in shown and pinned in {keys[i] for i in candidates}:
        shown = [pinned, *shown]
    return PairSelection(tuple(shown), len(rows), len(keys), page, pages, per_page)


def shown_frames(
    frames: Mapping[str, pd.DataFrame], keys: Sequence[str]
) -> dict[str, pd.DataFrame]:
    """The pairwise view's frames cut to the pairs ``keys``, their ``order`` the one given
    (the charts list pairs by it); frames without pair keys (the ROPE's) as they are."""
    position = {key: i for i, key in enumerate(keys)}
    out = {}
    for name, frame in frames.items():
        if "key" not in frame.columns:
            out[name] = frame
            continue
        rows = frame[frame["key"].isin(position)].copy()
        rows["order"] = rows["key"].map(position).astype("int64")
        out[name] = rows.sort_values("order", kind="stable").reset_index(drop=True)
    return out


@dataclass(frozen=True)
class Reveal:
    """The list settings that show a clicked pair or algorithm, and what changed, in words."""

    focus: str
    search: str
    text: str


def reveal(
    names: Sequence[str], ranking: Sequence[str], *, focus: str = "", search: str = ""
) -> Reveal:
    """The "Show pairs of" and search that list ``names`` (a pair, or one algorithm whose
    pairs to show), changing as little as they can; with the sentence that says so.

    A pair is listed whatever the filter and the page once the focus and the search keep it
    (it is pinned: see :func:`select_pairs`), so only those two change: a focus on neither
    algorithm moves to the better-ranked one (its pairs are the ones listed next to it), a
    search that does not find the pair is cleared. One algorithm becomes the focus.
    """
    names = [str(name) for name in names]
    if len(names) == 1:
        new_focus, what = names[0], f"showing the pairs of {names[0]}"
    else:
        rank = {name: i for i, name in enumerate(ranking)}
        # better-ranked first, as the pairwise view and the matrices' tooltips name a pair
        best, other = sorted(names, key=lambda name: rank.get(name, len(rank)))
        new_focus = focus if not focus or focus in names else best
        what = f"showing {best} vs {other}"
    notes = [what]
    if new_focus != focus:
        notes.append(f"'Show pairs of' set to {new_focus}" if new_focus else "")
    kept = not search.strip() or (
        _matches(search, names[0], names[-1])
        if len(names) == 2
        else all(word in names[0].casefold() for word in search.casefold().split())
    )
    # one algorithm: its pairs are found by the search when its name holds every word (a
    # word in another name would list only some of its pairs)
    new_search = search if kept else ""
    if not kept:
        notes.append("search cleared")
    return Reveal(new_focus, new_search, "; ".join(note for note in notes if note))
