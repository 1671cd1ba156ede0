/** Assembler side of the wire contract (spec 07): an assembly and its anchors as a contract. */
import { z } from "zod";
import { promptVersion } from "../cache/index.js";
import { InvalidInputError, invalidFromZod, PromptBudgetError } from "../errors/index.js";
import { type PromptPlan, SEGMENT_SEPARATOR } from "../plan/index.js";
import { cpLength, cpOffsets, nonBlankString } from "../text/index.js";
import { resolveTokenCounter, type TokenCounter } from "../tokens/index.js";
import type { AssemblyManifest } from "./manifest.js";
import {
  WIRE_CONTRACT_VERSION,
  type WireAnchor,
  type WireContract,
  type WireLayer,
  type WireSpan,
} from "./wire-schema.js";
import { anchorOffset, validateWire } from "./wire-validate.js";

const nonBlank = nonBlankString;
const count = z.number().int().min(0);

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

/** The budget options, validated: `total` is what the body may use (never negative). */
function wireBudget(options: WireOptions): {
  tailReserve: number;
  contextWindow: number;
  responseReserve: number;
  total: number;
} {
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
  return { tailReserve, contextWindow, responseReserve, total };
}

/** The manifest's layers as they cross the boundary, with their spans in the body. */
function wireLayers(assembly: WireAssembly): WireLayer[] {
  const spans = layerSpans(assembly);
  return assembly.manifest.layers.map((l) => ({
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
}

/** The declared anchors, validated and resolved to their offsets in the body. */
function wireAnchors(
  anchors: readonly AnchorInput[],
  layers: readonly WireLayer[],
  bodyChars: number,
): WireAnchor[] {
  return anchors.map((raw, i) => {
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
    const offset = anchorOffset(wire, layers, bodyChars);
    if (offset === null) {
      throw new InvalidInputError(
        `anchor ${JSON.stringify(wire.name)}: no layer ${JSON.stringify(wire.afterLayer)} in this assembly`,
        ["anchors", i, "afterLayer"],
      );
    }
    return { ...wire, offset };
  });
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
  const { tailReserve, contextWindow, responseReserve, total } = wireBudget(options);
  const { prompt, manifest } = assembly;
  const counter = options.counter ?? resolveTokenCounter(manifest.tokenizer, "manifest.tokenizer");
  const layerManifest = wireLayers(assembly);
  const bodyChars = cpLength(prompt);
  const anchors = wireAnchors(options.anchors, layerManifest, bodyChars);
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
