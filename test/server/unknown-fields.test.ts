/**
 * Strict everywhere: every POST route's schema rejects an undeclared field at every object
 * level (checked two ways: the published JSON Schema of each route has no open object, and a
 * real server on 127.0.0.1 answers 400 `unknown_field` with the field's exact path for an
 * unknown field injected at each object of a valid request).
 */
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { formatPath } from "../../src/errors/index.js";
import { REQUEST_SCHEMAS } from "../../src/server/requests.js";
import { closestName } from "../../src/text/index.js";
import { selectRequest } from "../fixtures/requests.js";
import { EXAMPLES, FREE_FORM, inject, objectsOf } from "../fixtures/unknown-fields.js";
import { exampleStore, NOW, post, QUERY, useServer, WORKSPACE } from "./helpers.js";

/** The JSON Schema nodes that describe an object and still accept undeclared fields. */
function openObjects(node: unknown, where = "#"): string[] {
  if (Array.isArray(node)) return node.flatMap((n, i) => openObjects(n, `${where}/${i}`));
  if (typeof node !== "object" || node === null) return [];
  const n = node as Record<string, unknown>;
  const open =
    n.type === "object" && n.properties !== undefined && n.additionalProperties !== false;
  return [
    ...(open ? [where] : []),
    ...Object.entries(n).flatMap(([k, v]) => openObjects(v, `${where}/${k}`)),
  ];
}

describe("every route's schema is strict at every depth", () => {
  for (const [route, schema] of Object.entries(REQUEST_SCHEMAS)) {
    it(route, () => {
      expect(openObjects(z.toJSONSchema(schema, { io: "input" }))).toEqual([]);
    });
  }
});

describe("an unknown field at each object level is a 400 unknown_field at its path", async () => {
  const store = await exampleStore();
  afterAll(() => store.cleanup());
  const server = useServer({ workspace: join(WORKSPACE, ".."), store: store.path });

  for (const [route, example] of Object.entries(EXAMPLES)) {
    it(route, async () => {
      const body =
        route === "/v1/assemble" ? { ...(example as object), workspace: "workspace" } : example;
      const valid = await post(server.base, route, body);
      expect(valid.status, valid.text).toBe(200);
      const levels = objectsOf(body);
      expect(levels.length).toBeGreaterThan(0);
      for (const path of levels) {
        const answer = await post(server.base, route, inject(body, path, "zzUnknownField"));
        const where = formatPath([...path, "zzUnknownField"]);
        if (FREE_FORM.has(formatPath(path))) {
          expect(answer.status, where).toBe(200);
          continue;
        }
        expect(answer.status, where).toBe(400);
        expect((answer.json as { error: unknown }).error).toMatchObject({
          code: "unknown_field",
          path: where,
        });
      }
    });
  }

  it("a misspelt budget says which field was meant", async () => {
    const answer = await post(server.base, "/v1/assemble", {
      query: QUERY,
      now: NOW,
      workspace: "workspace",
      user: "u-alice",
      budgetchars: 5,
    });
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({
      error: {
        code: "unknown_field",
        message: "budgetchars: unknown field; did you mean `budgetChars`?",
        path: "budgetchars",
      },
    });
  });

  it("a misspelt nested field is reported before the field it hides", async () => {
    const answer = await post(server.base, "/v1/select-memory", {
      ...selectRequest,
      candidates: [{ ...selectRequest.candidates[0], memoryid: "x", memoryId: undefined }],
    });
    expect(answer.json).toMatchObject({
      error: { code: "unknown_field", path: "candidates[0].memoryid" },
    });
    expect((answer.json as { error: { message: string } }).error.message).toContain(
      "did you mean `memoryId`?",
    );
  });
});

describe("closestName", () => {
  it("finds the one close field, case-insensitively, and only one", () => {
    expect(closestName("budgetchars", ["budgetChars", "budgetTokens"])).toBe("budgetChars");
    expect(closestName("BUDGETCHARS", ["budgetChars"])).toBe("budgetChars");
    expect(closestName("asof", ["asOf", "query"])).toBe("asOf");
    expect(closestName("zzUnknownField", ["query", "now"])).toBeNull();
    expect(closestName("ab", ["ax", "ay"])).toBeNull();
    expect(closestName("nwo", ["text", "userScope", "now"])).toBe("now");
  });
});

describe("a workspace's config.json", () => {
  it("is strict too: a misspelt field is unknown_field under `config`, with the hint", async () => {
    const { mkdtempSync, mkdirSync, writeFileSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { loadWorkspaceConfig } = await import("../../src/workspace/index.js");
    const dir = mkdtempSync(join(tmpdir(), "promptctx-config-"));
    try {
      mkdirSync(join(dir, ".promptctx"));
      const config = { budgets: { chars: 4000, tokenz: 900 } };
      writeFileSync(join(dir, ".promptctx", "config.json"), JSON.stringify(config));
      await expect(loadWorkspaceConfig(dir)).rejects.toMatchObject({
        code: "unknown_field",
        path: "config.budgets.tokenz",
        message: "config.budgets.tokenz: unknown field; did you mean `tokens`?",
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
