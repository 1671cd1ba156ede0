/**
 * The agent defaults wired together: the pressure policy sized from the window (off by
 * default, on when the caller sets a trigger), the digest of what left the window at its
 * start (stable while the window holds), and explicit fields overriding the defaults.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  AGENT_KEEP_RECENT_TOOL_RESULTS,
  AGENT_WINDOW_SHARES,
  agentDefaults,
  planRequest,
  type RequestInput,
  WINDOW_DIGEST_HEADER,
  type WindowShare,
} from "../../src/agent/index.js";
import type { MessageInput } from "../../src/conversation/index.js";
import { getTokenCounter } from "../../src/tokens/index.js";
import { MODEL, stableSystem, words } from "../assemble/wire-fixtures.js";

const counter = getTokenCounter("claude_estimate");

/** `turns` turns of ask, one tool round quoting a build id, answer; the requests before each call. */
function session(turns: number): MessageInput[] {
  const out: MessageInput[] = [];
  for (let i = 0; i < turns; i++) {
    out.push(
      {
        id: `u${i}`,
        role: "user",
        content: [{ type: "text", text: `ask ${i} ${words(30, "q")}` }],
      },
      {
        id: `a${i}`,
        role: "assistant",
        content: [
          { type: "tool_call", callId: `c${i}`, name: "bash", input: { command: `make ${i}` } },
        ],
      },
      {
        id: `t${i}`,
        role: "tool",
        content: [
          {
            type: "tool_result",
            callId: `c${i}`,
            output: `${words(400, `o${i}_`)}\nnote: build id b-${(0xabc000 + i).toString(16)}`,
          },
        ],
      },
      { id: `r${i}`, role: "assistant", content: [{ type: "text", text: `done ${i}` }] },
    );
  }
  return out;
}

describe("agentDefaults", () => {
  it("includes the pressure policy sized from the window, on at 0.8 of the room", () => {
    for (const w of [64_000, 200_000]) {
      const d = agentDefaults(w);
      expect(d.policy).toMatchObject({
        clearTrigger: 0.8,
        clearAtLeastTokens: d.windowStepTokens,
        keepRecentToolResults: AGENT_KEEP_RECENT_TOOL_RESULTS,
      });
      expect(d.digestTokens).toBe(w / 32);
    }
  });

  it("the policy of the defaults is one the planner takes, and clearTrigger null turns clearing off", () => {
    const d = agentDefaults(12_000);
    const messages = session(30);
    const base = {
      provider: "anthropic" as const,
      model: MODEL,
      system: stableSystem("tool_state", "state"),
      messages,
      contextWindow: 12_000,
      tokenizer: counter,
      windowStepTokens: null,
    };
    const off = planRequest({ ...base, policy: { ...d.policy, clearTrigger: null } });
    expect(off.conversation.clearBeforeTurn).toBeNull();
    const on = planRequest({
      ...base,
      policy: { ...d.policy, clearTrigger: 0.8, clearAtLeastTokens: 500 },
    });
    expect(on.conversation.clearBeforeTurn).not.toBeNull();
  });
});

