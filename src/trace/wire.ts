/**
 * The assembled-prompt wire contract of spec 07: one service assembles, another (maybe in
 * another language) executes. The contract is a plain JSON object, versioned and
 * validated on both sides:
 *
 * ```json
 * { "assemblerVersion": "1.0.0", "assembledContext": "…", "promptVersion": "<sha256>",
 *   "layerManifest": [{ "id", "status", "reason", "required", "neverTruncate", "cacheTier",
 *                       "chars", "tokens", "versionId", "sourceRefs", "span" }],
 *   "anchors": [{ "name", "afterLayer", "atEnd", "offset", "reserveTokens", "reserveChars" }],
 *   "tailReserve": 2000,
 *   "budget": { "tokenizer", "contextWindow", "responseReserve", "total", "bodyTokens", "bodyChars" } }
 * ```
 *
 * Rules (documented so a peer in another language can mirror them):
 * - Every offset, span and `chars` figure counts Unicode code points (spec 01), never
 *   UTF-16 units or bytes. `span` is `[start, end)` of the layer's rendered content in
 *   `assembledContext` (`null` unless the layer is `included`); the content there hashes to
 *   the layer's `versionId` (first 16 hex of its SHA-256), and the whole body to
 *   `promptVersion` (SHA-256 hex). The receiver checks both.
 * - `budget.total = contextWindow − tailReserve − responseReserve` (never negative) and the
 *   body must fit it: `bodyTokens ≤ total`, else `prompt_budget_exceeded` at build time.
 *   The assembler never trims anything to fit — `neverTruncate` layers in particular are
 *   no trimming candidate anywhere (this module has no trimming path for the body at all).
 * - An anchor is a named insertion point, either after a layer (`afterLayer`) or at the end
 *   (`atEnd: true`). After a layer that was not included, it sits where that layer would
 *   have been: after the nearest included layer before it in display order, or at offset 0.
 *   `offset` is that resolved position. Each anchor reserves `reserveTokens` (required)
 *   and optionally `reserveChars`; the anchors' `reserveTokens` sum to at most `tailReserve`.
 * - Versions: `assemblerVersion` is semver. A receiver accepts any version whose major
 *   equals {@link WIRE_SUPPORTED_MAJOR} (minor versions only add fields, which are
 *   ignored) and rejects any other major with `unsupported_version`.
 * - Runtime tails ({@link appendTail}): each tail is inserted at its anchor as
 *   `"\n\n" + text`; at offset 0 the tails are joined by `"\n\n"` and followed by
 *   `"\n\n"` when the body is not empty. Tails of one anchor keep the given order,
 *   anchors sharing an offset keep their declaration order. The
 *   anchor's reserve is filled in that order; the cost of a tail is its text plus its
 *   two-character join. A tail over what is left of the reserve is cut — only that tail:
 *   at the last line break of the longest fitting prefix (binary search over code points;
 *   exact for counters monotone in prefix length) when that keeps at least half of
 *   it, otherwise at the longest fitting code-point prefix; a tail with no room at all is
 *   dropped. Each cut is reported (`truncated`, original and kept size). The assembled
 *   body is copied byte for byte, and every included layer is re-verified against its
 *   `versionId` at its new position.
 */
import { z } from "zod";
import { promptVersion, sha256Hex, versionId } from "../cache/index.js";
import {
  InvalidInputError,
  invalidFromZod,
  PromptBudgetError,
  PromptctxError,
  UnsupportedVersionError,
} from "../errors/index.js";
import { CACHE_TIERS, type PromptPlan, SEGMENT_SEPARATOR } from "../plan/index.js";
import { cpLength, cpOffsets, nonBlankString, textString } from "../text/index.js";
import { resolveTokenCounter, type TokenCounter } from "../tokens/index.js";
import type { AssemblyManifest } from "./manifest.js";

// ---------------------------------------------------------------------------------------
// versions

/** The contract version this build writes. */
export const WIRE_CONTRACT_VERSION = "1.0.0";
/** The only major version this build reads. */
export const WIRE_SUPPORTED_MAJOR = 1;
/** What joins a runtime tail to its neighbour. */
export const TAIL_JOIN = "\n\n";

const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

/**
 * The major version of a semver string, or a typed error: invalid input when it is not
 * semver, `unsupported_version` when the major is not {@link WIRE_SUPPORTED_MAJOR}.
 *
 * @example checkWireVersion("1.4.2") // 1
 */
