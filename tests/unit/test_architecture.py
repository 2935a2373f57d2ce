"""What the import contracts cannot say about the package's shape (see ARCHITECTURE.md).

The layers, the order of the core's modules, the charts' frames below their specs and the
absence of import cycles are import-linter contracts in pyproject.toml, checked by
``lint-imports``. The tests here hold the rest: the layers are folders, chart modules stay
small, the batch-level charts take the palette's colours, and the frames load without Altair.
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
    assert folders == {"core", "engines", "baselines", "lab", "outputs", "widget", "datasets"}


def test_batch_level_charts_take_their_colours_from_the_palette(graph: grimp.ImportGraph):
    # sweep and influence draw the decision colours (the layers keep them out of the outputs)
    for module in ("bbt_widget.lab.sweep", "bbt_widget.lab.influence"):
        assert graph.direct_import_exists(importer=module, imported="bbt_widget.core.palette")


@pytest.mark.parametrize(
    "path", sorted((PACKAGE / "outputs" / "charts").glob("*.py")), ids=lambda p: p.name
)
def test_chart_modules_are_small(path: Path):
    n = len(path.read_text(encoding="utf-8").splitlines())
    assert n < CHART_MODULE_MAX_LINES, f"{path.name} has {n} lines; split it by what it draws"


def test_importing_the_frames_leaves_altair_unloaded():
    code = (
        "import sys\n"
        + "".join(f"import bbt_widget.outputs.charts.{name}\n" for name in FRAME_MODULES)
        + "print('altair' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"]
