"""Issues 32 and 47: from a control change in JupyterLab to every view showing the new result,
against a direct fit in the same kernel, and the layout shift of the P(a > b) chart.

Used by ``bench_widget.py --browser`` (and ``--views-only``). For 16 algorithms (the shipped
``pmlb16_4fold.csv``) and 50 (``tests/browser/simulated.py``'s ``simulated_results``: 30 data
sets x 3 folds, the browser scale test's and the screenshots' data), the local ROPE on, on
the numpy engine (the default, which shows the final fit at once) and on PyStan (a Laplace
preview first, then the final fit), and for each change kind -- the d_min slider, the
tie-policy drop-down, the paired checkbox, the upper ROPE bound -- this times, in the page,
from the change event to each view showing the new result:

* ``headline``: the sentence under the status line (``.bbt-headline``);
* ``ranking``, ``cd`` and ``matrices``: the ranking chart, the critical-difference diagram and
  the weak/strong decision matrices, one Vega view (``.bbt-summary-charts``; its vconcat groups
  ``concat_0``, ``concat_1``, ``concat_2``), built in the kernel's background after each result
  (``widget/views.summary_spec``, after ``SUMMARY_DELAY`` of quiet) and never for a preview;
* ``intervals``: the pairwise P(a > b) intervals (``.bbt-main-charts``).

The page records when the result arrives (the widget's fit counter, its preview flag), when
each view's DOM changes and when its chart reports a finished render, so the time of each
view splits into the kernel's fit (its status line's "done in"), the transfer, the ranking
view's build and the renders. Every value is fresh (the widget caches fits and ranking views
by their settings): each round moves d_min to a value not fitted before, then the tie policy
and paired (new, since d_min is), then the ROPE.

The control is changed by the steady browser test's sampler
(``tests/browser/test_widget_steady_browser.py``), which records the top of the P(a > b)
chart and of the summary on every animation frame and DOM change: the shift is that test's
measure, from the change until 1.5 s after the update (and the Stan cross-check's verdict).
After each change has settled, its baseline runs in the widget's own kernel: ``bbt.fit`` with
``w.fit_settings`` and ``summary()`` with the widget's ROPE and HDI (issue 47's "direct fit +
summary", target: every view final within 1.5x), with ``summary()`` alone and the ranking
view's spec (``summary_spec``) from that fit timed beside it. No target is asserted: the
figures are reported.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bbt_widget.widget.views import SUMMARY_DELAY

#: The browser tests' folder: the steady test's layout sampler, so that the benchmark measures
#: the shift exactly as that test asserts it (and, in the kernel, the 50-algorithm data).
BROWSER_TESTS = Path(__file__).resolve().parents[1] / "tests" / "browser"
sys.path.insert(0, str(BROWSER_TESTS))

import test_widget_steady_browser as steady  # noqa: E402

#: Issue 32's targets: every view final within this many seconds of the change, by algorithms.
TARGETS_S = {16: 1.0, 50: 3.0}
#: Issue 47's target: every view final within this many times a direct ``bbt.fit`` +
#: ``summary()`` of the same settings in the same kernel.
RATIO_TARGET = 1.5
#: Issue 47's target: the P(a > b) chart's largest move during and after an update (px).
SHIFT_TARGET_PX = 0.0
#: Widget keywords of every case: the local ROPE on (d_min given, so paired applies), unpaired
#: to start with, the seed of the other browser cases.
WIDGET_KW: dict[str, Any] = {"paired": False, "seed": 11, "d_min": 0.4}
#: Per size: the notebook's data expression and the widget's column keywords. 50 algorithms:
#: the browser scale test's and the screenshots' simulated results (30 data sets x 3 folds).
DATA: dict[str, tuple[str, dict[str, Any]]] = {
    "16": ("bbt.datasets.load_pmlb16()", {"dataset": "db"}),
    "50": (
        "simulated_results(50, 30, 3)",
        {"dataset": "dataset", "algorithm": "algorithm", "fold": "fold", "score": "score"},
    ),
}
#: Window size of the page, as the steady browser test's.
VIEWPORT = {"width": 1400, "height": 900}
#: Engine variants: name -> widget keywords.
ENGINES: dict[str, dict[str, Any]] = {
    "numpy": {},  # engine="auto": the numpy engine, and the Stan cross-check in the background
    "numpy_no_stan_check": {"stan_check": False},
    "pystan": {"engine": "pystan"},  # previews on, the widget's default
}
#: The views timed, in the order of the report.
VIEWS = ("headline", "ranking", "cd", "matrices", "intervals")
#: Seconds a change may take before the page gives up on it (a 50-algorithm PyStan fit on a
#: loaded machine: about 15 s).
CHANGE_TIMEOUT_S = 180
#: Seconds between timed actions, as in bench_widget (idle-worker top-up, background views).
SETTLE_S = 1.0

#: In the page: arm the timing of the next change of a control (the steady test's sampler
#: makes it, see ``_change``); window.__bbtTimed resolves with the times (ms from the change
#: event, caught before the widget's own handler) at which the result arrived and each view
#: changed and finished drawing, for the preview and the final result, and each view's
#: signature before and after (did its content change?).
_ARM_TIMING = """({ fit, timeoutMs }) => {
    const el = document.querySelector('.bbt-root').parentElement;
    const headline = el.querySelector('.bbt-headline');
    const summaryBox = el.querySelector('.bbt-summary-charts');
    const count = (key) => Number(el.dataset[key] || 0);
    const charts = () => count('dataUpdates') + count('embeds');
    const hash = (text) => {
        let h = 5381;
        for (let i = 0; i < text.length; i += 1) h = ((h * 33) ^ text.charCodeAt(i)) | 0;
        return h;
    };
    // what a view draws: its marks' shapes, colours and positions, and its texts
    const sig = (node) => node ? hash([...node.querySelectorAll('path, text')].map((e) =>
        [e.getAttribute('d'), e.getAttribute('fill'), e.getAttribute('transform'),
         e.tagName === 'text' ? e.textContent : ''].join(' ')).join('|')) : null;
    const group = (k) => summaryBox.querySelector(`g.concat_${k}_group`);
    const signatures = () => ({
        headline: headline.textContent,
        ranking: sig(group(0)),
        cd: sig(group(1)),
        matrices: sig(group(2)),
        intervals: sig(el.querySelector('.bbt-main-charts svg')),
    });
    const before = signatures();
    const start = {
        charts: charts(), summary: count('summaryRendered'), fits: count('fits'),
        headline: headline.textContent, box: summaryBox.firstElementChild,
    };
    const seen = { ...start };
    const t = {};
    const first = (name, now) => { if (t[name] === undefined) t[name] = now; };
    let t0 = null;
    let input = null;
    document.addEventListener('change', (event) => {
        t0 = performance.now();
        input = event.target;
    }, { capture: true, once: true });
    window.__bbtTimed = new Promise((resolve) => {
        let timer = null;
        const finish = (timedOut) => {
            observer.disconnect();
            clearTimeout(timer);
            resolve({
                t, timedOut, before, after: signatures(),
                value: input && (input.type === 'checkbox' ? String(input.checked) : input.value),
                status: el.querySelector('.bbt-status-text').textContent,
            });
        };
        const check = () => {
            if (t0 === null) return;
            const now = performance.now() - t0;
            const preview = el.dataset.preview === 'true';
            if (preview) first('preview_arrived', now);
            if (count('fits') > start.fits) first('final_arrived', now);
            const stage = preview ? 'preview' : (fit && t.final_arrived === undefined)
                ? 'other' : 'final';
            if (headline.textContent !== seen.headline) {
                seen.headline = headline.textContent;
                first(`${stage}_headline_changed`, now);
            }
            if (summaryBox.firstElementChild !== seen.box) {
                seen.box = summaryBox.firstElementChild;
                first(`${stage}_summary_spec_arrived`, now);
            }
            // drawn: the first render after the new spec replaced the view (a render before
            // it, e.g. the old view outlining the claims the change flipped, is no new result)
            if (count('summaryRendered') !== seen.summary) {
                seen.summary = count('summaryRendered');
                if (t[`${stage}_summary_spec_arrived`] !== undefined) {
                    first(`${stage}_summary_drawn`, now);
                }
            }
            if (charts() !== seen.charts) {
                seen.charts = charts();
                first(`${stage}_intervals_drawn`, now);
            }
            const arrived = !fit || t.final_arrived !== undefined;
            if (arrived && t.final_intervals_drawn !== undefined
                && t.final_summary_drawn !== undefined) finish(false);
        };
        const observer = new MutationObserver(check);
        observer.observe(el, {
            subtree: true, childList: true, attributes: true, characterData: true,
        });
        timer = setTimeout(() => finish(true), timeoutMs);
    });
}"""
#: A checkbox set as a user would: the steady test's sampler sets ``value``, which a checkbox
#: ignores, so it is ticked (or not) here first, its change event sent by the sampler.
_TICK = """([selector, on]) => {
    document.querySelector('.bbt-root').parentElement.querySelector(selector).checked = on;
}"""
#: Statements run in the notebook's kernel after a change has settled: a direct ``bbt.fit``
#: with the widget's settings, then ``summary()`` with its ROPE and HDI (the issue's
#: baseline), then the ranking view's spec from that fit (where the widget's time goes).
_KERNEL_BASELINE = """\
import time as _bench_time
from bbt_widget.widget.views import summary_spec as _bench_summary_spec
_bench_rope, _bench_hdi = (w.rope_low, w.rope_high), w.hdi
_bench_status = w.status_text
_bench_t0 = _bench_time.perf_counter()
_bench_result = bbt.fit(data, **w.fit_settings)
_bench_t1 = _bench_time.perf_counter()
_bench_result.summary(rope=_bench_rope, hdi=_bench_hdi)
_bench_t2 = _bench_time.perf_counter()
w.result.summary(rope=_bench_rope, hdi=_bench_hdi)
_bench_t3 = _bench_time.perf_counter()
_bench_summary_spec(_bench_result, _bench_rope, _bench_hdi)
_bench_t4 = _bench_time.perf_counter()
_bench_times = {
    "fit_s": _bench_t1 - _bench_t0,
    "fit_summary_s": _bench_t2 - _bench_t0,
    "summary_s": _bench_t3 - _bench_t2,
    "summary_spec_s": _bench_t4 - _bench_t3,
    "status": _bench_status,
}
"""
#: Run code in the notebook's kernel (the widget's), return a JSON expression's value.
_IN_KERNEL = """async ([code, expr]) => {
    const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
    const reply = await kernel.requestExecute({
        code, silent: false, store_history: false, user_expressions: { v: expr },
    }).done;
    const failed = (r) => ({ error: `${r.ename}: ${r.evalue}` });
    if (reply.content.status !== 'ok') return failed(reply.content);
    const v = reply.content.user_expressions.v;
    return v.status === 'ok' ? { value: v.data['text/plain'] } : failed(v);
}"""
_DONE = "() => document.querySelector('.bbt-root')?.parentElement?.dataset.status === 'done'"
#: The update over: the fit done and no view marked stale.
_IDLE = """() => {
    const el = document.querySelector('.bbt-root').parentElement;
    return el.dataset.status === 'done' && (el.dataset.stale || '') === '';
}"""
_SUMMARY_DRAWN = (
    "() => Number(document.querySelector('.bbt-root')?.parentElement?.dataset.summaryRendered"
    " || 0) > 0"
)
#: The numpy engine's fit is checked against a background Stan fit; its verdict goes on the
#: diagnostics badge ("Stan check: agrees", "Stan check: differs on ...", "Stan check:
#: failed"). Not "Stan check: waiting" or "running": the check's chains would still be
#: sampling during the baseline and the next change.
_STAN_CHECKED = """() => {
    const badge = document.querySelector('.bbt-diag-badge');
    return Boolean(badge) && /Stan check: (agrees|differs|failed)/.test(badge.textContent);
}"""


def _values(round_: int) -> dict[str, str]:
    """The fresh values of one round (every fit differs from the widget's start and from
    every other round's): d_min on the slider's 0.05 grid and the ROPE's upper bound, each
    alternating between far-apart ranges so that decisions (and so the headline) move; the
    tie policy alternates between add and spread (the start), paired between on and off (the
    start), each new to the widget's cache since d_min changed first."""
    step = round_ // 2
    far = round_ % 2 == 0
    d_min = (0.8 if far else 0.1) + 0.05 * step
    rope_high = (0.62 if far else 0.56) + 0.01 * step
    return {
        "d_min": f"{d_min:.2f}",
        "ties": "add" if far else "spread",
        "paired": "true" if far else "false",
        "rope": f"{rope_high:.2f}",
    }


#: Change kind -> (selector of its input, whether it needs a fit), in the order of a round.
CHANGES = {
    "d_min": ("input[data-trait=d_min]", True),
    "ties": ("select[data-trait=ties]", True),
    "paired": ("input[data-trait=paired]", True),
    "rope": ("input[data-trait=rope_high]", False),
}


def _median(values: list[float]) -> float | None:
    return round(float(statistics.median(values)), 3) if values else None


def _stage_times(raw: dict[str, Any], stage: str) -> dict[str, float | None]:
    """Seconds from the event to each view showing ``stage``'s result (``"preview"`` or
    ``"final"``), from the page's record ``raw``. The headline is set as the result arrives
    (its text changes then, or was already the new one); the ranking, diagram and matrices
    are one Vega view, drawn together."""
    t = raw["t"]

    def s(name: str) -> float | None:
        return None if t.get(name) is None else round(t[name] / 1e3, 4)

    arrived = s(f"{stage}_arrived")
    summary = s(f"{stage}_summary_drawn")
    return {
        "arrived": arrived,
        "headline": s(f"{stage}_headline_changed") if arrived is None else arrived,
        "ranking": summary,
        "cd": summary,
        "matrices": summary,
        "intervals": s(f"{stage}_intervals_drawn"),
        "summary_spec_arrived": s(f"{stage}_summary_spec_arrived"),
    }


def _in_kernel(page: Any, code: str, expr: str) -> Any:
    """Run ``code`` in the notebook's kernel; the JSON value of ``expr`` there."""
    import ast

    reply = page.evaluate(_IN_KERNEL, [code, f"__import__('json').dumps({expr})"])
    if "error" in reply:
        raise RuntimeError(f"in the kernel: {reply['error']}")
    return json.loads(ast.literal_eval(reply["value"]))


def _change(page: Any, selector: str, value: str, fit: bool) -> dict[str, Any]:
    """Change a control as the steady browser test does (its sampler records the top of the
    P(a > b) chart and of the summary on every frame and DOM change), timing every view."""
    page.evaluate(_ARM_TIMING, {"fit": fit, "timeoutMs": CHANGE_TIMEOUT_S * 1000})
    if "paired" in selector:
        page.evaluate(_TICK, [selector, value == "true"])
        value = "on"  # a checkbox's value: the sampler sets it, the tick above counts
    page.evaluate(steady._START, [selector, value])
    raw: dict[str, Any] = page.evaluate("() => window.__bbtTimed")
    return raw


def _shifts(frames: list[dict[str, Any]]) -> dict[str, Any]:
    """The largest move of the P(a > b) chart (``pairs``) and the summary during and after an
    update (the steady test's measure), their offset at the end and, when one moved, the
    parts of the widget whose height changed."""
    out: dict[str, Any] = {"frames": len(frames)}
    for view in ("pairs", "summary"):
        out[f"{view}_max_px"] = round(steady._shift(frames, view), 1)
        out[f"{view}_end_px"] = round(abs(frames[-1][view] - frames[0][view]), 1)
    if out["pairs_max_px"] or out["summary_max_px"]:
        out["resized_parts"] = steady._resized(frames)
    return out


def views_case(
    harness: Any,
    lab: Any,
    context: Any,
    size: str,
    engine: str,
    repeat: int,
) -> dict[str, Any]:
    """One data size on one engine variant: a new notebook and kernel, ``repeat`` rounds of
    (d_min, tie policy, paired, ROPE) changes, each timed to every view, its layout shift
    sampled, and then its baseline run in the same kernel."""
    data_expr, columns = DATA[size]
    kwargs = {**columns, **WIDGET_KW, **ENGINES[engine]}
    cell = (
        f"import sys\nsys.path.insert(0, {str(BROWSER_TESTS)!r})\n"
        "import bbt_widget as bbt\nfrom bbt_widget import BBTWidget\n"
        "from simulated import simulated_results\n"
        f"data = {data_expr}\nw = BBTWidget(data, **{kwargs!r})\nw"
    )
    load_before = os.getloadavg()
    url = lab.write_notebook(f"views_{size}_{engine}.ipynb", [cell])
    page = context.new_page()
    page.set_viewport_size(VIEWPORT)
    harness.open_and_run(page, url, 120_000)
    page.wait_for_function(_DONE, timeout=900_000)
    page.wait_for_function(_SUMMARY_DRAWN, timeout=300_000)
    stan_check = engine == "numpy"
    _settle(page, stan_check)
    # untimed: the kernel's first direct fit and ranking spec (Altair's import, the engine's
    # workers), as a user's warm kernel has them
    _in_kernel(page, _KERNEL_BASELINE, "_bench_times")
    n_alg = int(_in_kernel(page, "", "len(w.result.algorithms)"))

    runs: dict[str, list[dict[str, Any]]] = {kind: [] for kind in CHANGES}
    for round_ in range(repeat):
        values = _values(round_)
        for kind, (selector, needs_fit) in CHANGES.items():
            raw = _change(page, selector, values[kind], needs_fit)
            shown, wanted = raw["value"], values[kind]
            if kind not in ("ties", "paired") and shown and float(shown) == float(wanted):
                shown = wanted  # "0.8" on the slider for "0.80"
            if shown != wanted:
                raise RuntimeError(f"{kind}: the input shows {raw['value']}, not {wanted}")
            # the steady test's wait: the update over, then 1.5 s for the claims note and any
            # late redraw; then (numpy) the Stan cross-check's verdict, still sampled
            page.wait_for_function(_IDLE, timeout=CHANGE_TIMEOUT_S * 1000)
            page.wait_for_timeout(1500)
            _settle(page, stan_check and needs_fit)
            frames = page.evaluate(steady._STOP)
            run: dict[str, Any] = {"value": wanted, "raw": raw, "shift": _shifts(frames)}
            run["baseline"] = _in_kernel(page, _KERNEL_BASELINE, "_bench_times")
            status = run["baseline"].pop("status")
            if needs_fit and "done in" in status:  # the runner's own time of this fit
                run["kernel_fit_s"] = float(status.split("done in")[1].split("s")[0])
            runs[kind].append(run)
            time.sleep(SETTLE_S)
    page.evaluate("window.jupyterapp.commands.execute('kernelmenu:shutdown')")
    page.close()
    return {
        "algorithms": n_alg,
        "engine": engine,
        "widget_keywords": kwargs,
        "data": data_expr,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "changes": {kind: _summarise(kind, runs[kind], n_alg) for kind in runs},
    }


def _settle(page: Any, stan_check: bool) -> None:
    """Wait for what follows a result: the numpy fit's Stan cross-check (its verdict on the
    badge), then ``SETTLE_S``."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    if stan_check:
        with contextlib.suppress(PlaywrightTimeout):  # no verdict in time: measured on anyway
            page.wait_for_function(_STAN_CHECKED, timeout=CHANGE_TIMEOUT_S * 1000)
    time.sleep(SETTLE_S)


def _summarise(kind: str, runs: list[dict[str, Any]], n_alg: int) -> dict[str, Any]:
    """Medians of one change kind: per view, to the preview (PyStan) and to the final result;
    the breakdown; the kernel's baselines and the ratios (of the medians, and per change
    against the baseline run just after it); the layout shifts; the targets."""
    final = [_stage_times(r["raw"], "final") for r in runs]
    preview = [_stage_times(r["raw"], "preview") for r in runs]

    def med(rows: list[dict[str, float | None]], key: str) -> float | None:
        return _median([row[key] for row in rows if row[key] is not None])

    every = [
        max(row[v] for v in VIEWS) if all(row[v] is not None for v in VIEWS) else None
        for row in final
    ]
    all_final = _median([x for x in every if x is not None])
    base = {k: _median([r["baseline"][k] for r in runs]) for k in runs[0]["baseline"]}
    baseline = base["fit_summary_s"]
    paired = [x / r["baseline"]["fit_summary_s"] for x, r in zip(every, runs) if x is not None]
    pairs_px = [r["shift"]["pairs_max_px"] for r in runs]
    target = TARGETS_S.get(n_alg)
    ratio = round(all_final / baseline, 2) if all_final is not None and baseline else None
    return {
        "values": [r["value"] for r in runs],
        "final_s": {v: med(final, v) for v in VIEWS},
        "all_views_final_s": all_final,
        "all_views_final_max_s": max((x for x in every if x is not None), default=None),
        "preview_s": (
            {v: med(preview, v) for v in ("headline", "intervals")}
            if any(row["arrived"] is not None for row in preview)
            else None
        ),
        "preview_shown": sum(row["arrived"] is not None for row in preview),
        "breakdown_s": {
            "result_arrived": med(final, "arrived"),
            "kernel_fit": _median([r["kernel_fit_s"] for r in runs if "kernel_fit_s" in r]),
            "ranking_spec_arrived": med(final, "summary_spec_arrived"),
            "ranking_spec_delay": SUMMARY_DELAY,
            "ranking_spec_build_in_kernel": base["summary_spec_s"],
        },
        "changed": {
            v: sum(r["raw"]["before"][v] != r["raw"]["after"][v] for r in runs) for v in VIEWS
        },
        "timed_out": sum(bool(r["raw"]["timedOut"]) for r in runs),
        "baseline": "bbt.fit(data, **w.fit_settings) + summary(rope, hdi), in the kernel",
        "baseline_median_s": baseline,
        "baseline_parts_median_s": base,
        "ratio_to_baseline": ratio,
        "ratio_per_change": (
            {
                "median": round(float(statistics.median(paired)), 2),
                "min": round(min(paired), 2),
                "max": round(max(paired), 2),
            }
            if paired
            else None
        ),
        "ratio_target": RATIO_TARGET,
        "meets_ratio_target": None if ratio is None else ratio <= RATIO_TARGET,
        "shift_px": {
            "pairs_max": max(pairs_px),
            "pairs_end_max": max(r["shift"]["pairs_end_px"] for r in runs),
            "summary_max": max(r["shift"]["summary_max_px"] for r in runs),
            "per_change": [r["shift"] for r in runs],
        },
        "shift_target_px": SHIFT_TARGET_PX,
        "meets_shift_target": max(pairs_px) <= SHIFT_TARGET_PX,
        "target_s": target,
        "meets_target": None if target is None or all_final is None else all_final <= target,
        "repeat": len(runs),
    }


def bench_views(
    harness: Any, lab: Any, context: Any, repeat: int, sizes: list[str], engines: list[str]
) -> dict[str, Any]:
    """Every size on every engine variant (see the module doc)."""
    cases = []
    for size in sizes:
        for engine in engines:
            case = views_case(harness, lab, context, size, engine, repeat)
            cases.append({"case": f"{size}_algorithms_{engine}", **case})
            _print_case(cases[-1])
    return {
        "note": (
            "input event -> each view showing the new result, in JupyterLab + headless "
            "Chromium (DOM mutation times in the page); final = the full fit's numbers, "
            "preview = PyStan's Laplace preview (the headline and intervals only: the ranking, "
            "diagram and matrices wait for the full fit); ranking, cd and matrices are one "
            "Vega view, drawn together; medians over the rounds; baseline = bbt.fit with the "
            "widget's settings (w.fit_settings) + summary() with its ROPE and HDI, run in the "
            "widget's own kernel after each change has settled (for the ROPE too, as the issue "
            "defines it; summary() alone is in baseline_parts_median_s); shift_px = the "
            "largest move of the P(a > b) chart (pairs) and of the summary relative to the "
            "widget's top, sampled on every frame and DOM change from the change event until "
            "1.5 s after the update (the steady browser test's sampler) and, on the numpy "
            "engine, until the Stan cross-check's verdict"
        ),
        "targets_s": {str(k): v for k, v in TARGETS_S.items()},
        "ratio_target": RATIO_TARGET,
        "shift_target_px": SHIFT_TARGET_PX,
        "cases": cases,
    }


def _print_case(case: dict[str, Any]) -> None:
    print(f"{case['case']} (load {case['load_average_before'][0]:.1f}):")
    for kind, c in case["changes"].items():
        views = ", ".join(f"{v} {c['final_s'][v]}" for v in VIEWS)
        preview = (
            ""
            if not c["preview_s"]
            else f"; preview headline {c['preview_s']['headline']} intervals "
            f"{c['preview_s']['intervals']}"
        )
        met = {True: "met", False: "MISSED", None: "-"}
        parts = ", ".join(f"{k} {v}" for k, v in c["breakdown_s"].items())
        shift = c["shift_px"]
        print(
            f"  {kind}: all final {c['all_views_final_s']} s ({views}){preview}; fit + "
            f"summary in the kernel {c['baseline_median_s']} s (x{c['ratio_to_baseline']}, "
            f"target {RATIO_TARGET}x {met[c['meets_ratio_target']]}); shift P(a>b) "
            f"{shift['pairs_max']} px (end {shift['pairs_end_max']}), summary "
            f"{shift['summary_max']} px (target 0: {met[c['meets_shift_target']]}); "
            f"{c['target_s']} s {met[c['meets_target']]}; changed {c['changed']}\n"
            f"    breakdown: {parts}"
        )
