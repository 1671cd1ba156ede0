/**
 * The page's state and the figures it shows, computed from the data alone (no DOM):
 * decision rows and filters, tier totals, and the cost of each turn with cache pricing.
 */
import type {
  AssemblyView,
  ErrorView,
  InspectData,
  MatchView,
  PricingView,
  Tier,
  TurnView,
} from "./types.js";

export const TIERS: readonly Tier[] = ["static", "session", "dynamic"];
export const VIEWS = ["prompt", "tokens", "decisions", "diff", "cost"] as const;
export type ViewName = (typeof VIEWS)[number];

/** Everything the page draws from. */
export interface State {
  data: InspectData;
  /** The current turn, from 0. */
  turn: number;
  view: ViewName;
  /** The layer selected with a click, Enter or Space (sticks), and the one hovered. */
  layer: string | null;
  hover: string | null;
  /** Decision filters: "" means any. */
  status: string;
  reason: string;
  search: string;
  /** Input price in dollars per million tokens. */
  price: number;
  /** The diff's two turns, from 1. */
  diffA: number;
  diffB: number;
}

export function isErrorView(r: AssemblyView | ErrorView): r is ErrorView {
  return "error" in r;
}

/** The turn's assembly, or null when it failed. */
export function assemblyOf(turn: TurnView | undefined): AssemblyView | null {
  if (turn === undefined || isErrorView(turn.response)) return null;
  return turn.response;
}

/** Tokens of each tier (the plan's tier figures; 0 for a tier without content). */
export function tierTokens(a: AssemblyView): Record<Tier, number> {
  const out: Record<Tier, number> = { static: 0, session: 0, dynamic: 0 };
  for (const t of a.segmentPlan.tiers) out[t.tier] += t.tokens;
  return out;
}

/** The most stable tier whose cache key differs (null: none), as src/cache `cacheBreak`. */
export function cacheBreak(
  before: Record<Tier, string | null>,
  after: Record<Tier, string | null>,
): Tier | null {
  return TIERS.find((t) => before[t] !== after[t]) ?? null;
}

/** One turn's input tokens split by how a provider bills them, and its cost. */
export interface TurnCost {
  index: number;
  /** `first`: no earlier turn to read from; else the tier that broke (null: none). */
  breakTier: Tier | null | "first";
  read: number;
  write: number;
  uncached: number;
  cost: number;
  costWithoutCache: number;
}

/**
 * The cost of every assembled turn: cached tiers before the cache break are read (×0.1),
 * cached tiers from it on are written (×1.25), everything else (the dynamic tier, the
 * boundary markers, a conversation) is plain input. A failed turn costs nothing and does
 * not move the cache.
 */
export function turnCosts(
  turns: readonly TurnView[],
  pricing: PricingView,
  price: number,
): TurnCost[] {
  const out: TurnCost[] = [];
  let previous: Record<Tier, string | null> | null = null;
  for (const turn of turns) {
    const a = assemblyOf(turn);
    if (a === null) continue;
    const keys = a.manifest.cacheKeys;
    const brk = previous === null ? "first" : cacheBreak(previous, keys);
    const stop = brk === "first" ? 0 : brk === null ? TIERS.length : TIERS.indexOf(brk);
    const tiers = tierTokens(a);
    let read = 0;
    let write = 0;
    for (const [i, t] of TIERS.entries()) {
      if (!pricing.cachedTiers.includes(t)) continue;
      if (i < stop) read += tiers[t];
      else write += tiers[t];
    }
    const total = a.manifest.used.tokens + (a.conversationPlan?.usedTokens ?? 0);
    const uncached = Math.max(0, total - read - write);
    const perToken = price / 1_000_000;
    out.push({
      index: turn.index,
      breakTier: brk,
      read,
      write,
      uncached,
      cost:
        perToken *
        (read * pricing.cacheReadMultiplier + write * pricing.cacheWriteMultiplier + uncached),
      costWithoutCache: perToken * (read + write + uncached),
    });
    previous = keys;
  }
  return out;
}

/** The session's totals and its cache-read share (read tokens over all input tokens). */
export function sessionTotals(costs: readonly TurnCost[]): {
  cost: number;
  costWithoutCache: number;
  read: number;
  input: number;
  readShare: number;
} {
  let cost = 0;
  let costWithoutCache = 0;
  let read = 0;
  let input = 0;
  for (const c of costs) {
    cost += c.cost;
    costWithoutCache += c.costWithoutCache;
    read += c.read;
    input += c.read + c.write + c.uncached;
  }
  return { cost, costWithoutCache, read, input, readShare: input === 0 ? 0 : read / input };
}

