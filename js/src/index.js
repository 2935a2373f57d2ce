// anywidget front end of BBTWidget: controls, status line, diagnostics badge, inline
// messages and the linked Vega-Lite views. All statistics happen in Python; these modules
// only show traits and write the user's choices back. This one lays the sections out and
// connects them to the model's events.
import { countOn } from "./chart_hooks.js";
import { buildChecksSection } from "./checks_section.js";
import { buildCodeView } from "./code_view.js";
import { buildControls, h, keepKeys } from "./controls.js";
import { buildGlossary } from "./glossary.js";
import { buildGroupsView } from "./groups_view.js";
import { InStepMarks } from "./in_step.js";
import { buildMetricsView } from "./metrics_view.js";
import { buildMoreDataView } from "./more_data_view.js";
import { buildNotes } from "./notes.js";
import { buildPairFilters } from "./pair_filters.js";
import { buildPairPanel } from "./pair_panel.js";
import { buildPairsView } from "./pairs_view.js";
import { buildRobustness } from "./robustness_section.js";
import { buildSelection } from "./selection.js";
import { buildMessages, buildStatusLine } from "./status_line.js";
import { buildSummarySection, summaryReserve } from "./summary_section.js";
import { listen, saveTrait } from "./traits.js";
import "./widget.css";

const STATUS_TRAITS = [
  "status",
  "status_text",
  "progress",
  "fit_count",
  "message",
  "error",
  "caveat",
];
const RANKING_MODEL_TRAITS = ["ranking_model", "ranking_model_spec", "ranking_model_text"];
/** The parts that listen to the model or hold a live chart: stopped with the widget's view. */
const DISPOSED = [
  "controls",
  "messages",
  "metrics",
  "pairs",
  "checks",
  "robustness",
  "summary",
  "groups",
  "pairFilters",
  "pairPanel",
  "moreData",
  "notes",
];

/**
 * Every part of the widget, built and placed: the answer first (headline, ranking and
 * decisions), then the pairs, then the checks and the robustness.
 */
function build(model, el, root) {
  const parts = { controls: buildControls(model), messages: buildMessages(model, root) };
  const { messages } = parts;
  const showError = messages.showError;
  parts.statusLine = buildStatusLine(model, el, root);
  // the claims the last change flipped and the preview note, in one slot of fixed height
  parts.notes = buildNotes(model, el, () => parts.summary.show());
  const onPair = (pair) => {
    if (model.get("selected_pair") !== pair) saveTrait(model, "selected_pair", pair);
  };
  const marks = () => parts.marks;
  parts.pairs = buildPairsView(model, el, {
    onPair,
    showError,
    marks,
    onBusy: () => parts.showStatus(),
    afterDraw: () => parts.selection.afterDraw(),
  });
  // a click in the ranking or the matrices always shows what it picked (selection.js)
  parts.selection = buildSelection(model, parts.pairs.element, onPair);
  parts.summary = buildSummarySection(model, el, {
    selection: parts.selection,
    flashKeys: () => parts.notes.flashKeys(),
    marks,
    showError,
  });
  parts.checks = buildChecksSection(model, el, { onPair, showError });
  parts.robustness = buildRobustness(model, el, { onPair, showError });
  // several metrics (score=[...]): who dominates whom, the Pareto set
  parts.metrics = buildMetricsView(model, { onRendered: () => countOn(el, "dominanceRendered") });
  // which pairs are listed, the highlighted pair's data sets, and the glossary ("?")
  parts.pairFilters = buildPairFilters(model);
  parts.pairPanel = buildPairPanel(model);
  // the highlighted pair's forecast with more data sets, below its panel (closed until opened)
  parts.moreData = buildMoreDataView(model, el, { marks, showError });
  const glossary = buildGlossary(model);
  const status = parts.statusLine.element;
  const main = h(
    "div",
    { class: "bbt-main" },
    status,
    messages.headlineBox,
    parts.notes.slot,
    parts.statusLine.auditList,
    messages.message,
    messages.caveat,
    messages.error,
    parts.summary.section,
    parts.metrics.element,
    parts.pairs.element,
    parts.checks.section,
    parts.robustness.section,
    buildCodeView(model).element,
  );
  parts.pairs.element.after(parts.pairPanel.element, parts.moreData.section);
  status.append(glossary.button);
  status.after(glossary.panel);
  root.append(parts.controls.element, main);
  el.append(root);
  parts.pairs.element.before(parts.pairFilters.element, parts.selection.chip);
  // data sets in groups: the group selector (with the controls) and the decisions by group
  parts.groups = buildGroupsView(model, el, { onPair, onError: showError });
  parts.controls.element.append(parts.groups.controls);
  parts.summary.section.after(parts.groups.section);
  return parts;
}

