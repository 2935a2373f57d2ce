// What a click in a chart picked, always shown: a matrix cell (a pair), a ranking row or a
// CD-diagram point (an algorithm) asks the kernel to list it in the pairwise view (which
// changes "Show pairs of" and the search as needed, widget/pair_filters.py's `reveal`, and
// says so under the pair filters); the view is then scrolled into sight.
// A pair highlighted from Python that the view does not list gets a chip saying so.

import { h } from "./controls.js";
import { hiddenPairText } from "./pair_rows.js";

/**
 * @param model the widget's model
 * @param pairsView the pairwise view's element (scrolled to after a click)
 * @param setPair sets the highlighted pair ("" clears it)
 * @returns {{chip: HTMLElement, showPair: (key: string) => void,
 *   showAlgorithm: (name: string) => void, showChip: () => void, afterDraw: () => void}}
 */
export function buildSelection(model, pairsView, setPair) {
  const chipText = h("span", { class: "bbt-chip-text" });
  const chipClear = h("button", {
    type: "button",
    class: "bbt-chip-clear",
    text: "×",
    title: "clear the highlighted pair",
    "aria-label": "clear the highlighted pair",
  });
  const chip = h("div", { class: "bbt-chip" }, chipText, chipClear);
  chip.hidden = true;
  chipClear.addEventListener("click", () => setPair(""));
  let scrollPending = false;

  const show = (content) => {
    scrollPending = true;
    model.send({ action: "show", ...content });
  };

  const showChip = () => {
    const panel = model.get("pair_panel") || {};
    const key = model.get("selected_pair") || "";
    const text = hiddenPairText(key, model.get("focus") || "", [panel.a, panel.b]);
    chip.hidden = text === null;
    if (text !== null) chipText.textContent = text;
  };

  // once the pairwise view is drawn with what was clicked: into sight, unless it is already
  const afterDraw = () => {
    if (!scrollPending) return;
    scrollPending = false;
    const box = pairsView.getBoundingClientRect();
    if (box.top < 0 || box.top > window.innerHeight - 60) {
      pairsView.scrollIntoView({ block: "start" });
    }
  };

  return {
    chip,
    showPair: (key) => show({ pair: key }),
    showAlgorithm: (name) => show({ algorithm: name }),
    showChip,
    afterDraw,
  };
}
