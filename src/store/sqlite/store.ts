/**
 * The embedded memory store over an open SQLite database (see open.ts for opening,
 * statements.ts for its SQL, stats.ts for the per-scope statistics).
 *
 * Recall (recall.ts): `queryTerms` (see ../terms.ts) → the scope's statistics and
 * each term's document frequency → FTS5 MATCHes of quoted, scope-prefixed terms (see
 * scopePrefix in prefix.ts) within the work budget ({@link MATCH_BUDGET}) → a pool of
 * at most `poolSize` (default 500) candidates, ranked by ../rank.ts (IDF-weighted lexical ×
 * salience, see ../score.ts) — the same ranking as every backend. The scope is never a
 * post-filter; a memory outside the pool cannot be recalled by this query. Recall and list
 * keep what they read while the database does not change (cache.ts).
 */
import type Database from "better-sqlite3";
import type { z } from "zod";
import { InvalidInputError } from "../../errors/index.js";
import { recallHit } from "../hits.js";
import { importJsonlBatches } from "../jsonl-import.js";
import {
  entryPageQuery,
  ForgetTargetSchema,
  GetOptionsSchema,
  ListOptionsSchema,
  MemoryIdSchema,
  parseNow,
  parseWith,
  RecallOptionsSchema,
  ScopeOptionsSchema,
} from "../options.js";
import { rowToRecord } from "../row.js";
import {
  type MemoryRecord,
  type MemoryRecordInput,
  parseRecord,
  recordToJsonLine,
} from "../schema.js";
import { checkWeights, DEFAULT_WEIGHTS } from "../score.js";
import { rankSnapshot, visibleAt } from "../snapshot.js";
import { queryTerms } from "../terms.js";
import type {
  AddOptions,
  AddResult,
  EntryPage,
  ForgetResult,
  ForgetTarget,
  GetOptions,
  ImportOptions,
  ImportResult,
  JsonlInput,
  ListEntriesOptions,
  ListOptions,
  MemoryEntry,
  MemoryStore,
  MemoryVersion,
  RecallOptions,
  StoreRecallHit,
} from "../types.js";
import {
  type PreparedWrite,
  prepareWrite,
  ScopeBudget,
  type ScopeUsage,
  type WritePolicy,
  writePolicy,
} from "../write-gate.js";
import type { WriteOutcome } from "../write-outcome.js";
import { ReadCache } from "./cache.js";
import { COLUMNS, type RawRow, type Row, rawToRow } from "./columns.js";
import { asOfMillis, type Manage, prepareManage } from "./manage.js";
import { prepareRecall, type RecallRun, recallRunner } from "./recall.js";
import { jsonOrNull, prepareStatements, type Statements, writeRecord } from "./statements.js";
import { applyStats, prepareStats, StatsDelta, type StatsStatements } from "./stats.js";
import { SqliteVectorIndex } from "./vectors.js";

/** A list's rows, read in one transaction (see {@link listRunner}). */
type ListRun = (o: z.output<typeof ListOptionsSchema>) => readonly RawRow[];

/**
 * The list of the SQLite store: the rows of a scope with the given kinds and categories,
 * by memoryId, from the connection's cache while the database has not changed (see
 * cache.ts; a service lists every assembly's profile records).
 */
function listRunner(db: Database.Database, stmts: Statements, cache: ReadCache): ListRun {
  return db.transaction((o: z.output<typeof ListOptionsSchema>) => {
    cache.begin();
    const kinds = jsonOrNull(o.kinds);
    const cats = jsonOrNull(o.categories);
    // JSON never holds a raw U+0000, so the key is unambiguous.
    const key = `${kinds ?? ""}\u0000${cats ?? ""}`;
    const known = cache.list(o.userScope, key);
    if (known !== undefined) return known;
    const rows = (
      kinds === null
        ? stmts.list.all({ scope: o.userScope, cats })
        : stmts.listKinds.all({ scope: o.userScope, kinds, cats })
    ) as RawRow[];
    cache.setList(o.userScope, key, rows);
    return rows;
  });
}

