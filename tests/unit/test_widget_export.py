"""The widget's exports of the view it shows (``bbt_widget/widget/export.py``): every chart in
``w.charts``, the methods paragraph and the report at the widget's settings, the ``bbt.fit``
code that reproduces the view and the summary as CSV. Real fits on the numpy engine (about a
second each)."""

from __future__ import annotations

import csv
import io
import re
import sys
from pathlib import Path

import altair as alt
import pandas as pd
import pytest

import bbt_widget as bbt
from bbt_widget.outputs.export import FORMULA_PREFIXES
from bbt_widget.widget.app import BBTWidget
from bbt_widget.widget.checks import SettingRefused

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "security"))
from hostile import HOSTILE, hostile_results

FIT_TIMEOUT = 300


#: Sampler settings for the tests of what the exports do with names, not with the numbers:
#: the default chains on the clearly ordered hostile results take far longer to mix.
SHORT_CHAINS = {"chains": 2, "iter_warmup": 200, "iter_sampling": 200}


def _opened(data: pd.DataFrame, **kwargs) -> BBTWidget:
    w = BBTWidget(data, engine="numpy", stan_check=False, **kwargs)
    assert w.wait(FIT_TIMEOUT), (w.status_text, w.error)
    return w


@pytest.fixture
def widget(base: pd.DataFrame):
    """A widget on the paper's base results, first fit shown, closed after the test."""
    w = _opened(base, dataset="db", seed=7)
    yield w
    w.close()


def _strong_at_rope_40(w: BBTWidget) -> None:
    """What the issue did: the strong rule and ROPE [0.40, 0.55]."""
    w.interpretation, w.rope_low = "strong", 0.40


@pytest.mark.slow
def test_charts_hold_every_view_at_the_current_settings(widget: BBTWidget) -> None:
    w = widget
    _strong_at_rope_40(w)
    w.hdi = 0.8
    shown = w.charts
    assert set(shown) == {
        "ranking",
        "cd_diagram",
        "decisions",
        "intervals",
        "rope_overlap",
        "ppc",
        "coverage",
        "win_matrix",
        "linked",
    }
    specs = {name: chart.to_dict(validate=True) for name, chart in shown.items()}
    assert all(isinstance(c, alt.TopLevelMixin) for c in shown.values())
    # built from the current result and settings: the rule, the HDI and the decisions
    assert "(strong interpretation)" in str(specs["cd_diagram"])
    assert "80% HDI" in str(specs["ranking"])
    summary = w.result.summary(rope=(0.40, 0.55), hdi=0.8)
    expected = bbt.charts.decision_frame(summary, list(w.result.ranking(hdi=0.8)["algorithm"]))
    (rows,) = [d for d in specs["decisions"]["datasets"].values() if len(d) == len(expected)]
    assert [r["decision"] for r in rows] == list(expected["decision"])


@pytest.mark.slow
def test_charts_of_a_grouped_widget_hold_the_group_heatmap() -> None:
    from test_widget_groups import results

    w = _opened(results(), dataset="db", fold="fold", group="family", seed=3)
    try:
        w.selected_group = "B"
        shown = w.charts
        heatmap = shown["groups"].to_dict(validate=True)
        # the chosen group's column is the one outlined (0 is the pooled one)
        assert {"name": "sel_group", "value": 2} in heatmap["params"]
        # the ranking is the chosen group's, as in the widget
        ranking = w.result.in_group("B").ranking(hdi=w.hdi)
        shown_ranking = [
            d for d in shown["ranking"].to_dict()["datasets"].values() if "p_best" in d[0]
        ]
        assert [r["algorithm"] for r in shown_ranking[0]] == list(ranking["algorithm"])
    finally:
        w.close()


@pytest.mark.slow
def test_methods_text_follows_the_widgets_rule_rope_and_hdi(widget: BBTWidget) -> None:
    w = widget
    _strong_at_rope_40(w)
    text = w.methods_text()
    assert "strong rule" in text and "ROPE \\[0.4, 0.55\\]" in text and "weak rule" not in text
    for format in ("md", "tex", "html"):
        same = bbt.report.methods_text(
            w.result, format=format, interpretation="strong", rope=(0.40, 0.55), hdi=w.hdi
        )
        assert w.methods_text(format) == same
        assert bbt.report.methods_text(w.result, format=format, **w.view_settings) == same
    # the result alone does not carry the view's settings: the defaults, the weak rule
    assert "weak rule" in bbt.report.methods_text(w.result)
    # the fit's own settings come with the result
    w.ties, w.local_rope, w.d_min = "add", True, 0.3
    assert w.wait(FIT_TIMEOUT)
    text = w.methods_text()
    assert "add policy" in text and "d\\_min = 0.3" in text and "strong rule" in text


