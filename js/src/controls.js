// The control panel: plain DOM inputs bound two-way to the widget's traits.
//
// Every control writes its trait and calls save_changes(); Python decides what the change
// costs (a new fit or a re-summary) and validates it. Inputs are refreshed from the model on
// every change, so `w.d_min = 0.2` in Python moves the slider too.

// The option lists (tie policies, hyper-priors, interpretations, the d_min range) come from
// Python (trait `option_lists`, bbt_widget.core.options.as_dict()): defined once, never here.

/** Traits the panel shows; a change to any of them refreshes every input. */
const CONTROL_TRAITS = [
  "ties",
  "tie_threshold",
  "local_rope",
  "d_min",
  "paired",
  "paired_available",
  "paired_reason",
  "local_rope_available",
  "local_rope_reason",
  "lower_is_better",
  "metric",
  "metrics",
  "hyperprior",
  "prior_scale",
  "rope_low",
  "rope_high",
  "hdi",
  "control",
  "interpretation",
  "focus",
  "algorithms",
  "option_lists",
  "input_errors",
];

/**
 * What each control means, with its units and the paper's section: the tooltip of the
 * control and of its label. Keys are the traits. The controls that are a term of the method
 * (ties, ROPE, HDI, rule) take theirs from the package's table instead (option_lists
 * .control_help, bbt_widget/core/terms.py), the glossary's entries.
 */
export const CONTROL_HELP = {
  tie_threshold:
    "Tie threshold, in the units of the scores: a data set where the two mean scores (over " +
    "the folds) differ by no more than this is a tie, before any local ROPE; a tie under " +
    "either rule is a tie. E.g. 0.005 = half a point of accuracy; 0 = none (the paper's " +
    "counting). Refits.",
  local_rope:
    "Local ROPE: a data set where the two scores differ by less than d_min standard " +
    "deviations is a tie (paper Eq. 3-6). Needs fold-level scores or an sd table. Refits.",
  d_min:
    "d_min: the smallest effect size that is not a tie, in standard deviations of the " +
    "scores: Cohen's d (pooled SD of the folds, Eq. 4) or, in paired mode, the paired d_z " +
    "(SD of the fold-wise differences, Eq. 6). The paper uses 0.4. Refits.",
  paired:
    "Paired: the local ROPE compares fold by fold (paired d_z, Eq. 6); needs the same folds " +
    "for every algorithm. Refits.",
  lower_is_better: "Whether a higher or a lower score is better (e.g. error rates). Refits.",
  metric:
    "Metric: the score column every view shows (BBTWidget(..., score=[...])). Each metric " +
    "is fitted once per setting (the others in the background, for the dominance view); " +
    "going back to one is instant. The direction beside it is this metric's.",
  hyperprior:
    "Hyper-prior on sigma, the spread of the abilities (paper Appendix A): log-normal (the " +
    "paper's), half-Cauchy or half-normal. Refits.",
  prior_scale:
    "Scale of the hyper-prior on sigma, on the logit scale of the abilities (Appendix A " +
    "defaults: log-normal 0.5, half-Cauchy 1, half-normal 3). Refits.",
  control:
    "Control algorithm: compare every algorithm with this one only (fewer pairs), or all " +
    "pairs. Instant: no refit.",
  focus:
    "Show pairs of: draw only this algorithm's pairs in the pairwise charts (from 9 to 29 " +
    "algorithms they open on the top-ranked one's; from 30 on every algorithm's, filtered " +
    "by 'Pairs listed'); 'all algorithms' draws every pair. " +
    "Instant: no refit.",
};

/** Create an element with attributes and children. */
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

/** Ids handed out so far on this page (see `uniqueId`). */
let idCount = 0;
/** A different one for each copy of this module: anywidget may import it once per widget. */
const ID_PREFIX = `bbt${Math.random().toString(36).slice(2, 8)}`;

/**
 * An element id no other element of the page has: several widgets (or several views of one)
 * can be on a page, and a `<label for>` must name its own control.
 */
export function uniqueId(name) {
  idCount += 1;
  return `${ID_PREFIX}-${idCount}-${name}`;
}

/** The elements whose keys are the user's: arrows move a slider or a drop-down, digits go
 * into a number, Enter and Space press a button or open a section. */
