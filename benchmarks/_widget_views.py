"""Issue 32: from a control change in JupyterLab to every view showing the new result.

Used by ``bench_widget.py --browser`` (and ``--views-only``). For 16 algorithms (the shipped
``pmlb16_4fold.csv``) and 50 (``bench_gibbs.simulated``, each data set's score spread over four
folds so that the local ROPE, and so d_min, applies), on the numpy engine (the default, which
shows the final fit at once) and on PyStan (a Laplace preview first, then the final fit), and
for each change kind -- the d_min slider, the tie-policy drop-down, the upper ROPE bound --
this times, in the page, from the input event to each view showing the new result:

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
(new, since d_min is), then the ROPE. Baselines from the same process: ``bbt.fit`` with the
widget's settings on the same engine, the core's ``summary(rope=...)`` and the ranking view's
spec (``summary_spec``) built from that fit. No target is asserted: the figures are reported.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from bench_gibbs import simulated

import bbt_widget as bbt
from bbt_widget.widget.app import BBTWidget
from bbt_widget.widget.views import SUMMARY_DELAY, summary_spec

#: Issue 32's targets: every view final within this many seconds of the change, by algorithms.
TARGETS_S = {16: 1.0, 50: 3.0}
#: Widget keywords of every case: the local ROPE on (d_min given), unpaired (the 50-algorithm
#: table's folds are not shared), the seed of the other browser cases.
WIDGET_KW: dict[str, Any] = {"dataset": "db", "paired": False, "seed": 11, "d_min": 0.4}
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

#: In the page: change an input; resolve with the times (ms from the event) at which the
#: result arrived and each view changed and finished drawing, for the preview and the final
#: result, and each view's signature before and after (did its content change?).
_TIME_VIEWS = """async ({ selector, value, fit, timeoutMs }) => {
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
    const input = document.querySelector(selector);
    return await new Promise((resolve) => {
        let t0 = 0;
        let timer = null;
        const finish = (timedOut) => {
            observer.disconnect();
            clearTimeout(timer);
            resolve({
                t, timedOut, before, after: signatures(), value: input.value,
                status: el.querySelector('.bbt-status-text').textContent,
            });
        };
        const check = () => {
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
            if (count('summaryRendered') !== seen.summary) {
                seen.summary = count('summaryRendered');
                first(`${stage}_summary_drawn`, now);
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
        input.value = value;
        t0 = performance.now();
        input.dispatchEvent(new Event('input', { bubbles: true }));
        input.dispatchEvent(new Event('change', { bubbles: true }));
    });
}"""
_DONE = "() => document.querySelector('.bbt-root')?.parentElement?.dataset.status === 'done'"
_SUMMARY_DRAWN = (
    "() => Number(document.querySelector('.bbt-root')?.parentElement?.dataset.summaryRendered"
    " || 0) > 0"
)
#: The numpy engine's fit is checked against a background Stan fit; its verdict goes on the
#: diagnostics badge ("Stan agrees", "Stan differs on ...", or a message in its tooltip).
_STAN_CHECKED = """() => {
    const badge = document.querySelector('.bbt-diag-badge');
    return Boolean(badge) && /Stan/.test(badge.textContent + ' ' + badge.title);
}"""


def wide_with_folds(n_alg: int, n_sets: int = 132, folds: int = 4, seed: int = 0) -> pd.DataFrame:
    """``bench_gibbs.simulated``'s wide table with each data set's score spread over ``folds``
    rows (normal noise, sd 0.02, clipped to [0, 1]), the layout of ``pmlb16_4fold.csv``: the
    local ROPE needs fold-level scores, and without it d_min changes nothing.

    Parameters
    ----------
    n_alg, n_sets
        Algorithms (columns) and data sets.
    folds
        Rows per data set.
    seed
        Seeds the table and the fold noise.

    Returns
    -------
    pandas.DataFrame
        Column ``db`` (the data set) and one score column per algorithm, ``folds`` rows per
        data set.
    """
    base = simulated(n_alg, n_sets, seed=seed)
    algorithms = [c for c in base.columns if c != "db"]
    rng = np.random.default_rng(seed + 1)
    parts = []
    for _ in range(folds):
        part = base.copy()
        noise = rng.normal(0.0, 0.02, (len(part), len(algorithms)))
        part[algorithms] = np.clip(part[algorithms].to_numpy() + noise, 0.0, 1.0)
        parts.append(part)
    return pd.concat(parts).sort_values("db", kind="stable").reset_index(drop=True)


def _values(round_: int) -> dict[str, str]:
    """The fresh values of one round (every value differs from the widget's start and from
    every other round's): d_min on the slider's 0.05 grid and the ROPE's upper bound, each
    alternating between far-apart ranges so that decisions (and so the headline) move; the
    tie policy alternates between add and spread (the start)."""
    step = round_ // 2
    far = round_ % 2 == 0
    d_min = (0.8 if far else 0.1) + 0.05 * step
    rope_high = (0.62 if far else 0.56) + 0.01 * step
    return {
        "d_min": f"{d_min:.2f}",
        "ties": "add" if far else "spread",
        "rope": f"{rope_high:.2f}",
    }


#: Change kind -> (selector of its input, whether it needs a fit).
CHANGES = {
    "d_min": ("input[data-trait=d_min]", True),
    "ties": ("select[data-trait=ties]", True),
    "rope": ("input[data-trait=rope_high]", False),
}


def _median(values: list[float]) -> float | None:
    return round(float(statistics.median(values)), 3) if values else None


def _timed(fn: Any, *args: Any, **kwargs: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - started, out


def _fit(data: pd.DataFrame, settings: dict[str, Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the data's warnings: the kernel shows them
        return bbt.fit(data, **settings)


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


def views_case(
    harness: Any,
    lab: Any,
    context: Any,
    size: str,
    engine: str,
    repeat: int,
) -> dict[str, Any]:
    """One data size on one engine variant: a new notebook and kernel, ``repeat`` rounds of
    (d_min, tie policy, ROPE) changes, each against its baseline in this process."""
    if size == "16":
        data = bbt.datasets.load_pmlb16()
        data_expr = "bbt.datasets.load_pmlb16()"
    else:
        csv = Path(lab.root, f"wide{size}.csv")
        if not csv.exists():
            wide_with_folds(int(size)).to_csv(csv, index=False)
        data = pd.read_csv(csv)  # the kernel reads the same file: the same floats
        data_expr = f"pd.read_csv({str(csv)!r})"
    kwargs = {**WIDGET_KW, **ENGINES[engine]}
    cell = (
        "import pandas as pd\nimport bbt_widget as bbt\nfrom bbt_widget import BBTWidget\n"
        f"w = BBTWidget({data_expr}, **{kwargs!r})\nw"
    )
    mirror = BBTWidget(data, autostart=False, **kwargs)  # the fit keywords its controls give
    base_settings = mirror.fit_settings
    mirror.close()
    load_before = os.getloadavg()
    url = lab.write_notebook(f"views_{size}_{engine}.ipynb", [cell])
    page = context.new_page()
    harness.open_and_run(page, url, 120_000)
    page.wait_for_function(_DONE, timeout=900_000)
    page.wait_for_function(_SUMMARY_DRAWN, timeout=300_000)
    stan_check = engine == "numpy"
    _settle(page, stan_check)
    # untimed: this process's engine (PyStan's workers) and the ranking view (Altair's import)
    summary_spec(_fit(data, base_settings), (0.45, 0.55), 0.89)

    runs: dict[str, list[dict[str, Any]]] = {kind: [] for kind in CHANGES}
    settings = dict(base_settings)
    rope = (0.45, 0.55)  # the ROPE shown (the widget's default)
    result = None
    for round_ in range(repeat):
        values = _values(round_)
        for kind, (selector, needs_fit) in CHANGES.items():
            raw = page.evaluate(
                _TIME_VIEWS,
                {
                    "selector": selector,
                    "value": values[kind],
                    "fit": needs_fit,
                    "timeoutMs": CHANGE_TIMEOUT_S * 1000,
                },
            )
            shown, wanted = raw["value"], values[kind]
            if kind != "ties" and shown and float(shown) == float(wanted):
                shown = wanted  # "0.8" on the slider for "0.80"
            if shown != wanted:
                raise RuntimeError(f"{kind}: the input shows {raw['value']}, not {values[kind]}")
            _settle(page, stan_check and needs_fit)
            run: dict[str, Any] = {"value": values[kind], "raw": raw}
            if needs_fit:
                settings[kind] = float(values[kind]) if kind == "d_min" else values[kind]
                run["baseline_s"], result = _timed(_fit, data, settings)
                time.sleep(SETTLE_S)
            else:
                rope = (0.45, float(values[kind]))
                run["baseline_s"], _ = _timed(result.summary, rope=rope)
            # the ranking view's spec from the same fit and ROPE, as the kernel builds it
            run["summary_spec_s"], _ = _timed(summary_spec, result, rope, 0.89)
            status = raw["status"]
            if needs_fit and "done in" in status:  # the runner's own time of this fit
                run["kernel_fit_s"] = float(status.split("done in")[1].split("s")[0])
            runs[kind].append(run)
            time.sleep(SETTLE_S)
    page.evaluate("window.jupyterapp.commands.execute('kernelmenu:shutdown')")
    page.close()
    return {
        "algorithms": len(result.algorithms),
        "engine": engine,
        "result_engine": result.engine,
        "widget_keywords": {k: v for k, v in kwargs.items() if k != "dataset"},
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "changes": {kind: _summarise(kind, runs[kind], len(result.algorithms)) for kind in runs},
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
    the breakdown; the baselines and ratios; whether issue 32's target was met."""
    final = [_stage_times(r["raw"], "final") for r in runs]
    preview = [_stage_times(r["raw"], "preview") for r in runs]

    def med(rows: list[dict[str, float | None]], key: str) -> float | None:
        return _median([row[key] for row in rows if row[key] is not None])

    every = [
        max(row[v] for v in VIEWS) if all(row[v] is not None for v in VIEWS) else None
        for row in final
    ]
    all_final = _median([x for x in every if x is not None])
    baseline = _median([r["baseline_s"] for r in runs])
    spec_s = _median([r["summary_spec_s"] for r in runs])
    target = TARGETS_S.get(n_alg)
    out: dict[str, Any] = {
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
            "ranking_spec_build_in_bench_process": spec_s,
        },
        "changed": {
            v: sum(r["raw"]["before"][v] != r["raw"]["after"][v] for r in runs) for v in VIEWS
        },
        "timed_out": sum(bool(r["raw"]["timedOut"]) for r in runs),
        "baseline": "summary(rope=...)" if kind == "rope" else "bbt.fit, same settings and engine",
        "baseline_median_s": baseline,
        "ratio_to_baseline": (
            round(all_final / baseline, 2) if all_final is not None and baseline else None
        ),
        "target_s": target,
        "meets_target": None if target is None or all_final is None else all_final <= target,
        "repeat": len(runs),
    }
    return out


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
            "same settings and engine (ROPE: the core's summary) in the bench process"
        ),
        "targets_s": {str(k): v for k, v in TARGETS_S.items()},
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
        met = {True: "met", False: "MISSED", None: "-"}[c["meets_target"]]
        parts = ", ".join(f"{k} {v}" for k, v in c["breakdown_s"].items())
        print(
            f"  {kind}: all final {c['all_views_final_s']} s ({views}){preview}; baseline "
            f"{c['baseline_median_s']} s (x{c['ratio_to_baseline']}); target {c['target_s']} "
            f"s {met}; changed {c['changed']}\n    breakdown: {parts}"
        )
