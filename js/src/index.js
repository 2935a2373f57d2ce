// anywidget front end of BBTWidget: controls, status line, diagnostics badge, inline
// messages and the linked Vega-Lite view. All statistics happen in Python; this file only
// shows traits and writes the user's choices back.
import { ChartView } from "./charts.js";
import { buildCodeView } from "./code_view.js";
import { buildControls, h, keepKeys } from "./controls.js";
import { buildGroupsView } from "./groups_view.js";
import { buildMetricsView } from "./metrics_view.js";
import { buildGlossary } from "./glossary.js";
import { buildPairFilters } from "./pair_filters.js";
import { buildPairPanel } from "./pair_panel.js";
import { InStepMarks } from "./in_step.js";
import { buildNotes } from "./notes.js";
import { buildSelection } from "./selection.js";
import { holdHeight, overlayView } from "./still.js";
import "./widget.css";

/**
 * The summary's height (px) before it is first drawn, for `n` algorithms: the ranking's rows,
 * the critical-difference diagram and the two matrices with their labels (specs_summary.py),
 * as drawn at 5, 16 and 50 algorithms: 630, 1205 and 3149 px, at any width (ChartView's grow
 * widens, it keeps the cells).
 */
function summaryHeight(n) {
  return 380 + 50 * n + (n * n) / 9;
}

/** Traits whose change may alter what is drawn. */
const CHART_TRAITS = ["spec", "view_data", "selected_pair", "focus", "hdi"];
const CHECKS_TRAITS = ["checks_spec", "fit_data", "selected_pair", "focus", "hdi"];
const STATUS_TRAITS = [
  "status",
  "status_text",
  "progress",
  "fit_count",
  "message",
  "error",
  "caveat",
];
const ROBUST_CHART_TRAITS = ["robustness_spec", "sweep_data", "influence_data", "selected_pair", "focus"];
const SWEEP_TRAITS = ["sweep_status", "sweep_text", "sweep_progress", "influence_text"];

/**
 * Chart data arrive as one JSON buffer per trait (a DataView; bbt_widget/widget/sync.py):
 * a reader that decodes the trait's value once per change, not on every redraw.
 */
function jsonTrait(model, name) {
  let raw;
  let value = {};
  return () => {
    const now = model.get(name);
    if (now !== raw) {
      raw = now;
      value = decodeJson(now);
    }
    return value;
  };
}

function decodeJson(raw) {
  if (!raw) return {};
  if (raw instanceof ArrayBuffer || ArrayBuffer.isView(raw)) {
    return JSON.parse(new TextDecoder().decode(raw));
  }
  return raw; // already an object (e.g. widget state saved by an older version)
}

