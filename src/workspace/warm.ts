/**
 * Warm workspaces for a long-running service: each workspace is read once (config,
 * instruction chain, skills, KB) with its sources built once over one open memory store,
 * and revalidated before every use by the signatures of what it read (fingerprint.ts).
 * A change on disk is seen by the next assembly; nothing is re-read while nothing changed.
 * Results are those of {@link assembleWorkspace} for the same request.
 */
import { realpathSync } from "node:fs";
import { join } from "node:path";
import { assemble } from "../assemble/assemble.js";
import type { AssembleSegment, Assembly, SchemaRegistry } from "../assemble/index.js";
import { createLayerMemo, type LayerMemo } from "../assemble/memo/index.js";
import type { ContextSource } from "../sources/index.js";
import type { MemoryStore } from "../store/index.js";
import type { WorkspaceConfig } from "./config.js";
import { workspaceFilePath } from "./confined.js";
import {
  readWorkspaceFiles,
  WORKSPACE_PATHS,
  type WorkspaceFiles,
  workspaceSources,
} from "./files.js";
import {
  recheck,
  type Signatures,
  sameSignature,
  signaturesOf,
  watchedPaths,
} from "./fingerprint.js";
import {
  assemblySettings,
  configSegments,
  type WorkspaceAssembleOptions,
  workspaceSchema,
} from "./workspace.js";

/**
 * When a request arrived, as {@link WarmWorkspaces.arrival} stamped it: opaque, and only
 * ever read by the workspaces that issued it (any other object counts as no stamp).
 */
export interface Arrival {
  readonly arrival: true;
}

/**
 * What one assembly over a warm workspace takes (its files and store are the cache's), and
 * `arrivedAt`: the {@link WarmWorkspaces.arrival} stamp taken when the request arrived.
 */
export type WarmAssembleOptions = Omit<
  WorkspaceAssembleOptions,
  "workspace" | "store" | "openStore" | "cwd" | "userFiles" | "home" | "toolState"
> & { arrivedAt?: Arrival };

/** One loaded workspace. */
interface Entry {
  files: WorkspaceFiles;
  sigs: Signatures;
  /** The workspace's real path: the only place read for a digest. */
  within: string;
  /** False when something changed while it was read: it is read again at next use. */
  stable: boolean;
  /** The stamp taken just before its signatures were last found to hold. */
  checkedAt: number;
  sources: ContextSource[];
  segments: AssembleSegment[];
  schemas: Map<string, SchemaRegistry>;
  /** The slots packed for earlier requests: unchanged ones are reused, not repacked. */
  layerMemo: LayerMemo;
}

