// The groups of data sets (BBTWidget(data, group="family")): the "Group" selector (trait
// selected_group: null for every data set pooled, or one of the groups) and the pairs x
// groups decision heatmap. Trait group_view holds the group names (`groups`), the heatmap's
// spec (`spec`, built by bbt_widget/charts/specs_groups.py) and its cells (`cells`);
// it is {} when the data sets are not in groups, and then nothing here is shown.
//
// Names (groups, algorithms) are only ever text: option labels are textContent, an option's
// value is the group's position (a group may be named anything, "" included), and the chart
// draws them as SVG text.
import { ChartView } from "./charts.js";
import { chartHooks } from "./chart_hooks.js";
import { h, uniqueId } from "./controls.js";
import { listen, oncePerTick, saveTrait } from "./traits.js";

/** The selector's tooltip, as every control's: what it does and what it costs. */
export const GROUP_HELP =
  "Group: show the decisions of one group of data sets (its own abilities, partially " +
  "pooled with the others; bbt.fit(..., group=...)) in the pairwise view, the headline and " +
  "the ranking, or of all data sets pooled. The heatmap 'Decisions by group' shows every " +
  "group at once. Instant: no refit.";

/** The option value of "All (pooled)" (the groups' are their positions, 0, 1, ...). */
const POOLED = "-1";

/**
 * Build the selector (a fieldset for the control panel) and the heatmap section.
 *
 * @param {object} model the anywidget model
 * @param {HTMLElement} el the widget's element (data-* counters for tests)
 * @param {{onPair: (key: string) => void, onError: (msg: string) => void}} hooks
 * @returns {{controls: HTMLElement, section: HTMLElement, dispose: () => void}}
 */
export function buildGroupsView(model, el, { onPair, onError }) {
  const select = h("select", {
    id: uniqueId("selected_group"),
    class: "bbt-group-select",
    "data-trait": "selected_group",
    name: "selected_group",
    title: GROUP_HELP,
  });
  const controls = h(
    "fieldset",
    { class: "bbt-group bbt-groups-controls" },
    h("legend", { text: "Groups of data sets (instant)" }),
    h(
      "div",
      { class: "bbt-row" },
      h("label", { class: "bbt-label", text: "Group", title: GROUP_HELP, for: select.id }),
      h("div", { class: "bbt-inputs" }, select),
      h("span", { class: "bbt-cost bbt-cost-view", title: "redraws from the draws", text: "" }),
    ),
  );
  const box = h("div", { class: "bbt-charts bbt-groups-charts" });
  const section = h(
    "details",
    { class: "bbt-section bbt-groups", open: true },
    h("summary", {
      text: "Decisions by group",
      title:
        "every pair's decision pooled and in each group of data sets, under the current " +
        "interpretation; the pairs whose claim changes between groups first (≠)",
    }),
    box,
  );

  const view = () => model.get("group_view") || {};
  const groups = () => view().groups || [];
  /** Position of the chosen group (-1: pooled, or a name not among the groups). */
  const chosen = () => {
    const name = model.get("selected_group");
    return name === null || name === undefined ? -1 : groups().indexOf(name);
  };

  select.addEventListener("change", () => {
    const names = groups();
    const i = Number(select.value);
    saveTrait(model, "selected_group", i >= 0 && i < names.length ? names[i] : null);
  });

  const showSelect = () => {
    const names = groups();
    select.replaceChildren(
      h("option", { value: POOLED, text: "All (pooled)" }),
      ...names.map((name, i) => h("option", { value: String(i), text: name })),
    );
    select.value = String(chosen());
    controls.hidden = names.length === 0;
    section.hidden = names.length === 0;
    el.dataset.groups = String(names.length);
    el.dataset.selectedGroup = String(chosen());
  };

  const chart = new ChartView(box, chartHooks(el, onError, "Group", "groupsRendered", { onPair }), {
    required: "group_cells",
    className: "bbt-vega-aux",
  });
  const showChart = () => {
    if (groups().length === 0) return Promise.resolve();
    const cells = view().cells || {};
    return chart.update(
      view().spec,
      Object.keys(cells).length > 0 ? { group_cells: cells } : {},
      {
        sel_pair: model.get("selected_pair") || "",
        sel_focus: model.get("focus") || "",
        sel_group: chosen() + 1, // the heatmap's columns: 0 pooled, k + 1 the k-th group
      },
    );
  };
  const scheduleChart = oncePerTick(showChart);

  const unlisten = listen(model, [
    ["change:group_view", showSelect],
    ["change:selected_group", showSelect],
    ...["group_view", "selected_group", "selected_pair", "focus"].map(
      (name) => [`change:${name}`, scheduleChart],
    ),
  ]);
  showSelect();
  showChart();

  return {
    controls,
    section,
    dispose: () => {
      unlisten();
      chart.dispose();
    },
  };
}
