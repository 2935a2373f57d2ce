import assert from "node:assert/strict";
import { test } from "node:test";

import { changeParts, meanText } from "../src/pair_text.js";

test("a mean shows the decimals that tell it from the other one", () => {
  // buggyCrx, xgb vs lgbm in the paper's base results: 4 decimals print both as 0.8666
  assert.equal(meanText(0.8666403414437425, 4), meanText(0.8666319397768519, 4));
  assert.equal(meanText(0.8666403414437425, 5), "0.86664");
  assert.equal(meanText(0.8666319397768519, 5), "0.86663");
  assert.equal(meanText(0.5), "0.5000"); // no digits given: 4
  assert.equal(meanText(null, 5), "\u2014");
  assert.equal(meanText(undefined), "\u2014");
  assert.equal(meanText(Number.NaN, 4), "\u2014");
});

test("the what-changed line says which wins became ties, with names as parts", () => {
  const changed = {
    settings: [["d_min", "off", "0.2"]],
    moves: [
      ["a", "tie", 5],
      ["b", "tie", 1],
    ],
    model: [
      ["a", 51, 46],
      ["ties", 0, 3],
    ],
  };
  const parts = changeParts(changed);
  const text = parts.map((p) => (typeof p === "string" ? p : `<${p.name}>`)).join("");
  assert.equal(
    text,
    "d_min off \u2192 0.2: 5 wins of <a> became ties, 1 win of <b> became a tie; " +
      "given to the model: <a> 46 (was 51), ties 3 (was 0).",
  );
  const back = changeParts({ settings: [], moves: [["tie", "b", 2]], model: [] });
  assert.deepEqual(back, ["Counts changed: ", "2 ties", " became wins of ", { name: "b" }, "."]);
  const lost = changeParts({ settings: [["paired", "yes", "no"]], moves: [["a", "no result", 1]] });
  assert.deepEqual(lost, ["paired yes \u2192 no: ", "1 win of ", { name: "a" }, " lost its result", "."]);
});

test("no line without a change of the pair's counts", () => {
  assert.deepEqual(changeParts({}), []);
  assert.deepEqual(changeParts(undefined), []);
  assert.deepEqual(changeParts({ settings: [["hdi", "0.89", "0.95"]], moves: [], model: [] }), []);
});
