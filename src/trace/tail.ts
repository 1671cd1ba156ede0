/**
 * Executor side of the wire contract (spec 07): runtime tails inserted at their anchors.
 *
 * Rules (documented so a peer in another language can mirror them): each tail is inserted
 * at its anchor as `"\n\n" + text`; at offset 0 the tails are joined by `"\n\n"` and
 * followed by `"\n\n"` when the body is not empty. Tails of one anchor keep the given
 * order, anchors sharing an offset keep their declaration order. The anchor's reserve is
 * filled in that order; the cost of a tail is its text plus its two-character join. A tail
 * over what is left of the reserve is cut — only that tail: at the last line break of the
 * longest fitting prefix (binary search over code points; exact for counters monotone in
 * prefix length) when that keeps at least half of it, otherwise at the longest fitting
 * code-point prefix; a tail with no room at all is dropped. Each cut is reported
 * (`truncated`, original and kept size). The assembled body is copied byte for byte, and
 * every included layer is re-verified against its `versionId` at its new position.
 */
import { z } from "zod";
import { versionId } from "../cache/index.js";
import { InvalidInputError, invalidFromZod, PromptctxError } from "../errors/index.js";
import { cpLength, cpOffsets, nonBlankString, textString } from "../text/index.js";
import { resolveTokenCounter, type TokenCounter } from "../tokens/index.js";
import type { WireAnchor, WireContract, WireSpan } from "./wire-schema.js";
import { validateWire } from "./wire-validate.js";

/** What joins a runtime tail to its neighbour. */
export const TAIL_JOIN = "\n\n";

/** A runtime tail block the executor adds (inbound file paths, extracted documents, web context). */
export interface TailInput {
  anchor: string;
  text: string;
}

/** How a tail was placed. */
export interface TailOutcome {
  anchor: string;
  /** Index in the `tails` argument. */
  index: number;
  /** The kept text in the final prompt (code points, join excluded); null when dropped. */
  span: WireSpan | null;
  chars: number;
  tokens: number;
  originalChars: number;
  originalTokens: number;
  truncated: boolean;
  /** `none` (whole), `line` (at a line break), `char` (at a code point), `dropped` (no room). */
  cut: "none" | "line" | "char" | "dropped";
}

/** The prompt with its runtime tails. */
export interface TailedPrompt {
  prompt: string;
  chars: number;
  tokens: number;
  /** `tokens ≤ contextWindow − responseReserve`. */
  fits: boolean;
  tails: TailOutcome[];
  /** Every included layer's span in `prompt` (content byte-identical to the body's). */
  layers: Array<{ id: string; neverTruncate: boolean; span: WireSpan }>;
  /**
   * What was inserted where: `offset` in the body, `span` in `prompt` (tails and joins).
   * Removing every span gives back `assembledContext` exactly.
   */
  inserted: Array<{ offset: number; span: WireSpan }>;
}

const TailsSchema = z.array(z.object({ anchor: nonBlankString, text: textString }));

interface Cut {
  text: string;
  cut: TailOutcome["cut"];
}

/** The longest prefix of `text` whose cost (join included) fits both remaining budgets. */
function cutToFit(text: string, tokensLeft: number, charsLeft: number, counter: TokenCounter): Cut {
  const fits = (t: string) =>
    cpLength(t) + TAIL_JOIN.length <= charsLeft && counter.count(TAIL_JOIN + t) <= tokensLeft;
  if (fits(text)) return { text, cut: "none" };
  const offsets = cpOffsets(text);
  const n = offsets.length - 1;
  let lo = 0; // largest known fitting prefix length (or 0)
  let hi = n; // known not to fit
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (fits(text.slice(0, offsets[mid]))) lo = mid;
    else hi = mid;
  }
  if (lo === 0) return { text: "", cut: "dropped" };
  const prefix = text.slice(0, offsets[lo]);
  const nl = prefix.lastIndexOf("\n");
  if (nl > 0) {
    const line = prefix.slice(0, nl).replace(/\r$/, "");
    if (line !== "" && cpLength(line) * 2 >= lo && fits(line)) return { text: line, cut: "line" };
  }
  return fits(prefix) ? { text: prefix, cut: "char" } : { text: "", cut: "dropped" };
}

/** The counter of the contract's reserves: the given one or the built-in one it names. */
function tailCounter(c: WireContract, options: { counter?: TokenCounter }): TokenCounter {
  const counter = options.counter ?? resolveTokenCounter(c.budget.tokenizer, "budget.tokenizer");
  if (counter.name !== c.budget.tokenizer) {
    throw new InvalidInputError(
      `the counter is "${counter.name}"; the contract's reserves are in "${c.budget.tokenizer}" tokens`,
      "counter",
    );
  }
  return counter;
}

/** A tail after fitting: its anchor's index, its index in the argument, what is kept. */
interface Placed {
  anchor: number;
  index: number;
  text: string;
  outcome: TailOutcome;
}

