// What the status line says, decided apart from the DOM: the fit's state, the diagnostics
// badge and the data audit's badge. Every text here is set as text (textContent, title),
// never as HTML.

/** The states in which the kernel is at work on a fit (the progress bar is shown). */
const BUSY = ["compiling", "sampling", "queued"];

/**
 * The state and text the status line shows: "done" only once the new data are on screen (not
 * when they arrive), so while charts are still being drawn it says so.
 *
 * @param {string | undefined} status the trait status
 * @param {string | undefined} text the trait status_text
 * @param {boolean} drawing whether chart updates are waiting or being drawn
 * @returns {{state: string, text: string, busy: boolean}}
 */
export function statusShown(status, text, drawing) {
  const state = status || "idle";
  if (state === "done" && drawing) {
    return { state: "drawing", text: "drawing the charts", busy: false };
  }
  return { state, text: text || state, busy: BUSY.includes(state) };
}

/** A progress bar's value: a fraction, or null for an indeterminate bar. */
export function progressValue(progress) {
  return Number.isFinite(progress) && progress >= 0 ? progress : null;
}

/**
 * The diagnostics badge for the trait diagnostics: null (hidden) before the first fit, else
 * its class, its label and its tooltip (R-hat, ESS, divergences, then the messages).
 *
 * @returns {null | {kind: string, label: string, title: string, ariaLabel: string}}
 */
export function diagnosticsBadge(diag) {
  if (!diag || diag.ok === undefined) return null;
  const kind = diag.failed
    ? "bbt-badge-failed"
    : diag.preview
      ? "bbt-badge-preview"
      : diag.ok
        ? "bbt-badge-ok"
        : "bbt-badge-warn";
  const numbers = [];
  if (Number.isFinite(diag.max_rhat)) numbers.push(`R-hat max ${diag.max_rhat.toFixed(3)}`);
  if (Number.isFinite(diag.min_ess_bulk)) {
    numbers.push(`ESS min ${Math.round(diag.min_ess_bulk)} (bulk)`);
  }
  if (Number.isFinite(diag.min_ess_tail)) numbers.push(`${Math.round(diag.min_ess_tail)} (tail)`);
  if (Number.isFinite(diag.divergences)) numbers.push(`divergences ${diag.divergences}`);
  const label = diag.label || (diag.ok ? "diagnostics fine" : "check diagnostics");
  const title = [numbers.join(", "), ...(diag.messages || [])].filter(Boolean).join("\n");
  return { kind, label, title, ariaLabel: spokenBadge(label, title) };
}

/**
 * What a screen reader says on the badge: its label, then the details its tooltip shows
 * (which no keyboard or screen-reader user gets), one sentence per line.
 */
export function spokenBadge(label, title) {
  const details = (title || "").split("\n").filter(Boolean);
  return [label, ...details].join(". ");
}

/**
 * The data audit's badge for the trait audit: null (hidden) before the audit, else its class,
 * label, tooltip (every finding) and the findings to list, warnings first.
 *
 * @returns {null | {kind: string, label: string, title: string, count: number,
 *   warnings: string[], notes: string[]}}
 */
export function auditBadge(audit) {
  if (!audit || audit.count === undefined) return null;
  const warnings = audit.warnings || [];
  const notes = audit.notes || [];
  return {
    kind: audit.count ? "bbt-badge-warn" : "bbt-badge-ok",
    label: audit.label,
    title: [...warnings, ...notes].join("\n") + "\n(click for the list)",
    count: audit.count,
    warnings,
    notes,
  };
}
