/**
 * The workspace recall slot by meaning: a workspace whose config names an embedder
 * (`memory.embedder`) recalls a paraphrase into the prompt; without one (or with `none`),
 * full-text alone, as before.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/index.js";
import { assembleWorkspace } from "../../src/workspace/index.js";
import { rec } from "../store/helpers.js";

let root: string;
const QUERY = "which editor colours does the user like?";
const NOW = "2026-08-17T00:00:00Z";

function config(memory?: { embedder: string }) {
  writeFileSync(
    join(root, ".promptctx", "config.json"),
    JSON.stringify({ user: "u1", ...(memory ? { memory } : {}) }),
  );
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "promptctx-ws-meaning-"));
  mkdirSync(join(root, ".promptctx"));
  const store = openStore(join(root, ".promptctx", "memory.db"));
  store.add([
    rec("dark", "The user prefers a dark theme"),
    rec("deploy", "The deploy runs on Fridays"),
  ]);
  store.close();
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("workspace recall slot by meaning", () => {
  it("without an embedder, the paraphrase is not recalled (full-text)", async () => {
    config();
    const out = await assembleWorkspace({ workspace: root, query: QUERY, now: NOW, userFiles: [] });
    expect(out.prompt).not.toContain("dark theme");
  });

  it("with memory.embedder, the paraphrase reaches the prompt (pending vectors filled by reembed)", async () => {
    config({ embedder: "embedded" });
    // The store was written without vectors: they are pending until `memory reembed`.
    const { createEmbedder } = await import("../../src/embed/index.js");
    const { hybridStore } = await import("../../src/store/index.js");
    const e = (await createEmbedder({ kind: "embedded" }))!;
    const h = hybridStore(openStore(join(root, ".promptctx", "memory.db")), e);
    expect(await h.reembed()).toMatchObject({ embedded: 2, pending: 0 });
    h.close();
    const out = await assembleWorkspace({ workspace: root, query: QUERY, now: NOW, userFiles: [] });
    expect(out.prompt).toContain("The user prefers a dark theme");
    expect(out.prompt).not.toContain("deploy runs on Fridays");
  });

  it("--embedder none (the option) wins over the config", async () => {
    config({ embedder: "embedded" });
    const out = await assembleWorkspace({
      workspace: root,
      query: QUERY,
      now: NOW,
      userFiles: [],
      embedder: "none",
    });
    expect(out.prompt).not.toContain("dark theme");
  });
});
