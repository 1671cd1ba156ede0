/**
 * The conversation request (docs/conversation.md) as zod schemas: the provider-neutral
 * message model, the packing policy and the plan-conversation request. One source of
 * validation and of the TypeScript types, shared by the library, the CLI and HTTP.
 */
import { z } from "zod";
import { isoTimestamp, nonBlankString, textString, wellFormedJson } from "../text/index.js";

/** Roles of the neutral message model. */
export const MESSAGE_ROLES = ["user", "assistant", "tool"] as const;
export type MessageRole = (typeof MESSAGE_ROLES)[number];

/** Plain text. Any role may hold text except `tool`, whose content is its results. */
export const TextPartSchema = z.object({ type: z.literal("text"), text: textString });
/** Deepest nesting of arrays and objects in a tool call's input. */
export const MAX_TOOL_INPUT_DEPTH = 64;

// Iterative, so a hostile input is refused before anything recurses into it.
function nestsWithin(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [v, depth] = top;
    if (v === null || typeof v !== "object") continue;
    if (depth >= max) return false;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return true;
}

/** A tool call made by the assistant; `input` is any JSON value. */
export const ToolCallPartSchema = z.object({
  type: z.literal("tool_call"),
  callId: nonBlankString,
  name: nonBlankString,
  input: z
    .unknown()
    .refine((v) => nestsWithin(v, MAX_TOOL_INPUT_DEPTH), {
      message: `nests deeper than ${MAX_TOOL_INPUT_DEPTH} levels`,
      abort: true,
    })
    .pipe(wellFormedJson),
});
/** The answer to one tool call, carried by a `tool` message. */
export const ToolResultPartSchema = z.object({
  type: z.literal("tool_result"),
  callId: nonBlankString,
  output: textString,
  isError: z.boolean().optional(),
});
export const PartSchema = z.discriminatedUnion("type", [
  TextPartSchema,
  ToolCallPartSchema,
  ToolResultPartSchema,
]);
export type TextPart = z.output<typeof TextPartSchema>;
export type ToolCallPart = z.output<typeof ToolCallPartSchema>;
export type ToolResultPart = z.output<typeof ToolResultPartSchema>;
export type Part = z.output<typeof PartSchema>;

// Which part types each role may hold: a provider rejects anything else.
const ALLOWED_PARTS: Readonly<Record<MessageRole, ReadonlySet<Part["type"]>>> = {
  user: new Set(["text"]),
  assistant: new Set(["text", "tool_call"]),
  tool: new Set(["tool_result"]),
};

/**
 * One message of the neutral model: `user` holds text, `assistant` text and tool calls,
 * `tool` tool results.
 */
export const MessageSchema = z
  .object({
    /** Non-blank and unique within the conversation. */
    id: nonBlankString,
    role: z.enum(MESSAGE_ROLES),
    content: z.array(PartSchema).min(1),
    /** When it was said (informational; never read by the planner). */
    at: isoTimestamp.optional(),
  })
  .superRefine((m, ctx) => {
    m.content.forEach((part, i) => {
      if (!ALLOWED_PARTS[m.role].has(part.type)) {
        ctx.addIssue({
          code: "custom",
          path: ["content", i, "type"],
          message: `a ${m.role} message cannot hold a ${part.type} part`,
        });
      }
    });
  });
export type MessageInput = z.input<typeof MessageSchema>;
export type Message = z.output<typeof MessageSchema>;

/** Smallest `toolResultMaxTokens`: room for the elision notice and a little output. */
export const MIN_TOOL_RESULT_MAX_TOKENS = 32;

