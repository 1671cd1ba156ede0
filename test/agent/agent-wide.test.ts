/**
 * The wider agent-session generator of the bench (bench/lib/agent-wide.mjs, the `agent-wide`
 * section) at small sizes: its per-seed profiles span the ranges the section claims, a
 * session holds every kind of tool result, facts sit where the profile puts them, every
 * need is a fact of an earlier turn within reach that the request still carries in its
 * history, and the same seed gives the same bytes.
 */
import { describe, expect, it } from "vitest";
import { sessionRequests } from "../../bench/lib/agent-session.mjs";
import {
  KINDS,
  makeWideSession,
  PLACES,
  profileOf,
  type WideSession,
} from "../../bench/lib/agent-wide.mjs";

const SEEDS = [1, 2, 3, 4];
const TURNS = 14;
const sessions = new Map<number, WideSession>(
  SEEDS.map((seed) => [seed, makeWideSession({ seed, turns: TURNS })]),
);
const sessionOf = (seed: number): WideSession => {
  const s = sessions.get(seed);
  if (s === undefined) throw new Error(`no session for seed ${seed}`);
  return s;
};

/** The output of every tool result in the session, by call id. */
function outputs(s: WideSession): Map<string, string> {
  const out = new Map<string, string>();
  for (const t of s.turns) {
    for (const r of t.rounds) {
      for (const m of r.results) {
        for (const part of m.content) {
          if (part.type === "tool_result" && typeof part.output === "string") {
            out.set(part.callId, part.output);
          }
        }
      }
    }
  }
  return out;
}

describe("the wider session generator", () => {
  it("draws profiles across the claimed ranges over 32 seeds", () => {
    const profiles = Array.from({ length: 32 }, (_, i) => profileOf(i + 1));
    const turns = profiles.map((p) => p.turns);
    expect(Math.min(...turns)).toBeGreaterThanOrEqual(50);
    expect(Math.max(...turns)).toBeLessThanOrEqual(300);
    // Spread, not one shape: short and long sessions, low and high tool shares, short and long reach.
    expect(Math.min(...turns)).toBeLessThan(120);
    expect(Math.max(...turns)).toBeGreaterThan(230);
    const shares = profiles.map((p) => p.toolTurnShare);
    expect(Math.min(...shares)).toBeGreaterThanOrEqual(0.35);
    expect(Math.max(...shares)).toBeLessThanOrEqual(0.95);
    expect(Math.max(...shares) - Math.min(...shares)).toBeGreaterThan(0.3);
    const reach = profiles.map((p) => p.needReach);
    expect(Math.min(...reach)).toBeGreaterThanOrEqual(2);
    expect(Math.max(...reach)).toBeLessThanOrEqual(60);
    expect(Math.max(...reach) - Math.min(...reach)).toBeGreaterThan(30);
    expect(new Set(profiles.map((p) => p.recentBias)).size).toBe(2);
  });

  it("is deterministic by seed, and seeds differ", () => {
    expect(JSON.stringify(makeWideSession({ seed: 2, turns: TURNS }))).toBe(
      JSON.stringify(sessionOf(2)),
    );
    expect(JSON.stringify(sessionOf(1))).not.toBe(JSON.stringify(sessionOf(2)));
    expect(makeWideSession({ seed: 3 }).turns).toHaveLength(profileOf(3).turns);
  });

  it("holds every kind of result and every fact place, results of ~50–20,000 tokens", () => {
    const all = SEEDS.map(sessionOf);
    const kinds = new Set(all.flatMap((s) => s.facts.map((f) => f.kind)));
    expect([...kinds].sort()).toEqual([...KINDS].sort());
    const places = new Set(all.flatMap((s) => s.facts.map((f) => f.place)));
    expect([...places].sort()).toEqual([...PLACES].sort());
    const sizes = all.flatMap((s) => [...outputs(s).values()].map((o) => o.length));
    expect(sizes.length).toBeGreaterThan(20);
    // 50 tokens at ~3.6 chars, 20,000 tokens plus a line and the facts' lines.
    expect(Math.min(...sizes)).toBeGreaterThanOrEqual(150);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(20_000 * 3.6 + 1_000);
    expect(Math.max(...sizes) / Math.min(...sizes)).toBeGreaterThan(20);
  });

  it("places each fact in its result at its line, head and tail in the first / last tenth", () => {
    for (const s of SEEDS.map(sessionOf)) {
      const out = outputs(s);
      const byTurn = new Map<string, string[]>();
      for (const t of s.turns) {
        for (const [k, r] of t.rounds.entries()) {
          const texts = r.results.flatMap((m) =>
            m.content.flatMap((p) =>
              p.type === "tool_result" && typeof p.output === "string" ? [p.output] : [],
            ),
          );
          byTurn.set(`${t.index}/${k}`, texts);
        }
      }
      expect(s.facts.length).toBeGreaterThanOrEqual(out.size);
      for (const f of s.facts) {
        const texts = byTurn.get(`${f.turn}/${f.round}`) ?? [];
        const holder = texts.find((o) => o.includes(f.fact));
        expect(holder, f.fact).toBeDefined();
        const lines = (holder ?? "").split("\n");
        expect(lines[f.line]).toContain(f.fact);
        // The frame (JSON brackets, a table header: 2 lines) and the other fact of the result may
        // push a line a little further than a tenth.
        const tenth = Math.max(1, Math.floor(lines.length / 10)) + 4;
        if (f.place === "head") expect(f.line).toBeLessThanOrEqual(tenth);
        if (f.place === "tail") expect(f.line).toBeGreaterThanOrEqual(lines.length - 1 - tenth);
      }
    }
  });

  it("needs facts of earlier turns within reach, carried by the history of the request that needs them", () => {
    let needs = 0;
    for (const s of SEEDS.map(sessionOf)) {
      const placed = new Map(s.facts.map((f) => [f.fact, f]));
      for (const n of s.needed) {
        const f = placed.get(n.fact);
        expect(f).toBeDefined();
        expect(n.from).toBe(f?.turn);
        expect(n.from).toBeLessThan(n.turn);
        expect(n.turn - n.from).toBeLessThanOrEqual(s.profile.needReach);
      }
      for (const req of sessionRequests(s)) {
        const history = JSON.stringify(req.messages);
        for (const f of req.needs) {
          needs++;
          expect(history).toContain(f);
        }
      }
      expect(s.needed.length).toBe(
        s.turns.reduce(
          (n, t) => n + t.needs.length + t.rounds.reduce((m, r) => m + (r.needs?.length ?? 0), 0),
          0,
        ),
      );
    }
    expect(needs).toBeGreaterThan(5);
  });

  it("pairs every call with its results and never ends a request on an assistant message", () => {
    for (const s of SEEDS.map(sessionOf)) {
      for (const t of s.turns) {
        for (const r of t.rounds) {
          const calls = r.call.content.flatMap((p) => (p.type === "tool_call" ? [p.callId] : []));
          const answered = r.results.flatMap((m) =>
            m.content.flatMap((p) => (p.type === "tool_result" ? [p.callId] : [])),
          );
          expect(answered).toEqual(calls);
          expect(calls.length).toBeGreaterThanOrEqual(1);
          expect(calls.length).toBeLessThanOrEqual(3);
        }
        expect(t.rounds.length).toBeLessThanOrEqual(s.profile.maxRounds);
      }
      const requests = [...sessionRequests(s)];
      expect(requests.every((q) => q.messages.at(-1)?.role !== "assistant")).toBe(true);
    }
  });
});
