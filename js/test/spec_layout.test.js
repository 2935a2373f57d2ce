import assert from "node:assert/strict";
import { test } from "node:test";

import { narrowSpec, rowsOf, titleLines, wrappedLabelExpr } from "../src/spec_layout.js";
import { HTML, RLO } from "./hostile.js";

test("a title breaks at its '; ' first, then between words, within the width", () => {
  assert.deepEqual(titleLines("short; and the second part here", 14), [
    "short;",
    "and the second",
    "part here",
  ]);
  // a word longer than the line keeps a line of its own
  assert.deepEqual(titleLines("a extraordinarily b", 5), ["a", "extraordinarily", "b"]);
  for (const line of titleLines("one two three four five six seven eight", 10)) {
    assert.ok(line.length <= 10, line);
  }
});

test("a hostile title is only cut between words, never changed", () => {
  const text = `${HTML} vs ${RLO}`;
  assert.equal(titleLines(text, 12).join(" "), text);
});

test("the legend's label expression wraps at the given width", () => {
  assert.equal(
    wrappedLabelExpr(20),
    "split(trim(replace(datum.label, regexp('(.{1,20})(\\\\s+|$)', 'g'), '$1\\n')), '\\n')",
  );
});

test("a spec with no narrowing asked for is the same object", () => {
  const spec = { hconcat: [{ width: 200 }, { width: 200 }] };
  assert.equal(narrowSpec(spec, {}), spec);
});

test("stacked, side-by-side views go one under the other, as wide as the row was", () => {
  const spec = {
    hconcat: [
      { width: 200, encoding: { y: { field: "a", axis: { labels: false } } } },
      { width: 150, encoding: { y: { field: "a", axis: { labels: false } } } },
    ],
    datasets: { name: "kept" },
  };
  const out = narrowSpec(spec, { stack: true }, 1, 200);
  assert.equal(out.hconcat, undefined);
  assert.equal(out.vconcat.length, 2);
  assert.deepEqual(
    out.vconcat.map((view) => view.width),
    [350, 350],
  );
  // the first keeps its axis as built; the second gets the labels it shared with its neighbour
  assert.equal(out.vconcat[0].encoding.y.axis.labels, false);
  assert.deepEqual(out.vconcat[1].encoding.y.axis, { labels: true, ticks: true, domain: true });
  assert.deepEqual(out.datasets, { name: "kept" });
  assert.ok(spec.hconcat, "the spec given is not changed");
});

test("stacked, column facets wrap and side legends go on top", () => {
  const spec = {
    facet: { column: { field: "metric" } },
    spec: { mark: "point", encoding: { color: { legend: { orient: "right" } } } },
  };
  const out = narrowSpec(spec, { stack: true });
  assert.deepEqual(out.facet, { field: "metric" });
  assert.equal(out.columns, 2);
  assert.equal(out.resolve.axis.x, "independent");
  assert.equal(out.spec.encoding.color.legend.orient, "top");
});

test("shrunk, fixed widths scale down (not below 60 px) and cells stay square", () => {
  const spec = {
    vconcat: [
      { width: 400 },
      { width: 100 },
      { width: { step: 20 }, height: { step: 20 } },
      { width: { step: 10 }, height: { step: 10 } },
    ],
  };
  const out = narrowSpec(spec, { shrink: true }, 0.5);
  assert.deepEqual(
    out.vconcat.map((v) => [v.width, v.height]),
    [
      [200, undefined],
      [60, undefined],
      [{ step: 10 }, { step: 10 }],
      [{ step: 9 }, { step: 9 }], // never below 9 px: the labels could not be read
    ],
  );
  // a ratio above 1 does not widen a shrunk view
  assert.equal(narrowSpec({ width: 300 }, { shrink: true }, 2).width, 300);
});

test("a view that grows widens at most three times and keeps its titles whole", () => {
  const title = { text: "x ".repeat(60).trim() };
  assert.equal(narrowSpec({ width: 100, title }, { grow: true }, 2).width, 200);
  assert.equal(narrowSpec({ width: 100 }, { grow: true }, 10).width, 300);
  assert.equal(narrowSpec({ width: 100, title }, { grow: true }, 2).title.text, title.text);
  // narrowed otherwise, a long title breaks into lines
  const lines = narrowSpec({ width: 100, title }, { stack: true }, 1, 30).title.text;
  assert.ok(Array.isArray(lines) && lines.every((line) => line.length <= 30));
});

test("columns of data become the rows Vega reads", () => {
  assert.deepEqual(rowsOf({ a: [1, 2], b: [HTML, RLO] }), [
    { a: 1, b: HTML },
    { a: 2, b: RLO },
  ]);
  assert.deepEqual(rowsOf({}), []);
  assert.deepEqual(rowsOf(undefined), []);
});
