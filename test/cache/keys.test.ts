import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type CacheKeys,
  cacheBreak,
  computeCacheKeys,
  HashMemo,
  promptVersion,
  SHORT_HASH_LENGTH,
  sha256Hex,
  shortHash,
  versionId,
} from "../../src/cache/index.js";
import { InvalidInputError, PromptBudgetError } from "../../src/errors/index.js";
import {
  type PlanPromptRequest,
  type PromptPlan,
  planPrompt,
  type SegmentInput,
} from "../../src/plan/index.js";
import { tieredRequest, trickyText } from "../plan/arbitraries.js";

const HEX16 = /^[0-9a-f]{16}$/;
const HEX64 = /^[0-9a-f]{64}$/;
const MARK = "\n\n<!-- cache-boundary -->\n\n";

interface Turn {
  rules?: string;
  project?: string;
  memory?: string | null;
}

/** One turn of an agent: static rules + tools, session project context, dynamic memory. */
function turn({ rules = "Be brief.", project = "Repo: acme", memory = "Likes tabs." }: Turn = {}) {
  return planPrompt({
    segments: [
      { name: "rules", content: rules, cacheTier: "static", required: true, priority: 0 },
      { name: "tools", content: "Tools: read_file", cacheTier: "static", priority: 1 },
      { name: "project", content: project, cacheTier: "session" },
      { name: "memory", content: memory, cacheTier: "dynamic" },
      { name: "mode", content: "Mode: craft", required: true }, // tierless: dynamic
    ],
  });
}

describe("hashing", () => {
  it("is SHA-256 of UTF-8 as lowercase hex, in one helper", () => {
    expect(sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(sha256Hex("abc")).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
    expect(sha256Hex("世界🚀")).toBe(
      createHash("sha256").update(Buffer.from("世界🚀", "utf8")).digest("hex"),
    );
    expect(SHORT_HASH_LENGTH).toBe(16);
    expect(shortHash("abc")).toBe("ba7816bf8f01cfea");
  });

  it("promptVersion is the full 64-hex SHA-256 of the prompt", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), (text) => {
        expect(promptVersion(text)).toMatch(HEX64);
        expect(promptVersion(text)).toBe(sha256Hex(text));
      }),
    );
    expect(promptVersion("Be brief.")).toBe(
      "213c22ed7234eb11116e1e88f314c73cb3a019b5c87fe224b6ce5665bd9ec50e",
    );
  });

  it("versionId is the first 16 hex of the SHA-256 of a layer's content", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), (text) => {
        expect(versionId(text)).toMatch(HEX16);
        expect(promptVersion(text).startsWith(versionId(text))).toBe(true);
      }),
    );
    expect(versionId("")).toBe("e3b0c44298fc1c14");
  });
});

describe("computeCacheKeys", () => {
  it("hashes, for each tier, the prompt prefix up to the end of its content", () => {
    const plan = turn();
    const keys = computeCacheKeys(plan);
    expect(Object.keys(keys)).toEqual(["static", "session", "dynamic"]);
    for (const key of Object.values(keys)) expect(key).toMatch(HEX16);
    const [st, se, dy] = plan.tiers;
    expect(plan.prompt.slice(0, st!.end)).toBe("Be brief.\n\n---\n\nTools: read_file");
    expect(keys.static).toBe(shortHash("Be brief.\n\n---\n\nTools: read_file"));
    // Earlier markers are part of the prefix; the marker after the tier is not.
    expect(keys.session).toBe(shortHash(`Be brief.\n\n---\n\nTools: read_file${MARK}Repo: acme`));
    expect(keys.session).toBe(shortHash(plan.prompt.slice(0, se!.end)));
    expect(keys.dynamic).toBe(shortHash(plan.prompt));
    expect(dy!.end).toBe(plan.prompt.length);
  });

  it("gives null for a tier without content, and for every tier of an untiered plan", () => {
    const noSession = computeCacheKeys(turn({ project: "" }));
    expect(noSession.session).toBeNull();
    expect(noSession.static).toMatch(HEX16);
    expect(noSession.dynamic).toMatch(HEX16);
    const untiered = planPrompt({ segments: [{ name: "a", content: "A" }] });
    expect(computeCacheKeys(untiered)).toEqual({ static: null, session: null, dynamic: null });
    expect(computeCacheKeys(planPrompt({ segments: [] }))).toEqual({
      static: null,
      session: null,
      dynamic: null,
    });
  });

  it("rejects tiers that do not lie inside the prompt", () => {
    const plan = turn();
    const edited = { ...plan, prompt: plan.prompt.slice(0, 5) };
    let err: unknown;
    try {
      computeCacheKeys(edited);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as InvalidInputError).path).toBe("tiers[0]");
  });

  it("is stable when only dynamic content changes", () => {
    const before = computeCacheKeys(turn());
    const after = computeCacheKeys(turn({ memory: "Prefers spaces now." }));
    expect(after.static).toBe(before.static);
    expect(after.session).toBe(before.session);
    expect(after.dynamic).not.toBe(before.dynamic);
  });

  it("keeps the static key when session content changes, and changes every later key", () => {
    const before = computeCacheKeys(turn());
    const after = computeCacheKeys(turn({ project: "Repo: acme/billing" }));
    expect(after.static).toBe(before.static);
    expect(after.session).not.toBe(before.session);
    expect(after.dynamic).not.toBe(before.dynamic);
  });

  it("changes every key when static content changes", () => {
    const before = computeCacheKeys(turn());
    const after = computeCacheKeys(turn({ rules: "Be very brief." }));
    expect(after.static).not.toBe(before.static);
    expect(after.session).not.toBe(before.session);
    expect(after.dynamic).not.toBe(before.dynamic);
  });
});