/** Fills each anchor's reserve in argument order, cutting only a tail that overflows it. */
function fitTails(c: WireContract, tails: readonly TailInput[], counter: TokenCounter): Placed[] {
  const anchorIndex = new Map(c.anchors.map((a, i) => [a.name, i]));
  const left = c.anchors.map((a) => ({
    tokens: a.reserveTokens,
    chars: a.reserveChars ?? Number.POSITIVE_INFINITY,
  }));
  return tails.map((t, index) => {
    const ai = anchorIndex.get(t.anchor);
    if (ai === undefined) {
      throw new InvalidInputError(
        `no anchor ${JSON.stringify(t.anchor)} in the contract (anchors: ${c.anchors.map((a) => a.name).join(", ") || "none"})`,
        ["tails", index, "anchor"],
      );
    }
    const budget = left[ai] as { tokens: number; chars: number };
    const { text, cut } = cutToFit(t.text, budget.tokens, budget.chars, counter);
    if (text !== "") {
      budget.tokens -= counter.count(TAIL_JOIN + text);
      budget.chars -= cpLength(text) + TAIL_JOIN.length;
    }
    return {
      anchor: ai,
      index,
      text,
      outcome: {
        anchor: t.anchor,
        index,
        span: null,
        chars: cpLength(text),
        tokens: counter.count(text),
        originalChars: cpLength(t.text),
        originalTokens: counter.count(t.text),
        truncated: cut !== "none",
        cut,
      },
    };
  });
}

/** The tails inserted at one body offset, and where they landed in the prompt (code points). */
interface Group {
  offset: number;
  chars: number;
  start: number;
}

/**
 * Writes the prompt: the body copied byte for byte with each offset's tails inserted
 * (grouped by offset, ascending; within one, anchor declaration order, then tail order).
 * Sets each placed tail's `span`.
 */
function insertTails(
  c: WireContract,
  placed: readonly Placed[],
): { prompt: string; groups: Group[] } {
  const body = c.assembledContext;
  const bodyOffsets = cpOffsets(body);
  const bodyChars = bodyOffsets.length - 1;
  const offsetOf = (p: { anchor: number }) => (c.anchors[p.anchor] as WireAnchor).offset;
  const order = placed
    .filter((p) => p.text !== "")
    .sort((a, b) => offsetOf(a) - offsetOf(b) || a.anchor - b.anchor || a.index - b.index);
  let prompt = "";
  let cp = 0; // code points written so far
  let bodyCp = 0; // body code points copied so far
  const groups: Group[] = [];
  for (let i = 0; i < order.length; ) {
    const offset = offsetOf(order[i] as Placed);
    let j = i;
    while (j < order.length && offsetOf(order[j] as Placed) === offset) j++;
    const group = order.slice(i, j);
    i = j;
    prompt += body.slice(bodyOffsets[bodyCp], bodyOffsets[offset]);
    cp += offset - bodyCp;
    bodyCp = offset;
    const startCp = cp;
    group.forEach((p, k) => {
      // After body text: "\n\n" + tail. At offset 0: tails joined, then "\n\n" before a body.
      if (offset > 0 || k > 0) {
        prompt += TAIL_JOIN;
        cp += TAIL_JOIN.length;
      }
      prompt += p.text;
      p.outcome.span = { start: cp, end: cp + p.outcome.chars };
      cp += p.outcome.chars;
    });
    if (offset === 0 && bodyChars > 0) {
      prompt += TAIL_JOIN;
      cp += TAIL_JOIN.length;
    }
    groups.push({ offset, chars: cp - startCp, start: startCp });
  }
  prompt += body.slice(bodyOffsets[bodyCp]);
  return { prompt, groups };
}

/**
 * Every included layer's span in the prompt, re-verified: the body is untouched, so each
 * still hashes to its versionId in place (an internal error otherwise).
 */
function relocateLayers(
  c: WireContract,
  prompt: string,
  outOffsets: Uint32Array,
  groups: readonly Group[],
): TailedPrompt["layers"] {
  // Text inserted at offset o lands before a layer starting at s when o < s, or o = 0.
  const moved = (at: number) => {
    let by = 0;
    for (const g of groups) if (g.offset < at || g.offset === 0) by += g.chars;
    return at + by;
  };
  return c.layerManifest
    .filter((l) => l.span !== null)
    .map((l) => {
      const s = l.span as WireSpan;
      const span = { start: moved(s.start), end: moved(s.start) + (s.end - s.start) };
      const content = prompt.slice(outOffsets[span.start], outOffsets[span.end]);
      if (versionId(content) !== l.versionId) {
        throw new PromptctxError(
          "internal_error",
          `layer ${l.id}${l.neverTruncate ? " (neverTruncate)" : ""} changed while appending tails`,
        );
      }
      return { id: l.id, neverTruncate: l.neverTruncate, span };
    });
}

/**
 * Executor helper: inserts runtime tails at their anchors, cutting only a tail that
 * exceeds what is left of its anchor's reserve, never the body. The contract is
 * validated first; an unknown anchor is invalid input at `tails[i].anchor`. `counter`
 * defaults to the built-in counter named by `budget.tokenizer` and must carry that name.
 *
 * @example
 * const out = appendTail(contract, [{ anchor: "web", text: pageText }]);
 * out.tails[0].truncated; // true when the page was cut to the anchor's reserve
 */
export function appendTail(
  contract: WireContract,
  tails: readonly TailInput[],
  options: { counter?: TokenCounter } = {},
): TailedPrompt {
  const c = validateWire(contract);
  const parsed = TailsSchema.safeParse(tails);
  if (!parsed.success) throw invalidFromZod(parsed.error, ["tails"]);
  const counter = tailCounter(c, options);
  const placed = fitTails(c, parsed.data, counter);
  const { prompt, groups } = insertTails(c, placed);
  const outOffsets = cpOffsets(prompt);
  const layers = relocateLayers(c, prompt, outOffsets, groups);
  const tokens = counter.count(prompt);
  return {
    prompt,
    chars: outOffsets.length - 1,
    tokens,
    fits: tokens <= c.budget.contextWindow - c.budget.responseReserve,
    tails: placed.map((p) => p.outcome),
    layers,
    inserted: groups.map((g) => ({
      offset: g.offset,
      span: { start: g.start, end: g.start + g.chars },
    })),
  };
}
