/**
 * Provider output of docs/session-and-cache.md: request shapes for Anthropic Messages, OpenAI Chat and
 * Responses, and the Vercel AI SDK; breakpoint limits, minimum cacheable lengths, ttl,
 * recalled memory moved to the user role (byte-exact), prompt_cache_key stability, the
 * token report, and the CLI's `--format anthropic|openai`. Shapes are also checked
 * against the official SDK types at compile time (`satisfies`).
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import type { generateText, ModelMessage } from "ai";
import fc from "fast-check";
import type OpenAI from "openai";
import { afterAll, describe, expect, it } from "vitest";
import { computeCacheKeys } from "../../src/cache/index.js";
import { InvalidInputError } from "../../src/errors/index.js";
import {
  type CacheTier,
  DEFAULT_CACHE_BOUNDARY,
  type PromptPlan,
  planPrompt,
  SEGMENT_SEPARATOR,
  type SegmentInput,
} from "../../src/plan/index.js";
import {
  ANTHROPIC_MIN_CACHEABLE_TOKENS,
  minCacheableTokens,
  PROMPT_CACHE_KEY_PREFIX,
  toAiSdkRequest,
  toAnthropicRequest,
  toOpenAIChatRequest,
  toOpenAIResponsesRequest,
} from "../../src/render/index.js";
import { getTokenCounter } from "../../src/tokens/index.js";
import { runCli } from "../cli/run-cli.js";

/** `n` distinct words: exactly `n` tokens under the `estimate` counter. */
const words = (n: number, stem = "w") =>
  Array.from({ length: n }, (_, i) => `${stem}${i}`).join(" ");

const seg = (name: string, content: string, cacheTier: CacheTier, priority = 50): SegmentInput => ({
  name,
  content,
  cacheTier,
  priority,
});

function plan(segments: SegmentInput[], tokenizer = "estimate"): PromptPlan {
  return planPrompt({ budgetChars: null, tokenizer, segments });
}

const RULES = words(1100, "rule");
const PROFILE = words(1100, "prof");
const MEMORY =
  '<recalled_memory user="u1">\n- likes tabs 🚀 (score 0.9)\n- 数据库: sqlite\n</recalled_memory>';

function fullPlan(memory = MEMORY, rules = RULES): PromptPlan {
  return plan([
    seg("rules", rules, "static", 0),
    seg("profile", PROFILE, "session", 4),
    seg("planner", "task T-12 in progress", "dynamic", 1),
    seg("recall_memory", memory, "dynamic", 5),
    seg("tool_state", "run_tests(path)", "dynamic", 3),
  ]);
}

