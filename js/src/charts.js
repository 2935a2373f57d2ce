// The linked chart view: one Vega-Lite spec (built by bbt_widget/charts/specs.py) embedded
// with the bundled vega-embed, its data sent separately as named datasets.
//
// Why the split: a ROPE/HDI/control change only changes data, so it is applied with
// view.change() on the live view (no re-parse, no re-layout of the spec, selection kept).
// A new spec (new fit or new structure) finalizes the old view before embedding again, so
// listeners and timers of the old view do not leak.
import embed from "vega-embed";
import { changeset, truthy } from "vega";
import { MAX_GROW, TITLE_CHAR_PX, TITLE_LINE_CHARS, narrowSpec, rowsOf } from "./spec_layout.js";

/** What the chart's menu button says (its tooltip and its name for a screen reader). */
const SAVE_MENU_TITLE = "Save this chart as drawn: SVG or PNG";
const EMBED_OPTIONS = {
  mode: "vega-lite",
  renderer: "svg",
  // The chart's "..." menu saves it as drawn (SVG or PNG): vega renders the file in the page
  // and hands it over as a data URL, so nothing leaves the machine. Its other entries stay
  // off: "Open in Vega Editor" posts the spec to an outside site, and the source views open
  // windows the notebook does not need.
  actions: { export: { svg: true, png: true }, source: false, compiled: false, editor: false },
  downloadFileName: "bbt-chart",
  i18n: { CLICK_TO_VIEW_ACTIONS: SAVE_MENU_TITLE },
  tooltip: true,
};
/** The space vega-embed keeps right of a chart for its menu button (.has-actions padding). */
const MENU_GUTTER = 38;

/**
 * Layouts tried, widest first, until the chart fits its box (see narrowSpec): as built;
 * fixed widths shrunk a little (only when a little is enough); side-by-side views stacked;
 * stacked and shrunk.
 */
const LAYOUTS = [
  { stack: false, shrink: false },
  { stack: false, shrink: true, minRatio: 0.75 },
  { stack: true, shrink: false },
  { stack: true, shrink: true },
];
/** Embeds tried at most in the last layout, each shrinking by what was still too wide. */
const MAX_SHRINKS = 4;
/** A view that may grow (the summary) is widened when narrower than its box by more than this
 * (px), at most MAX_GROW times its widths as built. Its grids of cells keep their cells: their
 * height would grow with them, and the view's height stays what it is at any width (the
 * space kept for it before it is drawn is that height). */
const GROW_SLACK = 60;
/** Embeds tried to widen a view to its box (each from what the previous one measured). */
const GROW_TRIES = 3;

/** Stable text for comparing specs (key order is fixed by Python's json). */
const keyOf = (value) => JSON.stringify(value ?? null);

export class ChartView {
  /**
   * @param {HTMLElement} container where the chart goes
   * @param {{onPair: (key: string) => void, onError: (msg: string) => void,
   *          onRendered: (kind: string) => void, onDataset?: (name: string) => void,
   *          onAlgorithm?: (name: string) => void}} hooks
   */
  constructor(
    container,
    hooks,
    { required = "intervals", className = "bbt-vega", fit = true, grow = false } = {},
  ) {
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
    // Reflow: the view is laid out for its box's width (narrowSpec), again when it changes.
    this.fit = fit;
    // A view that may grow is widened to its box when drawn much narrower (the summary);
    // the widening that filled the box last ({width, ratio}) is tried first next time.
    this.grow = grow;
    this._grown = null;
    this.level = 0; // the narrowSpec level drawn
    this.drawnWidth = 0; // the box's width it was drawn for
    this.spec = null;
    this.datasets = {};
    this.observer = null;
    this._stackRatio = 1; // box width over the width drawn stacked (for stacked and shrunk)
    if (fit && typeof ResizeObserver !== "undefined") {
      let timer = null;
      this.observer = new ResizeObserver(() => {
        clearTimeout(timer);
        timer = setTimeout(() => this.reflow(), 150);
      });
      this.observer.observe(container);
    }
  }

  /** Width available to the chart (0 while its box is hidden). */
  available() {
    const width = Math.floor(this.container.clientWidth || 0);
    return width === 0 ? 0 : Math.max(1, width - MENU_GUTTER);
  }

