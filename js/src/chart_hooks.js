// What every chart of the widget does with its errors and drawings: an error goes to the
// error line, named by the chart; each drawing counts on the widget's element (data-*,
// which the tests read, and users who wonder whether anything happened).

/** One more in the counter `key` of `el.dataset`. */
export function countOn(el, key) {
  el.dataset[key] = String(Number(el.dataset[key] || 0) + 1);
}

/**
 * The hooks of a ChartView (charts.js): a click on a pair does nothing unless `more` says
 * otherwise, an error is shown as "<label> chart error: ...", and each drawing counts in
 * `el.dataset[counter]`.
 */
export function chartHooks(el, showError, label, counter, more = {}) {
  return {
    onPair: () => {},
    ...more,
    onError: (msg) => showError(`${label} chart error: ${msg}`),
    onRendered: () => countOn(el, counter),
  };
}
