/**
 * Record and replay (docs/inspector.md): the committed recording of the example workspace
 * replays clean, a changed decision shows up as a readable diff, a chat turn replays as
 * the chat assembled it, and a bad file is refused with the offending line and field.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { cacheBreak, shortHash } from "../../src/cache/index.js";
import { PromptctxError } from "../../src/errors/index.js";
import { ToolState } from "../../src/sources/index.js";
import {
  type AssembleRecordRequest,
  compareResponses,
  createChatSession,
  createRecorder,
  formatReplay,
  isErrorResponse,
  layerSpans,
  loadWorkspace,
  loadWorkspaceConfig,
  parseRecording,
  RECORD_VERSION,
  replayRecording,
  runAssembleRequest,
  runChatRequest,
  storeTarget,
  toRecordResponse,
  withoutStorePassword,
  withRecordedStore,
} from "../../src/workspace/index.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const FIXTURE = join(ROOT, "test/fixtures/recordings/example.jsonl");
const EXAMPLE = join(ROOT, "examples/workspace");
const NOW = "2026-11-30T09:00:00Z";
const SEED = { seed: { jsonl: readFileSync(join(EXAMPLE, "memories.jsonl"), "utf8"), now: NOW } };
const QUERY = "add an index on invoices.created_at in a new migration";

const tmp = mkdtempSync(join(tmpdir(), "promptctx-record-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const fixtureLines = () => parseRecording(readFileSync(FIXTURE, "utf8"));

/** The report text of a replay in which nothing changed. */
function cleanReport(lines: ReturnType<typeof fixtureLines>): string {
  const rows = lines.map((l) => {
    const q = typeof l.request.query === "string" ? ` · ${JSON.stringify(l.request.query)}` : "";
    return `line ${l.line} · ${l.kind} · ${String(l.request.now)}${q}: unchanged`;
  });
  return `${rows.join("\n")}\nreplay: ${lines.length} lines, nothing changed\n`;
}

function invalid(fn: () => unknown): PromptctxError {
  try {
    fn();
  } catch (err) {
    if (err instanceof PromptctxError) return err;
    throw err;
  }
  throw new Error("expected a typed error");
}

describe("the committed recording of the example workspace", () => {
  it("replays clean: a change that alters a decision fails here with the diff", async () => {
    const lines = fixtureLines();
    expect(lines.map((l) => l.kind)).toEqual([
      "assemble",
      "assemble",
      "assemble",
      "assemble",
      "chat",
      "chat",
      "assemble",
    ]);
    const report = await replayRecording(lines, dirname(FIXTURE));
    // On failure vitest prints the two texts line by line: what changed, where, how.
    expect(formatReplay(report)).toBe(cleanReport(lines));
    expect(report.changed).toBe(0);
  });

  it("carries relative paths, its own memories and pinned clocks", () => {
    for (const l of fixtureLines()) {
      expect(l.recordVersion).toBe(RECORD_VERSION);
      expect(l.request.workspace).toBe("../../../examples/workspace");
      expect(l.request.store).toEqual(SEED);
      expect(l.at.startsWith(String(l.request.now).slice(0, 16))).toBe(true);
      if (!isErrorResponse(l.response)) expect("timings" in l.response.manifest).toBe(false);
    }
  });

  it("locates every included layer of every turn in its prompt", () => {
    for (const l of fixtureLines()) {
      if (isErrorResponse(l.response)) continue;
      const r = l.response;
      const spans = layerSpans(r);
      const included = r.manifest.layers.filter((x) => x.status === "included");
      expect(spans.map((s) => s.id)).toEqual(included.map((x) => x.id));
      for (const s of spans) {
        const layer = included.find((x) => x.id === s.id);
        expect(shortHash(r.prompt.slice(s.start, s.end))).toBe(layer?.versionId);
      }
    }
  });
});