describe("toAnthropicRequest", () => {
  it("renders one system text block per tier, breakpoints on the cached tiers", () => {
    const p = fullPlan();
    const r = toAnthropicRequest(p);
    expect(r.body.system.map((b) => b.text)).toEqual(
      p.tiers.map((t) => p.prompt.slice(t.start, t.end)),
    );
    expect(r.body.system.map((b) => b.type)).toEqual(["text", "text", "text"]);
    expect(r.body.system.map((b) => b.cache_control)).toEqual([
      { type: "ephemeral" },
      { type: "ephemeral" },
      undefined,
    ]);
    expect("cache_control" in (r.body.system[2] as object)).toBe(false);
    // The blocks joined by the boundary marker are the prompt, byte for byte.
    expect(r.body.system.map((b) => b.text).join(DEFAULT_CACHE_BOUNDARY)).toBe(p.prompt);
    expect(r.body.messages).toBeUndefined();
    expect(r.breakpoints).toEqual([
      { tier: "static", tokens: 1100, prefixTokens: 1100 },
      { tier: "session", tokens: 1100, prefixTokens: 2200 },
    ]);
    expect(r.skipped).toEqual([]);
    expect(r.tierTokens).toEqual(
      p.tiers.map((t) => ({ tier: t.tier, names: t.names, chars: t.chars, tokens: t.tokens })),
    );
    expect(r.tokenizer).toBe("estimate");
    expect(r.tokensEstimated).toBe(true);
    expect(r.model).toBe("claude-sonnet-4-6");
    expect(r.minCacheableTokens).toBe(1024);
    expect(r.cacheKeys).toEqual(computeCacheKeys(p));
    expect(r.movedLayers).toEqual([]);
    // Compile-time: the body is a valid Messages API request.
    const body = {
      model: "claude-sonnet-4-6",
      max_tokens: 16,
      ...r.body,
      messages: r.body.messages ?? [{ role: "user", content: "hi" }],
    } satisfies Anthropic.MessageCreateParamsNonStreaming;
    expect(body.system).toHaveLength(3);
  });

  it("takes an assembly ({prompt, segmentPlan, manifest}) and cross-checks it", () => {
    const p = fullPlan();
    const assembly = {
      prompt: p.prompt,
      segmentPlan: p,
      manifest: { cacheKeys: computeCacheKeys(p) },
    };
    expect(toAnthropicRequest(assembly).body).toEqual(toAnthropicRequest(p).body);
    expect(() => toAnthropicRequest({ ...assembly, prompt: `${p.prompt}x` })).toThrow(
      InvalidInputError,
    );
    const stale = {
      ...assembly,
      manifest: { cacheKeys: { ...assembly.manifest.cacheKeys, static: "0" } },
    };
    expect(() => toAnthropicRequest(stale)).toThrow(/manifest\.cacheKeys/);
  });

  it("keeps several segments of one tier in one block, separator included", () => {
    const p = plan([
      seg("a", words(600, "a"), "static", 0),
      seg("b", words(600, "b"), "static", 1),
      seg("c", "dyn", "dynamic"),
    ]);
    const r = toAnthropicRequest(p);
    expect(r.body.system).toHaveLength(2);
    expect(r.body.system[0]?.text).toBe(`${words(600, "a")}${SEGMENT_SEPARATOR}${words(600, "b")}`);
    expect(r.body.system[0]?.cache_control).toEqual({ type: "ephemeral" });
  });

  it('puts ttl "1h" on every breakpoint; "5m" is the default (no ttl field)', () => {
    const p = fullPlan();
    const hour = toAnthropicRequest(p, { ttl: "1h" });
    expect(hour.body.system.map((b) => b.cache_control)).toEqual([
      { type: "ephemeral", ttl: "1h" },
      { type: "ephemeral", ttl: "1h" },
      undefined,
    ]);
    expect(toAnthropicRequest(p, { ttl: "5m" }).body).toEqual(toAnthropicRequest(p).body);
    expect(() => toAnthropicRequest(p, { ttl: "2h" as "1h" })).toThrow(InvalidInputError);
  });

  it("never exceeds 4 breakpoints counting the tools': the later tier loses its own first", () => {
    const p = fullPlan();
    const count = (n: number) => {
      const r = toAnthropicRequest(p, { toolsBreakpoints: n });
      return {
        marked: r.body.system.filter((b) => b.cache_control !== undefined).length,
        tiers: r.breakpoints.map((b) => b.tier),
        skipped: r.skipped.map((s) => [s.tier, s.reason]),
      };
    };
    expect(count(0)).toEqual({ marked: 2, tiers: ["static", "session"], skipped: [] });
    expect(count(2)).toEqual({ marked: 2, tiers: ["static", "session"], skipped: [] });
    expect(count(3)).toEqual({
      marked: 1,
      tiers: ["static"],
      skipped: [["session", "breakpoint_limit"]],
    });
    expect(count(4)).toEqual({
      marked: 0,
      tiers: [],
      skipped: [
        ["static", "breakpoint_limit"],
        ["session", "breakpoint_limit"],
      ],
    });
    for (let n = 0; n <= 4; n++) expect(n + count(n).marked).toBeLessThanOrEqual(4);
    for (const bad of [5, -1, 1.5]) {
      expect(() => toAnthropicRequest(p, { toolsBreakpoints: bad })).toThrow(/toolsBreakpoints/);
    }
  });

  it("gives no breakpoint to a tier whose cached prefix is below the model minimum, and says so", () => {
    const short = fullPlan(MEMORY, "Be brief.");
    const r = toAnthropicRequest(short);
    expect(r.body.system[0]?.cache_control).toBeUndefined();
    expect(r.skipped).toEqual([
      {
        tier: "static",
        reason: "below_min_cacheable_tokens",
        detail:
          "cached prefix through static is 3 tokens (estimate); claude-sonnet-4-6 caches from 1024",
      },
    ]);
    // The session breakpoint caches static + session, which is long enough.
    expect(r.breakpoints).toEqual([{ tier: "session", tokens: 1100, prefixTokens: 1103 }]);
    expect(r.body.system[1]?.cache_control).toEqual({ type: "ephemeral" });

    // Tools precede system in the cached prefix.
    const withTools = toAnthropicRequest(short, { toolsTokens: 1021 });
    expect(withTools.breakpoints.map((b) => b.tier)).toEqual(["static", "session"]);

    // Both tiers short: nothing cached.
    const tiny = plan([seg("rules", "Be brief.", "static"), seg("profile", "Tabs.", "session")]);
    const t = toAnthropicRequest(tiny);
    expect(t.breakpoints).toEqual([]);
    expect(t.skipped.map((s) => [s.tier, s.reason])).toEqual([
      ["static", "below_min_cacheable_tokens"],
      ["session", "below_min_cacheable_tokens"],
    ]);
    expect(t.body.system.every((b) => b.cache_control === undefined)).toBe(true);
    // The minimum can be overridden.
    expect(toAnthropicRequest(tiny, { minCacheableTokens: 0 }).breakpoints).toHaveLength(2);
  });

  it("applies the per-model minimum: 4096 for Haiku 4.5 and Opus 4.5/4.6, 2048 for Haiku 3.x", () => {
    const p = plan([seg("rules", words(2000), "static"), seg("m", "x", "dynamic")]);
    expect(toAnthropicRequest(p, { model: "claude-sonnet-4-5" }).breakpoints).toHaveLength(1);
    expect(toAnthropicRequest(p, { model: "claude-3-5-haiku-latest" }).breakpoints).toHaveLength(0);
    const haiku = toAnthropicRequest(p, { model: "claude-haiku-4-5-20251001" });
    expect(haiku.breakpoints).toEqual([]);
    expect(haiku.minCacheableTokens).toBe(4096);
    expect(haiku.skipped[0]?.detail).toContain("caches from 4096");
  });

  it("keeps the minimum-length table as dated, sourced data", () => {
    expect(ANTHROPIC_MIN_CACHEABLE_TOKENS.asOf).toBe("2026-02-21");
    expect(ANTHROPIC_MIN_CACHEABLE_TOKENS.source).toContain("prompt-caching");
    const cases: [string, number][] = [
      ["claude-opus-4-6", 4096],
      ["claude-opus-4-5-20251101", 4096],
      ["claude-haiku-4-5", 4096],
      ["claude-sonnet-4-6", 1024],
      ["claude-sonnet-4-5-20250929", 1024],
      ["claude-opus-4-1-20250805", 1024],
      ["claude-opus-4-20250514", 1024],
      ["claude-sonnet-4-20250514", 1024],
      ["claude-3-7-sonnet-latest", 1024],
      ["claude-3-5-haiku-20241022", 2048],
      ["claude-3-haiku-20240307", 2048],
      ["anthropic.claude-3-haiku-20240307-v1:0", 2048],
      ["us.anthropic.claude-haiku-4-5-20251001-v1:0", 4096],
      ["claude-opus-4-5@20251101", 4096],
      ["anthropic/claude-haiku-4-5", 4096],
      ["CLAUDE-HAIKU-4-5", 4096],
      ["claude-some-future-model", 1024],
    ];
    for (const [model, min] of cases)
      expect([model, minCacheableTokens(model)]).toEqual([model, min]);
  });

  it("caches only the tiers asked for; dynamic can never carry a breakpoint", () => {
    const p = fullPlan();
    const r = toAnthropicRequest(p, { cacheTiers: ["static"] });
    expect(r.breakpoints.map((b) => b.tier)).toEqual(["static"]);
    expect(r.body.system[1]?.cache_control).toBeUndefined();
    expect(() => toAnthropicRequest(p, { cacheTiers: ["dynamic" as "static"] })).toThrow(
      /cacheTiers/,
    );
  });

  it("adds the query as the user message", () => {
    const r = toAnthropicRequest(fullPlan(), { query: "fix the build" });
    expect(r.body.messages).toEqual([{ role: "user", content: "fix the build" }]);
    expect(() => toAnthropicRequest(fullPlan(), { query: "" })).toThrow(/query/);
  });

  it('memoryPlacement "user": the memory layer leaves system and opens the user message, byte-exact', () => {
    const p = fullPlan();
    const r = toAnthropicRequest(p, { memoryPlacement: "user", query: "fix the build" });
    expect(r.body.system.map((b) => b.text)).toEqual([
      RULES,
      PROFILE,
      `task T-12 in progress${SEGMENT_SEPARATOR}run_tests(path)`,
    ]);
    expect(r.body.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: MEMORY },
          { type: "text", text: "fix the build" },
        ],
      },
    ]);
    expect(r.movedLayers).toEqual([
      {
        name: "recall_memory",
        tier: "dynamic",
        chars: [...MEMORY].length,
        tokens: getTokenCounter("estimate").count(MEMORY),
      },
    ]);
    expect(r.tierTokens.map((t) => t.names)).toEqual([
      ["rules"],
      ["profile"],
      ["planner", "tool_state"],
    ]);
    // The static and session keys (and breakpoints) are untouched.
    expect(r.cacheKeys.static).toBe(computeCacheKeys(p).static);
    expect(r.cacheKeys.session).toBe(computeCacheKeys(p).session);
    expect(r.breakpoints.map((b) => b.tier)).toEqual(["static", "session"]);
    // Without a query the user message is the memory alone; "system" is the default.
    const noQuery = toAnthropicRequest(p, { memoryPlacement: "user" });
    expect(noQuery.body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: MEMORY }] },
    ]);
    expect(toAnthropicRequest(p, { memoryPlacement: "system" }).body).toEqual(
      toAnthropicRequest(p).body,
    );
  });

  it('memoryPlacement "user" drops a tier left empty and accepts the session name recalled_memory', () => {
    const p = plan([seg("rules", RULES, "static"), seg("recalled_memory", MEMORY, "dynamic")]);
    const r = toAnthropicRequest(p, { memoryPlacement: "user" });
    expect(r.body.system).toEqual([
      { type: "text", text: RULES, cache_control: { type: "ephemeral" } },
    ]);
    expect(r.body.messages?.[0]?.content).toEqual([{ type: "text", text: MEMORY }]);
    expect(r.cacheKeys).toEqual({
      static: computeCacheKeys(p).static,
      session: null,
      dynamic: null,
    });
  });
});

