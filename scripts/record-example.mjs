#!/usr/bin/env node
// Regenerates test/fixtures/recordings/example.jsonl: a session over the example
// workspace recorded through the same runners `assemble`, `demo` and `chat` use. Paths
// are relative to the recording (so it replays from any checkout), the memory store is
// seeded from examples/workspace/memories.jsonl inside each line, every clock is pinned.
// test/record/replay.test.ts replays it: a change that alters a decision fails there.
//
//   npm run record:example        (builds first)
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import {
  createRecorder,
  runAssembleRequest,
  runChatRequest,
  toRecordResponse,
} from "../dist/workspace/index.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const file = join(root, "test/fixtures/recordings/example.jsonl");
const dir = dirname(file);
const workspace = relative(dir, join(root, "examples/workspace"));
const NOW = "2026-11-30T09:00:00Z";
const store = {
  seed: { jsonl: readFileSync(join(root, "examples/workspace/memories.jsonl"), "utf8"), now: NOW },
};
const at = (minute, second = 0) =>
  `2026-11-30T09:${String(minute).padStart(2, "0")}:${String(second).padStart(2, "0")}Z`;

// Each line: kind, request (workspace and store added below), and the wall-clock stamp.
const session = [
  ["assemble", { query: "add an index on invoices.created_at in a new migration", now: at(0) }],
  ["assemble", { query: "add an index on invoices.created_at in a new migration", now: at(5) }],
  [
    "assemble",
    { query: "write the release note for the invoices index", now: at(10), mode: "tool" },
  ],
  [
    "assemble",
    { query: "sev1 incident: invoices API outage, triage it", now: at(15), budgetChars: 2200 },
  ],
  ["chat", { query: "add a currency column to invoices", now: at(20), turn: 1, toolCalls: [] }],
  [
    "chat",
    {
      query: "now write the migration for it",
      now: at(21),
      turn: 2,
      toolCalls: [
        {
          tool: "read_file",
          ok: true,
          summary: "services/billing/AGENTS.md (214 bytes)",
          at: at(20),
        },
        { tool: "run", ok: false, summary: "not allowed: run needs --allow-run", at: at(20) },
      ],
    },
  ],
  ["assemble", { query: "add an index on invoices.created_at", now: at(30), budgetChars: 120 }],
];

const RUN = { assemble: runAssembleRequest, chat: runChatRequest };
mkdirSync(dir, { recursive: true });
rmSync(file, { force: true });
let stamp = NOW;
const recorder = createRecorder(file, { at: () => stamp });
for (const [kind, fields] of session) {
  const request = { workspace, store, ...fields };
  stamp = fields.now.replace(/Z$/, ".500Z");
  let response;
  try {
    response = await RUN[kind](request, dir);
  } catch (err) {
    response = toRecordResponse({
      error: { code: err.code, message: err.message, path: err.path ?? null },
    });
  }
  recorder.recordLine(kind, request, response);
}
process.stdout.write(`wrote ${relative(root, file)} (${session.length} lines)\n`);
