// Every view on screen shows the same settings, or says it does not: a view still drawn for
// older settings than the others is dimmed under an "updating" label from the change until it
// is redrawn, and its box keeps its height meanwhile so that the page below does not jump.
//
// Which views are behind comes from the kernel (trait stale_views, bbt_widget/widget/in_step.py),
// with the settings it last saw: a control moved here differs from those until the kernel has
// handled it, so the mark is on at once, before the kernel's answer.

/** Numbers from the kernel and from a control compare as values (0.5 and 0.5000000001 alike). */
export function same(a, b) {
  if (a === b) return true;
  if (typeof a === "number" && typeof b === "number") {
    return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a));
  }
  return (a ?? null) === (b ?? null);
}

/**
 * Whether the highlighted pair's forecast on screen (more_data_view.js) is behind what is
 * asked for: a newer one on its way (`pending`), another pair highlighted since, or
 * (`settingsBehind`) the fit or the ROPE changed and the summary, whose settings it follows,
 * is not yet redrawn. Nothing shown is never behind.
 *
 * @param {{pair?: string, pending?: boolean, spec?: object}} view the trait more_data_view
 * @param {string} selectedPair the trait selected_pair
 * @param {boolean} settingsBehind whether the summary view is marked behind
 * @returns {boolean}
 */
export function forecastBehind(view, selectedPair, settingsBehind) {
  if (!view || Object.keys(view).length === 0) return false;
  if (view.pending) return true;
  if ((view.pair || "") !== (selectedPair || "")) return true;
  const drawn = Boolean(view.spec && Object.keys(view.spec).length > 0);
  return drawn && settingsBehind;
}

export class InStepMarks {
  /**
   * @param model the widget's model
   * @param el the widget's element (data-stale lists the views marked, for tests)
   * @param views {name: {box, label, also?: HTMLElement[], reserve?: () => number,
   *   hold?: boolean}}: the box drawn into, the label shown over it, other elements dimmed
   *   with it, the height (px) kept for the box while nothing is drawn in it yet, and whether
   *   the box keeps the tallest height it had at this width (a view above others whose
   *   drawings differ by a few pixels from one fit to the next: the views below stay put)
   */
  constructor(model, el, views) {
    this.model = model;
    this.el = el;
    this.views = views;
    this.drawing = Object.fromEntries(Object.keys(views).map((name) => [name, 0]));
    this.widths = {}; // the box's width when its height was last held
    this.update = this.update.bind(this);
    for (const name of Object.keys(views)) this._keep(name);
  }

  /** The traits whose local change marks every view at once (the kernel's list). */
  settingsTraits() {
    return Object.keys((this.model.get("stale_views") || {}).settings || {});
  }

  /** The views behind the settings: listed by the kernel, any view while the kernel has not
   * yet seen a control's new value, and a view being redrawn. */
  behind() {
    const state = this.model.get("stale_views") || {};
    const settings = state.settings || {};
    const moved = Object.keys(settings).some((name) => !same(this.model.get(name), settings[name]));
    // none listed without the trait (the saved state of an older widget): nothing to mark
    const listed = new Set(state.views || []);
    return Object.keys(this.views).filter(
      (name) => moved || listed.has(name) || this.drawing[name] > 0,
    );
  }

  /** Run a redraw of `name` (a function returning a promise): marked until it is done, its
   * box keeping its height meanwhile. */
  draw(name, run) {
    const { box } = this.views[name];
    this._newWidth(name);
    const height = box.getBoundingClientRect().height;
    if (height > 0) box.style.minHeight = `${Math.ceil(height)}px`;
    this.drawing[name] += 1;
    this.update();
    return run().finally(() => {
      this.drawing[name] -= 1;
      if (this.drawing[name] === 0) this._keep(name);
      this.update();
    });
  }

  /** The box's reserved height: the expected one before anything is drawn; once drawn,
   * none, or for a view that holds its height the tallest it has had at this width, never
   * less than the expected one (so that a first drawing a little taller than the one
   * before moves nothing below either). */
  _keep(name) {
    const { box, reserve, hold } = this.views[name];
    const drawn = box.querySelector("svg") !== null;
    const expected = reserve ? Math.round(reserve()) : 0;
    if (!drawn) {
      box.style.minHeight = expected ? `${expected}px` : "";
    } else if (hold) {
      const height = this._newWidth(name) ? 0 : box.getBoundingClientRect().height;
      const least = Math.max(Math.ceil(height), expected);
      box.style.minHeight = least > 0 ? `${least}px` : "";
    } else {
      box.style.minHeight = "";
    }
  }

  /** Whether the box's width changed since its height was held (then no longer held: the
   * charts are drawn anew for the new width). */
  _newWidth(name) {
    const { box } = this.views[name];
    const width = Math.round(box.getBoundingClientRect().width);
    const changed = this.widths[name] !== undefined && this.widths[name] !== width;
    if (changed) box.style.minHeight = "";
    this.widths[name] = width;
    return changed;
  }

  /** Why the views marked are behind, in words. */
  reason() {
    if (this.model.get("status") === "error") {
      return "not updated: the last fit failed, this still shows the last good fit";
    }
    if (this.model.get("message")) {
      return "not redrawn: see the message above, this still shows the last valid settings";
    }
    return "updating: this still shows the previous settings";
  }

  update() {
    const behind = new Set(this.behind());
    const reason = this.reason();
    for (const [name, view] of Object.entries(this.views)) {
      const stale = behind.has(name);
      for (const part of [view.box, ...(view.also || [])]) {
        part.classList.toggle("bbt-stale", stale);
        if (stale) part.setAttribute("aria-busy", "true");
        else part.removeAttribute("aria-busy");
      }
      const drawn = view.box.querySelector("svg") !== null;
      view.label.hidden = !stale || view.box.hidden;
      view.label.textContent = stale ? (drawn ? reason : "updating: being drawn") : "";
    }
    this.el.dataset.stale = [...behind].join(" ");
  }
}
