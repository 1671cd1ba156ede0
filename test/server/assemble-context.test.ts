/**
 * `POST /v1/assemble-context` over real HTTP (spec 10): the reference example byte for
 * byte, the same object as the library and the CLI, 400 with the field path for invalid
 * input, 422 for required content over budget, and the route in the OpenAPI document.
 */
import { describe, expect, it } from "vitest";
import { assembleContext } from "../../src/assemble/index.js";
import { runCli } from "../cli/run-cli.js";
import { REFERENCE_PROMPT, referenceRequest } from "../fixtures/inline-context.js";
import { expectErrorObject, get, post, useServer, WORKSPACE } from "./helpers.js";

const server = useServer({ workspace: WORKSPACE });

const withoutTimings = (body: unknown) => {
  const copy = structuredClone(body) as { manifest: { timings?: unknown } };
  delete copy.manifest.timings;
  return copy;
};

describe("POST /v1/assemble-context", () => {
  it("answers the reference example byte for byte, as the library and the CLI do", async () => {
    const a = await post(server.base, "/v1/assemble-context", referenceRequest());
    expect(a.status, a.text).toBe(200);
    const body = a.json as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(["prompt", "manifest", "memoryPlan", "segmentPlan"]);
    expect(body.prompt).toBe(REFERENCE_PROMPT);
    const lib = await assembleContext(referenceRequest());
    const expected = JSON.parse(
      JSON.stringify({
        prompt: lib.prompt,
        manifest: lib.manifest,
        memoryPlan: lib.memoryPlan,
        segmentPlan: lib.segmentPlan,
      }),
    );
    expect(withoutTimings(body)).toEqual(withoutTimings(expected));
    const cli = runCli(["assemble-context"], { input: JSON.stringify(referenceRequest()) });
    expect(cli.code, cli.stderr).toBe(0);
    expect(withoutTimings(JSON.parse(cli.stdout))).toEqual(withoutTimings(body));
  });

  it("400 with the field path for invalid input; 422 when required content cannot fit", async () => {
    const req = referenceRequest();
    const bad = await post(server.base, "/v1/assemble-context", {
      ...req,
      query: { ...req.query, now: "soon" },
    });
    expectErrorObject(bad, 400, "invalid_input");
    expect((bad.json as { error: { path: string } }).error.path).toBe("query.now");
    expectErrorObject(
      await post(server.base, "/v1/assemble-context", { ...req, budgetChars: 10 }),
      422,
      "prompt_budget_exceeded",
    );
  });

  it("is in the OpenAPI document with its request schema", async () => {
    const doc = (await get(server.base, "/openapi.json")).json as {
      paths: Record<
        string,
        { post?: { requestBody: { content: Record<string, { schema: { $ref: string } }> } } }
      >;
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    const op = doc.paths["/v1/assemble-context"]?.post;
    expect(op?.requestBody.content["application/json"]?.schema.$ref).toBe(
      "#/components/schemas/AssembleContextRequest",
    );
    const schema = doc.components.schemas.AssembleContextRequest;
    expect(Object.keys(schema?.properties ?? {})).toEqual(
      expect.arrayContaining(["mode", "renderer", "layout", "budgetChars", "query", "sources"]),
    );
  });
});