export function checkWireVersion(version: unknown, path = "assemblerVersion"): number {
  if (typeof version !== "string" || !SEMVER.test(version)) {
    throw new InvalidInputError(
      `must be a semver string like "1.0.0", got ${JSON.stringify(version) ?? String(version)}`,
      path,
    );
  }
  const major = Number(version.split(".")[0]);
  if (major !== WIRE_SUPPORTED_MAJOR) {
    throw new UnsupportedVersionError(
      `wire contract version ${version} is not supported: this build reads major version ${WIRE_SUPPORTED_MAJOR}`,
      version,
      WIRE_SUPPORTED_MAJOR,
      path,
    );
  }
  return major;
}

// ---------------------------------------------------------------------------------------
// schema

const nonBlank = nonBlankString;
const count = z.number().int().min(0);

/** `[start, end)` in code points. */
export const WireSpanSchema = z
  .object({ start: count, end: count })
  .refine((s) => s.start <= s.end, { message: "start must not exceed end", path: ["end"] });
export type WireSpan = z.output<typeof WireSpanSchema>;

/** One layer of the manifest as it crosses the boundary. */
export const WireLayerSchema = z.object({
  id: nonBlank,
  status: z.enum(["included", "dropped", "inactive", "skipped"]),
  reason: textString,
  required: z.boolean(),
  neverTruncate: z.boolean(),
  cacheTier: z.enum(CACHE_TIERS),
  chars: count,
  tokens: count,
  versionId: textString.regex(/^[0-9a-f]{16}$/, "must be 16 lowercase hex digits"),
  sourceRefs: z.array(textString),
  span: WireSpanSchema.nullable(),
});
export type WireLayer = z.output<typeof WireLayerSchema>;

/** A resolved anchor: where runtime tails go and how much they may use. */
export const WireAnchorSchema = z.object({
  name: nonBlank,
  afterLayer: nonBlank.nullable(),
  atEnd: z.boolean(),
  offset: count,
  reserveTokens: count,
  reserveChars: count.nullable(),
});
export type WireAnchor = z.output<typeof WireAnchorSchema>;

/** The budget arithmetic, stated so the receiver can check it. */
export const WireBudgetSchema = z.object({
  tokenizer: nonBlank,
  contextWindow: z.number().int().min(1),
  responseReserve: count,
  total: count,
  bodyTokens: count,
  bodyChars: count,
});
export type WireBudget = z.output<typeof WireBudgetSchema>;

/**
 * The wire contract (shape only; {@link parseWireContract} also checks the semantics:
 * version, hashes, spans, anchors, budget arithmetic).
 */
export const WireContractSchema = z.object({
  assemblerVersion: textString.regex(SEMVER, 'must be a semver string like "1.0.0"'),
  assembledContext: textString,
  promptVersion: textString.regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hex digits"),
  layerManifest: z.array(WireLayerSchema),
  anchors: z.array(WireAnchorSchema),
  tailReserve: count,
  budget: WireBudgetSchema,
});
export type WireContract = z.output<typeof WireContractSchema>;

/** An anchor as the assembler's caller declares it. */
export interface AnchorInput {
  name: string;
  /** Insert after this layer (its id). Give exactly one of `afterLayer` and `atEnd`. */
  afterLayer?: string;
  atEnd?: true;
  /** Tokens reserved for this anchor's tails (under the contract's tokenizer). */
  reserveTokens: number;
  /** Optional extra cap in code points. */
  reserveChars?: number;
}

const AnchorInputSchema = z
  .object({
    name: nonBlank,
    afterLayer: nonBlank.optional(),
    atEnd: z.literal(true).optional(),
    reserveTokens: count,
    reserveChars: count.optional(),
  })
  .strict()
  .superRefine((a, ctx) => {
    if ((a.afterLayer === undefined) === (a.atEnd === undefined)) {
      ctx.addIssue({ code: "custom", message: "give exactly one of afterLayer and atEnd" });
    }
  });

/** What {@link toWireContract} needs besides the assembly. */
export interface WireOptions {
  anchors: readonly AnchorInput[];
  /** Tokens kept free for runtime tails. */
  tailReserve: number;
  /** The model's context window, in tokens. */
  contextWindow: number;
  /** Tokens kept free for the response. */
  responseReserve: number;
  /** Defaults to the built-in counter named by `manifest.tokenizer`. */
  counter?: TokenCounter;
}

