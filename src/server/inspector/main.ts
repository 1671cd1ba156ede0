/**
 * The inspector page: loads `/inspect/data`, keeps the state (turn, view, selected layer,
 * filters, price, diff turns) in the URL's hash, and draws the turn list, the turn's
 * header and the current view. Keyboard: Tab through the controls, arrow keys move
 * between turns, Enter or Space selects a layer, Escape clears the selection.
 */
import { renderCostFigures, renderCostView } from "./cost-view.js";
import { renderDecisionsView, renderDecisionTables } from "./decisions-view.js";
import { renderDiffView } from "./diff-view.js";
import { byId, h, num, replace } from "./dom.js";
import { assemblyOf, cacheBreak, isErrorView, type State, VIEWS, type ViewName } from "./model.js";
import { renderPromptView, updateLayerState } from "./prompt-view.js";
import { renderTokensView } from "./tokens-view.js";
import { renderTurnList, turnKeys } from "./turns.js";
import type { InspectData } from "./types.js";

let state: State;

function isView(v: string | null): v is ViewName {
  return v !== null && (VIEWS as readonly string[]).includes(v);
}

/** The state a page load starts from: the hash's turn, view and layer, else the first turn's prompt. */
function initialState(data: InspectData, hash: string): State {
  const q = new URLSearchParams(hash.replace(/^#/, ""));
  const n = data.turns.length;
  const turn = Math.min(Math.max(1, Number(q.get("turn") ?? "1") || 1), n) - 1;
  const view = q.get("view");
  return {
    data,
    turn,
    view: isView(view) ? view : "prompt",
    layer: q.get("layer"),
    hover: null,
    status: q.get("status") ?? "",
    reason: q.get("reason") ?? "",
    search: "",
    price: Number(q.get("price") ?? "") || data.pricing.inputPerMTok,
    diffA: Math.max(1, turn),
    diffB: Math.min(n, Math.max(2, turn + 1)),
  };
}

function saveHash(): void {
  const q = new URLSearchParams({ turn: String(state.turn + 1), view: state.view });
  if (state.layer !== null) q.set("layer", state.layer);
  if (state.status !== "") q.set("status", state.status);
  if (state.reason !== "") q.set("reason", state.reason);
  if (state.price !== state.data.pricing.inputPerMTok) q.set("price", String(state.price));
  history.replaceState(null, "", `#${q.toString()}`);
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
  state = initialState(body, location.hash);
  byId("source").textContent = body.title;
  wire();
  renderTurn();
  document.body.dataset.ready = "true";
}

void start();
