/**
 * `promptctx memory add|import|export|recall` over the memory store (docs/surfaces.md). The store
 * is `--store PATH` (an SQLite file) or `--store postgres://…` (the shared PostgreSQL
 * store), or `DIR/.promptctx/memory.db` for `--workspace DIR` (default: the current
 * directory). Errors follow io.ts: error object on stdout, one line on stderr, exit 2 for
 * invalid input. The shared store flags are in flags.ts, recall in recall.ts.
 */
import { closeSync, createReadStream, openSync, statSync, writeSync } from "node:fs";
import type { Command } from "commander";
import { InvalidInputError, nodeErrorCode, PromptctxError } from "../../errors/index.js";
import {
  type AddResult,
  derivedMemoryId,
  type EmbedReport,
  type ImportResult,
  type MemoryRecordInput,
} from "../../store/index.js";
import { EXIT, reportError } from "../io.js";
import { renderProgress } from "../progress.js";
import { summaryOf } from "../verbs.js";
import {
  listFlag,
  nowFlag,
  numberFlag,
  openExisting,
  openForWrite,
  type StoreFlags,
  storeOptions,
} from "./flags.js";
import { registerMemoryManageCommands } from "./manage.js";
import {
  type EmbedderFlags,
  embedderOption,
  embedProgress,
  registerReembed,
  reportEmbedFailure,
  withMeaning,
} from "./meaning.js";
import { type RecallOpts, runRecall } from "./recall.js";

export { renderProgress } from "../progress.js";

/** Files at least this large get a progress bar (when stderr is a TTY). */
export const PROGRESS_MIN_BYTES = 1024 * 1024;

/** Lines in a file (newline count, plus one for a last line without a newline). */
async function countLines(file: string): Promise<number> {
  let n = 0;
  let last = 0x0a;
  for await (const chunk of createReadStream(file)) {
    const buf = chunk as Buffer;
    let i = buf.indexOf(0x0a);
    while (i !== -1) {
      n++;
      i = buf.indexOf(0x0a, i + 1);
    }
    if (buf.length > 0) last = buf[buf.length - 1] as number;
  }
  return last === 0x0a ? n : n + 1;
}

// `records[0].userScope` → `--user`: errors of `memory add` name the flag to fix.
const ADD_FLAG_FOR_FIELD: Readonly<Record<string, string>> = {
  memoryId: "--id",
  userScope: "--user",
  content: "--text",
  kind: "--kind",
  category: "--category",
  tags: "--tags",
  summary: "--summary",
  importance: "--importance",
  conflictKey: "--conflict-key",
  authority: "--authority",
  "source.sourceId": "--source-id",
  "source.sourceType": "--source-type",
  "source.title": "--title",
  "source.capturedAt": "--now",
};

function flagError(err: unknown): unknown {
  if (!(err instanceof PromptctxError) || err.path === null) return err;
  const m = /^records\[0\]\.([a-zA-Z.]+?)(?:\[\d+\])?$/.exec(err.path);
  const flag = m ? ADD_FLAG_FOR_FIELD[m[1] as string] : undefined;
  if (flag === undefined) return err;
  const message = err.message.replace(/^records\[0\]\.[^:]*: /, `${flag}: `);
  // A gate refusal keeps its own code (memory_rejected); only its path names the flag.
  if (err.code === "memory_rejected") return new PromptctxError(err.code, message, flag);
  return new InvalidInputError(message, flag);
}

interface AddOpts extends StoreFlags, EmbedderFlags {
  user: string;
  text: string;
  id?: string;
  category: string;
  kind: string;
  tags?: string;
  summary?: string;
  importance: string;
  conflictKey?: string;
  authority?: string;
  sourceId: string;
  sourceType: string;
  title: string;
  now?: string;
  json?: boolean;
}

