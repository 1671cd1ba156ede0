import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AgentRequestJsonSchema, parseAgentRequestJson } from "../../src/agent/index.js";
import { invalidFromZod } from "../../src/errors/index.js";
import { rejectUnknownFields } from "../../src/text/index.js";
import { conversation } from "../conversation/helpers.js";
import { inject, objectsOf } from "../fixtures/unknown-fields.js";

// What the strict schema over the whole body answers: the reference the fast path of
// parseAgentRequestJson (messages checked by the conversation stage) must equal.
function reference(raw: unknown): string {
  try {
    rejectUnknownFields(AgentRequestJsonSchema, raw);
    const parsed = AgentRequestJsonSchema.safeParse(raw);
    if (!parsed.success) throw invalidFromZod(parsed.error);
    return JSON.stringify({ ok: parsed.data });
  } catch (err) {
    const e = err as { code?: string; path?: unknown };
    return JSON.stringify({ code: e.code, path: e.path ?? null });
  }
}

function fast(raw: unknown): string {
  try {
    // The model is a known one: only the schema's answers are compared.
    return JSON.stringify({ ok: parseAgentRequestJson(raw) });
  } catch (err) {
    const e = err as { code?: string; path?: unknown };
    return JSON.stringify({ code: e.code, path: e.path ?? null });
  }
}

const envelope = {
  provider: "anthropic",
  model: "claude-sonnet-4-6",
  system: { segments: [{ name: "rules", content: "Be brief." }] },
  contextWindow: 200_000,
};

/** Mutations of a valid body: an unknown field somewhere, a bad value, or both. */
const bodies = fc
  .record({
    messages: conversation,
    unknownAt: fc.option(fc.nat(), { nil: null }),
    field: fc.constantFrom("extra", "callid", "txt", "__x"),
    bad: fc.constantFrom(
      null,
      ["provider", "nope"],
      ["contextWindow", -1],
      ["model", ""],
      ["render", { ttl: "2h" }],
      ["messages", "not a list"],
    ),
    badMessage: fc.option(fc.tuple(fc.nat(), fc.constantFrom("role", "id", "content")), {
      nil: null,
    }),
  })
  .map(({ messages, unknownAt, field, bad, badMessage }) => {
    let body: Record<string, unknown> = JSON.parse(JSON.stringify({ ...envelope, messages }));
    if (badMessage !== null && messages.length > 0) {
      const [i, key] = badMessage;
      const m = (body.messages as Record<string, unknown>[])[i % messages.length];
      if (m) m[key] = key === "content" ? [] : 7;
    }
    if (bad !== null) body[bad[0] as string] = bad[1];
    if (unknownAt !== null) {
      const at = objectsOf(body).filter((p) => !p.includes("input"));
      const path = at[unknownAt % at.length] ?? [];
      body = inject(body, path, field) as Record<string, unknown>;
    }
    return body;
  });

describe("parseAgentRequestJson", () => {
  it("answers exactly what the strict schema over the whole body answers", () => {
    fc.assert(
      fc.property(bodies, (body) => {
        expect(fast(body)).toBe(reference(body));
      }),
      { numRuns: 400 },
    );
  });
});