function render({ model, el }) {
  // Lumino (JupyterLab's toolkit) runs no keyboard shortcut for keys typed in here, and
  // keepKeys keeps the keys of the controls from the host (see there why both).
  const root = h("div", { class: "bbt-root", "data-lm-suppress-shortcuts": "true" });
  keepKeys(root);
  const controls = buildControls(model);

  const statusText = h("span", { class: "bbt-status-text" });
  const bar = h("progress", { class: "bbt-progress", max: 1, value: 0 });
  const badge = h("span", { class: "bbt-badge bbt-diag-badge" });
  // The data audit: count on the badge, findings in its tooltip and, on click, in a list.
  const auditBadge = h("button", { type: "button", class: "bbt-badge bbt-audit-badge" });
  const auditList = h("ul", { class: "bbt-audit-list" });
  auditList.hidden = true;
  auditBadge.addEventListener("click", () => {
    auditList.hidden = !auditList.hidden;
  });
  const status = h(
    "div",
    { class: "bbt-status", role: "status" },
    statusText,
    bar,
    badge,
    auditBadge,
  );
  // The answer in one sentence (Python's outputs.headline), right under the status line.
  const headline = h("div", { class: "bbt-headline", role: "note" });
  headline.hidden = true;
  const message = h("div", { class: "bbt-message", role: "alert" });
  const caveat = h("div", { class: "bbt-caveat" });
  // the claims the last change flipped and the preview note, in one slot of fixed height
  const notes = buildNotes(model, el, () => showSummary());
  const error = h("div", { class: "bbt-error", role: "alert" });
  const chartBox = h("div", { class: "bbt-charts bbt-main-charts" });
  // Model checks (posterior predictive check, its coverage, the win matrix): closed by
  // default, drawn when first opened.
  const checksBox = h("div", { class: "bbt-charts bbt-checks-charts" });
  const checksSection = h(
    "details",
    { class: "bbt-section bbt-checks" },
    h("summary", {
      text: "Model checks: posterior predictive check, coverage, win matrix",
      title: "does the fitted model reproduce the observed wins? (paper Sec. 6, Table 5)",
    }),
    checksBox,
  );
  // The report's headline views (ranking, weak/strong decision matrices), any number of
  // algorithms; built in the kernel's background after each fit, data inside the spec.
  const summaryBox = h("div", { class: "bbt-charts bbt-summary-charts" });
  // "updating" over a view still drawn for older settings than the others (in_step.js)
  const summaryStale = h("div", { class: "bbt-stale-label", role: "status" });
  const pairsStale = h("div", { class: "bbt-stale-label", role: "status" });
  // "Ranking model" switch: BBT's ranking, Plackett-Luce's or Mallows' (fitted in the
  // kernel's background the first time it is asked for, drawn against BBT), or BBT's
  // ranking and Plackett-Luce's one below the other ("both").
  const modelSwitch = h("select", {
    class: "bbt-ranking-model",
    title:
      "Ranking model: BBT's ranking (abilities from the pairwise wins, paper Sec. 4), " +
      "Plackett-Luce's or Mallows' (from each data set's ranking of the algorithms), or " +
      "BBT's and Plackett-Luce's together",
  });
  for (const [value, label] of [
    ["bbt", "BBT"],
    ["plackett-luce", "Plackett-Luce"],
    ["mallows", "Mallows"],
    ["both", "BBT + Plackett-Luce"],
  ]) {
    modelSwitch.append(h("option", { value, text: label }));
  }
  modelSwitch.addEventListener("change", () => {
    model.set("ranking_model", modelSwitch.value);
    model.save_changes();
  });
  const plText = h("div", { class: "bbt-small bbt-pl-text" });
  const plBox = h("div", { class: "bbt-charts bbt-pl-charts" });
  const summarySection = h(
    "details",
    { class: "bbt-section bbt-summary", open: true },
    h("summary", {
      text: "Ranking and decisions",
      title:
        "the ranking (abilities, P(best), expected rank; paper Sec. 4) and every pair's " +
        "decision under the weak (Sec. 9.2) and strong (Sec. 9.3) interpretations",
    }),
    h("label", { class: "bbt-small" }, "Ranking model ", modelSwitch),
    overlayView(summaryStale, summaryBox),
    plText,
    plBox,
  );

  // Robustness: the sweep runs in the kernel's background; its flips chart and the
  // influence chart share the highlighted pair with the charts above (trait selected_pair).
  const sweepButton = h("button", {
    type: "button",
    class: "bbt-sweep-run",
    text: "Run sweep",
    title: "refit under every setting of the sweep grid (ties x d_min by default)",
  });
  const cancelButton = h("button", {
    type: "button",
    class: "bbt-sweep-cancel",
    text: "Cancel",
    title: "stop the sweep (the fits done so far are dropped)",
  });
  const sweepBar = h("progress", { class: "bbt-progress", max: 1, value: 0 });
  const sweepText = h("span", { class: "bbt-sweep-text" });
  const influenceText = h("div", { class: "bbt-small bbt-influence-text" });
  const robustBox = h("div", { class: "bbt-charts bbt-robust-charts" });
  // The correlated t-test posterior of a data set clicked in the influence chart.
  const ttestText = h("div", { class: "bbt-small bbt-ttest-text" });
  const ttestBox = h("div", { class: "bbt-charts bbt-ttest-charts" });
  sweepButton.addEventListener("click", () => model.send({ action: "run_sweep" }));
  cancelButton.addEventListener("click", () => model.send({ action: "cancel_sweep" }));
  const robustness = h(
    "details",
    { class: "bbt-section bbt-robustness", open: true },
    h("summary", {
      text: "Robustness: do the claims survive other analysis choices?",
      title:
        "refit under other tie policies and d_min values (the sweep), and see which data " +
        "sets move the highlighted pair's decision (influence)",
    }),
    h("div", { class: "bbt-status" }, sweepButton, cancelButton, sweepBar, sweepText),
    influenceText,
    robustBox,
    ttestText,
    ttestBox,
  );
  // Several metrics (score=[...]): who dominates whom, the Pareto set.
  const metricsView = buildMetricsView(model, {
    onRendered: () => {
      el.dataset.dominanceRendered = String(Number(el.dataset.dominanceRendered || 0) + 1);
    },
  });
  // The answer first: headline, ranking and decisions; then the pairs; then the checks.
  const main = h(
    "div",
    { class: "bbt-main" },
    status,
    headline,
    notes.slot,
    auditList,
    message,
    caveat,
    error,
    summarySection,
    metricsView.element,
    overlayView(pairsStale, chartBox),
    checksSection,
    robustness,
    buildCodeView(model).element,
  );
  // which pairs are listed, the highlighted pair's data sets, and the glossary ("?")
  const pairFilters = buildPairFilters(model);
  const pairPanel = buildPairPanel(model);
  const glossary = buildGlossary(model);
  chartBox.parentElement.after(pairPanel.element);
  status.append(glossary.button);
  status.after(glossary.panel);
  root.append(controls.element, main);
  el.append(root);

  const setPair = (pair) => {
    if (model.get("selected_pair") === pair) return;
    model.set("selected_pair", pair);
    model.save_changes();
  };
  // a click in the ranking or the matrices always shows what it picked (selection.js)
  const selection = buildSelection(model, chartBox.parentElement, setPair);
  chartBox.parentElement.before(pairFilters.element, selection.chip);
  const charts = new ChartView(chartBox, {
    onPair: setPair,
    onError: (msg) => {
      error.textContent = `Chart error: ${msg}`;
      error.hidden = false;
    },
    onRendered: (kind) => {
      // Counters for tests and for users who wonder whether anything happened.
      const key = kind === "embed" ? "embeds" : "dataUpdates";
      el.dataset[key] = String(Number(el.dataset[key] || 0) + 1);
      el.dataset.rendered = "true";
    },
  });

  const checksCharts = new ChartView(
    checksBox,
    {
      onPair: setPair,
      onError: (msg) => {
        error.textContent = `Model checks chart error: ${msg}`;
        error.hidden = false;
      },
      onRendered: () => {
        el.dataset.checksRendered = String(Number(el.dataset.checksRendered || 0) + 1);
      },
    },
    { required: "ppc", className: "bbt-vega-checks" },
  );
  const showChecks = () => {
    if (!checksSection.open) return Promise.resolve(); // drawn when opened
    return checksCharts.update(model.get("checks_spec"), fitData(), {
      sel_pair: model.get("selected_pair") || "",
      sel_focus: model.get("focus") || "",
      hdi_mass: Number(model.get("hdi")) || 0.89,
    });
  };
  let checksPending = false;
  const scheduleChecks = () => {
    if (checksPending) return;
    checksPending = true;
    queueMicrotask(() => {
      checksPending = false;
      showChecks();
    });
  };
  checksSection.addEventListener("toggle", () => {
    el.dataset.checksOpen = String(checksSection.open);
    if (checksSection.open) {
      showChecks().then(() => checksCharts.reflow());
    }
  });

  const settleHeadline = holdHeight(headline, root);
  const showHeadline = () => {
    const text = model.get("headline") || "";
    headline.textContent = text; // text, never HTML: names are shown as they are
    headline.title = text ? `${text}\n(interpretation: ${model.get("interpretation")})` : "";
    headline.hidden = !text;
    if (text) settleHeadline(); // fewer lines after an update leave the charts where they are
  };

  // Data sets in groups: the group selector (with the controls) and the decisions by group.
  const groups = buildGroupsView(model, el, {
    onPair: setPair,
    onError: (msg) => {
      error.textContent = msg;
      error.hidden = false;
    },
  });
  controls.element.append(groups.controls);
  summarySection.after(groups.section);

  const robustCharts = new ChartView(
    robustBox,
    {
      onPair: setPair,
      onDataset: (name) => {
        model.set("clicked_dataset", name);
        model.save_changes();
      },
      onError: (msg) => {
        error.textContent = `Robustness chart error: ${msg}`;
        error.hidden = false;
      },
      onRendered: () => {
        el.dataset.robustRendered = String(Number(el.dataset.robustRendered || 0) + 1);
      },
    },
    { required: "flips", className: "bbt-vega-aux" },
  );

  const summaryCharts = new ChartView(
    summaryBox,
    {
      // a click on a matrix cell highlights its pair everywhere and lists it; a click
      // elsewhere in the summary (empty space) keeps the pair highlighted
      onPair: (key) => {
        if (key) selection.showPair(key);
      },
      // a click on an algorithm (ranking row, CD point) lists that algorithm's pairs
      onAlgorithm: (name) => selection.showAlgorithm(name),
      onError: (msg) => {
        error.textContent = `Ranking chart error: ${msg}`;
        error.hidden = false;
      },
      onRendered: () => {
        el.dataset.summaryRendered = String(Number(el.dataset.summaryRendered || 0) + 1);
      },
    },
    { required: null, className: "bbt-vega-aux", grow: true },
  );
  // Views drawn for older settings than the others are marked "updating" until redrawn;
  // before its first drawing the summary keeps about the height it will have.
  const marks = new InStepMarks(model, el, {
    pairs: { box: chartBox, label: pairsStale, also: [headline] },
    summary: {
      box: summaryBox,
      label: summaryStale,
      reserve: () => summaryHeight((model.get("algorithms") || []).length),
      hold: true, // the pairs' intervals below stay put when the next fit's CD diagram is shorter
    },
  });
  // the matrices outline the highlighted pair (parameter sel_pair of the summary's spec)
  // and, for a few seconds after a change, the pairs whose claim it flipped (flipped_pairs)
  let summaryDrawn = null; // the summary spec last sent to the chart
  const showSummary = () => {
    const spec = model.get("summary_spec");
    const draw = () =>
      summaryCharts.update(spec, {}, {
        sel_pair: model.get("selected_pair") || "",
        flipped_pairs: notes.flashKeys(),
      });
    if (spec === summaryDrawn) return draw(); // a highlight: no new drawing
    summaryDrawn = spec;
    return marks.draw("summary", draw);
  };

  const staticView = (box, name) =>
    new ChartView(
      box,
      {
        onPair: () => {},
        onError: (msg) => {
          error.textContent = `${name} chart error: ${msg}`;
          error.hidden = false;
        },
        onRendered: () => {
          el.dataset[`${name}Rendered`] = String(Number(el.dataset[`${name}Rendered`] || 0) + 1);
        },
      },
      { required: null, className: "bbt-vega-aux" },
    );
  const plCharts = staticView(plBox, "pl");
  const ttestCharts = staticView(ttestBox, "ttest");
  const showRankingModel = () => {
    const mode = model.get("ranking_model") || "bbt";
    modelSwitch.value = mode;
    el.dataset.rankingModel = mode;
    summaryBox.hidden = mode === "plackett-luce" || mode === "mallows";
    const pl = mode !== "bbt";
    plBox.hidden = !pl;
    const text = pl ? model.get("ranking_model_text") || "" : "";
    plText.textContent = text;
    plText.hidden = !text;
    if (pl) plCharts.update(model.get("ranking_model_spec"), {}, {});
    marks.update();
  };
  const showTTest = () => {
    const text = model.get("ttest_text") || "";
    ttestText.textContent = text;
    ttestText.hidden = !text;
    const spec = model.get("ttest_spec") || {};
    ttestBox.hidden = Object.keys(spec).length === 0;
    if (!ttestBox.hidden) ttestCharts.update(spec, {}, {});
  };

  // Chart updates waiting (a burst of trait changes not yet drawn) or being drawn.
  let pending = false;
  let drawing = 0;
  const fitData = jsonTrait(model, "fit_data");
  const viewData = jsonTrait(model, "view_data");

  const showStatus = () => {
    let state = model.get("status") || "idle";
    let text = model.get("status_text") || state;
    if (state === "done" && (pending || drawing > 0)) {
      // "done" only once the new data are on screen, not when they arrive
      state = "drawing";
      text = "drawing the charts";
    }
    root.dataset.status = state;
    el.dataset.status = state;
    el.dataset.fits = String(model.get("fit_count") ?? 0);
    status.className = `bbt-status bbt-status-${state}`;
    statusText.textContent = text;
    const progress = model.get("progress");
    const busy = state === "compiling" || state === "sampling" || state === "queued";
    bar.style.visibility = busy ? "" : "hidden"; // kept in the line: the line does not reflow
    if (Number.isFinite(progress) && progress >= 0) bar.value = progress;
    else bar.removeAttribute("value"); // indeterminate

    const msg = model.get("message") || "";
    message.textContent = msg;
    message.hidden = !msg;
    const err = model.get("error") || "";
    error.textContent = err;
    error.hidden = !err;
    const note = model.get("caveat") || "";
    caveat.textContent = note;
    caveat.hidden = !note;
    marks.update(); // why a view is behind: a failed fit, a refused value, or updating
  };

  const showPreview = () => notes.showPreview(root, chartBox);

  const showAudit = () => {
    const audit = model.get("audit") || {};
    if (audit.count === undefined) {
      auditBadge.hidden = true;
      return;
    }
    auditBadge.hidden = false;
    auditBadge.className = `bbt-badge bbt-audit-badge ${audit.count ? "bbt-badge-warn" : "bbt-badge-ok"}`;
    auditBadge.textContent = audit.label;
    el.dataset.auditCount = String(audit.count);
    const warnings = audit.warnings || [];
    const notes = audit.notes || [];
    auditBadge.title = [...warnings, ...notes].join("\n") + "\n(click for the list)";
    auditList.replaceChildren(
      ...warnings.map((text) => h("li", { class: "bbt-audit-warning", text })),
      ...notes.map((text) => h("li", { class: "bbt-audit-note", text })),
    );
  };

  const showSweep = () => {
    const state = model.get("sweep_status") || "idle";
    const busy = ["queued", "compiling", "fitting"].includes(state);
    el.dataset.sweep = state;
    sweepButton.disabled = busy;
    cancelButton.hidden = !busy;
    sweepBar.hidden = !busy;
    const progress = model.get("sweep_progress");
    if (Number.isFinite(progress) && progress >= 0) sweepBar.value = progress;
    else sweepBar.removeAttribute("value");
    sweepText.textContent = model.get("sweep_text") || "";
    const inf = model.get("influence_text") || "";
    influenceText.textContent = inf;
    influenceText.hidden = !inf;
  };

  const showRobustCharts = () => {
    const flips = model.get("sweep_data") || {};
    const datasets = { influence: model.get("influence_data") || {} };
    if (Object.keys(flips).length > 0) datasets.flips = flips; // no sweep yet: nothing to draw
    return robustCharts.update(model.get("robustness_spec"), datasets, {
      sel_pair: model.get("selected_pair") || "",
      sel_focus: model.get("focus") || "",
    });
  };
  let robustPending = false;
  const scheduleRobust = () => {
    if (robustPending) return;
    robustPending = true;
    queueMicrotask(() => {
      robustPending = false;
      showRobustCharts();
    });
  };

  const showBadge = () => {
    const diag = model.get("diagnostics") || {};
    if (diag.ok === undefined) {
      badge.hidden = true;
      return;
    }
    badge.hidden = false;
    const kind = diag.failed
      ? "bbt-badge-failed"
      : diag.preview
        ? "bbt-badge-preview"
        : diag.ok
          ? "bbt-badge-ok"
          : "bbt-badge-warn";
    badge.className = `bbt-badge bbt-diag-badge ${kind}`;
    badge.textContent = diag.label || (diag.ok ? "diagnostics fine" : "check diagnostics");
    const numbers = [];
    if (Number.isFinite(diag.max_rhat)) numbers.push(`R-hat max ${diag.max_rhat.toFixed(3)}`);
    if (Number.isFinite(diag.min_ess_bulk)) {
      numbers.push(`ESS min ${Math.round(diag.min_ess_bulk)} (bulk)`);
    }
    if (Number.isFinite(diag.min_ess_tail)) {
      numbers.push(`${Math.round(diag.min_ess_tail)} (tail)`);
    }
    if (Number.isFinite(diag.divergences)) numbers.push(`divergences ${diag.divergences}`);
    badge.title = [numbers.join(", "), ...(diag.messages || [])].filter(Boolean).join("\n");
  };

  const showCharts = () => {
    drawing += 1;
    return marks
      .draw("pairs", () =>
        charts.update(
          model.get("spec"),
          viewData(), // the pairwise view's data; the model checks draw fit_data
          {
            sel_pair: model.get("selected_pair") || "",
            sel_focus: model.get("focus") || "",
            hdi_mass: Number(model.get("hdi")) || 0.89,
          },
        ),
      )
      .finally(() => {
        drawing -= 1;
        showStatus();
        selection.afterDraw();
      });
  };

  // One redraw per burst of trait changes: Python sends spec and data in one message,
  // but each trait fires its own event.
  const scheduleCharts = () => {
    if (pending) return;
    pending = true;
    showStatus();
    queueMicrotask(() => {
      pending = false;
      showCharts();
    });
  };

  const handlers = [
    ...CHART_TRAITS.map((name) => [`change:${name}`, scheduleCharts]),
    ...CHECKS_TRAITS.map((name) => [`change:${name}`, scheduleChecks]),
    ["change:headline", showHeadline],
    ["change:claim_changes", notes.showClaimChanges],
    ["change:interpretation", showHeadline],
    ["change:selected_pair", selection.showChip],
    ["change:selected_pair", showSummary],
    ["change:focus", selection.showChip],
    ...STATUS_TRAITS.map((name) => [`change:${name}`, showStatus]),
    ["change:diagnostics", showBadge],
    ["change:preview", showPreview],
    ["change:audit", showAudit],
    ["change:summary_spec", showSummary],
    ["change:ranking_model", showRankingModel],
    ["change:ranking_model_spec", showRankingModel],
    ["change:ranking_model_text", showRankingModel],
    ["change:ttest_spec", showTTest],
    ["change:ttest_text", showTTest],
    ...ROBUST_CHART_TRAITS.map((name) => [`change:${name}`, scheduleRobust]),
    ...SWEEP_TRAITS.map((name) => [`change:${name}`, showSweep]),
    ["change:stale_views", marks.update],
    ...marks.settingsTraits().map((name) => [`change:${name}`, marks.update]),
  ];
  for (const [event, fn] of handlers) model.on(event, fn);

  showStatus();
  showHeadline();
  notes.showClaimChanges();
  selection.showChip();
  showBadge();
  showPreview();
  showAudit();
  showSweep();
  showCharts();
  showRobustCharts();
  showSummary();
  showRankingModel();
  showTTest();

  return () => {
    for (const [event, fn] of handlers) model.off(event, fn);
    controls.dispose();
    metricsView.dispose();
    charts.dispose();
    checksCharts.dispose();
    robustCharts.dispose();
    summaryCharts.dispose();
    plCharts.dispose();
    ttestCharts.dispose();
    groups.dispose();
    pairFilters.dispose();
    pairPanel.dispose();
    notes.dispose();
  };
}

export default { render };
