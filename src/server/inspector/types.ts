/**
 * The JSON the inspector page reads (`GET /inspect/data`, `GET /inspect/diff`): shared by
 * the server, which builds it, and the page, which draws it. Types only, no imports: this
 * file compiles both for Node and for the browser.
 */

export type Tier = "static" | "session" | "dynamic";

export interface ItemDecisionView {
  id: string;
  sourceId: string;
  status: string;
  reason: string;
  score: number | null;
  detail: string;
}

export interface LayerView {
  id: string;
  required: boolean;
  cacheTier: Tier;
  budget: { chars?: number; tokens?: number };
  used: { chars: number; tokens: number };
  status: string;
  reason: string;
  detail: string;
  versionId: string;
  sourceRefs: string[];
  sources: string[];
  items: ItemDecisionView[];
}

/** How a hybrid recall found a memory (docs/memory-selection.md `match`). */
export interface MatchView {
  path: string;
  lexicalRank: number | null;
  semanticRank: number | null;
  similarity: number | null;
  semantic: number;
  fused: number;
  rrf: number;
}

export interface MemoryDecisionView {
  memoryId: string;
  status: string;
  reason: string;
  score: number;
  detail: string;
  /** Absent when the recall was by words only, or the recording predates it. */
  match?: MatchView;
}

export interface PlanTierView {
  tier: Tier;
  names: string[];
  chars: number;
  tokens: number;
  start: number;
  end: number;
}

export interface MessagePartView {
  type: string;
  text?: unknown;
  output?: unknown;
  name?: unknown;
}

export interface ConversationView {
  messages: Array<{ id: string; role: string; content: MessagePartView[] }>;
  decisions: Array<{
    messageId: string;
    status: string;
    reason: string;
    detail: string;
    tokens: number;
    turn: number;
  }>;
  usedTokens: number;
  budgetTokens: number;
}

export interface AssemblyView {
  prompt: string;
  manifest: {
    promptVersion: string;
    cacheKeys: Record<Tier, string | null>;
    tokenizer: string;
    mode: string;
    now: string;
    budget: { chars: number | null; tokens: number | null };
    used: { chars: number; tokens: number };
    layers: LayerView[];
  };
  memoryPlan: { decisions: MemoryDecisionView[] } | null;
  segmentPlan: { tiers: PlanTierView[] };
  conversationPlan?: ConversationView | undefined;
}

export interface ErrorView {
  error: { code: string; message: string; path: string | null };
}

/** One layer's text in the prompt: `prompt.slice(start, end)`. */
export interface SpanView {
  id: string;
  start: number;
  end: number;
}

/** One recorded line (or the one assembly of `inspect --workspace`). */
export interface TurnView {
  /** From 1, in file order. */
  index: number;
  /** Its line in the file (0 when it was not read from a file). */
  line: number;
  kind: string;
  at: string;
  query: string;
  now: string | null;
  response: AssemblyView | ErrorView;
  spans: SpanView[];
}

/** Provider cache pricing: multipliers of the input price per million tokens. */
export interface PricingView {
  inputPerMTok: number;
  cacheReadMultiplier: number;
  cacheWriteMultiplier: number;
  /** Tiers that carry a cache breakpoint (the dynamic tier never does). */
  cachedTiers: Tier[];
}

/** `GET /inspect/data`. */
export interface InspectData {
  title: string;
  turns: TurnView[];
  pricing: PricingView;
}

/** `GET /inspect/diff?a=A&b=B`: what changed from turn A to turn B. */
export interface DiffView {
  a: number;
  b: number;
  same: boolean;
  errors: { before: string | null; after: string | null } | null;
  decisions: Array<{ table: string; id: string; before: string | null; after: string | null }>;
  layers: Array<{ id: string; tier: Tier; change: string }>;
  prompt: { bytesBefore: number; bytesAfter: number; firstChange: number | null };
  firstChangedLayer: {
    layer: string | null;
    bytesBefore: number;
    bytesAfter: number;
    offset: number;
    removed: string;
    added: string;
    contextBefore: string;
    contextAfter: string;
  } | null;
  cacheKeys: Array<{ tier: Tier; before: string | null; after: string | null }>;
  cacheBreak: Tier | null;
  other: string[];
}