/** The SQLite implementation of {@link MemoryStore}; methods are synchronous. */
export class SqliteMemoryStore implements MemoryStore {
  readonly path: string;
  readonly poolSize: number;
  readonly matchBudget: number;
  #db: Database.Database;
  #stmts: Statements;
  #stats: StatsStatements;
  #recall: RecallRun;
  #list: ListRun;
  #manage: Manage;
  #writeMany: (writes: readonly PreparedWrite[]) => WriteOutcome[];
  #vectors: SqliteVectorIndex;
  /** The takeover gate's mode and the limits every write is held to. */
  readonly policy: WritePolicy;

  /** Use {@link openStore}. */
  constructor(
    path: string,
    db: Database.Database,
    poolSize: number,
    matchBudget: number,
    policy: WritePolicy = { gate: "quarantine", limits: {} },
  ) {
    this.path = path;
    this.policy = policy;
    this.poolSize = poolSize;
    this.matchBudget = matchBudget;
    this.#db = db;
    this.#stmts = prepareStatements(db);
    this.#stats = prepareStats(db);
    const cache = new ReadCache(db);
    this.#recall = recallRunner(db, prepareRecall(db, COLUMNS), this.#stats, cache);
    this.#list = listRunner(db, this.#stmts, cache);
    const vectors = new SqliteVectorIndex(db);
    this.#vectors = vectors;
    const invalidate = (rowid: number) => vectors.invalidate(rowid);
    this.#manage = prepareManage(db, this.#stats, invalidate);
    const write = db.transaction((writes: readonly PreparedWrite[]) => {
      const delta = new StatsDelta();
      const budget = new ScopeBudget(
        policy.limits,
        (scope) => this.#stmts.scopeUsage.get({ scope }) as ScopeUsage,
      );
      const outcomes = writes.map((w, i) =>
        writeRecord(this.#stmts, w, delta, budget, ["records", i], invalidate),
      );
      const inserted = outcomes.filter((o) => o === "inserted").length;
      if (inserted > 0) this.#stmts.bumpCount.run(inserted);
      applyStats(this.#stats, delta);
      return outcomes;
    });
    // The write lock first: a write that reads then writes never deadlocks another.
    this.#writeMany = (writes) => write.immediate(writes);
  }

  /** The store's vectors (recall by meaning; see vectors.ts and ../hybrid.ts). */
  get vectors(): SqliteVectorIndex {
    return this.#vectors;
  }

  /**
   * The rows of `rowids` in `userScope` (others left out) as records, by rowid: what the
   * vector search's hits are read with.
   */
  recordsByRowid(rowids: readonly number[], userScope: string): Map<number, MemoryRecord> {
    const out = new Map<number, MemoryRecord>();
    if (rowids.length === 0) return out;
    const rows = this.#stmts.byRowids.all({
      ids: JSON.stringify(rowids),
      scope: userScope,
    }) as RawRow[];
    for (const r of rows) out.set(r[0], rowToRecord(rawToRow(r)));
    return out;
  }

  /** The rowids of records by memoryId in one scope. */
  rowidsOf(userScope: string, memoryIds: readonly string[]): Map<string, number> {
    const out = new Map<string, number>();
    for (const id of memoryIds) {
      const row = this.#stmts.findId.get(userScope, id) as { rowid: number } | undefined;
      if (row !== undefined) out.set(id, row.rowid);
    }
    return out;
  }

  /** True until {@link close}. */
  get open(): boolean {
    return this.#db.open;
  }

