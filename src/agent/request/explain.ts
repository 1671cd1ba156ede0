/**
 * A planned request explained in a few lines: where the window went, what left the
 * conversation and why, what was cleared or cut, where the cache breakpoints are and what
 * the next request should read back. Built only from the request's own report and
 * decisions, so it says nothing the plan did not decide.
 */
import type { ConversationDecision } from "../../conversation/index.js";
import type { PlannedRequest } from "./request.js";
import { WINDOW_DIGEST_HEADER } from "./window.js";

/** Tool results one transform kind touched. */
export interface TransformSummary {
  /** Tool messages with this transform. */
  messages: number;
  /** Tokens it took off them (their tokens before, less as sent). */
  freedTokens: number;
}

/** Dropped messages that share one reason (the decision detail's text after the tokens). */
export interface DropReason {
  reason: ConversationDecision["reason"];
  why: string;
  messages: number;
  tokens: number;
}

/** What {@link explainRequest} returns: the figures, and the same in a few lines of text. */
export interface RequestExplanation {
  window: {
    contextWindow: number;
    /** `"option"`, or the context-window table's date. */
    source: string;
    system: number;
    tools: number;
    other: number;
    responseReserve: number;
    tailReserve: number;
    /** What the conversation was planned in, and what it used. */
    messagesBudget: number;
    messagesUsed: number;
    /** Left unused in the window. */
    free: number;
  };
  history: {
    /** Messages given, kept and dropped. */
    messages: number;
    kept: number;
    dropped: number;
    /** The first message of the kept window. */
    firstKeptId: string;
    /** Dropped messages grouped by reason, largest first. */
    reasons: DropReason[];
  };
  cleared: TransformSummary;
  truncated: TransformSummary;
  /** The message that opens with a digest of what left the window, or null. */
  digest: { messageId: string } | null;
  cache: {
    /** Anthropic breakpoints placed: where, and the prefix they cache. */
    breakpoints: { at: string; prefixTokens: number }[];
    skipped: { at: string; reason: string }[];
    /** OpenAI-bound: the `prompt_cache_key` sent, else null. */
    promptCacheKey: string | null;
    /**
     * Tokens the next request of this conversation should read back from the cache: the
     * prefix through the last breakpoint placed (Anthropic), or the system side and the
     * stable history (OpenAI's automatic prefix cache).
     */
    nextReadTokens: number;
  };
  /** The explanation as text, one line per fact. */
  lines: string[];
}

const n = (x: number): string => x.toLocaleString("en-US");

// A history_window detail reads `unit of {t} tokens outside the window: {why}`.
function whyOf(d: ConversationDecision): string {
  const at = d.detail.indexOf(": ");
  return d.reason === "history_window" && at >= 0 ? d.detail.slice(at + 2) : d.detail;
}

function dropReasons(ds: readonly ConversationDecision[]): DropReason[] {
  const by = new Map<string, DropReason>();
  for (const d of ds) {
    if (d.status !== "dropped") continue;
    const why = whyOf(d);
    const key = `${d.reason}\u0000${why}`;
    const r = by.get(key) ?? { reason: d.reason, why, messages: 0, tokens: 0 };
    r.messages += 1;
    r.tokens += d.reason === "orphan_removed" ? 0 : d.tokens;
    by.set(key, r);
  }
  return [...by.values()].sort(
    (a, b) => b.tokens - a.tokens || b.messages - a.messages || (a.why < b.why ? -1 : 1),
  );
}

function transformed(
  ds: readonly ConversationDecision[],
  kind: "tool_result_cleared" | "tool_result_truncated",
): TransformSummary {
  let messages = 0;
  let freedTokens = 0;
  for (const d of ds) {
    if (d.status !== "kept") continue;
    const t = d.transforms.find((x) => x.kind === kind);
    if (t === undefined) continue;
    messages += 1;
    freedTokens += t.originalTokens - d.tokens;
  }
  return { messages, freedTokens };
}

function digestOf(r: PlannedRequest): { messageId: string } | null {
  const first = r.conversation.messages.find((m) => m.id === r.conversation.firstKeptId);
  const opening = first?.content[0];
  return opening?.type === "text" && opening.text.startsWith(WINDOW_DIGEST_HEADER)
    ? { messageId: first?.id as string }
    : null;
}

