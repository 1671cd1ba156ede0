/**
 * Transforms applied before packing, each recorded on the message's decision: clearing
 * old tool results (replaced by a one-line notice) and truncating oversized ones to a
 * head and a tail with a notice between them — the only place where content is cut, and
 * the text says so.
 */
import { cpOffsets } from "../text/index.js";
import type { TokenCounter } from "../tokens/index.js";
import { outputFacts, rememberOutput } from "./count.js";
import { cutEstimator } from "./cut-estimate.js";
import { byTier, type QuotedLine, quotedLines } from "./quotes.js";
import type { Message, Part, ToolResultPart } from "./schema.js";

/** The name a cleared result's notice gives when no call before it names the tool. */
export const UNKNOWN_TOOL = "unknown";

/**
 * What a transform did to a message, with the message's tokens before it. A stray part
 * (see units.ts) names what was removed and why: a `tool_result` whose call was never
 * made (`result_without_call`), or a `tool_call` left unanswered while the message's
 * other calls were answered (`call_without_result`).
 */
export type Transform =
  | {
      readonly kind: "tool_result_truncated" | "tool_result_cleared";
      readonly callId: string;
      readonly originalTokens: number;
    }
  | {
      readonly kind: "stray_part_removed";
      readonly callId: string;
      readonly originalTokens: number;
      readonly part: "tool_result" | "tool_call";
      readonly reason: "result_without_call" | "call_without_result";
    };

/** The notice that replaces a cleared result. */
export function clearedNotice(callId: string, name: string): string {
  return `[tool result cleared (call ${callId}, ${name})]`;
}

/** What a notice says of the `lines` lines kept after it. */
const linesFollow = (lines: number): string =>
  lines === 1
    ? "1 line of it quoting ids or numbers follows"
    : `${lines} lines of it quoting ids or numbers follow`;

/** The notice of a cleared result followed by `lines` lines kept from it. */
function clearedKeptNotice(callId: string, name: string, lines: number): string {
  return `[tool result cleared (call ${callId}, ${name}); ${linesFollow(lines)}]`;
}

/**
 * Room for the lines a cleared result keeps: a tenth of its tokens, and at least
 * {@link CLEARED_QUOTE_MIN_TOKENS} (about five lines: a small result's one id).
 */
export const CLEARED_QUOTE_SHARE = 10;
export const CLEARED_QUOTE_MIN_TOKENS = 100;

/** The notice line between the head and the tail of a truncated result. */
export function elisionNotice(elidedChars: number, callId: string): string {
  return `[… ${elidedChars} chars of tool output elided (call ${callId}) …]`;
}

/** The notice before the lines kept from the elided part, and the one after them. */
function keptNotices(elidedChars: number, callId: string, lines: number): [string, string] {
  const what = linesFollow(lines);
  return [
    `[… ${elidedChars} chars of tool output elided (call ${callId}); ${what} …]`,
    `[… end of the lines kept from the elided output (call ${callId}) …]`,
  ];
}

/** Share of the limit the lines kept from the elided part may take at most. */
const QUOTE_SHARE = 5;

/** The head and tail of a cut keeping `keep` code points (head ≈ twice the tail). */
interface Cut {
  readonly head: string;
  readonly tail: string;
  /** UTF-16 span of the elided middle. */
  readonly from: number;
  readonly to: number;
  readonly elided: number;
}

function cutOf(output: string, offsets: Uint32Array, keep: number): Cut {
  const total = offsets.length - 1;
  const head = Math.ceil((2 * keep) / 3);
  const tail = keep - head;
  const from = offsets[head] as number;
  const to = offsets[total - tail] as number;
  return { head: output.slice(0, from), tail: output.slice(to), from, to, elided: total - keep };
}

/** What a cut puts between its head and tail: the notice, or the kept lines in theirs. */
function between(cut: Cut, callId: string, lines: readonly string[]): string {
  if (lines.length === 0) return `\n${elisionNotice(cut.elided, callId)}\n`;
  const [open, close] = keptNotices(cut.elided, callId, lines.length);
  return `\n${open}\n${lines.join("\n")}\n${close}\n`;
}

function joined(cut: Cut, callId: string, lines: readonly string[]): string {
  return `${cut.head}${between(cut, callId, lines)}${cut.tail}`;
}

/**
 * The exact tokens of a cut with `lines` (up to `limit` without the output's pieces: then
 * a number above it when more): with the pieces, only its seams are counted
 * (`TokenCounter.countSplice`), so a probe of the search costs a few lines, not the cut.
 */