async function runAdd(opts: AddOpts): Promise<number> {
  const now = nowFlag(opts.now);
  const importance = numberFlag(opts.importance, "--importance", 0, 1, false);
  const memoryId = opts.id ?? derivedMemoryId(opts.user, opts.text, now);
  const record: MemoryRecordInput = {
    memoryId,
    userScope: opts.user,
    kind: opts.kind,
    category: opts.category,
    tags: listFlag(opts.tags) ?? [],
    content: opts.text,
    summary: opts.summary ?? "",
    importance,
    source: {
      sourceId: opts.sourceId,
      sourceType: opts.sourceType,
      title: opts.title,
      capturedAt: now,
    },
    storedAt: now,
  };
  if (opts.conflictKey !== undefined) record.conflictKey = opts.conflictKey;
  if (opts.authority !== undefined)
    record.authority = opts.authority as MemoryRecordInput["authority"];
  const store = await withMeaning(await openForWrite(opts), opts);
  try {
    let result: AddResult & Partial<EmbedReport>;
    try {
      result = await store.add([record]);
    } catch (err) {
      throw flagError(err);
    }
    const status = result.inserted > 0 ? "inserted" : "updated";
    const held = result.quarantined?.[0];
    if (opts.json) {
      const entry = await store.getEntry(memoryId, { userScope: opts.user });
      const record = entry === null ? null : await store.get(memoryId, { userScope: opts.user });
      const vector =
        result.embedError === undefined ? {} : { vector: "pending", embedError: result.embedError };
      process.stdout.write(
        `${JSON.stringify({ memoryId, status, memoryStatus: entry?.status ?? "active", rule: entry?.rule ?? null, version: entry?.version ?? 1, record, ...vector })}\n`,
      );
    } else {
      process.stdout.write(
        `${status} ${memoryId} (scope ${JSON.stringify(opts.user)}) in ${store.path}\n`,
      );
    }
    if (held !== undefined) {
      process.stderr.write(
        `promptctx memory add: quarantined: the text reads as an attempt to take over the model (rule ${held.rule}); it is never recalled until \`promptctx memory approve --user ${JSON.stringify(opts.user)} --id ${JSON.stringify(memoryId)}\`\n`,
      );
    }
    return reportEmbedFailure("memory add", result);
  } finally {
    await store.close();
  }
}

interface ImportOpts extends StoreFlags, EmbedderFlags {
  batchSize: string;
  json?: boolean;
}

