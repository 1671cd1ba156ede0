/**
 * The strict layer: {@link strictSchema} derives, from a schema as its stage defines it,
 * the form every surface (HTTP routes, CLI JSON inputs) validates with — every object at
 * any depth rejects a field it does not declare, and says which declared field was meant
 * when one is close ({@link closestName}). A stage's own schema stays the one source.
 */
import { z } from "zod";
import { invalidFromZod } from "../errors/index.js";

type Schema = z.core.$ZodType;
type Def = Record<string, unknown> & { type: string };
type ErrorMap = (issue: z.core.$ZodRawIssue) => unknown;

/**
 * Edit distance of two strings with adjacent transpositions (optimal string alignment:
 * `nwo` is one edit from `now`); UTF-16 units are enough for field names.
 */
function editDistance(a: string, b: string): number {
  let before: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(
        (prev[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (prev[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, (before[j - 2] as number) + 1);
      }
      row[j] = d;
    }
    [before, prev] = [prev, row];
  }
  return prev[b.length] as number;
}

/**
 * The one known name close to `name` (case-insensitive edit distance at most a third of its
 * length, at least 1), or `null` when none is, or when two are equally close.
 *
 * @example closestName("budgetchars", ["budgetChars", "budgetTokens"]) // "budgetChars"
 */
export function closestName(name: string, known: readonly string[]): string | null {
  const limit = Math.max(1, Math.floor(name.length / 3));
  let best: string | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  let tie = false;
  for (const k of known) {
    const d = editDistance(name.toLowerCase(), k.toLowerCase());
    if (d > limit || d > bestDistance) continue;
    tie = d === bestDistance;
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return tie ? null : best;
}

/** The message of an unknown field: the close known field, else the known ones. */
function unknownFieldMessage(key: string, known: readonly string[]): string {
  const near = closestName(key, known);
  if (near !== null) return `unknown field; did you mean \`${near}\`?`;
  return known.length > 0 ? `unknown field (known: ${known.join(", ")})` : "unknown field";
}

function withHint(previous: unknown, known: readonly string[]): ErrorMap {
  const prior = typeof previous === "function" ? (previous as ErrorMap) : null;
  return (issue) =>
    issue.code === "unrecognized_keys"
      ? unknownFieldMessage(String(issue.keys[0] ?? ""), known)
      : prior?.(issue);
}

const memo = new WeakMap<Schema, Schema>();

/**
 * Definition kinds that hold no schema inside (nothing to make strict): kept as they are.
 * `transform` and `custom` hold functions, `template_literal` only primitive parts.
 */
const LEAF_KINDS = [
  "string",
  "number",
  "boolean",
  "bigint",
  "symbol",
  "null",
  "undefined",
  "void",
  "never",
  "any",
  "unknown",
  "date",
  "nan",
  "enum",
  "literal",
  "template_literal",
  "file",
  "transform",
  "custom",
] as const;

/** Definition kinds whose inner schemas {@link strictSchema} rebuilds strict. */
const NESTING_KINDS = [
  "object",
  "array",
  "optional",
  "nullable",
  "default",
  "prefault",
  "nonoptional",
  "readonly",
  "catch",
  "union",
  "intersection",
  "record",
  "tuple",
  "pipe",
  "lazy",
] as const;

/**
 * Every zod definition kind the strict layer handles. Any other kind (a new one in a zod
 * release, or one no schema here used before: `map`, `set`, `promise`…) is refused when a
 * strict form is derived — failing closed, never skipped, so "unknown fields are refused
 * at any depth" cannot weaken silently. A test walks every schema the stages export.
 */
export const STRICT_KINDS: readonly string[] = [...LEAF_KINDS, ...NESTING_KINDS];

const LEAVES: ReadonlySet<string> = new Set(LEAF_KINDS);

/** A schema kind the strict layer does not know: a programming error, found by the tests. */
export class UnhandledSchemaKindError extends Error {
  constructor(readonly kind: string) {
    super(`strictSchema: zod definition kind "${kind}" is not handled (text/strict.ts)`);
    this.name = "UnhandledSchemaKindError";
  }
}

// The children of a definition, by kind: each is rebuilt strict, the rest of the definition
// kept; null for a leaf. An unknown kind throws (fail closed).
function strictDef(def: Def): Def | null {
  const s = (v: unknown) => strictOf(v as Schema);
  switch (def.type) {
    case "object": {
      const shape = def.shape as Record<string, Schema>;
      const strictShape = Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, s(v)]));
      const catchall = def.catchall ?? z.never(); // a loose object's catchall is its choice
      const known = Object.keys(shape);
      return { ...def, shape: strictShape, catchall, error: withHint(def.error, known) };
    }
    case "array":
      return { ...def, element: s(def.element) };
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
    case "nonoptional":
    case "readonly":
    case "catch":
      return { ...def, innerType: s(def.innerType) };
    case "union":
      return { ...def, options: (def.options as Schema[]).map(s) };
    case "intersection":
      return { ...def, left: s(def.left), right: s(def.right) };
    case "record":
      return { ...def, valueType: s(def.valueType) };
    case "tuple":
      return { ...def, items: (def.items as Schema[]).map(s), rest: def.rest ? s(def.rest) : null };
    case "pipe":
      return { ...def, in: s(def.in), out: s(def.out) };
    case "lazy": {
      const getter = def.getter as () => Schema;
      return { ...def, getter: () => strictOf(getter()) };
    }
    default:
      if (LEAVES.has(def.type)) return null;
      throw new UnhandledSchemaKindError(def.type);
  }
}

function strictOf(schema: Schema): Schema {
  const hit = memo.get(schema);
  if (hit) return hit;
  const def = strictDef(schema._zod.def as unknown as Def);
  // No parent link: JSON Schema generation would follow it back to the loose original.
  const out =
    def === null ? schema : z.core.clone(schema, def as unknown as typeof schema._zod.def);
  const meta = z.globalRegistry.get(schema);
  if (out !== schema && meta) z.globalRegistry.add(out, meta);
  memo.set(schema, out);
  return out;
}

/**
 * The strict form of `schema`: the same rules, and every object at any depth (inside
 * arrays, unions, records, optionals, pipes, lazies) rejects an undeclared field with an
 * `unrecognized_keys` issue whose message names the close known field, which
 * `invalidFromZod` turns into `unknown_field` at the field's full path. Objects that accept
 * extra fields on purpose (a catchall) keep doing so. Memoized per schema.
 *
 * @example strictSchema(PolicySchema).safeParse({ budgetchars: 5 }) // fails: did you mean `maxChars`?
 */
export function strictSchema<T extends z.ZodType>(schema: T): T {
  return strictOf(schema) as T;
}

/**
 * Throws `unknown_field` (with its full path and a "did you mean") when `value` has a field
 * that `schema`'s strict form does not declare, at any depth; any other problem is left to
 * the caller's own validation, so its errors stay what they were.
 *
 * @example rejectUnknownFields(SelectMemoryRequestSchema, JSON.parse(body));
 */
export function rejectUnknownFields(schema: z.ZodType, value: unknown): void {
  const parsed = strictSchema(schema).safeParse(value);
  if (parsed.success) return;
  const err = invalidFromZod(parsed.error);
  if (err.code === "unknown_field") throw err;
}
