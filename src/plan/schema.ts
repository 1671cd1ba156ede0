/**
 * The plan-prompt request (spec 03, 08) as zod schemas: the single source of both
 * validation and the TypeScript input types. The JSON schemas describe what the CLI and
 * the HTTP service accept; the library schemas add the two function-valued fields
 * (`condition`, `builder`) that cannot travel as JSON.
 */
import { z } from "zod";
import { isBlank, nonBlankString, textString } from "../text/index.js";

/** Cache tiers of spec 05, most stable first. */
export const CACHE_TIERS = ["static", "session", "dynamic"] as const;
export type CacheTier = (typeof CACHE_TIERS)[number];

/**
 * The tier of a segment that names none, stated once for the planner and the assembler:
 * `dynamic`, since a segment that does not say how stable it is must never sit in a
 * cached prefix (its change would break the cache of everything after it).
 */
export const DEFAULT_CACHE_TIER: CacheTier = "dynamic";

/** Default `budgetChars` of spec 03. */
export const DEFAULT_BUDGET_CHARS = 12000;

/** Default join between two tiers of a tiered prompt (spec 05). */
export const DEFAULT_CACHE_BOUNDARY = "\n\n<!-- cache-boundary -->\n\n";

const nonBlank = nonBlankString;
const budget = z.number().int().min(0).nullable();

// Shared by the JSON and the library segment, so both validate one way.
const segmentFields = {
  /** Unique within one request. */
  name: nonBlank,
  /** The segment text, rendered as given. `null` or `""` makes the segment inactive. */
  content: textString.nullable(),
  /** Where it is shown: lower first (default 50). */
  priority: z.number().default(50),
  /** Required segments are never dropped; if they cannot fit, the plan fails closed. */
  required: z.boolean().default(false),
  /** Who wins scarce budget: higher first (default 50). Independent of `priority`. */
  budgetPriority: z.number().default(50),
  /** Where the content came from (default `"runtime"`). */
  provenance: nonBlank.default("runtime"),
  /**
   * Cache tier of spec 05. Any segment naming one lays the prompt out by tier (then a
   * segment without a tier counts as `dynamic`); the decision log records the tier used.
   */
  cacheTier: z.enum(CACHE_TIERS).optional(),
};

/** One segment of the JSON contract: content is required, no function-valued fields. */
export const PlanPromptJsonSegmentSchema = z.object(segmentFields);
/** A segment as the JSON contract carries it. */
export type PlanPromptJsonSegment = z.input<typeof PlanPromptJsonSegmentSchema>;

const isFunction = (v: unknown): boolean => typeof v === "function";

/** One segment of the library: `content` or a lazy `builder`, and an optional `condition`. */
export const SegmentInputSchema = z
  .object({
    ...segmentFields,
    /** The segment text; give either `content` or `builder`. */
    content: textString.nullable().optional(),
    /** `false`, or a function returning `false`, makes the segment inactive. */
    condition: z
      .custom<boolean | (() => boolean)>((v) => typeof v === "boolean" || isFunction(v), {
        message: "must be a boolean or a function",
      })
      .optional(),
    /**
     * Produces the content lazily (e.g. its own compact projection). Called at most once,
     * and only when the condition holds.
     */
    builder: z
      .custom<() => string | null>(isFunction, { message: "must be a function" })
      .optional(),
  })
  .superRefine((s, ctx) => {
    // Exactly one source of content, so a segment never has two competing texts.
    const hasContent = s.content !== undefined;
    const hasBuilder = s.builder !== undefined;
    if (hasContent === hasBuilder) {
      ctx.addIssue({
        code: "custom",
        path: ["content"],
        message: hasContent
          ? "give either content or builder, not both"
          : "required (a string or null) unless a builder is given",
      });
    }
  });
/** A segment as a library caller passes it. */
export type SegmentInput = z.input<typeof SegmentInputSchema>;
/** A validated segment with every default applied. */
export type Segment = z.output<typeof SegmentInputSchema>;

const requestFields = {
  /** Char budget in code points, separators included. Default 12000; `null` = unbounded. */
  budgetChars: budget.default(DEFAULT_BUDGET_CHARS),
  /** Token budget under `tokenizer`. Omitted or `null` = unbounded. */
  budgetTokens: budget.default(null),
  /** Built-in tokenizer name (default `estimate`). */
  tokenizer: textString.optional(),
  /**
   * `true` lays the prompt out by cache tier (spec 05) even when no segment names one.
   * Omitted or `false`: tiered exactly when at least one segment has a `cacheTier`.
   */
  tiered: z.boolean().optional(),
  /**
   * The join between two tiers in tiered mode (default `"\n\n<!-- cache-boundary -->\n\n"`).
   * Must contain a non-whitespace character. Its cost counts in the budget.
   */
  cacheBoundary: textString
    .refine((s) => !isBlank(s), { message: "must contain a non-whitespace character" })
    .optional(),
};

/**
 * The plan-prompt request of the JSON contract (spec 08), for the CLI, the HTTP service
 * and OpenAPI (it has no function-valued fields, so `z.toJSONSchema` can describe it).
 *
 * @example PlanPromptJsonRequestSchema.parse({ segments: [{ name: "a", content: "x" }] }).budgetChars // 12000
 */
export const PlanPromptJsonRequestSchema = z.object({
  ...requestFields,
  segments: z.array(PlanPromptJsonSegmentSchema),
});
/** The plan-prompt request of the JSON contract (CLI, HTTP). */
export type PlanPromptJsonRequest = z.input<typeof PlanPromptJsonRequestSchema>;

/**
 * The plan-prompt request of the library: what `planPrompt` validates. Every JSON
 * request is also a valid library request.
 *
 * @example PlanPromptRequestSchema.parse({ segments: [{ name: "a", builder: () => "x" }] }).budgetTokens // null
 */
export const PlanPromptRequestSchema = z.object({
  ...requestFields,
  segments: z.array(SegmentInputSchema),
});
/** The plan-prompt request of the library (a JSON request is one too). */
export type PlanPromptRequest = z.input<typeof PlanPromptRequestSchema>;
/** A validated request with every default applied. */
export type ParsedPlanPromptRequest = z.output<typeof PlanPromptRequestSchema>;
