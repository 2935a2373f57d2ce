// A Vega-Lite spec laid out for the width of its box, and a dataset turned into the rows Vega
// reads: pure functions of the spec (charts.js draws what they return). Python builds each spec
// for a wide box; a notebook's column can be narrower, or much wider (the summary).

/** Smallest side (px) of a shrunk grid's cell (the decision and win matrices): a smaller
 * cell's labels cannot be read. A grid still too wide at it scrolls in its box instead. */
const MIN_STEP = 9;
/** Width (px) of a legend label's character, about (10 px font). */
const LEGEND_CHAR_PX = 6;
/** Titles longer than this (characters) are broken into lines when the box is narrow. */
export const TITLE_LINE_CHARS = 60;
/** Width (px) of a title's character, about: a box's width over it is the most on a line. */
export const TITLE_CHAR_PX = 8;
/** Width (px) kept beside a stacked view for its axis labels (Vega-Lite cuts a label at 180
 * px) and title when it is widened to its box. */
const AXIS_ROOM = 200;
/** A view that may grow is widened at most this many times its widths as built. */
export const MAX_GROW = 3;

/** `text` in lines of at most `chars` characters: at its "; " first, then between words. */
export function titleLines(text, chars) {
  const lines = [];
  for (const part of text.split(/(?<=;) /)) {
    let line = "";
    for (const word of part.split(" ")) {
      if (line && line.length + 1 + word.length > chars) {
        lines.push(line);
        line = word;
      } else {
        line = line ? `${line} ${word}` : word;
      }
    }
    lines.push(line);
  }
  return lines;
}

/** A Vega expression: a legend's label in lines of at most `chars` characters, broken
 * between words (a longer word keeps its own line). */
export function wrappedLabelExpr(chars) {
  const line = `regexp('(.{1,${chars}})(\\\\s+|$)', 'g')`;
  return `split(trim(replace(datum.label, ${line}, '$1\\n')), '\\n')`;
}

/** A view's own fixed width (px), or 0 (a step, "container", or none). */
function fixedWidth(view) {
  return view && typeof view.width === "number" ? view.width : 0;
}

/** `view` at least `width` px wide when it has a fixed width of its own. */
function widened(view, width) {
  const own = fixedWidth(view);
  return own > 0 && own < width ? { ...view, width } : view;
}

/** A panel's hidden axis labels shown again: beside its neighbour it shared that neighbour's
 * labels (the ranking's P(best) and expected-rank panels), stacked it needs its own. */
function ownAxisLabels(node) {
  if (Array.isArray(node)) return node.map(ownAxisLabels);
  if (!node || typeof node !== "object") return node;
  const out = {};
  for (const [key, value] of Object.entries(node)) out[key] = ownAxisLabels(value);
  const axis = out.encoding?.y?.axis;
  if (axis && axis.labels === false) {
    const shown = { ...axis, labels: true, ticks: true, domain: true };
    out.encoding = { ...out.encoding, y: { ...out.encoding.y, axis: shown } };
  }
  return out;
}

/** Wrapped facets, each with its own column axis: a shared one is drawn over the top row
 * only, and the panels below it would lose their column labels. */
function ownColumnAxes(resolve) {
  return { ...(resolve || {}), axis: { ...(resolve?.axis || {}), x: "independent" } };
}

/**
 * A copy of a Vega-Lite spec laid out for a narrow box. `stack` stacks side-by-side views
 * (hconcat -> vconcat), wraps column facets and puts side legends on top; `shrink` scales
 * fixed widths and facet columns by `ratio` (box width over the width drawn). Long titles
 * break into lines either way. The data, parameters and names stay as they were, so data
 * updates and highlights reach the narrow view alike.
 */
