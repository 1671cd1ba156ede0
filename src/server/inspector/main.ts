/**
 * The inspector page: loads `/inspect/data`, keeps the state (turn, view, selected layer,
 * filters, price) in the URL's hash, and draws the turn list (a turn picker on a narrow
 * screen), the turn's header and the current view. A hash is a deep link: it is read on
 * load and whenever it changes (back/forward, an edited URL); moving to another turn or
 * view adds a history entry, other changes replace the current one. Keyboard: Tab through
 * the controls, arrow keys move between turns, Enter or Space selects a layer, Escape
 * clears the selection.
 */
import { renderCostFigures, renderCostView } from "./cost-view.js";
import { renderDecisionsView, renderDecisionTables } from "./decisions-view.js";
import { renderDiffView } from "./diff-view.js";
import { byId, h, num, replace } from "./dom.js";
import { assemblyOf, cacheBreak, isErrorView, type State, VIEWS, type ViewName } from "./model.js";
import { renderPromptView, updateLayerState } from "./prompt-view.js";
import { renderTokensView } from "./tokens-view.js";
import { renderTurnList, renderTurnPicker, turnKeys } from "./turns.js";
import type { InspectData } from "./types.js";

let state: State;

function isView(v: string | null): v is ViewName {
  return v !== null && (VIEWS as readonly string[]).includes(v);
}

