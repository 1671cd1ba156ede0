/** The events a chat turn reports, in the order they happen: turn, then per round reply, tool or limit. */
import type { CacheKeys } from "../../cache/index.js";
import type { DraftCheck } from "../../trace/index.js";

/** The providers a chat can call. */
export const CHAT_PROVIDERS = ["anthropic", "openai"] as const;
export type ChatProvider = (typeof CHAT_PROVIDERS)[number];

/** A user turn began: the context was reassembled and sent as the system side. */
export interface ChatTurnEvent {
  event: "turn";
  turn: number;
  now: string;
  provider: ChatProvider;
  model: string;
  /** Skills the user's line matched. */
  skills: string[];
  /** Red lines every draft of this turn is checked against. */
  redLines: string[];
  /** Red lines left out because the checker rejected them (`id: why`). */
  redLineProblems: string[];
  promptVersion: string;
  cacheKeys: CacheKeys;
  /** Plus the provider's cache report (Anthropic breakpoints, OpenAI prompt cache key). */
  [cache: string]: unknown;
}

/**
 * A draft of the model, checked; `text` is null when it was withheld (a `block` red line,
 * or a check that could not cover the whole draft: fail closed).
 */
export interface ChatReplyEvent {
  event: "reply";
  turn: number;
  /** No tool call came with it: the turn's answer. */
  final: boolean;
  text: string | null;
  withheld: boolean;
  flagged: boolean;
  check: DraftCheck;
  usage: Record<string, number>;
}

/** A tool call run for the model. */
export interface ChatToolEvent {
  event: "tool";
  turn: number;
  round: number;
  id: string;
  name: string;
  input: unknown;
  ok: boolean;
  summary: string;
}

/** The model still asked for tools after the last round: those calls were not run. */
export interface ChatLimitEvent {
  event: "limit";
  turn: number;
  maxToolRounds: number;
  unanswered: number;
}

/**
 * The run the history window left behind passed the compaction threshold: it was
 * summarized by the provider into one pinned message that stands in its place.
 */
export interface ChatCompactionEvent {
  event: "compaction";
  turn: number;
  summaryId: string;
  summarizedIds: string[];
  summarizedTokens: number;
}

export type ChatEvent =
  | ChatTurnEvent
  | ChatReplyEvent
  | ChatToolEvent
  | ChatLimitEvent
  | ChatCompactionEvent;
