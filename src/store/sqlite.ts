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
 * Recall: `queryTerms` (see terms.ts) → an FTS5 MATCH of quoted, scope-prefixed terms
 * joined with OR (see {@link scopePrefix}), with `m.user_scope = ?` (and categories) in
 * the same SQL WHERE clause — the scope is never a post-filter. At most
 * {@link MATCH_BUDGET} in-scope matches are scored by bm25, and only the best `poolSize`
 * (default 500) of them are fetched and fully scored (see score.ts), so the work per
 * recall is bounded whatever the store size; a memory outside that pool cannot be
 * recalled by this query even if it is very recent or important.
 */
import { createHash } from "node:crypto";
import Database from "better-sqlite3";
import { z } from "zod";
import { InvalidInputError, invalidFromZod, PromptctxError } from "../errors/index.js";
import type { Authority } from "../memory/index.js";
import {
  compareCodePoints,
  instantMillis,
  isBlank,
  isoTimestamp,
  nonBlankString,
  parseInstant,
  textString,
} from "../text/index.js";
import { StoreOpenError, StoreVersionError } from "./errors.js";
import { readLines } from "./jsonl.js";
import { MIGRATIONS, STORE_SCHEMA_VERSION } from "./migrations.js";
import {
  type MemoryRecord,
  type MemoryRecordInput,
  parseRecord,
  recordToJsonLine,
} from "./schema.js";
import {
  checkWeights,
  compareRecall,
  DEFAULT_WEIGHTS,
  type ScoreBreakdown,
  scoreBreakdown,
} from "./score.js";
import { ftsQuote, indexTerms, queryTerms } from "./terms.js";
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

/** `PRAGMA application_id` of promptctx memory stores ("pctx"). */
export const STORE_APPLICATION_ID = 0x70637478;

/** Default number of best-bm25 matches scored per recall. */
export const DEFAULT_POOL_SIZE = 500;

/**
 * Work budget of one recall: at most this many in-scope full-text matches are scored by
 * bm25. When the query's matches exceed it, the most common query terms are left out of
 * the search (rarest kept first; they carry the most bm25 weight), and if the rarest term
 * alone still exceeds it, only its most recently written matches are scored. Small and
 * specific searches are never affected.
 */
export const MATCH_BUDGET = 10_000;

export interface OpenStoreOptions {
  /** Fail when the file does not exist instead of creating it. Default false. */
  mustExist?: boolean;
  /** Best-bm25 matches fully scored per recall (≥ limit). Default 500. */
  poolSize?: number;
  /** In-scope matches scored by bm25 per recall ({@link MATCH_BUDGET}). */
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
  categories: z.array(textString).optional(),
  asOf: timestamp,
  weights: z
    .object({ lexical: z.number(), recency: z.number(), importance: z.number() })
    .optional(),
});

const ListOptionsSchema = z.object({
  userScope: nonBlank,
  kinds: z.array(textString).optional(),
  categories: z.array(textString).optional(),
});

function parseWith<T>(schema: z.ZodType<T>, value: unknown, prefix: string): T {
  const r = schema.safeParse(value);
  if (!r.success) throw invalidFromZod(r.error, [prefix]);
  return r.data;
}

/**
 * The prefix of every indexed term of a scope: 16 hex digits of SHA-256 of the scope.
 * Terms are stored as `PREFIX + term` (e.g. `3f2a…9cpython`), so each scope has its own
 * postings: a recall can only reach its own scope's terms, bm25 document frequencies
 * are per scope (FTS5's total row count and average length stay store-wide, so another
 * scope's size still nudges bm25 — the lexical ratio in score.ts mostly cancels that),
 * and a search costs what the scope holds, not what the store holds. The exact `user_scope = ?`
 * comparison in the same SQL statement guards against hash collisions.
 */
