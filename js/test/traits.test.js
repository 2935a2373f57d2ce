import assert from "node:assert/strict";
import { test } from "node:test";

import { decodeJson, jsonTrait, listen, oncePerTick, saveTrait } from "../src/traits.js";
import { FakeModel } from "./fake_dom.js";

const bytes = (value) => new TextEncoder().encode(JSON.stringify(value));

test("a JSON trait is decoded from an ArrayBuffer, a DataView or a typed array", () => {
  const value = { a: [1, 2.5, null], name: "<img src=x onerror=alert(1)>" };
  const array = bytes(value);
  assert.deepEqual(decodeJson(array), value);
  assert.deepEqual(decodeJson(array.buffer), value);
  assert.deepEqual(decodeJson(new DataView(array.buffer)), value);
});

test("an empty trait is {} and an object is kept as it is", () => {
  for (const raw of [null, undefined, ""]) assert.deepEqual(decodeJson(raw), {});
  const saved = { rows: [1] };
  assert.equal(decodeJson(saved), saved);
});

test("a JSON trait is decoded once per change, not once per read", () => {
  const model = new FakeModel({ fit_data: new DataView(bytes({ n: 1 }).buffer) });
  const read = jsonTrait(model, "fit_data");
  const first = read();
  assert.deepEqual(first, { n: 1 });
  assert.equal(read(), first); // the same object: not decoded again
  model.set("fit_data", new DataView(bytes({ n: 2 }).buffer));
  assert.deepEqual(read(), { n: 2 });
});

test("a burst of calls runs once, after the current task", async () => {
  let runs = 0;
  let starts = 0;
  const schedule = oncePerTick(
    () => (runs += 1),
    () => (starts += 1),
  );
  schedule();
  schedule();
  schedule();
  assert.equal(runs, 0);
  assert.equal(starts, 1);
  assert.equal(schedule.pending(), true);
  await Promise.resolve();
  assert.equal(runs, 1);
  assert.equal(schedule.pending(), false);
  schedule(); // a new burst
  await Promise.resolve();
  assert.deepEqual([runs, starts], [2, 2]);
});

test("listen() registers every handler and its return value removes them all", () => {
  const model = new FakeModel();
  const seen = [];
  const stop = listen(model, [
    ["change:a", () => seen.push("a1")],
    ["change:a", () => seen.push("a2")],
    ["change:b", () => seen.push("b")],
  ]);
  model.change("a", 1);
  model.change("b", 1);
  assert.deepEqual(seen, ["a1", "a2", "b"]);
  stop();
  assert.equal(model.listening(), 0);
});

test("saveTrait sets the trait and sends it", () => {
  const model = new FakeModel();
  saveTrait(model, "selected_pair", '["a","b"]');
  assert.equal(model.get("selected_pair"), '["a","b"]');
  assert.equal(model.saved, 1);
});
