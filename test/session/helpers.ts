/**
 * Shared fixtures of the session tests: segments that depend on one piece of state each,
 * a source wrapper that counts fetches, a token counter that counts calls, and memory
 * candidates.
 */
import {
  createSession,
  type Session,
  type SessionOptions,
  type SessionSegment,
} from "../../src/assemble/index.js";
import type { CandidateInput } from "../../src/memory/index.js";
import {
  type ContextSource,
  constraintsSource,
  profileSource,
  staticSource,
} from "../../src/sources/index.js";
import { getTokenCounter, type TokenCounter } from "../../src/tokens/index.js";

export const NOW = "2026-11-30T09:00:00Z";
export const LATER = "2026-11-30T09:01:00Z";
export const QUERY = { text: "add a currency column", now: NOW };

/** One segment per session dependency of the docs/session-and-cache.md table, plus a dependency-free one. */
export function testSegments(): SessionSegment[] {
  return [
    {
      name: "base_rules",
      required: true,
      cacheTier: "static",
      priority: 0,
      deps: [],
      build: () => "Base rules: be careful.",
    },
    {
      name: "identity",
      cacheTier: "static",
      priority: 10,
      deps: ["identity"],
      build: (s) => s.identity,
    },
    {
      name: "expert",
      cacheTier: "session",
      priority: 50,
      deps: ["expert"],
      build: (s) => (s.expert === null ? null : `Expert: ${s.expert}.`),
    },
    {
      name: "skills",
      cacheTier: "session",
      priority: 60,
      deps: ["skills"],
      build: (s) =>
        s.skills.size === 0
          ? null
          : [...s.skills]
              .sort(([a], [b]) => (a < b ? -1 : 1))
              .map(([n, body]) => `Skill ${n}: ${body}`)
              .join("\n"),
    },
    {
      name: "connectors",
      cacheTier: "session",
      priority: 70,
      deps: ["connectors"],
      build: (s) => {
        const online = [...s.connectors].filter(([, on]) => on).map(([n]) => n);
        return online.length === 0 ? null : `Connectors online: ${online.sort().join(", ")}.`;
      },
    },
    {
      name: "working_mode",
      required: true,
      cacheTier: "dynamic",
      priority: 90,
      deps: ["workingMode"],
      build: (s) => `Working mode: ${s.workingMode}.`,
    },
  ];
}

/** A source wrapper counting `fetch` calls per slot kind. */
export function counting(source: ContextSource): ContextSource & { fetches: Map<string, number> } {
  const fetches = new Map<string, number>();
  return {
    id: source.id,
    supports: (kind) => source.supports(kind),
    fetch: (slot, query, signal) => {
      fetches.set(slot.kind, (fetches.get(slot.kind) ?? 0) + 1);
      return source.fetch(slot, query, signal);
    },
    fetches,
  };
}

export const total = (m: ReadonlyMap<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

/** A token counter that counts its calls (delegating to the estimate). */
export function countingCounter(): TokenCounter & { calls: number } {
  const base = getTokenCounter("estimate");
  const counter = {
    name: base.name,
    kind: base.kind,
    newlineCut: base.newlineCut,
    ...(base.extendWithNewlines ? { extendWithNewlines: base.extendWithNewlines } : {}),
    calls: 0,
    count(text: string) {
      counter.calls++;
      return base.count(text);
    },
  };
  return counter;
}

/** A session over {@link testSegments} with counted constraints and profile sources. */
export function testSession(overrides: Partial<SessionOptions> = {}) {
  const constraints = counting(
    constraintsSource({ rules: [{ id: "no-rm", level: "forbid", text: "no rm -rf" }] }),
  );
  const profile = counting(profileSource([{ key: "city", value: "Berlin", category: "identity" }]));
  const kb = counting(staticSource("kb", ["kb"], [{ id: "k1", text: "Deploys on Fridays." }]));
  const session: Session = createSession({
    state: {
      userScope: "u1",
      mode: "chat",
      workingMode: "craft",
      expert: null,
      identity: "You work for Acme.",
      connectors: new Map([
        ["github", false],
        ["slack", false],
      ]),
    },
    segments: testSegments(),
    sources: [constraints, profile, kb],
    ...overrides,
  });
  return {
    session,
    constraints,
    profile,
    fetchCount: () => total(constraints.fetches) + total(profile.fetches),
  };
}

const prov = (day: number) => ({
  sourceId: `chat-${day}`,
  sourceType: "conversation",
  title: "chat",
  capturedAt: `2026-11-${String(day).padStart(2, "0")}T09:00:00Z`,
});

/** A recall candidate (score 0.9, rank by id order). */
export function candidate(
  memoryId: string,
  text: string,
  userScope: string,
  extra: Partial<CandidateInput> = {},
): CandidateInput {
  return {
    memoryId,
    text,
    userScope,
    score: 0.9,
    sourceRank: 1,
    provenance: prov(10),
    ...extra,
  };
}

/** The ids of the layers whose content or status differs between two manifests. */
export function changedLayers(
  before: { layers: ReadonlyArray<{ id: string; versionId: string; status: string }> },
  after: { layers: ReadonlyArray<{ id: string; versionId: string; status: string }> },
): string[] {
  const old = new Map(before.layers.map((l) => [l.id, l]));
  return after.layers
    .filter((l) => {
      const o = old.get(l.id);
      return o === undefined || o.versionId !== l.versionId || o.status !== l.status;
    })
    .map((l) => l.id)
    .sort();
}
