// Nothing moves when the kernel answers: the parts of the page that come and go with an update
// (the "updating" marks, the note of the claims a change flipped, the preview note) are drawn
// over a view or in a slot of fixed height, never pushed into the flow above the charts.

import { h } from "./controls.js";

/** Lines a text of any length keeps on screen until the reader opens it whole (fixedLines). */
export const FIXED_LINES = 3;

/**
 * A view's box with its "updating" label drawn over the box's top edge (in_step.js shows and
 * hides the label): the label takes no height, so the box and everything below it stay put.
 * The label stays the box's previous sibling.
 */
export function overlayView(label, box, className = "") {
  return h("div", { class: `bbt-view ${className}`.trim() }, label, box);
}

/**
 * One line of fixed height holding notes that come and go (each cut with an ellipsis, its
 * whole text in its tooltip): shown or hidden, the slot keeps its height.
 */
export function noteSlot(...notes) {
  return h("div", { class: "bbt-note-slot" }, ...notes);
}

/**
 * Keep `element` at least as tall as it has been at this width: a text that wraps onto fewer
 * lines after an update (the headline) then leaves its space instead of pulling the charts
 * below it up. A new width (the notebook resized) starts over.
 * Returns `settle`, to call after each change of the element's content.
 */
export function holdHeight(element, root) {
  let width = 0;
  element.style.boxSizing = "border-box"; // the height held is the one measured, padding in
  const settle = () => {
    const now = root.getBoundingClientRect().width;
    if (now !== width) {
      width = now;
      element.style.minHeight = "";
    }
    const height = element.getBoundingClientRect().height;
    const held = parseFloat(element.style.minHeight) || 0;
    if (height > held) element.style.minHeight = `${Math.ceil(height)}px`;
  };
  return settle;
}

/**
 * `element`, a text of any length (the headline), kept at `FIXED_LINES` lines whatever text
 * an update gives it, so that the charts below never move: a longer text is cut at the last
 * line with an ellipsis, and a "show all" button beside it (there only while the text is cut;
 * its place is kept, so that the text never rewraps) opens it whole, which moves what is
 * below only because the reader asked. The whole text stays in the page (a screen reader
 * reads it all) and in the element's tooltip.
 *
 * @returns `box` (the element and its button, to place instead of the element), `settle`
 *   (to call after each change of the element's text) and `dispose`
 */
export function fixedLines(element, root) {
  const more = h("button", { type: "button", class: "bbt-more-lines" });
  const box = h("div", { class: "bbt-fixed-lines" }, element, more);
  element.classList.add("bbt-clamped"); // FIXED_LINES lines (widget.css)
  const hold = holdHeight(element, root); // opened: fewer lines after an update stay put
  let open = false;
  const settle = () => {
    if (open) hold();
    const cut = !open && element.scrollHeight > element.clientHeight + 1;
    more.style.visibility = open || cut ? "" : "hidden"; // hidden, its place kept
    more.textContent = open ? "show less" : "show all";
    more.setAttribute("aria-expanded", String(open));
    more.title = open
      ? `back to ${FIXED_LINES} lines`
      : "the whole sentence (it is cut at the last line)";
  };
  more.addEventListener("click", () => {
    open = !open;
    element.classList.toggle("bbt-clamped", !open);
    element.style.minHeight = "";
    settle();
  });
  // a new width cuts the text at another place: the button follows (its place is kept)
  const observer =
    typeof ResizeObserver === "undefined"
      ? null
      : new ResizeObserver(() => {
          if (!open) settle();
        });
  observer?.observe(element);
  return { box, settle, dispose: () => observer?.disconnect() };
}
