/**
 * Per-turn freezing (docs/assembler.md, docs/session-and-cache.md): `beginTurn` assembles the prefix once and freezes it;
 * task observations and tool calls recorded during the turn do not change the frozen
 * prefix and appear in the next turn's prefix.
 */
import { describe, expect, it } from "vitest";
import { createSession } from "../../src/assemble/index.js";
import {
  constraintsSource,
  plannerSource,
  TaskMemoryBuffer,
  ToolState,
  taskMemorySource,
  toolStateSource,
} from "../../src/sources/index.js";
import { counting, testSegments } from "./helpers.js";

const T1 = { text: "fix the build", now: "2026-11-30T09:00:00Z" };
const T2 = { text: "fix the build", now: "2026-11-30T09:01:00Z" };

function loop() {
  const buffer = new TaskMemoryBuffer(8);
  buffer.add({ text: "tests fail in db/migrate", createdAt: "2026-11-30T08:59:00Z" });
  const tools = new ToolState([
    { name: "run", description: "run a command", requiredArgs: ["command"] },
  ]);
  const taskSource = counting(taskMemorySource(buffer));
  const session = createSession({
    state: {
      userScope: "u1",
      mode: "react",
      workingMode: "craft",
      expert: null,
      identity: "Acme.",
    },
    segments: testSegments(),
    sources: [
      constraintsSource({ rules: [{ id: "no-rm", level: "forbid", text: "no rm -rf" }] }),
      plannerSource(() => ({
        taskId: "T-1",
        status: "in_progress",
        phase: "fix",
        done: 1,
        total: 3,
      })),
      taskSource,
      toolStateSource(tools),
    ],
  });
  return { session, buffer, tools, taskSource };
}

describe("per-turn freezing", () => {
  it("turnPrefix is null before the first turn", () => {
    expect(loop().session.turnPrefix).toBeNull();
  });

  it("buffers updated during a turn do not change the frozen prefix; the next turn shows them", async () => {
    const { session, buffer, tools, taskSource } = loop();
    const turn1 = await session.beginTurn(T1);
    expect(session.turnPrefix).toBe(turn1);
    const frozenPrompt = turn1.prompt;
    const fetches = taskSource.fetches.get("task_memory");
    expect(fetches).toBe(1);

    // During the turn: a step observes something and calls a tool.
    buffer.add({ text: "migration 0042 locks invoices", createdAt: "2026-11-30T09:00:30Z" });
    tools.recordCall({
      tool: "run",
      ok: false,
      summary: "npm test: 3 failed",
      at: "2026-11-30T09:00:40Z",
    });

    expect(session.turnPrefix).toBe(turn1);
    expect(session.turnPrefix?.prompt).toBe(frozenPrompt);
    expect(frozenPrompt).not.toContain("migration 0042 locks invoices");
    expect(frozenPrompt).not.toContain("npm test: 3 failed");
    // Asking again mid-turn with the turn's query returns the frozen prefix, unfetched.
    expect(await session.assemble(T1)).toBe(turn1);
    expect(taskSource.fetches.get("task_memory")).toBe(1);

    const turn2 = await session.beginTurn(T2);
    expect(turn2).not.toBe(turn1);
    expect(session.turnPrefix).toBe(turn2);
    expect(turn2.prompt).toContain("migration 0042 locks invoices");
    expect(turn2.prompt).toContain("run → failed: npm test: 3 failed");
    expect(turn2.prompt).toContain("tests fail in db/migrate");
    // The old turn's object is untouched.
    expect(turn1.prompt).toBe(frozenPrompt);
  });

  it("a new turn refetches the slots even with the same query and clock, and rebuilds no segment", async () => {
    const { session, buffer, taskSource } = loop();
    const turn1 = await session.beginTurn(T1);
    const calls = new Map(session.builderCalls);
    buffer.add({ text: "found the lock", createdAt: "2026-11-30T09:00:10Z" });
    const turn2 = await session.beginTurn(T1);
    expect(session.report).toEqual({ reused: false, rebuilt: [], refetched: true });
    expect(session.builderCalls).toEqual(calls);
    expect(taskSource.fetches.get("task_memory")).toBe(2);
    expect(turn1.prompt).not.toContain("found the lock");
    expect(turn2.prompt).toContain("found the lock");
  });

  it("an event during a turn rebuilds its segment for the next turn only", async () => {
    const { session } = loop();
    const turn1 = await session.beginTurn(T1);
    session.loadSkill("sql-review", "Check locks.");
    expect(session.turnPrefix).toBe(turn1);
    expect(turn1.prompt).not.toContain("Check locks.");
    const turn2 = await session.beginTurn(T2);
    expect(session.report.rebuilt).toEqual(["skills"]);
    expect(turn2.prompt).toContain("Skill sql-review: Check locks.");
  });
});
