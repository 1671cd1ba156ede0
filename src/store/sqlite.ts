/**
 * The embedded memory store: one SQLite file (better-sqlite3) with an FTS5 index.
 *
 * Durability: `journal_mode=WAL` + `synchronous=NORMAL`. A transaction is committed once
 * its frames are in the WAL file; the WAL is fsynced only at checkpoints. So a committed
 * transaction survives a crash of the process (kill -9), but the last transactions before
 * an OS crash or power loss may be rolled back — never half-applied, never corrupting the
 * file. The trade: one fsync per checkpoint instead of one per commit (`FULL`).
 * `foreign_keys=ON` is set for future migrations.
 *
 * Recall: the query's content terms (terms.ts), the scope's statistics (sqlite-stats.ts),
 * candidates from the FTS5 index of scope-prefixed terms
 * with the scope and categories in the SQL predicate (sqlite-recall.ts), then the same
 * scoring and ranking as every backend (rank.ts, score.ts). The work per recall is
 * bounded whatever the store size: the searched terms' document frequencies sum to at
 * most {@link MATCH_BUDGET} (rarest kept first), and only the best `poolSize` (default
 * 500) candidates are read and scored in full; a memory outside that pool cannot be
 * recalled by this query even if it is very recent or important.
 */
import Database from "better-sqlite3";
import { z } from "zod";
import { InvalidInputError, invalidFromZod, PromptctxError } from "../errors/index.js";
import type { Authority } from "../memory/index.js";
import { instantMillis, isBlank, isoTimestamp, nonBlankString } from "../text/index.js";
import { StoreOpenError, StoreVersionError } from "./errors.js";
import { recallHit } from "./hits.js";
import { readLines } from "./jsonl.js";
import { MIGRATIONS, STORE_SCHEMA_VERSION } from "./migrations.js";
import { scopePrefix } from "./prefix.js";
import {
  type MemoryRecord,
  type MemoryRecordInput,
  parseRecord,
  recordToJsonLine,
} from "./schema.js";
import { checkWeights, DEFAULT_WEIGHTS } from "./score.js";
import { prepareRecall, type RecallStatements, recallRows } from "./sqlite-recall.js";
import { applyStats, prepareStats, StatsDelta, type StatsStatements } from "./sqlite-stats.js";
import { queryTerms, recordTerms } from "./terms.js";
import type {
  AddResult,
  ImportLineError,
  ImportOptions,
  ImportResult,
  JsonlInput,
  ListOptions,
  MemoryStore,
  RecallOptions,
  StoreRecallHit,
} from "./types.js";

export { scopePrefix } from "./prefix.js";

/** `PRAGMA application_id` of promptctx memory stores ("pctx"). */
export const STORE_APPLICATION_ID = 0x70637478;

/** Default number of candidates scored in full per recall. */
export const DEFAULT_POOL_SIZE = 500;

/**
 * Work budget of one recall: the searched terms' document frequencies in the scope sum to
 * at most this. When the query's terms exceed it, the most common are left out of the
 * search (rarest kept first; they carry the most IDF weight; the left-out terms still
 * count in every candidate's score), and if the rarest term alone exceeds it, only its
 * most recently written matches are candidates. Small and specific searches are never
 * affected.
 */
export const MATCH_BUDGET = 10_000;

export interface OpenStoreOptions {
  /** Fail when the file does not exist instead of creating it. Default false. */
  mustExist?: boolean;
  /** Candidates fully scored per recall (≥ limit). Default 500. */
  poolSize?: number;
  /** Document frequencies searched per recall ({@link MATCH_BUDGET}). */
  matchBudget?: number;
  /** How long to wait for another process's write lock, in ms. Default 5000. */
  busyTimeoutMs?: number;
}

interface Row {
  rowid: number;
  memory_id: string;
  user_scope: string;
  kind: string;
  category: string;
  tags: string;
  content: string;
  summary: string;
  importance: number;
  conflict_key: string | null;
  authority: string | null;
  source_id: string;
  source_type: string;
  source_title: string;
  captured_at: string;
  stored_at: string;
}

const COLUMNS = `m.rowid, m.memory_id, m.user_scope, m.kind, m.category, m.tags, m.content,
  m.summary, m.importance, m.conflict_key, m.authority, m.source_id, m.source_type,
  m.source_title, m.captured_at, m.stored_at`;

const nonBlank = nonBlankString;
const timestamp = isoTimestamp;

const RecallOptionsSchema = z.object({
  userScope: nonBlank,
  limit: z.number().int().min(1).max(1000).default(20),
  categories: z.array(z.string()).optional(),
  asOf: timestamp,
  weights: z
    .object({ lexical: z.number(), recency: z.number(), importance: z.number() })
    .optional(),
});

const ListOptionsSchema = z.object({
  userScope: nonBlank,
  kinds: z.array(z.string()).optional(),
  categories: z.array(z.string()).optional(),
});