describe("the digest of what left the window", () => {
  const d = agentDefaults(12_000);
  const plan = (
    messages: MessageInput[],
    digestTokens?: number,
    extra: Partial<RequestInput<"anthropic">> = {},
  ) =>
    planRequest({
      provider: "anthropic",
      model: MODEL,
      system: stableSystem("tool_state", "state"),
      messages,
      contextWindow: 12_000,
      tokenizer: counter,
      responseReserve: d.responseReserve,
      policy: d.policy,
      windowStepTokens: d.windowStepTokens,
      ...(digestTokens !== undefined ? { digestTokens } : {}),
      ...extra,
    });

  it("opens the window's first (user) message, quotes the dropped ids, and fits the window", () => {
    const r = plan(session(40), d.digestTokens);
    const first = r.conversation.messages[0];
    expect(first?.role).toBe("user");
    const text = first?.content[0]?.type === "text" ? first.content[0].text : "";
    expect(text.startsWith(WINDOW_DIGEST_HEADER)).toBe(true);
    expect(text).toMatch(/note: build id b-abc0[0-9a-f]{2}/);
    expect(r.conversation.usedTokens).toBeLessThanOrEqual(r.budget.messagesBudget);
    // The digest only ever quotes messages that left the window.
    const dropped = new Set(r.conversation.droppedMessageIds);
    for (const m of /b-abc0([0-9a-f]{2})/g[Symbol.matchAll](text)) {
      expect(dropped.has(`t${Number.parseInt(m[1] as string, 16)}`)).toBe(true);
    }
  });

  it("is byte-identical across requests while the window start holds", () => {
    const all = session(40);
    const byStart = new Map<string, unknown>();
    let shared = 0;
    for (let n = 120; n <= 160; n += 4) {
      const r = plan(all.slice(0, n), d.digestTokens);
      const first = r.conversation.messages[0];
      const seen = byStart.get(r.conversation.firstKeptId);
      if (seen === undefined) byStart.set(r.conversation.firstKeptId, first);
      else {
        shared += 1;
        expect(first).toEqual(seen);
      }
    }
    expect(shared).toBeGreaterThan(0);
  });

  it("reaches back until the lines quoting ids fill it: the newest dropped ids, far past the last move", () => {
    // 120 turns whose results quote one build id among lines that quote nothing: far more
    // dropped history than 16 digests' worth (the reach before it stopped on the ids).
    const DIGEST = 1000;
    const filler = Array.from({ length: 60 }, () => "the parser reads the next token").join("\n");
    const messages = session(120).map((m) =>
      m.role !== "tool"
        ? m
        : {
            ...m,
            content: m.content.map((p) =>
              p.type === "tool_result"
                ? { ...p, output: `${filler}\n${p.output.split("\n").at(-1)}\n${filler}` }
                : p,
            ),
          },
    );
    const r = plan(messages, DIGEST);
    const first = r.conversation.messages[0];
    const text = first?.content[0]?.type === "text" ? first.content[0].text : "";
    const quoted = [...text.matchAll(/b-abc0([0-9a-f]{2})/g)].map((m) =>
      Number.parseInt(m[1] as string, 16),
    );
    const start = Number((r.conversation.firstKeptId ?? "u0").slice(1));
    // Turns 16 digests' worth of history holds (the reach before it stopped on the ids).
    const covered = (16 * DIGEST) / counter.count(`${filler}\n${filler}`);
    // The turns just before the start are quoted, and ids from much further back (every
    // id line the digest's budget holds, newest first).
    expect(quoted).toContain(start - 1);
    expect(quoted.length).toBeGreaterThan(2 * covered);
    for (const i of quoted) expect(i).toBeLessThan(start);
    expect(r.conversation.usedTokens).toBeLessThanOrEqual(r.budget.messagesBudget);
  });

  it("is absent without digestTokens", () => {
    const none = plan(session(40));
    const c = none.conversation.messages[0]?.content[0];
    expect(c?.type === "text" && c.text.startsWith(WINDOW_DIGEST_HEADER)).toBe(false);
  });

  it("opens a window held by an explicit anchor too, the same while the anchor holds", () => {
    const all = session(40);
    const opens = (r: ReturnType<typeof plan>) => {
      const c = r.conversation.messages[0]?.content[0];
      return c?.type === "text" && c.text.startsWith(WINDOW_DIGEST_HEADER) ? c.text : null;
    };
    let prev = plan(all.slice(0, 120), d.digestTokens);
    let held = 0;
    for (let n = 124; n <= 160; n += 4) {
      const policy = {
        ...d.policy,
        anchor: prev.conversation.firstKeptId,
        clearBeforeTurn: prev.conversation.clearBeforeTurn,
      };
      const r = plan(all.slice(0, n), d.digestTokens, { policy });
      expect(r.conversation.usedTokens).toBeLessThanOrEqual(r.budget.messagesBudget);
      // The digest is there whenever history was dropped before the start, and it is
      // byte-identical while the anchor holds.
      if (r.conversation.droppedMessageIds.length > 0) expect(opens(r)).not.toBeNull();
      if (r.conversation.firstKeptId === prev.conversation.firstKeptId && opens(prev) !== null) {
        held += 1;
        expect(opens(r)).toBe(opens(prev));
      }
      prev = r;
    }
    expect(held).toBeGreaterThan(0);
  });
});

describe("AGENT_WINDOW_SHARES", () => {
  it("is a declared table: a share in (0, 1], minimum ≤ maximum, one reason per row", () => {
    for (const [name, row] of Object.entries(AGENT_WINDOW_SHARES)) {
      const [n, d] = row.share;
      expect(n > 0 && n <= d, name).toBe(true);
      expect(row.minimum <= row.maximum, name).toBe(true);
      expect(row.reason.length, name).toBeGreaterThan(20);
    }
  });

  it("is what agentDefaults applies: each budget the floor of its share, clamped (property)", () => {
    const apply = (w: number, r: WindowShare) =>
      Math.min(r.maximum, Math.max(r.minimum, Math.floor((w * r.share[0]) / r.share[1])));
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3_000_000 }), (w) => {
        const d = agentDefaults(w);
        const s = AGENT_WINDOW_SHARES;
        expect(d.responseReserve).toBe(Math.min(apply(w, s.responseReserve), Math.floor(w / 2)));
        expect(d.slots.system).toBe(apply(w, s.system));
        expect(d.policy.toolResultMaxTokens).toBe(apply(w, s.toolResultMaxTokens));
        expect(d.digestTokens).toBe(apply(w, s.digestTokens));
        expect(d.policy.clearBatchTokens).toBe(apply(w, s.clearBatch));
        expect(d.slots.recall).toBe(apply(w, s.recall));
        expect(d.slots.kb).toBe(apply(w, s.kb));
        expect(d.slots.perSlot).toBe(apply(w, s.perSlot));
        // The same figures as the hand-written shares before the table (w / N, floored).
        expect(d.slots.kb).toBe(Math.min(24_000, Math.max(300, Math.floor(w / 33))));
        expect(d.digestTokens).toBe(Math.min(8000, Math.max(256, Math.floor(w / 32))));
      }),
    );
  });
});
