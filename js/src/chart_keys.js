// The summary's charts by keyboard: one focus stop for the ranking's rows and one for the
// decision matrices' cells, each reached by Tab. The arrow keys move a cursor drawn over the
// chart (an outline laid over the mark, outside the SVG: the chart is not redrawn for it), and
// Enter or Space picks what it is on, as a click on that mark does. A caption under the cursor
// (a live region) says what is under it and what was picked. The marks are read from the live
// Vega view at each key, so a redraw (a new fit) never leaves the cursor on a stale list;
// where to go is decided in key_cursor.js.
import { isolated } from "./bidi.js";
import { h } from "./controls.js";
import { movesCursor, nextTarget, pickedParts, targetParts } from "./key_cursor.js";

/** The two stops: what each says to a screen reader, and which marks it moves over. */
const STOPS = [
  {
    kind: "algorithm",
    label:
      "Ranking rows: the arrow keys move over the algorithms, Enter lists the pairs of " +
      "the one under the cursor",
  },
  {
    kind: "pair",
    label:
      "Decision matrices: the arrow keys move over the cells, Enter lists the pair of the " +
      "cell under the cursor",
  },
];

/** Every scenegraph item of `view` under its root, depth first. */
function eachItem(view, visit) {
  const walk = (node) => {
    for (const child of node?.items || []) {
      if (child.mark && child.datum) visit(child);
      walk(child);
    }
  };
  walk(view.scenegraph().root);
}

/** An item's box in the view's coordinates: its bounds moved by each group it sits in. */
function viewBox(item) {
  let x = item.bounds.x1;
  let y = item.bounds.y1;
  for (let group = item.mark.group; group; group = group.mark?.group) {
    x += group.x || 0;
    y += group.y || 0;
  }
  return { x, y, width: item.bounds.width(), height: item.bounds.height() };
}

/** What a scenegraph item stands for: a ranking row (its datum has the ranking's P(best);
 * a CD point names an algorithm too), a matrix cell, or nothing to pick (null). */
function targetOf(item) {
  const d = item.datum;
  if (typeof d.algorithm === "string" && d.p_best !== undefined) {
    return { id: `a${JSON.stringify(d.algorithm)}`, kind: "algorithm", algorithm: d.algorithm };
  }
  if (typeof d.key === "string" && d.key && d.row !== undefined && d.interpretation) {
    const id = `p${JSON.stringify([d.interpretation, d.row, d.col])}`;
    const { key, interpretation, decision } = d;
    const [row, col] = [String(d.row), String(d.col)];
    return { id, kind: "pair", key, interpretation, decision, row, col };
  }
  return null;
}

/**
 * The marks of `kind` the live `view` draws, each a box in `frame`'s coordinates (a ranking
 * row is the union of its marks across the three panels), in reading order; [] before the
 * chart is drawn or while it is hidden.
 */
function targetsOf(view, kind, frame) {
  const svg = view?.container()?.querySelector("svg.marks");
  const svgBox = svg?.getBoundingClientRect();
  if (!svgBox || svgBox.width === 0) return [];
  const frameBox = frame.getBoundingClientRect();
  const [ox, oy] = view.origin();
  const dx = svgBox.left - frameBox.left + ox;
  const dy = svgBox.top - frameBox.top + oy;
  const found = new Map();
  eachItem(view, (item) => {
    const target = targetOf(item);
    if (target?.kind !== kind) return;
    const box = viewBox(item);
    const seen = found.get(target.id);
    if (!seen) {
      found.set(target.id, { ...target, x: box.x + dx, y: box.y + dy, ...size(box) });
      return;
    }
    const right = Math.max(seen.x + seen.width, box.x + dx + box.width);
    const bottom = Math.max(seen.y + seen.height, box.y + dy + box.height);
    seen.x = Math.min(seen.x, box.x + dx);
    seen.y = Math.min(seen.y, box.y + dy);
    Object.assign(seen, { width: right - seen.x, height: bottom - seen.y });
  });
  const targets = [...found.values()];
  // the ranking top to bottom; the cells as drawn (the weak matrix first, row by row)
  return kind === "algorithm" ? targets.sort((a, b) => a.y - b.y) : targets;
}

const size = (box) => ({ width: box.width, height: box.height });

/** Names set apart as text (isolated: bidi.js), never parsed as HTML. */
function setParts(element, parts) {
  const nodes = parts.map((part) => (typeof part === "string" ? part : isolated(part.name)));
  element.replaceChildren(...nodes);
}

/**
 * The keyboard layer of the summary chart.
 *
 * @param frame the positioned element around the chart's box (the cursor is drawn in it)
 * @param getView the live Vega view (null before it is drawn)
 * @param picks `onPair(key)` and `onAlgorithm(name)`: what a click on that mark does
 * @returns {{ stops: HTMLElement[] }} the focus stops, to place before the chart
 */
export function buildChartKeys(frame, getView, { onPair, onAlgorithm }) {
  const cursor = h("div", { class: "bbt-key-cursor", "aria-hidden": "true" });
  const caption = h("div", { class: "bbt-key-caption", role: "status", "aria-live": "polite" });
  cursor.hidden = caption.hidden = true;
  frame.append(cursor, caption);

  const draw = (target, parts) => {
    cursor.hidden = caption.hidden = false;
    setParts(caption, parts);
    if (!target) {
      cursor.hidden = true;
      caption.style.left = caption.style.top = "0px";
      return;
    }
    Object.assign(cursor.style, {
      left: `${target.x - 2}px`,
      top: `${target.y - 2}px`,
      width: `${target.width + 4}px`,
      height: `${target.height + 4}px`,
    });
    // under the cursor, moved left as far as it must to stay inside the chart's frame
    const room = frame.clientWidth - caption.offsetWidth;
    caption.style.left = `${Math.max(0, Math.min(target.x, room))}px`;
    caption.style.top = `${target.y + target.height + 4}px`;
    cursor.scrollIntoView({ block: "nearest", inline: "nearest" });
  };

  const stops = STOPS.map(({ kind, label }) => {
    const stop = h("div", {
      class: "bbt-key-stop",
      tabindex: "0",
      role: "application",
      "aria-label": label,
      "data-own-keys": "true", // keepKeys (controls.js): the notebook does not take its keys
      "data-keys": kind,
    });
    let current = null;
    const show = (key, picked = false) => {
      const targets = targetsOf(getView(), kind, frame);
      current = key === null ? current : nextTarget(targets, current, key);
      const index = targets.findIndex((t) => t.id === current);
      const target = targets[index];
      if (!target) return draw(null, ["nothing to pick here until the chart is drawn"]);
      stop.dataset.cursor = target.kind === "pair" ? target.key : target.algorithm;
      draw(target, picked ? pickedParts(target) : targetParts(target, index, targets.length));
      return target;
    };
    stop.addEventListener("focus", () => show(current === null ? "Home" : ""));
    stop.addEventListener("blur", () => {
      cursor.hidden = caption.hidden = true;
    });
    stop.addEventListener("keydown", (event) => {
      if (movesCursor(event.key)) {
        event.preventDefault(); // no scrolling of the page
        show(event.key);
      } else if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        const target = show(null, true);
        if (target?.kind === "pair") onPair(target.key);
        else if (target) onAlgorithm(target.algorithm);
      }
    });
    return stop;
  });
  return { stops };
}
