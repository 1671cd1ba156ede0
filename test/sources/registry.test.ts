/** The source registry of docs/assembler.md: unique ids, kinds → sources in registration order. */
import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/errors/index.js";
import {
  constraintsSource,
  createSourceRegistry,
  profileSource,
  recallSource,
  staticSource,
} from "../../src/sources/index.js";

describe("createSourceRegistry", () => {
  const constraints = constraintsSource({ rules: [{ id: "a", level: "forbid", text: "x" }] });
  const profile = profileSource([{ key: "city", value: "Beijing" }]);
  const graph = staticSource("graph", ["profile", "recall_memory"], []);
  const recall = recallSource(() => []);

  it("maps kinds to the sources serving them, in registration order", () => {
    const reg = createSourceRegistry([graph, constraints, profile, recall]);
    expect(reg.sources.map((s) => s.id)).toEqual(["graph", "constraints", "profile", "recall"]);
    expect(reg.sourcesFor("profile").map((s) => s.id)).toEqual(["graph", "profile"]);
    expect(reg.sourcesFor("recall_memory").map((s) => s.id)).toEqual(["graph", "recall"]);
    expect(reg.sourcesFor("constraints").map((s) => s.id)).toEqual(["constraints"]);
    expect(reg.sourcesFor("kb")).toEqual([]);
    const reversed = createSourceRegistry([recall, profile, constraints, graph]);
    expect(reversed.sourcesFor("profile").map((s) => s.id)).toEqual(["profile", "graph"]);
  });

  it("one source may serve several kinds", () => {
    const reg = createSourceRegistry([graph]);
    expect(reg.sourcesFor("profile")).toEqual([graph]);
    expect(reg.sourcesFor("recall_memory")).toEqual([graph]);
  });

  it("rejects duplicate source ids with a path", () => {
    try {
      createSourceRegistry([constraints, profile, staticSource("profile", ["kb"], [])]);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(InvalidInputError);
      expect((e as InvalidInputError).path).toBe("sources[2].id");
      expect((e as Error).message).toContain('"profile"');
    }
  });

  it("rejects what is not a source with its index, before anything calls it", () => {
    const notSources: unknown[] = [
      null,
      1,
      { id: "r1", level: "forbid", text: "a rule, not a source" },
      { id: "", supports: () => true, fetch: () => [] },
      { id: "x", supports: true, fetch: () => [] },
      constraintsSource,
    ];
    for (const bad of notSources) {
      try {
        createSourceRegistry([profile, bad] as never);
        expect.unreachable();
      } catch (e) {
        expect(e).toBeInstanceOf(InvalidInputError);
        expect((e as InvalidInputError).path).toBe("sources[1]");
      }
    }
  });

  it("is not affected by later changes to the input array", () => {
    const list = [constraints];
    const reg = createSourceRegistry(list);
    list.push(profile);
    expect(reg.sources).toHaveLength(1);
    expect(reg.sourcesFor("profile")).toEqual([]);
  });
});