const WireOptionsSchema = z.object({
  anchors: z.array(z.unknown()),
  tailReserve: count,
  contextWindow: z.number().int().min(1),
  responseReserve: count,
});

/**
 * What {@link toWireContract} reads from an assembly (an `Assembly` of the assembler has
 * all of it; trace does not depend on the assembler).
 */
export interface WireAssembly {
  prompt: string;
  manifest: AssemblyManifest;
  segmentPlan: Pick<PromptPlan, "cacheBoundary">;
}

// ---------------------------------------------------------------------------------------
// code points

// ---------------------------------------------------------------------------------------
// building

/** Layer spans (code points) of an assembly, re-derived from its segment decisions. */
function layerSpans(assembly: WireAssembly): Map<string, WireSpan> {
  const { prompt, manifest } = assembly;
  const marker = assembly.segmentPlan.cacheBoundary;
  const offsets = cpOffsets(prompt);
  const spans = new Map<string, WireSpan>();
  let cp = 0;
  let unit = 0;
  let prevTier: string | null | undefined;
  const bad = (why: string): never => {
    throw new InvalidInputError(`assembly is inconsistent: ${why}`, "assembly.prompt");
  };
  for (const d of manifest.segmentDecisions) {
    if (d.status !== "included") continue;
    if (prevTier !== undefined) {
      const join = marker !== null && prevTier !== d.cacheTier ? marker : SEGMENT_SEPARATOR;
      if (!prompt.startsWith(join, unit)) bad(`no separator before layer ${d.name}`);
      unit += join.length;
      cp += cpLength(join);
    }
    if (offsets[cp] !== unit) bad(`layer ${d.name} does not start on a code point`);
    const end = cp + d.renderedChars;
    if (end >= offsets.length) bad(`layer ${d.name} runs past the prompt`);
    spans.set(d.name, { start: cp, end });
    cp = end;
    unit = offsets[end] as number;
    prevTier = d.cacheTier;
  }
  if (unit !== prompt.length) bad("the prompt has text no layer accounts for");
  return spans;
}

/** Resolved offset of an anchor in a body of `bodyChars` code points. */
function anchorOffset(
  anchor: { afterLayer: string | null; atEnd: boolean },
  layers: readonly WireLayer[],
  bodyChars: number,
): number | null {
  if (anchor.atEnd) return bodyChars;
  const at = layers.findIndex((l) => l.id === anchor.afterLayer);
  if (at < 0) return null;
  for (let i = at; i >= 0; i--) {
    const span = (layers[i] as WireLayer).span;
    if (span !== null) return span.end;
  }
  return 0;
}

/**
 * Builds the wire contract of an assembly. Throws invalid input for bad options (path
 * names the field: `anchors[1].afterLayer`, `contextWindow`, …) and
 * `prompt_budget_exceeded` when the body does not fit `contextWindow − tailReserve −
 * responseReserve` tokens. Nothing is ever trimmed here.
 *
 * @example
 * const contract = toWireContract(assembly, {
 *   anchors: [{ name: "inbound", afterLayer: "task_state", reserveTokens: 500 },
 *             { name: "web", atEnd: true, reserveTokens: 1500 }],
 *   tailReserve: 2000, contextWindow: 128000, responseReserve: 4000,
 * });
 * JSON.stringify(contract); // crosses the service boundary
 */
