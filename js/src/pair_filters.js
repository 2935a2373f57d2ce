// Which pairs the pairwise view lists: a filter, a search by name and pages. The rows are cut
// in Python (bbt_widget/widget/pair_filters.py); this only writes the user's choice back
// (traits pair_filter, pair_search, pair_page) and says what is shown (trait pair_rows).
import { h, uniqueId } from "./controls.js";
import { pageAfter, pairCountText } from "./pair_rows.js";
import "./teaching.css";

const TITLES = {
  filter:
    "Which pairs to list: all pairs (best against each worse one); the undecided ones " +
    "(no claim under the chosen rule) first; the pairs next to each other in the ranking; " +
    "or the undecided pairs and then the neighbours (the default from 30 algorithms on)",
  search:
    "List only the pairs whose names hold every word typed here (e.g. 'lgbm xgb' for that " +
    "pair, 'svm' for every pair of an algorithm whose name holds it)",
  previous: "Show the previous page of pairs",
  next: "Show the next page of pairs",
};
/** Quiet time (ms) after typing in the search before the rows are asked for. */
const SEARCH_DELAY = 250;

/**
 * The pair filter bar for `model`.
 *
 * @returns {{ element: HTMLElement, dispose: () => void }}
 */
export function buildPairFilters(model) {
  const selectId = uniqueId("pair-filter");
  const searchId = uniqueId("pair-search");
  const select = h("select", { id: selectId, class: "bbt-pair-filter", title: TITLES.filter });
  const search = h("input", {
    id: searchId,
    type: "search",
    class: "bbt-pair-search",
    placeholder: "search names",
    title: TITLES.search,
  });
  const previous = h("button", {
    type: "button",
    class: "bbt-pair-previous",
    text: "‹ previous",
    title: TITLES.previous,
  });
  const next = h("button", {
    type: "button",
    class: "bbt-pair-next",
    text: "next ›",
    title: TITLES.next,
  });
  const text = h("span", { class: "bbt-small bbt-pair-count", role: "status" });
  // what a click in the ranking or the matrices just showed (pair_rows.note, from Python)
  const note = h("span", { class: "bbt-small bbt-pair-note", role: "status" });
  const element = h(
    "div",
    { class: "bbt-pair-filters" },
    h("label", { for: selectId, class: "bbt-small", title: TITLES.filter }, "Pairs listed "),
    select,
    h("label", { for: searchId, class: "bbt-small", title: TITLES.search }, "Search "),
    search,
    previous,
    next,
    text,
    note,
  );

  const send = (name, value) => {
    model.set(name, value);
    model.save_changes();
  };
  select.addEventListener("change", () => send("pair_filter", select.value));
  let timer = null;
  search.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => send("pair_search", search.value), SEARCH_DELAY);
  });
  const turn = (step) => {
    const page = pageAfter(model.get("pair_rows") || {}, step);
    if (page !== model.get("pair_page")) send("pair_page", page);
  };
  previous.addEventListener("click", () => turn(-1));
  next.addEventListener("click", () => turn(1));

  const update = () => {
    const rows = model.get("pair_rows") || {};
    const filters = rows.filters || [];
    if (select.options.length !== filters.length) {
      select.replaceChildren(...filters.map(([value, label]) => h("option", { value, text: label })));
    }
    select.value = model.get("pair_filter") || "all";
    if (document.activeElement !== search) search.value = model.get("pair_search") || "";
    const page = rows.page ?? 0;
    const pages = rows.pages ?? 1;
    previous.disabled = page <= 0;
    next.disabled = page >= pages - 1;
    previous.hidden = next.hidden = pages <= 1;
    text.textContent = pairCountText(rows, model.get("focus") || "", model.get("pair_search"));
    note.textContent = rows.note || ""; // text, never HTML: names are shown as they are
    note.hidden = !rows.note;
    element.dataset.shown = String(rows.shown ?? 0);
    element.dataset.matched = String(rows.matched ?? 0);
  };
  const events = ["pair_rows", "pair_filter", "pair_search"].map((name) => `change:${name}`);
  for (const event of events) model.on(event, update);
  update();
  return {
    element,
    dispose: () => {
      clearTimeout(timer);
      for (const event of events) model.off(event, update);
    },
  };
}
