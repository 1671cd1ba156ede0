/**
 * The Tokens view: one bar per tier with the cache boundaries between them, one bar per
 * layer grouped by tier, and for a conversation the history and tool results beside the
 * system prompt.
 */
import { bar, h, num, replace, shortKey } from "./dom.js";
import { assemblyOf, type State, TIERS, tierTokens } from "./model.js";
import type { AssemblyView, ConversationView, Tier } from "./types.js";

/** The stacked bar of the whole prompt, one part per tier, a boundary mark after each. */
function tierBar(a: AssemblyView): HTMLElement {
  const tiers = tierTokens(a);
  const total = Math.max(1, a.manifest.used.tokens);
  const track = h("div", { class: "stack", role: "list", "aria-label": "tokens per tier" });
  for (const t of TIERS) {
    if (tiers[t] === 0) continue;
    const part = h(
      "span",
      {
        class: `part tier-${t}`,
        role: "listitem",
        "data-tier": t,
        title: `${t}: ${tiers[t]} tokens`,
      },
      `${t} ${num(tiers[t])}`,
    );
    part.style.flexGrow = String(tiers[t] / total);
    track.append(
      part,
      h("span", { class: "cut", title: `cache key ${a.manifest.cacheKeys[t] ?? "—"}` }),
    );
  }
  return track;
}

function tierTable(a: AssemblyView): HTMLElement {
  const tiers = tierTokens(a);
  const max = Math.max(1, ...TIERS.map((t) => tiers[t]));
  return h(
    "table",
    { class: "bars tiers-table" },
    h(
      "caption",
      {},
      `Per tier · ${num(a.manifest.used.tokens)} tokens in all (boundary markers included)`,
    ),
    h(
      "tbody",
      {},
      ...TIERS.map((t) =>
        h(
          "tr",
          { "data-tier": t },
          h("th", { scope: "row" }, h("span", { class: `chip tier-${t}` }, t)),
          h("td", { class: "track" }, bar(tiers[t] / max, `tier-${t}`, `${t}: ${tiers[t]} tokens`)),
          h("td", { class: "n" }, num(tiers[t])),
          h("td", { class: "key" }, `key ${shortKey(a.manifest.cacheKeys[t])}`),
        ),
      ),
    ),
  );
}

/** One row per layer, grouped by tier, a boundary row after each tier with content. */
function layerTable(a: AssemblyView): HTMLElement {
  const max = Math.max(1, ...a.manifest.layers.map((l) => l.used.tokens));
  const rows: HTMLElement[] = [];
  for (const t of TIERS) {
    const layers = a.manifest.layers.filter((l) => l.cacheTier === t);
    if (layers.length === 0) continue;
    for (const l of layers) {
      rows.push(
        h(
          "tr",
          { "data-layer": l.id, class: `status-${l.status}` },
          h("th", { scope: "row" }, l.id),
          h(
            "td",
            { class: "track" },
            bar(l.used.tokens / max, `tier-${t}`, `${l.id}: ${l.used.tokens} tokens`),
          ),
          h("td", { class: "n" }, num(l.used.tokens)),
          h("td", { class: "muted" }, l.status === "included" ? t : `${l.status}/${l.reason}`),
        ),
      );
    }
    rows.push(boundaryRow(t, a.manifest.cacheKeys[t], t === TIERS.at(-1)));
  }
  return h(
    "table",
    { class: "bars layers-table" },
    h("caption", {}, "Per layer"),
    h("tbody", {}, ...rows),
  );
}

function boundaryRow(t: Tier, key: string | null, last: boolean): HTMLElement {
  const what = last ? `end of ${t}` : `cache boundary after ${t}`;
  return h(
    "tr",
    { class: "boundary-row", "data-boundary": t },
    h("td", { colspan: 4 }, `${what} · key ${key ?? "— (no content)"}`),
  );
}

/** The whole request: system prompt, history and tool results, against the conversation budget. */
function requestTable(a: AssemblyView, c: ConversationView): HTMLElement {
  const kept = new Map(c.messages.map((m) => [m.id, m.role]));
  let history = 0;
  let tools = 0;
  for (const d of c.decisions) {
    if (d.status !== "kept") continue;
    if (kept.get(d.messageId) === "tool") tools += d.tokens;
    else history += d.tokens;
  }
  const parts: Array<[string, number, string]> = [
    ["system prompt", a.manifest.used.tokens, "tier-static"],
    ["history", history, "conv-history"],
    ["tool results", tools, "conv-tools"],
  ];
  const max = Math.max(1, ...parts.map((p) => p[1]));
  return h(
    "table",
    { class: "bars request-table" },
    h(
      "caption",
      {},
      `The request · conversation ${num(c.usedTokens)} of ${num(c.budgetTokens)} budget tokens`,
    ),
    h(
      "tbody",
      {},
      ...parts.map(([name, n, cls]) =>
        h(
          "tr",
          { "data-part": name },
          h("th", { scope: "row" }, name),
          h("td", { class: "track" }, bar(n / max, cls, `${name}: ${n} tokens`)),
          h("td", { class: "n" }, num(n)),
        ),
      ),
    ),
  );
}

/** Draws the Tokens view of the current turn. */
export function renderTokensView(root: HTMLElement, s: State): void {
  const a = assemblyOf(s.data.turns[s.turn]) as AssemblyView;
  const conv = a.conversationPlan;
  replace(
    root,
    h("h2", { class: "sr-only" }, "Tokens"),
    tierBar(a),
    h(
      "div",
      { class: conv ? "token-grid with-conversation" : "token-grid" },
      h("div", {}, tierTable(a), layerTable(a)),
      conv ? requestTable(a, conv) : null,
    ),
  );
}
