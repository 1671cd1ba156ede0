/**
 * Recall by meaning for the `memory` verbs: the `--embedder` flag (else
 * `PROMPTCTX_EMBEDDER`, else the embedded encoder), the hybrid store over an SQLite
 * or PostgreSQL store, the `memory reembed` verb and how an embedding failure is reported (the records
 * are stored, their vectors pending). The encoder is imported only here, only by the verbs
 * that write or recall memories.
 */
import type { Command } from "commander";
import { PromptctxError } from "../../errors/index.js";
import type {
  EmbedProgress,
  EmbedReport,
  HybridMemoryStore,
  OpenedStore,
  PostgresMemoryStore,
} from "../../store/index.js";
import { EXIT, exitCodeFor, reportError } from "../io.js";
import { renderProgress } from "../progress.js";
import { openExisting, type StoreFlags, storeOptions } from "./flags.js";

/** `--embedder` as given (and where the store is, for the workspace config). */
export interface EmbedderFlags {
  embedder?: string;
  store?: string;
  workspace?: string;
}

/**
 * The workspace config's `memory.embedder` when the store is the workspace's own
 * (`--workspace DIR`, or the current directory without `--store`) and the config exists.
 */
async function configEmbedder(flags: EmbedderFlags): Promise<string | undefined> {
  if (flags.store !== undefined) return undefined;
  const { resolve, join } = await import("node:path");
  const { existsSync } = await import("node:fs");
  const { loadWorkspaceConfig, WORKSPACE_PATHS } = await import("../../workspace/index.js");
  const root = resolve(flags.workspace ?? ".");
  if (!existsSync(join(root, WORKSPACE_PATHS.config))) return undefined;
  return (await loadWorkspaceConfig(root)).memory?.embedder;
}

/** A store the memory verbs use: plain (full-text) or hybrid (either dialect). */
export type MemoryVerbStore =
  | OpenedStore
  | HybridMemoryStore
  | HybridMemoryStore<PostgresMemoryStore>;

/**
 * The store with recall by meaning when an embedder is chosen (`--embedder`, else the
 * workspace config's `memory.embedder`, else `PROMPTCTX_EMBEDDER`, else the embedded
 * encoder): SQLite with `sqlite-vec`, PostgreSQL with `pgvector` (without the extension a
 * PostgreSQL store recalls by words and its hints say so). `migrate`: do not refuse a
 * store recorded with another embedder (`memory reembed` migrates it). `oneText`: the verb
 * embeds one text (a recall's query): the embedded encoder's kernels stay on the calling
 * thread unless `PROMPTCTX_EMBEDDER_THREADS` says otherwise — handed to a second thread,
 * each of a one-text run's small kernels waited for it (105–116 ms a call against 31–34 ms
 * on one thread at load ~1.2, docs/sources.md "Recall by meaning").
 *
 * @example const store = await withMeaning(await openForWrite(flags), flags);
 */
export async function withMeaning(
  store: OpenedStore,
  flags: EmbedderFlags,
  options: { migrate?: boolean; oneText?: boolean } = {},
): Promise<MemoryVerbStore> {
  const { SqliteMemoryStore, hybridStore, openHybrid } = await import("../../store/index.js");
  const { chooseEmbedderSpec, createEmbedder } = await import("../../embed/index.js");
  try {
    const config = await configEmbedder(flags);
    const spec = chooseEmbedderSpec({ flag: flags.embedder, config, env: process.env });
    const oneThread = options.oneText === true && !process.env.PROMPTCTX_EMBEDDER_THREADS;
    const env = oneThread ? { ...process.env, PROMPTCTX_EMBEDDER_THREADS: "0" } : process.env;
    const embedder = await createEmbedder(spec, env);
    if (embedder === null) return store;
    if (store instanceof SqliteMemoryStore) return hybridStore(store, embedder, options);
    return await openHybrid(store, embedder, options);
  } catch (err) {
    await store.close();
    throw err;
  }
}

/** Adds `--embedder` to a memory verb. */
export function embedderOption(cmd: Command): Command {
  return cmd.option(
    "--embedder <spec>",
    "recall by meaning: embedded (default; offline), openai:MODEL[:DIMENSIONS] (OpenAI-compatible /v1/embeddings at OPENAI_BASE_URL), or none (full-text only); default from PROMPTCTX_EMBEDDER",
  );
}

/** A progress reporter on stderr when it is a terminal, else nothing. */
export function embedProgress(label: string): ((p: EmbedProgress) => void) | undefined {
  if (!process.stderr.isTTY) return undefined;
  return (p) => process.stderr.write(`\r${label} ${renderProgress(p.done, p.total)}`);
}

/**
 * Reports an embedding failure after a write on stderr (the records are stored, their
 * vectors pending) and returns the exit code it deserves (`connection_refused` → 1).
 */
export function reportEmbedFailure(verb: string, report: Partial<EmbedReport>): number {
  if (report.embedError === undefined) return EXIT.ok;
  const { code, message } = report.embedError;
  process.stderr.write(
    `promptctx ${verb}: ${code}: ${message} — records stored; ${report.pending ?? 0} vector(s) pending: run \`promptctx memory reembed\` when the embedder is back\n`,
  );
  return exitCodeFor(new PromptctxError(code as PromptctxError["code"], message));
}

interface ReembedOpts extends StoreFlags, EmbedderFlags {
  json?: boolean;
}

async function runReembed(opts: ReembedOpts): Promise<number> {
  const store = await withMeaning(await openExisting(opts), opts, { migrate: true });
  try {
    if (!("reembed" in store)) {
      throw new PromptctxError(
        "invalid_input",
        "memory reembed needs an embedder (--embedder none has no vectors)",
        "--embedder",
      );
    }
    const before = store.base.vectors.recorded?.embedder ?? null;
    const onProgress = embedProgress("embedding");
    const report = await store.reembed({ migrate: true, ...(onProgress ? { onProgress } : {}) });
    if (onProgress) process.stderr.write("\n");
    const result = {
      embedder: store.embedder.id,
      migratedFrom: before === store.embedder.id ? null : before,
      ...report,
    };
    if (opts.json) process.stdout.write(`${JSON.stringify(result)}\n`);
    else {
      const from =
        result.migratedFrom === null
          ? ""
          : ` (migrated from ${result.migratedFrom ?? "no embedder"})`;
      process.stdout.write(
        `embedded ${report.embedded} memory(ies) with ${store.embedder.id}${from}; ${report.pending} pending\n`,
      );
    }
    return reportEmbedFailure("memory reembed", report);
  } finally {
    await store.close();
  }
}

/** Adds `memory reembed` to the `memory` command. */
export function registerReembed(memory: Command, setExit: (code: number) => void): void {
  embedderOption(storeOptions(memory.command("reembed")))
    .description("fill pending vectors, or migrate the store to another embedder")
    .option("--json", "print {embedder, migratedFrom, embedded, pending}")
    .addHelpText(
      "after",
      "\nFills the vectors of memories stored while the embedder failed or was off, or migrates\nthe store to --embedder (every vector dropped and embedded again). Resumable: run it again\nafter an interruption.",
    )
    .action(async (opts: ReembedOpts) => {
      try {
        setExit(await runReembed(opts));
      } catch (err) {
        setExit(reportError(err, "memory reembed"));
      }
    });
}
