/**
 * docs/session-and-cache.md session events: each event invalidates only what it affects — one segment
 * rebuilt, one layer changed — and an unchanged state reuses the cached assembly (same
 * object, no builder call, no fetch, no token count).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Session } from "../../src/assemble/index.js";
import { createReplSession } from "../../src/cli/repl/session.js";
import { deterministicView } from "../../src/trace/index.js";
import {
  candidate,
  changedLayers,
  countingCounter,
  LATER,
  QUERY,
  testSegments,
  testSession,
} from "./helpers.js";

interface EventCase {
  event: string;
  fire: (s: Session) => void;
  rebuilt: string[];
  changed: string[];
}

// Before each event: skill changelog loaded, expert db-migrations, slack online.
const EVENTS: EventCase[] = [
  {
    event: "skill loaded",
    fire: (s) => s.loadSkill("sql-review", "Check migrations for locks."),
    rebuilt: ["skills"],
    changed: ["skills"],
  },
  {
    event: "skill unloaded",
    fire: (s) => s.unloadSkill("changelog"),
    rebuilt: ["skills"],
    changed: ["skills"],
  },
  {
    event: "skill body changed",
    fire: (s) => s.loadSkill("changelog", "Write the release note, grouped."),
    rebuilt: ["skills"],
    changed: ["skills"],
  },
  {
    event: "expert switched",
    fire: (s) => s.switchExpert("security"),
    rebuilt: ["expert"],
    changed: ["expert"],
  },
  {
    event: "expert switched off",
    fire: (s) => s.switchExpert(null),
    rebuilt: ["expert"],
    changed: ["expert"],
  },
  {
    event: "working mode switched",
    fire: (s) => s.setWorkingMode("plan"),
    rebuilt: ["working_mode"],
    changed: ["working_mode"],
  },
  {
    event: "connector online",
    fire: (s) => s.setConnector("github", true),
    rebuilt: ["connectors"],
    changed: ["connectors"],
  },
  {
    event: "connector offline",
    fire: (s) => s.setConnector("slack", false),
    rebuilt: ["connectors"],
    changed: ["connectors"],
  },
  {
    event: "identity changed",
    fire: (s) => s.setIdentity("You work for Globex. Be brief."),
    rebuilt: ["identity"],
    changed: ["identity"],
  },
  {
    event: "recalled memory installed",
    fire: (s) =>
      s.setRecalledMemory([candidate("m1", "Prefers Python for scripts.", s.current.userScope)]),
    rebuilt: [],
    changed: ["recall_memory"],
  },
];

function prepare(session: Session) {
  session.loadSkill("changelog", "Write the release note.");
  session.switchExpert("db-migrations");
  session.setConnector("slack", true);
}

const FIXTURES = [
  { name: "test segments", make: () => testSession().session },
  { name: "repl fixture", make: () => createReplSession().session },
];

describe.each(FIXTURES)("each event rebuilds only its segment ($name)", ({ make }) => {
  it.each(EVENTS)("$event → rebuilt $rebuilt, changed $changed", async (c) => {
    const session = make();
    prepare(session);
    const first = await session.assemble(QUERY);
    const calls = new Map(session.builderCalls);
    c.fire(session);
    const next = await session.assemble(QUERY);
    expect(session.report).toEqual({ reused: false, rebuilt: c.rebuilt, refetched: true });
    for (const [name, n] of session.builderCalls) {
      expect(n, name).toBe((calls.get(name) ?? 0) + (c.rebuilt.includes(name) ? 1 : 0));
    }
    expect(changedLayers(first.manifest, next.manifest)).toEqual(c.changed);
    // The event is consumed: asking again with the same query reuses the new assembly.
    expect(await session.assemble(QUERY)).toBe(next);
    expect(session.report.reused).toBe(true);
  });
});

describe("schema mode", () => {
  it("switching the schema mode rebuilds no segment and re-plans under the new schema", async () => {
    const { session } = testSession();
    await session.assemble(QUERY);
    session.setMode("rag");
    const a = await session.assemble(QUERY);
    expect(session.report).toEqual({ reused: false, rebuilt: [], refetched: true });
    expect(a.manifest.mode).toBe("rag");
    session.setMode("no-such-mode");
    const b = await session.assemble(QUERY);
    expect(b.manifest.mode).toBe("chat");
    expect(b.manifest.fallbackFrom).toBe("no-such-mode");
  });
});

describe("cache reuse", () => {
  it("an unchanged state with the same query and now returns the cached assembly: no build, fetch or count", async () => {
    const counter = countingCounter();
    const { session, fetchCount } = testSession({ tokenCounter: counter });
    const first = await session.assemble(QUERY);
    expect(session.report.reused).toBe(false);
    expect(session.report.rebuilt).toEqual(testSegments().map((s) => s.name));
    const calls = new Map(session.builderCalls);
    const fetches = fetchCount();
    const counted = counter.calls;
    expect(fetches).toBeGreaterThan(0);
    expect(counted).toBeGreaterThan(0);

    const again = await session.assemble({ ...QUERY });
    expect(again).toBe(first);
    expect(session.report).toEqual({ reused: true, rebuilt: [], refetched: false });
    expect(session.builderCalls).toEqual(calls);
    expect(fetchCount()).toBe(fetches);
    expect(counter.calls).toBe(counted);
  });

  it.each([
    [
      "loading the same skill body",
      (s: Session) => s.loadSkill("changelog", "Write the release note."),
    ],
    ["unloading a skill that is not loaded", (s: Session) => s.unloadSkill("nope")],
    ["switching to the current expert", (s: Session) => s.switchExpert("db-migrations")],
    ["switching to the current working mode", (s: Session) => s.setWorkingMode("craft")],
    ["setting a connector to its state", (s: Session) => s.setConnector("slack", true)],
    ["setting the same identity", (s: Session) => s.setIdentity("You work for Acme.")],
    ["setting the current schema mode", (s: Session) => s.setMode("chat")],
    ["clearing memory when none is installed", (s: Session) => s.clearRecalledMemory()],
    ["setting the current user scope", (s: Session) => s.setUserScope("u1")],
  ])("%s is no event: the cached assembly is reused", async (_name, fire) => {
    const { session, fetchCount } = testSession();
    prepare(session);
    const first = await session.assemble(QUERY);
    const fetches = fetchCount();
    fire(session);
    expect(await session.assemble(QUERY)).toBe(first);
    expect(session.report.reused).toBe(true);
    expect(fetchCount()).toBe(fetches);
  });

  it("a new clock or query text refetches the slots but rebuilds no segment", async () => {
    const { session, fetchCount } = testSession();
    const first = await session.assemble(QUERY);
    const calls = new Map(session.builderCalls);
    const fetches = fetchCount();
    const later = await session.assemble({ ...QUERY, now: LATER });
    expect(later).not.toBe(first);
    expect(session.report).toEqual({ reused: false, rebuilt: [], refetched: true });
    expect(fetchCount()).toBeGreaterThan(fetches);
    expect(later.prompt).toBe(first.prompt);
    await session.assemble({ text: "another question", now: LATER });
    expect(session.report.reused).toBe(false);
    expect(session.builderCalls).toEqual(calls);
  });

  it("a failed assembly leaves the events pending: the next call retries them", async () => {
    const { session } = testSession({ assemble: { budgetChars: 60 } });
    await expect(session.assemble(QUERY)).rejects.toMatchObject({ code: "prompt_budget_exceeded" });
    await expect(session.assemble(QUERY)).rejects.toMatchObject({ code: "prompt_budget_exceeded" });
    expect(session.report.reused).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------
// Incremental == from scratch: after any sequence of events the session's assembly is
// the one a fresh session built at that state would produce.

type Ev =
  | { t: "skill"; name: string; body: string }
  | { t: "unskill"; name: string }
  | { t: "expert"; name: string | null }
  | { t: "mode"; mode: "craft" | "plan" | "ask" }
  | { t: "connector"; name: string; on: boolean }
  | { t: "identity"; text: string }
  | { t: "memory"; ids: number[] }
  | { t: "clear" }
  | { t: "user"; scope: string }
  | { t: "now" };

const evArb: fc.Arbitrary<Ev> = fc.oneof(
  fc.record({
    t: fc.constant("skill" as const),
    name: fc.constantFrom("a", "b", "c"),
    body: fc.constantFrom("body one", "body two"),
  }),
  fc.record({ t: fc.constant("unskill" as const), name: fc.constantFrom("a", "b", "c") }),
  fc.record({ t: fc.constant("expert" as const), name: fc.constantFrom(null, "db", "sec") }),
  fc.record({ t: fc.constant("mode" as const), mode: fc.constantFrom("craft", "plan", "ask") }),
  fc.record({
    t: fc.constant("connector" as const),
    name: fc.constantFrom("github", "slack"),
    on: fc.boolean(),
  }),
  fc.record({ t: fc.constant("identity" as const), text: fc.constantFrom("Acme.", "Globex.") }),
  fc.record({
    t: fc.constant("memory" as const),
    ids: fc.uniqueArray(fc.integer({ min: 0, max: 5 }), { maxLength: 4 }),
  }),
  fc.record({ t: fc.constant("clear" as const) }),
  fc.record({ t: fc.constant("user" as const), scope: fc.constantFrom("u1", "u2") }),
  fc.record({ t: fc.constant("now" as const) }),
);

const POOL = [0, 1, 2, 3, 4, 5].map((i) =>
  candidate(`m${i}`, `memory number ${i} text`, i % 2 === 0 ? "u1" : "u2", {
    score: 0.55 + i * 0.07,
    sourceRank: i + 1,
  }),
);

describe("incremental reassembly equals assembly from scratch", () => {
  it("for random event sequences", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(evArb, { maxLength: 12 }), async (events) => {
        const { session } = testSession();
        let memory: number[] | null = null;
        let minute = 0;
        const now = () => `2026-11-30T09:${String(minute).padStart(2, "0")}:00Z`;
        for (const e of events) {
          if (e.t === "skill") session.loadSkill(e.name, e.body);
          else if (e.t === "unskill") session.unloadSkill(e.name);
          else if (e.t === "expert") session.switchExpert(e.name);
          else if (e.t === "mode") session.setWorkingMode(e.mode);
          else if (e.t === "connector") session.setConnector(e.name, e.on);
          else if (e.t === "identity") session.setIdentity(e.text);
          else if (e.t === "memory") {
            session.setRecalledMemory(e.ids.map((i) => POOL[i] as (typeof POOL)[number]));
            memory = e.ids;
          } else if (e.t === "clear") {
            session.clearRecalledMemory();
            memory = null;
          } else if (e.t === "user") {
            if (e.scope !== session.current.userScope) memory = null;
            session.setUserScope(e.scope);
          } else minute++;
          const got = await session.assemble({ text: QUERY.text, now: now() });
          // A fresh session (fresh sources) built at the current state.
          const { session: reference } = testSession({
            state: {
              ...session.current,
              skills: new Map(session.current.skills),
              connectors: new Map(session.current.connectors),
            },
          });
          if (memory !== null) {
            reference.setRecalledMemory(memory.map((i) => POOL[i] as (typeof POOL)[number]));
          }
          const want = await reference.assemble({ text: QUERY.text, now: now() });
          expect(got.prompt).toBe(want.prompt);
          expect(JSON.stringify(deterministicView(got.manifest))).toBe(
            JSON.stringify(deterministicView(want.manifest)),
          );
          expect(session.hasMemory).toBe(memory !== null);
        }
      }),
      { numRuns: 60 },
    );
  });
});