const OWN_KEYS = "input, select, textarea, button, summary";

/**
 * Keep the keys typed into the widget's own controls inside `element`: JupyterLab and
 * Notebook 7 take arrows, Enter and letters as notebook shortcuts and cancel them (the
 * arrows would move between cells instead of moving the d_min slider or a drop-down).
 * Delegated, so it covers every control in `element`, those added later too; keys pressed
 * elsewhere (on a chart) still reach the notebook.
 */
export function keepKeys(element) {
  const own = (event) => (event.target instanceof Element ? event.target.closest(OWN_KEYS) : null);
  // Notebook 7 reads keys on the document before they reach the widget (capture phase), and
  // its shortcuts skip an element marked data-lm-suppress-shortcuts only from the element
  // up: a focused control matches ":focus" selectors before the mark on the widget's root.
  // So the control itself is marked, once it has the focus (before its first key).
  element.addEventListener("focusin", (event) => {
    own(event)?.setAttribute("data-lm-suppress-shortcuts", "true");
  });
  // JupyterLab reads them as they bubble up (and the notebook's own handlers do): they stop
  // here.
  const stop = (event) => {
    if (own(event)) event.stopPropagation();
  };
  for (const type of ["keydown", "keypress", "keyup"]) element.addEventListener(type, stop);
}

function setOptions(select, options) {
  const current = select.value;
  select.replaceChildren(
    ...options.map(([value, label]) => h("option", { value, text: label })),
  );
  if (options.some(([value]) => value === current)) select.value = current;
}

/**
 * The inputs of the control panel for one model, each bound two-way to its trait: a change
 * writes the trait back, and `refresh()` shows the model's values again.
 */
class Inputs {
  constructor(model) {
    this.model = model;
    this.refreshers = [];
  }

  save(name, value) {
    this.model.set(name, value);
    this.model.save_changes();
  }

  /** The option lists and the package's table of terms (trait option_lists). */
  lists() {
    return this.model.get("option_lists") || {};
  }

  /** [value, label] pairs of one option list (hyper-priors also carry their scale). */
  pairs(name) {
    return (this.lists()[name] || []).map(([value, label]) => [value, label]);
  }

  // the tooltips of the controls that are a term of the method, and what a change costs, come
  // from the package's table (bbt_widget/core/terms.py), as the glossary's entries do
  helpOf(name) {
    return (this.lists().control_help || {})[name] || CONTROL_HELP[name];
  }

  costOf(cost) {
    return (this.lists().cost || {})[cost] || "";
  }

  refresh() {
    this.refreshers.forEach((fn) => fn());
  }

  /** A labelled row; `cost` tells the user whether the control refits or only redraws. The
   * label is tied to the row's first control. */
  row(label, cost, ...inputs) {
    const controls = inputs.filter((input) => input && input.dataset && input.dataset.trait);
    const first = controls[0];
    const help = first ? this.helpOf(first.dataset.trait) : undefined;
    // Why the kernel refused a value typed here (trait input_errors, widget/checks.py): the
    // control shows its last good value again, this line says why.
    const traits = controls.map((input) => input.dataset.trait);
    const refused = h("div", {
      class: "bbt-refused",
      role: "alert",
      "data-refused": traits.join(" "),
    });
    this.refreshers.push(() => {
      const errors = this.model.get("input_errors") || {};
      refused.textContent = traits.map((name) => errors[name]).filter(Boolean).join("\n");
      refused.hidden = !refused.textContent;
    });
    return h(
      "div",
      { class: "bbt-row" },
      h("label", { class: "bbt-label", text: label, title: help, for: first && first.id }),
      h("div", { class: "bbt-inputs" }, ...inputs),
      h("span", {
        class: `bbt-cost bbt-cost-${cost}`,
        title: this.costOf(cost),
        text: cost === "fit" ? "refit" : "",
      }),
      refused,
    );
  }

  /** The attributes every input of trait `name` has. */
  attrs(name) {
    return { id: uniqueId(name), "data-trait": name, name, title: this.helpOf(name) };
  }