describe("cacheBreak", () => {
  it("reports the first tier whose key changed, or null", () => {
    const base = turn();
    expect(cacheBreak(base, turn())).toBeNull();
    expect(cacheBreak(base, turn({ memory: "New fact." }))).toBe("dynamic");
    expect(cacheBreak(base, turn({ memory: null }))).toBe("dynamic");
    expect(cacheBreak(base, turn({ project: "Repo: other" }))).toBe("session");
    expect(cacheBreak(base, turn({ rules: "Be kind." }))).toBe("static");
    expect(cacheBreak(turn({ project: "" }), base)).toBe("session"); // a tier appeared
  });

  it("accepts plans, cache-key objects, or one of each", () => {
    const a: CacheKeys = { static: "a", session: "b", dynamic: "c" };
    expect(cacheBreak(a, { ...a })).toBeNull();
    expect(cacheBreak(a, { ...a, dynamic: "x" })).toBe("dynamic");
    expect(cacheBreak(a, { static: "a", session: "x", dynamic: "y" })).toBe("session");
    expect(cacheBreak(a, { ...a, static: null })).toBe("static");
    const plan = turn();
    const keys = computeCacheKeys(plan);
    expect(cacheBreak(plan, keys)).toBeNull();
    expect(cacheBreak(keys, turn({ memory: "x" }))).toBe("dynamic");
  });
});

describe("cache keys under planning (property)", () => {
  // A growing optional dynamic segment at the same budget: the planner never lets it
  // evict static or session content, so the static and session keys never move.
  it("dynamic growth at the same budget keeps the static and session keys", () => {
    fc.assert(
      fc.property(
        tieredRequest,
        fc.oneof(fc.constant(null), trickyText),
        trickyText,
        (req, before, extra) => {
          const withGrow = (content: string | null): PlanPromptRequest => {
            const seg: SegmentInput = { name: "grow", content, cacheTier: "dynamic" };
            return { ...req, segments: [...req.segments, seg] };
          };
          let a: PromptPlan;
          let b: PromptPlan;
          try {
            a = planPrompt(withGrow(before));
            b = planPrompt(withGrow((before ?? "") + extra));
          } catch (err) {
            expect(err).toBeInstanceOf(PromptBudgetError);
            return;
          }
          const ka = computeCacheKeys(a);
          const kb = computeCacheKeys(b);
          expect(kb.static).toBe(ka.static);
          expect(kb.session).toBe(ka.session);
          expect([null, "dynamic"]).toContain(cacheBreak(a, b));
          for (const k of [...Object.values(ka), ...Object.values(kb)]) {
            if (k !== null) expect(k).toMatch(HEX16);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("HashMemo", () => {
  it("gives the hash of the text, remembered or not, across generations (property)", () => {
    const text = fc.oneof(
      fc.string({ unit: "binary", maxLength: 40 }),
      fc.constantFrom("", "\ud800 lone", "é"),
      // Past a generation's ~1 M characters: the memo turns over while it is used.
      fc.nat({ max: 3 }).map((n) => `${"x".repeat(400_000)}${n}`),
    );
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 30 }), (texts) => {
        const memo = new HashMemo();
        for (const t of [...texts, ...texts.reverse()]) {
          expect(memo.sha256Hex(t)).toBe(sha256Hex(t));
          expect(versionId(t, memo)).toBe(versionId(t));
          expect(promptVersion(t, memo)).toBe(promptVersion(t));
        }
      }),
      { numRuns: 60 },
    );
  });

  it("keys a plan the same with a memo as without", () => {
    const memo = new HashMemo();
    const plan = planPrompt({
      segments: [
        { name: "rules", content: "Be brief.", cacheTier: "static" },
        { name: "user", content: "Likes tabs.", cacheTier: "session" },
        { name: "memory", content: "Saw a bug.", cacheTier: "dynamic" },
      ],
    });
    for (let i = 0; i < 2; i++)
      expect(computeCacheKeys(plan, memo)).toEqual(computeCacheKeys(plan));
  });
});
