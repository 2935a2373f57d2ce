// Nothing moves when the kernel answers: the parts of the page that come and go with an update
// (the "updating" marks, the note of the claims a change flipped, the preview note) are drawn
// over a view or in a slot of fixed height, never pushed into the flow above the charts.

import { h } from "./controls.js";

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
