// The pairwise view: the linked intervals of every pair listed (its spec from
// bbt_widget/charts/specs.py, its data in trait view_data), redrawn once per burst of trait
// changes and marked "updating" while it is behind the settings (in_step.js).
import { ChartView } from "./charts.js";
import { countOn } from "./chart_hooks.js";
import { h } from "./controls.js";
import { overlayView } from "./still.js";
import { jsonTrait, oncePerTick } from "./traits.js";

/** Traits whose change may alter what is drawn. */
const CHART_TRAITS = ["spec", "view_data", "selected_pair", "focus", "hdi"];

/**
 * @param model the widget's model
 * @param el the widget's element (data-embeds, data-data-updates, data-rendered, for tests)
 * @param hooks `onPair` (sets the highlighted pair), `showError`, `marks` (a getter of the
 *   InStepMarks), `onBusy` (called when a redraw is asked for and after each one: the status
 *   line says "drawing" meanwhile), `afterDraw` (called after each redraw)
 */
export function buildPairsView(model, el, { onPair, showError, marks, onBusy, afterDraw }) {
  const box = h("div", { class: "bbt-charts bbt-main-charts" });
  const stale = h("div", { class: "bbt-stale-label", role: "status" });
  const charts = new ChartView(box, {
    onPair,
    onError: (msg) => showError(`Chart error: ${msg}`),
    onRendered: (kind) => {
      countOn(el, kind === "embed" ? "embeds" : "dataUpdates");
      el.dataset.rendered = "true";
    },
  });
  const viewData = jsonTrait(model, "view_data"); // the model checks draw fit_data
  let drawing = 0; // redraws under way
  const show = () => {
    drawing += 1;
    return marks()
      .draw("pairs", () =>
        charts.update(model.get("spec"), viewData(), {
          sel_pair: model.get("selected_pair") || "",
          sel_focus: model.get("focus") || "",
          hdi_mass: Number(model.get("hdi")) || 0.89,
        }),
      )
      .finally(() => {
        drawing -= 1;
        onBusy();
        afterDraw();
      });
  };
  const schedule = oncePerTick(show, onBusy);
  return {
    element: overlayView(stale, box),
    box,
    stale,
    show,
    handlers: CHART_TRAITS.map((name) => [`change:${name}`, schedule]),
    /** Whether chart updates are waiting or being drawn. */
    busy: () => schedule.pending() || drawing > 0,
    dispose: () => charts.dispose(),
  };
}
