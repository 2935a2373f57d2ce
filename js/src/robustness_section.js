// "Robustness": the sweep refits under other analysis choices in the kernel's background; its
// flips chart and the influence chart share the highlighted pair with the charts above (trait
// selected_pair); a data set clicked in the influence chart shows its correlated t-test
// posterior below them.
import { ChartView } from "./charts.js";
import { chartHooks } from "./chart_hooks.js";
import { h } from "./controls.js";
import { progressValue } from "./status_text.js";
import { oncePerTick, saveTrait } from "./traits.js";

/** Traits whose change may alter the flips and influence charts, and the sweep's line. */
const CHART_TRAITS = ["robustness_spec", "sweep_data", "influence_data", "selected_pair", "focus"];
const SWEEP_TRAITS = ["sweep_status", "sweep_text", "sweep_progress", "influence_text"];
/** The sweep's states in which it can be cancelled. */
const BUSY = ["queued", "compiling", "fitting"];

function sweepButtons(model) {
  const run = h("button", {
    type: "button",
    class: "bbt-sweep-run",
    text: "Run sweep",
    title: "refit under every setting of the sweep grid (ties x d_min by default)",
  });
  const cancel = h("button", {
    type: "button",
    class: "bbt-sweep-cancel",
    text: "Cancel",
    title: "stop the sweep (the fits done so far are dropped)",
  });
  run.addEventListener("click", () => model.send({ action: "run_sweep" }));
  cancel.addEventListener("click", () => model.send({ action: "cancel_sweep" }));
  return [run, cancel];
}

/**
 * @param model the widget's model
 * @param el the widget's element (data-sweep and data-* counters, for tests)
 * @param hooks `onPair` (sets the highlighted pair), `showError`
 * @returns the section, its [event, handler] pairs (charts, sweep line, t-test) for the
 *   widget to listen with, the functions that show each part, and `dispose`
 */
export function buildRobustness(model, el, { onPair, showError }) {
  const [run, cancel] = sweepButtons(model);
  const bar = h("progress", { class: "bbt-progress", max: 1, value: 0 });
  const sweepText = h("span", { class: "bbt-sweep-text" });
  const influenceText = h("div", { class: "bbt-small bbt-influence-text" });
  const box = h("div", { class: "bbt-charts bbt-robust-charts" });
  const ttestText = h("div", { class: "bbt-small bbt-ttest-text" });
  const ttestBox = h("div", { class: "bbt-charts bbt-ttest-charts" });
  const section = h(
    "details",
    { class: "bbt-section bbt-robustness", open: true },
    h("summary", {
      text: "Robustness: do the claims survive other analysis choices?",
      title:
        "refit under other tie policies and d_min values (the sweep), and see which data " +
        "sets move the highlighted pair's decision (influence)",
    }),
    h("div", { class: "bbt-status" }, run, cancel, bar, sweepText),
    influenceText,
    box,
    ttestText,
    ttestBox,
  );
  const charts = new ChartView(
    box,
    chartHooks(el, showError, "Robustness", "robustRendered", {
      onPair,
      onDataset: (name) => saveTrait(model, "clicked_dataset", name),
    }),
    { required: "flips", className: "bbt-vega-aux" },
  );
  const ttestCharts = new ChartView(ttestBox, chartHooks(el, showError, "ttest", "ttestRendered"), {
    required: null,
    className: "bbt-vega-aux",
  });

  const showSweep = () => {
    const state = model.get("sweep_status") || "idle";
    const busy = BUSY.includes(state);
    el.dataset.sweep = state;
    run.disabled = busy;
    cancel.hidden = !busy;
    bar.hidden = !busy;
    const progress = progressValue(model.get("sweep_progress"));
    if (progress === null) bar.removeAttribute("value");
    else bar.value = progress;
    sweepText.textContent = model.get("sweep_text") || "";
    const inf = model.get("influence_text") || "";
    influenceText.textContent = inf;
    influenceText.hidden = !inf;
  };
  const showCharts = () => {
    const flips = model.get("sweep_data") || {};
    const datasets = { influence: model.get("influence_data") || {} };
    if (Object.keys(flips).length > 0) datasets.flips = flips; // no sweep yet: nothing to draw
    return charts.update(model.get("robustness_spec"), datasets, {
      sel_pair: model.get("selected_pair") || "",
      sel_focus: model.get("focus") || "",
    });
  };
  const showTTest = () => {
    const text = model.get("ttest_text") || "";
    ttestText.textContent = text;
    ttestText.hidden = !text;
    const spec = model.get("ttest_spec") || {};
    ttestBox.hidden = Object.keys(spec).length === 0;
    if (!ttestBox.hidden) ttestCharts.update(spec, {}, {});
  };
  const scheduleCharts = oncePerTick(showCharts);
  return {
    section,
    chartHandlers: CHART_TRAITS.map((name) => [`change:${name}`, scheduleCharts]),
    sweepHandlers: SWEEP_TRAITS.map((name) => [`change:${name}`, showSweep]),
    ttestHandlers: ["ttest_spec", "ttest_text"].map((name) => [`change:${name}`, showTTest]),
    showSweep,
    showCharts,
    showTTest,
    dispose: () => {
      charts.dispose();
      ttestCharts.dispose();
    },
  };
}
