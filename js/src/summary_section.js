// "Ranking and decisions": the report's headline views (ranking, weak and strong decision
// matrices) for any number of algorithms, built in the kernel's background after each fit with
// their data inside the spec; and the "Ranking model" switch, which draws Plackett-Luce's or
// Mallows' ranking (fitted in the background the first time it is asked for) instead of or
// below BBT's.
import { ChartView } from "./charts.js";
import { chartHooks } from "./chart_hooks.js";
import { buildChartKeys } from "./chart_keys.js";
import { h } from "./controls.js";
import { overlayView } from "./still.js";
import { saveTrait } from "./traits.js";

/**
 * The summary's height (px) before it is first drawn, for `n` algorithms: the ranking's rows,
 * the critical-difference diagram and the two matrices with their labels (specs_summary.py),
 * as drawn at 5, 16 and 50 algorithms: 630, 1205 and 3149 px, at any width (ChartView's grow
 * widens, it keeps the cells).
 */
export function summaryHeight(n) {
  return 380 + 50 * n + (n * n) / 9;
}

/** Pixels a bar of the critical-difference diagram adds to its depth (specs_cd.py). */
const CD_BAR_PX = 11;

/**
 * The least height (px) the summary keeps for `n` algorithms: its expected height and room
 * for a bar of the critical-difference diagram per 8 algorithms more than expected (a new
 * d_min, ROPE or rule regroups the algorithms), so that the views below it do not move when
 * the next fit's diagram is deeper.
 */
export function summaryReserve(n) {
  return summaryHeight(n) + CD_BAR_PX * Math.ceil(n / 8);
}

const MODELS = [
  ["bbt", "BBT"],
  ["plackett-luce", "Plackett-Luce"],
  ["mallows", "Mallows"],
  ["both", "BBT + Plackett-Luce"],
];

function modelSwitch(model) {
  const select = h("select", {
    class: "bbt-ranking-model",
    title:
      "Ranking model: BBT's ranking (abilities from the pairwise wins, paper Sec. 4), " +
      "Plackett-Luce's or Mallows' (from each data set's ranking of the algorithms), or " +
      "BBT's and Plackett-Luce's together",
  });
  for (const [value, label] of MODELS) select.append(h("option", { value, text: label }));
  select.addEventListener("change", () => saveTrait(model, "ranking_model", select.value));
  return select;
}

/**
 * @param model the widget's model
 * @param el the widget's element (data-* counters and data-ranking-model, for tests)
 * @param hooks `selection` (selection.js: a click lists what it picked), `flashKeys` (the
 *   pairs whose claim the last change flipped, outlined for a while), `marks` (a getter of the
 *   InStepMarks that mark the summary while it is behind), `showError`
 */
export function buildSummarySection(model, el, { selection, flashKeys, marks, showError }) {
  const box = h("div", { class: "bbt-charts bbt-summary-charts" });
  // "updating" over the summary while it is still drawn for older settings (in_step.js)
  const stale = h("div", { class: "bbt-stale-label", role: "status" });
  const switcher = modelSwitch(model);
  const view = overlayView(stale, box);
  const plText = h("div", { class: "bbt-small bbt-pl-text" });
  const plBox = h("div", { class: "bbt-charts bbt-pl-charts" });
  const section = h(
    "details",
    { class: "bbt-section bbt-summary", open: true },
    h("summary", {
      text: "Ranking and decisions",
      title:
        "the ranking (abilities, P(best), expected rank; paper Sec. 4) and every pair's " +
        "decision under the weak (Sec. 9.2) and strong (Sec. 9.3) interpretations",
    }),
    h("label", { class: "bbt-small" }, "Ranking model ", switcher),
    view,
    plText,
    plBox,
  );
  const charts = new ChartView(
    box,
    chartHooks(el, showError, "Ranking", "summaryRendered", {
      // a click on a matrix cell highlights its pair everywhere and lists it; a click
      // elsewhere in the summary (empty space) keeps the pair highlighted
      onPair: (key) => {
        if (key) selection.showPair(key);
      },
      // a click on an algorithm (ranking row, CD point) lists that algorithm's pairs
      onAlgorithm: (name) => selection.showAlgorithm(name),
    }),
    { required: null, className: "bbt-vega-aux", grow: true },
  );
  // the same picks by keyboard: Tab to the ranking or the matrices, arrows, Enter
  const keys = buildChartKeys(view, () => charts.result?.view ?? null, {
    onPair: (key) => selection.showPair(key),
    onAlgorithm: (name) => selection.showAlgorithm(name),
  });
  stale.before(...keys.stops); // the "updating" label stays the box's previous sibling
  const plCharts = new ChartView(plBox, chartHooks(el, showError, "pl", "plRendered"), {
    required: null,
    className: "bbt-vega-aux",
  });

  // the matrices outline the highlighted pair (parameter sel_pair of the summary's spec)
  // and, for a few seconds after a change, the pairs whose claim it flipped (flipped_pairs)
  let drawn = null; // the summary spec last sent to the chart
  const show = () => {
    const spec = model.get("summary_spec");
    const draw = () =>
      charts.update(spec, {}, {
        sel_pair: model.get("selected_pair") || "",
        flipped_pairs: flashKeys(),
      });
    if (spec === drawn) return draw(); // a highlight: no new drawing
    drawn = spec;
    return marks().draw("summary", draw);
  };
  const showRankingModel = () => {
    const mode = model.get("ranking_model") || "bbt";
    switcher.value = mode;
    el.dataset.rankingModel = mode;
    box.hidden = mode === "plackett-luce" || mode === "mallows";
    for (const stop of keys.stops) stop.hidden = box.hidden; // nothing to move over
    const pl = mode !== "bbt";
    plBox.hidden = !pl;
    const text = pl ? model.get("ranking_model_text") || "" : "";
    plText.textContent = text;
    plText.hidden = !text;
    if (pl) plCharts.update(model.get("ranking_model_spec"), {}, {});
    marks().update();
  };
  const dispose = () => {
    charts.dispose();
    plCharts.dispose();
  };
  return { section, box, stale, show, showRankingModel, dispose };
}