export function scopePrefix(userScope: string): string {
  return createHash("sha256").update(userScope, "utf8").digest("hex").slice(0, 16);
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

/** `"PREFIXt1" OR "PREFIXt2" …` — every term quoted (a phrase, never an operator). */
function matchExpression(prefix: string, terms: readonly string[]): string {
  return terms.map((t) => ftsQuote(prefix + t)).join(" OR ");
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
  #writeMany: (records: readonly MemoryRecord[]) => WriteOutcome[];

  /** Use {@link openStore}. */
  constructor(path: string, db: Database.Database, poolSize: number, matchBudget: number) {
    this.path = path;
    this.poolSize = poolSize;
    this.matchBudget = matchBudget;
    this.#db = db;
    this.#stmts = prepare(db);
    this.#writeMany = db.transaction((records: readonly MemoryRecord[]) => {
      const outcomes = records.map((r) => this.#write(r));
      const inserted = outcomes.filter((o) => o === "inserted").length;
      if (inserted > 0) this.#stmts.bumpCount.run(inserted);
      return outcomes;
    });
  }

  /** True until {@link close}. */
  get open(): boolean {
    return this.#db.open;
  }

  #write(r: MemoryRecord): WriteOutcome {
    const s = this.#stmts;
    const existing = s.findId.get(r.memoryId) as { rowid: number; user_scope: string } | undefined;
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
    const terms = indexTerms([r.content, r.summary, ...r.tags].join("\n"))
      .map((t) => prefix + t)
      .join(" ");
    if (existing === undefined) {
      const info = s.insert.run(r.memoryId, ...values);
      s.ftsInsert.run(info.lastInsertRowid, terms);
      return "inserted";
    }
    if (existing.user_scope !== r.userScope) return { conflictScope: existing.user_scope };
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
    const asOfMs = instantMillis(o.asOf) as number;
    const terms = queryTerms(query);
    // Nothing searchable (empty, punctuation, emoji only): no evidence, so no hits.
    if (terms.length === 0) return [];
    const prefix = scopePrefix(o.userScope);
    const searched = this.#searchTerms(prefix, terms);
    const rows = this.#stmts.recall.all({
      match: matchExpression(prefix, searched),
      scope: o.userScope,
      cats: jsonOrNull(o.categories),
      budget: Math.max(this.matchBudget, this.poolSize, o.limit),
      pool: Math.max(this.poolSize, o.limit),
    }) as Array<Row & { bm25: number }>;
    if (rows.length === 0) return [];
    const best = rows.reduce((m, r) => Math.min(m, r.bm25), 0);
    const scored = rows.map((r) => {
      const record = rowToRecord(r);
      const have = new Set(indexTerms([r.content, r.summary, ...record.tags].join("\n")));
      const coverage = terms.filter((t) => have.has(t)).length / terms.length;
      const breakdown: ScoreBreakdown = scoreBreakdown({
        bm25: r.bm25,
        bestBm25: best,
        coverage,
        capturedMs: instantMillis(r.captured_at) as number,
        asOfMs,
        importance: r.importance,
        weights,
      });
      return {
        record,
        breakdown,
        memoryId: record.memoryId,
        total: breakdown.total,
        lexical: breakdown.lexical,
        capturedNs: parseInstant(r.captured_at) as bigint,
      };
    });
    scored.sort(compareRecall);
    return scored.slice(0, o.limit).map((s, i) => ({
      memoryId: s.record.memoryId,
      snippet: s.record.content,
      userScope: s.record.userScope,
      score: s.breakdown.total,
      scoreBreakdown: s.breakdown,
      rank: i + 1,
      provenance: { ...s.record.source },
      kind: s.record.kind,
      category: s.record.category,
      tags: s.record.tags,
      importance: s.record.importance,
      conflictKey: s.record.conflictKey,
      authority: s.record.authority,
    }));
  }

  /**
   * The query terms to search under {@link MATCH_BUDGET}: all of them when their in-scope
   * matches fit; else the rarest first (ties by code point) while the sum of their match
   * counts fits, and always at least the rarest. Counts stop at the budget, so this costs
   * at most a bounded index walk per term.
   */
  #searchTerms(prefix: string, terms: string[]): string[] {
    const budget = this.matchBudget;
    const count = (ts: readonly string[]) =>
      (this.#stmts.countMatches.get(matchExpression(prefix, ts), budget + 1) as { n: number }).n;
    if (terms.length === 1 || count(terms) <= budget) return terms;
    const counted = terms
      .map((t) => ({ t, n: count([t]) }))
      .sort((a, b) => a.n - b.n || compareCodePoints(a.t, b.t));
    const kept = new Set<string>();
    let sum = 0;
    for (const c of counted) {
      // A term without matches costs nothing and must not use up the "keep the rarest".
      if (sum > 0 && sum + c.n > budget) break;
      kept.add(c.t);
      sum += c.n;
    }
    return terms.filter((t) => kept.has(t));
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
    findId: db.prepare("SELECT rowid, user_scope FROM memories WHERE memory_id = ?"),
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
    countMatches: db.prepare(
      "SELECT count(*) AS n FROM (SELECT 1 FROM memory_fts WHERE memory_fts MATCH ? LIMIT ?)",
    ),
    // The scope is in the WHERE clause twice: inside :match (every term carries the
    // scope prefix, so the index search itself stays in the scope) and as the exact
    // column comparison.
    // The inner query walks matches newest-first (rowid desc) and stops after :budget
    // rows, so bm25 is computed for a bounded number of rows; the outer query keeps the
    // best :pool by bm25 (ties by memory_id, so the pool never depends on row order).
    recall: db.prepare(`SELECT * FROM (
        SELECT ${COLUMNS}, bm25(memory_fts) AS bm25
        FROM memory_fts JOIN memories m ON m.rowid = memory_fts.rowid
        WHERE memory_fts MATCH :match
          AND m.user_scope = :scope
          AND (:cats IS NULL OR m.category IN (SELECT value FROM json_each(:cats)))
        ORDER BY memory_fts.rowid DESC
        LIMIT :budget
      )
      ORDER BY bm25, memory_id
      LIMIT :pool`),
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