async function runImport(file: string, opts: ImportOpts): Promise<number> {
  const batchSize = numberFlag(opts.batchSize, "--batch-size", 1, 1_000_000, true);
  const fromStdin = file === "-";
  let size = 0;
  if (!fromStdin) {
    try {
      size = statSync(file).size;
    } catch (err) {
      const reason = nodeErrorCode(err, "unreadable");
      throw new InvalidInputError(`cannot read ${JSON.stringify(file)} (${reason})`, "FILE");
    }
  }
  const showBar = !fromStdin && Boolean(process.stderr.isTTY) && size >= PROGRESS_MIN_BYTES;
  const total = showBar ? await countLines(file) : 0;
  const store = await withMeaning(await openForWrite(opts), opts);
  let result: ImportResult & Partial<EmbedReport>;
  try {
    const input = fromStdin ? process.stdin : createReadStream(file);
    const onEmbedProgress = embedProgress("embedding");
    result = await store.importJsonl(input, {
      batchSize,
      ...(showBar
        ? { onProgress: (p) => process.stderr.write(`\r${renderProgress(p.lines, total)}`) }
        : {}),
      ...(onEmbedProgress ? { onEmbedProgress } : {}),
    });
    if (showBar) process.stderr.write(`\r${renderProgress(total, total)}\n`);
    if (onEmbedProgress && result.embedded !== undefined) process.stderr.write("\n");
  } finally {
    await store.close();
  }
  const where = fromStdin ? "stdin" : file;
  process.stderr.write(
    `promptctx memory import: imported ${result.imported} record(s), skipped ${result.skipped} line(s) from ${where} into ${store.path}\n`,
  );
  if (result.quarantined !== undefined) {
    process.stderr.write(
      `  quarantined ${result.quarantined.length} record(s) the takeover gate held (see \`promptctx memory list --status quarantined\`)\n`,
    );
  }
  const shown = result.errors.slice(0, 20);
  for (const e of shown) {
    process.stderr.write(`  line ${e.line}: ${e.message}\n`);
  }
  if (result.skipped > shown.length) {
    process.stderr.write(`  … and ${result.skipped - shown.length} more\n`);
  }
  if (result.embedded !== undefined) {
    process.stderr.write(
      `  vectors: ${result.embedded} embedded, ${result.pending ?? 0} pending (recall by meaning)\n`,
    );
  }
  if (opts.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  const embedExit = reportEmbedFailure("memory import", result);
  if (embedExit !== EXIT.ok) return embedExit;
  return result.skipped > 0 ? EXIT.invalid : EXIT.ok;
}

interface ExportOpts extends StoreFlags {
  output?: string;
}

async function runExport(opts: ExportOpts): Promise<void> {
  const store = await openExisting(opts);
  try {
    if (opts.output === undefined) {
      await store.exportJsonl((chunk) => process.stdout.write(chunk));
      return;
    }
    let fd: number;
    try {
      fd = openSync(opts.output, "w");
    } catch (err) {
      const reason = nodeErrorCode(err, "unwritable");
      throw new InvalidInputError(
        `cannot write ${JSON.stringify(opts.output)} (${reason})`,
        "--output",
      );
    }
    try {
      const n = await store.exportJsonl((chunk) => {
        writeSync(fd, chunk);
      });
      process.stderr.write(`promptctx memory export: ${n} record(s) to ${opts.output}\n`);
    } finally {
      closeSync(fd);
    }
  } finally {
    await store.close();
  }
}

/** Adds `memory recall` to the `memory` command. */
function registerRecall(memory: Command, setExit: (code: number) => void): void {
  embedderOption(storeOptions(memory.command("recall")))
    .description(
      "recall in one user scope by words and by meaning, each hit with its score breakdown and both ranks",
    )
    .requiredOption("--user <scope>", "user scope (exact)")
    .requiredOption("--query <text>", "query text")
    .option("--limit <n>", "hits to return", "20")
    .option("--categories <a,b>", "only these categories")
    .option("--now <iso>", "the instant recalled at: ages and versions as then (default: now)")
    .option("--json", "print {userScope, query, asOf, hits} with score breakdowns")
    .option(
      "--wide",
      "table and text at full width (default: fitted to the terminal, else COLUMNS, else 80)",
    )
    .action(async (opts: RecallOpts) => {
      try {
        await runRecall(opts);
        setExit(EXIT.ok);
      } catch (err) {
        setExit(reportError(err, "memory recall"));
      }
    });
}

/**
 * Adds `memory add|import|export|recall` to `program`; `setExit` receives each verb's
 * exit code (0 ok, 2 invalid input — including an import that skipped lines).
 */
export function registerMemoryCommands(program: Command, setExit: (code: number) => void): void {
  const memory = program.command("memory").description(summaryOf("memory"));

  embedderOption(storeOptions(memory.command("add")))
    .description("add (or replace, same id and scope) one memory")
    .requiredOption("--user <scope>", "user scope (exact)")
    .requiredOption("--text <text>", "memory content")
    .option("--id <memoryId>", "memory id (default: derived from scope, text and --now)")
    .option("--category <c>", "category", "general")
    .option("--kind <k>", "kind: profile, conversation, fact, episodic, …", "fact")
    .option("--tags <a,b>", "comma-separated tags")
    .option("--summary <text>", "short summary (profile items show it instead of the text)")
    .option("--importance <x>", "importance in [0, 1]", "0.5")
    .option("--conflict-key <key>", "explicit fact slot, e.g. preference:language")
    .option("--authority <level>", "current_turn | workspace_override | user_default")
    .option("--source-id <id>", "provenance source id", "cli")
    .option("--source-type <type>", "provenance source type", "manual")
    .option("--title <title>", "provenance title", "promptctx memory add")
    .option("--now <iso>", "capture time (default: now)")
    .option("--json", "print {memoryId, status, record}")
    .action(async (opts: AddOpts) => {
      try {
        setExit(await runAdd(opts));
      } catch (err) {
        setExit(reportError(err, "memory add"));
      }
    });

  embedderOption(storeOptions(memory.command("import")))
    .description("import memories from a JSONL file (one record a line; - for stdin)")
    .argument("<file>", "JSONL file, or - for stdin")
    .option("--batch-size <n>", "records per transaction", "1000")
    .option("--json", "print {imported, skipped, errors} on stdout")
    .addHelpText(
      "after",
      "\nBad lines are reported with their line number and skipped; the rest import.\nExit 0 when every line imported, 2 when any line was skipped.",
    )
    .action(async (file: string, opts: ImportOpts) => {
      try {
        setExit(await runImport(file, opts));
      } catch (err) {
        setExit(reportError(err, "memory import"));
      }
    });

  storeOptions(memory.command("export"))
    .description("export every memory as JSONL (ordered by scope, then id)")
    .option("--output <file>", "write to FILE instead of stdout")
    .action(async (opts: ExportOpts) => {
      try {
        await runExport(opts);
        setExit(EXIT.ok);
      } catch (err) {
        setExit(reportError(err, "memory export"));
      }
    });

  registerRecall(memory, setExit);
  registerReembed(memory, setExit);
  registerMemoryManageCommands(memory, setExit);
}