/** The real path of `p`, else `p`. */
function realOr(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/** Reads of one workspace before giving up on a stable snapshot (it is then read at next use). */
const MAX_READS = 3;

// The same paths with the same signatures.
function sameSignatures(before: Signatures, after: Signatures): boolean {
  if (before.size !== after.size) return false;
  for (const [p, s] of after) {
    const was = before.get(p);
    if (was === undefined || !sameSignature(was, s)) return false;
  }
  return true;
}

/**
 * Warm workspaces by root (a real path). `store`: the memory store every workspace reads
 * (the service's shared one); without it, each workspace's own `.promptctx/memory.db` is
 * opened once, when it exists, and closed by {@link WarmWorkspaces.close}.
 */
export class WarmWorkspaces {
  readonly #entries = new Map<string, Entry>();
  readonly #loading = new Map<string, Promise<Entry>>();
  readonly #stores = new Map<string, MemoryStore>();
  readonly #shared: MemoryStore | null;
  readonly #maxEntries: number;
  /** The wall clock in ms, to tell a file changed just before it was signed (fingerprint.ts). */
  readonly #wallMs: () => number;
  /** Stamps of arrivals and checks, in the order they happened. */
  #clock = 0;
  /** The stamp of each arrival this instance issued (a forged one is not in it). */
  readonly #arrivals = new WeakMap<Arrival, number>();

  /**
   * `clock`: the wall clock in epoch ms (default the process's), compared with file times
   * only to decide which files to sign by content as well as by stat: it never changes
   * an answer, only how a change on disk is noticed.
   */
  constructor(
    options: { store?: MemoryStore | null; maxEntries?: number; clock?: () => number } = {},
  ) {
    this.#shared = options.store ?? null;
    this.#maxEntries = options.maxEntries ?? 64;
    this.#wallMs = options.clock ?? (() => performance.timeOrigin + performance.now());
  }

  /**
   * A stamp for a request that has just arrived. Passed back as `arrivedAt`, it lets the
   * request use a check of the workspace's signatures that began after it arrived — that
   * check saw every change made before the request was sent — instead of checking again:
   * requests that arrive together under load share one check, and a change on disk is
   * still seen by every request sent after it. Without it, every use checks.
   *
   * @example
   * const arrivedAt = workspaces.arrival(); // first thing in the request handler
   * await workspaces.assemble(root, { query, now, arrivedAt });
   */
  arrival(): Arrival {
    const stamp: Arrival = Object.freeze({ arrival: true });
    this.#arrivals.set(stamp, ++this.#clock);
    return stamp;
  }

  /** The workspace's config, as of now (or as of a check after `arrivedAt`). */
  async config(root: string, arrivedAt?: Arrival): Promise<WorkspaceConfig> {
    return (await this.#get(root, arrivedAt)).files.config;
  }

  /** Assembles `options.query` over the workspace at `root`, as {@link assembleWorkspace} would. */
  async assemble(root: string, options: WarmAssembleOptions): Promise<Assembly> {
    const entry = await this.#get(root, options.arrivedAt);
    const { config } = entry.files;
    const { mode, user, tokenCounter, renderer, budgetChars, budgetTokens } = assemblySettings(
      { ...options, workspace: root },
      config,
    );
    let schemas = entry.schemas.get(mode);
    if (schemas === undefined) {
      schemas = workspaceSchema(mode).schemas;
      entry.schemas.set(mode, schemas);
    }
    return assemble({
      mode,
      query: { text: options.query, userScope: user },
      now: options.now,
      sources: entry.sources,
      segments: entry.segments,
      schemas,
      tokenCounter,
      renderer,
      budgetChars,
      budgetTokens,
      layerMemo: entry.layerMemo,
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      trace: { ...(options.model !== undefined ? { model: options.model } : {}), ...options.trace },
    });
  }

  /** Forgets every workspace and closes the stores it opened. */
  async close(): Promise<void> {
    this.#entries.clear();
    const stores = [...this.#stores.values()];
    this.#stores.clear();
    for (const s of stores) await s.close();
  }

  // The entry of `root`: the loaded one while its signatures hold, else read again (one
  // read at a time per root, shared by the requests that wait for it).
  #get(root: string, arrivedAt?: Arrival): Promise<Entry> {
    const pending = this.#loading.get(root);
    if (pending !== undefined) return pending;
    const entry = this.#entries.get(root);
    // Checked after the request arrived: that check saw what the request could.
    const arrived = arrivedAt === undefined ? undefined : this.#arrivals.get(arrivedAt);
    const fresh = arrived !== undefined && entry !== undefined && entry.checkedAt > arrived;
    if (entry?.stable && (fresh || this.#check(entry))) {
      // Most recently used last: the first entry is the one evicted.
      this.#entries.delete(root);
      this.#entries.set(root, entry);
      return Promise.resolve(entry);
    }
    const load = this.#load(root, entry?.sigs ?? null).finally(() => this.#loading.delete(root));
    this.#loading.set(root, load);
    return load;
  }

  // Whether the entry's signatures still hold; when they do, it was checked as of now.
  #check(entry: Entry): boolean {
    const checkedAt = ++this.#clock;
    const sigs = recheck(entry.sigs, this.#wallMs(), entry.within);
    if (sigs === null) return false;
    entry.sigs = sigs;
    entry.checkedAt = checkedAt;
    return true;
  }

  async #load(root: string, previous: Signatures | null): Promise<Entry> {
    const checkedAt = ++this.#clock;
    // Only what lies inside the workspace is ever read for a digest (fingerprint.ts).
    const within = realOr(root);
    const sign = () => ({ nowMs: this.#wallMs(), within });
    let before = previous === null ? null : signaturesOf(previous.keys(), sign(), previous);
    for (let read = 1; ; read++) {
      const files = await readWorkspaceFiles(root, {});
      const store = await this.#storeOf(root);
      const paths = watchedPaths(files, join(root, WORKSPACE_PATHS.config));
      // A workspace without its own store yet is read again once the file appears.
      if (this.#shared === null && store === null) paths.add(join(root, WORKSPACE_PATHS.store));
      const sigs = signaturesOf(paths, sign(), before ?? undefined);
      // Stable: every path had the same signature before the reads began.
      const stable = before !== null && sameSignatures(before, sigs);
      if (stable || read >= MAX_READS) {
        return this.#keep(root, files, { sigs, within }, stable, store, checkedAt);
      }
      before = sigs;
    }
  }

  #keep(
    root: string,
    files: WorkspaceFiles,
    { sigs, within }: { sigs: Signatures; within: string },
    stable: boolean,
    store: MemoryStore | null,
    checkedAt: number,
  ): Entry {
    const entry: Entry = {
      files,
      sigs,
      within,
      stable,
      checkedAt,
      sources: workspaceSources(files, store),
      segments: configSegments(files.config),
      schemas: new Map(),
      layerMemo: createLayerMemo(),
    };
    this.#entries.delete(root);
    this.#entries.set(root, entry);
    if (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
    return entry;
  }

  // The store the workspace's assemblies read: the shared one, else its own file (opened once).
  async #storeOf(root: string): Promise<MemoryStore | null> {
    if (this.#shared !== null) return this.#shared;
    const open = this.#stores.get(root);
    if (open !== undefined) return open;
    // Confined to the workspace, opened by its checked real path (confined.ts).
    const path = await workspaceFilePath(join(root, WORKSPACE_PATHS.store), root, "store");
    if (path === null) return null;
    const { openStore } = await import("../store/index.js");
    // Another load of the same root may have opened it meanwhile.
    const again = this.#stores.get(root);
    if (again !== undefined) return again;
    const store = openStore(path, { mustExist: true });
    this.#stores.set(root, store);
    return store;
  }
}
