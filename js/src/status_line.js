// The lines above the charts: the status line (state, progress, diagnostics and data-audit
// badges), the headline (the answer in one sentence, Python's outputs.headline), and the
// message, caveat and error lines. Everything is shown as text, never as HTML.
import { h } from "./controls.js";
import { fixedLines } from "./still.js";
import { auditBadge, diagnosticsBadge, progressValue, statusShown } from "./status_text.js";

/** The status line, with its diagnostics and audit badges and the audit's list of findings. */
export function buildStatusLine(model, el, root) {
  const text = h("span", { class: "bbt-status-text" });
  const bar = h("progress", { class: "bbt-progress", max: 1, value: 0 });
  // Focusable, with its details in its accessible name: a keyboard user reaches it by Tab
  // and a screen reader reads what the tooltip shows to a mouse.
  const badge = h("span", { class: "bbt-badge bbt-diag-badge", tabindex: 0, role: "note" });
  // The data audit: count on the badge, findings in its tooltip and, on click, in a list.
  const audit = h("button", { type: "button", class: "bbt-badge bbt-audit-badge" });
  const auditList = h("ul", { class: "bbt-audit-list" });
  auditList.hidden = true;
  audit.addEventListener("click", () => {
    auditList.hidden = !auditList.hidden;
  });
  const element = h("div", { class: "bbt-status", role: "status" }, text, bar, badge, audit);

  /** `drawing`: chart updates are waiting or being drawn. */
  const show = (drawing) => {
    const shown = statusShown(model.get("status"), model.get("status_text"), drawing);
    root.dataset.status = shown.state;
    el.dataset.status = shown.state;
    el.dataset.fits = String(model.get("fit_count") ?? 0);
    element.className = `bbt-status bbt-status-${shown.state}`;
    text.textContent = shown.text;
    bar.style.visibility = shown.busy ? "" : "hidden"; // kept in the line: it does not reflow
    const progress = progressValue(model.get("progress"));
    if (progress === null) bar.removeAttribute("value"); // indeterminate
    else bar.value = progress;
  };

  const showBadge = () => {
    const shown = diagnosticsBadge(model.get("diagnostics"));
    badge.hidden = shown === null;
    if (shown === null) return;
    badge.className = `bbt-badge bbt-diag-badge ${shown.kind}`;
    badge.textContent = shown.label;
    badge.title = shown.title;
    badge.setAttribute("aria-label", shown.ariaLabel);
  };

  const showAudit = () => {
    const shown = auditBadge(model.get("audit"));
    audit.hidden = shown === null;
    if (shown === null) return;
    audit.className = `bbt-badge bbt-audit-badge ${shown.kind}`;
    audit.textContent = shown.label;
    el.dataset.auditCount = String(shown.count);
    audit.title = shown.title;
    auditList.replaceChildren(
      ...shown.warnings.map((line) => h("li", { class: "bbt-audit-warning", text: line })),
      ...shown.notes.map((line) => h("li", { class: "bbt-audit-note", text: line })),
    );
  };

  return { element, auditList, show, showBadge, showAudit };
}

/** The headline (in its box of fixed lines, `headlineBox`) and the message, caveat and error
 * lines. */
export function buildMessages(model, root) {
  const headline = h("div", { class: "bbt-headline", role: "note" });
  headline.hidden = true;
  const message = h("div", { class: "bbt-message", role: "alert" });
  const caveat = h("div", { class: "bbt-caveat" });
  const error = h("div", { class: "bbt-error", role: "alert" });

  // a fixed number of lines, whatever the sentence: the charts below stay put
  const lines = fixedLines(headline, root);
  lines.box.hidden = true; // with its button, until there is a sentence
  const showHeadline = () => {
    const text = model.get("headline") || "";
    headline.textContent = text;
    headline.title = text ? `${text}\n(interpretation: ${model.get("interpretation")})` : "";
    headline.hidden = !text;
    lines.box.hidden = !text;
    if (text) lines.settle();
  };
  /** The message, error and caveat traits, each on its line (hidden when empty). */
  const show = () => {
    for (const [line, name] of [
      [message, "message"],
      [error, "error"],
      [caveat, "caveat"],
    ]) {
      const value = model.get(name) || "";
      line.textContent = value;
      line.hidden = !value;
    }
  };
  /** An error of the page itself (a chart that could not be drawn), on the error line. */
  const showError = (text) => {
    error.textContent = text;
    error.hidden = false;
  };
  return {
    headline,
    headlineBox: lines.box,
    message,
    caveat,
    error,
    show,
    showHeadline,
    showError,
    dispose: lines.dispose,
  };
}
