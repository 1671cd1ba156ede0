/**
 * The Prompt view: the prompt with each layer highlighted by tier (boundaries marked),
 * a panel with the hovered or selected layer's decision, tier, tokens, version and
 * source refs, and, for a conversation, its messages beside the system prompt.
 */
import { type Child, h, num, replace, shortKey } from "./dom.js";
import { assemblyOf, type State } from "./model.js";
import type { AssemblyView, ConversationView, LayerView, TurnView } from "./types.js";

/** What the view reports back to the page. */
export interface PromptHandlers {
  /** Selects the layer, or clears the selection when it is the selected one. */
  toggle(id: string): void;
  hover(id: string | null): void;
}

function layerSpan(turn: TurnView, layer: LayerView, text: string): HTMLElement {
  return h(
    "span",
    {
      class: `layer tier-${layer.cacheTier}`,
      "data-layer": layer.id,
      role: "button",
      tabindex: 0,
      "aria-pressed": "false",
      "aria-label": `layer ${layer.id}: ${layer.cacheTier}, ${layer.used.tokens} tokens (turn ${turn.index})`,
    },
    text,
  );
}

/** The prompt as text runs: layers (focusable) and the joins between them. */
function promptText(turn: TurnView, a: AssemblyView): HTMLElement {
  const pre = h("pre", { class: "prompt", id: "prompt" });
  const byId = new Map(a.manifest.layers.map((l) => [l.id, l]));
  let pos = 0;
  let prev: LayerView | null = null;
  for (const span of turn.spans) {
    const layer = byId.get(span.id);
    if (layer === undefined) continue;
    if (span.start > pos) {
      const boundary = prev !== null && prev.cacheTier !== layer.cacheTier;
      const title = boundary
        ? `cache boundary after ${prev?.cacheTier} (key ${a.manifest.cacheKeys[prev?.cacheTier ?? "static"] ?? "—"})`
        : null;
      pre.append(
        h(
          "span",
          { class: boundary ? "gap boundary" : "gap", title },
          a.prompt.slice(pos, span.start),
        ),
      );
    }
    pre.append(layerSpan(turn, layer, a.prompt.slice(span.start, span.end)));
    pos = span.end;
    prev = layer;
  }
  if (pos < a.prompt.length) pre.append(h("span", { class: "gap" }, a.prompt.slice(pos)));
  return pre;
}

function field(term: string, ...value: Child[]): HTMLElement[] {
  return [h("dt", {}, term), h("dd", {}, ...value)];
}

/** The detail of one layer. */
function layerDetail(a: AssemblyView, layer: LayerView, selected: boolean): HTMLElement {
  const budget = Object.entries(layer.budget).map(([k, v]) => `${num(Number(v))} ${k}`);
  return h(
    "div",
    { class: "detail-body", "data-detail": layer.id },
    h("h3", {}, layer.id, selected ? h("span", { class: "pin" }, " · selected") : null),
    h("p", { class: `badge status-${layer.status}` }, `${layer.status} · ${layer.reason}`),
    h("p", { class: "muted" }, layer.detail),
    h(
      "dl",
      {},
      ...field(
        "tier",
        h("span", { class: `chip tier-${layer.cacheTier}` }, layer.cacheTier),
        ` key ${shortKey(a.manifest.cacheKeys[layer.cacheTier])}`,
      ),
      ...field("tokens", num(layer.used.tokens)),
      ...field("chars", num(layer.used.chars)),
      ...field("budget", budget.length > 0 ? budget.join(", ") : "global only"),
      ...field("required", layer.required ? "yes" : "no"),
      ...field("version", h("code", {}, layer.versionId)),
      ...field("sources", layer.sources.join(", ") || "—"),
    ),
    h("h4", {}, `Source refs (${layer.sourceRefs.length})`),
    h("ul", { class: "refs" }, ...layer.sourceRefs.map((r) => h("li", {}, h("code", {}, r)))),
    h("h4", {}, `Items (${layer.items.length})`),
    h(
      "ul",
      { class: "refs" },
      ...layer.items.map((it) =>
        h("li", { class: `status-${it.status}` }, `${it.id} — ${it.status}/${it.reason}`),
      ),
    ),
  );
}

