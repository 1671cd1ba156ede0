/** `POST /v1/plan-conversation` over real HTTP on 127.0.0.1, and its OpenAPI entry. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  PlanConversationJsonRequestSchema,
  planConversation,
} from "../../src/conversation/index.js";
import { strictSchema } from "../../src/text/index.js";
import { conversationRequest } from "../fixtures/requests.js";
import { expectErrorObject, get, post, useServer } from "./helpers.js";

const server = useServer({ store: null });

interface RefusalDetails {
  need: number;
  budget: number;
  over: number;
  parts: { part: string; tokens: number }[];
  fix: string;
}

describe("POST /v1/plan-conversation", () => {
  it("answers the plan the library computes", async () => {
    const a = await post(server.base, "/v1/plan-conversation", conversationRequest);
    expect(a.status, a.text).toBe(200);
    expect(a.contentType).toMatch(/^application\/json/);
    expect(a.json).toEqual(
      JSON.parse(JSON.stringify(planConversation(conversationRequest as never))),
    );
    expect(a.json).toMatchObject({ firstKeptId: "u2", usedTokens: 30 });
  });

  it("400 with the field path on invalid input", async () => {
    const dup = structuredClone(conversationRequest);
    dup.messages[2] = { ...dup.messages[2], id: "u1" } as (typeof dup.messages)[number];
    const a = await post(server.base, "/v1/plan-conversation", dup);
    expectErrorObject(a, 400, "invalid_input");
    expect((a.json as { error: { path: string } }).error.path).toBe("messages[2].id");
    const b = await post(server.base, "/v1/plan-conversation", {
      ...conversationRequest,
      policy: { toolResultMaxTokens: 8 },
    });
    expectErrorObject(b, 400, "invalid_input");
    expect((b.json as { error: { path: string } }).error.path).toBe("policy.toolResultMaxTokens");
    const c = await post(server.base, "/v1/plan-conversation", { messages: [], budgetTokens: 10 });
    expectErrorObject(c, 400, "invalid_input");
    expectErrorObject(await post(server.base, "/v1/plan-conversation", "[]"), 400, "invalid_input");
  });

  it("422 when the current turn cannot fit, with the numbers: need by part, budget, the fix", async () => {
    const a = await post(server.base, "/v1/plan-conversation", {
      ...conversationRequest,
      budgetTokens: 5,
    });
    expectErrorObject(a, 422, "prompt_budget_exceeded");
    const { details } = (a.json as { error: { details: RefusalDetails } }).error;
    expect(details.budget).toBe(5);
    expect(details.over).toBe(details.need - 5);
    expect(details.over).toBeGreaterThan(0);
    expect(details.parts.map((p) => p.part)).toContain("ask");
    expect(details.parts.reduce((n, p) => n + p.tokens, 0)).toBe(details.need);
    expect(details.fix).toMatch(/\d/);
  });

  it("is in the OpenAPI document, its request schema generated from the zod schema", async () => {
    const a = await get(server.base, "/openapi.json");
    const doc = a.json as {
      paths: Record<string, { post?: { requestBody: { content: Record<string, unknown> } } }>;
      components: { schemas: Record<string, unknown> };
    };
    const op = doc.paths["/v1/plan-conversation"]?.post;
    expect(op?.requestBody.content["application/json"]).toEqual({
      schema: { $ref: "#/components/schemas/PlanConversationRequest" },
    });
    expect(JSON.stringify(op)).toContain('"422"');
    const schema = doc.components.schemas.PlanConversationRequest;
    const { $schema: _s, ...generated } = z.toJSONSchema(
      strictSchema(PlanConversationJsonRequestSchema),
      {
        target: "draft-2020-12",
        io: "input",
      },
    );
    expect(schema).toEqual(generated);
    // Every reference in the document resolves.
    for (const m of JSON.stringify(doc).matchAll(/"\$ref":"#\/([^"]+)"/g)) {
      let node: unknown = doc;
      for (const key of (m[1] as string).split("/"))
        node = (node as Record<string, unknown>)?.[key];
      expect(node, m[1]).toBeDefined();
    }
  });
});
