"""The widget's Vega-Lite specs (the pairwise view, the model checks, the robustness view and
the decisions by group), data by name, built once per machine and kept in the user cache: a
new widget reads a small JSON file and needs no Altair import.

A spec file is read (and written) only where no other user can have written it, by the same
rule as the compiled models (``engines._cache.check_private``): a spec planted by someone else
would put its content into every widget. In a cache that is not private the spec is built
afresh each time, with a warning that says how to make the cache private.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import importlib.metadata
import json
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any

from .frames import FIT_DATASETS, ROBUSTNESS_DATASETS, VIEW_DATASETS
from .frames_groups import GROUP_CELLS
from .specs import checks_chart, pairs_chart
from .specs_groups import groups_chart
from .specs_robustness import robustness_chart

__all__ = ["checks_spec", "groups_spec", "robustness_spec", "view_spec"]


def checks_spec() -> dict[str, Any]:
    """The model-checks view's Vega-Lite spec (PPC, coverage, win matrix), data by name
    (cached like :func:`view_spec`)."""
    return copy.deepcopy(_cached_spec("checks"))


def robustness_spec() -> dict[str, Any]:
    """The robustness view's Vega-Lite spec, data by name (cached like :func:`view_spec`)."""
    return copy.deepcopy(_cached_spec("robustness"))


def groups_spec() -> dict[str, Any]:
    """The group view's Vega-Lite spec (the pairs x groups decision heatmap), data by name
    (cached like :func:`view_spec`)."""
    return copy.deepcopy(_cached_spec("groups"))


def view_spec() -> dict[str, Any]:
    """The widget's pairwise view (P(a > b) intervals and ROPE overlap) as a Vega-Lite spec:
    structure only, data referenced by dataset name (the model checks: :func:`checks_spec`).

    Everything that varies (frames, ROPE, HDI mass, highlight) is data or a parameter, so
    the spec is the same for every result. Building it needs Altair (a slow import, then the
    build itself), so it is built once per machine and kept in the user
    cache, keyed by the chart modules' source and Altair's version; a new widget then reads a
    small JSON file. The ``$schema`` URL is dropped: the front end passes the mode
    explicitly, and the widget sends nothing that looks like a remote address.
    """
    return copy.deepcopy(_cached_spec("view"))


@functools.lru_cache(maxsize=4)
def _cached_spec(name: str) -> dict[str, Any]:
    from ..engines._cache import UnsafeCacheError, check_private, make_private_dirs

    try:
        path = _spec_cache_path(name)  # the root is refused when reached through a foreign link
        check_private(path)
    except UnsafeCacheError as unsafe:
        warnings.warn(f"chart specs are not cached: {unsafe}", RuntimeWarning, stacklevel=4)
        return _build_spec(name)
    try:
        returned: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return returned
    except (OSError, ValueError):
        pass  # not built yet on this machine (or unreadable): build it
    spec = _build_spec(name)
    try:
        make_private_dirs(path.parent)
        # written whole, then renamed: a concurrent reader never sees half a file. mkstemp
        # makes the file 0600 whatever the umask, as the cache's ownership check asks.
        fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".partial", dir=path.parent)
    except OSError:
        return spec  # a read-only cache only costs the build next time
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(spec, fh)
        os.replace(tmp, path)
    except OSError:
        pass  # a full disk only costs the build next time
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)  # gone after the rename; a leftover after a failed write
    return spec


def _build_spec(name: str) -> dict[str, Any]:
    if name == "robustness":
        chart = robustness_chart({n: n for n in ROBUSTNESS_DATASETS})
    elif name == "groups":
        chart = groups_chart(GROUP_CELLS)
    elif name == "checks":
        chart = checks_chart({n: n for n in FIT_DATASETS})
    else:
        chart = pairs_chart({n: n for n in VIEW_DATASETS})
    spec = chart.to_dict(validate=False)
    spec.pop("$schema", None)
    returned: dict[str, Any] = spec
    return returned


def _spec_cache_path(name: str = "view") -> Path:
    from ..engines._cache import cache_root

    # every module that shapes a spec: a change to any of them (or Altair) builds anew
    here = Path(__file__).parent
    source = b"".join(
        f.read_bytes() for f in [*sorted(here.glob("*.py")), here.parent / "core" / "palette.py"]
    )
    version = importlib.metadata.version("altair")
    digest = hashlib.sha256(source + b"\0altair " + version.encode()).hexdigest()[:16]
    return cache_root() / "specs" / f"{name}-{digest}.json"
