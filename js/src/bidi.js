// Names written among other text, isolated so that they cannot reorder it: a right-to-left
// override (U+202E) left open in a metric's name would mirror the rest of its line, and an
// isolate (U+2067) left open would move the text after it in front of it. The rule is the one
// of bbt_widget/core/bidi.py, so a name reads the same in the widget and in a report.

/** Embeddings and overrides (LRE, RLE, LRO, RLO), each closed by PDF (U+202C). */
const EMBEDDINGS = new Set(["\u202a", "\u202b", "\u202d", "\u202e"]);
const PDF = "\u202c";
/** Isolate initiators (LRI, RLI, FSI), each closed by PDI (U+2069). */
const ISOLATES = new Set(["\u2066", "\u2067", "\u2068"]);
const PDI = "\u2069";

/**
 * `text` with its bidi controls paired, so nothing it opens stays open after it (as
 * `balance` of bbt_widget/core/bidi.py): a PDI or PDF that closes nothing is dropped (it would
 * close the isolate around the name), and whatever is still open at the end is closed there.
 *
 * @param {unknown} text
 * @returns {string}
 */
export function balance(text) {
  const out = [];
  const open = []; // "e" per embedding or override, "i" per isolate, innermost last
  for (const ch of String(text)) {
    if (EMBEDDINGS.has(ch)) open.push("e");
    else if (ISOLATES.has(ch)) open.push("i");
    else if (ch === PDF) {
      if (open[open.length - 1] !== "e") continue;
      open.pop();
    } else if (ch === PDI) {
      if (!open.includes("i")) continue;
      // a PDI also ends the embeddings opened after its isolate
      while (open.pop() !== "i");
    }
    out.push(ch);
  }
  return out.join("") + open.reverse().map((kind) => (kind === "e" ? PDF : PDI)).join("");
}

/**
 * `name` as an element to place among other text: a <bdi> (isolated from the text around it)
 * holding the name balanced. The element alone is not enough: the browser closes it with a
 * PDI, which an isolate the name left open would take for its own.
 *
 * @param {unknown} name
 * @returns {HTMLElement}
 */
export function isolated(name) {
  const node = document.createElement("bdi");
  node.textContent = balance(name);
  return node;
}