describe("replay reports what changed", () => {
  it("a decision recorded differently: by id and reason, with prompt bytes and cache keys", async () => {
    const lines = fixtureLines();
    // Line 2 recalls a memory (its recall_memory layer is included).
    const line = lines[1];
    if (line === undefined || isErrorResponse(line.response)) throw new Error("fixture line 2");
    // As if an older build had dropped the memory layer and written another prompt.
    const r = structuredClone(line.response);
    const layer = r.manifest.layers.find((l) => l.id === "recall_memory");
    if (layer === undefined) throw new Error("no recall_memory layer");
    layer.status = "dropped";
    layer.reason = "char_budget_exceeded";
    r.prompt = r.prompt.replace("## Related memories", "## Memories");
    r.manifest.cacheKeys.dynamic = "0000000000000000";
    const report = await replayRecording([{ ...line, response: r }], dirname(FIXTURE));
    expect(report.changed).toBe(1);
    const text = formatReplay(report);
    expect(text).toContain("line 2 · assemble · 2026-11-30T09:05:00Z");
    expect(text).toContain(
      "  layer recall_memory: dropped/char_budget_exceeded → included/fits_budget",
    );
    expect(text).toMatch(/ {2}prompt: \d+ → \d+ bytes, first change at byte \d+/);
    // The recorded side had no memory layer in its prompt: all of its bytes are new.
    expect(text).toMatch(/ {2}first changed layer recall_memory \(0 → \d+ bytes, at byte 0\):/);
    expect(text).toContain('    - ""');
    expect(text).toContain('    + "## Related memories\\n- For this new migration');
    expect(text).toMatch(
      / {2}cache keys: dynamic 0000000000000000 → [0-9a-f]{16}; cache breaks at dynamic/,
    );
    expect(text.endsWith("replay: 1 line, 1 changed (line 2)\n")).toBe(true);
  });

  it("a workspace edited since the recording: the KB chunk's decision and bytes", async () => {
    const ws = join(tmp, "ws-edit");
    cpSync(EXAMPLE, ws, { recursive: true });
    const request: AssembleRecordRequest = {
      workspace: "ws-edit",
      query: QUERY,
      now: NOW,
      store: SEED,
    };
    const file = join(tmp, "edit.jsonl");
    const recorder = createRecorder(file, { at: () => NOW });
    recorder.recordLine("assemble", request, await runAssembleRequest(request, tmp));
    const kb = join(ws, ".promptctx/kb/runbooks.jsonl");
    writeFileSync(
      kb,
      readFileSync(kb, "utf8").replace("batches of 10,000 rows", "batches of a thousand rows"),
    );
    const report = await replayRecording(parseRecording(readFileSync(file, "utf8")), tmp);
    const diff = report.lines[0]?.diff;
    expect(diff?.same).toBe(false);
    expect(diff?.cacheBreak).toBe("dynamic");
    expect(diff?.firstChangedLayer).toMatchObject({
      layer: "kb",
      removed: "10,000",
      added: "a thousand",
    });
    expect(formatReplay(report)).toContain("  first changed layer kb (");
  });

  it("compares errors too: an assembly that now fails closed", async () => {
    const request: AssembleRecordRequest = {
      workspace: EXAMPLE,
      query: QUERY,
      now: NOW,
      store: SEED,
      budgetChars: 6000,
    };
    const ok = toRecordResponse(await runAssembleRequest(request, tmp));
    const file = join(tmp, "fails.jsonl");
    const line = {
      recordVersion: 1,
      at: NOW,
      kind: "assemble",
      request: { ...request, budgetChars: 100 },
      response: ok,
    };
    writeFileSync(file, `${JSON.stringify(line)}\n`);
    const report = await replayRecording(parseRecording(readFileSync(file, "utf8")), tmp);
    expect(report.lines[0]?.diff.errors).toEqual({ before: null, after: "prompt_budget_exceeded" });
    expect(formatReplay(report)).toContain("  outcome: assembled → prompt_budget_exceeded");
  });
});

describe("what a line records", () => {
  it("the request checked, the response without timings; a request that cannot rerun is refused", async () => {
    const file = join(tmp, "rec.jsonl");
    const recorder = createRecorder(file, { at: () => "2026-12-01T10:00:00.000Z" });
    const request: AssembleRecordRequest = {
      workspace: EXAMPLE,
      query: QUERY,
      now: NOW,
      store: SEED,
    };
    const out = await runAssembleRequest(request, tmp);
    recorder.recordLine("assemble", request, out);
    const [line] = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(Object.keys(line ?? {})).toEqual(["recordVersion", "at", "kind", "request", "response"]);
    expect(line).toMatchObject({
      recordVersion: 1,
      at: "2026-12-01T10:00:00.000Z",
      kind: "assemble",
      request,
    });
    const response = line?.response as Record<string, Record<string, unknown>>;
    expect(Object.keys(response)).toEqual(["prompt", "manifest", "memoryPlan", "segmentPlan"]);
    expect(response.manifest?.timings).toBeUndefined();
    expect(response.manifest?.cacheKeys).toEqual(out.manifest.cacheKeys);
    const bad = { ...request, now: "yesterday" };
    const err = invalid(() => recorder.recordLine("assemble", bad, out));
    expect(err.path).toBe("request.now");
  });

  it("a chat turn replays as the chat session assembled it, tool calls of earlier turns included", async () => {
    const base = { workspace: EXAMPLE, store: SEED };
    const later = "2026-11-30T09:01:00Z";
    const call = { tool: "read_file", ok: true, summary: "AGENTS.md (120 bytes)", at: NOW };
    // The chat's own path: one workspace, one session, the tool state carried between turns.
    const turns = await withRecordedStore(SEED, tmp, async (store) => {
      const config = await loadWorkspaceConfig(EXAMPLE);
      const toolState = new ToolState(config.tools ?? []);
      const ws = await loadWorkspace({ workspace: EXAMPLE, store, toolState });
      try {
        const session = createChatSession(ws, config);
        const first = await session.beginTurn({ text: "add a currency column", now: NOW });
        toolState.recordCall(call);
        const second = await session.beginTurn({ text: "now write the migration", now: later });
        return [first, second].map(toRecordResponse);
      } finally {
        await ws.close();
      }
    });
    const replayed = [
      await runChatRequest(
        { ...base, query: "add a currency column", now: NOW, turn: 1, toolCalls: [] },
        tmp,
      ),
      await runChatRequest(
        { ...base, query: "now write the migration", now: later, turn: 2, toolCalls: [call] },
        tmp,
      ),
    ].map(toRecordResponse);
    expect(replayed).toEqual(turns);
    const diff = compareResponses(replayed[0] as never, replayed[1] as never);
    expect(diff.layers.map((l) => l.id)).toContain("tool_state");
  });
});

