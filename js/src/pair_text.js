// What the pair panel says, decided apart from the DOM: a mean with the decimals that tell it
// from the other algorithm's (trait pair_panel rows[].digits, from
// bbt_widget/widget/pair_panel.py) and the "what changed" line (pair_panel.changed). Names
// never enter these strings: a part { name: "a" } or { name: "b" } stands for one, and the
// panel puts the name there as text.

const DASH = "\u2014";
const ARROW = "\u2192";

/** A mean score with `digits` decimals (4 when not given), a dash for none. */
export function meanText(value, digits) {
  if (value === null || value === undefined || !Number.isFinite(value)) return DASH;
  return value.toFixed(Number.isInteger(digits) ? digits : 4);
}

const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

/** The subject of a move: "5 wins of " + name, "2 ties", "1 data set without a result". */
function movedFrom(was, n) {
  if (was === "a" || was === "b") return [`${plural(n, "win", "wins")} of `, { name: was }];
  if (was === "tie") return [plural(n, "tie", "ties")];
  return [plural(n, "data set without a result", "data sets without a result")];
}

/** What it became: "became ties", "became a win of " + name, "lost its result". */
function movedTo(now, n) {
  if (now === "a" || now === "b") {
    return [` became ${n === 1 ? "a win" : "wins"} of `, { name: now }];
  }
  if (now === "tie") return [n === 1 ? " became a tie" : " became ties"];
  return [n === 1 ? " lost its result" : " lost their result"];
}

/**
 * The parts of the line saying what the last change of a counting setting did to the pair
 * ([] for none): strings, and { name: "a" | "b" } where a name goes. E.g. "d_min 0 → 0.2: 5
 * wins of " {a} " became ties; given to the model: " {a} " 46 (was 51)".
 *
 * @param changed the trait pair_panel.changed: settings [[name, was, now]], moves
 *   [[was, now, data sets]] and model [[a | b | ties, was, now]]
 */
export function changeParts(changed) {
  const moves = changed?.moves || [];
  const model = changed?.model || [];
  if (!moves.length && !model.length) return [];
  const settings = (changed.settings || []).map(([name, was, now]) => `${name} ${was} ${ARROW} ${now}`);
  const parts = [`${settings.join(", ") || "Counts changed"}: `];
  moves.forEach(([was, now, n], i) => {
    if (i) parts.push(", ");
    parts.push(...movedFrom(was, n), ...movedTo(now, n));
  });
  if (model.length) {
    parts.push(`${moves.length ? "; " : ""}given to the model: `);
    model.forEach(([side, was, now], i) => {
      if (i) parts.push(", ");
      parts.push(side === "ties" ? "ties" : { name: side }, ` ${now} (was ${was})`);
    });
  }
  parts.push(".");
  return parts;
}
