/**
 * Durability under a crash: a child process bulk-imports in batches and prints each
 * batch number after it commits; it is killed with SIGKILL mid-import. Every batch it
 * reported must be intact, and the file must pass SQLite's integrity check.
 * Runs against the built package (`npm run build` first; `npm test` does).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/index.js";
import { AS_OF, tempDir } from "./helpers.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const DIST_STORE = join(ROOT, "dist/store/index.js");
const SRC_STORE = join(ROOT, "src/store/sqlite/store.ts");
const BATCH = 250;

const CHILD = `
const [storeModule, dbPath, batchSize] = process.argv.slice(2);
const { openStore } = await import(storeModule);
const store = openStore(dbPath);
const size = Number(batchSize);
async function* lines() {
  for (let b = 1; ; b++) {
    for (let k = 0; k < size; k++) {
      yield JSON.stringify({
        memoryId: \`b\${b}-\${k}\`,
        userScope: "u" + (k % 3),
        content: \`batch \${b} record \${k} crashproof \${"filler words ".repeat(k % 20)}\`,
        importance: (k % 10) / 10,
        source: { sourceId: "crash", sourceType: "test", title: "crash", capturedAt: "2026-08-01T00:00:00Z" },
      }) + "\\n";
    }
  }
}
await store.importJsonl(lines(), {
  batchSize: size,
  // Called only after the batch's transaction has committed.
  onProgress: (p) => process.stdout.write(p.batch + "\\n"),
});
`;

let dir: string;
let cleanup: () => void;
let child: ChildProcess | undefined;

beforeAll(() => {
  if (!existsSync(DIST_STORE) || statSync(DIST_STORE).mtimeMs < statSync(SRC_STORE).mtimeMs) {
    throw new Error("dist/store is missing or stale: run `npm run build` first");
  }
});
beforeEach(() => {
  ({ dir, cleanup } = tempDir());
});
afterEach(() => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  cleanup();
});

function runAndKill(
  dbPath: string,
  killAfterBatch: number,
): Promise<{ reported: number[]; signal: string | null }> {
  const script = join(dir, "child.mjs");
  writeFileSync(script, CHILD);
  return new Promise((resolve, reject) => {
    const reported: number[] = [];
    let buffered = "";
    let stderr = "";
    const proc = spawn(
      process.execPath,
      [script, pathToFileURL(DIST_STORE).href, dbPath, String(BATCH)],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    child = proc;
    proc.stdout.setEncoding("utf8");
    proc.stdout.on("data", (chunk: string) => {
      buffered += chunk;
      const parts = buffered.split("\n");
      buffered = parts.pop() ?? "";
      for (const p of parts) reported.push(Number(p));
      if (reported.length >= killAfterBatch && proc.signalCode === null) proc.kill("SIGKILL");
    });
    proc.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    proc.on("error", reject);
    proc.on("close", (code, signal) => {
      if (signal !== "SIGKILL")
        reject(new Error(`child exited (${code}) before the kill: ${stderr}`));
      else resolve({ reported, signal });
    });
  });
}

describe("crash safety (SIGKILL during a bulk import)", () => {
  it("every batch reported as committed survives; the database is intact", async () => {
    const dbPath = join(dir, "crash.db");
    const { reported } = await runAndKill(dbPath, 5);
    expect(reported.length).toBeGreaterThanOrEqual(5);
    expect(reported).toEqual(reported.map((_, i) => i + 1));
    const last = reported[reported.length - 1] as number;

    const db = new Database(dbPath);
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    // FTS5's own structural check of the full-text index.
    expect(() =>
      db.exec("INSERT INTO memory_fts(memory_fts) VALUES('integrity-check')"),
    ).not.toThrow();
    const has = db.prepare("SELECT count(*) AS n FROM memories WHERE memory_id = ?");
    for (let b = 1; b <= last; b++) {
      for (let k = 0; k < BATCH; k++) {
        expect((has.get(`b${b}-${k}`) as { n: number }).n).toBe(1);
      }
    }
    // Nothing half-written: whole batches only, and the stored count matches the rows.
    const rows = (db.prepare("SELECT count(*) AS n FROM memories").get() as { n: number }).n;
    expect(rows % BATCH).toBe(0);
    expect(rows).toBeGreaterThanOrEqual(last * BATCH);
    db.close();

    const store = openStore(dbPath);
    try {
      expect(store.count()).toBe(rows);
      const hits = store.recall(`batch ${last} crashproof`, {
        userScope: "u0",
        asOf: AS_OF,
        limit: 5,
      });
      expect(hits.length).toBeGreaterThan(0);
      // The store keeps working after the crash.
      store.add([
        {
          memoryId: "after-crash",
          userScope: "u0",
          content: "written after recovery",
          source: { sourceId: "s", sourceType: "t", title: "t", capturedAt: AS_OF },
        },
      ]);
      expect(store.count()).toBe(rows + 1);
    } finally {
      store.close();
    }
  });
});