  select(name, options, { toValue = (v) => v, fromValue = (v) => v } = {}) {
    const el = h("select", this.attrs(name));
    setOptions(el, options);
    el.addEventListener("change", () => this.save(name, toValue(el.value)));
    this.refreshers.push(() => {
      el.value = String(fromValue(this.model.get(name)));
    });
    return el;
  }

  checkbox(name) {
    const el = h("input", { type: "checkbox", ...this.attrs(name) });
    el.addEventListener("change", () => this.save(name, el.checked));
    this.refreshers.push(() => {
      el.checked = Boolean(this.model.get(name));
    });
    return el;
  }

  /** A number input; invalid text is sent as-is so Python can explain what is wrong. */
  number(name, { min, max, step, digits }) {
    const el = h("input", { type: "number", ...this.attrs(name), min, max, step });
    // fixed decimals (0.40 beside 0.60), where the control has a fixed precision
    const shown = (value) => (digits === undefined ? String(value) : Number(value).toFixed(digits));
    const commit = () => {
      const value = Number.parseFloat(el.value);
      if (!Number.isFinite(value)) this.refresh();
      else if (value !== this.model.get(name)) this.save(name, value);
    };
    el.addEventListener("change", commit);
    // Enter commits here, whatever the host does with the key: a host that cancels it (a
    // notebook shortcut) would stop the browser's own "change on Enter".
    el.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        commit();
      }
    });
    this.refreshers.push(() => {
      if (document.activeElement !== el) el.value = shown(this.model.get(name));
    });
    return el;
  }

  /** A slider that commits on release (a drag would otherwise queue one fit per pixel). */
  slider(name, { min, max, step }) {
    const out = h("output", { class: "bbt-value" });
    const el = h("input", { type: "range", ...this.attrs(name), min, max, step });
    el.addEventListener("input", () => {
      out.textContent = Number(el.value).toFixed(2);
    });
    el.addEventListener("change", () => this.save(name, Number.parseFloat(el.value)));
    this.refreshers.push(() => {
      el.value = String(this.model.get(name));
      out.textContent = Number(this.model.get(name)).toFixed(2);
    });
    return [el, out];
  }

  /** The small label of a row's second control, tied to it. */
  small(text, input) {
    return h("label", { class: "bbt-small", text, for: input.id, title: input.title });
  }
}

/** The controls that change the win table or the model: a new (background) fit. */
function fitGroup(kit) {
  const lists = kit.lists();
  const c = {
    ties: kit.select("ties", kit.pairs("ties")),
    tieThreshold: kit.number("tie_threshold", lists.tie_threshold || {}),
    localRope: kit.checkbox("local_rope"),
    localReason: h("span", { class: "bbt-reason" }),
    paired: kit.checkbox("paired"),
    // Why paired mode is off: one line under its row (full text in the tooltip), so a long
    // reason never pushes the checkbox next to the Local ROPE row.
    pairedReason: h("div", { class: "bbt-note", "data-note": "paired" }),
  };
  [c.dMin, c.dMinOut] = kit.slider("d_min", lists.d_min || {});
  const direction = kit.select(
    "lower_is_better",
    [
      ["false", "higher is better"],
      ["true", "lower is better"],
    ],
    { toValue: (v) => v === "true", fromValue: (v) => String(Boolean(v)) },
  );
  // Several metrics (score=[...]): which one the views show; the row is there only then
  // (hidden by refreshDerived).
  c.metric = kit.select("metric", []);
  c.metricRow = kit.row("Metric", "fit", c.metric);
  c.hyperprior = kit.select("hyperprior", kit.pairs("hyperpriors"));
  const priorScale = kit.number("prior_scale", { min: 0.01, max: 10, step: 0.05 });
  const units = h("span", { class: "bbt-small", text: "score units" });
  c.element = h(
    "fieldset",
    { class: "bbt-group" },
    h("legend", { text: "Win table and model (refit)" }),
    kit.row("Ties", "fit", c.ties),
    kit.row("Tie threshold", "fit", c.tieThreshold, units),
    kit.row(
      "Local ROPE",
      "fit",
      c.localRope,
      kit.small("d_min", c.dMin),
      c.dMin,
      c.dMinOut,
      c.localReason,
    ),
    kit.row("Paired", "fit", c.paired),
    c.pairedReason,
    c.metricRow,
    kit.row("Direction", "fit", direction),
    kit.row("Hyper-prior", "fit", c.hyperprior, kit.small("scale", priorScale), priorScale),
  );
  return c;
}