function parseWith<T>(schema: z.ZodType<T>, value: unknown, prefix: string): T {
  const r = schema.safeParse(value);
  if (!r.success) throw invalidFromZod(r.error, [prefix]);
  return r.data;
}

function rowToRecord(r: Row): MemoryRecord {
  return {
    memoryId: r.memory_id,
    userScope: r.user_scope,
    kind: r.kind,
    category: r.category,
    tags: JSON.parse(r.tags) as string[],
    content: r.content,
    summary: r.summary,
    importance: r.importance,
    conflictKey: r.conflict_key,
    authority: r.authority as Authority | null,
    source: {
      sourceId: r.source_id,
      sourceType: r.source_type,
      title: r.source_title,
      capturedAt: r.captured_at,
    },
    storedAt: r.stored_at,
  };
}

function jsonOrNull(list: readonly string[] | undefined): string | null {
  return list === undefined ? null : JSON.stringify(list);
}

type WriteOutcome = "inserted" | "updated" | { conflictScope: string };

/** The SQLite implementation of {@link MemoryStore}; methods are synchronous. */
export class SqliteMemoryStore implements MemoryStore {
  readonly path: string;
  readonly poolSize: number;
  readonly matchBudget: number;
  #db: Database.Database;
  #stmts: ReturnType<typeof prepare>;
  #stats: StatsStatements;
  #recall: RecallStatements;
  #writeMany: (records: readonly MemoryRecord[]) => WriteOutcome[];

  /** Use {@link openStore}. */
  constructor(path: string, db: Database.Database, poolSize: number, matchBudget: number) {
    this.path = path;
    this.poolSize = poolSize;
    this.matchBudget = matchBudget;
    this.#db = db;
    this.#stmts = prepare(db);
    this.#stats = prepareStats(db);
    this.#recall = prepareRecall(db, COLUMNS);
    this.#writeMany = db.transaction((records: readonly MemoryRecord[]) => {
      const delta = new StatsDelta();
      const outcomes = records.map((r) => this.#write(r, delta));
      const inserted = outcomes.filter((o) => o === "inserted").length;
      if (inserted > 0) this.#stmts.bumpCount.run(inserted);
      applyStats(this.#stats, delta);
      return outcomes;
    });
  }

  /** True until {@link close}. */
  get open(): boolean {
    return this.#db.open;
  }

