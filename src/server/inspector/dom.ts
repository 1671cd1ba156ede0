/** Small DOM helpers for the inspector page: elements built from data, text never parsed as HTML. */

/** A child of {@link h}: a node, text, or nothing. */
export type Child = Node | string | number | null | undefined | false;

/** Attributes of {@link h}: `class`, `data-*`, `aria-*` and other attributes, as strings. */
export type Attrs = Record<string, string | number | boolean | null | undefined>;

/**
 * An element with attributes and children; text children become text nodes (never HTML).
 *
 * @example h("p", { class: "note" }, "5 tokens")
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    el.setAttribute(name, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

/** Appends children (text as text nodes). */
export function append(parent: Node, children: readonly Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    parent.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
  }
}

/** Replaces an element's children. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** The element with `id`, which the page must have. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`missing #${id}`);
  return el as T;
}

/** A number with thousands separators (fixed locale: the page reads the same everywhere). */
export function num(n: number): string {
  return n.toLocaleString("en-US");
}

/** A short hash for display (the first 8 hex digits), or a dash. */
export function shortKey(key: string | null): string {
  return key === null ? "—" : key.slice(0, 8);
}

/**
 * A table with a caption, a header row and body rows, in a box that scrolls sideways when
 * the table is wider than the page's column (the page itself never does).
 *
 * @example table("Per turn", ["turn", "cost"], rows, { class: "costs" })
 */
export function table(
  caption: Child,
  head: readonly string[],
  rows: readonly HTMLTableRowElement[],
  attrs: Attrs = {},
): HTMLElement {
  return h(
    "div",
    { class: "table-scroll" },
    h(
      "table",
      attrs,
      h("caption", {}, caption),
      h("thead", {}, h("tr", {}, ...head.map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, ...rows),
    ),
  );
}

/** A row of cells (strings or nodes). */
export function row(cells: readonly Child[], attrs: Attrs = {}): HTMLTableRowElement {
  return h("tr", attrs, ...cells.map((c) => h("td", {}, c)));
}

/** A horizontal bar whose width is `share` (0–1) of its track. */
export function bar(share: number, cls: string, label: string): HTMLElement {
  const fill = h("span", { class: `fill ${cls}` });
  fill.style.width = `${Math.max(0, Math.min(1, share)) * 100}%`;
  return h("span", { class: "bar", role: "img", "aria-label": label }, fill);
}
