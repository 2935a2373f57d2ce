"""Counts in words: ``1 pair``, ``2 pairs``. Every sentence the package writes about a count
agrees in number through :func:`counted`, so a count of one never reads "1 differences"."""

from __future__ import annotations

__all__ = ["counted"]


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun`` agreeing in number: ``"1 data set"``, ``"3 data sets"``,
    ``"0 pairs"``.

    Parameters
    ----------
    count
        How many.
    noun
        The noun in the singular.
    plural
        The plural when it is not ``noun + "s"`` (``counted(2, "analysis", "analyses")``).
    """
    return f"{count} {noun if count == 1 else (plural or noun + 's')}"
