// anywidget front end of BBTWidget: controls, status line, diagnostics badge, inline
// messages and the linked Vega-Lite view. All statistics happen in Python; this file only
// shows traits and writes the user's choices back.
import { ChartView } from "./charts.js";
import { buildControls, h } from "./controls.js";
import "./widget.css";

/** Traits whose change may alter what is drawn. */
const CHART_TRAITS = ["spec", "fit_data", "view_data", "selected_pair", "focus", "hdi"];
const STATUS_TRAITS = ["status", "status_text", "progress", "fit_count", "message", "error"];

function render({ model, el }) {
  // Lumino (JupyterLab's toolkit) runs no keyboard shortcut for keys typed in here.
  const root = h("div", { class: "bbt-root", "data-lm-suppress-shortcuts": "true" });
  const controls = buildControls(model);

  const statusText = h("span", { class: "bbt-status-text" });
  const bar = h("progress", { class: "bbt-progress", max: 1, value: 0 });
  const badge = h("span", { class: "bbt-badge" });
  const status = h("div", { class: "bbt-status", role: "status" }, statusText, bar, badge);
  const message = h("div", { class: "bbt-message", role: "alert" });
  const error = h("div", { class: "bbt-error", role: "alert" });
  const chartBox = h("div", { class: "bbt-charts" });
  const main = h("div", { class: "bbt-main" }, status, message, error, chartBox);
  root.append(controls.element, main);
  el.append(root);

  const setPair = (pair) => {
    if (model.get("selected_pair") === pair) return;
    model.set("selected_pair", pair);
    model.save_changes();
  };
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

  // Chart updates waiting (a burst of trait changes not yet drawn) or being drawn.
  let pending = false;
  let drawing = 0;

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
    bar.hidden = !busy;
    if (Number.isFinite(progress) && progress >= 0) bar.value = progress;
    else bar.removeAttribute("value"); // indeterminate

    const msg = model.get("message") || "";
    message.textContent = msg;
    message.hidden = !msg;
    const err = model.get("error") || "";
    error.textContent = err;
    error.hidden = !err;
  };

  const showBadge = () => {
    const diag = model.get("diagnostics") || {};
    if (diag.ok === undefined) {
      badge.hidden = true;
      return;
    }
    badge.hidden = false;
    badge.className = `bbt-badge ${diag.ok ? "bbt-badge-ok" : "bbt-badge-warn"}`;
    badge.textContent = diag.label || (diag.ok ? "diagnostics fine" : "check diagnostics");
    badge.title = (diag.messages || []).join("\n");
  };

  const showCharts = () => {
    drawing += 1;
    return charts
      .update(
        model.get("spec"),
        { ...(model.get("fit_data") || {}), ...(model.get("view_data") || {}) },
        {
          sel_pair: model.get("selected_pair") || "",
          sel_focus: model.get("focus") || "",
          hdi_mass: Number(model.get("hdi")) || 0.89,
        },
      )
      .finally(() => {
        drawing -= 1;
        showStatus();
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
    ...STATUS_TRAITS.map((name) => [`change:${name}`, showStatus]),
    ["change:diagnostics", showBadge],
  ];
  for (const [event, fn] of handlers) model.on(event, fn);

  showStatus();
  showBadge();
  showCharts();

  return () => {
    for (const [event, fn] of handlers) model.off(event, fn);
    controls.dispose();
    charts.finalize();
  };
}

export default { render };
