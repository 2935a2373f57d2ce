// The dominance view of a widget with several metrics (BBTWidget(df, score=[...])): which
// algorithm is claimed better than which on which metrics, who dominates whom, the Pareto
// set. Python computes it all (bbt_widget/widget/metrics_section.py, from MetricsResult);
// this file only lays the trait `dominance_data` out as a table. Every name (algorithms,
// metrics) goes in as text, never as HTML, and a name among other text is isolated from it
// (bidi.js), so that a bidi control in a metric's name cannot move "(lower is better)".
import { isolated } from "./bidi.js";
import { h } from "./controls.js";

/** What the view and its parts mean: the tooltips. */
const HELP = {
  section:
    "Several metrics at once: for each pair, the metrics on which the first algorithm is " +
    "claimed better than the second and those on which it is claimed worse, under the " +
    "chosen interpretation (weak or strong). It dominates the other when it is better on at " +
    "least one metric and worse on none; the Pareto set holds the algorithms no other " +
    "dominates (bbt.compare_metrics gives the same table).",
  pareto: "The Pareto set: no other algorithm is claimed better on some metric and worse on none",
  only:
    "Show only the pairs where one algorithm dominates the other (unticked: every pair " +
    "with a claim on some metric)",
};

/** A comma-separated list of names, each isolated ('—' when empty): the nodes to append. */
const names = (list) =>
  list && list.length
    ? list.flatMap((name, i) => (i ? [", ", isolated(name)] : [isolated(name)]))
    : ["—"];

/**
 * The table's rows: each claim once (the rows where the first algorithm is better on some
 * metric), dominating pairs first; only those where it dominates when `only`.
 */
export function claimRows(data, only) {
  return (data.rows || [])
    .filter((r) => (r.metrics_better || []).length > 0)
    .filter((r) => !only || r.dominates)
    .sort((x, y) => Number(y.dominates) - Number(x.dominates));
}

/** What the view says instead of an empty table ("" when there are rows). */
export function emptyText(rows, data, only) {
  if (rows.length > 0) return "";
  if ((data.fitted || []).length === 0) return "waiting for the first metric's fit";
  return only ? "no algorithm dominates another" : "no pair has a claim on any metric";
}

/**
 * Build the dominance view for `model`; hidden unless the widget offers several metrics.
 *
 * @param {object} model the widget's model
 * @param {{ onRendered?: () => void }} hooks called after each redraw (tests count them)
 * @returns {{ element: HTMLElement, dispose: () => void }}
 */
export function buildMetricsView(model, { onRendered = () => {} } = {}) {
  const text = h("div", { class: "bbt-small bbt-metrics-text", role: "status" });
  const directions = h("div", { class: "bbt-small bbt-metrics-directions" });
  const pareto = h("div", { class: "bbt-pareto", title: HELP.pareto });
  const only = h("input", { type: "checkbox", class: "bbt-dominance-only", title: HELP.only });
  const onlyLabel = h("label", { class: "bbt-small", title: HELP.only }, only, " dominating pairs only");
  const head = h(
    "tr",
    {},
    ...["algorithm", "against", "better on", "worse on", "dominates"].map((label) =>
      h("th", { text: label }),
    ),
  );
  const body = h("tbody");
  const table = h("table", { class: "bbt-dominance" }, h("thead", {}, head), body);
  const empty = h("div", { class: "bbt-small bbt-dominance-empty" });
  const section = h(
    "details",
    { class: "bbt-section bbt-metrics", open: true },
    h("summary", { text: "Several metrics: dominance and Pareto set", title: HELP.section }),
    text,
    directions,
    pareto,
    onlyLabel,
    table,
    empty,
  );

  const render = () => {
    const metrics = model.get("metrics") || [];
    section.hidden = metrics.length === 0;
    if (section.hidden) return;
    const data = model.get("dominance_data") || {};
    const status = model.get("dominance_text") || "";
    text.textContent = status;
    text.hidden = !status;
    const lower = new Set(data.lower || []);
    directions.replaceChildren(
      "Metrics: ",
      ...metrics.flatMap((m, i) => [
        ...(i ? [", "] : []),
        isolated(m),
        ` (${lower.has(m) ? "lower" : "higher"} is better)`,
      ]),
      data.rule ? `; ${data.rule} interpretation` : "",
    );
    const front = new Set(data.pareto || []);
    pareto.replaceChildren(
      h("span", { class: "bbt-pareto-label", text: "Pareto set: " }),
      ...(data.pareto || []).map((name) => h("span", { class: "bbt-pareto-member", text: name })),
    );
    if (data.pareto && data.pareto.length === 0) {
      pareto.append("none: every algorithm is dominated by another (the claims form a cycle)");
    }
    pareto.hidden = !data.pareto;
    const rows = claimRows(data, only.checked);
    const cell = (name) =>
      h("td", {
        class: front.has(name) ? "bbt-in-pareto" : "",
        text: name,
        title: front.has(name) ? "in the Pareto set" : undefined,
      });
    body.replaceChildren(
      ...rows.map((r) =>
        h(
          "tr",
          { class: r.dominates ? "bbt-dominates" : "" },
          cell(r.alg_a),
          cell(r.alg_b),
          h("td", {}, ...names(r.metrics_better)),
          h("td", {}, ...names(r.metrics_worse)),
          h("td", { text: r.dominates ? "yes" : "no" }),
        ),
      ),
    );
    table.hidden = rows.length === 0;
    empty.textContent = emptyText(rows, data, only.checked);
    empty.hidden = rows.length > 0;
    onRendered();
  };

  only.addEventListener("change", render);
  const events = ["metrics", "dominance_data", "dominance_text"].map((name) => `change:${name}`);
  for (const event of events) model.on(event, render);
  render();
  return {
    element: section,
    dispose: () => events.forEach((event) => model.off(event, render)),
  };
}
