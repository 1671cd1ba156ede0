/** A registry maps slot kinds to the sources that serve them (one source may serve several kinds). */
import { InvalidInputError } from "../errors/index.js";
import type { ContextSource } from "./types.js";

/** Read-only view of registered sources. */
export interface SourceRegistry {
  readonly sources: readonly ContextSource[];
  /** Sources serving `kind`, in registration order. */
  sourcesFor(kind: string): readonly ContextSource[];
}

function isSource(s: unknown): s is ContextSource {
  if (typeof s !== "object" || s === null) return false;
  const c = s as Partial<Record<keyof ContextSource, unknown>>;
  return (
    typeof c.id === "string" &&
    c.id.trim() !== "" &&
    typeof c.supports === "function" &&
    typeof c.fetch === "function"
  );
}

/**
 * Builds a registry; source ids must be unique.
 *
 * @example createSourceRegistry([constraintsSource(policy), profileSource(entries)]).sourcesFor("profile")
 */
export function createSourceRegistry(sources: readonly ContextSource[]): SourceRegistry {
  if (!Array.isArray(sources))
    throw new InvalidInputError("must be an array of sources", "sources");
  const seen = new Set<string>();
  sources.forEach((s, i) => {
    // A caller's typo (a rule object, a factory not called) is bad input, not a TypeError later.
    if (!isSource(s)) {
      throw new InvalidInputError(
        "not a source: needs a non-blank string id, and supports and fetch functions",
        ["sources", i],
      );
    }
    if (seen.has(s.id))
      throw new InvalidInputError(`duplicate source id "${s.id}"`, ["sources", i, "id"]);
    seen.add(s.id);
  });
  const list = [...sources];
  return {
    sources: list,
    // A loop, not a filter closure per call: see "Object shapes" in docs/performance.md.
    sourcesFor: (kind) => {
      const out: ContextSource[] = [];
      for (const s of list) if (s.supports(kind)) out.push(s);
      return out;
    },
  };
}
