import assert from "node:assert/strict";
import { test } from "node:test";

import { hiddenPairText, narrowedBy, pageAfter, pairCountText } from "../src/pair_rows.js";
import { ALL, HTML, RLO } from "./hostile.js";

test("turning the page stays within the pages there are", () => {
  const rows = { page: 1, pages: 3 };
  assert.equal(pageAfter(rows, 1), 2);
  assert.equal(pageAfter(rows, -1), 0);
  assert.equal(pageAfter({ page: 2, pages: 3 }, 1), 2);
  assert.equal(pageAfter({ page: 0, pages: 3 }, -1), 0);
  assert.equal(pageAfter({}, 1), 0); // one page before the first rows
});

test("the count line gives the pairs shown, matched and in all, and the page", () => {
  const rows = { page: 1, pages: 3, per_page: 20, matched: 45, total: 120 };
  assert.equal(pairCountText(rows, "", ""), "pairs 21-40 of 45 listed (120 in all); page 2 of 3");
  const last = { ...rows, page: 2 };
  assert.equal(pairCountText(last, "", ""), "pairs 41-45 of 45 listed (120 in all); page 3 of 3");
  const one = { page: 0, pages: 1, per_page: 20, matched: 6, total: 6 };
  assert.equal(pairCountText(one, "", ""), "pairs 1-6 of 6 listed (6 in all)");
  const none = { page: 0, pages: 1, per_page: 20, matched: 0, total: 6 };
  assert.equal(pairCountText(none, "", "zzz"), 'pairs 0-0 of 0 listed (matching "zzz"; 6 in all)');
  assert.equal(pairCountText({}, "svm", "x"), ""); // no rows yet
});

test("the count line says why fewer pairs are listed: the focus and the search words", () => {
  assert.equal(narrowedBy("", "  "), "");
  assert.equal(narrowedBy("svm", ""), "those of svm; ");
  assert.equal(narrowedBy("svm", " lgbm xgb "), 'those of svm; matching "lgbm xgb"; ');
  const rows = { page: 0, pages: 1, per_page: 20, matched: 2, total: 10 };
  assert.equal(
    pairCountText(rows, "svm", "lg"),
    'pairs 1-2 of 2 listed (those of svm; matching "lg"; 10 in all)',
  );
});

test("hostile names and search words reach the count line as they were typed", () => {
  const rows = { page: 0, pages: 1, per_page: 20, matched: 1, total: 3 };
  for (const name of ALL) {
    const text = pairCountText(rows, name, name);
    const words = name.trim();
    assert.equal(text, `pairs 1-1 of 1 listed (those of ${name}; matching "${words}"; 3 in all)`);
  }
});

test("the chip shows a highlighted pair that 'Show pairs of' hides, and only then", () => {
  const key = JSON.stringify(["lgbm", "xgb"]);
  assert.equal(hiddenPairText(key, "svm"), "highlighted: lgbm vs xgb (not shown)");
  assert.equal(hiddenPairText(key, "xgb"), null); // the focus's own pair is drawn
  assert.equal(hiddenPairText(key, ""), null); // every pair is drawn
  assert.equal(hiddenPairText("", "svm"), null);
});

test("the chip reads the pair best-ranked first, as the pair panel and tooltips do", () => {
  const key = JSON.stringify(["dt", "svm"]); // keys are sorted by name
  assert.equal(hiddenPairText(key, "lda", ["svm", "dt"]), "highlighted: svm vs dt (not shown)");
  // the panel of another pair (not yet updated) or none: the key's order
  assert.equal(hiddenPairText(key, "lda", ["svm", "xgb"]), "highlighted: dt vs svm (not shown)");
  const none = [undefined, undefined];
  assert.equal(hiddenPairText(key, "lda", none), "highlighted: dt vs svm (not shown)");
  const hostile = JSON.stringify([HTML, RLO].sort());
  const text = `highlighted: ${RLO} vs ${HTML} (not shown)`;
  assert.equal(hiddenPairText(hostile, "svm", [RLO, HTML]), text);
});

test("a key that is no pair shows no chip (and throws nothing)", () => {
  for (const key of ["not json", "{", '"ab"', "[1]", "3", "null", '["a","b","c"]']) {
    assert.equal(hiddenPairText(key, "svm"), null, key);
  }
});

test("hostile names reach the chip's text whole, RTL overrides included", () => {
  const key = JSON.stringify([HTML, RLO]);
  assert.equal(hiddenPairText(key, "svm"), `highlighted: ${HTML} vs ${RLO} (not shown)`);
  assert.equal(hiddenPairText(key, RLO), null);
});