describe("memory moved to the user role equals planning without it (property)", () => {
  const content = fc
    .string({ unit: "binary", minLength: 1, maxLength: 40 })
    .filter((s) => s.trim() !== "");
  const tier = fc.constantFrom<CacheTier>("static", "session", "dynamic");
  it("system side = the plan of the other segments; user block = the memory content", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(content, tier, fc.integer({ min: 0, max: 9 })), {
          minLength: 0,
          maxLength: 6,
        }),
        content,
        tier,
        fc.integer({ min: 0, max: 9 }),
        (others, memory, memoryTier, memoryPriority) => {
          const segments = others.map(([c, t, pr], i) => seg(`s${i}`, c, t, pr));
          const withMemory = plan([
            ...segments,
            seg("recall_memory", memory, memoryTier, memoryPriority),
          ]);
          const without = plan(segments);
          const r = toOpenAIChatRequest(withMemory, { memoryPlacement: "user" });
          const a = toAnthropicRequest(withMemory, { memoryPlacement: "user" });
          const system = r.body.messages.find((m) => m.role === "system");
          if (segments.length === 0) expect(system).toBeUndefined();
          else expect(system?.content).toBe(without.prompt);
          expect(a.body.system.map((b) => b.text)).toEqual(
            without.tiers.map((t) => without.prompt.slice(t.start, t.end)),
          );
          expect(a.tierTokens.map((t) => t.tokens)).toEqual(without.tiers.map((t) => t.tokens));
          expect(a.body.messages?.[0]?.content).toEqual([{ type: "text", text: memory }]);
          // The keys (and so prompt_cache_key) are those of what is actually sent.
          expect(r.cacheKeys).toEqual(computeCacheKeys(without));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("toOpenAIChatRequest / toOpenAIResponsesRequest", () => {
  it("sends the prompt as is (static first) and a prompt_cache_key from the static key", () => {
    const p = fullPlan();
    const r = toOpenAIChatRequest(p, { query: "fix the build" });
    const key = `${PROMPT_CACHE_KEY_PREFIX}${computeCacheKeys(p).static}`;
    expect(r.body).toEqual({
      messages: [
        { role: "system", content: p.prompt },
        { role: "user", content: "fix the build" },
      ],
      prompt_cache_key: key,
    });
    expect(r.promptCacheKey).toBe(key);
    expect(r.tierTokens.map((t) => t.tier)).toEqual(["static", "session", "dynamic"]);
    const dev = toOpenAIChatRequest(p, { role: "developer" });
    expect(dev.body.messages).toEqual([{ role: "developer", content: p.prompt }]);
    expect(() => toOpenAIChatRequest(p, { role: "user" as "system" })).toThrow(/role/);
    const typed = {
      model: "gpt-4o",
      ...r.body,
    } satisfies OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
    expect(typed.model).toBe("gpt-4o");
  });

  it("prompt_cache_key is stable when only dynamic content changes, and changes with static content", () => {
    const base = toOpenAIChatRequest(fullPlan()).promptCacheKey;
    expect(
      toOpenAIChatRequest(fullPlan("<recalled_memory>other</recalled_memory>")).promptCacheKey,
    ).toBe(base);
    expect(toOpenAIResponsesRequest(fullPlan("other")).promptCacheKey).toBe(base);
    expect(toOpenAIChatRequest(fullPlan(MEMORY, `${RULES} extra`)).promptCacheKey).not.toBe(base);
    expect(toOpenAIChatRequest(fullPlan(), { memoryPlacement: "user" }).promptCacheKey).toBe(base);
    expect(toOpenAIChatRequest(fullPlan(), { cacheKeyPrefix: "app-" }).promptCacheKey).toBe(
      `app-${computeCacheKeys(fullPlan()).static}`,
    );
  });

  it("omits prompt_cache_key without a static tier (an untiered plan is one dynamic block)", () => {
    const untiered = planPrompt({ segments: [{ name: "a", content: "Be brief." }] });
    const r = toOpenAIChatRequest(untiered);
    expect(r.body).toEqual({ messages: [{ role: "system", content: "Be brief." }] });
    expect(r.promptCacheKey).toBeNull();
    const a = toAnthropicRequest(untiered);
    expect(a.body.system).toEqual([{ type: "text", text: "Be brief." }]);
    expect(a.tierTokens).toEqual([{ tier: "dynamic", names: ["a"], chars: 9, tokens: 3 }]);
  });

  it("Responses: instructions = the prompt, input = the query, moved memory as input_text parts", () => {
    const p = fullPlan();
    const r = toOpenAIResponsesRequest(p, { query: "fix the build" });
    expect(r.body).toEqual({
      instructions: p.prompt,
      input: "fix the build",
      prompt_cache_key: `promptctx-${computeCacheKeys(p).static}`,
    });
    const moved = toOpenAIResponsesRequest(p, { memoryPlacement: "user", query: "fix the build" });
    expect(moved.body.instructions).not.toContain("recalled_memory");
    expect(moved.body.input).toEqual([
      {
        role: "user",
        content: [
          { type: "input_text", text: MEMORY },
          { type: "input_text", text: "fix the build" },
        ],
      },
    ]);
    const typed = {
      model: "gpt-4o",
      ...moved.body,
    } satisfies OpenAI.Responses.ResponseCreateParamsNonStreaming;
    expect(typed.model).toBe("gpt-4o");
    expect(toOpenAIResponsesRequest(p).body.input).toBeUndefined();
  });

  it("reports whether the token counts are exact for the model", () => {
    const o200k = fullPlan();
    const exact = plan(
      [seg("rules", "Be brief.", "static"), seg("m", "x", "dynamic")],
      "o200k_base",
    );
    expect(toOpenAIChatRequest(o200k).tokensEstimated).toBe(true); // "estimate" counter
    expect(toOpenAIChatRequest(exact, { model: "gpt-4o" }).tokensEstimated).toBe(false);
    expect(toOpenAIChatRequest(exact, { model: "gpt-4" }).tokensEstimated).toBe(true);
    expect(toOpenAIChatRequest(exact).tokenizer).toBe("o200k_base");
    // Claude figures are always estimates; a counter recounts every tier.
    const a = toAnthropicRequest(exact, { tokenCounter: getTokenCounter("claude_estimate") });
    expect(a.tokenizer).toBe("claude_estimate");
    expect(a.tokensEstimated).toBe(true);
    expect(a.tierTokens[0]?.tokens).toBe(
      Math.ceil(getTokenCounter("o200k_base").count("Be brief.") * 1.25),
    );
  });
});

describe("toAiSdkRequest", () => {
  it("anthropic: one system message per tier, cacheControl provider options on the cached ones", () => {
    const p = fullPlan();
    const r = toAiSdkRequest(p, { provider: "anthropic", query: "fix the build", ttl: "1h" });
    const texts = p.tiers.map((t) => p.prompt.slice(t.start, t.end));
    expect(r.body).toEqual({
      system: [
        {
          role: "system",
          content: texts[0],
          providerOptions: { anthropic: { cacheControl: { type: "ephemeral", ttl: "1h" } } },
        },
        {
          role: "system",
          content: texts[1],
          providerOptions: { anthropic: { cacheControl: { type: "ephemeral", ttl: "1h" } } },
        },
        { role: "system", content: texts[2] },
      ],
      messages: [{ role: "user", content: "fix the build" }],
    });
    expect(r.breakpoints.map((b) => b.tier)).toEqual(["static", "session"]);
    const typed: ModelMessage[] = r.body.messages;
    const system: Parameters<typeof generateText>[0]["system"] = r.body.system;
    expect([typed.length, Array.isArray(system) && system.length]).toEqual([1, 3]);
  });

  it("openai: system = the prompt, promptCacheKey provider option", () => {
    const p = fullPlan();
    const r = toAiSdkRequest(p, {
      provider: "openai",
      query: "fix the build",
      memoryPlacement: "user",
    });
    expect(r.body.system).not.toContain(MEMORY);
    expect(r.body.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: MEMORY },
          { type: "text", text: "fix the build" },
        ],
      },
    ]);
    expect(r.body.providerOptions).toEqual({
      openai: { promptCacheKey: `promptctx-${computeCacheKeys(p).static}` },
    });
    const typed: Parameters<typeof generateText>[0]["providerOptions"] = r.body.providerOptions;
    expect(typed).toBeDefined();
    expect(() => toAiSdkRequest(p, { provider: "gemini" } as never)).toThrow(/provider/);
  });
});

