/**
 * Loading of the red lines of docs/manifest-wire-guard.md: validates raw red lines (one of `literal` and
 * `pattern`, unique ids, a severity), compiles patterns for the linear-time engine
 * (`compileUserPattern`: what it cannot run, or a pattern matching the empty string, is
 * refused with the reason), once, for `checkDraft` (the matching rules are in `guard.ts`).
 */
import { z } from "zod";
import { InvalidInputError, invalidFromZod } from "../errors/index.js";
import type { RedLine, Skill } from "../sources/index.js";
import {
  compileUserPattern,
  isBlank,
  normalizeKey,
  strictSchema,
  textString,
  type UserPattern,
} from "../text/index.js";

/** Longest accepted red-line regex source, in code points. */
export const MAX_RED_LINE_PATTERN_LENGTH = 500;

const SEVERITIES = ["block", "warn", "review"] as const;
export type RedLineSeverity = (typeof SEVERITIES)[number];

/** A red line validated and ready to run. */
export interface CompiledRedLine {
  id: string;
  severity: RedLineSeverity;
  kind: "literal" | "pattern";
  /** The literal as given, or the regex source. */
  source: string;
  /** Literal: its normalized form (`normalizeKey`). */
  key: string | null;
  /** Pattern: compiled for the linear-time engine (`compileUserPattern`). */
  pattern: UserPattern | null;
}

/** The output of {@link compileRedLines}: pass it to `checkDraft` as often as needed. */
export interface CompiledRedLines {
  readonly compiled: true;
  readonly lines: readonly CompiledRedLine[];
}

const RedLineSchema = z
  .object({
    id: textString.refine((s) => !isBlank(s), { message: "must be a non-blank string" }),
    severity: z.enum(SEVERITIES),
    literal: textString.optional(),
    pattern: textString.optional(),
  })
  .strict();

/** Already compiled by {@link compileRedLines} (so `checkDraft` skips validation). */
export function isCompiled(x: unknown): x is CompiledRedLines {
  return typeof x === "object" && x !== null && (x as CompiledRedLines).compiled === true;
}

/**
 * Validates and compiles red lines at load. Throws `invalid_input` or, for a pattern the
 * linear-time engine cannot run, `unsupported_pattern`, naming the line and the reason
 * (`redLines[3].pattern: /(?=x)/: lookahead (?=…) is not supported …`); `prefix` replaces
 * `redLines`.
 *
 * @example
 * const lines = compileRedLines([
 *   { id: "no-secrets", severity: "block", pattern: "\\bsk-[A-Za-z0-9]{20,}" },
 *   { id: "no-promise", severity: "review", literal: "guaranteed returns" },
 * ]);
 */
export function compileRedLines(lines: unknown, prefix = "redLines"): CompiledRedLines {
  if (!Array.isArray(lines)) throw new InvalidInputError("must be a list of red lines", prefix);
  const seen = new Set<string>();
  const out = lines.map((raw, i): CompiledRedLine => {
    const parsed = strictSchema(RedLineSchema).safeParse(raw);
    if (!parsed.success) throw invalidFromZod(parsed.error, [prefix, i]);
    const line = parsed.data;
    if (seen.has(line.id)) {
      throw new InvalidInputError(`duplicate red line id ${JSON.stringify(line.id)}`, [
        prefix,
        i,
        "id",
      ]);
    }
    seen.add(line.id);
    if ((line.literal === undefined) === (line.pattern === undefined)) {
      throw new InvalidInputError("needs exactly one of literal and pattern", [prefix, i]);
    }
    if (line.literal !== undefined) {
      if (isBlank(line.literal)) {
        throw new InvalidInputError("must not be blank", [prefix, i, "literal"]);
      }
      return {
        id: line.id,
        severity: line.severity,
        kind: "literal",
        source: line.literal,
        key: normalizeKey(line.literal),
        pattern: null,
      };
    }
    const source = line.pattern as string;
    const pattern = compileUserPattern(source, [prefix, i, "pattern"], {
      maxLength: MAX_RED_LINE_PATTERN_LENGTH,
      refuseEmptyMatch: true,
    });
    return {
      id: line.id,
      severity: line.severity,
      kind: "pattern",
      source,
      key: null,
      pattern,
    };
  });
  return { compiled: true, lines: out };
}

/**
 * The red lines of loaded skills, ids namespaced by skill (`<skill>:<id>`) so two skills'
 * ids never clash; skills in the order given, lines in file order.
 *
 * @example redLinesFromSkills(catalog.skills) // [{ id: "deploy:no-force-push", … }]
 */
export function redLinesFromSkills(skills: readonly Pick<Skill, "name" | "redLines">[]): RedLine[] {
  return skills.flatMap((s) => s.redLines.map((l) => ({ ...l, id: `${s.name}:${l.id}` })));
}
