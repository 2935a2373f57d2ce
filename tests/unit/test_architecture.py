"""What the import contracts cannot say about the package's shape (see ARCHITECTURE.md).

The layers, the order of the core's modules, the charts' frames below their specs and the
absence of import cycles are import-linter contracts in pyproject.toml, checked by
``lint-imports``. The tests here hold the rest: the layers are folders, chart modules stay
small (and the two front ends' main modules), the widget composes its sections, the chart
package imports only the core (so the lab's and the baselines' results draw through it), and
the frames load without Altair.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp
import pytest

import bbt_widget

PACKAGE = Path(bbt_widget.__file__).parent

#: Longest module of the chart package: frames and specs each stay under 450 lines.
CHART_MODULE_MAX_LINES = 450
#: Longest front-end modules: the command line is its argument parser, option checks and exit
#: codes (the subcommands are in ``cli_commands/``); the widget composes its sections.
FRONT_END_MAX_LINES = {"cli.py": 400, "widget/app.py": 600}
#: The chart package's tidy-frame modules: pure pandas and numpy, never Altair.
FRAME_MODULES = ("pairs", "frames", "frames_ppc", "frames_decisions")


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    """The package's import graph, counting imports deferred into functions."""
    return grimp.build_graph("bbt_widget", cache_dir=None)


def test_the_layers_show_in_the_folders():
    # the core, the lab, the outputs and the widget are folders; at the top only the public
    # surface: the package, `python -m bbt_widget` and the command line
    loose = sorted(p.stem for p in PACKAGE.glob("*.py"))
    assert loose == ["__init__", "__main__", "cli"], loose
    folders = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert folders == {
        "core",
        "engines",
        "fitting",
        "charts",
        "ranking",
        "baselines",
        "lab",
        "outputs",
        "widget",
        "cli_commands",
        "datasets",
    }


def test_batch_level_charts_have_one_home_in_the_chart_package(graph: grimp.ImportGraph):
    # the sweep's and the influence analysis's chart() draw through the chart package, beside
    # the widget's robustness view, instead of copying its Altair code
    for module in ("bbt_widget.lab.sweep_result", "bbt_widget.lab.influence"):
        assert graph.direct_import_exists(
            importer=module, imported="bbt_widget.charts.specs_robustness"
        )
        assert not graph.direct_import_exists(importer=module, imported="bbt_widget.core.palette")


def test_the_chart_package_imports_only_the_core(graph: grimp.ImportGraph):
    # what lets the lab's, the baselines' and the outputs' results draw through it: the layer
    # contract puts it below them, beside the fitting; of the engines it uses only the
    # private cache folder and its ownership checks (the spec cache lives beside the models)
    charts = graph.find_descendants("bbt_widget.charts") | {"bbt_widget.charts"}
    allowed = ("bbt_widget.core", "bbt_widget.charts", "bbt_widget.engines._cache")
    above = {
        imported
        for module in charts
        for imported in graph.find_modules_directly_imported_by(module)
        if imported.startswith("bbt_widget.") and not imported.startswith(allowed)
    }
    assert not above, f"the chart package imports {sorted(above)}"


@pytest.mark.parametrize("path", sorted((PACKAGE / "charts").glob("*.py")), ids=lambda p: p.name)
def test_chart_modules_are_small(path: Path):
    n = len(path.read_text(encoding="utf-8").splitlines())
    assert n < CHART_MODULE_MAX_LINES, f"{path.name} has {n} lines; split it by what it draws"


@pytest.mark.parametrize("path", sorted(FRONT_END_MAX_LINES))
def test_front_end_modules_are_small(path: str):
    n = len((PACKAGE / path).read_text(encoding="utf-8").splitlines())
    limit = FRONT_END_MAX_LINES[path]
    assert n <= limit, f"{path} has {n} lines (at most {limit}); move code to its section module"


def test_the_widget_composes_its_sections_rather_than_inheriting_them():
    # each section (controls, fits, decisions, robustness, rankings) is an object the widget
    # keeps, not a mixin that works only inside it
    import anywidget

    from bbt_widget.widget.app import BBTWidget

    assert BBTWidget.__bases__ == (anywidget.AnyWidget,)


def test_importing_the_frames_leaves_altair_unloaded():
    code = (
        "import sys\n"
        + "".join(f"import bbt_widget.charts.{name}\n" for name in FRAME_MODULES)
        + "print('altair' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"]


def test_the_import_contracts_have_no_exceptions():
    # an ignore_imports entry is a layer that the folders do not show: every import, deferred
    # or not, follows the layers instead
    import tomllib

    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    assert contracts, "no import contracts found"
    excepted = {c["name"]: c["ignore_imports"] for c in contracts if c.get("ignore_imports")}
    assert not excepted, excepted


def test_the_core_imports_no_engine_and_no_fitting(graph: grimp.ImportGraph):
    # the engines and the fitting sit above the core: the core's result receives what it
    # needs from them (the conditional laws) as a function, never by importing them
    core = graph.find_descendants("bbt_widget.core") | {"bbt_widget.core"}
    above = {
        imported
        for module in core
        for imported in graph.find_modules_directly_imported_by(module)
        if imported.startswith(("bbt_widget.engines", "bbt_widget.fitting"))
    }
    assert not above, f"the core imports {sorted(above)}"


def test_mypy_checks_the_whole_package_as_strict_checks_it():
    # strict on the whole package, with no per-module override that turns a strict flag off
    # (the libraries without type information may still be found missing)
    import tomllib

    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))
    mypy = config["tool"]["mypy"]
    assert mypy.get("strict") is True
    assert mypy.get("files") == ["bbt_widget"]
    loosened = [
        (o["module"], flag)
        for o in mypy.get("overrides", [])
        for flag, value in o.items()
        if (flag not in ("module", "ignore_missing_imports") and value is False)
        or flag.startswith("allow_")
    ]
    assert not loosened, loosened


def test_the_architecture_names_every_module():
    # the map is read before the code: a module it does not name is one a newcomer cannot find
    text = (PACKAGE.parent / "ARCHITECTURE.md").read_text(encoding="utf-8")
    unnamed = [
        p.relative_to(PACKAGE).as_posix()
        for p in sorted(PACKAGE.rglob("*.py"))
        if f"`{p.relative_to(PACKAGE).as_posix()}`" not in text
    ]
    assert not unnamed, f"ARCHITECTURE.md's module index misses {unnamed}"
