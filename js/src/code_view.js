// "Settings as code": the bbt.fit(...) call (and summary) that reproduces the view, written
// by Python (BBTWidget.code(), bbt_widget/widget/export.py) and asked for by a custom message
// whenever the section is open and a setting changes; a button copies it.
import { h } from "./controls.js";

/** Traits whose change changes the code (the fit's and the view's settings). */
const CODE_TRAITS = [
  "status",
  "ties",
  "tie_threshold",
  "local_rope",
  "d_min",
  "paired",
  "lower_is_better",
  "hyperprior",
  "prior_scale",
  "rope_low",
  "rope_high",
  "hdi",
  "control",
  "interpretation",
  "selected_group",
  "metric",
];

/**
 * @param {any} model the widget's model
 * @returns {{element: HTMLElement}}
 */
export function buildCodeView(model) {
  const code = h("pre", { class: "bbt-code-text" });
  const copy = h("button", {
    type: "button",
    class: "bbt-code-copy",
    text: "Copy",
    title: "copy the code to the clipboard",
  });
  const note = h("span", { class: "bbt-small bbt-code-note" });
  const section = h(
    "details",
    { class: "bbt-section bbt-code" },
    h("summary", {
      text: "Settings as code",
      title:
        "the bbt.fit(...) call, with the summary, that reproduces this view in a script " +
        "(the results as df); also w.code() in Python",
    }),
    h("div", { class: "bbt-status" }, copy, note),
    code,
  );
  let asked = false;
  const ask = () => {
    if (!section.open || asked) return;
    // after the change is sent: a control sets its trait, then saves it; asked at once, the
    // kernel would write the code of the settings before it
    asked = true;
    setTimeout(() => {
      asked = false;
      model.send({ action: "code" });
    }, 0);
  };
  section.addEventListener("toggle", ask);
  for (const name of CODE_TRAITS) model.on(`change:${name}`, ask);
  model.on("msg:custom", (msg) => {
    if (msg && typeof msg.code === "string") code.textContent = msg.code; // text, never HTML
  });
  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(code.textContent);
      note.textContent = "copied";
    } catch {
      // no clipboard here (an insecure page, a denied permission): select it for Ctrl+C
      const range = document.createRange();
      range.selectNodeContents(code);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      note.textContent = "selected: press Ctrl+C (Cmd+C) to copy";
    }
  });
  return { element: section };
}