/**
 * Views drawn for older settings than the others are marked "updating" until redrawn; the
 * summary keeps at least the height it will have, with room for a deeper CD diagram.
 */
function inStepMarks(model, el, { pairs, summary, messages }) {
  return new InStepMarks(model, el, {
    pairs: { box: pairs.box, label: pairs.stale, also: [messages.headline] },
    summary: {
      box: summary.box,
      label: summary.stale,
      reserve: () => summaryReserve((model.get("algorithms") || []).length),
      // the pairs' intervals below stay put when the next fit's CD diagram is shorter, or
      // deeper by a few bars
      hold: true,
    },
  });
}

function render({ model, el }) {
  // Lumino (JupyterLab's toolkit) runs no keyboard shortcut for keys typed in here, and
  // keepKeys keeps the keys of the controls from the host (see there why both).
  const root = h("div", { class: "bbt-root", "data-lm-suppress-shortcuts": "true" });
  keepKeys(root);
  const parts = build(model, el, root);
  const { messages, notes, pairs, robustness, selection, statusLine, summary } = parts;
  const marks = inStepMarks(model, el, parts);
  parts.marks = marks;
  const showStatus = () => {
    statusLine.show(pairs.busy());
    messages.show();
    marks.update(); // why a view is behind: a failed fit, a refused value, or updating
  };
  parts.showStatus = showStatus;
  const showPreview = () => notes.showPreview(root, pairs.box);

  const unlisten = listen(model, [
    ...pairs.handlers,
    ...parts.checks.handlers,
    ["change:headline", messages.showHeadline],
    ["change:claim_changes", notes.showClaimChanges],
    ["change:interpretation", messages.showHeadline],
    ["change:selected_pair", selection.showChip],
    ["change:selected_pair", summary.show],
    ["change:focus", selection.showChip],
    ["change:pair_panel", selection.showChip], // the pair's order: best-ranked first
    ...STATUS_TRAITS.map((name) => [`change:${name}`, showStatus]),
    ["change:diagnostics", statusLine.showBadge],
    ["change:preview", showPreview],
    ["change:audit", statusLine.showAudit],
    ["change:summary_spec", summary.show],
    ...RANKING_MODEL_TRAITS.map((name) => [`change:${name}`, summary.showRankingModel]),
    ...robustness.ttestHandlers,
    ...robustness.chartHandlers,
    ...robustness.sweepHandlers,
    ["change:stale_views", marks.update],
    ...parts.moreData.handlers,
    ...marks.settingsTraits().map((name) => [`change:${name}`, parts.moreData.show]),
    ...marks.settingsTraits().map((name) => [`change:${name}`, marks.update]),
  ]);

  showStatus();
  messages.showHeadline();
  notes.showClaimChanges();
  selection.showChip();
  statusLine.showBadge();
  showPreview();
  statusLine.showAudit();
  robustness.showSweep();
  pairs.show();
  robustness.showCharts();
  summary.show();
  summary.showRankingModel();
  robustness.showTTest();
  parts.moreData.show();

  return () => {
    unlisten();
    for (const name of DISPOSED) parts[name].dispose();
  };
}

export default { render };
