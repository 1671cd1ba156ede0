import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { WorkspaceConfigSchema, workspaceConfigJsonSchema } from "../../src/workspace/index.js";

describe("workspace config", () => {
  it("the published JSON schema is the one generated from the zod schema (npm run gen:schemas)", () => {
    const committed = JSON.parse(
      readFileSync(new URL("../../schemas/workspace-config.schema.json", import.meta.url), "utf8"),
    );
    expect(committed).toEqual(workspaceConfigJsonSchema());
  });

  it("the example workspace's config is valid", () => {
    const raw = JSON.parse(
      readFileSync(
        new URL("../../examples/workspace/.promptctx/config.json", import.meta.url),
        "utf8",
      ),
    );
    expect(WorkspaceConfigSchema.safeParse(raw).success).toBe(true);
  });

  it("every field is optional; unknown fields are rejected", () => {
    expect(WorkspaceConfigSchema.safeParse({}).success).toBe(true);
    expect(WorkspaceConfigSchema.safeParse({ moed: "react" }).success).toBe(false);
  });
});
