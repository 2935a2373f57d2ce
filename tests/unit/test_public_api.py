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
    "charts": "bbt_widget.charts",
    "baselines": "bbt_widget.baselines",
    "ranking": "bbt_widget.ranking",
    "report": "bbt_widget.outputs.report",
}


@pytest.mark.slow
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


def _public_modules() -> list:
    """The modules reachable as ``bbt.<name>``, and their public submodules."""
    import importlib
    import pkgutil
    import types

    out = []
    for name in bbt_widget.__all__:
        module = getattr(bbt_widget, name)
        if not isinstance(module, types.ModuleType):
            continue
        out.append(module)
        for sub in pkgutil.iter_modules(getattr(module, "__path__", [])):
            if not sub.name.startswith("_"):
                out.append(importlib.import_module(f"{module.__name__}.{sub.name}"))
    return out


def test_every_public_module_says_what_it_exports():
    import types

    modules = _public_modules()
    assert {"bbt_widget.outputs.export", "bbt_widget.core.options", "bbt_widget.datasets"} <= {
        m.__name__ for m in modules
    }
    for module in modules:
        names = getattr(module, "__all__", None)
        assert names is not None, f"{module.__name__} has no __all__"
        for name in names:
            value = getattr(module, name)  # every name resolves (AttributeError otherwise)
            # imported helpers (numpy, os, subprocess) are not the module's exports
            if isinstance(value, types.ModuleType):
                assert value.__name__.startswith(module.__name__), (module.__name__, name)


def test_export_star_import_brings_no_helper_modules():
    got = _fresh(
        "import json\n"
        "from bbt_widget.outputs.export import *\n"
        "print(json.dumps(sorted(k for k in dir() if not k.startswith('_'))))\n"
    )
    assert "save_table" in got and "to_latex" in got
    assert not {"np", "os", "subprocess", "pd", "charts"} & set(got)


def test_charts_exports_a_short_list_of_documented_chart_functions():
    """``bbt.charts`` is the charts a user draws, each on its API page; the widget's specs,
    frames, JSON helpers and Vega constants are the package's own."""
    import inspect
    from pathlib import Path

    names = bbt_widget.charts.__all__
    assert len(names) <= 25, names
    page = (Path(__file__).resolve().parents[2] / "docs" / "api" / "charts.md").read_text()
    for name in names:
        value = getattr(bbt_widget.charts, name)
        assert inspect.isfunction(value), name
        assert (value.__doc__ or "").strip(), f"{name} has no docstring"
        assert f"::: bbt_widget.charts.{name}\n" in page, f"{name} is not on the page"
    for internal in ("view_spec", "checks_spec", "to_records", "to_columns", "FOCUS_PARAM"):
        assert internal not in names, internal


def test_each_critical_difference_diagram_is_named_for_what_it_takes(base):
    """One name per contract: the scores (the test runs inside) or a fit (its claims)."""
    from bbt_widget import baselines

    assert "scores_cd_diagram" in baselines.__all__ and "cd_diagram" not in baselines.__all__
    assert "fit_cd_diagram" in bbt_widget.charts.__all__
    assert "cd_diagram" not in bbt_widget.charts.__all__
    scores = baselines.scores_cd_diagram(base, dataset="db").to_dict()
    assert "Nemenyi" in json.dumps(scores["title"])
