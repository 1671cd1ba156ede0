/**
 * `promptctx assemble-context [--input FILE]` through the real CLI (spec 10): the
 * reference example from stdin and from a file, exit 2 with the field path for invalid
 * input, exit 3 for required content over budget.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REFERENCE_PROMPT, referenceRequest } from "../fixtures/inline-context.js";
import { runCli } from "./run-cli.js";

const dir = mkdtempSync(join(tmpdir(), "promptctx-ctx-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("promptctx assemble-context", () => {
  it("prints {prompt, manifest, memoryPlan, segmentPlan} for the reference example", () => {
    const file = join(dir, "req.json");
    writeFileSync(file, JSON.stringify(referenceRequest()));
    const r = runCli(["assemble-context", "--input", file]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out)).toEqual(["prompt", "manifest", "memoryPlan", "segmentPlan"]);
    expect(out.prompt).toBe(REFERENCE_PROMPT);
    expect(out.manifest.layout).toBe("priority");
  });

  it("exit 2 with the field path for invalid input", () => {
    const req = referenceRequest();
    const r = runCli(["assemble-context"], {
      input: JSON.stringify({ ...req, sources: { ...req.sources, tools: { available: [{}] } } }),
    });
    expect(r.code).toBe(2);
    const error = JSON.parse(r.stdout).error;
    expect(error.code).toBe("invalid_input");
    expect(error.path).toMatch(/^sources\.tools\.available\[0\]\./);
    expect(runCli(["assemble-context"], { input: "{not json" }).code).toBe(2);
  });

  it("exit 3 when required content cannot fit", () => {
    const r = runCli(["assemble-context"], {
      input: JSON.stringify({ ...referenceRequest(), budgetChars: 10 }),
    });
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout).error.code).toBe("prompt_budget_exceeded");
  });

  it("is listed in --help", () => {
    expect(runCli(["--help"]).stdout).toContain("assemble-context");
  });
});