  #write(r: MemoryRecord, delta: StatsDelta): WriteOutcome {
    const s = this.#stmts;
    const existing = s.findId.get(r.memoryId) as
      | { rowid: number; user_scope: string; content: string; summary: string; tags: string }
      | undefined;
    const values = [
      r.userScope,
      r.kind,
      r.category,
      JSON.stringify(r.tags),
      r.content,
      r.summary,
      r.importance,
      r.conflictKey,
      r.authority,
      r.source.sourceId,
      r.source.sourceType,
      r.source.title,
      r.source.capturedAt,
      instantMillis(r.source.capturedAt),
      r.storedAt,
    ];
    const prefix = scopePrefix(r.userScope);
    const recTerms = recordTerms(r);
    const terms = recTerms.map((t) => prefix + t).join(" ");
    if (existing === undefined) {
      const info = s.insert.run(r.memoryId, ...values);
      s.ftsInsert.run(info.lastInsertRowid, terms);
      delta.add({ userScope: r.userScope, terms: recTerms }, 1);
      return "inserted";
    }
    if (existing.user_scope !== r.userScope) return { conflictScope: existing.user_scope };
    const old = { ...existing, tags: JSON.parse(existing.tags) as string[] };
    delta.add({ userScope: r.userScope, terms: recordTerms(old) }, -1);
    delta.add({ userScope: r.userScope, terms: recTerms }, 1);
    s.update.run(...values, existing.rowid);
    s.ftsDelete.run(existing.rowid);
    s.ftsInsert.run(existing.rowid, terms);
    return "updated";
  }

  add(records: readonly MemoryRecordInput[], options: { now?: string } = {}): AddResult {
    if (!Array.isArray(records)) throw new InvalidInputError("records must be an array", "records");
    const now = options.now === undefined ? undefined : parseWith(timestamp, options.now, "now");
    const parsed = records.map((r, i) => parseRecord(r, ["records", i], now));
    const result: AddResult = { inserted: 0, updated: 0 };
    this.#db.transaction(() => {
      this.#writeMany(parsed).forEach((outcome, i) => {
        if (typeof outcome === "object") {
          // Throwing inside the transaction rolls the whole add back.
          throw scopeConflict(parsed[i]!, outcome.conflictScope, ["records", i, "userScope"]);
        }
        result[outcome]++;
      });
    })();
    return result;
  }

  async importJsonl(input: JsonlInput, options: ImportOptions = {}): Promise<ImportResult> {
    const batchSize = parseWith(z.number().int().min(1), options.batchSize ?? 1000, "batchSize");
    const maxErrors = parseWith(z.number().int().min(0), options.maxErrors ?? 1000, "maxErrors");
    const now = options.now === undefined ? undefined : parseWith(timestamp, options.now, "now");
    const result: ImportResult = { imported: 0, skipped: 0, errors: [] };
    const skip = (e: ImportLineError) => {
      result.skipped++;
      if (result.errors.length < maxErrors) result.errors.push(e);
    };
    let pending: Array<{ line: number; record: MemoryRecord }> = [];
    let batch = 0;
    let lines = 0;
    const commit = () => {
      const outcomes = this.#writeMany(pending.map((p) => p.record));
      outcomes.forEach((o, i) => {
        const p = pending[i]!;
        if (typeof o === "object") {
          const e = scopeConflict(p.record, o.conflictScope, ["userScope"]);
          skip({ line: p.line, path: e.path, message: e.message });
        } else {
          result.imported++;
        }
      });
      pending = [];
      batch++;
      options.onProgress?.({
        batch,
        lines,
        imported: result.imported,
        skipped: result.skipped,
      });
    };
    for await (const { line, text } of readLines(input)) {
      lines = line;
      if (isBlank(text)) continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (err) {
        const why = err instanceof Error ? err.message : "invalid JSON";
        skip({ line, path: null, message: `not valid JSON: ${why}` });
        continue;
      }
      try {
        pending.push({ line, record: parseRecord(value, [], now) });
      } catch (err) {
        if (!(err instanceof PromptctxError)) throw err;
        skip({ line, path: err.path, message: err.message });
        continue;
      }
      if (pending.length >= batchSize) commit();
    }
    if (pending.length > 0) commit();
    return result;
  }

  exportJsonl(write: (chunk: string) => void): number {
    let n = 0;
    let buf = "";
    for (const row of this.#stmts.exportAll.iterate() as IterableIterator<Row>) {
      buf += `${recordToJsonLine(rowToRecord(row))}\n`;
      n++;
      if (buf.length >= 65_536) {
        write(buf);
        buf = "";
      }
    }
    if (buf !== "") write(buf);
    return n;
  }

  count(options: { userScope?: string } = {}): number {
    if (options.userScope === undefined) {
      return (this.#stmts.countAll.get() as { n: number }).n;
    }
    return (this.#stmts.countScope.get(options.userScope) as { n: number }).n;
  }

  get(memoryId: string): MemoryRecord | null {
    const row = this.#stmts.getOne.get(memoryId) as Row | undefined;
    return row === undefined ? null : rowToRecord(row);
  }

  list(options: ListOptions): MemoryRecord[] {
    const o = parseWith(ListOptionsSchema, options, "options");
    const cats = jsonOrNull(o.categories);
    const rows = (
      o.kinds === undefined
        ? this.#stmts.list.all({ scope: o.userScope, cats })
        : this.#stmts.listKinds.all({ scope: o.userScope, kinds: JSON.stringify(o.kinds), cats })
    ) as Row[];
    return rows.map(rowToRecord);
  }

  recall(query: string, options: RecallOptions): StoreRecallHit[] {
    if (typeof query !== "string") throw new InvalidInputError("query must be a string", "query");
    const o = parseWith(RecallOptionsSchema, options, "options");
    const weights = checkWeights(o.weights ?? DEFAULT_WEIGHTS, "options.weights");
    const terms = queryTerms(query);
    // Nothing searchable (empty, punctuation, emoji, stop words only): no evidence, no hits.
    if (terms.length === 0) return [];
    const ranked = recallRows<Row>(this.#db, this.#recall, this.#stats, {
      userScope: o.userScope,
      terms,
      categories: o.categories,
      pool: Math.max(this.poolSize, o.limit),
      budget: this.matchBudget,
      asOf: o.asOf,
      weights,
      limit: o.limit,
    });
    return ranked.map(({ row, breakdown }, i) => recallHit(rowToRecord(row), breakdown, i + 1));
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }
}

function scopeConflict(
  r: MemoryRecord,
  existingScope: string,
  path: Array<string | number>,
): InvalidInputError {
  return new InvalidInputError(
    `memoryId ${JSON.stringify(r.memoryId)} already exists in another scope (${JSON.stringify(existingScope)}); a memory never moves between scopes`,
    path,
  );
}

