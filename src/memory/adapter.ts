/**
 * The adapter from recall hits to selection candidates (docs/memory-selection.md): copies scope, score,
 * rank and provenance without recomputing them; slots and authority come only from the
 * trusted caller's maps, never from prose.
 */
import { InvalidInputError } from "../errors/index.js";
import type { Authority, CandidateInput, MemoryMatch, Provenance } from "./schema.js";

/** A recall hit as a store or search service returns it. */
export interface RecallHit {
  memoryId: string;
  snippet: string;
  userScope: string;
  /** The final score; or give `scoreBreakdown.total`. */
  score?: number;
  scoreBreakdown?: { total: number };
  rank: number;
  provenance?: Provenance;
  /** How a hybrid recall found it (copied to the candidate and its decision). */
  match?: MemoryMatch;
}

/** Caller-supplied facts the hits cannot carry themselves. */
export interface AdapterOptions {
  conflictKeys?: Readonly<Record<string, string>>;
  authorityByMemoryId?: Readonly<Record<string, Authority>>;
}

/**
 * Turns recall hits into selection candidates. A hit without provenance or without a
 * score is invalid input (path `hits[i].…`).
 *
 * @example
 * candidatesFromRecallHits(hits, { authorityByMemoryId: { m7: "current_turn" } });
 */
export function candidatesFromRecallHits(
  hits: readonly RecallHit[],
  options: AdapterOptions = {},
): CandidateInput[] {
  return hits.map((hit, i) => {
    if (hit.provenance === undefined || hit.provenance === null) {
      throw new InvalidInputError("recall hit has no provenance", ["hits", i, "provenance"]);
    }
    const score = hit.score ?? hit.scoreBreakdown?.total;
    if (score === undefined || score === null) {
      throw new InvalidInputError("recall hit has no score", ["hits", i, "score"]);
    }
    const candidate: CandidateInput = {
      memoryId: hit.memoryId,
      text: hit.snippet,
      userScope: hit.userScope,
      score,
      sourceRank: hit.rank,
      provenance: { ...hit.provenance },
    };
    if (hit.match !== undefined) candidate.match = { ...hit.match };
    // Own entries only: an id such as "constructor" must not pick up Object.prototype.
    const slot = ownEntry(options.conflictKeys, hit.memoryId);
    if (slot !== undefined) candidate.conflictKey = slot;
    const authority = ownEntry(options.authorityByMemoryId, hit.memoryId);
    if (authority !== undefined) candidate.authority = authority;
    return candidate;
  });
}

function ownEntry<T>(map: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return map !== undefined && Object.hasOwn(map, key) ? map[key] : undefined;
}
