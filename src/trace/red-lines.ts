/**
 * Loading of the red lines of docs/manifest-wire-guard.md: validates raw red lines (one of `literal` and
 * `pattern`, unique ids, a severity), rejects unsafe or empty-matching patterns with the
 * reason, and compiles them once for `checkDraft` (the matching rules are in `guard.ts`).
 */
import { z } from "zod";
import { InvalidInputError, invalidFromZod } from "../errors/index.js";
import type { RedLine, Skill } from "../sources/index.js";
import {
  compileScanRegex,
  cpLength,
  isBlank,
  normalizeKey,
  regexSafetyProblem,
  type ScanRegex,
  strictSchema,
  textString,
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
  /** Pattern: compiled with `gu`. */
  regex: RegExp | null;
  /** Pattern: compiled for the exact linear-time scan (`text/regex-scan.ts`). */
  scan: ScanRegex | null;
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
 * Validates and compiles red lines at load. Throws invalid input naming the line and the
 * reason (`redLines[3].pattern: nested quantifier …`); `prefix` replaces `redLines`.
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
        regex: null,
        scan: null,
      };
    }
    const source = line.pattern as string;
    const where = [prefix, i, "pattern"];
    const fail = (why: string): never => {
      throw new InvalidInputError(`/${source}/u: ${why}`, where);
    };
    if (source === "") fail("must not be empty");
    const n = cpLength(source);
    if (n > MAX_RED_LINE_PATTERN_LENGTH) {
      fail(`pattern is ${n} code points, the limit is ${MAX_RED_LINE_PATTERN_LENGTH}`);
    }
    let regex: RegExp;
    try {
      regex = new RegExp(source, "gu");
    } catch (err) {
      return fail(`invalid regex: ${(err as Error).message}`);
    }
    const problem = regexSafetyProblem(source);
    if (problem !== null) fail(problem);
    regex.lastIndex = 0;
    if (regex.test("")) fail("matches the empty string");
    const scan = compileScanRegex(source);
    if (typeof scan === "string") fail(scan);
    return {
      id: line.id,
      severity: line.severity,
      kind: "pattern",
      source,
      key: null,
      regex,
      scan: scan as ScanRegex,
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