/** The packing policy; every field optional. */
export const ConversationPolicySchema = z.object({
  /** Message ids whose units are kept wherever they are (e.g. the first ask, a summary). */
  pinned: z.array(nonBlankString).default([]),
  /** A tool result over this many tokens is cut to head + notice + tail. `null`: never. */
  toolResultMaxTokens: z.number().int().min(MIN_TOOL_RESULT_MAX_TOKENS).nullable().default(null),
  /** Results in turns older than the last N are replaced by a one-line notice. */
  clearToolResultsAfterTurns: z.number().int().min(1).nullable().default(null),
  /** Tool names whose results are never cleared. */
  keepToolResults: z.array(nonBlankString).default([]),
  /**
   * Clearing under pressure, in (0, 1]: nothing is cleared or dropped while the kept total
   * is at most this share of the budget; above it, one step clears old tool results (at
   * least `clearAtLeastTokens`), then drops whole old turns down to `lowWaterRatio`.
   * `null`: off (age clearing by `clearToolResultsAfterTurns` applies instead).
   */
  clearTrigger: z.number().gt(0).lte(1).nullable().default(null),
  /** Pressure clearing: tokens one step frees at least (when there are that many to clear). */
  clearAtLeastTokens: z.number().int().min(0).default(0),
  /**
   * Batch clearing (the stateless grid clearing of a whole request only; the held boundary
   * ignores it): old tool results are cleared, before any pressure, in runs that each free
   * at least this many tokens — oldest first, sparing the current turn and the last
   * `keepRecentToolResults` tool messages. `null`: only pressure clears.
   */
  clearBatchTokens: z.number().int().min(1).nullable().default(null),
  /** Pressure clearing: the last N tool messages' results are never cleared. */
  keepRecentToolResults: z.number().int().min(0).default(0),
  /**
   * Whether older rounds of the current turn may have their results cleared when the turn
   * outgrows the budget (only the ask and the latest round are inviolable; rounds that do
   * not fit even cleared are dropped whole, oldest first). `null`: when the policy clears
   * at all (`clearTrigger` or `clearToolResultsAfterTurns`); `false`: rounds are only dropped.
   */
  clearCurrentTurn: z.boolean().nullable().default(null),
  /**
   * Whether the trigger of clearing inside the current turn counts truncated results at
   * their uncut size. A whole request without state (`statelessClearing`) sets it: it cuts
   * nothing before a step clears or drops, so the step comes with the request that starts
   * cutting — one cache break instead of two.
   */
  turnTriggerUncut: z.boolean().default(false),
  /** Call ids whose results are never cleared (by either clearing rule). */
  keepCallIds: z.array(nonBlankString).default([]),
  /** In (0, 1]: when the window must move, move it until the kept total is at most this share. */
  lowWaterRatio: z.number().gt(0).lte(1).default(1),
  /** The previous plan's `firstKeptId`: kept as the window start while everything from it fits. */
  anchor: textString.nullable().default(null),
  /**
   * What `anchor` is — `previous_plan`: the previous plan's `firstKeptId` (a cache anchor);
   * `window_grid`: the stateless window start a whole request derived on its grid. Only the
   * wording of the decisions it drops differs.
   */
  anchorFrom: z.enum(["previous_plan", "window_grid"]).default("previous_plan"),
  /** The previous plan's `clearBeforeTurn`: held while the anchor holds. */
  clearBeforeTurn: z.number().int().min(0).nullable().default(null),
});
export type ConversationPolicyInput = z.input<typeof ConversationPolicySchema>;
export type ConversationPolicy = z.output<typeof ConversationPolicySchema>;

/**
 * The plan-conversation request of the JSON contract (CLI, HTTP): `tokenizer` is a
 * built-in name (default `estimate`).
 *
 * @example PlanConversationJsonRequestSchema.parse({ messages: [], budgetTokens: 100 }).policy.lowWaterRatio // 1
 */
export const PlanConversationJsonRequestSchema = z.object({
  messages: z.array(MessageSchema),
  budgetTokens: z.number().int().min(0),
  tokenizer: textString.optional(),
  policy: ConversationPolicySchema.default(ConversationPolicySchema.parse({})),
});
export type PlanConversationJsonRequest = z.input<typeof PlanConversationJsonRequestSchema>;