@pytest.mark.slow
def test_report_is_the_report_write_gives_with_the_widgets_settings(
    widget: BBTWidget, base: pd.DataFrame, tmp_path: Path
) -> None:
    w = widget
    _strong_at_rope_40(w)
    for folder in ("widget", "direct"):
        (tmp_path / folder).mkdir()
    ours = w.report(tmp_path / "widget" / "r.md")
    # bbt.report.write fitting the widget's data with its fit settings, at its view settings
    direct = bbt.report.write(
        base,
        tmp_path / "direct" / "r.md",
        **w.fit_settings,
        interpretation="strong",
        rope=(0.40, 0.55),
    )
    text = ours.read_text(encoding="utf-8")
    assert _untimed(text) == _untimed(direct.read_text(encoding="utf-8"))
    assert "strong rule" in text
    with pytest.raises(TypeError, match="rope: the report takes these from the widget"):
        w.report(tmp_path / "x.md", rope=(0.4, 0.6))


def _untimed(report: str) -> str:
    """A report without the minute it was written at (the two may be a minute apart)."""
    return re.sub(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC", "<when>", report)


def _reproduced(w: BBTWidget, data: pd.DataFrame, **names: pd.DataFrame) -> pd.DataFrame:
    code = w.code()
    compile(code, "<w.code()>", "exec")  # valid Python
    namespace: dict = {"df": data, **names}
    exec(code, namespace)
    return namespace["summary"]


@pytest.mark.slow
def test_code_reproduces_the_view_with_every_non_default_setting(
    widget: BBTWidget, base: pd.DataFrame
) -> None:
    w = widget
    first = w.code().splitlines()[2]
    assert first.startswith("result = bbt.fit(df, dataset='db', engine='numpy', seed=7")
    with w.hold_trait_notifications():
        w.ties, w.tie_threshold, w.local_rope, w.d_min = "add", 0.001, True, 0.3
        w.paired, w.hyperprior = False, "cauchy"
        w.rope_low, w.hdi, w.control = 0.42, 0.8, "lgbm"
    w.prior_scale = 2.0  # after the family, which sets its own default scale first
    assert w.wait(FIT_TIMEOUT), (w.status_text, w.error)
    code = w.code()
    for setting in (
        "ties='add'",
        "tie_threshold=0.001",
        "d_min=0.3",
        "paired=False",
        "hyperprior='cauchy'",
        "prior_scale=2.0",
        "seed=7",
    ):
        assert setting in code
    assert "rope=(0.42, 0.55), hdi=0.8, control='lgbm'" in code
    pd.testing.assert_frame_equal(_reproduced(w, base), w.summary)
    # the family's default scale is fit's own default: left out
    w.hyperprior, w.prior_scale = "lognormal", 0.5
    assert w.wait(FIT_TIMEOUT)
    assert "prior_scale" not in w.code() and "hyperprior" not in w.code()
    pd.testing.assert_frame_equal(_reproduced(w, base), w.summary)
    with pytest.raises(ValueError, match="data must be a Python variable name"):
        w.code(data="import os")


@pytest.mark.slow
def test_code_reproduces_a_grouped_widgets_chosen_group() -> None:
    from test_widget_groups import results

    data = results()
    w = _opened(data, dataset="db", fold="fold", group="family", seed=3)
    try:
        w.selected_group = "A"
        assert "result.in_group('A').summary()" in w.code()
        pd.testing.assert_frame_equal(_reproduced(w, data), w.summary)
    finally:
        w.close()


@pytest.mark.slow
def test_code_reproduces_the_metric_shown_with_its_own_seed(base: pd.DataFrame) -> None:
    long = base.melt(id_vars="db", var_name="alg", value_name="acc")
    long["fold"] = long.groupby(["db", "alg"]).cumcount()
    long["time"] = 1.0 - long["acc"] + 0.01 * long["fold"]
    w = _opened(
        long,
        dataset="db",
        algorithm="alg",
        fold="fold",
        score=["acc", "time"],
        lower_is_better=["time"],
    )
    try:
        w.metric = "time"
        assert w.wait(FIT_TIMEOUT), (w.status_text, w.error)
        code = w.code()
        assert "score='time'" in code and "lower_is_better=True" in code and "seed=" in code
        pd.testing.assert_frame_equal(_reproduced(w, long), w.summary)
    finally:
        w.close()


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:BBT fit diagnostics")
def test_code_keeps_hostile_names_as_data() -> None:
    data = hostile_results()
    w = _opened(data, dataset="db", control="x\ny", seed=2, **SHORT_CHAINS)
    try:
        assert "control='x\\ny'" in w.code()
        pd.testing.assert_frame_equal(_reproduced(w, data), w.summary)
    finally:
        w.close()


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:BBT fit diagnostics")
def test_summary_csv_neutralises_formulas_in_hostile_names(tmp_path: Path) -> None:
    w = _opened(hostile_results(), dataset="db", seed=2, **SHORT_CHAINS)
    try:
        text = w.summary_csv()
        rows = list(csv.reader(io.StringIO(text, newline="")))
        header, body = rows[0], rows[1:]
        assert header == list(w.summary.columns) and len(body) == len(w.summary)
        names = {0: "pair", 1: "alg_a", 2: "alg_b"}
        for row in body:
            for k in names:
                assert not row[k].startswith(FORMULA_PREFIXES), row[k]
        # every name is there, formula ones behind a quote; a line break stays in its cell
        written = {cell for row in body for cell in row[1:3]}
        for name in HOSTILE:
            assert name in written or "'" + name in written
        assert "'=cmd|' /C calc'!A0" in written and "'-2" in written
        # the numbers stay numbers
        assert float(body[0][3]) == pytest.approx(w.summary["mean"].iloc[0])
        path = w.summary_csv(tmp_path / "summary.csv")
        assert path.read_bytes() == text.encode("utf-8")
        with pytest.raises(ValueError, match=r"give a path ending in \.csv"):
            w.summary_csv(tmp_path / "summary.xlsx")
    finally:
        w.close()


def test_exports_say_what_to_do_before_a_fit_and_with_an_invalid_control(
    base: pd.DataFrame,
) -> None:
    w = BBTWidget(base, dataset="db", engine="numpy", stan_check=False, autostart=False)
    try:
        assert w.charts == {}
        for export in (w.methods_text, w.summary_csv, lambda: w.report("r.html")):
            with pytest.raises(RuntimeError, match=r"[Cc]all w\.wait\(\)"):
                export()
        assert "bbt.fit(df, dataset='db', engine='numpy'" in w.code()  # no fit needed
        w.refit()
        assert w.wait(FIT_TIMEOUT)
        with pytest.raises(SettingRefused, match="unknown tie policy"):
            w.ties = "sometimes"  # refused where it enters: no fit starts
        # a value that got past the checks (written under the trait's validator): every export
        # refuses it, naming the setting, the code export too
        w._trait_values["ties"] = "sometimes"
        exports = (w.methods_text, w.summary_csv, lambda: w.charts, w.code)
        for export in exports:
            with pytest.raises(ValueError, match=r"cannot be exported as they are: ties: .*tie p"):
                export()
        w._trait_values["ties"] = "spread"
        assert "spread policy" in w.methods_text()
    finally:
        w.close()


@pytest.mark.slow
def test_charts_hold_the_robustness_and_ranking_model_views_once_shown(
    widget: BBTWidget,
) -> None:
    w = widget
    assert "robustness" not in w.charts and "ranking_model" not in w.charts
    w.sweep_options = {
        "grid": {"ties": ["spread", "add"]},
        "engine": "numpy",
        "chains": 2,
        "iter_sampling": 300,
    }
    w.run_sweep()
    w.selected_pair = w.view_data["intervals"]["key"][0]
    w.ranking_model = "plackett-luce"
    assert w.wait_background(FIT_TIMEOUT), (w.sweep_text, w.ranking_model_text)
    shown = w.charts
    robustness = shown["robustness"].to_dict(validate=True)
    # the flips the widget shows (at its ROPE and rule), the highlighted pair in its params
    (flips,) = [d for d in robustness["datasets"].values() if d and "setting" in d[0]]
    assert [r["kind"] for r in flips] == w.sweep_data["kind"]
    assert {"name": "sel_pair", "value": w.selected_pair} in robustness["params"]
    model = shown["ranking_model"].to_dict(validate=True)
    assert "Plackett-Luce" in str(model)


def test_code_of_a_widget_with_a_fresh_seed_names_the_seed_drawn(base: pd.DataFrame) -> None:
    w = _opened(base, dataset="db", seed=None)
    try:
        drawn = w.result.settings["seed"]
        assert isinstance(drawn, int) and f"seed={drawn}" in w.code()
        pd.testing.assert_frame_equal(_reproduced(w, base), w.summary)
    finally:
        w.close()


def test_the_front_end_asks_for_the_code_and_gets_it(
    widget: BBTWidget, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The "Settings as code" section sends {"action": "code"}; w.code() comes back."""
    sent: list = []
    monkeypatch.setattr(widget, "send", lambda content, buffers=None: sent.append(content))
    widget.rope_low = 0.41
    for handler in widget._msg_callbacks.callbacks:  # what a message from the browser runs
        handler(widget, {"action": "code"}, [])
    assert sent == [{"code": widget.code()}] and "rope=(0.41, 0.55)" in sent[0]["code"]
    for handler in widget._msg_callbacks.callbacks:
        handler(widget, {"action": "something else"}, [])
    assert len(sent) == 1