/** The decision tables of the Decisions view. */
export const TABLES = ["layers", "memory", "skills", "kb", "items", "conversation"] as const;
export type TableName = (typeof TABLES)[number];
export const TABLE_TITLES: Record<TableName, string> = {
  layers: "Layers (segments)",
  memory: "Memory",
  skills: "Skills",
  kb: "KB chunks",
  items: "Other items",
  conversation: "Conversation",
};

/** One decision as a table row. */
export interface DecisionRow {
  table: TableName;
  /** The layer an item belongs to ("" for layers, memory and conversation rows). */
  layer: string;
  id: string;
  status: string;
  reason: string;
  score: number | null;
  tokens: number | null;
  detail: string;
  /** How the recall found a memory row (hybrid recall only), else null. */
  match: MatchView | null;
}

/**
 * A memory's match in one line: the path, then each rank the recall gave it with its
 * figure, then the fused score, e.g. `both · words #2 · meaning #1 (sim 0.612) · fused
 * 0.700`; "—" without a match (recall by words only).
 */
export function matchText(m: MatchView | null): string {
  if (m === null) return "—";
  const parts = [m.path];
  if (m.lexicalRank !== null) parts.push(`words #${m.lexicalRank}`);
  if (m.semanticRank !== null) {
    const sim = m.similarity === null ? "" : ` (sim ${m.similarity.toFixed(3)})`;
    parts.push(`meaning #${m.semanticRank}${sim}`);
  }
  parts.push(`fused ${m.fused.toFixed(3)}`);
  return parts.join(" · ");
}

/** Every figure of a match, for the cell's tooltip. */
export function matchTitle(m: MatchView): string {
  const f = (x: number | null, d: number) => (x === null ? "none" : x.toFixed(d));
  return [
    `found by: ${m.path}`,
    `lexical rank: ${m.lexicalRank ?? "none"}`,
    `semantic rank: ${m.semanticRank ?? "none"}`,
    `similarity: ${f(m.similarity, 4)}`,
    `semantic evidence: ${f(m.semantic, 4)}`,
    `fused: ${f(m.fused, 4)}`,
    `rrf: ${f(m.rrf, 6)}`,
  ].join("\n");
}

const SKILL_LAYERS = new Set(["skills", "skill_catalog"]);

function itemTable(layerId: string): TableName {
  if (SKILL_LAYERS.has(layerId)) return "skills";
  return layerId === "kb" ? "kb" : "items";
}

/** Every decision of an assembly, by table. */
export function decisionRows(a: AssemblyView): DecisionRow[] {
  const rows: DecisionRow[] = [];
  for (const l of a.manifest.layers) {
    const { id, status, reason, detail } = l;
    rows.push({
      table: "layers",
      layer: "",
      id,
      status,
      reason,
      score: null,
      tokens: l.used.tokens,
      detail,
      match: null,
    });
    for (const it of l.items) {
      rows.push({
        table: itemTable(l.id),
        layer: l.id,
        id: it.id,
        status: it.status,
        reason: it.reason,
        score: it.score,
        tokens: null,
        detail: it.detail,
        match: null,
      });
    }
  }
  for (const d of a.memoryPlan?.decisions ?? []) {
    rows.push({
      table: "memory",
      layer: "",
      id: d.memoryId,
      status: d.status,
      reason: d.reason,
      score: d.score,
      tokens: null,
      detail: d.detail,
      match: d.match ?? null,
    });
  }
  for (const d of a.conversationPlan?.decisions ?? []) {
    rows.push({
      table: "conversation",
      layer: "",
      id: d.messageId,
      status: d.status,
      reason: d.reason,
      score: null,
      tokens: d.tokens,
      detail: d.detail,
      match: null,
    });
  }
  return rows;
}

/** True when a row passes the status, reason and text filters. */
export function rowMatches(
  r: DecisionRow,
  s: Pick<State, "status" | "reason" | "search">,
): boolean {
  if (s.status !== "" && r.status !== s.status) return false;
  if (s.reason !== "" && r.reason !== s.reason) return false;
  const q = s.search.trim().toLowerCase();
  if (q === "") return true;
  const fields = [r.id, r.layer, r.detail];
  if (r.match !== null) fields.push(matchText(r.match));
  return fields.some((f) => f.toLowerCase().includes(q));
}

/** Sorted distinct values. */
export function distinct(values: readonly string[]): string[] {
  return [...new Set(values)].sort();
}

/** Dollars with six decimals (prompt-sized costs are fractions of a cent). */
export function dollars(n: number): string {
  return `$${n.toFixed(6)}`;
}

/** A share as a percentage with one decimal. */
export function percent(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}
