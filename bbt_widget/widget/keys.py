"""Keys the widget files things under: the cache keys of a fit's settings and of any group of
settings, and the two algorithms of a highlighted pair's key."""

from __future__ import annotations

import json
from collections.abc import Hashable, Mapping
from typing import Any

import pandas as pd

from ..core.settings import CountingSettings, PriorSettings
from ..fitting import COUNT_SETTINGS, PRIOR_SETTINGS

__all__ = ["fit_keys", "hashable", "pair_of", "settings_key"]


def pair_of(key: str) -> tuple[str, ...]:
    """The two algorithms of a pair key (:func:`charts.pair_key`); () when it is not one."""
    try:
        names = json.loads(key)
    except ValueError:
        return ()
    return tuple(str(n) for n in names) if isinstance(names, list) else ()


def settings_key(settings: Mapping[str, Any]) -> Hashable:
    """A cache key of a group of settings (any keyword arguments), by content."""
    return tuple(sorted((k, hashable(v)) for k, v in settings.items()))


def fit_keys(settings: Mapping[str, Any]) -> tuple[Hashable, Hashable, Hashable]:
    """The cache keys of a fit of ``settings`` (``bbt_widget.fit``'s keyword arguments): of the
    whole fit, of everything but the prior (the wins counted), and of everything but the prior
    and the counting settings (the results read, and the sampler).

    The counting settings and the prior enter as the keys of their checked objects
    (:meth:`CountingSettings.key`, :meth:`PriorSettings.key`), so settings that mean the same
    fit share one key: a tie threshold of 0 or ``None``, ``paired`` without a local ROPE, a
    family's default scale given or left ``None``.

    Raises
    ------
    ValueError, TypeError
        For invalid counting or prior settings, as ``fit`` does.
    """
    counting = CountingSettings(**{k: settings[k] for k in COUNT_SETTINGS})
    prior = PriorSettings(settings["hyperprior"], settings["prior_scale"])
    grouped = COUNT_SETTINGS + PRIOR_SETTINGS
    rest = settings_key({k: v for k, v in settings.items() if k not in grouped})
    counted = (rest, counting.key())
    return (counted, prior.key()), counted, rest


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
    returned: Hashable = value
    return returned
