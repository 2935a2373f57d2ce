import assert from "node:assert/strict";
import { test } from "node:test";

import { FakeModel, installFakeDom } from "./fake_dom.js";
import { ALL, HTML } from "./hostile.js";

installFakeDom();
const { buildControls, h, uniqueId } = await import("../src/controls.js");

test("h() sets text as text: a hostile name is one text node, no element", () => {
  for (const name of ALL) {
    const node = h("span", { text: name, title: name });
    assert.equal(node.textContent, name);
    assert.equal(node.children.length, 0);
    assert.equal(node.getAttribute("title"), name);
  }
});

test("h() skips unset attributes, writes true as present, and appends children", () => {
  const node = h("input", { class: "a b", disabled: true, hidden: false, min: 0, max: null }, "x");
  assert.equal(node.className, "a b");
  assert.equal(node.getAttribute("disabled"), "");
  assert.equal(node.getAttribute("hidden"), null);
  assert.equal(node.getAttribute("min"), "0");
  assert.equal(node.getAttribute("max"), null);
  assert.equal(node.textContent, "x");
});

test("ids are unique within the page", () => {
  const ids = new Set(Array.from({ length: 50 }, () => uniqueId("d_min")));
  assert.equal(ids.size, 50);
});

/** Every element below `node` (depth first). */
const all = (node) => node.children.flatMap((child) => [child, ...all(child)]);

test("the panel offers the algorithms as options, hostile names as text", () => {
  const model = new FakeModel({ algorithms: [HTML, "svm"], control: "", focus: "", option_lists: {} });
  const panel = buildControls(model);
  const focus = all(panel.element).find((node) => node.getAttribute("data-trait") === "focus");
  assert.deepEqual(
    focus.children.map((option) => [option.getAttribute("value"), option.textContent]),
    [
      ["", "all algorithms"],
      [HTML, HTML],
      ["svm", "svm"],
    ],
  );
  assert.ok(focus.children.every((option) => option.children.length === 0));
  panel.dispose();
  assert.equal(model.listening(), 0);
});

test("a refused value is explained under its control, and cleared once accepted", () => {
  const model = new FakeModel({ option_lists: {}, input_errors: {} });
  const panel = buildControls(model);
  const line = all(panel.element).find((node) => node.getAttribute("data-refused") === "hdi");
  assert.equal(line.hidden, true);
  model.change("input_errors", { hdi: `hdi must be in (0, 1), not ${HTML}` });
  assert.equal(line.textContent, `hdi must be in (0, 1), not ${HTML}`);
  assert.equal(line.hidden, false);
  model.change("input_errors", {});
  assert.equal(line.hidden, true);
  panel.dispose();
});

test("a control writes its trait back; invalid text in a number is not sent", () => {
  const model = new FakeModel({ option_lists: {}, hdi: 0.89 });
  const panel = buildControls(model);
  const hdi = all(panel.element).find((node) => node.getAttribute("data-trait") === "hdi");
  hdi.value = "0.95";
  hdi.dispatch("change");
  assert.equal(model.get("hdi"), 0.95);
  assert.equal(model.saved, 1);
  hdi.value = "abc";
  hdi.dispatch("change");
  assert.equal(model.get("hdi"), 0.95);
  assert.equal(model.saved, 1);
  assert.equal(hdi.value, "0.95"); // the last good value is shown again
  panel.dispose();
});
