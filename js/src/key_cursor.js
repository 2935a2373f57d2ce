// Where a keyboard cursor goes over the marks of a chart, decided apart from the DOM (and so
// unit-tested): the marks are boxes on the page, and an arrow key moves to the nearest box in
// its direction, keeping to the same row or column when there is one to keep to. Works for a
// grid with gaps (a decision matrix has no diagonal), two grids side by side or one above the
// other (the weak and the strong matrix) and a single column (the ranking's rows).

/** Arrow keys as the unit step they stand for ([dx, dy], y down as on the page). */
const STEPS = {
  ArrowLeft: [-1, 0],
  ArrowRight: [1, 0],
  ArrowUp: [0, -1],
  ArrowDown: [0, 1],
};

/** Whether `key` moves the cursor (the arrows, Home and End). */
export function movesCursor(key) {
  return key in STEPS || key === "Home" || key === "End";
}

const centre = (t) => [t.x + t.width / 2, t.y + t.height / 2];

/**
 * The target the cursor goes to from `current` on `key`.
 *
 * @param {{id: string, x: number, y: number, width: number, height: number}[]} targets the
 *   marks that can be picked, in reading order (Home goes to the first, End to the last)
 * @param {string|null} current the id the cursor is on (null, or an id no longer drawn: the
 *   first target)
 * @param {string} key the key pressed (KeyboardEvent.key)
 * @returns {string|null} the id to go to (`current` at an edge; null without targets)
 */
export function nextTarget(targets, current, key) {
  if (targets.length === 0) return null;
  const from = targets.find((t) => t.id === current);
  if (!from || key === "Home") return targets[0].id;
  if (key === "End") return targets[targets.length - 1].id;
  const step = STEPS[key];
  if (!step) return from.id;
  const [fx, fy] = centre(from);
  const [dx, dy] = step;
  let best = null;
  let bestScore = Infinity;
  for (const target of targets) {
    if (target.id === from.id) continue;
    const [tx, ty] = centre(target);
    const along = (tx - fx) * dx + (ty - fy) * dy; // how far in the key's direction
    const across = Math.abs((tx - fx) * dy + (ty - fy) * dx); // how far off its line
    if (along < 1) continue; // not that way (1 px: boxes of one row are not all aligned)
    // the same row (or column) first: a cell off the line costs more than any cell on it
    const band = dx !== 0 ? from.height / 2 : from.width / 2;
    const score = (across <= band ? 0 : 1e6) + along + 2 * across;
    if (score < bestScore) {
      best = target;
      bestScore = score;
    }
  }
  return best ? best.id : from.id;
}

/**
 * What the cursor is on, in words, as parts: strings, and names in `{ name }` (the DOM sets
 * each name apart, isolated, as text).
 *
 * @param {{kind: string, algorithm?: string, row?: string, col?: string,
 *   interpretation?: string, decision?: string}} target
 * @param {number} index its place among the targets (from 0)
 * @param {number} count how many there are
 */
export function targetParts(target, index, count) {
  if (target.kind === "algorithm") {
    return [`ranking row ${index + 1} of ${count}: `, { name: target.algorithm }];
  }
  const decision = target.decision ? `: ${target.decision}` : "";
  return [
    `${target.interpretation} matrix, `,
    { name: target.row },
    " vs ",
    { name: target.col },
    decision,
  ];
}

/** What Enter on `target` did, in words (parts as in targetParts). */
export function pickedParts(target) {
  if (target.kind === "algorithm") {
    return ["picked ", { name: target.algorithm }, ": its pairs are listed below"];
  }
  return ["picked ", { name: target.row }, " vs ", { name: target.col }, ": listed below"];
}