describe("the diff of two responses", () => {
  it("names the tier src/cache says broke first and the first changed layer's bytes", () => {
    const lines = fixtureLines();
    const [a, b] = [lines[1]?.response, lines[2]?.response];
    if (a === undefined || b === undefined || isErrorResponse(a) || isErrorResponse(b))
      throw new Error("fixture");
    const diff = compareResponses(a, b);
    expect(diff.cacheBreak).toBe(cacheBreak(a.manifest.cacheKeys, b.manifest.cacheKeys));
    expect(diff.cacheBreak).toBe("session");
    expect(diff.firstChangedLayer?.layer).toBe("skills");
    expect(diff.firstChangedLayer?.added).toContain("[skill changelog]");
    expect(diff.prompt.bytesBefore).toBe(Buffer.byteLength(a.prompt));
    expect(compareResponses(a, a)).toMatchObject({
      same: true,
      decisions: [],
      layers: [],
      cacheBreak: null,
    });
  });
});

describe("a bad recording is refused with the line and the field", () => {
  const good = readFileSync(FIXTURE, "utf8").split("\n")[0] as string;
  const edit = (f: (l: Record<string, unknown>) => void) => {
    const l = JSON.parse(good) as Record<string, unknown>;
    f(l);
    return JSON.stringify(l);
  };
  it.each([
    ["not JSON", `${good}\n{oops`, "lines[1]", /^line 2 is not valid JSON/],
    [
      "another version",
      edit((l) => {
        l.recordVersion = 2;
      }),
      "lines[0].recordVersion",
      /^line 1: /,
    ],
    [
      "an unknown kind",
      edit((l) => {
        l.kind = "teleport";
      }),
      "lines[0].kind",
      /unknown kind "teleport"/,
    ],
    [
      "a request that cannot rerun",
      edit((l) => {
        (l.request as Record<string, unknown>).now = "soon";
      }),
      "lines[0].request.now",
      /ISO-8601/,
    ],
    [
      "a response without a prompt",
      edit((l) => {
        delete (l.response as Record<string, unknown>).prompt;
      }),
      "lines[0].response.prompt",
      /^line 1: /,
    ],
    ["nothing at all", "\n\n", "lines", /no lines/],
  ])("%s", (_name, text, path, message) => {
    const err = invalid(() => parseRecording(text));
    expect(err.code).toBe("invalid_input");
    expect(err.path).toBe(path);
    expect(err.message).toMatch(message);
  });

  it("kinds this build cannot rerun are still readable for the inspector", () => {
    const text = JSON.stringify({ ...JSON.parse(good), kind: "assemble-context", request: {} });
    expect(parseRecording(text, { anyKind: true })[0]?.kind).toBe("assemble-context");
  });
});

describe("a postgres:// store in a recording", () => {
  const url = "postgres://app:s3cret@db.internal:5432/promptctx";
  const request: AssembleRecordRequest = {
    workspace: "/w",
    query: "q",
    now: "2026-11-30T09:00:00Z",
    store: { path: url },
  };

  it("is kept as a URL (never resolved as a path) and loses its password when recorded", () => {
    expect(storeTarget(url)).toBe(url);
    expect(storeTarget("memory.db")).toBe(join(process.cwd(), "memory.db"));
    expect(withoutStorePassword(request).store).toEqual({
      path: "postgres://app@db.internal:5432/promptctx",
    });
    const noPassword = { ...request, store: { path: "postgres://app@db/x" } };
    expect(withoutStorePassword(noPassword)).toBe(noPassword);
  });

  it("the recorder writes no password; a replay passes the URL through as is", async () => {
    const dir = mkdtempSync(join(tmpdir(), "promptctx-record-pg-"));
    try {
      const file = join(dir, "pg.jsonl");
      const recorder = createRecorder(file, { at: () => "2026-11-30T09:00:00.000Z" });
      recorder.recordLine("assemble", request, {
        error: { code: "source_failed", message: "down", path: null },
      });
      const text = readFileSync(file, "utf8");
      expect(text).not.toContain("s3cret");
      expect(parseRecording(text)[0]?.request).toMatchObject({
        store: { path: "postgres://app@db.internal:5432/promptctx" },
      });
      const seen = await withRecordedStore({ path: url }, dir, async (p) => p);
      expect(seen).toBe(url);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
