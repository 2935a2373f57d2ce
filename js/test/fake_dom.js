// A small stand-in for the browser's DOM, enough for the widget's modules that build elements
// (h(), the status line, the dominance view) to run under node:test. It keeps what the
// modules set: text as textContent (it never parses HTML: a test can check that a hostile
// name stays one text node), attributes, children, classes, dataset and listeners.

class FakeClassList {
  constructor(node) {
    this.node = node;
  }
  get names() {
    return new Set(this.node.className.split(/\s+/).filter(Boolean));
  }
  contains(name) {
    return this.names.has(name);
  }
  toggle(name, on) {
    const names = this.names;
    if (on ?? !names.has(name)) names.add(name);
    else names.delete(name);
    this.node.className = [...names].join(" ");
  }
  add(name) {
    this.toggle(name, true);
  }
  remove(name) {
    this.toggle(name, false);
  }
}

export class FakeElement {
  constructor(tag) {
    this.tagName = tag.toUpperCase();
    this.attributes = new Map();
    this.childNodes = [];
    this.className = "";
    this.dataset = {};
    this.style = {};
    this.hidden = false;
    this.listeners = {};
    this.classList = new FakeClassList(this);
    this.parentElement = null;
  }
  get textContent() {
    return this.childNodes.map((c) => (typeof c === "string" ? c : c.textContent)).join("");
  }
  set textContent(value) {
    this.childNodes = value === "" || value === null || value === undefined ? [] : [String(value)];
  }
  get children() {
    return this.childNodes.filter((c) => c instanceof FakeElement);
  }
  setAttribute(name, value) {
    this.attributes.set(name, String(value));
    if (name === "id") this.id = String(value);
    if (name === "title") this.title = String(value);
    if (name.startsWith("data-")) {
      const key = name.slice(5).replace(/-([a-z])/g, (_, ch) => ch.toUpperCase());
      this.dataset[key] = String(value);
    }
  }
  getAttribute(name) {
    return this.attributes.has(name) ? this.attributes.get(name) : null;
  }
  removeAttribute(name) {
    this.attributes.delete(name);
  }
  append(...nodes) {
    for (const node of nodes) {
      if (node instanceof FakeElement) node.parentElement = this;
      this.childNodes.push(node instanceof FakeElement ? node : String(node));
    }
  }
  replaceChildren(...nodes) {
    this.childNodes = [];
    this.append(...nodes);
  }
  addEventListener(type, fn) {
    (this.listeners[type] ||= []).push(fn);
  }
  dispatch(type, event = {}) {
    for (const fn of this.listeners[type] || []) fn({ target: this, ...event });
  }
  querySelector() {
    return null;
  }
  getBoundingClientRect() {
    return { top: 0, left: 0, width: 600, height: 0 };
  }
  /** Every element below this one with the class `name`. */
  findAll(name) {
    const found = [];
    for (const child of this.children) {
      if (child.classList.contains(name)) found.push(child);
      found.push(...child.findAll(name));
    }
    return found;
  }
}

/** Install the fake `document` (and `Element`) as globals; returns it. */
export function installFakeDom() {
  const document = {
    activeElement: null,
    createElement: (tag) => new FakeElement(tag),
  };
  globalThis.document = document;
  globalThis.Element = FakeElement;
  return document;
}

/** A stand-in for the anywidget model: traits, their change events, the messages sent. */
export class FakeModel {
  constructor(traits = {}) {
    this.traits = { ...traits };
    this.handlers = {};
    this.saved = 0;
    this.sent = [];
  }
  get(name) {
    return this.traits[name];
  }
  set(name, value) {
    this.traits[name] = value;
  }
  save_changes() {
    this.saved += 1;
  }
  send(content) {
    this.sent.push(content);
  }
  on(event, fn) {
    (this.handlers[event] ||= []).push(fn);
  }
  off(event, fn) {
    this.handlers[event] = (this.handlers[event] || []).filter((f) => f !== fn);
  }
  /** Set trait `name` as the kernel would, firing its change event. */
  change(name, value) {
    this.traits[name] = value;
    for (const fn of this.handlers[`change:${name}`] || []) fn();
  }
  listening() {
    return Object.values(this.handlers).reduce((n, list) => n + list.length, 0);
  }
}