function cutTokens(
  output: string,
  pieces: Int32Array | null,
  cut: Cut,
  callId: string,
  lines: readonly string[],
  counter: TokenCounter,
  limit: number,
): number {
  if (pieces !== null && counter.countSplice) {
    return counter.countSplice(output, pieces, cut.from, cut.to, between(cut, callId, lines));
  }
  const text = joined(cut, callId, lines);
  return counter.countUpTo ? counter.countUpTo(text, limit) : counter.count(text);
}

/**
 * The largest plain cut (no kept lines) whose text counts at most `limit`: a `keep` that
 * fits while `keep + 1` does not (or the whole output less one code point). A cut's count
 * grows about linearly with the code points kept, so each probe's count (read up to a
 * little past the limit) places the next probe where that line meets the limit — from a
 * first probe at the output's density when its count (`tokens`) is known —, and halving
 * takes over whenever a probe did not at least halve the interval: a handful of counts of
 * about `limit` tokens each, not one per halving of the whole output (a stateless first
 * call cuts every long result of its window).
 */
function largestCut(
  output: string,
  offsets: Uint32Array,
  callId: string,
  limit: number,
  counter: TokenCounter,
  tokens: number | null,
  pieces: Int32Array | null,
): Cut {
  const max = offsets.length - 2;
  const estimate =
    pieces === null
      ? null
      : cutEstimator(output, pieces, counter, (keep) => {
          const cut = cutOf(output, offsets, keep);
          return {
            from: cut.from,
            to: cut.to,
            between: `\n${elisionNotice(cut.elided, callId)}\n`,
          };
        });
  // Counts up to `cap` are exact, and steer the next probe; above it only "too many".
  const cap = limit + (limit >> 3) + 16;
  // Exact with the pieces (a count above `cap` only steers as "too many", like countUpTo's).
  const countOf = (keep: number): number =>
    cutTokens(output, pieces, cutOf(output, offsets, keep), callId, [], counter, cap);
  // fits: every keep ≤ lo fits as far as probed (lo = -1: none probed fits); hi: the least
  // keep probed that does not (max + 1: none).
  let lo = -1;
  let hi = max + 1;
  // With the output's pieces, probes are aimed by estimates corrected by the last exact
  // count: the largest keep between the bounds whose estimate plus that error fits.
  const aimed = (estimate: (keep: number) => number, error: number): number => {
    let a = lo + 1;
    let b = hi - 1;
    if (a >= b || estimate(a) + error > limit) return a;
    while (a < b) {
      const mid = (a + b + 1) >> 1;
      if (estimate(mid) + error <= limit) a = mid;
      else b = mid - 1;
    }
    return a;
  };
  // Unknown count: about four code points a token, as in most text.
  let next =
    estimate !== null
      ? aimed(estimate, 0)
      : tokens !== null && tokens > 0
        ? Math.floor((max * limit) / tokens)
        : limit * 4;
  let last: [number, number] | null = null; // the last probe counted exactly
  while (hi - lo > 1) {
    // Near the answer, counts are not quite monotonic in the code points kept (a piece
    // merges differently): without estimates, the last few keeps are halved.
    const near = estimate === null && hi - lo <= 8;
    const keep = near || next <= lo || next >= hi ? lo + Math.ceil((hi - lo) / 2) : next;
    const c = countOf(keep);
    if (c <= limit) lo = keep;
    else hi = keep;
    if (c === limit) {
      next = keep + 1; // one code point more fits only if it costs nothing
    } else if (estimate !== null && c <= cap) {
      next = aimed(estimate, c - estimate(keep));
    } else if (c > 0 && c <= cap) {
      // Where a line meets the limit: through the last two exact probes when their counts
      // differ enough to tell a slope, else through the origin and this one.
      const slope =
        last !== null && Math.abs(c - last[1]) >= 3 ? (keep - last[0]) / (c - last[1]) : keep / c;
      next = Math.round(keep + (limit - c) * (slope > 0 ? slope : keep / c));
      last = [keep, c];
    } else next = Math.floor((keep * limit) / cap);
    if (next === keep) next = c <= limit ? keep + 1 : keep - 1;
  }
  return cutOf(output, offsets, Math.max(0, lo));
}

/** Quoted lines inside the cut's elided middle, ids first, then numbers, each in order. */
function inMiddle(quoted: readonly QuotedLine[], cut: Cut): QuotedLine[] {
  return byTier(quoted.filter((q) => q.start >= cut.from && q.end <= cut.to));
}