/** The state a hash asks for, over `base` (turn, view, layer, filters and price it names). */
function stateFromHash(data: InspectData, hash: string, base: State | null): State {
  const q = new URLSearchParams(hash.replace(/^#/, ""));
  const n = data.turns.length;
  const turn = Math.min(Math.max(1, Number(q.get("turn") ?? "1") || 1), n) - 1;
  const view = q.get("view");
  const diff =
    base !== null && base.turn === turn
      ? { diffA: base.diffA, diffB: base.diffB }
      : { diffA: Math.max(1, turn), diffB: Math.min(n, Math.max(2, turn + 1)) };
  return {
    data,
    turn,
    view: isView(view) ? view : "prompt",
    layer: q.get("layer"),
    hover: null,
    status: q.get("status") ?? "",
    reason: q.get("reason") ?? "",
    search: base?.search ?? "",
    price: Number(q.get("price") ?? "") || data.pricing.inputPerMTok,
    ...diff,
  };
}

function hashOf(s: State): string {
  const q = new URLSearchParams({ turn: String(s.turn + 1), view: s.view });
  if (s.layer !== null) q.set("layer", s.layer);
  if (s.status !== "") q.set("status", s.status);
  if (s.reason !== "") q.set("reason", s.reason);
  if (s.price !== s.data.pricing.inputPerMTok) q.set("price", String(s.price));
  return `#${q.toString()}`;
}

// Another turn or view is a new history entry (back returns to it); anything else
// (layer, filters, price) replaces the current entry. The first draw only normalizes.
let drawn = false;
function saveHash(): void {
  const next = hashOf(state);
  if (next === location.hash) return;
  const shown = new URLSearchParams(location.hash.replace(/^#/, ""));
  const moved = shown.get("turn") !== String(state.turn + 1) || shown.get("view") !== state.view;
  if (drawn && moved) history.pushState(null, "", next);
  else history.replaceState(null, "", next);
}

/** Back/forward or an edited hash: draw what the hash names (nothing when it is shown). */
function followHash(): void {
  if (location.hash === hashOf(state)) return;
  state = stateFromHash(state.data, location.hash, state);
  renderTurn();
}

function turnHead(): HTMLElement {
  const t = state.data.turns[state.turn];
  if (t === undefined) return h("p", {}, "No turns.");
  const a = assemblyOf(t);
  const prev = assemblyOf(state.data.turns[state.turn - 1]);
  const brk = a && prev ? cacheBreak(prev.manifest.cacheKeys, a.manifest.cacheKeys) : null;
  const facts = a
    ? [
        `mode ${a.manifest.mode}`,
        `${num(a.manifest.used.tokens)} tokens (${a.manifest.tokenizer})`,
        `${num(a.manifest.used.chars)} of ${a.manifest.budget.chars === null ? "∞" : num(a.manifest.budget.chars)} chars`,
        prev ? (brk === null ? "cache: all keys kept" : `cache breaks at ${brk}`) : "",
        `prompt ${a.manifest.promptVersion.slice(0, 12)}`,
      ].filter((f) => f !== "")
    : ["failed"];
  return h(
    "div",
    {},
    h(
      "h2",
      { id: "turn-title" },
      `Turn ${t.index} of ${state.data.turns.length} · ${t.kind}`,
      t.query === "" ? "" : ` · “${t.query}”`,
    ),
    h("p", { class: "facts" }, `now ${t.now ?? "—"} · `, facts.join(" · ")),
  );
}

function failedNotice(): HTMLElement | null {
  const t = state.data.turns[state.turn];
  if (t === undefined || !isErrorView(t.response)) return null;
  const e = t.response.error;
  return h(
    "p",
    { class: "notice error", id: "turn-error" },
    `This turn failed: ${e.code} — ${e.message}${e.path ? ` (at ${e.path})` : ""}`,
  );
}

/** Draws the current view (the turn list and header are drawn by {@link renderTurn}). */
function renderView(): void {
  const root = byId("view");
  for (const b of document.querySelectorAll<HTMLButtonElement>(".views button")) {
    b.setAttribute("aria-pressed", String(b.dataset.view === state.view));
  }
  root.dataset.view = state.view;
  const failed = failedNotice();
  if (
    failed !== null &&
    (state.view === "prompt" || state.view === "tokens" || state.view === "decisions")
  ) {
    replace(root, failed);
  } else if (state.view === "prompt") {
    renderPromptView(root, state, LAYER_HANDLERS);
  } else if (state.view === "tokens") {
    renderTokensView(root, state);
  } else if (state.view === "decisions") {
    renderDecisionsView(root, state, { filter: setFilter });
  } else if (state.view === "diff") {
    renderDiffView(root, state, { pick: pickDiff });
  } else {
    renderCostView(root, state, { price: setPrice });
  }
  saveHash();
}

function renderTurn(): void {
  renderTurnList(byId("turn-list"), state, goTo);
  renderTurnPicker(byId<HTMLSelectElement>("turn-picker"), state);
  replace(byId("turn-head"), turnHead());
  renderView();
}

/** Moves to turn `index` (from 0), clamped; the diff follows (previous → this turn). */
function goTo(index: number): void {
  const n = state.data.turns.length;
  const turn = Math.min(Math.max(0, index), n - 1);
  if (turn === state.turn) return;
  state = {
    ...state,
    turn,
    hover: null,
    diffA: Math.max(1, turn),
    diffB: Math.min(n, Math.max(2, turn + 1)),
  };
  renderTurn();
}

function selectLayer(id: string | null): void {
  state = { ...state, layer: id };
  updateLayerState(state, LAYER_HANDLERS);
  saveHash();
}

function hoverLayer(id: string | null): void {
  if (id === state.hover) return;
  state = { ...state, hover: id };
  updateLayerState(state, LAYER_HANDLERS);
}

const LAYER_HANDLERS = {
  toggle: (id: string) => selectLayer(state.layer === id ? null : id),
  hover: hoverLayer,
};

function setFilter(change: Partial<Pick<State, "status" | "reason" | "search">>): void {
  state = { ...state, ...change };
  renderDecisionTables(byId("decision-tables"), state);
  saveHash();
}

function setPrice(price: number): void {
  state = { ...state, price };
  renderCostFigures(byId("cost-figures"), state);
  saveHash();
}

function pickDiff(a: number, b: number): void {
  state = { ...state, diffA: a, diffB: b };
  renderView();
}

function wire(): void {
  for (const b of document.querySelectorAll<HTMLButtonElement>(".views button")) {
    b.addEventListener("click", () => {
      state = { ...state, view: (b.dataset.view ?? "prompt") as ViewName, hover: null };
      renderView();
    });
  }
  byId("turn-list").addEventListener("keydown", (e) => turnKeys(e, state, goTo));
  const picker = byId<HTMLSelectElement>("turn-picker");
  picker.addEventListener("change", () => goTo(Number(picker.value)));
  window.addEventListener("popstate", followHash);
  window.addEventListener("hashchange", followHash);
  document.addEventListener("keydown", (e) => {
    const t = e.target;
    if (t instanceof HTMLInputElement || t instanceof HTMLSelectElement) return;
    if (t instanceof Element && t.closest("#turn-list")) return;
    if (e.key === "Escape" && state.layer !== null) selectLayer(null);
    if (e.key === "ArrowLeft" || e.key === "ArrowRight") {
      e.preventDefault();
      goTo(state.turn + (e.key === "ArrowLeft" ? -1 : 1));
    }
  });
}

async function start(): Promise<void> {
  const res = await fetch("/inspect/data");
  const body = (await res.json()) as InspectData | { error: { message: string } };
  if ("error" in body) {
    replace(byId("view"), h("p", { class: "notice error", id: "load-error" }, body.error.message));
    return;
  }
  state = stateFromHash(body, location.hash, null);
  byId("source").textContent = body.title;
  wire();
  renderTurn();
  drawn = true;
  document.body.dataset.ready = "true";
}

void start();
