// "More data sets": for the highlighted pair, P(some claim) against the number of more data
// sets like these, under the weak and the strong rule (trait more_data_view, from
// bbt_widget/widget/more_data_view.py), with a sentence per rule. Closed until opened: the
// kernel forecasts only while it is open (trait more_data_open). Names are shown as text,
// isolated (bidi.js); the sentences come with their names isolated by the kernel and are set as
// text too, never as HTML.
import { isolated } from "./bidi.js";
import { ChartView } from "./charts.js";
import { chartHooks } from "./chart_hooks.js";
import { h } from "./controls.js";
import { forecastBehind } from "./in_step.js";
import { holdHeight, overlayView } from "./still.js";
import { saveTrait } from "./traits.js";

const TITLE =
  "How likely n more data sets like these would leave the highlighted pair with a claim, " +
  "under the weak rule (it grows more confident with more data) and the strong rule (a pair " +
  "truly close to the ROPE stays open): simulated from the posterior, computed when opened";

/**
 * @param model the widget's model
 * @param el the widget's element (data-more-data-rendered counts the drawings, for tests)
 * @param hooks `marks` (a getter of the InStepMarks: the summary's state and the reason a view
 *   is behind), `showError`
 * @returns the section, its [event, handler] pairs, `show` and `dispose`
 */
export function buildMoreDataView(model, el, { marks, showError }) {
  const heading = h("span", { class: "bbt-more-data-heading" });
  const now = h("div", { class: "bbt-small bbt-more-data-now" });
  const box = h("div", { class: "bbt-charts bbt-more-data-chart" });
  const stale = h("div", { class: "bbt-stale-label", role: "status" });
  const sentences = h("ul", { class: "bbt-small bbt-more-data-sentences" });
  const note = h("div", { class: "bbt-small bbt-more-data-note" });
  const body = h("div", { class: "bbt-more-data-body" }, now, overlayView(stale, box), sentences);
  const section = h(
    "details",
    { class: "bbt-section bbt-more-data", open: Boolean(model.get("more_data_open")) },
    h("summary", { title: TITLE }, "More data sets: would they settle the pair? ", heading),
    body,
    note,
  );
  const charts = new ChartView(box, chartHooks(el, showError, "More data", "moreDataRendered"), {
    required: null,
    className: "bbt-vega-aux",
  });
  // the body keeps the tallest height it had at this width: a shorter sentence for the next
  // pair leaves its space, so the sections below stay put
  const settle = holdHeight(body, section);

  const show = () => {
    const view = model.get("more_data_view") || {};
    const has = Boolean(view.a);
    heading.replaceChildren(...(has ? [isolated(view.a), " vs ", isolated(view.b)] : []));
    section.dataset.pair = view.pair || "";
    now.textContent = view.now || "";
    sentences.replaceChildren(...(view.sentences || []).map((s) => h("li", { text: s })));
    note.textContent = view.note || "";
    body.hidden = !has;
    const summaryBehind = marks().behind().includes("summary");
    const behind = forecastBehind(view, model.get("selected_pair"), summaryBehind);
    section.dataset.behind = String(behind);
    box.classList.toggle("bbt-stale", behind);
    stale.hidden = !behind;
    stale.textContent = behind ? marks().reason() : "";
    if (!section.open || !has) return;
    charts.update(view.spec, {}, {}).then(settle);
  };
  const onToggle = () => {
    if (model.get("more_data_open") !== section.open) {
      saveTrait(model, "more_data_open", section.open);
    }
    show();
  };
  section.addEventListener("toggle", onToggle);
  // opened or closed from Python (w.more_data_open): the toggle event then shows it
  const onOpen = () => {
    section.open = Boolean(model.get("more_data_open"));
  };
  const traits = ["more_data_view", "selected_pair", "stale_views"];
  return {
    section,
    handlers: [
      ...traits.map((name) => [`change:${name}`, show]),
      ["change:more_data_open", onOpen],
    ],
    show,
    dispose: () => {
      section.removeEventListener("toggle", onToggle);
      charts.dispose();
    },
  };
}
