/**
 * `/context` in `promptctx chat`: where the model's window goes on the last request (or
 * the next one, before any request): system layers per cache tier, tool definitions,
 * history and the tool results in it, the reserves and what is left, with the cache
 * breakpoints and every decision (conversation and segments).
 */
import type { PlannedRequest } from "../../agent/index.js";
import { renderTable, type TableStyle } from "../table.js";
import { conversationDecisionTable, segmentDecisionTable } from "../tables.js";

/** Where the window goes, by part. */
export interface ContextUsage {
  contextWindow: number;
  /** `"option"` or the context-window table's date. */
  source: string;
  tokenizer: string;
  system: { tier: string; names: string[]; tokens: number }[];
  movedLayers: { name: string; tokens: number }[];
  tools: number;
  other: number;
  history: { tokens: number; kept: number; dropped: number };
  toolResults: { tokens: number; messages: number; truncated: number; cleared: number };
  responseReserve: number;
  tailReserve: number;
  free: number;
}

/** The `/context` report of a planned request (the JSON `--json` prints, `event: "context"`). */
export function contextUsage(r: PlannedRequest): ContextUsage {
  const b = r.budget;
  const c = r.conversation;
  const kept = c.decisions.filter((d) => d.status === "kept");
  const toolIds = new Set(c.messages.filter((m) => m.role === "tool").map((m) => m.id));
  const tools = kept.filter((d) => toolIds.has(d.messageId));
  const transforms = tools.flatMap((d) => d.transforms);
  const used = b.systemTokens + b.toolsTokens + b.otherTokens + c.usedTokens;
  return {
    contextWindow: b.contextWindow,
    source: b.contextWindowSource,
    tokenizer: b.tokenizer,
    system: r.request.tierTokens.map((t) => ({ tier: t.tier, names: t.names, tokens: t.tokens })),
    movedLayers: r.request.movedLayers.map((m) => ({ name: m.name, tokens: m.tokens })),
    tools: b.toolsTokens,
    other: b.otherTokens,
    history: { tokens: c.usedTokens, kept: kept.length, dropped: c.droppedMessageIds.length },
    toolResults: {
      tokens: tools.reduce((sum, d) => sum + d.tokens, 0),
      messages: tools.length,
      truncated: transforms.filter((t) => t.kind === "tool_result_truncated").length,
      cleared: transforms.filter((t) => t.kind === "tool_result_cleared").length,
    },
    responseReserve: b.responseReserve,
    tailReserve: b.tailReserve,
    free: b.contextWindow - used - b.responseReserve - b.tailReserve,
  };
}

const share = (n: number, of: number) => `${((100 * n) / of).toFixed(1)}%`;

function usageRows(u: ContextUsage): { part: string; tokens: number; note: string }[] {
  return [
    ...u.system.map((t) => ({
      part: `system: ${t.tier}`,
      tokens: t.tokens,
      note: t.names.join(", "),
    })),
    ...u.movedLayers.map((m) => ({ part: "current turn: moved", tokens: m.tokens, note: m.name })),
    { part: "tool definitions", tokens: u.tools, note: "" },
    ...(u.other > 0 ? [{ part: "other", tokens: u.other, note: "" }] : []),
    {
      part: "history",
      tokens: u.history.tokens,
      note: `${u.history.kept} message(s) kept, ${u.history.dropped} dropped`,
    },
    {
      part: "  of which tool results",
      tokens: u.toolResults.tokens,
      note: `${u.toolResults.messages} message(s), ${u.toolResults.truncated} truncated, ${u.toolResults.cleared} cleared`,
    },
    { part: "response reserve", tokens: u.responseReserve, note: "" },
    { part: "tail reserve", tokens: u.tailReserve, note: "" },
    { part: "free", tokens: u.free, note: "" },
  ];
}

function cacheLine(r: PlannedRequest): string {
  const placed = r.request.breakpoints.map((b) => `${b.tier} (prefix ${b.prefixTokens})`);
  const skipped = r.request.skipped.map((s) => `${s.tier}: ${s.reason}`);
  const key = r.request.promptCacheKey;
  return [
    `Cache: breakpoints ${placed.join(", ") || "none"}`,
    skipped.length > 0 ? `skipped ${skipped.join(", ")}` : null,
    key !== null ? `prompt_cache_key ${key}` : null,
    `stable prefix ${r.stablePrefix.messages} message(s) / ${r.stablePrefix.tokens} tokens`,
  ]
    .filter((x) => x !== null)
    .join("; ");
}

/** The head line, the usage table, the cache line and the conversation decisions. */
export function contextSummary(r: PlannedRequest, style: TableStyle): string {
  const u = contextUsage(r);
  const head = `Context — ${r.model}: window ${u.contextWindow} tokens (${u.source === "option" ? "given" : `table ${u.source}`}), tokenizer ${u.tokenizer}`;
  const usage = renderTable(
    usageRows(u),
    [
      { header: "part", cell: (x) => x.part },
      { header: "tokens", cell: (x) => x.tokens, align: "right" },
      { header: "share", cell: (x) => share(x.tokens, u.contextWindow), align: "right" },
      { header: "", cell: (x) => x.note, elastic: true },
    ],
    style,
  );
  const c = r.conversation;
  const decisions = conversationDecisionTable(c, style);
  return [head, usage, cacheLine(r), decisions].join("\n\n");
}

/** The `/context` text: {@link contextSummary} and the segment decisions of the system side. */
export function contextText(r: PlannedRequest, style: TableStyle): string {
  return `${contextSummary(r, style)}\n\n${segmentDecisionTable(r.systemPlan, style)}`;
}
