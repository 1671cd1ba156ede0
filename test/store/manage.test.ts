import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/index.js";
import { rec, tempDir } from "./helpers.js";
import { manageContract } from "./manage-contract.js";

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.cleanup());

let n = 0;
manageContract("SQLite", async (options) => openStore(join(dir.dir, `m${n++}.db`), options));

/** Every byte of the store's files (database, WAL, shared memory), as latin1 text. */
function storeBytes(d: string): string {
  return readdirSync(d)
    .map((f) => readFileSync(join(d, f)).toString("latin1"))
    .join("\n");
}

describe("forgetting erases the bytes (SQLite)", () => {
  it("no trace of a forgotten memory's text in the database or WAL files", () => {
    const store = openStore(join(dir.dir, "memory.db"));
    const secret = "Zanzibarquux passport number 7731-XQ-zanzibarquux";
    const filler = Array.from({ length: 200 }, (_, i) =>
      rec(`f${i}`, `filler memory number ${i} about gardening`),
    );
    store.add(filler, { now: "2026-08-01T00:00:00Z" });
    store.add(
      [rec("secret", secret, { summary: "zanzibarquux summary", tags: ["zanzibarquux-tag"] })],
      {
        now: "2026-08-02T00:00:00Z",
      },
    );
    store.add([rec("secret", `${secret} (renewed)`)], { now: "2026-08-03T00:00:00Z" });
    expect(storeBytes(dir.dir).toLowerCase()).toContain("zanzibarquux");
    expect(store.forget({ userScope: "u1", memoryId: "secret" })).toEqual({
      memories: 1,
      removed: 2,
    });
    const bytes = storeBytes(dir.dir).toLowerCase();
    expect(bytes).not.toContain("zanzibarquux");
    expect(bytes).not.toContain("7731");
    // The rest is intact.
    expect(store.count({ userScope: "u1" })).toBe(200);
    expect(
      store.recall("gardening", { userScope: "u1", asOf: "2026-08-04T00:00:00Z", limit: 5 }).length,
    ).toBe(5);
    const out: string[] = [];
    store.exportJsonl((c) => out.push(c));
    expect(out.join("")).not.toContain("anzibarquux");
    store.close();
    expect(storeBytes(dir.dir).toLowerCase()).not.toContain("zanzibarquux");
  });
});
