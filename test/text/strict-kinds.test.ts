/**
 * The strict layer rests on zod's definition kinds (text/strict.ts): every kind any schema
 * of the project uses must be one it handles, and an unknown kind is refused (fail
 * closed), never skipped — so a zod release or a new schema cannot quietly let unknown
 * fields through at some depth.
 */
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { STRICT_KINDS, strictSchema, UnhandledSchemaKindError } from "../../src/text/strict.js";

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));
// Edges that run on import (the launcher) or in a browser (the inspector's page).
const SKIP = [/^cli\/launch\.ts$/, /^server\/inspector\//];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

type AnySchema = z.core.$ZodType;
// A schema's definition has a `type`; a check's (also under `_zod.def`) has a `check`.
const isSchema = (v: unknown): v is AnySchema =>
  typeof v === "object" &&
  v !== null &&
  "_zod" in v &&
  typeof (v as { _zod: { def?: { type?: unknown } } })._zod.def?.type === "string";

/** Every definition kind reachable from `root` (lazy getters followed), into `kinds`. */
function walk(root: AnySchema, kinds: Map<string, string>, where: string, seen: Set<unknown>) {
  if (seen.has(root)) return;
  seen.add(root);
  const def = root._zod.def as unknown as Record<string, unknown> & { type: string };
  if (!kinds.has(def.type)) kinds.set(def.type, where);
  const visit = (v: unknown): void => {
    if (isSchema(v)) walk(v, kinds, where, seen);
    else if (Array.isArray(v)) v.forEach(visit);
    else if (typeof v === "object" && v !== null && Object.getPrototypeOf(v) === Object.prototype)
      Object.values(v).forEach(visit);
  };
  for (const [key, value] of Object.entries(def)) {
    if (key === "getter" && typeof value === "function") visit((value as () => unknown)());
    else visit(value);
  }
}

async function projectSchemas(): Promise<Map<string, AnySchema>> {
  const out = new Map<string, AnySchema>();
  for (const file of files(SRC)) {
    const rel = relative(SRC, file).split("\\").join("/");
    if (SKIP.some((r) => r.test(rel))) continue;
    const mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(mod)) {
      if (isSchema(value)) out.set(`${rel}#${name}`, value);
    }
  }
  return out;
}

describe("strict.ts and zod's definition kinds", () => {
  it("handles every kind the project's schemas use, and derives each strict form", async () => {
    const schemas = await projectSchemas();
    // The stages' request schemas are among them (the walk found the modules).
    expect(schemas.size).toBeGreaterThan(40);
    const kinds = new Map<string, string>();
    const seen = new Set<unknown>();
    for (const [where, schema] of schemas) walk(schema, kinds, where, seen);
    const unhandled = [...kinds].filter(([k]) => !STRICT_KINDS.includes(k));
    expect(unhandled, "kinds text/strict.ts does not handle (and where first seen)").toEqual([]);
    for (const [where, schema] of schemas) {
      expect(() => strictSchema(schema as z.ZodType), where).not.toThrow();
    }
    // The walk reached the kinds the strict layer rebuilds.
    for (const k of ["object", "array", "union", "record", "optional", "lazy", "pipe"]) {
      expect([...kinds.keys()]).toContain(k);
    }
  }, 120_000);

  it("refuses a kind it does not handle, at any depth (fail closed, never skipped)", () => {
    const inner = z.object({ a: z.map(z.string(), z.object({ b: z.string() })) });
    expect(() => strictSchema(z.array(inner))).toThrow(UnhandledSchemaKindError);
    expect(() => strictSchema(z.set(z.object({})))).toThrow(/"set" is not handled/);
    const late = strictSchema(z.lazy(() => z.promise(z.object({}))));
    expect(() => late.safeParse({})).toThrow(UnhandledSchemaKindError);
  });

  it("still refuses an unknown field inside each nesting kind", () => {
    const leaf = z.object({ x: z.number() });
    const cases: [z.ZodType, unknown][] = [
      [z.array(leaf), [{ x: 1, y: 2 }]],
      [leaf.optional(), { x: 1, y: 2 }],
      [leaf.nullable(), { x: 1, y: 2 }],
      [leaf.default({ x: 0 }), { x: 1, y: 2 }],
      [leaf.readonly(), { x: 1, y: 2 }],
      [z.union([leaf, z.string()]), { x: 1, y: 2 }],
      [z.record(z.string(), leaf), { k: { x: 1, y: 2 } }],
      [z.tuple([leaf]), [{ x: 1, y: 2 }]],
      [leaf.pipe(z.any()), { x: 1, y: 2 }],
      [z.lazy(() => leaf), { x: 1, y: 2 }],
      [z.intersection(leaf, z.object({ z: z.number().optional() })), { x: 1, y: 2 }],
    ];
    for (const [schema, value] of cases) {
      const parsed = strictSchema(schema).safeParse(value);
      expect(parsed.success, JSON.stringify(value)).toBe(false);
    }
  });
});
