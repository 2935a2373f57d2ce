import assert from "node:assert/strict";
import { test } from "node:test";

import { balance, isolated } from "../src/bidi.js";
import { installFakeDom } from "./fake_dom.js";
import { HEBREW, HTML, OPEN_ISOLATE, RLO, STRAY_PDI } from "./hostile.js";

const RLE = "\u202b";
const PDF = "\u202c";
const RLI = "\u2067";
const FSI = "\u2068";
const PDI = "\u2069";
const OPENERS = { "\u202a": "e", "\u202b": "e", "\u202d": "e", "\u202e": "e" };
for (const ch of "\u2066\u2067\u2068") OPENERS[ch] = "i";

/** Whether `text` closes only what it opened and leaves nothing open (an independent check). */
function isBalanced(text) {
  const open = [];
  for (const ch of text) {
    if (OPENERS[ch]) open.push(OPENERS[ch]);
    else if (ch === PDF) {
      if (open.pop() !== "e") return false;
    } else if (ch === PDI) {
      if (!open.includes("i")) return false;
      while (open.pop() !== "i");
    }
  }
  return open.length === 0;
}

test("an override left open is closed at the end of the name", () => {
  assert.equal(balance(RLO), `${RLO}${PDF}`);
});

test("an isolate left open is closed by a PDI", () => {
  assert.equal(balance(OPEN_ISOLATE), `${OPEN_ISOLATE}${PDI}`);
});

test("a PDI that closes nothing is dropped, and the embedding after it is closed", () => {
  assert.equal(balance(STRAY_PDI), `stray${RLE}pdi${PDF}`);
});

test("a PDF that closes nothing is dropped, one that closes an embedding stays", () => {
  assert.equal(balance(`a${PDF}b`), "ab");
  assert.equal(balance(`${RLE}a${PDF}b`), `${RLE}a${PDF}b`);
  // a PDF cannot close an isolate: dropped, and the isolate closed at the end
  assert.equal(balance(`${RLI}a${PDF}b`), `${RLI}ab${PDI}`);
});

test("a PDI closes the embeddings opened after its isolate", () => {
  // RLI, RLE, PDI: the PDI ends both; nothing is left to close
  assert.equal(balance(`${RLI}x${RLE}y${PDI}z`), `${RLI}x${RLE}y${PDI}z`);
  assert.ok(isBalanced(balance(`${RLI}x${RLE}y${PDI}z`)));
});

test("what is still open is closed innermost first", () => {
  assert.equal(balance(`${FSI}a${RLE}b`), `${FSI}a${RLE}b${PDF}${PDI}`);
});

test("names with nothing to balance are returned as they are", () => {
  for (const name of [HTML, HEBREW, "p > q", "", "🚀 rocket"]) assert.equal(balance(name), name);
  assert.equal(balance(42), "42");
  assert.equal(balance(null), "null");
});

test("any mix of controls comes out balanced, keeps its other characters, and stays put", () => {
  const alphabet = ["a", "b", " ", "<", ...Object.keys(OPENERS), PDF, PDI];
  let seed = 7;
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed;
  };
  for (let n = 0; n < 500; n += 1) {
    const text = Array.from({ length: next() % 12 }, () => alphabet[next() % alphabet.length]);
    const out = balance(text.join(""));
    assert.ok(isBalanced(out), JSON.stringify(text));
    assert.equal(balance(out), out); // balanced text is left alone
    const plain = (s) => [...s].filter((ch) => !OPENERS[ch] && ch !== PDF && ch !== PDI).join("");
    assert.equal(plain(out), plain(text.join("")));
  }
});

test("isolated() puts the balanced name in a <bdi> as text, never as markup", () => {
  installFakeDom();
  for (const name of [HTML, RLO]) {
    const node = isolated(name);
    assert.equal(node.tagName, "BDI");
    assert.equal(node.textContent, balance(name));
    assert.equal(node.children.length, 0);
  }
});
