// The linked chart view: one Vega-Lite spec (built by bbt_widget/outputs/charts/specs.py) embedded
// with the bundled vega-embed, its data sent separately as named datasets.
//
// Why the split: a ROPE/HDI/control change only changes data, so it is applied with
// view.change() on the live view (no re-parse, no re-layout of the spec, selection kept).
// A new spec (new fit or new structure) finalizes the old view before embedding again, so
// listeners and timers of the old view do not leak.
import embed from "vega-embed";
import { changeset, truthy } from "vega";

const EMBED_OPTIONS = {
  mode: "vega-lite",
  renderer: "svg",
  // No "Open in Vega Editor"/export menu: its links point off-machine.
  actions: false,
  tooltip: true,
};

/** Stable text for comparing specs (key order is fixed by Python's json). */
const keyOf = (value) => JSON.stringify(value ?? null);

/** Python sends each dataset by column ({name: [values]}); Vega wants rows. */
export function rowsOf(columns) {
  const names = Object.keys(columns || {});
  if (names.length === 0) return [];
  const n = columns[names[0]].length;
  const rows = new Array(n);
  for (let i = 0; i < n; i += 1) {
    const row = {};
    for (const name of names) row[name] = columns[name][i];
    rows[i] = row;
  }
  return rows;
}

export class ChartView {
  /**
   * @param {HTMLElement} container where the chart goes
   * @param {{onPair: (key: string) => void, onError: (msg: string) => void,
   *          onRendered: (kind: string) => void, onDataset?: (name: string) => void}} hooks
   */
  constructor(container, hooks, { required = "intervals", className = "bbt-vega" } = {}) {
    this.container = container;
    this.hooks = hooks;
    // dataset without which there is nothing to draw yet (null: the spec has its data)
    this.required = required;
    this.className = className; // of the element the view is embedded in
    this.result = null; // vega-embed result of the live view
    this.specKey = null;
    this.dataRefs = {}; // dataset name -> the columns object last drawn
    this.queue = Promise.resolve();
    this.signals = {};
  }

  /** Serialise updates: a new spec must not race with a data update of the old one. */
  update(spec, datasets, signals) {
    this.queue = this.queue
      .then(() => this._update(spec, datasets, signals))
      .catch((err) => this.hooks.onError(String(err?.message ?? err)));
    return this.queue;
  }

  async _update(spec, datasets, signals) {
    this.signals = { ...this.signals, ...signals };
    const missing = this.required !== null && !datasets?.[this.required];
    if (!spec || Object.keys(spec).length === 0 || missing) {
      return; // nothing to draw yet (first fit or sweep still running)
    }
    const specKey = keyOf(spec);
    if (specKey !== this.specKey || !this.result) {
      await this._embed(spec, datasets);
      this.specKey = specKey;
      this.hooks.onRendered("embed");
      return;
    }
    let changed = false;
    // A trait that did not change keeps its object, so identity tells what is new.
    for (const [name, columns] of Object.entries(datasets || {})) {
      if (this.dataRefs[name] === columns) continue;
      this.result.view.change(name, changeset().remove(truthy).insert(rowsOf(columns)));
      this.dataRefs[name] = columns;
      changed = true;
    }
    changed = this._applySignals() || changed;
    if (changed) {
      await this.result.view.runAsync();
      this.hooks.onRendered("data");
    }
  }

  async _embed(spec, datasets) {
    this.finalize();
    // The datasets are inlined as rows into a copy of the spec: the compiled view then owns
    // named data sources that view.change() can later replace.
    const rows = Object.fromEntries(
      Object.entries(datasets || {}).map(([name, columns]) => [name, rowsOf(columns)]),
    );
    const full = { ...spec, datasets: { ...(spec.datasets || {}), ...rows } };
    const target = document.createElement("div");
    target.className = this.className;
    this.container.replaceChildren(target);
    this.result = await embed(target, full, EMBED_OPTIONS);
    this.dataRefs = { ...(datasets || {}) };
    const view = this.result.view;
    // Clicking any mark that carries a pair highlights that pair in every chart; clicking
    // empty space clears it. The choice goes to Python too (trait `selected_pair`). It is the
    // pair's key -- what the specs compare `sel_pair` with -- never its display label.
    view.addEventListener("click", (_event, item) => {
      // A mark that stands for a data set (the influence chart) chooses that data set and
      // keeps the highlighted pair: the data set is looked at for that pair.
      const dataset = item?.datum?.dataset;
      if (this.hooks.onDataset && typeof dataset === "string" && dataset !== "") {
        this.hooks.onDataset(dataset);
        return;
      }
      const key = item?.datum?.key ?? "";
      this.hooks.onPair(typeof key === "string" ? key : "");
    });
    if (this._applySignals()) await view.runAsync();
  }

  _applySignals() {
    if (!this.result) return false;
    const view = this.result.view;
    let changed = false;
    for (const [name, value] of Object.entries(this.signals)) {
      let current;
      try {
        current = view.signal(name);
      } catch {
        continue; // this spec has no such parameter
      }
      if (current !== value) {
        view.signal(name, value);
        changed = true;
      }
    }
    return changed;
  }

  finalize() {
    if (this.result) {
      this.result.finalize();
      this.result = null;
    }
    this.specKey = null;
    this.dataRefs = {};
  }
}