export function toWireContract(assembly: WireAssembly, options: WireOptions): WireContract {
  const parsed = WireOptionsSchema.safeParse(options);
  if (!parsed.success) throw invalidFromZod(parsed.error);
  const { tailReserve, contextWindow, responseReserve } = parsed.data;
  const total = contextWindow - tailReserve - responseReserve;
  if (total < 0) {
    throw new InvalidInputError(
      `contextWindow (${contextWindow}) − tailReserve (${tailReserve}) − responseReserve (${responseReserve}) is negative`,
      "contextWindow",
    );
  }
  const { prompt, manifest } = assembly;
  const counter = options.counter ?? resolveTokenCounter(manifest.tokenizer, "manifest.tokenizer");
  const spans = layerSpans(assembly);
  const layerManifest: WireLayer[] = manifest.layers.map((l) => ({
    id: l.id,
    status: l.status,
    reason: l.reason,
    required: l.required,
    neverTruncate: l.neverTruncate,
    cacheTier: l.cacheTier,
    chars: l.used.chars,
    tokens: l.used.tokens,
    versionId: l.versionId,
    sourceRefs: [...l.sourceRefs],
    span: l.status === "included" ? (spans.get(l.id) ?? null) : null,
  }));
  const bodyChars = cpLength(prompt);
  const anchors: WireAnchor[] = options.anchors.map((raw, i) => {
    const a = AnchorInputSchema.safeParse(raw);
    if (!a.success) throw invalidFromZod(a.error, ["anchors", i]);
    const wire = {
      name: a.data.name,
      afterLayer: a.data.afterLayer ?? null,
      atEnd: a.data.atEnd === true,
      offset: 0,
      reserveTokens: a.data.reserveTokens,
      reserveChars: a.data.reserveChars ?? null,
    };
    const offset = anchorOffset(wire, layerManifest, bodyChars);
    if (offset === null) {
      throw new InvalidInputError(
        `anchor ${JSON.stringify(wire.name)}: no layer ${JSON.stringify(wire.afterLayer)} in this assembly`,
        ["anchors", i, "afterLayer"],
      );
    }
    return { ...wire, offset };
  });
  const bodyTokens = counter.count(prompt);
  if (bodyTokens > total) {
    throw new PromptBudgetError(
      `the assembled body uses ${bodyTokens} tokens; the budget is ${total} (contextWindow ${contextWindow} − tailReserve ${tailReserve} − responseReserve ${responseReserve})`,
      layerManifest.filter((l) => l.span !== null).map((l) => l.id),
      "assembledContext",
    );
  }
  const contract: WireContract = {
    assemblerVersion: WIRE_CONTRACT_VERSION,
    assembledContext: prompt,
    promptVersion: promptVersion(prompt),
    layerManifest,
    anchors,
    tailReserve,
    budget: {
      tokenizer: counter.name,
      contextWindow,
      responseReserve,
      total,
      bodyTokens,
      bodyChars,
    },
  };
  // The same checks the receiver runs (anchor names, reserves, hashes, spans).
  return validateWire(contract);
}

// ---------------------------------------------------------------------------------------
// parsing

/** The semantic checks of a shape-valid contract; throws invalid input naming the field. */
function checkSemantics(c: WireContract): void {
  const body = c.assembledContext;
  if (sha256Hex(body) !== c.promptVersion) {
    throw new InvalidInputError("does not match the SHA-256 of assembledContext", "promptVersion");
  }
  const bodyChars = cpLength(body);
  if (c.budget.bodyChars !== bodyChars) {
    throw new InvalidInputError(
      `is ${c.budget.bodyChars}; assembledContext has ${bodyChars} code points`,
      "budget.bodyChars",
    );
  }
  const { contextWindow, responseReserve, total, bodyTokens } = c.budget;
  if (total !== contextWindow - c.tailReserve - responseReserve) {
    throw new InvalidInputError(
      `must equal contextWindow − tailReserve − responseReserve (${contextWindow - c.tailReserve - responseReserve})`,
      "budget.total",
    );
  }
  if (bodyTokens > total) {
    throw new InvalidInputError(`${bodyTokens} exceeds budget.total ${total}`, "budget.bodyTokens");
  }
  const offsets = cpOffsets(body);
  const ids = new Set<string>();
  let prevEnd = 0;
  c.layerManifest.forEach((l, i) => {
    if (ids.has(l.id)) {
      throw new InvalidInputError(`duplicate layer id ${JSON.stringify(l.id)}`, [
        "layerManifest",
        i,
        "id",
      ]);
    }
    ids.add(l.id);
    const where = ["layerManifest", i, "span"];
    if ((l.status === "included") !== (l.span !== null)) {
      throw new InvalidInputError("an included layer has a span, any other layer null", where);
    }
    if (l.span === null) return;
    if (l.span.start < prevEnd || l.span.end > bodyChars) {
      throw new InvalidInputError(
        "spans must be in display order, disjoint and inside assembledContext",
        where,
      );
    }
    if (l.chars !== l.span.end - l.span.start) {
      throw new InvalidInputError("chars must equal the span's length", [
        "layerManifest",
        i,
        "chars",
      ]);
    }
    const content = body.slice(offsets[l.span.start], offsets[l.span.end]);
    if (versionId(content) !== l.versionId) {
      throw new InvalidInputError("does not match the layer's content in assembledContext", [
        "layerManifest",
        i,
        "versionId",
      ]);
    }
    prevEnd = l.span.end;
  });
  const names = new Set<string>();
  let reserved = 0;
  c.anchors.forEach((a, i) => {
    if (names.has(a.name)) {
      throw new InvalidInputError(`duplicate anchor name ${JSON.stringify(a.name)}`, [
        "anchors",
        i,
        "name",
      ]);
    }
    names.add(a.name);
    if ((a.afterLayer === null) === !a.atEnd) {
      throw new InvalidInputError("give exactly one of afterLayer and atEnd", ["anchors", i]);
    }
    const offset = anchorOffset(a, c.layerManifest, bodyChars);
    if (offset === null) {
      throw new InvalidInputError(`no layer ${JSON.stringify(a.afterLayer)} in layerManifest`, [
        "anchors",
        i,
        "afterLayer",
      ]);
    }
    if (offset !== a.offset) {
      throw new InvalidInputError(`must be ${offset} (where the anchor resolves)`, [
        "anchors",
        i,
        "offset",
      ]);
    }
    reserved += a.reserveTokens;
  });
  if (reserved > c.tailReserve) {
    throw new InvalidInputError(
      `the anchors reserve ${reserved} tokens; tailReserve is ${c.tailReserve}`,
      "anchors",
    );
  }
}