  add(records: readonly MemoryRecordInput[], options: AddOptions = {}): AddResult {
    if (!Array.isArray(records)) throw new InvalidInputError("records must be an array", "records");
    const now = parseNow(options.now);
    const policy =
      options.gate === undefined
        ? this.policy
        : { ...this.policy, ...writePolicy({ gate: options.gate }), limits: this.policy.limits };
    const writes = records.map((r, i) =>
      prepareWrite(parseRecord(r, ["records", i], now), policy, ["records", i]),
    );
    const result: AddResult = { inserted: 0, updated: 0 };
    for (const outcome of this.#writeMany(writes)) result[outcome]++;
    for (const w of writes) {
      if (w.rule !== null) {
        const { memoryId, userScope } = w.record;
        result.quarantined = [...(result.quarantined ?? []), { memoryId, userScope, rule: w.rule }];
      }
    }
    return result;
  }

  async importJsonl(input: JsonlInput, options: ImportOptions = {}): Promise<ImportResult> {
    return importJsonlBatches(input, options, this.policy, this.#writeMany);
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

  get(memoryId: string, options: GetOptions = {}): MemoryRecord | null {
    const scope = parseWith(GetOptionsSchema, options, "options").userScope ?? null;
    if (typeof memoryId !== "string") return null;
    const row = this.#stmts.getOne.get({ id: memoryId, scope }) as Row | undefined;
    return row === undefined ? null : rowToRecord(row);
  }

  list(options: ListOptions): MemoryRecord[] {
    const o = parseWith(ListOptionsSchema, options, "options");
    return this.#list(o).map((r) => rowToRecord(rawToRow(r)));
  }

  recall(query: string, options: RecallOptions): StoreRecallHit[] {
    if (typeof query !== "string") throw new InvalidInputError("query must be a string", "query");
    const o = parseWith(RecallOptionsSchema, options, "options");
    const weights = checkWeights(o.weights ?? DEFAULT_WEIGHTS, "options.weights");
    const terms = queryTerms(query);
    // Nothing searchable (empty, punctuation, emoji, stop words only): no evidence, no hits.
    if (terms.length === 0) return [];
    const asOfMs = asOfMillis(o.asOf);
    const latest = this.#manage.latestWrite(o.userScope);
    if (latest !== null && latest > asOfMs) {
      // A recall into the past: the scope as it was stored at asOf (see snapshot.ts).
      const records = visibleAt(this.#manage.versions(o.userScope), asOfMs);
      return rankSnapshot(records, terms, {
        asOf: o.asOf,
        weights,
        limit: o.limit,
        ...(o.categories === undefined ? {} : { categories: o.categories }),
      });
    }
    const ranked = this.#recall({
      userScope: o.userScope,
      terms,
      categories: o.categories,
      pool: Math.max(this.poolSize, o.limit),
      budget: this.matchBudget,
      asOf: o.asOf,
      weights,
      limit: o.limit,
    });
    return ranked.map(({ row, breakdown }, i) =>
      recallHit(rowToRecord(rawToRow(row)), breakdown, i + 1),
    );
  }

  /**
   * The latest write time (epoch ms) of the scope's replacements, or null: a recall at an
   * earlier instant reads the scope as it was then (see snapshot.ts).
   */
  latestReplacement(userScope: string): number | null {
    return this.#manage.latestWrite(userScope);
  }

  listEntries(options: ListEntriesOptions): EntryPage {
    return this.#manage.page(entryPageQuery(options));
  }

  getEntry(memoryId: string, options: { userScope: string }): MemoryEntry | null {
    const id = parseWith(MemoryIdSchema, memoryId, "memoryId");
    const { userScope } = parseWith(ScopeOptionsSchema, options, "options");
    return this.#manage.entry(id, userScope);
  }

  history(memoryId: string, options: { userScope: string }): MemoryVersion[] {
    const id = parseWith(MemoryIdSchema, memoryId, "memoryId");
    const { userScope } = parseWith(ScopeOptionsSchema, options, "options");
    return this.#manage.history(id, userScope);
  }

  approve(memoryId: string, options: { userScope: string }): MemoryEntry | null {
    const id = parseWith(MemoryIdSchema, memoryId, "memoryId");
    const { userScope } = parseWith(ScopeOptionsSchema, options, "options");
    return this.#manage.approve(id, userScope);
  }

  forget(target: ForgetTarget): ForgetResult {
    const t = parseWith(ForgetTargetSchema, target, "target");
    if ("memoryId" in t) return this.#manage.forget(t.userScope, { memoryId: t.memoryId });
    return this.#manage.forget(t.userScope, {
      ...(t.kinds === undefined ? {} : { kinds: t.kinds }),
      ...(t.categories === undefined ? {} : { categories: t.categories }),
    });
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }
}
