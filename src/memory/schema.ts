/**
 * The select-memory request (docs/memory-selection.md, docs/surfaces.md) as zod schemas: the single source of both
 * validation and the TypeScript input types.
 */
import { z } from "zod";
import { isBlank, isoTimestamp, nonBlankString, textString } from "../text/index.js";

/** Authority levels, strongest first. Nothing else is accepted (fail closed). */
export const AUTHORITIES = ["current_turn", "workspace_override", "user_default"] as const;
export type Authority = (typeof AUTHORITIES)[number];

/** Numeric strength of an authority: higher wins. */
export const AUTHORITY_RANK: Readonly<Record<Authority, number>> = {
  current_turn: 3,
  workspace_override: 2,
  user_default: 1,
};

const nonBlank = nonBlankString;
const timestamp = isoTimestamp;

/**
 * The fields of a provenance (where a memory came from), defined once for the candidates
 * here and the records of the memory store: `text` is the non-blank string rule of the
 * schema that uses them (the store's also rejects lone surrogates), and `capturedAt` is
 * always an ISO-8601 timestamp. Each schema chooses how it treats unknown keys.
 *
 * @example z.strictObject(provenanceFields(nonBlankString))
 */
export function provenanceFields<T extends z.ZodType<string>>(text: T) {
  return { sourceId: text, sourceType: text, title: text, capturedAt: timestamp };
}

export const ProvenanceSchema = z.object(provenanceFields(nonBlank));
export type Provenance = z.infer<typeof ProvenanceSchema>;

/**
 * How a hybrid recall found a candidate (docs/memory-selection.md): which paths, its
 * lexical and semantic ranks, its cosine similarity, its calibrated semantic evidence,
 * the fused relevance and, for comparison, the reciprocal rank fusion. Carried through
 * to the candidate's decision so each hit explains itself.
 */
export const MatchSchema = z.object({
  path: z.enum(["lexical", "semantic", "both"]),
  lexicalRank: z.number().int().min(1).nullable(),
  semanticRank: z.number().int().min(1).nullable(),
  similarity: z.number().nullable(),
  semantic: z.number(),
  fused: z.number(),
  rrf: z.number(),
});
export type MemoryMatch = z.infer<typeof MatchSchema>;

export const CandidateSchema = z.object({
  memoryId: nonBlank,
  text: nonBlank,
  userScope: nonBlank,
  score: z.number().min(0).max(1),
  sourceRank: z.number().int().min(1),
  provenance: ProvenanceSchema,
  conflictKey: nonBlank.nullable().optional(),
  authority: z.enum(AUTHORITIES).optional(),
  /** How a hybrid recall found it; copied to its decision. */
  match: MatchSchema.optional(),
});
/** A memory candidate as the caller passes it. */
export type CandidateInput = z.input<typeof CandidateSchema>;
export type Candidate = z.output<typeof CandidateSchema>;

const budget = z.number().int().min(0).nullable();

export const PolicySchema = z.object({
  minScore: z.number().min(0).max(1).default(0.35),
  topK: z.number().int().min(0).default(5),
  maxChars: budget.default(3000),
  maxTokens: budget.default(800),
  /**
   * `quarantine`: a candidate whose text reads as an attempt to take over the model
   * (takeover.ts) is rejected with reason `quarantined` and the rule in its detail — for
   * candidates that did not come through a store's write gate (inline candidates). Absent
   * or `off`: no check here (the store's write gate already holds its records).
   */
  takeoverGate: z.enum(["quarantine", "off"]).optional(),
});
export type PolicyInput = z.input<typeof PolicySchema>;
/** A selection policy with every default applied. */
export type Policy = z.output<typeof PolicySchema>;

/** The default policy of docs/memory-selection.md. */
export const DEFAULT_POLICY: Policy = { minScore: 0.35, topK: 5, maxChars: 3000, maxTokens: 800 };

export const SelectMemoryRequestSchema = z.object({
  userScope: textString.refine((s) => !isBlank(s), { message: "must not be blank" }),
  policy: PolicySchema.default(DEFAULT_POLICY),
  tokenizer: textString.optional(),
  candidates: z.array(CandidateSchema),
});
/** The select-memory request (JSON contract of docs/surfaces.md). */
export type SelectMemoryRequest = z.input<typeof SelectMemoryRequestSchema>;
