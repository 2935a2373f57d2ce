// "Model checks": the posterior predictive check, its coverage and the win matrix. Closed by
// default and drawn when first opened (then on every change while open).
import { ChartView } from "./charts.js";
import { chartHooks } from "./chart_hooks.js";
import { h } from "./controls.js";
import { jsonTrait, oncePerTick } from "./traits.js";

/** Traits whose change may alter the checks' charts. */
const CHECKS_TRAITS = ["checks_spec", "fit_data", "selected_pair", "focus", "hdi"];

/**
 * @param model the widget's model
 * @param el the widget's element (data-checks-open and data-checks-rendered, for tests)
 * @param hooks `onPair` (sets the highlighted pair), `showError`
 */
export function buildChecksSection(model, el, { onPair, showError }) {
  const box = h("div", { class: "bbt-charts bbt-checks-charts" });
  const section = h(
    "details",
    { class: "bbt-section bbt-checks" },
    h("summary", {
      text: "Model checks: posterior predictive check, coverage, win matrix",
      title: "does the fitted model reproduce the observed wins? (paper Sec. 6, Table 5)",
    }),
    box,
  );
  const charts = new ChartView(
    box,
    chartHooks(el, showError, "Model checks", "checksRendered", { onPair }),
    { required: "ppc", className: "bbt-vega-checks" },
  );
  const fitData = jsonTrait(model, "fit_data");
  const show = () => {
    if (!section.open) return Promise.resolve(); // drawn when opened
    return charts.update(model.get("checks_spec"), fitData(), {
      sel_pair: model.get("selected_pair") || "",
      sel_focus: model.get("focus") || "",
      hdi_mass: Number(model.get("hdi")) || 0.89,
    });
  };
  section.addEventListener("toggle", () => {
    el.dataset.checksOpen = String(section.open);
    if (section.open) {
      show().then(() => charts.reflow());
    }
  });
  const schedule = oncePerTick(show);
  return {
    section,
    handlers: CHECKS_TRAITS.map((name) => [`change:${name}`, schedule]),
    dispose: () => charts.dispose(),
  };
}
