/**
 * Transforms applied before packing, each recorded on the message's decision: clearing
 * old tool results (replaced by a one-line notice) and truncating oversized ones to a
 * head and a tail with a notice between them — the only place where content is cut, and
 * the text says so.
 */
import { cpOffsets } from "../text/index.js";
import type { TokenCounter } from "../tokens/index.js";
import { outputFacts } from "./count.js";
import type { Message, Part, ToolResultPart } from "./schema.js";

/** The name a cleared result's notice gives when no call before it names the tool. */
export const UNKNOWN_TOOL = "unknown";

/** What a transform did to a message, with the message's tokens before it. */
export interface Transform {
  readonly kind: "tool_result_truncated" | "tool_result_cleared";
  readonly callId: string;
  readonly originalTokens: number;
}

/** The notice that replaces a cleared result. */
export function clearedNotice(callId: string, name: string): string {
  return `[tool result cleared (call ${callId}, ${name})]`;
}

/** The notice line between the head and the tail of a truncated result. */
export function elisionNotice(elidedChars: number, callId: string): string {
  return `[… ${elidedChars} chars of tool output elided (call ${callId}) …]`;
}

const fitsWithin = (counter: TokenCounter, text: string, limit: number): boolean =>
  (counter.countUpTo ? counter.countUpTo(text, limit) : counter.count(text)) <= limit;

// head ≈ twice the tail, cut at code points: `keep` code points survive in total.
function cutAt(output: string, offsets: Uint32Array, keep: number, callId: string): string {
  const total = offsets.length - 1;
  const head = Math.ceil((2 * keep) / 3);
  const tail = keep - head;
  const headText = output.slice(0, offsets[head]);
  const tailText = output.slice(offsets[total - tail]);
  return `${headText}\n${elisionNotice(total - keep, callId)}\n${tailText}`;
}

/**
 * The largest head + notice + tail cut of `output` (head about twice the tail, cut at
 * code points) whose count is at most `maxTokens`; the notice alone when nothing fits.
 *
 * @example truncateToolOutput("x".repeat(10000), "c1", 40, counter) // "xxx…\n[… 9880 chars of tool output elided (call c1) …]\nxx…"
 */
export function truncateToolOutput(
  output: string,
  callId: string,
  maxTokens: number,
  counter: TokenCounter,
): string {
  const offsets = cpOffsets(output);
  const total = offsets.length - 1;
  // Binary search on the kept code points: fewer kept → fewer tokens (up to BPE noise,
  // which the final step-down check absorbs).
  let lo = 0;
  let hi = total - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fitsWithin(counter, cutAt(output, offsets, mid, callId), maxTokens)) lo = mid;
    else hi = mid - 1;
  }
  while (lo > 0 && !fitsWithin(counter, cutAt(output, offsets, lo, callId), maxTokens)) lo -= 1;
  return cutAt(output, offsets, lo, callId);
}

/** Settings of {@link transformMessage}. */
export interface TransformSettings {
  readonly counter: TokenCounter;
  readonly toolResultMaxTokens: number | null;
  /** Tool names whose results are never cleared. */
  readonly keepToolResults: ReadonlySet<string>;
  /** Call ids whose results are never cleared. */
  readonly keepCallIds: ReadonlySet<string>;
  /**
   * Whether the policy can clear results at all (age or pressure clearing): when not,
   * no cleared form is built, since no window reads it.
   */
  readonly clearing: boolean;
}

/** Whether clearing spares the result of call `callId` to tool `name`. */
export const spares = (s: TransformSettings, name: string, callId: string): boolean =>
  s.keepToolResults.has(name) || s.keepCallIds.has(callId);

function transformPart(
  part: ToolResultPart,
  name: string,
  clear: boolean,
  s: TransformSettings,
): { part: Part; kind: Transform["kind"] } | null {
  if (clear && !spares(s, name, part.callId)) {
    return {
      part: { ...part, output: clearedNotice(part.callId, name) },
      kind: "tool_result_cleared",
    };
  }
  const max = s.toolResultMaxTokens;
  if (max === null) return null;
  const output = truncatedOutput(part.output, part.callId, max, s.counter);
  return output === null ? null : { part: { ...part, output }, kind: "tool_result_truncated" };
}

/**
 * The cut of `output` under `maxTokens` ({@link truncateToolOutput}), or `null` when it
 * fits as is; memoized by content for the counter's lifetime with the output's count
 * (`outputFacts`): a stateless caller (HTTP, the CLI's JSON verbs) sends the whole
 * history every time as new objects, and cutting a result is a binary search of counts.
 */
export function truncatedOutput(
  output: string,
  callId: string,
  maxTokens: number,
  counter: TokenCounter,
): string | null {
  const facts = outputFacts(output, counter);
  const key = `${maxTokens} ${callId}`;
  const hit = facts.cuts?.get(key);
  if (hit !== undefined) return hit;
  const cut =
    facts.tokens <= maxTokens ? null : truncateToolOutput(output, callId, maxTokens, counter);
  facts.cuts ??= new Map();
  facts.cuts.set(key, cut);
  return cut;
}

/**
 * Applies clearing (when `clear`, first) and truncation to a `tool` message's results;
 * `names[k]` is the tool name of its k-th result's call. Returns `null` when nothing
 * changes (most messages: nothing is allocated for them).
 */
export function transformMessage(
  message: Message,
  originalTokens: number,
  names: readonly string[],
  clear: boolean,
  s: TransformSettings,
): { message: Message; transforms: Transform[] } | null {
  if (message.role !== "tool" || (!clear && s.toolResultMaxTokens === null)) return null;
  let transforms: Transform[] | null = null;
  let content: Part[] | null = null;
  const parts = message.content;
  let k = 0;
  for (let j = 0; j < parts.length; j++) {
    const part = parts[j] as Part;
    if (part.type !== "tool_result") continue;
    const done = transformPart(part, names[k++] ?? UNKNOWN_TOOL, clear, s);
    if (done === null) continue;
    content ??= parts.slice();
    content[j] = done.part;
    transforms ??= [];
    transforms.push({ kind: done.kind, callId: part.callId, originalTokens });
  }
  return transforms === null
    ? null
    : { message: { ...message, content: content as Part[] }, transforms };
}