/** The lines of `candidates` that fit `room` tokens, in the candidates' (priority) order. */
function chooseLines(
  candidates: readonly QuotedLine[],
  room: number,
  cost: (q: QuotedLine) => number,
): QuotedLine[] {
  const chosen: QuotedLine[] = [];
  let used = 0;
  for (const q of candidates) {
    if (used + cost(q) > room) continue;
    chosen.push(q);
    used += cost(q);
  }
  return chosen;
}

const texts = (lines: readonly QuotedLine[]): string[] =>
  [...lines].sort((a, b) => a.start - b.start).map((q) => q.text);

/**
 * The cut of `output` under `maxTokens`: a head and a tail (head about twice the tail, cut
 * at code points) with a notice between them — the notice alone when nothing fits. When
 * lines of the elided middle quote ids or numbers, up to a fifth of the limit keeps them
 * (ids first, in order) between two notices, and the head and tail share the rest; with
 * no such line the cut is the largest that fits.
 *
 * @example truncateToolOutput("x".repeat(10000), "c1", 40, counter) // "xxx…\n[… 9880 chars of tool output elided (call c1) …]\nxx…"
 */
export function truncateToolOutput(
  output: string,
  callId: string,
  maxTokens: number,
  counter: TokenCounter,
  tokens: number | null = null,
): string {
  return cutToolOutput(output, callId, maxTokens, counter, tokens, null).text;
}

/**
 * {@link truncateToolOutput} with the cut's tokens when the counter has `pieceCounts`
 * (counted exactly as it was made; `null` otherwise), from the output's `pieces` when the
 * caller has them.
 */
function cutToolOutput(
  output: string,
  callId: string,
  maxTokens: number,
  counter: TokenCounter,
  tokens: number | null,
  known: Int32Array | null,
): { text: string; tokens: number | null } {
  const offsets = cpOffsets(output);
  // The output's pieces, when the counter has them, aim both searches below and count
  // their probes.
  const pieces = known ?? (counter.pieceCounts ? counter.pieceCounts(output) : null);
  const done = (cut: Cut, lines: readonly string[]) => ({
    text: joined(cut, callId, lines),
    tokens:
      pieces !== null && counter.countSplice
        ? cutTokens(output, pieces, cut, callId, lines, counter, maxTokens)
        : null,
  });
  const plain = largestCut(output, offsets, callId, maxTokens, counter, tokens, pieces);
  const quoted = quotedLines(output);
  const wanted = inMiddle(quoted, plain);
  if (wanted.length === 0) return done(plain, []);
  const costs = new Map<QuotedLine, number>();
  const cost = (q: QuotedLine): number => {
    let c = costs.get(q);
    if (c === undefined) {
      c = counter.count(q.text) + 1;
      costs.set(q, c);
    }
    return c;
  };
  const cap = Math.floor(maxTokens / QUOTE_SHARE);
  let reserve = counter.count(keptNotices(plain.elided, callId, wanted.length).join("\n")) + 1;
  for (let i = 0; i < wanted.length && reserve < cap; i++) reserve += cost(wanted[i] as QuotedLine);
  reserve = Math.min(cap, reserve);
  const cut = largestCut(output, offsets, callId, maxTokens - reserve, counter, tokens, pieces);
  const lines = chooseLines(inMiddle(quoted, cut), reserve, cost);
  // Counts are nearly additive: the whole is checked, and the lowest-priority lines go
  // until it fits.
  while (
    lines.length > 0 &&
    cutTokens(output, pieces, cut, callId, texts(lines), counter, maxTokens) > maxTokens
  ) {
    lines.pop();
  }
  return done(cut, texts(lines));
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
): { part: Part; kind: "tool_result_truncated" | "tool_result_cleared" } | null {
  if (clear && !spares(s, name, part.callId)) {
    const output = clearedOutput(part.output, part.callId, name, s.counter, s.toolResultMaxTokens);
    // Never bigger: a result already below its notice's size stays as it is.
    if (s.counter.count(output) < outputFacts(part.output, s.counter).tokens) {
      return { part: { ...part, output }, kind: "tool_result_cleared" };
    }
  }
  const max = s.toolResultMaxTokens;
  if (max === null) return null;
  const output = truncatedOutput(part.output, part.callId, max, s.counter);
  return output === null ? null : { part: { ...part, output }, kind: "tool_result_truncated" };
}