/** Without an active layer: a hint and the layers that are not in the prompt. */
function outsideLayers(a: AssemblyView, on: PromptHandlers): HTMLElement {
  const out = a.manifest.layers.filter((l) => l.status !== "included");
  return h(
    "div",
    { class: "detail-body" },
    h("p", { class: "muted" }, "Hover a layer, or select one with a click, Enter or Space."),
    h("h4", {}, `Not in the prompt (${out.length})`),
    h(
      "ul",
      { class: "refs" },
      ...out.map((l) => {
        const b = h("button", { type: "button", class: "link", "data-outside": l.id }, l.id);
        b.addEventListener("click", () => on.toggle(l.id));
        return h("li", {}, b, ` — ${l.status}/${l.reason}`);
      }),
    ),
  );
}

/** Redraws the detail panel and the layers' highlight for the hovered / selected layer. */
export function updateLayerState(s: State, on: PromptHandlers): void {
  const a = assemblyOf(s.data.turns[s.turn]);
  const panel = document.getElementById("layer-detail");
  if (a === null || panel === null) return;
  const active = s.hover ?? s.layer;
  const layer = a.manifest.layers.find((l) => l.id === active);
  replace(
    panel,
    layer === undefined ? outsideLayers(a, on) : layerDetail(a, layer, layer.id === s.layer),
  );
  for (const el of document.querySelectorAll<HTMLElement>("#prompt .layer")) {
    const id = el.dataset.layer ?? "";
    el.classList.toggle("active", id === active);
    el.setAttribute("aria-pressed", String(id === s.layer));
  }
}

function excerpt(m: ConversationView["messages"][number]): string {
  const parts = m.content.map((p) =>
    p.type === "text"
      ? String(p.text)
      : p.type === "tool_call"
        ? `→ ${String(p.name)}(…)`
        : `← ${String(p.output)}`,
  );
  const text = parts.join(" ");
  return text.length > 160 ? `${text.slice(0, 159)}…` : text;
}

/** The conversation beside the system prompt: one entry per message decision. */
function conversationPanel(c: ConversationView): HTMLElement {
  const byId = new Map(c.messages.map((m) => [m.id, m]));
  return h(
    "aside",
    { class: "conversation", "aria-label": "Conversation" },
    h("h3", {}, `Conversation · ${num(c.usedTokens)} / ${num(c.budgetTokens)} tokens`),
    h(
      "ol",
      { class: "messages" },
      ...c.decisions.map((d) => {
        const m = byId.get(d.messageId);
        const role = m?.role ?? "dropped";
        return h(
          "li",
          { class: `message role-${role} status-${d.status}`, "data-message": d.messageId },
          h(
            "span",
            { class: "who" },
            `${role} · ${d.messageId} · turn ${d.turn} · ${num(d.tokens)} tok · ${d.reason}`,
          ),
          m !== undefined ? h("span", { class: "said" }, excerpt(m)) : null,
        );
      }),
    ),
  );
}

/** Draws the Prompt view of the current turn. */
export function renderPromptView(root: HTMLElement, s: State, on: PromptHandlers): void {
  const turn = s.data.turns[s.turn] as TurnView;
  const a = assemblyOf(turn) as AssemblyView;
  const pre = promptText(turn, a);
  const layerOf = (e: Event) =>
    e.target instanceof Element ? e.target.closest<HTMLElement>(".layer") : null;
  pre.addEventListener("mouseover", (e) => on.hover(layerOf(e)?.dataset.layer ?? null));
  pre.addEventListener("mouseleave", () => on.hover(null));
  pre.addEventListener("focusin", (e) => on.hover(layerOf(e)?.dataset.layer ?? null));
  pre.addEventListener("focusout", () => on.hover(null));
  pre.addEventListener("click", (e) => {
    const id = layerOf(e)?.dataset.layer;
    if (id !== undefined) on.toggle(id);
  });
  pre.addEventListener("keydown", (e) => {
    const id = layerOf(e)?.dataset.layer;
    if (id === undefined || (e.key !== "Enter" && e.key !== " ")) return;
    e.preventDefault();
    on.toggle(id);
  });
  const legend = h(
    "p",
    { class: "legend" },
    ...["static", "session", "dynamic"].map((t) => h("span", { class: `chip tier-${t}` }, t)),
    h("span", { class: "chip boundary" }, "cache boundary"),
  );
  const conv = a.conversationPlan;
  replace(
    root,
    h(
      "div",
      { class: conv ? "prompt-grid with-conversation" : "prompt-grid" },
      h("div", { class: "prompt-col" }, legend, pre),
      conv ? conversationPanel(conv) : null,
      h("aside", { id: "layer-detail", class: "layer-detail", "aria-live": "polite" }),
    ),
  );
  updateLayerState(s, on);
  if (s.layer !== null) {
    const el = pre.querySelector(`.layer[data-layer="${CSS.escape(s.layer)}"]`);
    el?.scrollIntoView({ block: "center" });
  }
}
