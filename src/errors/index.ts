/**
 * Errors: one hierarchy for the whole package, each error with a stable `code`, a message
 * and the offending field `path`; surfaces serialise it with {@link toErrorObject}.
 * The lowest stage: imports nothing from promptctx.
 */
import type { ZodError } from "zod";

export { nodeErrorCode, unreachableCode } from "./node-errors.js";

/** Stable machine-readable error codes. */
export type ErrorCode =
  | "invalid_input"
  | "unknown_field"
  | "prompt_budget_exceeded"
  | "invalid_counter_result"
  | "source_failed"
  | "source_timeout"
  | "connection_refused"
  | "embedder_mismatch"
  | "embedder_dimensions"
  | "embedder_failed"
  | "payload_too_large"
  | "unauthorized"
  | "not_found"
  | "store_not_configured"
  | "memory_rejected"
  | "memory_too_large"
  | "scope_full"
  | "path_refused"
  | "unsupported_version"
  | "unsupported_pattern"
  | "host_not_allowed"
  | "origin_not_allowed"
  | "scope_required"
  | "internal_error";

/** A path into a request: object keys and array indices. */
export type FieldPath = ReadonlyArray<string | number>;

/**
 * Formats a field path the way error objects show it: `candidates[3].score`.
 *
 * @example formatPath(["candidates", 3, "score"]) // "candidates[3].score"
 */
export function formatPath(path: FieldPath): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out === "" ? part : `.${part}`;
  }
  return out;
}

/**
 * `err` with its field path put under `at`, for an input checked inside a larger request
 * (the `assemble` or `system` of a whole agent request): an {@link InvalidInputError}
 * (or {@link UnknownFieldError}) gets `at` + its path — `at` alone when it named none or
 * the whole `input`; anything else is returned as it is.
 *
 * @example underPath(new InvalidInputError("bad", "now"), ["assemble"]) // path "assemble.now"
 */
export function underPath(err: unknown, at: FieldPath): unknown {
  if (!(err instanceof InvalidInputError) || at.length === 0) return err;
  const head = formatPath(at);
  const own = err.path === null || err.path === "input" ? "" : err.path;
  const path = own === "" ? head : own.startsWith("[") ? `${head}${own}` : `${head}.${own}`;
  if (err instanceof UnknownFieldError) return new UnknownFieldError(err.message, path);
  return new InvalidInputError(
    err.message,
    path,
    err.code === "unknown_field" ? err.code : undefined,
  );
}

/** Base class of every error promptctx throws on purpose. */
export class PromptctxError extends Error {
  readonly code: ErrorCode;
  readonly path: string | null;
  constructor(code: ErrorCode, message: string, path: FieldPath | string | null = null) {
    super(message);
    this.name = "PromptctxError";
    this.code = code;
    this.path = path === null ? null : typeof path === "string" ? path : formatPath(path);
  }
}

/**
 * Input that breaks a rule of the spec. `path` names the field.
 *
 * @example throw new InvalidInputError("score must be in [0, 1]", ["candidates", 0, "score"]);
 */
export class InvalidInputError extends PromptctxError {
  constructor(
    message: string,
    path: FieldPath | string | null = null,
    code: "invalid_input" | "unknown_field" = "invalid_input",
  ) {
    super(code, message, path);
    this.name = "InvalidInputError";
  }
}

/**
 * A request names a field its schema does not have (a typo must never be silently ignored).
 * `path` is the unknown field's full path; the message says which known field was meant
 * when one is close.
 *
 * @example throw new UnknownFieldError("policy.budgetchars: unknown field", ["policy", "budgetchars"]);
 */
export class UnknownFieldError extends InvalidInputError {
  constructor(message: string, path: FieldPath | string) {
    super(message, path, "unknown_field");
    this.name = "UnknownFieldError";
  }
}

/**
 * Required content cannot fit its budget: the assembly fails closed and no prompt exists.
 * `names` lists the required parts that were being reserved.
 */
/** One part of a refused request and its tokens (`system`, `ask`, `latest_round` …). */
export interface BudgetPart {
  readonly part: string;
  readonly tokens: number;
}

/** The numbers behind a refusal: what is needed, the budget, by part, and what would fit. */
export interface BudgetDetails {
  readonly need: number;
  readonly budget: number;
  readonly parts: readonly BudgetPart[];
  /** What would make it fit, in words. */
  readonly fix: string;
}

export class PromptBudgetError extends PromptctxError {
  readonly names: readonly string[];
  /** The numbers behind the refusal (null when the thrower had none to give). */
  readonly details: BudgetDetails | null;
  constructor(
    message: string,
    names: readonly string[],
    path: FieldPath | string | null = null,
    details: BudgetDetails | null = null,
  ) {
    super("prompt_budget_exceeded", message, path);
    this.name = "PromptBudgetError";
    this.names = names;
    this.details = details;
  }
}

/** A token counter returned something other than a non-negative integer. */
export class TokenCounterError extends PromptctxError {
  constructor(message: string) {
    super("invalid_counter_result", message);
    this.name = "TokenCounterError";
  }
}

