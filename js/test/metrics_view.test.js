import assert from "node:assert/strict";
import { test } from "node:test";

import { balance } from "../src/bidi.js";
import { FakeModel, installFakeDom } from "./fake_dom.js";
import { HTML, OPEN_ISOLATE, RLO } from "./hostile.js";

installFakeDom();
const { buildMetricsView, claimRows, emptyText } = await import("../src/metrics_view.js");

const ROWS = [
  { alg_a: "a", alg_b: "b", metrics_better: ["acc"], metrics_worse: ["time"], dominates: false },
  { alg_a: "b", alg_b: "a", metrics_better: [], metrics_worse: ["acc"], dominates: false },
  { alg_a: "c", alg_b: "a", metrics_better: ["acc", "time"], metrics_worse: [], dominates: true },
];

test("each claim is listed once, dominating pairs first", () => {
  const rows = claimRows({ rows: ROWS }, false);
  assert.deepEqual(
    rows.map((r) => [r.alg_a, r.alg_b]),
    [
      ["c", "a"],
      ["a", "b"],
    ],
  );
  assert.deepEqual(
    claimRows({ rows: ROWS }, true).map((r) => r.alg_a),
    ["c"],
  );
  assert.deepEqual(claimRows({}, false), []);
});

test("an empty table says why", () => {
  assert.equal(emptyText([ROWS[0]], {}, false), "");
  assert.equal(emptyText([], { fitted: [] }, false), "waiting for the first metric's fit");
  assert.equal(emptyText([], { fitted: ["acc"] }, true), "no algorithm dominates another");
  assert.equal(emptyText([], { fitted: ["acc"] }, false), "no pair has a claim on any metric");
});

test("hostile metric names are isolated text: '(lower is better)' stays after its name", () => {
  const metrics = [HTML, RLO, OPEN_ISOLATE];
  const model = new FakeModel({
    metrics,
    dominance_data: {
      lower: [RLO],
      rule: "weak",
      pareto: [HTML],
      fitted: metrics,
      rows: [{ alg_a: HTML, alg_b: RLO, metrics_better: metrics, metrics_worse: [], dominates: true }],
    },
  });
  const view = buildMetricsView(model);
  const directions = view.element.findAll("bbt-metrics-directions")[0];
  const names = directions.children;
  assert.deepEqual(
    names.map((node) => [node.tagName, node.textContent]),
    metrics.map((name) => ["BDI", balance(name)]),
  );
  assert.ok(names.every((node) => node.children.length === 0));
  // the direction of each metric is plain text after its isolated name
  const parts = directions.childNodes;
  assert.equal(parts[parts.indexOf(names[1]) + 1], " (lower is better)");
  assert.equal(parts[parts.indexOf(names[0]) + 1], " (higher is better)");
  const member = view.element.findAll("bbt-pareto-member")[0];
  assert.equal(member.textContent, HTML);
  assert.equal(member.children.length, 0);
  const body = view.element.findAll("bbt-dominates")[0];
  const [algA, algB] = body.children;
  assert.equal(algA.textContent, HTML);
  assert.equal(algA.className, "bbt-in-pareto");
  assert.equal(algB.textContent, RLO);
  view.dispose();
  assert.equal(model.listening(), 0);
});