function linesOf(r: PlannedRequest, e: Omit<RequestExplanation, "lines">): string[] {
  const w = e.window;
  const from = w.source === "option" ? "given" : `model table ${w.source}`;
  const lines = [
    `window ${n(w.contextWindow)} tokens (${from}): system ${n(w.system)}, tools ${n(w.tools)}` +
      `${w.other > 0 ? `, other ${n(w.other)}` : ""}, response reserve ${n(w.responseReserve)}` +
      `${w.tailReserve > 0 ? `, tail reserve ${n(w.tailReserve)}` : ""}; conversation ${n(w.messagesUsed)} of ${n(w.messagesBudget)}; ${n(w.free)} free`,
  ];
  const h = e.history;
  lines.push(
    `history: ${h.kept} of ${h.messages} messages kept, from ${h.firstKeptId}` +
      (h.dropped === 0 ? "; nothing dropped" : `; ${h.dropped} dropped`),
  );
  for (const x of h.reasons) {
    const tokens = x.reason === "orphan_removed" ? "" : ` (${n(x.tokens)} tokens)`;
    lines.push(`  ${x.messages} ${x.reason}${tokens}: ${x.why}`);
  }
  if (e.cleared.messages > 0) {
    lines.push(
      `cleared: ${e.cleared.messages} tool result message(s), ${n(e.cleared.freedTokens)} tokens freed (a notice and the lines quoting ids or numbers kept)`,
    );
  }
  if (e.truncated.messages > 0) {
    lines.push(
      `truncated: ${e.truncated.messages} tool result message(s), ${n(e.truncated.freedTokens)} tokens cut (head, tail and the lines quoting ids or numbers kept)`,
    );
  }
  if (e.digest !== null) {
    lines.push(`digest: ${e.digest.messageId} opens with a digest of what left the window`);
  }
  const c = e.cache;
  if (r.provider === "anthropic" || r.provider === "ai-sdk-anthropic") {
    const placed = c.breakpoints.map((b) => `${b.at} (prefix ${n(b.prefixTokens)})`);
    lines.push(`cache: breakpoints ${placed.join(", ") || "none"}`);
    for (const s of c.skipped) lines.push(`  skipped ${s.at}: ${s.reason}`);
  } else {
    lines.push(`cache: prompt_cache_key ${c.promptCacheKey ?? "none"} (automatic prefix cache)`);
  }
  lines.push(`cache: the next request should read back ${n(c.nextReadTokens)} tokens`);
  return lines;
}

/**
 * Explains a planned request (from `assembleRequest` or `planRequest`) in figures and a
 * few lines: the window's parts, what was dropped and why, what was cleared or cut, the
 * digest, the cache breakpoints and what the next request should read back.
 *
 * @example
 * const r = await assembleRequest({ provider: "anthropic", model: "claude-sonnet-4-5", messages, assemble });
 * console.log(explainRequest(r).lines.join("\n"));
 */
export function explainRequest(r: PlannedRequest): RequestExplanation {
  const b = r.budget;
  const c = r.conversation;
  const used = b.systemTokens + b.toolsTokens + b.otherTokens + c.usedTokens;
  const breakpoints = r.request.breakpoints.map((x) => ({
    at: x.block === undefined ? String(x.tier) : `${String(x.tier)} (block ${x.block})`,
    prefixTokens: x.prefixTokens,
  }));
  const lastPlaced = r.request.breakpoints.at(-1)?.prefixTokens ?? 0;
  const openai = !(r.provider === "anthropic" || r.provider === "ai-sdk-anthropic");
  const e: Omit<RequestExplanation, "lines"> = {
    window: {
      contextWindow: b.contextWindow,
      source: b.contextWindowSource,
      system: b.systemTokens,
      tools: b.toolsTokens,
      other: b.otherTokens,
      responseReserve: b.responseReserve,
      tailReserve: b.tailReserve,
      messagesBudget: b.messagesBudget,
      messagesUsed: c.usedTokens,
      free: b.contextWindow - used - b.responseReserve - b.tailReserve,
    },
    history: {
      messages: c.decisions.length,
      kept: c.decisions.length - c.droppedMessageIds.length,
      dropped: c.droppedMessageIds.length,
      firstKeptId: c.firstKeptId,
      reasons: dropReasons(c.decisions),
    },
    cleared: transformed(c.decisions, "tool_result_cleared"),
    truncated: transformed(c.decisions, "tool_result_truncated"),
    digest: digestOf(r),
    cache: {
      breakpoints,
      skipped: r.request.skipped.map((s) => ({ at: String(s.tier), reason: s.detail })),
      promptCacheKey: r.request.promptCacheKey,
      nextReadTokens: openai ? b.systemTokens + b.toolsTokens + r.stablePrefix.tokens : lastPlaced,
    },
  };
  return { ...e, lines: linesOf(r, e) };
}
