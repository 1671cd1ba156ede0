/**
 * Recalled memory in the session (docs/session-and-cache.md): stored as candidates and reselected on every
 * reassembly under the current scope and policy; cleared when the query ends or the user
 * scope changes, so nothing leaks into the next query or user.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Assembly } from "../../src/assemble/index.js";
import { InvalidInputError } from "../../src/errors/index.js";
import type { CandidateInput } from "../../src/memory/index.js";
import { candidate, LATER, QUERY, testSession } from "./helpers.js";

const U1 = [
  candidate("m-py", "Prefers Python for scripts.", "u1", { score: 0.95, sourceRank: 1 }),
  candidate("m-tests", "Runs the tests before each commit.", "u1", { score: 0.8, sourceRank: 2 }),
  candidate("m-weak", "Once mentioned dark themes.", "u1", { score: 0.2, sourceRank: 3 }),
];
const U2 = [
  candidate("m-secret", "Vault path kv/acme/prod.", "u2", { score: 0.99, sourceRank: 4 }),
];

const recallLayer = (a: Assembly) => a.manifest.layers.find((l) => l.id === "recall_memory");
const selected = (a: Assembly) => a.memoryPlan?.selectedMemoryIds ?? [];

describe("setRecalledMemory", () => {
  it("selects under the current scope: another scope's candidate is rejected and never shown", async () => {
    const { session } = testSession();
    session.setRecalledMemory([...U1, ...U2]);
    const a = await session.assemble(QUERY);
    expect(selected(a)).toEqual(["m-py", "m-tests"]);
    const reasons = Object.fromEntries(
      (a.manifest.memoryDecisions ?? []).map((d) => [d.memoryId, d.reason]),
    );
    expect(reasons).toEqual({
      "m-py": "selected",
      "m-tests": "selected",
      "m-weak": "low_confidence",
      "m-secret": "scope_mismatch",
    });
    expect(a.prompt).toContain("Prefers Python for scripts.");
    expect(a.prompt).not.toContain("kv/acme/prod");
    expect(recallLayer(a)?.status).toBe("included");
    expect(recallLayer(a)?.sourceRefs).toEqual(["memory:m-py", "memory:m-tests"]);
    expect(session.memoryPlan).toBe(a.memoryPlan);
  });

  it("stores candidates, not a rendering: a later mutation of the caller's objects changes nothing", async () => {
    const { session } = testSession();
    const mine: CandidateInput[] = U1.map((c) => ({ ...c, provenance: { ...c.provenance } }));
    session.setRecalledMemory(mine);
    (mine[0] as CandidateInput).text = "Mutated after install.";
    mine.push(candidate("m-late", "Pushed after install.", "u1"));
    const a = await session.assemble(QUERY);
    expect(a.prompt).toContain("Prefers Python for scripts.");
    expect(a.prompt).not.toContain("Mutated");
    expect(a.prompt).not.toContain("Pushed after install");
  });

  it("reselects on every reassembly (a later clock, another event) from the stored candidates", async () => {
    const { session } = testSession();
    session.setRecalledMemory(U1);
    const a = await session.assemble(QUERY);
    session.loadSkill("sql-review", "Check locks.");
    const b = await session.assemble({ ...QUERY, now: LATER });
    expect(session.report.rebuilt).toEqual(["skills"]);
    expect(b.memoryPlan).not.toBe(a.memoryPlan);
    expect(selected(b)).toEqual(selected(a));
    expect(b.manifest.memoryDecisions).toEqual(a.manifest.memoryDecisions);
  });

  it("applies the given policy on every reassembly while the memory is installed", async () => {
    const { session } = testSession();
    session.setRecalledMemory(U1, { policy: { topK: 1 } });
    const a = await session.assemble(QUERY);
    expect(selected(a)).toEqual(["m-py"]);
    const tests = a.manifest.memoryDecisions?.find((d) => d.memoryId === "m-tests");
    expect(tests?.reason).toBe("top_k_reached");
    session.setWorkingMode("plan");
    const b = await session.assemble(QUERY);
    expect(selected(b)).toEqual(["m-py"]);

    session.setRecalledMemory(U1, { policy: { minScore: 0.9 } });
    const c = await session.assemble(QUERY);
    expect(selected(c)).toEqual(["m-py"]);
    expect(c.manifest.memoryDecisions?.find((d) => d.memoryId === "m-tests")?.reason).toBe(
      "low_confidence",
    );

    session.setRecalledMemory(U1, { policy: { minScore: 0.1, maxChars: null } });
    const d = await session.assemble(QUERY);
    // No schema was given: the docs/memory-selection.md default topK 5 holds for the fields not given.
    expect(selected(d)).toEqual(["m-py", "m-tests", "m-weak"]);

    session.setRecalledMemory(U1); // no policy: the spec 02 defaults again
    const e = await session.assemble(QUERY);
    expect(selected(e)).toEqual(["m-py", "m-tests"]);
    expect(e.manifest.memoryDecisions?.find((x) => x.memoryId === "m-weak")?.reason).toBe(
      "low_confidence",
    );
  });

  it("rejects invalid candidates and policies with the field path", () => {
    const { session } = testSession();
    const bad = [{ ...U1[0], score: 1.5 }] as CandidateInput[];
    expect(() => session.setRecalledMemory(bad)).toThrow(InvalidInputError);
    expect(() => session.setRecalledMemory(bad)).toThrow(
      expect.objectContaining({ path: "candidates[0].score" }),
    );
    expect(() =>
      session.setRecalledMemory([
        U1[0] as CandidateInput,
        { ...(U1[1] as CandidateInput), memoryId: "m-py" },
      ]),
    ).toThrow(expect.objectContaining({ path: "candidates[1].memoryId" }));
    expect(() => session.setRecalledMemory(U1, { policy: { minScore: 2 } })).toThrow(
      expect.objectContaining({ code: "invalid_input", path: "policy.minScore" }),
    );
    expect(() => session.setRecalledMemory(U1, { policy: { topK: 0 } })).toThrow(
      expect.objectContaining({ code: "invalid_input", path: "policy.topK" }),
    );
    expect(session.hasMemory).toBe(false);
  });
});

describe("clearing memory", () => {
  it.each([
    [
      "clearRecalledMemory()",
      (s: ReturnType<typeof testSession>["session"]) => s.clearRecalledMemory(),
    ],
    ["endQuery()", (s: ReturnType<typeof testSession>["session"]) => s.endQuery()],
    [
      "setUserScope(another)",
      (s: ReturnType<typeof testSession>["session"]) => s.setUserScope("u2"),
    ],
  ])("%s makes the memory layer inactive", async (_name, clear) => {
    const { session } = testSession();
    session.setRecalledMemory(U1);
    const a = await session.assemble(QUERY);
    expect(a.prompt).toContain("Prefers Python");
    clear(session);
    expect(session.hasMemory).toBe(false);
    const b = await session.assemble(QUERY);
    expect(session.report.reused).toBe(false);
    expect(session.report.rebuilt).toEqual([]);
    expect(b.memoryPlan).toBeNull();
    expect(session.memoryPlan).toBeNull();
    expect(b.manifest.memoryDecisions).toBeNull();
    expect(recallLayer(b)?.status).toBe("inactive");
    for (const c of U1) {
      expect(b.prompt).not.toContain(c.text);
      expect(JSON.stringify(b.manifest)).not.toContain(c.memoryId);
    }
  });

  it("a user-scope switch also reaches the sources: they are asked with the new scope", async () => {
    const scopes: string[] = [];
    const { session } = testSession({
      sources: [
        {
          id: "probe",
          supports: (k) => k === "profile",
          fetch: (_slot, q) => {
            scopes.push(q.userScope);
            return [{ id: "p", text: `profile of ${q.userScope}`, category: "identity" }];
          },
        },
      ],
    });
    await session.assemble(QUERY);
    session.setUserScope("  u2 ");
    const b = await session.assemble(QUERY);
    expect(scopes).toEqual(["u1", "u2"]);
    expect(session.current.userScope).toBe("u2");
    expect(b.prompt).toContain("profile of u2");
    expect(b.prompt).not.toContain("profile of u1");
  });
});

// ---------------------------------------------------------------------------------------
// No memory of scope A ever reaches a prompt or manifest once the user is B.

const textArb = fc.stringMatching(/^[a-z]{3,12}$/);
const memArb = (scope: "A" | "B") =>
  fc
    .uniqueArray(
      fc.record({
        n: fc.integer({ min: 0, max: 999 }),
        word: textArb,
        score: fc.double({ min: 0, max: 1, noNaN: true }),
        rank: fc.integer({ min: 1, max: 20 }),
        day: fc.integer({ min: 1, max: 29 }),
        conflict: fc.option(fc.constantFrom("pref:lang", "pref:editor"), { nil: null }),
        authority: fc.option(
          fc.constantFrom("current_turn", "workspace_override", "user_default"),
          {
            nil: undefined,
          },
        ),
      }),
      { selector: (r) => r.n, maxLength: 8 },
    )
    .map((rows) =>
      rows.map((r) =>
        candidate(
          `${scope.toLowerCase()}mem${r.n}`,
          `${scope}SECRET${r.n} ${r.word}`,
          `user-${scope}`,
          {
            score: r.score,
            sourceRank: r.rank,
            provenance: {
              sourceId: `s${r.n}`,
              sourceType: "chat",
              title: "t",
              capturedAt: `2026-11-${String(r.day).padStart(2, "0")}T09:00:00Z`,
            },
            conflictKey: r.conflict,
            ...(r.authority !== undefined ? { authority: r.authority } : {}),
          },
        ),
      ),
    );

function leaksOf(a: Assembly, foreign: readonly CandidateInput[]): string[] {
  const haystack = `${a.prompt}\n${JSON.stringify(a.manifest)}\n${JSON.stringify(a.memoryPlan)}`;
  return foreign.flatMap((c) => [c.memoryId, c.text].filter((needle) => haystack.includes(needle)));
}

describe("scope isolation (property)", () => {
  it("after switching A → B no memory id or text of A appears, even once B's memory is installed", async () => {
    await fc.assert(
      fc.asyncProperty(
        memArb("A"),
        memArb("B"),
        fc.boolean(),
        fc.constantFrom("en", "zh-CN", "tagged"),
        async (memA, memB, reinstall, renderer) => {
          const { session } = testSession({
            state: {
              userScope: "user-A",
              mode: "chat",
              workingMode: "craft",
              expert: null,
              identity: "You work for Acme.",
            },
            assemble: { renderer, budgetChars: null },
          });
          session.setRecalledMemory(memA);
          const before = await session.assemble(QUERY);
          // Under A, B's memory (none installed) is absent; A's selection is A's only.
          for (const id of before.memoryPlan?.selectedMemoryIds ?? []) {
            expect(id.startsWith("amem")).toBe(true);
          }
          session.setUserScope("user-B");
          const afterSwitch = await session.assemble(QUERY);
          expect(leaksOf(afterSwitch, memA)).toEqual([]);
          expect(afterSwitch.memoryPlan).toBeNull();
          if (reinstall) {
            session.setRecalledMemory(memB);
            const withB = await session.assemble({ ...QUERY, now: LATER });
            expect(leaksOf(withB, memA)).toEqual([]);
            for (const d of withB.manifest.memoryDecisions ?? []) {
              expect(d.memoryId.startsWith("bmem")).toBe(true);
            }
          }
        },
      ),
      { numRuns: 80 },
    );
  });

  it("A's candidates handed to a B session are rejected as scope_mismatch and never rendered", async () => {
    await fc.assert(
      fc.asyncProperty(memArb("A"), memArb("B"), async (memA, memB) => {
        const { session } = testSession({
          state: {
            userScope: "user-B",
            mode: "chat",
            workingMode: "craft",
            expert: null,
            identity: "You work for Acme.",
          },
          assemble: { budgetChars: null },
        });
        session.setRecalledMemory([...memA, ...memB]);
        const a = await session.assemble(QUERY);
        for (const c of memA) expect(a.prompt).not.toContain(c.text);
        for (const d of a.manifest.memoryDecisions ?? []) {
          if (d.memoryId.startsWith("amem")) expect(d.reason).toBe("scope_mismatch");
        }
        const layer = recallLayer(a);
        for (const ref of layer?.sourceRefs ?? []) expect(ref.startsWith("memory:bmem")).toBe(true);
      }),
      { numRuns: 80 },
    );
  });
});