  /** Lay the view out again if its box's width changed enough to matter. */
  reflow() {
    if (!this.result || !this.spec) return this.queue;
    const width = this.available();
    if (width === 0 || Math.abs(width - this.drawnWidth) < 24) return this.queue;
    this.queue = this.queue
      .then(() => this._embed(this.spec, this.datasets))
      .catch((err) => this.hooks.onError(String(err?.message ?? err)));
    return this.queue;
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
      this.datasets[name] = columns;
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
    this.spec = spec;
    this.datasets = { ...(datasets || {}) };
    const width = this.available();
    // the widest layout that fits the box; a box without width (hidden) keeps the spec
    let ratio = 1; // box width over the width drawn as built
    this._stackRatio = 1;
    // a title starts a little in from the chart's edge (its padding): a line keeps clear of it
    const lineChars = width > 0 ? Math.floor((width - 24) / TITLE_CHAR_PX) : TITLE_LINE_CHARS;
    if (await this._growAsLastTime(spec, datasets, width)) return;
    for (let level = 0; level < LAYOUTS.length; level += 1) {
      const layout = LAYOUTS[level];
      if (layout.minRatio !== undefined && ratio < layout.minRatio) continue;
      // The last layout shrinks again while it is still too wide: axis labels, titles and
      // legends keep their size, so shrinking the rest by the box's share of the width drawn
      // can fall a little short (e.g. the win matrix of 50 algorithms, its labels beside it).
      const tries = level === LAYOUTS.length - 1 ? MAX_SHRINKS : 1;
      let drawn = 0;
      let before = null; // [ratio, width drawn] of the try before
      for (let attempt = 0; attempt < tries; attempt += 1) {
        const scale = layout.stack ? this._stackRatio : ratio;
        await this._embedOnce(narrowSpec(spec, layout, scale, lineChars), datasets);
        drawn = this._drawnWidth();
        if (!this.fit || width === 0 || drawn <= width + 1) break;
        if (attempt + 1 < tries) this._stackRatio = this._shrunkAgain(before, drawn, width);
        before = [scale, drawn];
      }
      this.level = level;
      if (!this.fit || width === 0 || drawn <= width + 1) break;
      if (level === 0) ratio = width / drawn;
      if (layout.stack) this._stackRatio = Math.min(1, width / drawn);
    }
    if (this.grow && this.fit && this.level === 0 && width > 0) {
      await this._widen(spec, datasets, width);
    }
    this.drawnWidth = width;
    this.specKey = keyOf(spec); // finalize() of the narrower tries cleared it
    if (this.container.dataset) this.container.dataset.level = String(this.level);
  }

  /** The ratio of the next shrink of a view still `drawn` px wide in a box `width` wide. At
   * least 3% less each time (labels and titles keep their size, so a shrink by the overshoot
   * alone falls short again); from the second try on, aimed at the box along the line through
   * the last two tries (the width drawn is about linear in the ratio). */
  _shrunkAgain(before, drawn, width) {
    const ratio = this._stackRatio;
    let next = ratio * Math.min(0.97, (width - 2) / drawn);
    if (before && before[0] > ratio && before[1] > drawn) {
      const slope = (before[1] - drawn) / (before[0] - ratio); // px per unit of ratio
      next = Math.min(next, ratio - (drawn - (width - 2)) / slope);
    }
    return Math.max(ratio / 2, next);
  }

  /** Draw a view that may grow widened as it was last time at this width, when that fills the
   * box again (the next spec of the summary is most often as wide as the last). */
  async _growAsLastTime(spec, datasets, width) {
    const last = this._grown;
    if (!this.grow || !this.fit || !last || last.width !== width) return false;
    await this._embedOnce(narrowSpec(spec, { grow: true }, last.ratio), datasets);
    const drawn = this._drawnWidth();
    if (drawn > width + 1 || drawn < width - GROW_SLACK) return false;
    this.level = 0;
    this.drawnWidth = width;
    this.specKey = keyOf(spec);
    if (this.container.dataset) this.container.dataset.level = "0";
    return true;
  }

  /** Widen a view drawn much narrower than its box: its widths and cells scaled up (labels and
   * titles keep their size, so each try measures the part that scales and aims again). */
  async _widen(spec, datasets, width) {
    const asBuilt = this._drawnWidth();
    if (asBuilt <= 0 || asBuilt >= width - GROW_SLACK) return;
    let ratio = width / asBuilt;
    let best = 1;
    for (let attempt = 0; attempt < GROW_TRIES; attempt += 1) {
      await this._embedOnce(narrowSpec(spec, { grow: true }, ratio), datasets);
      const drawn = this._drawnWidth();
      if (drawn <= width + 1) {
        best = ratio;
        if (drawn >= width - GROW_SLACK || ratio >= MAX_GROW) break;
      }
      const scaling = (drawn - asBuilt) / (ratio - 1); // px per unit of ratio
      if (!(scaling > 0)) break;
      const next = Math.min(MAX_GROW, 1 + (width - 4 - asBuilt) / scaling);
      if (Math.abs(next - ratio) < 0.01) break;
      ratio = next;
    }
    if (best !== ratio) {
      await this._embedOnce(best === 1 ? spec : narrowSpec(spec, { grow: true }, best), datasets);
    }
    this._grown = best === 1 ? null : { width, ratio: best };
  }

  _drawnWidth() {
    const svg = this.container.querySelector("svg");
    return svg ? svg.getBoundingClientRect().width : 0;
  }

  async _embedOnce(spec, datasets) {
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
    // vega-embed titles the menu's <details>; its button (what a keyboard reaches) says it too
    for (const button of target.querySelectorAll(":scope > details > summary")) {
      button.title = SAVE_MENU_TITLE;
      button.setAttribute("aria-label", SAVE_MENU_TITLE);
    }
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
      // A mark that stands for one algorithm (a ranking row, a point of the CD diagram)
      // chooses that algorithm where the view asks for it ("Show pairs of").
      const algorithm = item?.datum?.algorithm;
      if (this.hooks.onAlgorithm && !key && typeof algorithm === "string" && algorithm !== "") {
        this.hooks.onAlgorithm(algorithm);
        return;
      }
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

  /** Stop observing the box and finalize the view. */
  dispose() {
    if (this.observer) this.observer.disconnect();
    this.observer = null;
    this.finalize();
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