function prepare(db: Database.Database) {
  const setCols = `user_scope = ?, kind = ?, category = ?, tags = ?, content = ?, summary = ?,
    importance = ?, conflict_key = ?, authority = ?, source_id = ?, source_type = ?,
    source_title = ?, captured_at = ?, captured_ms = ?, stored_at = ?`;
  return {
    findId: db.prepare(
      "SELECT rowid, user_scope, content, summary, tags FROM memories WHERE memory_id = ?",
    ),
    insert: db.prepare(`INSERT INTO memories (memory_id, user_scope, kind, category, tags,
      content, summary, importance, conflict_key, authority, source_id, source_type,
      source_title, captured_at, captured_ms, stored_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    update: db.prepare(`UPDATE memories SET ${setCols} WHERE rowid = ?`),
    ftsInsert: db.prepare("INSERT INTO memory_fts (rowid, terms) VALUES (?, ?)"),
    ftsDelete: db.prepare("DELETE FROM memory_fts WHERE rowid = ?"),
    // BINARY collation compares UTF-8 bytes, which is code-point order for the
    // well-formed strings the schema admits.
    exportAll: db.prepare(`SELECT ${COLUMNS} FROM memories m ORDER BY m.user_scope, m.memory_id`),
    bumpCount: db.prepare("UPDATE store_stats SET memory_count = memory_count + ? WHERE id = 1"),
    countAll: db.prepare("SELECT memory_count AS n FROM store_stats WHERE id = 1"),
    countScope: db.prepare("SELECT count(*) AS n FROM memories WHERE user_scope = ?"),
    getOne: db.prepare(`SELECT ${COLUMNS} FROM memories m WHERE m.memory_id = ?`),
    list: db.prepare(`SELECT ${COLUMNS} FROM memories m
      WHERE m.user_scope = :scope
        AND (:cats IS NULL OR m.category IN (SELECT value FROM json_each(:cats)))
      ORDER BY m.memory_id`),
    // Separate statement pinned to the (user_scope, kind) index: a profile lookup in a
    // scope of 1M memories takes < 1 ms instead of scanning the scope in id order.
    listKinds: db.prepare(`SELECT ${COLUMNS} FROM memories m INDEXED BY memories_scope_kind
      WHERE m.user_scope = :scope
        AND m.kind IN (SELECT value FROM json_each(:kinds))
        AND (:cats IS NULL OR m.category IN (SELECT value FROM json_each(:cats)))
      ORDER BY m.memory_id`),
  };
}

function migrate(db: Database.Database, path: string): void {
  const version = () => db.pragma("user_version", { simple: true }) as number;
  const appId = db.pragma("application_id", { simple: true }) as number;
  if (appId !== 0 && appId !== STORE_APPLICATION_ID) {
    throw new StoreOpenError(`${path} is an SQLite file but not a promptctx memory store`);
  }
  if (version() > STORE_SCHEMA_VERSION) {
    throw new StoreVersionError(path, version(), STORE_SCHEMA_VERSION);
  }
  if (version() === STORE_SCHEMA_VERSION) return;
  db.transaction(() => {
    const from = version(); // re-read under the write lock
    if (from > STORE_SCHEMA_VERSION) throw new StoreVersionError(path, from, STORE_SCHEMA_VERSION);
    for (const m of MIGRATIONS) {
      if (m.version <= from) continue;
      m.up(db);
      db.pragma(`user_version = ${m.version}`);
    }
    db.pragma(`application_id = ${STORE_APPLICATION_ID}`);
  }).immediate();
}

/**
 * Opens (creating and migrating if needed) the SQLite memory store at `path`.
 *
 * @example
 * const store = openStore(".promptctx/memory.db");
 * store.add([{ memoryId: "m1", userScope: "u1", content: "Prefers Python", source }]);
 * store.recall("python", { userScope: "u1", asOf: "2026-08-17T09:00:00Z" });
 * store.close();
 */
export function openStore(path: string, options: OpenStoreOptions = {}): SqliteMemoryStore {
  if (typeof path !== "string" || isBlank(path)) {
    throw new InvalidInputError("store path must not be blank", "store");
  }
  const poolSize = parseWith(
    z.number().int().min(1).max(100_000),
    options.poolSize ?? DEFAULT_POOL_SIZE,
    "poolSize",
  );
  const matchBudget = parseWith(
    z.number().int().min(1),
    options.matchBudget ?? MATCH_BUDGET,
    "matchBudget",
  );
  let db: Database.Database;
  try {
    db = new Database(path, {
      fileMustExist: options.mustExist ?? false,
      timeout: options.busyTimeoutMs ?? 5000,
    });
  } catch (err) {
    throw new StoreOpenError(`cannot open memory store ${path}: ${describe(err)}`);
  }
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("foreign_keys = ON");
    db.pragma("cache_size = -65536"); // 64 MiB page cache: FTS merges and bulk imports
    migrate(db, path);
    return new SqliteMemoryStore(path, db, poolSize, matchBudget);
  } catch (err) {
    db.close();
    if (err instanceof PromptctxError) throw err;
    throw new StoreOpenError(`cannot open memory store ${path}: ${describe(err)}`);
  }
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === "string" ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}
