/**
 * The wire contract's shape and version rule (spec 07), and the rules a peer mirrors.
 *
 * One service assembles, another (maybe in another language) executes. The contract is a
 * plain JSON object, versioned and validated on both sides:
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
 *   no trimming candidate anywhere (the wire modules have no trimming path for the body at all).
 * - An anchor is a named insertion point, either after a layer (`afterLayer`) or at the end
 *   (`atEnd: true`). After a layer that was not included, it sits where that layer would
 *   have been: after the nearest included layer before it in display order, or at offset 0.
 *   `offset` is that resolved position. Each anchor reserves `reserveTokens` (required)
 *   and optionally `reserveChars`; the anchors' `reserveTokens` sum to at most `tailReserve`.
 * - Versions: `assemblerVersion` is semver. A receiver accepts any version whose major
 *   equals {@link WIRE_SUPPORTED_MAJOR} (minor versions only add fields, which are
 *   ignored) and rejects any other major with `unsupported_version`.
 * - Runtime tails are inserted at the anchors by `appendTail` (see tail.ts for its rules).
 */
import { z } from "zod";
import { InvalidInputError, UnsupportedVersionError } from "../errors/index.js";
import { CACHE_TIERS } from "../plan/index.js";
import { nonBlankString, textString } from "../text/index.js";

// ---------------------------------------------------------------------------------------
// versions

/** The contract version this build writes. */
export const WIRE_CONTRACT_VERSION = "1.0.0";
/** The only major version this build reads. */
export const WIRE_SUPPORTED_MAJOR = 1;

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
