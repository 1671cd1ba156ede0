/** A registry maps slot kinds to the sources that serve them (one source may serve several kinds). */
import { InvalidInputError } from "../errors/index.js";
import type { ContextSource } from "./types.js";

/** Read-only view of registered sources. */
export interface SourceRegistry {
  readonly sources: readonly ContextSource[];
  /** Sources serving `kind`, in registration order. */
  sourcesFor(kind: string): readonly ContextSource[];
}

/**
 * Builds a registry; source ids must be unique.
 *
 * @example createSourceRegistry([constraintsSource(policy), profileSource(entries)]).sourcesFor("profile")
 */
export function createSourceRegistry(sources: readonly ContextSource[]): SourceRegistry {
  const seen = new Set<string>();
  sources.forEach((s, i) => {
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
