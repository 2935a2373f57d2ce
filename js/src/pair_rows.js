// What the pairwise view's filter bar and the highlight chip say, decided apart from the DOM.
// The rows themselves are cut in Python (bbt_widget/widget/pair_filters.py, trait pair_rows:
// page, pages, per_page, matched, total). Names come back as they were typed and are set as
// text, never as HTML.

/** The page `step` pages from the one shown, kept within the pages there are. */
export function pageAfter(rows, step) {
  return Math.min(Math.max((rows.page ?? 0) + step, 0), (rows.pages ?? 1) - 1);
}

/** Why fewer pairs are listed than there are: "Show pairs of" and the search narrow any
 * filter ("" when neither does). */
export function narrowedBy(focus, search) {
  const words = (search || "").trim();
  const why = [focus ? `those of ${focus}` : "", words ? `matching "${words}"` : ""];
  return why.filter(Boolean).map((part) => `${part}; `).join("");
}

/**
 * The count line of the filter bar ("pairs 1-20 of 45 listed (... 120 in all); page 1 of 3"),
 * "" before the first rows.
 *
 * @param rows the trait pair_rows
 * @param focus the trait focus ("" for every algorithm)
 * @param search the trait pair_search
 */
export function pairCountText(rows, focus, search) {
  if (rows.total === undefined) return "";
  const page = rows.page ?? 0;
  const pages = rows.pages ?? 1;
  const perPage = rows.per_page || 0;
  const first = rows.matched ? page * perPage + 1 : 0;
  const last = Math.min(rows.matched ?? 0, page * perPage + perPage);
  const listed = `pairs ${first}-${last} of ${rows.matched} listed`;
  const paged = pages > 1 ? `; page ${page + 1} of ${pages}` : "";
  return `${listed} (${narrowedBy(focus, search)}${rows.total} in all)${paged}`;
}

/**
 * The chip's text when the highlighted pair is not drawn ("Show pairs of" shows another
 * algorithm's pairs), else null. The pair reads as everywhere else (the pair panel, the
 * charts' tooltips): the better-ranked algorithm first, as `order` gives it; the key's own
 * order is alphabetical.
 *
 * @param key the trait selected_pair: the pair's key, a JSON list of its two names, or ""
 * @param focus the trait focus
 * @param order the pair panel's [a, b] (trait pair_panel), when it is this pair's
 */
export function hiddenPairText(key, focus, order = []) {
  let pair = [];
  try {
    pair = key ? JSON.parse(key) : [];
  } catch {
    pair = [];
  }
  if (!Array.isArray(pair)) pair = [];
  const hidden = Boolean(focus) && pair.length === 2 && !pair.includes(focus);
  if (!hidden) return null;
  const same = order.length === 2 && [...order].sort().join("\n") === [...pair].sort().join("\n");
  const [a, b] = same && order[0] !== order[1] ? order : pair;
  return `highlighted: ${a} vs ${b} (not shown)`;
}
