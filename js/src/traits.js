// Reading and writing the widget's traits, and the small timing rules every view shares.

/**
 * A trait's value as sent: chart data arrive as one JSON buffer per trait (a DataView;
 * bbt_widget/widget/sync.py), an empty value as {}; an object is kept as it is (the widget
 * state saved by an older version).
 */
export function decodeJson(raw) {
  if (!raw) return {};
  if (raw instanceof ArrayBuffer || ArrayBuffer.isView(raw)) {
    return JSON.parse(new TextDecoder().decode(raw));
  }
  return raw;
}

/** A reader of the JSON trait `name` that decodes its value once per change, not on every
 * redraw. */
export function jsonTrait(model, name) {
  let raw;
  let value = {};
  return () => {
    const now = model.get(name);
    if (now !== raw) {
      raw = now;
      value = decodeJson(now);
    }
    return value;
  };
}

/** Set trait `name` and send it to the kernel. */
export function saveTrait(model, name, value) {
  model.set(name, value);
  model.save_changes();
}

/**
 * `run` once for a burst of calls: the first call asks for it at the end of the current task,
 * the calls until then are part of the same burst. Python sends a spec and its data in one
 * message, but each trait fires its own event: one redraw for them all. `onStart` runs when a
 * burst starts; `schedule.pending()` says whether one is waiting.
 */
export function oncePerTick(run, onStart = () => {}) {
  let pending = false;
  const schedule = () => {
    if (pending) return;
    pending = true;
    onStart(); // e.g. the status line says "drawing" from here on
    queueMicrotask(() => {
      pending = false;
      run();
    });
  };
  schedule.pending = () => pending;
  return schedule;
}

/** Listen to `[event, handler]` pairs on `model`; returns what stops listening. */
export function listen(model, handlers) {
  for (const [event, fn] of handlers) model.on(event, fn);
  return () => {
    for (const [event, fn] of handlers) model.off(event, fn);
  };
}
