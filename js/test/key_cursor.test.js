import assert from "node:assert/strict";
import { test } from "node:test";

import { movesCursor, nextTarget, pickedParts, targetParts } from "../src/key_cursor.js";
import { HTML, RLO } from "./hostile.js";

/** Cells of an n x n decision matrix without its diagonal, 10 px each, left at `left`. */
function matrix(n, left = 0, top = 0, name = "m") {
  const cells = [];
  for (let r = 0; r < n; r += 1) {
    for (let c = 0; c < n; c += 1) {
      if (r === c) continue;
      cells.push({ id: `${name}${r}${c}`, x: left + 10 * c, y: top + 10 * r, width: 10, height: 10 });
    }
  }
  return cells;
}

test("the arrows move one cell in the matrix, skipping its empty diagonal", () => {
  const cells = matrix(4);
  assert.equal(nextTarget(cells, "m01", "ArrowRight"), "m02");
  assert.equal(nextTarget(cells, "m01", "ArrowDown"), "m21"); // over the empty (1, 1)
  assert.equal(nextTarget(cells, "m10", "ArrowRight"), "m12"); // over the empty (1, 1)
  assert.equal(nextTarget(cells, "m21", "ArrowUp"), "m01");
  assert.equal(nextTarget(cells, "m12", "ArrowLeft"), "m10");
});

test("at an edge the cursor stays; it never jumps to another row or column", () => {
  const cells = matrix(3);
  assert.equal(nextTarget(cells, "m02", "ArrowRight"), "m02");
  assert.equal(nextTarget(cells, "m01", "ArrowUp"), "m01");
  assert.equal(nextTarget(cells, "m10", "ArrowLeft"), "m10");
  assert.equal(nextTarget(cells, "m21", "ArrowDown"), "m21");
});

test("from the weak matrix to the strong one beside it, in the same row", () => {
  const cells = [...matrix(3, 0, 0, "w"), ...matrix(3, 60, 0, "s")];
  assert.equal(nextTarget(cells, "w12", "ArrowRight"), "s10");
  assert.equal(nextTarget(cells, "s10", "ArrowLeft"), "w12");
  // and to the one below it, in the same column
  const stacked = [...matrix(3, 0, 0, "w"), ...matrix(3, 0, 60, "s")];
  assert.equal(nextTarget(stacked, "w21", "ArrowDown"), "s01");
});

test("the ranking's rows: up and down, Home and End; left and right stay", () => {
  const rows = ["a", "b", "c"].map((id, i) => ({ id, x: 0, y: 20 * i, width: 400, height: 12 }));
  assert.equal(nextTarget(rows, "a", "ArrowDown"), "b");
  assert.equal(nextTarget(rows, "c", "ArrowUp"), "b");
  assert.equal(nextTarget(rows, "b", "ArrowRight"), "b");
  assert.equal(nextTarget(rows, "b", "End"), "c");
  assert.equal(nextTarget(rows, "b", "Home"), "a");
  assert.equal(nextTarget(rows, "b", "Enter"), "b"); // not a move
});

test("no cursor yet, or its mark no longer drawn: the first; no marks: none", () => {
  const rows = [{ id: "a", x: 0, y: 0, width: 9, height: 9 }];
  assert.equal(nextTarget(rows, null, "ArrowDown"), "a");
  assert.equal(nextTarget(rows, "gone", "ArrowUp"), "a");
  assert.equal(nextTarget([], "a", "ArrowUp"), null);
});

test("which keys move the cursor", () => {
  for (const key of ["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "Home", "End"]) {
    assert.ok(movesCursor(key), key);
  }
  for (const key of ["Enter", " ", "Tab", "a", "Escape"]) assert.ok(!movesCursor(key), key);
});

test("what is under the cursor and what was picked, the names kept apart as names", () => {
  const row = { kind: "algorithm", algorithm: HTML };
  assert.deepEqual(targetParts(row, 2, 16), ["ranking row 3 of 16: ", { name: HTML }]);
  assert.deepEqual(pickedParts(row), ["picked ", { name: HTML }, ": its pairs are listed below"]);
  const cell = { kind: "pair", interpretation: "weak", row: HTML, col: RLO, decision: "row better" };
  assert.deepEqual(targetParts(cell, 0, 1), [
    "weak matrix, ",
    { name: HTML },
    " vs ",
    { name: RLO },
    ": row better",
  ]);
  assert.deepEqual(pickedParts(cell), ["picked ", { name: HTML }, " vs ", { name: RLO }, ": listed below"]);
});
