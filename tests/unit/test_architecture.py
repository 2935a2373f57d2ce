"""The package's import graph has no cycles and respects its layers (see ARCHITECTURE.md).

Every import counts, including those inside functions and ``TYPE_CHECKING`` blocks: a deferred
import that closes a cycle still ties two layers together (e.g. the core importing a report).
The walk is done here, on the source, so the test needs nothing outside the repository.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import bbt_widget

PACKAGE = Path(bbt_widget.__file__).parent

#: Layer of each module or folder (ARCHITECTURE.md), by its path under ``bbt_widget``; the
#: longest matching prefix decides. A module may import its own layer and lower ones. The
#: folders are the layers: ``core/`` (ranks 0-4 inside, in this order), ``engines/`` beside the
#: core's parsing and checks, then the chart package ``outputs/charts/`` (it imports only the
#: core, so the lab's and the baselines' results draw through it), ``baselines/`` and ``lab/``,
#: the rest of ``outputs/``, and the front ends (``widget/``, ``cli`` with its subcommands in
#: ``cli_commands/``).
LAYERS = {
    "core.options": 0,
    "core.palette": 0,
    "core.bidi": 0,
    "core.validation": 1,
    "core.data": 1,
    "core.names": 1,
    "core.csvfile": 1,
    "engines": 1,
    "core.wintable": 2,
    "core.sizing": 2,
    "core.posterior": 2,
    "core.checks": 2,
    "core.convergence": 2,
    "core.audit": 2,
    "core.result": 3,
    "core.fitting": 4,
    "core": 0,  # the folder's __init__
    "outputs.charts": 5,
    "baselines": 6,
    "lab": 6,
    "outputs": 7,
    "cli": 8,
    "cli_commands": 8,
    "widget": 8,
}

#: Longest module of the chart package (issue 10: frames and specs each under 450 lines).
CHART_MODULE_MAX_LINES = 450
#: Longest front-end modules: the command line is its argument parser, option checks and exit
#: codes (the subcommands are in ``cli_commands/``); the widget composes its sections.
FRONT_END_MAX_LINES = {"cli.py": 400, "widget/app.py": 600}
#: The chart package's tidy-frame modules: pure pandas and numpy, never Altair.
FRAME_MODULES = ("pairs", "frames", "frames_ppc", "frames_decisions")


def _modules() -> dict[str, tuple[Path, bool]]:
    out = {}
    for f in PACKAGE.rglob("*.py"):
        parts = f.relative_to(PACKAGE.parent).with_suffix("").parts
        is_pkg = f.name == "__init__.py"
        out[".".join(parts[:-1] if is_pkg else parts)] = (f, is_pkg)
    return out


def _imports(path: Path, name: str, is_pkg: bool) -> set[str]:
    """Every module ``path`` imports, wherever the import statement is."""
    deps: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level:
                parts = name.split(".")
                base = parts[: len(parts) - node.level + (1 if is_pkg else 0)]
                mod = ".".join(base + ([node.module] if node.module else []))
            deps.add(mod)
            deps.update(f"{mod}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            deps.update(a.name for a in node.names)
    return deps


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    return {
        m: {d for d in _imports(f, m, p) if d in mods and d != m and not m.startswith(d + ".")}
        for m, (f, p) in mods.items()
    }


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    cycles: list[list[str]] = []
    seen: set[str] = set()
    stack: list[str] = []

    def visit(u: str) -> None:
        seen.add(u)
        stack.append(u)
        for v in sorted(graph[u]):
            if v in stack:
                cycles.append([*stack[stack.index(v) :], v])
            elif v not in seen:
                visit(v)
        stack.pop()

    for m in sorted(graph):
        if m not in seen:
            visit(m)
    return cycles


def test_the_walk_sees_deferred_imports():
    # result.py imports .wintable inside a method: the graph must hold that edge
    assert "bbt_widget.core.wintable" in _graph()["bbt_widget.core.result"]


def test_every_module_has_a_layer():
    # a new module or folder must be placed in ARCHITECTURE.md's layers, not slip through
    public = {"bbt_widget", "bbt_widget.__main__"}
    unplaced = sorted(
        m
        for m in _modules()
        if m not in public and not m.startswith("bbt_widget.datasets") and _layer(m) is None
    )
    assert not unplaced, f"modules outside every layer: {unplaced}"


def test_the_layers_show_in_the_folders():
    # the core, the lab, the outputs and the widget are folders; at the top only the public
    # surface: the package, `python -m bbt_widget` and the command line
    loose = sorted(p.stem for p in PACKAGE.glob("*.py"))
    assert loose == ["__init__", "__main__", "cli"], loose
    folders = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert folders == {
        "core",
        "engines",
        "baselines",
        "lab",
        "outputs",
        "widget",
        "cli_commands",
        "datasets",
    }


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]


def test_no_import_cycles_among_bbt_widget_modules():
    cycles = _cycles(_graph())
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def _layer(module: str) -> int | None:
    parts = module.split(".")[1:]
    for n in range(len(parts), 0, -1):
        if (key := ".".join(parts[:n])) in LAYERS:
            return LAYERS[key]
    return None


@pytest.mark.parametrize("module", sorted(_modules()))
def test_modules_import_only_their_layer_and_below(module):
    layer = _layer(module)
    if layer is None:  # the package itself, __main__, datasets: the public surface
        return
    upward = sorted(d for d in _graph()[module] if (dl := _layer(d)) is not None and dl > layer)
    assert not upward, f"{module} (layer {layer}) imports higher layers: {upward}"


def test_batch_level_charts_have_one_home_in_the_chart_package():
    # the sweep's and the influence analysis's chart() draw through the chart package, beside
    # the widget's robustness view, instead of copying its Altair code
    for module in ("bbt_widget.lab.sweep", "bbt_widget.lab.influence"):
        assert "bbt_widget.outputs.charts.specs_robustness" in _graph()[module]
        assert "bbt_widget.core.palette" not in _graph()[module]


def test_the_chart_package_imports_only_the_core():
    # what lets the lab's and the baselines' results draw through it without a cycle
    charts = [m for m in _graph() if m.startswith("bbt_widget.outputs.charts")]
    above = {
        d
        for m in charts
        for d in _graph()[m]
        if not d.startswith(("bbt_widget.core", "bbt_widget.engines", "bbt_widget.outputs.charts"))
    }
    assert not above, f"the chart package imports {sorted(above)}"


@pytest.mark.parametrize(
    "path", sorted((PACKAGE / "outputs" / "charts").glob("*.py")), ids=lambda p: p.name
)
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


def _reachable(module: str) -> set[str]:
    graph, seen, todo = _graph(), set(), [module]
    while todo:
        for dep in graph[todo.pop()] - seen:
            seen.add(dep)
            todo.append(dep)
    return seen


@pytest.mark.parametrize("name", FRAME_MODULES)
def test_frame_modules_import_no_altair_nor_specs(name: str):
    module = f"bbt_widget.outputs.charts.{name}"
    reached = {module, *_reachable(module)}
    mods = _modules()
    imported = set().union(*(_imports(mods[m][0], m, mods[m][1]) for m in reached))
    assert not {d for d in imported if d == "altair" or d.startswith("altair.")}
    assert not {m for m in reached if m.split(".")[-1].startswith(("specs", "spec_", "encodings"))}


def test_importing_the_frames_leaves_altair_unloaded():
    code = (
        "import sys\n"
        + "".join(f"import bbt_widget.outputs.charts.{name}\n" for name in FRAME_MODULES)
        + "print('altair' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"]