/**
 * Counts the results of a `tool` message that truncation may cut by their pieces (see
 * `outputFacts`' `forCut`) before the message is counted: its count then reads them from
 * the memo, and each cut takes the pieces instead of reading its output a second time.
 */
export function countForCuts(message: Message, s: TransformSettings): void {
  const max = s.toolResultMaxTokens;
  if (max === null || message.role !== "tool" || !s.counter.pieceCounts) return;
  const parts = message.content;
  for (let j = 0; j < parts.length; j++) {
    const part = parts[j] as Part;
    // A token holds at least one UTF-8 byte, at most 3 per UTF-16 unit: shorter, never cut.
    if (part.type === "tool_result" && part.output.length * 3 > max) {
      outputFacts(part.output, s.counter, true);
    }
  }
}

/**
 * The cut of `output` under `maxTokens` ({@link truncateToolOutput}), or `null` when it
 * fits as is; memoized by content for the counter's lifetime with the output's count
 * (`outputFacts`), and `null` too when the cut would count no less than the output (a
 * limit below the notice's size). A stateless caller (HTTP, the CLI's JSON verbs) sends the whole
 * history every time as new objects, and cutting a result is a binary search of counts.
 */
export function truncatedOutput(
  output: string,
  callId: string,
  maxTokens: number,
  counter: TokenCounter,
): string | null {
  const facts = outputFacts(output, counter, true);
  const pieces = facts.pieces;
  facts.pieces = null;
  const key = `${maxTokens} ${callId}`;
  const hit = facts.cuts?.get(key);
  if (hit !== undefined) return hit;
  const made =
    facts.tokens <= maxTokens
      ? null
      : cutToolOutput(output, callId, maxTokens, counter, facts.tokens, pieces);
  let cut: string | null = null;
  if (made !== null) {
    const tokens = made.tokens ?? counter.count(made.text);
    // Never bigger: under a limit smaller than the notice, a small result stays as it is.
    if (tokens < facts.tokens) cut = made.text;
    // Counted as it was made: pricing the message it is sent in reads it from the memo.
    if (made.tokens !== null) rememberOutput(made.text, made.tokens, counter);
  }
  facts.cuts ??= new Map();
  facts.cuts.set(key, cut);
  return cut;
}

/**
 * What replaces a cleared result: {@link clearedNotice}, then the lines of `output` that
 * quote ids or numbers (ids first, each whole up to 200 code points, in the output's
 * order) in a tenth of the output's tokens — the build id an old log quoted is what a
 * later turn asks for —; a result that would be cut to `maxTokens` uncleared keeps fewer
 * lines (or none), so its cleared form counts less than the cut. Memoized by content for
 * the counter's lifetime, like a cut.
 *
 * @example clearedOutput("ok\nbuild id b-1f2e3a4b\n" + "x ".repeat(400), "c1", "bash", counter) // "[tool result cleared (call c1, bash); 1 line of it quoting ids or numbers follows]\nbuild id b-1f2e3a4b"
 */
export function clearedOutput(
  output: string,
  callId: string,
  name: string,
  counter: TokenCounter,
  maxTokens: number | null = null,
): string {
  const facts = outputFacts(output, counter);
  const key = `clear ${callId} ${name} ${maxTokens}`;
  const hit = facts.cuts?.get(key);
  if (hit !== undefined && hit !== null) return hit;
  const ordered = byTier(quotedLines(output));
  // A result cut to `maxTokens` when uncleared: its cleared form stays below the cut, so
  // clearing never makes a result larger than it would be sent.
  const cut = maxTokens === null ? null : truncatedOutput(output, callId, maxTokens, counter);
  const below = cut === null ? Number.POSITIVE_INFINITY : outputFacts(cut, counter).tokens - 1;
  const room = Math.min(
    Math.max(CLEARED_QUOTE_MIN_TOKENS, Math.floor(facts.tokens / CLEARED_QUOTE_SHARE)),
    below - counter.count(clearedKeptNotice(callId, name, ordered.length)) - 1,
  );
  const lines = chooseLines(ordered, room, (q) => counter.count(q.text) + 1);
  const kept = (n: number) =>
    `${clearedKeptNotice(callId, name, n)}\n${texts(lines.slice(0, n)).join("\n")}`;
  let n = lines.length;
  while (n > 0 && counter.count(kept(n)) > below) n -= 1;
  const text = n === 0 ? clearedNotice(callId, name) : kept(n);
  facts.cuts ??= new Map();
  facts.cuts.set(key, text);
  return text;
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
