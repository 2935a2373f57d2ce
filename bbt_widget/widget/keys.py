"""Keys the widget files things under: the cache key of a group of settings, and the two
algorithms of a highlighted pair's key."""

from __future__ import annotations

import json
from collections.abc import Hashable, Mapping
from typing import Any

import pandas as pd

__all__ = ["hashable", "pair_of", "settings_key"]


def pair_of(key: str) -> tuple[str, ...]:
    """The two algorithms of a pair key (:func:`charts.pair_key`); () when it is not one."""
    try:
        names = json.loads(key)
    except ValueError:
        return ()
    return tuple(str(n) for n in names) if isinstance(names, list) else ()


def settings_key(settings: Mapping[str, Any]) -> Hashable:
    return tuple(sorted((k, hashable(v)) for k, v in settings.items()))


def hashable(value: Any) -> Hashable:
    """A cache-key form of a setting: grids (dicts, lists) by content; frames (sd, fixed per
    widget) and other unhashable objects (a Dask client) by identity, enough inside one cache."""
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), hashable(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(hashable(v) for v in value)
    if isinstance(value, (pd.DataFrame, pd.Series)):
        return ("id", id(value))
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    return value