/** Version first (a future major may have any shape), then shape, then semantics. */
function validateWire(input: unknown): WireContract {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new InvalidInputError("the wire contract must be a JSON object");
  }
  checkWireVersion((input as Record<string, unknown>).assemblerVersion);
  const parsed = WireContractSchema.safeParse(input);
  if (!parsed.success) throw invalidFromZod(parsed.error);
  checkSemantics(parsed.data);
  return parsed.data;
}

/**
 * Validates a received contract: JSON text or an already-parsed value. An unknown major
 * version throws `unsupported_version` (path `assemblerVersion`); a bad shape or an
 * inconsistency throws invalid input with the field path (`layerManifest[2].versionId`).
 * Unknown fields (from a newer minor version) are dropped.
 *
 * @example const contract = parseWireContract(await request.text());
 */
export function parseWireContract(json: unknown): WireContract {
  let value = json;
  if (typeof json === "string") {
    try {
      value = JSON.parse(json);
    } catch (err) {
      throw new InvalidInputError(
        `the wire contract is not valid JSON: ${err instanceof Error ? err.message : "parse error"}`,
      );
    }
  }
  return validateWire(value);
}

// ---------------------------------------------------------------------------------------
// executor side: runtime tails

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

const TailsSchema = z.array(z.object({ anchor: nonBlank, text: textString }));

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
  const counter = options.counter ?? resolveTokenCounter(c.budget.tokenizer, "budget.tokenizer");
  if (counter.name !== c.budget.tokenizer) {
    throw new InvalidInputError(
      `the counter is "${counter.name}"; the contract's reserves are in "${c.budget.tokenizer}" tokens`,
      "counter",
    );
  }
  const anchorIndex = new Map(c.anchors.map((a, i) => [a.name, i]));
  const left = c.anchors.map((a) => ({
    tokens: a.reserveTokens,
    chars: a.reserveChars ?? Number.POSITIVE_INFINITY,
  }));
  const placed: Array<{ anchor: number; index: number; text: string; outcome: TailOutcome }> = [];
  parsed.data.forEach((t, index) => {
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
    placed.push({
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
    });
  });

  // Groups by offset (ascending); within one, anchor declaration order, then tail order.
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
  const groups: Array<{ offset: number; chars: number; start: number }> = [];
  for (let i = 0; i < order.length; ) {
    const offset = offsetOf(order[i] as (typeof order)[number]);
    let j = i;
    while (j < order.length && offsetOf(order[j] as (typeof order)[number]) === offset) j++;
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

  // The body is untouched: every included layer still hashes to its versionId in place.
  // Text inserted at offset o lands before a layer starting at s when o < s, or o = 0.
  const moved = (at: number) => {
    let by = 0;
    for (const g of groups) if (g.offset < at || g.offset === 0) by += g.chars;
    return at + by;
  };
  const outOffsets = cpOffsets(prompt);
  const layers = c.layerManifest
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
