// The highlighted pair's wins, losses and ties per data set, before and after the local ROPE
// and the tie policy (trait pair_panel, from bbt_widget/widget/pair_panel.py). Names are
// shown as text, isolated (bidi.js): never as HTML.
import { isolated } from "./bidi.js";
import { h } from "./controls.js";
import { changeParts, meanText } from "./pair_text.js";
import "./teaching.css";

const TITLE =
  "The highlighted pair's wins, losses and ties on each data set: on the mean scores, after " +
  "the local ROPE (differences within d_min of the folds' spread are ties, paper Sec. 6.1) " +
  "and what the model is given after the tie policy (Sec. 6.2)";

/**
 * The pair panel for `model`.
 *
 * @returns {{ element: HTMLElement, dispose: () => void }}
 */
export function buildPairPanel(model) {
  const heading = h("span", { class: "bbt-pair-panel-heading" });
  const note = h("div", { class: "bbt-small bbt-pair-panel-note" });
  const arithmetic = h("div", { class: "bbt-small bbt-pair-arithmetic" });
  const changed = h("div", { class: "bbt-small bbt-pair-changed", role: "status" });
  const totals = h("table", { class: "bbt-pair-totals" });
  const rows = h("table", { class: "bbt-pair-datasets" });
  const empty = h("div", {
    class: "bbt-small bbt-pair-panel-empty",
    text: "Click a pair (a matrix cell or an interval) to see its wins, losses and ties per data set.",
  });
  const element = h(
    "details",
    { class: "bbt-section bbt-pair-panel", open: true },
    h("summary", { title: TITLE }, "Highlighted pair per data set: ", heading),
    empty,
    changed,
    note,
    totals,
    arithmetic,
    h("div", { class: "bbt-pair-datasets-box" }, rows),
  );

  const update = () => {
    const panel = model.get("pair_panel") || {};
    const has = Boolean(panel.a);
    empty.hidden = has;
    for (const node of [note, totals, rows, arithmetic, changed]) node.hidden = !has;
    if (!has) {
      heading.replaceChildren();
      element.dataset.pair = "";
      return;
    }
    const a = () => isolated(panel.a);
    const b = () => isolated(panel.b);
    heading.replaceChildren(a(), " vs ", b());
    element.dataset.pair = JSON.stringify([panel.a, panel.b]);
    note.textContent = panel.problem || panel.note || "";
    arithmetic.textContent = panel.arithmetic || "";
    arithmetic.hidden = !panel.arithmetic;
    const change = changeParts(panel.changed);
    changed.replaceChildren(...change.map((part) => (part.name ? isolated(panel[part.name]) : part)));
    // its line stays reserved while empty, so nothing below moves when one appears
    changed.classList.toggle("bbt-pair-changed-empty", !change.length);
    const count = (name, counts) =>
      counts
        ? h(
            "tr",
            { class: `bbt-pair-count-${name}` },
            h("th", { text: name }),
            h("td", { text: String(counts.a) }),
            h("td", { text: String(counts.b) }),
            h("td", { text: String(counts.ties) }),
          )
        : null;
    totals.replaceChildren(
      h(
        "tr",
        {},
        h("th", { text: "counts" }),
        h("th", {}, a(), " wins"),
        h("th", {}, b(), " wins"),
        h("th", { text: "ties" }),
      ),
      count("on the means", panel.before),
      count("after the local ROPE", panel.after),
      count("given to the model", panel.model),
    );
    rows.hidden = !panel.rows;
    rows.replaceChildren(...datasetRows(panel, a, b));
    element.dataset.newTies = String((panel.rows || []).filter((r) => r.new_tie).length);
  };
  model.on("change:pair_panel", update);
  update();
  return { element, dispose: () => model.off("change:pair_panel", update) };
}

/** The header and one row per data set of `panel` (a and b make the names' elements). */
function datasetRows(panel, a, b) {
  const who = (word) => (word === "a" ? a() : word === "b" ? b() : word);
  return [
    h(
      "tr",
      {},
      h("th", { text: "data set" }),
      h("th", {}, "mean ", a()),
      h("th", {}, "mean ", b()),
      h("th", { text: "winner on the means" }),
      h("th", { text: "after the local ROPE" }),
      panel.local_rope ? h("th", { text: "effect size" }) : null,
      h("th", { text: "why" }),
    ),
    ...(panel.rows || []).map((row) =>
      h(
        "tr",
        {
          class: row.new_tie ? "bbt-new-tie" : "",
          title: row.new_tie ? "a tie only under the local ROPE" : undefined,
        },
        h("td", {}, isolated(row.dataset)),
        h("td", { text: meanText(row.mean_a, row.digits) }),
        h("td", { text: meanText(row.mean_b, row.digits) }),
        h("td", {}, who(row.before)),
        h("td", {}, who(row.after), row.new_tie ? " (new tie)" : ""),
        panel.local_rope ? h("td", { class: "bbt-pair-effect", text: row.effect || "" }) : null,
        h("td", { class: "bbt-pair-reason", text: row.reason || "" }),
      ),
    ),
  ];
}
