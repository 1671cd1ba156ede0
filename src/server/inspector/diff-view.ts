/**
 * The Diff view: two turns compared by the server (the comparison `replay` uses): which
 * tier broke the cache first, the cache keys, the changed bytes of the first changed
 * layer, the changed layers and decisions.
 */
import { h, num, replace, row, shortKey, table } from "./dom.js";
import { assemblyOf, type State, TIERS } from "./model.js";
import type { DiffView, Tier } from "./types.js";

/** What the view reports back: other turns chosen. */
export interface DiffHandlers {
  pick(a: number, b: number): void;
}

const cache = new Map<string, Promise<DiffView>>();

/** The diff of turns a → b (from 1), fetched once. */
function fetchDiff(a: number, b: number): Promise<DiffView> {
  const key = `${a}:${b}`;
  let p = cache.get(key);
  if (p === undefined) {
    p = fetch(`/inspect/diff?a=${a}&b=${b}`).then(async (res) => {
      if (!res.ok) throw new Error(`diff: HTTP ${res.status}`);
      return (await res.json()) as DiffView;
    });
    cache.set(key, p);
  }
  return p;
}

/** Forgets fetched diffs (the recording was reloaded). */
export function clearDiffs(): void {
  cache.clear();
}

function headline(d: DiffView): HTMLElement {
  if (d.errors !== null && d.errors.before !== d.errors.after) {
    return h(
      "p",
      { class: "headline", id: "cache-break" },
      `Outcome: ${d.errors.before ?? "assembled"} → ${d.errors.after ?? "assembled"}`,
    );
  }
  if (d.cacheBreak === null) {
    return h(
      "p",
      { class: "headline", id: "cache-break" },
      "No cache key changed: the whole cached prefix can be read.",
    );
  }
  const kept = TIERS.slice(0, TIERS.indexOf(d.cacheBreak));
  return h(
    "p",
    { class: "headline", id: "cache-break", "data-tier": d.cacheBreak },
    "Cache breaks at ",
    h("span", { class: `chip tier-${d.cacheBreak}` }, d.cacheBreak),
    kept.length > 0 ? ` — ${kept.join(" and ")} still cached` : " — nothing cached can be read",
  );
}

function firstLayer(d: DiffView): HTMLElement | null {
  const b = d.firstChangedLayer;
  if (b === null) return null;
  return h(
    "section",
    { class: "first-change", "aria-label": "First changed layer" },
    h("h3", {}, `First changed ${b.layer === null ? "text" : `layer: ${b.layer}`}`),
    h(
      "p",
      { class: "muted", id: "first-change-bytes" },
      `${num(b.bytesBefore)} → ${num(b.bytesAfter)} bytes · first change at byte ${num(b.offset)}`,
    ),
    h(
      "pre",
      { class: "bytes" },
      b.contextBefore,
      h("del", {}, b.removed),
      h("ins", {}, b.added),
      b.contextAfter,
    ),
  );
}

function keysOf(s: State, turn: number): Record<Tier, string | null> | null {
  return assemblyOf(s.data.turns[turn - 1])?.manifest.cacheKeys ?? null;
}

function body(d: DiffView, s: State): HTMLElement[] {
  const before = keysOf(s, d.a);
  const after = keysOf(s, d.b);
  const keys = table(
    "Cache keys",
    ["tier", `turn ${d.a}`, `turn ${d.b}`, ""],
    TIERS.map((t) => {
      const changed = d.cacheKeys.some((k) => k.tier === t);
      const cells = [
        t,
        shortKey(before?.[t] ?? null),
        shortKey(after?.[t] ?? null),
        changed ? "changed" : "same",
      ];
      return row(cells, { "data-tier": t, class: changed ? "changed" : "" });
    }),
    { class: "keys" },
  );
  const layers = table(
    "Changed layers",
    ["layer", "tier", "change"],
    d.layers.map((l) => row([l.id, l.tier, l.change], { "data-layer": l.id })),
    { class: "changed-layers" },
  );
  const decisions = table(
    `Changed decisions · ${d.decisions.length}`,
    ["table", "id", `turn ${d.a}`, `turn ${d.b}`],
    d.decisions.map((c) => row([c.table, c.id, c.before ?? "(absent)", c.after ?? "(absent)"])),
    { class: "changed-decisions" },
  );
  const prompt = h(
    "p",
    { id: "prompt-bytes" },
    `Prompt: ${num(d.prompt.bytesBefore)} → ${num(d.prompt.bytesAfter)} bytes`,
    d.prompt.firstChange === null
      ? " · identical"
      : ` · first change at byte ${num(d.prompt.firstChange)}`,
  );
  return [
    headline(d),
    prompt,
    keys,
    ...[firstLayer(d)].filter((x): x is HTMLElement => x !== null),
    layers,
    decisions,
  ];
}

function picker(id: string, label: string, n: number, current: number): HTMLElement {
  const options = Array.from({ length: n }, (_, i) =>
    h("option", { value: i + 1, selected: i + 1 === current }, `turn ${i + 1}`),
  );
  return h("label", { for: id }, `${label} `, h("select", { id, name: id }, ...options));
}

/** Draws the Diff view for the state's two turns. */
export function renderDiffView(root: HTMLElement, s: State, on: DiffHandlers): void {
  const n = s.data.turns.length;
  if (n < 2) {
    replace(
      root,
      h(
        "p",
        { class: "notice" },
        "One turn only: record a session with several turns to compare two.",
      ),
    );
    return;
  }
  const controls = h(
    "form",
    { class: "filters", "aria-label": "Turns to compare" },
    picker("diff-a", "From", n, s.diffA),
    picker("diff-b", "to", n, s.diffB),
  );
  controls.addEventListener("submit", (e) => e.preventDefault());
  controls.addEventListener("change", () => {
    const a = Number((document.getElementById("diff-a") as HTMLSelectElement).value);
    const b = Number((document.getElementById("diff-b") as HTMLSelectElement).value);
    on.pick(a, b);
  });
  const out = h("div", { id: "diff-result" }, h("p", { class: "notice" }, "Comparing…"));
  replace(root, controls, out);
  const { diffA, diffB } = s;
  fetchDiff(diffA, diffB).then(
    (d) => {
      if (out.isConnected) replace(out, ...body(d, s));
      out.setAttribute("data-ready", `${diffA}:${diffB}`);
    },
    (err: unknown) => replace(out, h("p", { class: "notice error" }, String(err))),
  );
}
