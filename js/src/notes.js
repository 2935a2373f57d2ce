// The notes under the headline: the claims the last change flipped (widget/claims.py),
// flashed for a few seconds, and the note that the charts show a preview. Both sit in one
// slot of fixed height (still.js), so that showing them moves no chart.

import { h } from "./controls.js";
import { noteSlot } from "./still.js";

/** How long the note of flipped claims stays highlighted after a change (ms). */
const FLASH_MS = 4000;

/**
 * @param model the widget's model
 * @param el the widget's element (data-claims-changed and data-preview, for tests)
 * @param onFlash called when the pairs to outline in the matrices change
 */
export function buildNotes(model, el, onFlash) {
  const claimsNote = h("div", { class: "bbt-small bbt-claims-note", role: "status" });
  claimsNote.hidden = true;
  // Shown while the charts (and so the decisions) come from a preview: a Laplace
  // approximation of the same model that the full fit replaces.
  const previewText =
    "preview: decisions from an approximation of the model; the full fit replaces them";
  const previewNote = h("div", { class: "bbt-preview-note", text: previewText, title: previewText });
  previewNote.hidden = true;
  let flashTimer = null;
  let flashKeys = [];

  const showClaimChanges = () => {
    const changes = model.get("claim_changes") || {};
    const text = changes.text || "";
    claimsNote.textContent = text; // text, never HTML: names are shown as they are
    claimsNote.title = text; // the whole list when the slot's line cuts it
    claimsNote.hidden = !text;
    el.dataset.claimsChanged = String(changes.count || 0);
    clearTimeout(flashTimer);
    claimsNote.classList.toggle("bbt-flash", Boolean(text));
    flashKeys = Array.isArray(changes.keys) ? changes.keys : [];
    onFlash();
    if (text) {
      flashTimer = setTimeout(() => {
        claimsNote.classList.remove("bbt-flash");
        flashKeys = [];
        onFlash();
      }, FLASH_MS);
    }
  };

  const showPreview = (root, chartBox) => {
    const preview = Boolean(model.get("preview"));
    previewNote.hidden = !preview;
    root.dataset.preview = String(preview);
    el.dataset.preview = String(preview);
    chartBox.classList.toggle("bbt-previewing", preview);
  };

  return {
    slot: noteSlot(previewNote, claimsNote),
    showClaimChanges,
    showPreview,
    flashKeys: () => flashKeys,
    dispose: () => clearTimeout(flashTimer),
  };
}
