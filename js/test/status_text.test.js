import assert from "node:assert/strict";
import { test } from "node:test";

import {
  auditBadge,
  diagnosticsBadge,
  progressValue,
  spokenBadge,
  statusShown,
} from "../src/status_text.js";
import { ALL, HTML, RLO } from "./hostile.js";

test("the status says 'done' only once the charts are drawn", () => {
  assert.deepEqual(statusShown("done", "fit done", true), {
    state: "drawing",
    text: "drawing the charts",
    busy: false,
  });
  assert.deepEqual(statusShown("done", "fit done", false), {
    state: "done",
    text: "fit done",
    busy: false,
  });
});

test("the progress bar shows while the kernel fits, and an idle widget says so", () => {
  for (const state of ["compiling", "sampling", "queued"]) {
    assert.equal(statusShown(state, "", true).busy, true, state);
  }
  assert.deepEqual(statusShown(undefined, undefined, false), {
    state: "idle",
    text: "idle",
    busy: false,
  });
  assert.equal(statusShown("error", "", false).text, "error");
});

test("a progress that is no fraction makes the bar indeterminate", () => {
  assert.equal(progressValue(0.25), 0.25);
  assert.equal(progressValue(0), 0);
  for (const value of [-1, NaN, Infinity, null, undefined, "0.5"]) {
    assert.equal(progressValue(value), null, String(value));
  }
});

test("no diagnostics badge before the first fit", () => {
  assert.equal(diagnosticsBadge({}), null);
  assert.equal(diagnosticsBadge(undefined), null);
});

test("the badge's colour: failed, then preview, then fine or to check", () => {
  const kind = (diag) => diagnosticsBadge({ ok: true, ...diag }).kind;
  assert.equal(kind({ failed: true, preview: true }), "bbt-badge-failed");
  assert.equal(kind({ preview: true }), "bbt-badge-preview");
  assert.equal(kind({}), "bbt-badge-ok");
  assert.equal(kind({ ok: false }), "bbt-badge-warn");
  assert.equal(diagnosticsBadge({ ok: false }).label, "check diagnostics");
  assert.equal(diagnosticsBadge({ ok: true }).label, "diagnostics fine");
});

test("the badge's tooltip gives R-hat, ESS and divergences, then the messages", () => {
  const badge = diagnosticsBadge({
    ok: false,
    label: "R-hat 1.02",
    max_rhat: 1.01849,
    min_ess_bulk: 399.6,
    min_ess_tail: 250.2,
    divergences: 3,
    messages: ["R-hat above 1.01", "", "run longer chains"],
  });
  assert.equal(badge.label, "R-hat 1.02");
  assert.equal(
    badge.title,
    "R-hat max 1.018, ESS min 400 (bulk), 250 (tail), divergences 3\n" +
      "R-hat above 1.01\nrun longer chains",
  );
  // numbers that are missing are left out, not shown as NaN
  assert.equal(diagnosticsBadge({ ok: true, max_rhat: null, messages: ["m"] }).title, "m");
});

test("messages and labels with hostile names come back as the same text", () => {
  for (const name of ALL) {
    const badge = diagnosticsBadge({ ok: false, label: name, messages: [name] });
    assert.equal(badge.label, name);
    assert.equal(badge.title, name);
  }
});

test("a screen reader hears the badge's label, then every line of its tooltip", () => {
  const badge = diagnosticsBadge({
    ok: true,
    label: "diagnostics fine; Stan check: running (40%)",
    max_rhat: 1.002,
    messages: ["Stan (NUTS) cross-check of these numbers: sampling with NUTS"],
  });
  assert.equal(
    badge.ariaLabel,
    "diagnostics fine; Stan check: running (40%). R-hat max 1.002. " +
      "Stan (NUTS) cross-check of these numbers: sampling with NUTS",
  );
  assert.equal(spokenBadge("diagnostics fine", ""), "diagnostics fine");
  for (const name of ALL) {
    assert.equal(spokenBadge(name, "R-hat max 1.002"), `${name}. R-hat max 1.002`);
  }
});

test("the audit badge lists warnings before notes, each finding as it is", () => {
  assert.equal(auditBadge({}), null);
  const badge = auditBadge({ count: 2, label: "2 findings", warnings: [HTML], notes: [RLO] });
  assert.equal(badge.kind, "bbt-badge-warn");
  assert.equal(badge.title, `${HTML}\n${RLO}\n(click for the list)`);
  assert.deepEqual([badge.warnings, badge.notes], [[HTML], [RLO]]);
  assert.equal(auditBadge({ count: 0, label: "data fine" }).kind, "bbt-badge-ok");
  assert.deepEqual(auditBadge({ count: 0, label: "x" }).warnings, []);
});
