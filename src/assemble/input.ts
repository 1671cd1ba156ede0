/**
 * What an assembly cannot start without, checked before anything runs: a typed error
 * naming the field (under `at` when the input sits inside a larger request, such as the
 * `assemble` of a whole agent request) instead of a TypeError deep in the pipeline.
 */
import { type FieldPath, InvalidInputError, underPath } from "../errors/index.js";
import { createSourceRegistry, type SourceRegistry } from "../sources/index.js";

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Checks that `input` has what an assembly needs — an object with `now` (the clock is a
 * parameter), `query: {text, userScope}` as strings, `mode` a string when given, and
 * `sources` (an array of sources, each checked, or a registry) — and returns its source
 * registry. Throws {@link InvalidInputError} with the field path, under `at`.
 *
 * @example checkAssembleInput({ mode: "chat", query: { text: "q", userScope: "u1" }, sources: [] }, ["assemble"]) // throws: assemble.now
 */
export function checkAssembleInput(input: unknown, at: FieldPath = []): SourceRegistry {
  const bad = (message: string, path: FieldPath) => {
    const full = [...at, ...path];
    return new InvalidInputError(message, full.length === 0 ? null : full);
  };
  if (!isObject(input)) throw bad("must be an object", []);
  if (typeof input.now !== "string") {
    throw bad("now is required: an ISO-8601 timestamp (the clock is a parameter)", ["now"]);
  }
  const q = input.query;
  if (!isObject(q)) throw bad("query is required: { text, userScope }", ["query"]);
  for (const k of ["text", "userScope"] as const) {
    if (typeof q[k] !== "string") throw bad("must be a string", ["query", k]);
  }
  if (input.mode !== undefined && typeof input.mode !== "string") {
    throw bad("must be a string (a schema mode)", ["mode"]);
  }
  const s = input.sources;
  if (Array.isArray(s)) {
    try {
      return createSourceRegistry(s);
    } catch (err) {
      throw underPath(err, at);
    }
  }
  if (isObject(s) && typeof s.sourcesFor === "function") return s as unknown as SourceRegistry;
  throw bad("sources is required: an array of sources (or a source registry)", ["sources"]);
}
