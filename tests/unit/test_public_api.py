"""The package's public surface: lazy submodules, a clean dir(), the installed version."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys

import pytest

import bbt_widget


def _fresh(code: str) -> dict:
    """Run ``code`` in a new interpreter (nothing imported yet) and return what it prints."""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return json.loads(out.stdout)


#: attribute -> the module it loads (the outputs live in their layer's folder)
LAZY = {
    "export": "bbt_widget.outputs.export",
    "charts": "bbt_widget.outputs.charts",
    "baselines": "bbt_widget.baselines",
    "report": "bbt_widget.outputs.report_api",
}


def test_submodules_are_reachable_as_attributes_and_load_lazily():
    got = _fresh(
        "import json, sys\n"
        "import bbt_widget as bbt\n"
        f"before = {{m: mod in sys.modules for m, mod in {LAZY!r}.items()}}\n"
        f"mods = {{m: getattr(bbt, m).__name__ for m in {LAZY!r}}}\n"
        "print(json.dumps({'before': before, 'mods': mods}))\n"
    )
    assert got["mods"] == LAZY
    assert got["before"] == dict.fromkeys(LAZY, False)  # a plain fit never loads them


def test_dir_shows_only_the_public_names():
    got = _fresh("import json, bbt_widget as bbt; bbt.export; print(json.dumps(dir(bbt)))")
    assert got == sorted(bbt_widget.__all__)
    for internal in ("engines", "wintable", "fitting", "validation", "importlib", "annotations"):
        assert internal not in got
    for name in bbt_widget.__all__:  # and every one of them resolves
        assert getattr(bbt_widget, name) is not None, name


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        bbt_widget.nope  # noqa: B018


def test_version_comes_from_the_package_metadata(monkeypatch):
    assert bbt_widget.__version__ == importlib.metadata.version("bbt-widget")

    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    assert bbt_widget._version() == "0+unknown"  # a source tree that was never installed