/** The controls that only re-summarise the draws already there. */
function viewGroup(kit) {
  const ropeLow = kit.number("rope_low", { min: 0, max: 1, step: 0.01, digits: 2 });
  const ropeHigh = kit.number("rope_high", { min: 0, max: 1, step: 0.01, digits: 2 });
  ropeHigh.setAttribute("aria-label", "ROPE upper end"); // its label only says "to"
  const c = {
    hdi: kit.number("hdi", { step: 0.01, digits: 2 }), // range: option_lists.hdi_range
    control: kit.select("control", [["", "none (all pairs)"]]),
    interpretation: kit.select("interpretation", kit.pairs("interpretations")),
    focus: kit.select("focus", [["", "all algorithms"]]),
  };
  c.element = h(
    "fieldset",
    { class: "bbt-group" },
    h("legend", { text: "Summary (instant)" }),
    kit.row("ROPE", "view", ropeLow, kit.small("to", ropeHigh), ropeHigh),
    kit.row("HDI mass", "view", c.hdi),
    kit.row("Control", "view", c.control),
    kit.row("Interpretation", "view", c.interpretation),
    kit.row("Show pairs of", "view", c.focus),
  );
  return c;
}

/** `keys` of `range` set as attributes of `input` (the ranges come from Python). */
function setRange(input, range, keys) {
  for (const key of keys) {
    if (range[key] !== undefined) input.setAttribute(key, String(range[key]));
  }
}

/** What the controls offer and allow, from the model: options, ranges, and why a control is
 * off. */
function refreshDerived(kit, fit, view) {
  const model = kit.model;
  const lists = kit.lists();
  setOptions(fit.ties, kit.pairs("ties"));
  setOptions(fit.hyperprior, kit.pairs("hyperpriors"));
  setOptions(view.interpretation, kit.pairs("interpretations"));
  setRange(fit.dMin, lists.d_min || {}, ["min", "max", "step"]);
  setRange(view.hdi, lists.hdi_range || {}, ["min", "max"]);
  setRange(fit.tieThreshold, lists.tie_threshold || {}, ["min", "step"]);
  const metrics = model.get("metrics") || [];
  setOptions(fit.metric, metrics.map((m) => [m, m]));
  fit.metricRow.hidden = metrics.length === 0;
  const algorithms = model.get("algorithms") || [];
  setOptions(view.control, [["", "none (all pairs)"], ...algorithms.map((a) => [a, a])]);
  setOptions(view.focus, [["", "all algorithms"], ...algorithms.map((a) => [a, a])]);
  const available = Boolean(model.get("paired_available"));
  fit.paired.disabled = !available;
  const reason = available ? "" : model.get("paired_reason") || "paired mode is off";
  fit.pairedReason.textContent = reason;
  fit.pairedReason.title = reason;
  fit.pairedReason.hidden = !reason;
  fit.paired.title = reason || CONTROL_HELP.paired;
  const localAvailable = Boolean(model.get("local_rope_available"));
  fit.localRope.disabled = !localAvailable;
  fit.localReason.textContent = localAvailable ? "" : model.get("local_rope_reason") || "";
  fit.dMin.disabled = !localAvailable || !model.get("local_rope");
}

/**
 * Build the control panel for `model` and keep it in sync.
 *
 * @returns {{ element: HTMLElement, dispose: () => void }}
 */
export function buildControls(model) {
  const kit = new Inputs(model);
  const fit = fitGroup(kit);
  const view = viewGroup(kit);
  const refresh = () => {
    refreshDerived(kit, fit, view);
    kit.refresh();
  };
  // Specific events: the anywidget model contract guarantees `change:<name>`, not `change`.
  const events = CONTROL_TRAITS.map((name) => `change:${name}`);
  for (const event of events) model.on(event, refresh);
  refresh();
  return {
    element: h("div", { class: "bbt-controls" }, fit.element, view.element),
    dispose: () => events.forEach((event) => model.off(event, refresh)),
  };
}
