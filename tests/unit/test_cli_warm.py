"""What ``bbt-widget report`` gets ready before it needs it: the models it will sample are
compiled first (the progress line names them), the chart
renderer is started ahead of time (same charts), and jsonschema is imported without its slow
IRI checks, which no Vega-Lite schema uses."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bbt_widget import cli, engines


def test_models_missing_from_the_cache_compile_first_and_the_line_names_them(tmp_path, monkeypatch):
    """Two models missing from the cache (what a command that samples two Stan programs
    compiles) are compiled before the first fit, one after the other, and the progress line
    names them (a stand-in for the compiling child records the builds: no compiler needed)."""
    from bbt_widget.engines import _child, _pystan

    if "pystan" not in engines.available_engines():
        pytest.skip("PyStan is not available here")
    monkeypatch.setenv("BBT_WIDGET_CACHE", str(tmp_path / "cache"))
    built: list[str] = []

    def run(script, request, **kwargs):
        assert request["method"] == "build"
        time.sleep(0.3)  # long enough for the progress line
        folder = _pystan._folder() / "httpstan" / "v" / "models" / f"m{len(built)}"
        folder.mkdir(parents=True)
        built.append(request["program"])
        return {}, str(folder)

    monkeypatch.setattr(_child, "run", run)
    stream = io.StringIO()
    models = ("bbt", "davidson")
    cli._compile(models, "pystan", cli._Progress(stream))
    assert built == [engines.stan_program("bbt"), engines.stan_program("davidson")]
    first = stream.getvalue().splitlines()[0]
    assert first.startswith("compiling the Stan models bbt, then davidson"), first
    assert "(first run on this machine, then cached)" in first
    # compiled now: a second report compiles nothing and says nothing about it
    assert engines.models_to_compile(models, "pystan") == []
    quiet = io.StringIO()
    cli._compile(models, "pystan", cli._Progress(quiet))
    assert quiet.getvalue() == "" and len(built) == 2


def test_vega_lite_schemas_use_no_iri_format():
    """The report imports jsonschema without its "iri" / "iri-reference" format checks
    (``cli._import_jsonschema``): Altair's validation is the same only while the Vega-Lite
    schema it validates against uses neither format."""
    import altair

    schemas = Path(altair.__file__).parent.glob("vegalite/v*/schema/vega-lite-schema.json")
    formats = set()
    for path in schemas:
        formats |= set(re.findall(r'"format":\s*"([^"]+)"', path.read_text(encoding="utf-8")))
    assert formats, "no Vega-Lite schema found"
    assert not formats & {"iri", "iri-reference"}


@pytest.mark.slow
def test_jsonschema_imported_without_rfc3987_syntax_which_stays_importable():
    code = (
        "import sys\n"
        "from bbt_widget import cli\n"
        "cli._import_jsonschema()\n"
        "print('jsonschema' in sys.modules, 'rfc3987_syntax' in sys.modules)\n"
        "try:\n"
        "    import rfc3987_syntax\n"
        "    print('importable')\n"
        "except ImportError as err:\n"
        "    print('not installed' if 'No module named' in str(err) else repr(err))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    )
    first, second = out.stdout.splitlines()[:2]
    assert first == "True False", out.stdout + out.stderr
    assert second in ("importable", "not installed"), out.stdout + out.stderr


def test_renderer_started_ahead_draws_the_same_charts():
    """A renderer started ahead of time (``prestart_renderer``) serves the next rendering
    once, with the same bytes as a renderer started for it."""
    from bbt_widget.outputs import export

    spec = {
        "mark": "bar",
        "data": {"values": [{"a": "x", "b": 1}, {"a": "y", "b": 3}]},
        "encoding": {"x": {"field": "a", "type": "nominal"}, "y": {"field": "b"}},
    }
    fresh = export.render_charts([spec], ["svg"])
    export.prestart_renderer()
    ahead = export._prestarted
    assert ahead is not None
    assert export.render_charts([spec], ["svg"]) == fresh
    assert export._prestarted is None and ahead.returncode == 0  # used once, then ended


def test_report_checks_before_the_fit_import_neither_altair_nor_scipy_stats():
    """The output path and the other methods are checked before the fit with the data alone:
    Altair (with jsonschema) and SciPy's statistics are left to the thread that imports them
    while the command fits (``cli_commands.report.get_ready``), which keeps jsonschema's slow
    IRI checks out too (``cli_commands.report.import_jsonschema``)."""
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "import bbt_widget as bbt\n"
        "from bbt_widget.cli_commands.checks import check_output\n"
        "from bbt_widget.outputs.methods_text import REPORT_FORMATS\n"
        "from bbt_widget.outputs.report._methods import check_methods\n"
        "for name in ('r.html', 'r.md'):\n"
        "    check_output(Path(name), name, REPORT_FORMATS)\n"
        "methods = check_methods(bbt.datasets.load_pmlb16(), {'dataset': 'db'}, path='r.html')\n"
        "slow = ('altair', 'jsonschema', 'scipy.stats', 'bbt_widget.baselines')\n"
        "print(methods, [name for name in slow if name in sys.modules])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    )
    assert out.stdout.strip() == "['plackett-luce'] []", out.stdout + out.stderr


@pytest.mark.slow
def test_the_default_reports_imports_leave_out_scipy_stats_and_ipython():
    """What the command imports while it fits, for the default report (BBT and
    Plackett-Luce): the report writer, its sections and the Plackett-Luce module, without
    SciPy's statistics (only the classical tests need them) and without Altair's Jupyter
    widget (anywidget, ipywidgets, IPython); anywidget stays importable afterwards, and the
    baselines' names are all still there when asked for."""
    code = (
        "import sys\n"
        "from bbt_widget.cli_commands.report import METHOD_MODULES, import_all\n"
        "import_all(['bbt_widget.outputs.report._render', 'bbt_widget.outputs.report._sections']\n"
        "           + [f'bbt_widget.baselines.{m}' for m in METHOD_MODULES['plackett-luce']])\n"
        "slow = ('scipy.stats', 'anywidget', 'ipywidgets', 'IPython')\n"
        "print('altair' in sys.modules, [name for name in slow if name in sys.modules])\n"
        "import anywidget, altair\n"
        "import bbt_widget.baselines as b\n"
        "print(all(callable(getattr(b, name)) for name in b.__all__))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    )
    assert out.stdout.splitlines() == ["True []", "True"], out.stdout + out.stderr


def test_the_report_warms_up_its_plackett_luce_fit_for_250_iterations_unless_told():
    from bbt_widget.outputs.report._optional import RANKING_WARMUP, ranking_sampler

    fit = {"engine": "pystan", "chains": 4, "iter_warmup": 1000, "iter_sampling": 1000, "seed": 1}
    assert RANKING_WARMUP == 250
    assert ranking_sampler(fit) == fit | {"iter_warmup": 250}
    assert ranking_sampler(fit | {"iter_warmup": 600}) == fit | {"iter_warmup": 600}
    assert ranking_sampler(fit | {"ties": "add"}) == fit | {"iter_warmup": 250}


def test_one_renderer_draws_several_batches_as_one_shot_renderers_do(monkeypatch):
    """``ChartBatches``: the batches rendered one after the other by one renderer process
    (the report's own charts, then its sections') are the bytes ``render_charts`` gives;
    a renderer that dies makes that batch and every later one a ChartRenderError that
    says why."""
    from bbt_widget.outputs import export

    spec = {
        "mark": "bar",
        "data": {"values": [{"a": "x", "b": 1}, {"a": "y", "b": 3}]},
        "encoding": {"x": {"field": "a", "type": "nominal"}, "y": {"field": "b"}},
    }
    other = {**spec, "mark": "point"}
    batches = export.ChartBatches()
    first = batches.render([spec], ["svg"])
    second = batches.render([other, spec], ["svg", "svg"])
    batches.close()
    assert first == export.render_charts([spec], ["svg"])
    assert second == export.render_charts([other, spec], ["svg", "svg"])
    with pytest.raises(export.ChartRenderError, match="closed"):
        batches.render([spec], ["svg"])

    def dying() -> subprocess.Popen:
        code = "import sys; sys.stdin.readline(); sys.exit('vl-convert: no V8 today')"
        return subprocess.Popen(
            [sys.executable, "-c", code],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    monkeypatch.setattr(export, "_take_renderer", dying)
    broken = export.ChartBatches()
    for _ in range(2):
        with pytest.raises(export.ChartRenderError, match="no V8 today"):
            broken.render([spec], ["svg"])


@pytest.mark.parametrize(
    "extra, output, expected",
    [
        ([], "r.html", ("bbt",)),
        ([], "r.md", ("bbt",)),
        (["--with", "hierarchical,plackett-luce", "--rho", "0.25"], "r.tex", ("bbt",)),
        (["--ties", "davidson"], "r.HTML", ("davidson",)),
        (["--group", "family"], "r.html", ("bbt_groups",)),
    ],
)
def test_the_report_compiles_and_starts_only_the_model_of_its_fit(extra, output, expected):
    """The command compiles and starts the worker of one Stan model, its fit's: the other
    methods (Plackett-Luce, the hierarchical t-test, Mallows) sample in numpy, so the
    default HTML report (with Plackett-Luce) compiles nothing else on a new machine."""
    from bbt_widget.cli_commands.report import stan_models

    args = cli._parser().parse_args(["report", "r.csv", "-o", output, *extra])
    models = stan_models(args)
    assert models == expected