/**
 * A source behind a required slot failed or timed out: the assembly fails closed.
 * `path` names the slot (`slots.planner`).
 */
export class SourceError extends PromptctxError {
  readonly sourceId: string;
  constructor(
    code: "source_failed" | "source_timeout",
    message: string,
    slot: string,
    sourceId: string,
  ) {
    super(code, message, ["slots", slot]);
    this.name = "SourceError";
    this.sourceId = sourceId;
  }
}

/**
 * A versioned contract (docs/manifest-wire-guard.md wire contract) names a major version this build does not
 * speak. `version` is what was received, `supported` the major understood here.
 */
export class UnsupportedVersionError extends PromptctxError {
  readonly version: string;
  readonly supported: number;
  constructor(
    message: string,
    version: string,
    supported: number,
    path: FieldPath | string | null = "assemblerVersion",
  ) {
    super("unsupported_version", message, path);
    this.name = "UnsupportedVersionError";
    this.version = version;
    this.supported = supported;
  }
}

/**
 * A user-supplied pattern (skill trigger, red line) the linear-time engine cannot run:
 * lookaround, backreferences, a repetition count over 1000, a program too large. `path`
 * names the field, the message the pattern and why; refused at load, never run.
 *
 * @example throw new UnsupportedPatternError("/(?=x)/: lookahead is not supported", "redLines[0].pattern");
 */
export class UnsupportedPatternError extends PromptctxError {
  constructor(message: string, path: FieldPath | string | null = null) {
    super("unsupported_pattern", message, path);
    this.name = "UnsupportedPatternError";
  }
}

/** The numbers of a refusal as the error object carries them (`over`: need − budget). */
export interface BudgetDetailsObject extends BudgetDetails {
  readonly over: number;
}

/**
 * The JSON error object of the CLI and the HTTP service. A refusal
 * (`prompt_budget_exceeded`) with numbers carries them in `details`: what is needed
 * against the budget, by part, and what would make it fit.
 */
export interface ErrorObject {
  error: {
    code: ErrorCode;
    message: string;
    path: string | null;
    details?: BudgetDetailsObject;
  };
}

/**
 * Serialises any thrown value as the public error object. Unknown errors become
 * `internal_error` with a generic message: stack traces never leave the process.
 *
 * @example toErrorObject(new PromptBudgetError("too big", ["ask"], null, d)).error.details?.over
 */
export function toErrorObject(err: unknown): ErrorObject {
  if (err instanceof PromptBudgetError && err.details !== null) {
    const d = err.details;
    const details = {
      need: d.need,
      budget: d.budget,
      over: d.need - d.budget,
      parts: d.parts.map((p) => ({ part: p.part, tokens: p.tokens })),
      fix: d.fix,
    };
    return { error: { code: err.code, message: err.message, path: err.path, details } };
  }
  if (err instanceof PromptctxError) {
    return { error: { code: err.code, message: err.message, path: err.path } };
  }
  return { error: { code: "internal_error", message: "internal error", path: null } };
}

type ZodIssue = ZodError["issues"][number];

/**
 * The first unknown-field issue of a failed parse, with the path it sits under, descending
 * into unions (the branch with the fewest problems is the one the caller meant).
 */
function unknownField(issues: readonly ZodIssue[]): { issue: ZodIssue; at: PropertyKey[] } | null {
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys") return { issue, at: [] };
    if (issue.code !== "invalid_union") continue;
    const branches = [...issue.errors].sort((a, b) => a.length - b.length);
    for (const branch of branches) {
      const inner = unknownField(branch);
      if (inner) return { issue: inner.issue, at: [...issue.path, ...inner.at] };
    }
  }
  return null;
}

/**
 * Converts the first issue of a zod validation failure into an {@link InvalidInputError}
 * that names the field path, so every schema in the package reports errors one way. An
 * unknown field (a strict object's `unrecognized_keys`) becomes an {@link UnknownFieldError}
 * whose path ends with that field.
 *
 * @example throw invalidFromZod(Schema.safeParse(x).error, ["records", 3]);
 */
export function invalidFromZod(error: ZodError, prefix: FieldPath = []): InvalidInputError {
  // An unknown field first: a misspelt field also makes the one it meant look missing.
  const unknown = unknownField(error.issues);
  const issue = unknown?.issue ?? error.issues[0];
  if (!issue) return new InvalidInputError("invalid input", formatPath(prefix));
  const path = [...prefix, ...(unknown?.at ?? []), ...issue.path].filter(
    (p): p is string | number => typeof p !== "symbol",
  );
  if (issue.code === "unrecognized_keys") {
    const field = [...path, issue.keys[0] ?? ""];
    // The strict layer's message carries the hint; zod's own ("Unrecognized key…") does not.
    const why = issue.message.startsWith("unknown field") ? issue.message : "unknown field";
    return new UnknownFieldError(`${formatPath(field)}: ${why}`, field);
  }
  const where = path.length > 0 ? `${formatPath(path)}: ` : "";
  return new InvalidInputError(`${where}${issue.message}`, path.length > 0 ? path : null);
}
