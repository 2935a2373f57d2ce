import assert from "node:assert/strict";
import { test } from "node:test";

import { InStepMarks, forecastBehind, same } from "../src/in_step.js";
import { FakeElement, FakeModel } from "./fake_dom.js";

test("numbers from the kernel and from a control compare as values", () => {
  assert.ok(same(0.5, 0.5000000001));
  assert.ok(same(1000, 1000 + 1e-7));
  assert.ok(!same(0.5, 0.51));
  assert.ok(same(null, undefined)); // an unset trait is none
  assert.ok(!same("0.5", 0.5));
  assert.ok(same("weak", "weak"));
});

function marks(traits) {
  const model = new FakeModel(traits);
  const el = new FakeElement("div");
  const view = () => ({ box: new FakeElement("div"), label: new FakeElement("div") });
  const views = { pairs: { ...view(), also: [new FakeElement("div")] }, summary: view() };
  return { model, el, views, marks: new InStepMarks(model, el, views) };
}

test("the views the kernel lists are behind, and only those", () => {
  const settings = { hdi: 0.89, ties: "spread" };
  const { marks: m } = marks({ hdi: 0.89, ties: "spread", stale_views: { settings, views: ["summary"] } });
  assert.deepEqual(m.behind(), ["summary"]);
  assert.deepEqual(m.settingsTraits(), ["hdi", "ties"]);
});

test("a control moved here marks every view before the kernel answers", () => {
  const settings = { hdi: 0.89, ties: "spread" };
  const { marks: m } = marks({ hdi: 0.95, ties: "spread", stale_views: { settings, views: [] } });
  assert.deepEqual(m.behind(), ["pairs", "summary"]);
});

test("a widget saved without the trait marks nothing", () => {
  const { marks: m } = marks({ hdi: 0.95 });
  assert.deepEqual(m.behind(), []);
  assert.deepEqual(m.settingsTraits(), []);
});

test("a view being redrawn is marked until its drawing is done", async () => {
  const { marks: m, el, views } = marks({ stale_views: { settings: {}, views: [] } });
  let finish;
  const done = m.draw("pairs", () => new Promise((resolve) => (finish = resolve)));
  assert.equal(el.dataset.stale, "pairs");
  assert.ok(views.pairs.box.classList.contains("bbt-stale"));
  assert.ok(views.pairs.also[0].classList.contains("bbt-stale"));
  assert.equal(views.pairs.box.getAttribute("aria-busy"), "true");
  assert.equal(views.pairs.label.hidden, false);
  assert.equal(views.pairs.label.textContent, "updating: being drawn"); // nothing drawn yet
  finish();
  await done;
  assert.equal(el.dataset.stale, "");
  assert.ok(!views.pairs.box.classList.contains("bbt-stale"));
  assert.equal(views.pairs.box.getAttribute("aria-busy"), null);
  assert.equal(views.pairs.label.hidden, true);
});

test("the label says why a view is behind: a failed fit, a refused value, or updating", () => {
  const { marks: m, model } = marks({});
  assert.equal(m.reason(), "updating: this still shows the previous settings");
  model.set("message", "rope_low must be below rope_high");
  assert.match(m.reason(), /^not redrawn: see the message above/);
  model.set("status", "error");
  assert.match(m.reason(), /^not updated: the last fit failed/);
});

test("the forecast is behind while a newer one is on its way, or another pair or settings", () => {
  const pair = '["a", "b"]';
  const drawn = { pair, spec: { layer: [] }, sentences: ["..."] };
  assert.equal(forecastBehind({}, pair, true), false); // nothing shown: nothing behind
  assert.equal(forecastBehind(drawn, pair, false), false);
  assert.equal(forecastBehind({ ...drawn, pending: true }, pair, false), true);
  assert.equal(forecastBehind(drawn, '["a", "c"]', false), true); // another pair highlighted
  assert.equal(forecastBehind(drawn, "", false), true); // the highlight cleared
  assert.equal(forecastBehind(drawn, pair, true), true); // the fit or the ROPE moved
  // a note alone (no pair highlighted, or why there is no forecast) follows no settings
  assert.equal(forecastBehind({ pair: "", note: "Click a pair" }, "", true), false);
  assert.equal(forecastBehind({ pair: "", note: "Click a pair" }, pair, false), true);
});

test("a view that holds its height keeps at least its expected height once drawn", () => {
  const model = new FakeModel({ stale_views: { settings: {}, views: [] } });
  const box = new FakeElement("div");
  box.querySelector = () => ({}); // its chart is drawn
  let height = 1000;
  box.getBoundingClientRect = () => ({ top: 0, left: 0, width: 600, height });
  const label = new FakeElement("div");
  const m = new InStepMarks(model, new FakeElement("div"), {
    summary: { box, label, reserve: () => 1200, hold: true },
  });
  // drawn shorter than expected: the expected height kept, a deeper next drawing moves nothing
  assert.equal(box.style.minHeight, "1200px");
  height = 1300; // drawn taller: that height held
  m._keep("summary");
  assert.equal(box.style.minHeight, "1300px");
});
