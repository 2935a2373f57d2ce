import assert from "node:assert/strict";
import { test } from "node:test";

import { FakeElement, FakeModel, installFakeDom } from "./fake_dom.js";
import { ALL, HTML } from "./hostile.js";

installFakeDom();
const { buildMessages, buildStatusLine } = await import("../src/status_line.js");

function statusLine(traits) {
  const model = new FakeModel(traits);
  const el = new FakeElement("div");
  const root = new FakeElement("div");
  return { model, el, root, line: buildStatusLine(model, el, root) };
}

test("the audit's findings are list items holding each name as text, never as markup", () => {
  const { model, el, line } = statusLine({
    audit: { count: ALL.length, label: HTML, warnings: ALL, notes: [HTML] },
  });
  line.showAudit();
  const items = line.auditList.children;
  assert.deepEqual(
    items.map((item) => item.textContent),
    [...ALL, HTML],
  );
  assert.ok(items.every((item) => item.tagName === "LI" && item.children.length === 0));
  assert.deepEqual(
    items.map((item) => item.className),
    [...ALL.map(() => "bbt-audit-warning"), "bbt-audit-note"],
  );
  assert.equal(el.dataset.auditCount, String(ALL.length));
  const badge = line.element.children.find((node) => node.tagName === "BUTTON");
  assert.equal(badge.textContent, HTML);
  assert.equal(badge.children.length, 0);
  // a click shows the list, another hides it
  assert.equal(line.auditList.hidden, true);
  badge.dispatch("click");
  assert.equal(line.auditList.hidden, false);
  // no audit (yet): no badge
  model.set("audit", {});
  line.showAudit();
  assert.equal(badge.hidden, true);
});

test("the status line marks the state on the element and hides the bar when idle", () => {
  const { model, el, root, line } = statusLine({ status: "sampling", progress: 0.5, fit_count: 2 });
  line.show(false);
  assert.equal(el.dataset.status, "sampling");
  assert.equal(root.dataset.status, "sampling");
  assert.equal(el.dataset.fits, "2");
  assert.equal(line.element.className, "bbt-status bbt-status-sampling");
  const bar = line.element.children.find((node) => node.tagName === "PROGRESS");
  assert.equal(bar.value, 0.5);
  assert.equal(bar.style.visibility, "");
  model.set("status", "done");
  model.set("status_text", "");
  line.show(true);
  assert.equal(el.dataset.status, "drawing");
  assert.equal(line.element.children[0].textContent, "drawing the charts");
  assert.equal(bar.style.visibility, "hidden");
});

test("message, error and caveat lines show each trait as text and hide when empty", () => {
  const model = new FakeModel({ message: HTML, error: "", caveat: ALL[2] });
  const lines = buildMessages(model, new FakeElement("div"));
  lines.show();
  assert.equal(lines.message.textContent, HTML);
  assert.equal(lines.message.children.length, 0);
  assert.equal(lines.message.hidden, false);
  assert.equal(lines.error.hidden, true);
  assert.equal(lines.caveat.textContent, ALL[2]);
  lines.showError(`Chart error: ${HTML}`);
  assert.equal(lines.error.textContent, `Chart error: ${HTML}`);
  assert.equal(lines.error.hidden, false);
});

test("the headline is text with the interpretation in its tooltip, hidden when empty", () => {
  const model = new FakeModel({ headline: `${HTML} is better`, interpretation: "weak" });
  const lines = buildMessages(model, new FakeElement("div"));
  lines.showHeadline();
  assert.equal(lines.headline.textContent, `${HTML} is better`);
  assert.equal(lines.headline.title, `${HTML} is better\n(interpretation: weak)`);
  assert.equal(lines.headline.hidden, false);
  model.set("headline", "");
  lines.showHeadline();
  assert.equal(lines.headline.hidden, true);
  assert.equal(lines.headline.title, "");
});

test("the diagnostics badge is reached by Tab and names its details to a screen reader", () => {
  const { model, line } = statusLine({
    diagnostics: { ok: true, label: HTML, messages: [ALL[1], "Stan check: agrees"] },
  });
  line.showBadge();
  const badge = line.element.children.find((node) => node.className.includes("bbt-diag-badge"));
  assert.equal(badge.getAttribute("tabindex"), "0");
  assert.equal(badge.getAttribute("role"), "note");
  assert.equal(badge.textContent, HTML);
  assert.equal(badge.children.length, 0);
  assert.equal(badge.getAttribute("aria-label"), `${HTML}. ${ALL[1]}. Stan check: agrees`);
  model.set("diagnostics", { ok: false, label: "check R-hat", messages: [] });
  line.showBadge();
  assert.equal(badge.getAttribute("aria-label"), "check R-hat");
});