describe("promptctx assemble --format anthropic|openai", () => {
  const ws = new URL("../../examples/workspace", import.meta.url).pathname;
  // An empty store of its own (an absent --store file is created empty): no memories.
  const dir = mkdtempSync(join(tmpdir(), "promptctx-providers-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const run = (format: string, extra: string[] = []) =>
    runCli(
      [
        "assemble",
        "--workspace",
        ws,
        "--store",
        join(dir, "none.db"),
        "--query",
        "add an index",
        "--now",
        "2026-11-30T09:00:00Z",
        "--no-user-files",
        "--format",
        format,
        ...extra,
      ],
      { env: { HOME: "/nonexistent-home" } },
    );

  let json: {
    prompt: string;
    segmentPlan: PromptPlan;
    manifest: { cacheKeys: { static: string | null } };
  };
  const assembled = () => {
    if (json === undefined) json = JSON.parse(run("json").stdout);
    return json;
  };

  it("anthropic: prints {model, max_tokens, system, messages} with the query as the user message", () => {
    const r = run("anthropic");
    expect(r.code, r.stderr).toBe(0);
    const body = JSON.parse(r.stdout);
    expect(Object.keys(body)).toEqual(["model", "max_tokens", "system", "messages"]);
    expect(body.model).toBe("claude-sonnet-4-6");
    expect(body.max_tokens).toBe(1024);
    expect(body.messages).toEqual([{ role: "user", content: "add an index" }]);
    expect(body.system.length).toBeGreaterThan(0);
    for (const b of body.system) expect(b.type).toBe("text");
    const json = assembled();
    const tiers = json.segmentPlan.tiers as { start: number; end: number }[];
    expect(body.system.map((b: { text: string }) => b.text)).toEqual(
      tiers.map((t) => json.prompt.slice(t.start, t.end)),
    );
    const withModel = JSON.parse(run("anthropic", ["--model", "claude-haiku-4-5"]).stdout);
    expect(withModel.model).toBe("claude-haiku-4-5");
    const wrong = run("anthropic", ["--model", "gpt-4o"]);
    expect(wrong.code).toBe(2);
  });

  it("openai: prints a chat completions body with the prompt as system and the query as user", () => {
    const r = run("openai");
    expect(r.code, r.stderr).toBe(0);
    const body = JSON.parse(r.stdout);
    const json = assembled();
    expect(body.model).toBe("gpt-4o");
    expect(body.messages).toEqual([
      { role: "system", content: json.prompt },
      { role: "user", content: "add an index" },
    ]);
    if (json.manifest.cacheKeys.static !== null) {
      expect(body.prompt_cache_key).toBe(`promptctx-${json.manifest.cacheKeys.static}`);
    }
    expect(run("openai", ["--model", "claude-sonnet-4-5"]).code).toBe(2);
  });
});