export function narrowSpec(
  spec,
  { stack = false, shrink = false, grow = false } = {},
  ratio = 1,
  lineChars = TITLE_LINE_CHARS,
) {
  if (!stack && !shrink && !grow) return spec;
  const scale = shrink ? Math.min(1, ratio) : grow ? Math.min(MAX_GROW, Math.max(1, ratio)) : 1;
  const walk = (node) => {
    if (Array.isArray(node)) return node.map(walk);
    if (!node || typeof node !== "object") return node;
    const out = {};
    for (const [key, value] of Object.entries(node)) out[key] = walk(value);
    if (stack && out.hconcat) {
      // one under the other, each view as wide as the row was (the ranking's three panels
      // would otherwise keep their narrow side-by-side widths in a column of empty space)
      // (as wide as built when the box has room beside the axis labels, else as the room:
      // not scaled with the rest, which a wide grid of cells elsewhere shrinks far more)
      const built = node.hconcat.reduce((sum, view) => sum + fixedWidth(view), 0);
      const room = lineChars * TITLE_CHAR_PX + 24 - AXIS_ROOM;
      const row = Math.max(Math.floor(built * Math.min(1, scale)), Math.min(built, room));
      out.vconcat = out.hconcat.map((view, i) =>
        widened(i === 0 ? view : ownAxisLabels(view), row),
      );
      delete out.hconcat;
    }
    if (stack && out.facet && out.facet.column && !out.facet.row && out.spec) {
      out.facet = out.facet.column; // wrapped facet: one field, `columns` per row
      out.columns = shrink ? 1 : 2;
      out.resolve = ownColumnAxes(out.resolve);
    }
    if (stack && out.encoding && out.encoding.column && !out.encoding.row) {
      const columns = shrink ? 1 : 2;
      out.encoding = { ...out.encoding, facet: { ...out.encoding.column, columns } };
      delete out.encoding.column;
      out.resolve = ownColumnAxes(out.resolve);
    }
    if (scale < 1 && typeof out.columns === "number" && out.facet && !out.facet.column) {
      out.columns = Math.max(1, Math.floor(out.columns * scale));
    }
    if (stack && out.legend && typeof out.legend === "object") {
      if (["right", "left"].includes(out.legend.orient)) {
        out.legend = { ...out.legend, orient: "top" };
      }
    }
    // shrunk: a legend in a row above or below the chart in two columns, and labels kept
    // whole elsewhere broken into lines within the box rather than drawn past it (or cut)
    if (shrink && out.legend && typeof out.legend === "object") {
      const legend = { ...out.legend };
      const across = ["top", "bottom"].includes(legend.orient) && legend.direction !== "vertical";
      if (across && legend.columns === undefined) legend.columns = 2;
      // half the box: a legend below a chart starts where its plot does, after the labels
      const half = Math.max(80, Math.floor((lineChars * TITLE_CHAR_PX) / 2));
      if (legend.labelLimit === 0) {
        legend.labelExpr = wrappedLabelExpr(Math.floor(half / LEGEND_CHAR_PX));
        legend.labelLimit = half;
      }
      out.legend = legend;
    }
    // long titles and subtitles on several lines, at their "; " then between words, each
    // line within the box (a title never shrinks)
    if (!grow && out.title && typeof out.title === "object" && !Array.isArray(out.title)) {
      const chars = Math.min(TITLE_LINE_CHARS, lineChars);
      for (const key of ["text", "subtitle"]) {
        const lines = [out.title[key]].flat();
        const long = (line) => typeof line === "string" && line.length > chars;
        if (lines.some(long)) {
          const split = lines.flatMap((line) => (long(line) ? titleLines(line, chars) : [line]));
          out.title = { ...out.title, [key]: split };
        }
      }
    }
    if (typeof out.width === "number" && scale !== 1) {
      out.width = Math.max(60, Math.floor(out.width * scale));
    }
    // a grid of steps (the matrices): smaller cells, still square, never below MIN_STEP
    // (nor below what they were built with)
    if (out.width && typeof out.width.step === "number" && scale < 1) {
      const least = Math.min(MIN_STEP, out.width.step);
      const step = Math.max(least, Math.floor(out.width.step * scale));
      if (out.height && out.height.step === out.width.step) out.height = { ...out.height, step };
      out.width = { ...out.width, step };
    }
    return out;
  };
  return walk(spec);
}

/** Python sends each dataset by column ({name: [values]}); Vega wants rows. */
export function rowsOf(columns) {
  const names = Object.keys(columns || {});
  if (names.length === 0) return [];
  const n = columns[names[0]].length;
  const rows = new Array(n);
  for (let i = 0; i < n; i += 1) {
    const row = {};
    for (const name of names) row[name] = columns[name][i];
    rows[i] = row;
  }
  return rows;
}
