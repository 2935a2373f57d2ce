// A short glossary behind a "?" button: what the widget's words mean, each entry citing the
// paper that defines it. The entries are bbt_widget/core/terms.py's (trait option_lists), the
// same the controls' tooltips quote: one text per idea.
import { h, uniqueId } from "./controls.js";
import "./teaching.css";

/** The paper every entry cites. */
const PAPER =
  "Wainer, \u201cA Bayesian Bradley-Terry model to compare multiple ML algorithms on " +
  "multiple data sets\u201d";

const TITLE =
  "Glossary: what P(a > b), HDI, ROPE, local ROPE, the weak and strong rules and ties " +
  "mean, with the paper's sections";

/**
 * The "?" button and the glossary it opens (Escape, or the button again, closes it), for
 * `model` (its option_lists.terms: [key, term, what it means, section of the paper]).
 *
 * @returns {{ button: HTMLElement, panel: HTMLElement }}
 */
export function buildGlossary(model) {
  const panelId = uniqueId("glossary");
  const button = h("button", {
    type: "button",
    class: "bbt-glossary-button",
    text: "?",
    title: TITLE,
    "aria-label": TITLE,
    "aria-expanded": "false",
    "aria-controls": panelId,
  });
  const close = h("button", {
    type: "button",
    class: "bbt-glossary-close",
    text: "close",
    title: "Close the glossary",
  });
  const list = h(
    "dl",
    { class: "bbt-glossary-list" },
    ...((model.get("option_lists") || {}).terms || []).flatMap(([, term, text, section]) => [
      h("dt", { text: term }),
      h("dd", {}, text, " ", h("cite", { text: `(${PAPER}, ${section})` })),
    ]),
  );
  const panel = h(
    "div",
    { id: panelId, class: "bbt-glossary", role: "region", "aria-label": "Glossary" },
    h("div", { class: "bbt-glossary-head" }, h("strong", { text: "Glossary" }), close),
    list,
  );
  panel.hidden = true;
  const show = (open) => {
    panel.hidden = !open;
    button.setAttribute("aria-expanded", String(open));
    if (open) close.focus();
    else button.focus();
  };
  button.addEventListener("click", () => show(panel.hidden));
  close.addEventListener("click", () => show(false));
  panel.addEventListener("keydown", (event) => {
    if (event.key === "Escape") show(false);
  });
  return { button, panel };
}
